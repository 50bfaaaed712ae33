//! The run journal and the memory a run's tools keep: rows and the interface every
//! backend implements.
//!
//! A run is journaled so that a crash loses nothing: the executor writes a step row
//! *before* it calls a tool (status `running`) and finishes it *after* (`ok`, `failed`,
//! `interrupted`). On resume a `running` row is the one thing whose outcome nobody
//! knows; the executor decides from the tool's effects whether it may call it again.

use std::future::Future;

use serde::{Deserialize, Serialize};

use crate::model::{Cursor, Page, StoreError};

/// A run as the journal keeps it. The plan and the report are JSON documents of the
/// protocol crate; the store does not look inside them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRow {
    pub run_id: String,
    pub caller: String,
    /// `queued` (submitted to a server, not yet claimed), `running`, `ok`, `failed`,
    /// `limit`, `needs_input`, `needs_approval`, `needs_human`.
    pub status: String,
    /// The plan being executed (the latest one after a replan), as JSON.
    pub plan: String,
    /// How many replans produced `plan` (0: the first plan).
    pub generation: u32,
    /// The last report written, as JSON (empty while the first step runs).
    pub report: String,
    /// Limits and options the run started with, as JSON, so a resume keeps them.
    pub settings: String,
    /// Unix milliseconds.
    pub created_at: i64,
    pub updated_at: i64,
}

/// A run row as a database answers it (integers as `i64`), before it is checked: what
/// the backends' `query_as!` fill, so each converts rows one way.
#[derive(Debug, Clone)]
pub struct RunRecord {
    pub run_id: String,
    pub caller: String,
    pub status: String,
    pub plan: String,
    pub generation: i64,
    pub report: String,
    pub settings: String,
    pub created_at: i64,
    pub updated_at: i64,
}

impl TryFrom<RunRecord> for RunRow {
    type Error = StoreError;

    fn try_from(r: RunRecord) -> Result<Self, StoreError> {
        Ok(Self {
            generation: u32::try_from(r.generation)
                .map_err(|_| StoreError::Corrupt(format!("generation {}", r.generation)))?,
            run_id: r.run_id,
            caller: r.caller,
            status: r.status,
            plan: r.plan,
            report: r.report,
            settings: r.settings,
            created_at: r.created_at,
            updated_at: r.updated_at,
        })
    }
}

/// One call of one step. `key` is unique within a run: `g{generation}/{step id}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRow {
    pub run_id: String,
    pub key: String,
    pub tool: String,
    /// `running`, `ok`, `failed`, `interrupted`, `skipped`.
    pub status: String,
    /// A hash of run id, key and args: what an external system can deduplicate on.
    pub idempotency_key: String,
    /// The tool's output as JSON (empty unless `ok`).
    pub output: String,
    pub error: Option<String>,
    pub latency_ms: i64,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    pub cost_usd: f64,
    /// Unix milliseconds.
    pub started_at: i64,
    pub finished_at: Option<i64>,
}

/// A step's end, as [`RunStore::finish_step`] writes it.
#[derive(Debug, Clone, PartialEq)]
pub struct StepEnd {
    pub status: String,
    pub output: String,
    pub error: Option<String>,
    pub latency_ms: i64,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    pub cost_usd: f64,
    pub finished_at: i64,
}

/// A journal of runs, shared by any number of processes.
pub trait RunStore: Send + Sync {
    /// Writes a new run.
    fn create_run(&self, row: &RunRow) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Replaces a run's status, plan, generation and report.
    fn update_run(&self, row: &RunRow) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// A caller's run, if it exists.
    fn run(
        &self,
        caller: &str,
        run_id: &str,
    ) -> impl Future<Output = Result<Option<RunRow>, StoreError>> + Send;

    /// A caller's runs, newest first: at most `limit` after the `after` cursor, with the
    /// cursor of the next page.
    fn runs(
        &self,
        caller: &str,
        after: Option<&Cursor>,
        limit: u32,
    ) -> impl Future<Output = Result<Page<RunRow>, StoreError>> + Send;

    /// Writes a step row before its call. A row already under that key is replaced
    /// (a retry of an interrupted call).
    fn begin_step(&self, row: &StepRow) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Finishes a step row after its call.
    fn finish_step(
        &self,
        run_id: &str,
        key: &str,
        end: &StepEnd,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Every step row of a run, in the order they were begun.
    fn steps(&self, run_id: &str) -> impl Future<Output = Result<Vec<StepRow>, StoreError>> + Send;

    /// Takes the oldest `queued` run of any caller for `instance`: marks it `running`,
    /// records the claim and returns it; `None` when nothing waits. Atomic: however
    /// many instances race, each queued run goes to exactly one.
    fn claim_run(
        &self,
        instance: &str,
        now: i64,
    ) -> impl Future<Output = Result<Option<RunRow>, StoreError>> + Send;

    /// The instance that claimed a run, if one did.
    fn claimed_by(
        &self,
        run_id: &str,
    ) -> impl Future<Output = Result<Option<String>, StoreError>> + Send;
}

/// A remembered value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Memory {
    pub key: String,
    pub value: String,
    pub at_unix: i64,
}

/// What `memory_*` tools keep, per caller.
pub trait MemoryStore: Send + Sync {
    /// Stores `value` under `key`, replacing what was there.
    fn remember(
        &self,
        caller: &str,
        memory: &Memory,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Memories whose key equals `query` or whose key or value contains it, newest
    /// first, at most `limit`.
    fn recall(
        &self,
        caller: &str,
        query: &str,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<Memory>, StoreError>> + Send;

    /// Removes the memory under `key`; returns whether there was one.
    fn forget_memory(
        &self,
        caller: &str,
        key: &str,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;
}
