//! The plan contract (docs/contracts.md, Plan JSON).

use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::understanding::{Clarity, Understanding};

/// Version of the plan JSON; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// The `tool` value of a step that names no catalog entry.
pub const UNKNOWN_TOOL: &str = "unknown";

/// What a step does when it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    /// One catalog tool.
    Tool,
    /// A catalog pipeline, run as one step.
    Pipeline,
    /// A plan document, run as one step.
    Plan,
    /// A model call given only the outputs its `input_refs` name.
    LlmSubtask,
    /// A question for the person who asked.
    AskUser,
    /// A capability the catalog does not have: never dispatched.
    Unknown,
}

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Step {
    /// Stable id within the plan (`s1`, `s2`, …); `input_refs` point at these.
    pub id: String,
    /// 1-based position; steps run in this order unless groups allow overlap.
    pub order: u32,
    pub kind: StepKind,
    /// A tool name, pipeline id or plan id from the catalog, or `unknown`.
    pub tool: String,
    /// Arguments for the tool, checked against its `input_schema`.
    #[serde(default)]
    pub args: serde_json::Map<String, serde_json::Value>,
    /// Ids of earlier steps whose outputs this step consumes.
    #[serde(default)]
    pub input_refs: Vec<String>,
    /// Ids of earlier steps this one must follow without taking their output: the
    /// request ordered them ("run the tests, then build").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<String>,
    /// Steps sharing a group have no dependency on each other and may run together.
    pub group: u32,
    /// Why this step is here; for `unknown` steps it starts with `gap:`.
    #[serde(default)]
    pub rationale: String,
    /// Index of the request clause this step serves, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clause: Option<usize>,
}

impl Step {
    /// Whether the step names something the catalog has.
    pub fn is_known(&self) -> bool {
        self.kind != StepKind::Unknown
    }
}

/// The shape of a plan, derived from its steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Complexity {
    /// One step (or none).
    SingleAction,
    /// One step that is a pipeline or a plan document covering the whole request.
    PipelineDirect,
    /// Two or more steps.
    PackChain,
}

impl Complexity {
    /// Derives the shape from the steps, per docs/contracts.md, Plan JSON.
    pub fn of(steps: &[Step]) -> Self {
        match steps {
            [one] if matches!(one.kind, StepKind::Pipeline | StepKind::Plan) => {
                Self::PipelineDirect
            }
            [] | [_] => Self::SingleAction,
            _ => Self::PackChain,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::SingleAction => "single-action",
            Self::PipelineDirect => "pipeline-direct",
            Self::PackChain => "pack-chain",
        }
    }
}

/// Which planner answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PlannerKind {
    Learned,
    Deterministic,
    Llm,
}

impl PlannerKind {
    /// The name in the plan JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Learned => "learned",
            Self::Deterministic => "deterministic",
            Self::Llm => "llm",
        }
    }
}

/// What catalog compaction dropped to fit a model's context budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Compaction {
    pub before_tokens: u32,
    pub after_tokens: u32,
    pub dropped: Vec<String>,
}

/// What answering with a model cost: summed over every call made for one plan
/// (a repair round is a second call).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Usage {
    /// Model calls made, repairs included.
    pub calls: u32,
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    /// Wall time spent waiting for the model, retries and backoff included.
    pub latency_ms: u64,
    /// Estimated from the model table's prices; `None` when the price is unknown.
    pub cost_usd: Option<f64>,
}

/// Everything a plan holds except what is derived from its steps.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanParts {
    pub plan_id: String,
    /// The request in the user's words; it heads the rewritten prompt.
    pub request: String,
    pub steps: Vec<Step>,
    pub reasoning: String,
    pub understanding: Understanding,
    pub clarity: Clarity,
    pub planner: PlannerKind,
    pub model: Option<String>,
    pub compaction: Option<Compaction>,
    pub usage: Option<Usage>,
    pub warnings: Vec<String>,
}

