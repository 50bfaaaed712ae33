//! The run journal and memories in PostgreSQL.

use waypoint_store::{
    Cursor, Memory, MemoryStore, Page, RunRecord, RunRow, RunStore, StepEnd, StepRow, StoreError,
};

use crate::{PostgresStore, query_err};

impl RunStore for PostgresStore {
    async fn create_run(&self, row: &RunRow) -> Result<(), StoreError> {
        let generation = i64::from(row.generation);
        sqlx::query!(
            "INSERT INTO runs (run_id, caller, status, plan, generation, report, settings, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            row.run_id,
            row.caller,
            row.status,
            row.plan,
            generation,
            row.report,
            row.settings,
            row.created_at,
            row.updated_at,
        )
        .execute(&self.pool)
        .await
        .map_err(|e| query_err(&e))?;
        Ok(())
    }

    async fn update_run(&self, row: &RunRow) -> Result<(), StoreError> {
        let generation = i64::from(row.generation);
        sqlx::query!(
            "UPDATE runs SET status = $3, plan = $4, generation = $5, report = $6, updated_at = $7,
                             settings = $8
             WHERE run_id = $1 AND caller = $2",
            row.run_id,
            row.caller,
            row.status,
            row.plan,
            generation,
            row.report,
            row.updated_at,
            row.settings,
        )
        .execute(&self.pool)
        .await
        .map_err(|e| query_err(&e))?;
        Ok(())
    }

    async fn run(&self, caller: &str, run_id: &str) -> Result<Option<RunRow>, StoreError> {
        let row = sqlx::query_as!(
            RunRecord,
            r#"SELECT run_id AS "run_id!", caller AS "caller!", status AS "status!", plan AS "plan!",
                      generation AS "generation!", report AS "report!", settings AS "settings!",
                      created_at AS "created_at!", updated_at AS "updated_at!"
               FROM runs WHERE caller = $1 AND run_id = $2"#,
            caller,
            run_id,
        )
        .fetch_optional(&self.pool)
        .await
        .map_err(|e| query_err(&e))?;
        row.map(RunRow::try_from).transpose()
    }

