//! Evaluation cases and the report they score into (docs/contracts.md, Evaluation cases and report).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One value or a list of acceptable values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    pub fn accepts(&self, value: Option<&str>) -> bool {
        match (self, value) {
            (Self::One(want), Some(got)) => want == got,
            (Self::Many(wants), Some(got)) => wants.iter().any(|w| w == got),
            _ => false,
        }
    }
}

/// Expected intent and entity of the first clause's goal.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GoalExpect {
    pub intent: Option<OneOrMany>,
    pub entity: Option<OneOrMany>,
}

/// What a case expects; every key is optional and scored only where present.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    pub goal: Option<GoalExpect>,
    pub tools: Option<Vec<String>>,
    pub tool_set: Option<Vec<String>>,
    pub links: Option<Vec<(String, String)>>,
    pub complexity: Option<String>,
    pub unknown: Option<bool>,
    pub ready_to_formalize: Option<bool>,
    pub extracted: Option<BTreeMap<String, Vec<String>>>,
    /// Argument values per tool: `{tool: {arg: value}}`. A value `{"$ref": "other_tool"}`
    /// expects a link to that tool's step. Scored as `arg_value_f1` over the named tools.
    pub args: Option<BTreeMap<String, BTreeMap<String, serde_json::Value>>>,
    /// Pairs of tools `[earlier, later]` the request orders: the later one's step must
    /// sit in a later group. Scored as `order_accuracy`.
    pub order: Option<Vec<(String, String)>>,
}

/// One line of a cases file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EvalCase {
    pub id: String,
    pub request: String,
    #[serde(default)]
    pub context: Option<serde_json::Value>,
    #[serde(default)]
    pub expect: Expect,
}

/// Planning latency percentiles in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Latency {
    pub p50: u64,
    pub p99: u64,
}

/// One expectation a case did not meet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EvalFailure {
    pub id: String,
    pub field: String,
    pub expected: serde_json::Value,
    pub got: serde_json::Value,
}

/// The scores of a run; a metric is `null` when no case carries it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct EvalReport {
    pub cases: usize,
    pub goal_accuracy: Option<f64>,
    pub sequence_accuracy: Option<f64>,
    pub set_accuracy: Option<f64>,
    pub node_f1: Option<f64>,
    pub edge_f1: Option<f64>,
    pub complexity_accuracy: Option<f64>,
    pub unknown_accuracy: Option<f64>,
    /// Share of cases expecting no gap (`expect.unknown: false`) that pass every check.
    #[serde(default)]
    pub in_scope_accuracy: Option<f64>,
    /// Share of cases expecting a gap (`expect.unknown: true`) that pass every check:
    /// out-of-scope requests reported as gaps rather than forced onto a tool.
    #[serde(default)]
    pub oos_recall: Option<f64>,
    pub ready_accuracy: Option<f64>,
    pub extracted_recall: Option<f64>,
    /// Micro F1 of (tool, argument, value) triples over the tools `expect.args` names;
    /// strings compare after folding case and white space.
    #[serde(default)]
    pub arg_value_f1: Option<f64>,
    /// Share of cases with `expect.order` whose every pair runs in order.
    #[serde(default)]
    pub order_accuracy: Option<f64>,
    pub latency_us: Latency,
    pub failures: Vec<EvalFailure>,
    /// The same metrics over the cases each planner answered (`learned`,
    /// `deterministic`, `llm`), when more than one kind could answer (a cascade run).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub by_planner: BTreeMap<String, EvalReport>,
    /// Every case a model was asked about: what the deterministic planner gave, what
    /// the plan became, and whether that fixed or broke the case.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub model_cases: Vec<ModelCase>,
}

/// One case a model was asked about in a cascade evaluation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModelCase {
    pub id: String,
    /// The planner whose plan was scored (`llm`, or `deterministic` after a fallback
    /// or when the guard kept none of the model's steps).
    pub planner: String,
    /// Tools of the deterministic plan, in order (`unknown` for a gap).
    pub deterministic: Vec<String>,
    /// Tools of the scored plan.
    pub answered: Vec<String>,
    pub effect: ModelEffect,
}

/// What asking the model did to a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ModelEffect {
    /// The deterministic plan failed the case and the scored plan passes it.
    Fixed,
    /// The deterministic plan passed and the scored plan fails.
    Broke,
    /// Both fail, with different tools.
    Changed,
    /// The tools did not change, or both pass.
    Same,
}