/// A validated, ordered plan (docs/contracts.md, Plan JSON).
///
/// Built only through [`Plan::new`] (or deserialisation, which re-derives), so that
/// `complexity` and `rewritten_prompt` can never disagree with `steps`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(from = "PlanWire")]
#[schemars(!from)]
#[expect(clippy::struct_field_names, reason = "`plan_id` is the wire name")]
pub struct Plan {
    schema_version: u32,
    plan_id: String,
    steps: Vec<Step>,
    complexity: Complexity,
    rewritten_prompt: String,
    reasoning: String,
    understanding: Understanding,
    clarity: Clarity,
    planner: PlannerKind,
    model: Option<String>,
    compaction: Option<Compaction>,
    /// Tokens, latency and cost of the model calls behind this plan, when a model answered
    /// or was tried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    usage: Option<Usage>,
    /// Things the caller should know that are not errors (fallbacks, dropped args).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    warnings: Vec<String>,
}

/// The serialised form, whose derived fields are ignored on the way in.
#[derive(Deserialize)]
struct PlanWire {
    #[serde(default = "default_schema_version")]
    schema_version: u32,
    plan_id: String,
    steps: Vec<Step>,
    #[serde(default)]
    reasoning: String,
    #[serde(default)]
    understanding: Understanding,
    #[serde(default)]
    clarity: Clarity,
    #[serde(default = "default_planner")]
    planner: PlannerKind,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    compaction: Option<Compaction>,
    #[serde(default)]
    usage: Option<Usage>,
    #[serde(default)]
    warnings: Vec<String>,
}

fn default_schema_version() -> u32 {
    SCHEMA_VERSION
}

fn default_planner() -> PlannerKind {
    PlannerKind::Deterministic
}

impl From<PlanWire> for Plan {
    fn from(w: PlanWire) -> Self {
        let request = w
            .understanding
            .clauses
            .iter()
            .map(|c| c.text.as_str())
            .collect::<Vec<_>>()
            .join("; ");
        let mut plan = Plan::new(PlanParts {
            plan_id: w.plan_id,
            request,
            steps: w.steps,
            reasoning: w.reasoning,
            understanding: w.understanding,
            clarity: w.clarity,
            planner: w.planner,
            model: w.model,
            compaction: w.compaction,
            usage: w.usage,
            warnings: w.warnings,
        });
        plan.schema_version = w.schema_version;
        plan
    }
}

impl Plan {
    /// Assembles a plan and derives its complexity and rewritten prompt from the steps.
    pub fn new(parts: PlanParts) -> Self {
        let complexity = Complexity::of(&parts.steps);
        let rewritten_prompt = rewrite_prompt(&parts.request, &parts.steps);
        Self {
            schema_version: SCHEMA_VERSION,
            plan_id: parts.plan_id,
            steps: parts.steps,
            complexity,
            rewritten_prompt,
            reasoning: parts.reasoning,
            understanding: parts.understanding,
            clarity: parts.clarity,
            planner: parts.planner,
            model: parts.model,
            compaction: parts.compaction,
            usage: parts.usage,
            warnings: parts.warnings,
        }
    }

    /// The same plan with one more warning (a fallback says why it fell back).
    #[must_use]
    pub fn with_warning(mut self, warning: impl Into<String>) -> Self {
        self.warnings.push(warning.into());
        self
    }

    /// The same plan with `note` added to the rationale of each of its gaps (what a
    /// model suggested for them and why it was not taken).
    #[must_use]
    pub fn with_gap_note(mut self, note: &str) -> Self {
        for step in self
            .steps
            .iter_mut()
            .filter(|s| s.kind == StepKind::Unknown)
        {
            step.rationale = format!("{}; {note}", step.rationale.trim_end_matches('.'));
        }
        self
    }