    async fn runs(
        &self,
        caller: &str,
        after: Option<&Cursor>,
        limit: u32,
    ) -> Result<Page<RunRow>, StoreError> {
        let (after_at, after_id) = (after.map(|c| c.at), after.map(|c| c.key.as_str()));
        let rows = sqlx::query_as!(
            RunRecord,
            r#"SELECT run_id AS "run_id!", caller AS "caller!", status AS "status!", plan AS "plan!",
                      generation AS "generation!", report AS "report!", settings AS "settings!",
                      created_at AS "created_at!", updated_at AS "updated_at!"
               FROM runs WHERE caller = $1
                 AND ($2::bigint IS NULL OR created_at < $2 OR (created_at = $2 AND run_id < $3::text))
               ORDER BY created_at DESC, run_id DESC LIMIT $4"#,
            caller,
            after_at,
            after_id,
            i64::from(limit),
        )
        .fetch_all(&self.pool)
        .await
        .map_err(|e| query_err(&e))?;
        let items = rows
            .into_iter()
            .map(RunRow::try_from)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Page::of(items, Some(limit), |r| Cursor {
            at: r.created_at,
            key: r.run_id.clone(),
        }))
    }

    async fn begin_step(&self, row: &StepRow) -> Result<(), StoreError> {
        sqlx::query!(
            "INSERT INTO run_steps (run_id, key, tool, status, idempotency_key, output, error, latency_ms,
                                    prompt_tokens, completion_tokens, cost_usd, started_at, finished_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
             ON CONFLICT (run_id, key) DO UPDATE SET
                 tool = excluded.tool, status = excluded.status, idempotency_key = excluded.idempotency_key,
                 output = excluded.output, error = excluded.error, latency_ms = excluded.latency_ms,
                 prompt_tokens = excluded.prompt_tokens, completion_tokens = excluded.completion_tokens,
                 cost_usd = excluded.cost_usd, started_at = excluded.started_at, finished_at = excluded.finished_at",
            row.run_id,
            row.key,
            row.tool,
            row.status,
            row.idempotency_key,
            row.output,
            row.error,
            row.latency_ms,
            row.prompt_tokens,
            row.completion_tokens,
            row.cost_usd,
            row.started_at,
            row.finished_at,
        )
        .execute(&self.pool)
        .await
        .map_err(|e| query_err(&e))?;
        Ok(())
    }

    async fn finish_step(&self, run_id: &str, key: &str, end: &StepEnd) -> Result<(), StoreError> {
        sqlx::query!(
            "UPDATE run_steps SET status = $3, output = $4, error = $5, latency_ms = $6, prompt_tokens = $7,
                                  completion_tokens = $8, cost_usd = $9, finished_at = $10
             WHERE run_id = $1 AND key = $2",
            run_id,
            key,
            end.status,
            end.output,
            end.error,
            end.latency_ms,
            end.prompt_tokens,
            end.completion_tokens,
            end.cost_usd,
            end.finished_at,
        )
        .execute(&self.pool)
        .await
        .map_err(|e| query_err(&e))?;
        Ok(())
    }

    async fn steps(&self, run_id: &str) -> Result<Vec<StepRow>, StoreError> {
        let rows = sqlx::query!(
            r#"SELECT run_id AS "run_id!", key AS "key!", tool AS "tool!", status AS "status!",
                      idempotency_key AS "idempotency_key!", output AS "output!", error,
                      latency_ms AS "latency_ms!", prompt_tokens AS "prompt_tokens!",
                      completion_tokens AS "completion_tokens!", cost_usd AS "cost_usd!",
                      started_at AS "started_at!", finished_at
               FROM run_steps WHERE run_id = $1 ORDER BY seq"#,
            run_id,
        )
        .fetch_all(&self.pool)
        .await
        .map_err(|e| query_err(&e))?;
        Ok(rows
            .into_iter()
            .map(|r| StepRow {
                run_id: r.run_id,
                key: r.key,
                tool: r.tool,
                status: r.status,
                idempotency_key: r.idempotency_key,
                output: r.output,
                error: r.error,
                latency_ms: r.latency_ms,
                prompt_tokens: r.prompt_tokens,
                completion_tokens: r.completion_tokens,
                cost_usd: r.cost_usd,
                started_at: r.started_at,
                finished_at: r.finished_at,
            })
            .collect())
    }

    async fn claim_run(&self, instance: &str, now: i64) -> Result<Option<RunRow>, StoreError> {
        // SKIP LOCKED: instances racing for the queue each take a different row instead
        // of waiting on the same one; the claim row is written in the same statement.
        let row = sqlx::query_as!(
            RunRecord,
            r#"WITH next AS (
                   SELECT run_id FROM runs WHERE status = 'queued'
                   ORDER BY created_at, run_id LIMIT 1 FOR UPDATE SKIP LOCKED
               ), claimed AS (
                   UPDATE runs SET status = 'running', updated_at = $2
                   FROM next WHERE runs.run_id = next.run_id
                   RETURNING runs.run_id, runs.caller, runs.status, runs.plan, runs.generation,
                             runs.report, runs.settings, runs.created_at, runs.updated_at
               ), logged AS (
                   INSERT INTO run_claims (run_id, instance, claimed_at)
                   SELECT run_id, $1, $2 FROM claimed
               )
               SELECT run_id AS "run_id!", caller AS "caller!", status AS "status!", plan AS "plan!",
                      generation AS "generation!", report AS "report!", settings AS "settings!",
                      created_at AS "created_at!", updated_at AS "updated_at!"
               FROM claimed"#,
            instance,
            now,
        )
        .fetch_optional(&self.pool)
        .await
        .map_err(|e| query_err(&e))?;
        row.map(RunRow::try_from).transpose()
    }

    async fn claimed_by(&self, run_id: &str) -> Result<Option<String>, StoreError> {
        sqlx::query_scalar!(
            r#"SELECT instance AS "instance!" FROM run_claims WHERE run_id = $1"#,
            run_id
        )
        .fetch_optional(&self.pool)
        .await
        .map_err(|e| query_err(&e))
    }
}

impl MemoryStore for PostgresStore {
    async fn remember(&self, caller: &str, memory: &Memory) -> Result<(), StoreError> {
        sqlx::query!(
            "INSERT INTO memories (caller, key, value, at_unix) VALUES ($1, $2, $3, $4)
             ON CONFLICT (caller, key) DO UPDATE SET value = excluded.value, at_unix = excluded.at_unix",
            caller,
            memory.key,
            memory.value,
            memory.at_unix,
        )
        .execute(&self.pool)
        .await
        .map_err(|e| query_err(&e))?;
        Ok(())
    }

    async fn recall(
        &self,
        caller: &str,
        query: &str,
        limit: u32,
    ) -> Result<Vec<Memory>, StoreError> {
        let limit = i64::from(limit);
        let pattern = format!(
            "%{}%",
            query
                .replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_")
        );
        let rows = sqlx::query!(
            r#"SELECT key AS "key!", value AS "value!", at_unix AS "at_unix!" FROM memories
               WHERE caller = $1 AND (key = $2 OR key LIKE $3 ESCAPE '\' OR value LIKE $3 ESCAPE '\')
               ORDER BY (key = $2) DESC, at_unix DESC, key LIMIT $4"#,
            caller,
            query,
            pattern,
            limit,
        )
        .fetch_all(&self.pool)
        .await
        .map_err(|e| query_err(&e))?;
        Ok(rows
            .into_iter()
            .map(|r| Memory {
                key: r.key,
                value: r.value,
                at_unix: r.at_unix,
            })
            .collect())
    }

    async fn forget_memory(&self, caller: &str, key: &str) -> Result<bool, StoreError> {
        let done = sqlx::query!(
            "DELETE FROM memories WHERE caller = $1 AND key = $2",
            caller,
            key
        )
        .execute(&self.pool)
        .await
        .map_err(|e| query_err(&e))?;
        Ok(done.rows_affected() > 0)
    }
}
