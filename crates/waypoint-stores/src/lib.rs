//! One type for every store backend, chosen by URL: `sqlite:PATH` (the default, one
//! file per user) or `postgres://…` (several instances sharing one store). It implements
//! the history, run-journal and memory interfaces by handing each call to the backend,
//! so the CLI and the servers open stores the same way.

use std::path::PathBuf;

use waypoint_protocol::Plan;
use waypoint_store::{
    Cursor, Forget, HistoryFilter, HistoryRow, HistoryStore, Memory, MemoryStore, Outcome, Page,
    RunRow, RunStore, StepEnd, StepRecord, StepRow, StoreError, args_sha, intent_sha, now_unix,
};
use waypoint_store_postgres::PostgresStore;
use waypoint_store_sqlite::SqliteStore;

/// The store a `--store` value names: one of the [`waypoint_store::HistoryStore`]
/// backends.
pub enum Store {
    Sqlite(SqliteStore),
    Postgres(PostgresStore),
}

/// The audit row a plan leaves: hashes and tool names only, never the request's text.
pub fn history_row(
    plan: &Plan,
    request: &str,
    caller: &str,
    outcome: Outcome,
    duration_ms: i64,
) -> HistoryRow {
    HistoryRow {
        caller: caller.to_string(),
        intent_sha: intent_sha(request),
        complexity: plan.complexity().as_str().to_string(),
        steps: plan
            .steps()
            .iter()
            .map(|s| StepRecord {
                order: s.order,
                tool: s.tool.clone(),
                args_sha: args_sha(&s.args),
            })
            .collect(),
        outcome,
        at_unix: now_unix(),
        duration_ms,
        model: plan.model().map(str::to_string),
        planner: serde_json::to_value(plan.planner())
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
    }
}

/// Where history lives by default: `sqlite:` a file in the user's data directory.
pub fn default_location() -> String {
    let base = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(|| PathBuf::from("."));
    format!("sqlite:{}", base.join("waypoint/history.db").display())
}

impl Store {
    /// Opens `spec` (`sqlite:PATH`, `postgres://…`); `none` means no history.
    pub async fn open(spec: &str, ttl_secs: i64) -> Result<Option<Self>, StoreError> {
        if spec == "none" {
            return Ok(None);
        }
        if let Some(path) = spec.strip_prefix("sqlite:") {
            let path = path.strip_prefix("//").unwrap_or(path);
            return Ok(Some(Self::Sqlite(
                SqliteStore::open(std::path::Path::new(path), ttl_secs).await?,
            )));
        }
        if spec.starts_with("postgres://") || spec.starts_with("postgresql://") {
            return Ok(Some(Self::Postgres(
                PostgresStore::connect(spec, ttl_secs).await?,
            )));
        }
        Err(StoreError::UnknownScheme(spec.to_string()))
    }

    pub async fn close(&self) {
        match self {
            Self::Sqlite(s) => s.close().await,
            Self::Postgres(s) => s.close().await,
        }
    }
}

impl HistoryStore for Store {
    async fn record(&self, row: &HistoryRow) -> Result<(), StoreError> {
        match self {
            Self::Sqlite(s) => s.record(row).await,
            Self::Postgres(s) => s.record(row).await,
        }
    }

    async fn record_many(&self, rows: &[HistoryRow]) -> Result<(), StoreError> {
        match self {
            Self::Sqlite(s) => s.record_many(rows).await,
            Self::Postgres(s) => s.record_many(rows).await,
        }
    }

    async fn history_page(
        &self,
        caller: &str,
        filter: &HistoryFilter,
        now: i64,
    ) -> Result<Page<HistoryRow>, StoreError> {
        match self {
            Self::Sqlite(s) => s.history_page(caller, filter, now).await,
            Self::Postgres(s) => s.history_page(caller, filter, now).await,
        }
    }

    async fn forget(&self, caller: &str, what: &Forget) -> Result<u64, StoreError> {
        match self {
            Self::Sqlite(s) => s.forget(caller, what).await,
            Self::Postgres(s) => s.forget(caller, what).await,
        }
    }

    async fn purge_expired(&self, now: i64) -> Result<u64, StoreError> {
        match self {
            Self::Sqlite(s) => s.purge_expired(now).await,
            Self::Postgres(s) => s.purge_expired(now).await,
        }
    }
}

/// Calls the same method on whichever backend is open.
macro_rules! either {
    ($self:ident, $s:ident => $call:expr) => {
        match $self {
            Self::Sqlite($s) => $call,
            Self::Postgres($s) => $call,
        }
    };
}

impl RunStore for Store {
    async fn create_run(&self, row: &RunRow) -> Result<(), StoreError> {
        either!(self, s => s.create_run(row).await)
    }
    async fn update_run(&self, row: &RunRow) -> Result<(), StoreError> {
        either!(self, s => s.update_run(row).await)
    }
    async fn run(&self, caller: &str, run_id: &str) -> Result<Option<RunRow>, StoreError> {
        either!(self, s => s.run(caller, run_id).await)
    }
    async fn runs(
        &self,
        caller: &str,
        after: Option<&Cursor>,
        limit: u32,
    ) -> Result<Page<RunRow>, StoreError> {
        either!(self, s => s.runs(caller, after, limit).await)
    }
    async fn begin_step(&self, row: &StepRow) -> Result<(), StoreError> {
        either!(self, s => s.begin_step(row).await)
    }
    async fn finish_step(&self, run_id: &str, key: &str, end: &StepEnd) -> Result<(), StoreError> {
        either!(self, s => s.finish_step(run_id, key, end).await)
    }
    async fn steps(&self, run_id: &str) -> Result<Vec<StepRow>, StoreError> {
        either!(self, s => s.steps(run_id).await)
    }

    async fn claim_run(&self, instance: &str, now: i64) -> Result<Option<RunRow>, StoreError> {
        either!(self, s => s.claim_run(instance, now).await)
    }

    async fn claimed_by(&self, run_id: &str) -> Result<Option<String>, StoreError> {
        either!(self, s => s.claimed_by(run_id).await)
    }
}

impl MemoryStore for Store {
    async fn remember(&self, caller: &str, memory: &Memory) -> Result<(), StoreError> {
        either!(self, s => s.remember(caller, memory).await)
    }
    async fn recall(
        &self,
        caller: &str,
        query: &str,
        limit: u32,
    ) -> Result<Vec<Memory>, StoreError> {
        either!(self, s => s.recall(caller, query, limit).await)
    }
    async fn forget_memory(&self, caller: &str, key: &str) -> Result<bool, StoreError> {
        either!(self, s => s.forget_memory(caller, key).await)
    }
}