    /// The same plan with the usage of the model calls made for it, also when a
    /// fallback answered in the end.
    #[must_use]
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = Some(usage);
        self
    }

    /// The same plan with the model that was consulted and the compaction it was shown.
    #[must_use]
    pub fn with_model(mut self, model: Option<String>, compaction: Option<Compaction>) -> Self {
        self.model = model;
        self.compaction = compaction;
        self
    }

    pub fn schema_version(&self) -> u32 {
        self.schema_version
    }
    pub fn plan_id(&self) -> &str {
        &self.plan_id
    }
    pub fn steps(&self) -> &[Step] {
        &self.steps
    }
    pub fn complexity(&self) -> Complexity {
        self.complexity
    }
    pub fn rewritten_prompt(&self) -> &str {
        &self.rewritten_prompt
    }
    pub fn reasoning(&self) -> &str {
        &self.reasoning
    }
    pub fn understanding(&self) -> &Understanding {
        &self.understanding
    }
    pub fn clarity(&self) -> &Clarity {
        &self.clarity
    }
    pub fn planner(&self) -> PlannerKind {
        self.planner
    }
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }
    pub fn compaction(&self) -> Option<&Compaction> {
        self.compaction.as_ref()
    }
    pub fn usage(&self) -> Option<&Usage> {
        self.usage.as_ref()
    }
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }
    /// Whether any step is a gap the catalog cannot fill.
    pub fn has_unknown(&self) -> bool {
        self.steps.iter().any(|s| !s.is_known())
    }
}

/// Renders the steps as a natural-language instruction an agent can follow line by line.
fn rewrite_prompt(request: &str, steps: &[Step]) -> String {
    let mut out = format!("Plan for: {}\n", request.trim());
    if steps.is_empty() {
        out.push_str("No step is needed.\n");
        return out;
    }
    for step in steps {
        let _ = write!(out, "Step {}: ", step.order);
        match step.kind {
            StepKind::Unknown => {
                let _ = write!(out, "no catalog tool fits — {}", step.rationale);
            }
            StepKind::AskUser => {
                let _ = write!(out, "ask the user — {}", step.rationale);
            }
            _ => {
                let what = match step.kind {
                    StepKind::Pipeline => "run pipeline",
                    StepKind::Plan => "run plan",
                    StepKind::LlmSubtask => "run model subtask",
                    _ => "call",
                };
                let _ = write!(out, "{what} {}", step.tool);
                if !step.args.is_empty() {
                    let args = serde_json::Value::Object(step.args.clone());
                    let _ = write!(out, " with {args}");
                }
                if !step.input_refs.is_empty() {
                    let _ = write!(out, " using the output of {}", step.input_refs.join(", "));
                }
                if !step.rationale.is_empty() {
                    let _ = write!(out, " — {}", step.rationale);
                }
            }
        }
        out.push('\n');
    }
    out.push_str(
        "Execute the steps in order. Stop and surface any tool error to the user before \
         proceeding to the next step. Do not dispatch steps marked as having no catalog tool.",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(order: u32, kind: StepKind, tool: &str) -> Step {
        Step {
            id: format!("s{order}"),
            order,
            kind,
            tool: tool.into(),
            args: serde_json::Map::new(),
            input_refs: vec![],
            after: Vec::new(),
            group: 1,
            rationale: String::new(),
            clause: None,
        }
    }

    #[test]
    fn complexity_follows_the_shape_of_the_steps() {
        assert_eq!(Complexity::of(&[]), Complexity::SingleAction);
        assert_eq!(
            Complexity::of(&[step(1, StepKind::Tool, "a")]),
            Complexity::SingleAction
        );
        assert_eq!(
            Complexity::of(&[step(1, StepKind::Pipeline, "p")]),
            Complexity::PipelineDirect
        );
        assert_eq!(
            Complexity::of(&[
                step(1, StepKind::Pipeline, "p"),
                step(2, StepKind::Tool, "a")
            ]),
            Complexity::PackChain
        );
    }

    #[test]
    fn derived_fields_are_recomputed_on_deserialise() {
        let json = serde_json::json!({
            "plan_id": "pl_x",
            "steps": [{"id": "s1", "order": 1, "kind": "tool", "tool": "a", "group": 1}],
            "complexity": "pack-chain",
            "rewritten_prompt": "lies"
        });
        let plan: Plan = serde_json::from_value(json).unwrap();
        assert_eq!(plan.complexity(), Complexity::SingleAction);
        assert!(plan.rewritten_prompt().contains("Step 1: call a"));
    }
}
