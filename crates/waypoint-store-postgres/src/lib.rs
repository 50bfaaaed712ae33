//! Plan history in PostgreSQL: one store shared by several Waypoint instances.
//!
//! Every write is one statement (its own transaction), so concurrent writers lose no
//! rows; migrations run on connect under PostgreSQL's advisory lock; queries are checked
//! at compile time (offline data in `.sqlx/`).

mod runs;

use std::time::Duration;

use sqlx::postgres::{PgPool, PgPoolOptions};
use waypoint_store::{Cursor, Forget, HistoryFilter, HistoryRow, HistoryStore, Page, StoreError};

/// A PostgreSQL-backed history store.
#[derive(Debug, Clone)]
pub struct PostgresStore {
    pub(crate) pool: PgPool,
    ttl_secs: i64,
}

pub(crate) fn query_err(e: &sqlx::Error) -> StoreError {
    StoreError::Query(e.to_string())
}

/// The URL without its password, for messages.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => {
            let creds = &url[s + 3..at];
            match creds.split_once(':') {
                Some((user, _)) => format!("{}{}:***{}", &url[..s + 3], user, &url[at..]),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

impl PostgresStore {
    /// Connects to `url` (`postgres://…`) and migrates the schema.
    pub async fn connect(url: &str, ttl_secs: i64) -> Result<Self, StoreError> {
        let pool = PgPoolOptions::new()
            .max_connections(8)
            .acquire_timeout(Duration::from_secs(10))
            .connect(url)
            .await
            .map_err(|e| StoreError::Open {
                location: redact(url),
                message: e.to_string(),
            })?;
        sqlx::migrate!("./migrations")
            .run(&pool)
            .await
            .map_err(|e| StoreError::Migrate(e.to_string()))?;
        Ok(Self { pool, ttl_secs })
    }

    pub async fn close(&self) {
        self.pool.close().await;
    }
}

impl HistoryStore for PostgresStore {
    /// Appends one row; it expires `ttl_secs` after `row.at_unix`.
    /// Appends one row; it expires `ttl_secs` after `row.at_unix`.
    async fn record(&self, row: &HistoryRow) -> Result<(), StoreError> {
        self.record_many(std::slice::from_ref(row)).await
    }

    /// Appends rows in one statement: the columns go as arrays and are unnested into
    /// rows, so a write-behind batch costs one round trip, not one per row.
    async fn record_many(&self, rows: &[HistoryRow]) -> Result<(), StoreError> {
        if rows.is_empty() {
            return Ok(());
        }
        let col = |f: fn(&HistoryRow) -> String| rows.iter().map(f).collect::<Vec<String>>();
        let num = |f: fn(&HistoryRow) -> i64| rows.iter().map(f).collect::<Vec<i64>>();
        let ttl = self.ttl_secs;
        let expires: Vec<i64> = rows.iter().map(|r| r.at_unix.saturating_add(ttl)).collect();
        sqlx::query!(
            "INSERT INTO plan_history (caller, intent_sha, complexity, steps, tools, outcome, at_unix, expires_at, duration_ms, model, planner)
             SELECT c, i, x, s, t, o, a, e, d, NULLIF(m, ''), p
             FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
                         $7::bigint[], $8::bigint[], $9::bigint[], $10::text[], $11::text[])
                  AS u(c, i, x, s, t, o, a, e, d, m, p)",
            &col(|r| r.caller.clone()),
            &col(|r| r.intent_sha.clone()),
            &col(|r| r.complexity.clone()),
            &col(HistoryRow::steps_json),
            &col(HistoryRow::tools_column),
            &col(|r| r.outcome.as_str().to_string()),
            &num(|r| r.at_unix),
            &expires,
            &num(|r| r.duration_ms),
            // No model is written as NULL (a model id is never empty).
            &col(|r| r.model.clone().unwrap_or_default()),
            &col(|r| r.planner.clone()),
        )
        .execute(&self.pool)
        .await
        .map_err(|e| query_err(&e))?;
        Ok(())
    }

    /// A caller's unexpired rows matching the filter, newest first, after the cursor.
    async fn history_page(
        &self,
        caller: &str,
        filter: &HistoryFilter,
        now: i64,
    ) -> Result<Page<HistoryRow>, StoreError> {
        let outcome = filter.outcome.map(waypoint_store::Outcome::as_str);
        let limit = i64::from(filter.limit.unwrap_or(u32::MAX));
        let (after_at, after_id) = match &filter.after {
            Some(c) => (Some(c.at), Some(c.id().unwrap_or(i64::MAX))),
            None => (None, None),
        };
        let rows = sqlx::query!(
            r#"SELECT id, caller, intent_sha, complexity, steps, outcome, at_unix, duration_ms, model, planner
               FROM plan_history
               WHERE caller = $1 AND expires_at > $2
                 AND ($3::text IS NULL OR intent_sha = $3)
                 AND ($4::text IS NULL OR tools LIKE '%,' || $4 || ',%')
                 AND ($5::text IS NULL OR outcome = $5)
                 AND ($6::bigint IS NULL OR at_unix >= $6)
                 AND ($7::bigint IS NULL OR at_unix < $7 OR (at_unix = $7 AND id < $8::bigint))
               ORDER BY at_unix DESC, id DESC
               LIMIT $9"#,
            caller,
            now,
            filter.intent_sha,
            filter.tool,
            outcome,
            filter.since,
            after_at,
            after_id,
            limit,
        )
        .fetch_all(&self.pool)
        .await
        .map_err(|e| query_err(&e))?;
        let last = rows.last().map(|r| r.id);
        let items = rows
            .into_iter()
            .map(|r| {
                HistoryRow::from_columns(
                    r.caller,
                    r.intent_sha,
                    r.complexity,
                    &r.steps,
                    &r.outcome,
                    r.at_unix,
                    r.duration_ms,
                    r.model,
                    r.planner,
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Page::of(items, filter.limit, |r| Cursor {
            at: r.at_unix,
            key: last.unwrap_or_default().to_string(),
        }))
    }

    /// Removes a caller's rows; returns how many went.
    async fn forget(&self, caller: &str, what: &Forget) -> Result<u64, StoreError> {
        let done = match what {
            Forget::All => {
                sqlx::query!("DELETE FROM plan_history WHERE caller = $1", caller)
                    .execute(&self.pool)
                    .await
            }
            Forget::OlderThan(t) => {
                sqlx::query!(
                    "DELETE FROM plan_history WHERE caller = $1 AND at_unix < $2",
                    caller,
                    t
                )
                .execute(&self.pool)
                .await
            }
            Forget::Intent(sha) => {
                sqlx::query!(
                    "DELETE FROM plan_history WHERE caller = $1 AND intent_sha = $2",
                    caller,
                    sha
                )
                .execute(&self.pool)
                .await
            }
        };
        Ok(done.map_err(|e| query_err(&e))?.rows_affected())
    }

    /// Removes every caller's expired rows.
    async fn purge_expired(&self, now: i64) -> Result<u64, StoreError> {
        let done = sqlx::query!("DELETE FROM plan_history WHERE expires_at <= $1", now)
            .execute(&self.pool)
            .await
            .map_err(|e| query_err(&e))?;
        Ok(done.rows_affected())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn passwords_never_reach_messages() {
        assert_eq!(
            super::redact("postgres://u:secret@h/db"),
            "postgres://u:***@h/db"
        );
        assert_eq!(super::redact("postgres://h/db"), "postgres://h/db");
    }
}
