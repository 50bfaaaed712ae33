//! The planner-first specialist view of a plan: which specialists run, in
//! what order, with what instructions and with every concrete value of the request.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One entry of `priorityOrder`: a specialist, or several that run together.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Priority {
    One(String),
    Parallel { parallel: Vec<String> },
}

/// A plan for a specialist runner.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SpecialistPlan {
    pub priority_order: Vec<Priority>,
    /// One short sentence restating the task.
    pub refined_task: String,
    /// Every concrete value of the request (URLs, ids, e-mails, paths, schedules…), by kind.
    pub extracted_context: BTreeMap<String, Vec<String>>,
    /// Instructions per specialist id.
    pub instructions: BTreeMap<String, String>,
    /// The request in the user's words, for specialists that run without a plan.
    pub user_message: String,
    /// True when no specialist fitted and the fallback was used.
    pub fallback: bool,
}
