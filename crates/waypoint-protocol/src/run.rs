//! What running a plan reports: the run's status, each step's outcome and the events a
//! watcher sees while it runs.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How a run stands. Every status but `queued` and `running` is final for this attempt;
/// `needs_input`, `needs_approval` and `needs_human` runs can be resumed once someone
/// answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Submitted to a server and waiting for an instance to claim it.
    Queued,
    Running,
    /// Every step succeeded and the goal's evidence is there.
    Ok,
    /// A step failed in a way no replan can fix (a bad plan file, a store error).
    Failed,
    /// A limit was reached; `limit` names it.
    Limit,
    /// A question must be answered first (`ask_user` off a TTY, a step whose outcome a
    /// crash left unknown, an unclear request).
    NeedsInput,
    /// A call that changes the world waits for a person to approve it (docs/security.md);
    /// its question lists the tool, its effects and its args. Nothing of it was called.
    NeedsApproval,
    /// Replans are used up; `attempts` says what was tried.
    NeedsHuman,
    /// Its caller cancelled it while it was queued or stopped; it cannot go on.
    Cancelled,
}

impl RunStatus {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Running => "running",
            Self::Ok => "ok",
            Self::Failed => "failed",
            Self::Limit => "limit",
            Self::NeedsInput => "needs_input",
            Self::NeedsApproval => "needs_approval",
            Self::NeedsHuman => "needs_human",
            Self::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            Self::Queued,
            Self::Running,
            Self::Ok,
            Self::Failed,
            Self::Limit,
            Self::NeedsInput,
            Self::NeedsApproval,
            Self::NeedsHuman,
            Self::Cancelled,
        ]
        .into_iter()
        .find(|st| st.as_str() == s)
    }
}

/// How one step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    /// Called and not finished: in the journal after a crash, this is an unknown outcome.
    Running,
    Ok,
    Failed,
    /// Stopped by a limit or a cancellation while the call was in flight.
    Interrupted,
    /// Not called: a step it depends on did not succeed, or a person said to skip it.
    Skipped,
}

impl StepStatus {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Ok => "ok",
            Self::Failed => "failed",
            Self::Interrupted => "interrupted",
            Self::Skipped => "skipped",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            Self::Running,
            Self::Ok,
            Self::Failed,
            Self::Interrupted,
            Self::Skipped,
        ]
        .into_iter()
        .find(|st| st.as_str() == s)
    }
}

/// One step's call as the run saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StepRun {
    /// `g{generation}/{step id}`; a pipeline's inner calls add `.{n}`.
    pub key: String,
    pub step_id: String,
    pub tool: String,
    pub status: StepStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub latency_ms: u64,
    #[serde(default)]
    pub prompt_tokens: u32,
    #[serde(default)]
    pub completion_tokens: u32,
    #[serde(default)]
    pub cost_usd: f64,
    /// True when the output came from the journal, not from a call in this process.
    #[serde(default)]
    pub replayed: bool,
}

/// A limit that stopped a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LimitHit {
    /// `max_steps`, `max_tool_calls`, `max_wall_ms`, `max_usd` or `max_replans`.
    pub name: String,
    pub limit: f64,
    /// What the run had used, or would have used with the next call.
    pub used: f64,
}

/// One plan the run tried, and why it was left.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Attempt {
    pub generation: u32,
    pub plan_id: String,
    pub tools: Vec<String>,
    /// What went wrong, in a few lines: the digest the next plan was made from.
    pub digest: String,
}

/// Whether the run produced what the request asked for (the completion check).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Verification {
    /// Evidence classes the goals need that a successful step produced.
    pub satisfied: Vec<String>,
    /// Evidence classes no successful step produced.
    pub missing: Vec<String>,
    /// Success criteria, each with whether it held; `None` when it cannot be checked
    /// mechanically and is only reported.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub criteria: Vec<Criterion>,
}

impl Verification {
    pub fn passed(&self) -> bool {
        self.missing.is_empty() && self.criteria.iter().all(|c| c.held != Some(false))
    }
}

/// One success criterion and its verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Criterion {
    pub text: String,
    pub held: Option<bool>,
}

/// Totals of a run.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct RunTotals {
    pub steps: u32,
    pub tool_calls: u32,
    pub cost_usd: f64,
    pub wall_ms: u64,
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    pub replans: u32,
}

/// The outcome of a run, as `waypoint run --json` prints it and the journal keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunReport {
    pub run_id: String,
    pub status: RunStatus,
    /// One sentence on why the run stands where it does.
    pub message: String,
    pub plan_id: String,
    pub generation: u32,
    pub steps: Vec<StepRun>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<LimitHit>,
    /// What must be answered before the run can go on (`needs_input`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub questions: Vec<Question>,
    /// Plans tried before the current one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attempts: Vec<Attempt>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification: Option<Verification>,
    pub totals: RunTotals,
}

impl RunReport {
    /// The output of the last successful call of a step.
    pub fn output(&self, step_id: &str) -> Option<&serde_json::Value> {
        self.steps
            .iter()
            .rev()
            .find(|s| s.step_id == step_id && s.status == StepStatus::Ok)
            .and_then(|s| s.output.as_ref())
    }
}

/// A question a run waits on, and how to answer it on resume.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Question {
    /// The step that asks (`ask_user`) or whose outcome is unknown.
    pub step_id: String,
    pub text: String,
    /// What answers it: `answer` (text for `ask_user` or a placeholder), `clarify` (a
    /// question of an unclear plan document's clarity gate), `retry_or_done` (unknown
    /// outcome), `approve` (a call waiting for approval).
    pub expects: String,
    /// The key an answer is given under on resume: the step (`s2`), a placeholder of a
    /// step (`s1.path`), or a step inside a plan document (`s1.2.1.topic`); for
    /// `retry_or_done`, the step to retry or mark done; for `approve`, the step to approve.
    #[serde(default)]
    pub key: String,
    /// For `approve`: the call that waits, as it would be made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<PendingCall>,
}

/// A call held at the approval gate: what a person approves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PendingCall {
    pub tool: String,
    /// The tool's effects: `write`, `destructive` or `external`.
    pub effects: String,
    /// The args it would be called with, references already resolved.
    pub args: serde_json::Value,
}

/// What a run tells a watcher as it goes (`--events jsonl`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum RunEvent {
    RunStarted {
        run_id: String,
        plan_id: String,
        steps: usize,
        resumed: bool,
    },
    StepStarted {
        run_id: String,
        key: String,
        step_id: String,
        tool: String,
    },
    StepFinished {
        run_id: String,
        step: StepRun,
    },
    Replanned {
        run_id: String,
        attempt: Attempt,
    },
    RunFinished {
        report: Box<RunReport>,
    },
}
