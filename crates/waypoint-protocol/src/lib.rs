//! Wire types of Waypoint — the shapes that cross a process boundary.
//!
//! Every other crate speaks these types: the planner produces a [`Plan`], the CLI and the
//! servers print it, the evaluation harness reads [`EvalCase`]s and writes an
//! [`EvalReport`]; the executor reports a [`RunReport`] and streams [`RunEvent`]s. The JSON they serialise to is the contract of `docs/contracts.md`
//! (docs/contracts.md); `docs/plan.schema.json` is generated from these types.
//!
//! Facts that can be derived are derived, never stored on their own: a plan's
//! `complexity` and `rewritten_prompt` come from its steps, a clarity's
//! `ready_to_formalize` from its score and questions.

mod eval;
mod plan;
mod plan_json;
mod request;
mod route;
mod run;
mod specialists;
pub mod time;
mod understanding;

pub use eval::{
    EvalCase, EvalFailure, EvalReport, Expect, GoalExpect, Latency, ModelCase, ModelEffect,
    OneOrMany,
};
pub use plan::{
    Compaction, Complexity, Plan, PlanParts, PlannerKind, SCHEMA_VERSION, Step, StepKind,
    UNKNOWN_TOOL, Usage,
};
pub use plan_json::{PlanJsonError, PlanShapeError, parse_plan};
pub use request::RequestInput;
pub use route::{Candidate, CandidateKind, RouteReport};
pub use run::{
    Attempt, Criterion, LimitHit, PendingCall, Question, RunEvent, RunReport, RunStatus, RunTotals,
    StepRun, StepStatus, Verification,
};
pub use specialists::{Priority, SpecialistPlan};
pub use understanding::{
    Ambiguity, Clarity, Clause, ClauseRole, Extracted, ExtractedKind, Goal, TextSpan, Understanding,
};

/// The JSON Schema of [`Plan`], as checked in under `docs/plan.schema.json`.
#[must_use]
pub fn plan_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(Plan)).unwrap_or_default()
}
