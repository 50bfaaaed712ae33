//! Plan history (the self-learning loop) behind one interface.
//!
//! A [`HistoryRow`] is what a plan leaves behind: hashes of the request and of each
//! step's args, the tool sequence, the outcome — never the request text, args or
//! rationale. Backends (`waypoint-store-sqlite`, `waypoint-store-postgres`) keep rows per
//! caller namespace with a time to live; [`project`] turns a caller's rows into the
//! my-plans view and [`learned`] finds the sequence a repeated request can reuse.
//!
//! The same backends keep the run journal ([`RunStore`]: runs and their step calls,
//! written before and after every call) and the memories of `memory_*` tools
//! ([`MemoryStore`]).

mod hash;
mod learn;
mod model;
mod runs;
mod store;

pub use hash::{args_sha, intent_sha, normalise};
pub use learn::{LEARN_WINDOW, LearnRule, MyPlan, SequenceCount, learned, learned_for, project};
pub use model::{Cursor, Forget, HistoryFilter, HistoryRow, Outcome, Page, StepRecord, StoreError};
pub use runs::{Memory, MemoryStore, RunRecord, RunRow, RunStore, StepEnd, StepRow};
pub use store::HistoryStore;

/// Now, in unix seconds: the time history rows and memories are stamped with.
pub fn now_unix() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// The run journal's clock: unix milliseconds, so runs and steps started in the same
/// second keep their order. Claims, steps and run rows are all stamped by it.
pub fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
