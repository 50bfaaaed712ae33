//! Plan history in a SQLite file: the default store, one file per user.
//!
//! WAL mode and a busy timeout let several processes write at once without losing rows;
//! migrations run on open; queries are checked at compile time against the schema in
//! `migrations/` (offline data in `.sqlx/`, so building needs no database).

mod runs;

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use waypoint_store::{Cursor, Forget, HistoryFilter, HistoryRow, HistoryStore, Page, StoreError};

/// How often opening retries while another process is setting up the same new file.
const OPEN_RETRIES: u32 = 10;

/// A SQLite-backed history store.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pub(crate) pool: SqlitePool,
    ttl_secs: i64,
}

pub(crate) fn query_err(e: &sqlx::Error) -> StoreError {
    StoreError::Query(e.to_string())
}

impl SqliteStore {
    /// Opens (creating if needed) the file at `path` and migrates it.
    pub async fn open(path: &Path, ttl_secs: i64) -> Result<Self, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| StoreError::Open {
                location: path.display().to_string(),
                message: e.to_string(),
            })?;
        }
        let options = SqliteConnectOptions::from_str(&format!("sqlite://{}", path.display()))
            .map_err(|e| StoreError::Open {
                location: path.display().to_string(),
                message: e.to_string(),
            })?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(30));
        // Several processes opening a new file at once race twice: switching it to WAL
        // takes a lock the busy timeout does not cover, and both try to record
        // migration 1 (SQLite has no advisory lock). The loser waits and tries again,
        // and finds the file set up.
        let mut attempt = 0;
        loop {
            let opened = async {
                let pool = SqlitePoolOptions::new()
                    .max_connections(4)
                    .connect_with(options.clone())
                    .await
                    .map_err(|e| StoreError::Open {
                        location: path.display().to_string(),
                        message: e.to_string(),
                    })?;
                match sqlx::migrate!("./migrations").run(&pool).await {
                    Ok(()) => Ok(pool),
                    Err(e) => {
                        pool.close().await;
                        Err(StoreError::Migrate(e.to_string()))
                    }
                }
            }
            .await;
            match opened {
                Ok(pool) => return Ok(Self { pool, ttl_secs }),
                Err(_) if attempt < OPEN_RETRIES => {
                    attempt += 1;
                    tokio::time::sleep(Duration::from_millis(50 * u64::from(attempt))).await;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Closes the pool, checkpointing the WAL into the main file.
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

impl HistoryStore for SqliteStore {
    /// Appends one row; it expires `ttl_secs` after `row.at_unix`.
    async fn record(&self, row: &HistoryRow) -> Result<(), StoreError> {
        self.record_many(std::slice::from_ref(row)).await
    }

    /// Appends rows in one transaction (a write-behind batch commits once).
    async fn record_many(&self, rows: &[HistoryRow]) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await.map_err(|e| query_err(&e))?;
        for row in rows {
            insert(&mut tx, row, self.ttl_secs).await?;
        }
        tx.commit().await.map_err(|e| query_err(&e))
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
            r#"SELECT id AS "id!", caller AS "caller!", intent_sha AS "intent_sha!", complexity AS "complexity!", steps AS "steps!",
                      outcome AS "outcome!", at_unix AS "at_unix!", duration_ms AS "duration_ms!", model, planner AS "planner!"
               FROM plan_history
               WHERE caller = ?1 AND expires_at > ?2
                 AND (?3 IS NULL OR intent_sha = ?3)
                 AND (?4 IS NULL OR tools LIKE '%,' || ?4 || ',%')
                 AND (?5 IS NULL OR outcome = ?5)
                 AND (?6 IS NULL OR at_unix >= ?6)
                 AND (?7 IS NULL OR at_unix < ?7 OR (at_unix = ?7 AND id < ?8))
               ORDER BY at_unix DESC, id DESC
               LIMIT ?9"#,
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
        let mut ids = Vec::with_capacity(rows.len());
        let items = rows
            .into_iter()
            .map(|r| {
                ids.push(r.id);
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
        let last = ids.last().copied();
        Ok(Page::of(items, filter.limit, |r| Cursor {
            at: r.at_unix,
            key: last.unwrap_or_default().to_string(),
        }))
    }

    /// Removes a caller's rows; returns how many went.
    async fn forget(&self, caller: &str, what: &Forget) -> Result<u64, StoreError> {
        let done = match what {
            Forget::All => {
                sqlx::query!("DELETE FROM plan_history WHERE caller = ?1", caller)
                    .execute(&self.pool)
                    .await
            }
            Forget::OlderThan(t) => {
                sqlx::query!(
                    "DELETE FROM plan_history WHERE caller = ?1 AND at_unix < ?2",
                    caller,
                    t
                )
                .execute(&self.pool)
                .await
            }
            Forget::Intent(sha) => {
                sqlx::query!(
                    "DELETE FROM plan_history WHERE caller = ?1 AND intent_sha = ?2",
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
        let done = sqlx::query!("DELETE FROM plan_history WHERE expires_at <= ?1", now)
            .execute(&self.pool)
            .await
            .map_err(|e| query_err(&e))?;
        Ok(done.rows_affected())
    }
}

/// One history row into the open transaction.
async fn insert(
    conn: &mut sqlx::SqliteConnection,
    row: &HistoryRow,
    ttl_secs: i64,
) -> Result<(), StoreError> {
    let steps = row.steps_json();
    let tools = row.tools_column();
    let outcome = row.outcome.as_str();
    let expires = row.at_unix.saturating_add(ttl_secs);
    sqlx::query!(
            "INSERT INTO plan_history (caller, intent_sha, complexity, steps, tools, outcome, at_unix, expires_at, duration_ms, model, planner)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            row.caller,
            row.intent_sha,
            row.complexity,
            steps,
            tools,
            outcome,
            row.at_unix,
            expires,
            row.duration_ms,
            row.model,
            row.planner,
        )
    .execute(conn)
    .await
    .map_err(|e| query_err(&e))?;
    Ok(())
}
