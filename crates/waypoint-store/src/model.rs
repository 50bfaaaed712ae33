//! The rows a store keeps and the questions it answers.

use serde::{Deserialize, Serialize};

/// How a plan ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Ok,
    Failed,
    Limit,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Failed => "failed",
            Self::Limit => "limit",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "ok" => Some(Self::Ok),
            "failed" => Some(Self::Failed),
            "limit" => Some(Self::Limit),
            _ => None,
        }
    }
}

/// One step as history keeps it: the tool and a hash of its args.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StepRecord {
    pub order: u32,
    pub tool: String,
    pub args_sha: String,
}

/// One plan's audit row (seed 000). No request text, args or rationale.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HistoryRow {
    pub caller: String,
    pub intent_sha: String,
    pub complexity: String,
    pub steps: Vec<StepRecord>,
    pub outcome: Outcome,
    pub at_unix: i64,
    pub duration_ms: i64,
    pub model: Option<String>,
    pub planner: String,
}

impl HistoryRow {
    /// The tool sequence, the key under which plans are compared.
    pub fn sequence(&self) -> Vec<String> {
        self.steps.iter().map(|s| s.tool.clone()).collect()
    }
}

/// Which rows to list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HistoryFilter {
    pub intent_sha: Option<String>,
    /// Rows with a step using this tool.
    pub tool: Option<String>,
    pub outcome: Option<Outcome>,
    /// Rows at or after this time (unix seconds).
    pub since: Option<i64>,
    /// Most rows returned, newest first.
    pub limit: Option<u32>,
}

/// What `forget` removes from a caller's history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Forget {
    All,
    /// Rows older than this time (unix seconds).
    OlderThan(i64),
    Intent(String),
}

/// Why a store call failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The store location could not be opened or reached.
    #[error("cannot open store `{location}`: {message}")]
    Open { location: String, message: String },
    /// A migration failed; the store is left as it was.
    #[error("cannot migrate store: {0}")]
    Migrate(String),
    /// A query failed.
    #[error("store query failed: {0}")]
    Query(String),
    /// A row in the store does not decode (written by a newer or broken version).
    #[error("store row is corrupt: {0}")]
    Corrupt(String),
    /// The store URL names no known backend.
    #[error("unknown store `{0}`; use `sqlite:PATH` or `postgres://…`")]
    UnknownScheme(String),
}

impl HistoryRow {
    /// The steps as stored: a JSON array.
    pub fn steps_json(&self) -> String {
        serde_json::to_string(&self.steps).unwrap_or_else(|_| "[]".into())
    }

    /// The tools as stored for filtering: `,a,b,`.
    pub fn tools_column(&self) -> String {
        let mut s = String::from(",");
        for step in &self.steps {
            s.push_str(&step.tool);
            s.push(',');
        }
        s
    }

    /// Rebuilds a row from stored columns.
    #[expect(clippy::too_many_arguments, reason = "one argument per stored column")]
    pub fn from_columns(
        caller: String,
        intent_sha: String,
        complexity: String,
        steps: &str,
        outcome: &str,
        at_unix: i64,
        duration_ms: i64,
        model: Option<String>,
        planner: String,
    ) -> Result<Self, StoreError> {
        let steps: Vec<StepRecord> =
            serde_json::from_str(steps).map_err(|e| StoreError::Corrupt(format!("steps: {e}")))?;
        let outcome = Outcome::parse(outcome)
            .ok_or_else(|| StoreError::Corrupt(format!("outcome `{outcome}`")))?;
        Ok(Self {
            caller,
            intent_sha,
            complexity,
            steps,
            outcome,
            at_unix,
            duration_ms,
            model,
            planner,
        })
    }
}
