//! Which planner answers, and the model as a planner.
//!
//! - [`cascade`]: learned → deterministic when confident → model (`--planner`).
//! - [`llm`]: one model plan: compaction, a bounded schema, reading the reply, one
//!   repair round, validation by the same guards as every plan, fallback.
//! - [`guard`]: a model's step is adopted only where the router sees some sign of it.
//! - [`compact`]: the catalog cut to a model's context budget in a fixed order.
//! - [`prompt`] and [`reply`]: what the model is told and how its answer is read.

pub mod cascade;
pub mod compact;
pub mod guard;
pub mod llm;
pub mod prompt;
pub mod reply;

pub use cascade::{Cascade, DEFAULT_THRESHOLD, Strategy, confidence};
pub use compact::{Compacted, Compactor};
pub use guard::DEFAULT_ASSISTED_FLOOR;
pub use llm::{Attempt, LlmPlanner};
