//! The answer of the route stage for one clause.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a candidate is in the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CandidateKind {
    Tool,
    Pipeline,
    Plan,
}

/// One ranked candidate with its calibrated score in [0, 1].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Candidate {
    pub id: String,
    pub kind: CandidateKind,
    pub score: f64,
    /// The words and signals that earned the score.
    #[serde(default)]
    pub why: Vec<String>,
}

/// The route answer for one clause.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RouteReport {
    pub clause: String,
    /// The best candidate at or above the threshold; absent when the catalog has a gap.
    pub recommendation: Option<Candidate>,
    pub alternatives: Vec<Candidate>,
    pub threshold: f64,
    /// Describes the missing capability when nothing reaches the threshold.
    pub gap_warning: Option<String>,
    /// Arguments for the recommendation, filled from the request.
    pub suggested_args: serde_json::Map<String, serde_json::Value>,
}
