//! The rows a store keeps and the questions it answers.

use serde::{Deserialize, Serialize};

/// What a history row records of a plan: that it was made, how a run of it ended, or
/// that a person accepted it. Only the last three say anything about whether the plan
/// is right, so only they teach (see [`crate::learned`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Planned and not (yet) run: evidence of nothing.
    Planned,
    /// A run of the plan succeeded.
    Ok,
    /// A run of the plan failed.
    Failed,
    /// A run of the plan hit a limit.
    Limit,
    /// A person accepted the plan for its request (`waypoint plans accept`).
    Accepted,
}

impl Outcome {
    /// Every outcome, in the order the CLI lists them.
    pub const ALL: [Self; 5] = [
        Self::Planned,
        Self::Ok,
        Self::Failed,
        Self::Limit,
        Self::Accepted,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Planned => "planned",
            Self::Ok => "ok",
            Self::Failed => "failed",
            Self::Limit => "limit",
            Self::Accepted => "accepted",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|o| o.as_str() == s)
    }

    /// A run went wrong: the request's learned plan, if any, is demoted.
    pub fn is_failure(self) -> bool {
        matches!(self, Self::Failed | Self::Limit)
    }

    /// Evidence that the plan is right: a successful run or a person's acceptance.
    pub fn is_success(self) -> bool {
        matches!(self, Self::Ok | Self::Accepted)
    }
}

/// One step as history keeps it: the tool and a hash of its args.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StepRecord {
    pub order: u32,
    pub tool: String,
    pub args_sha: String,
}

/// One plan's audit row. No request text, args or rationale.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HistoryRow {
    pub caller: String,
    pub intent_sha: String,
    pub complexity: String,
    pub steps: Vec<StepRecord>,
    pub outcome: Outcome,
    /// When it was written, kept in Unix seconds; the contract writes it as `at`, an
    /// RFC 3339 time, like every other time (docs/contracts.md).
    #[serde(rename = "at", with = "waypoint_protocol::time::secs")]
    #[schemars(rename = "at", schema_with = "waypoint_protocol::time::schema")]
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
    /// Only rows after this one, newest first: the next page of a listing.
    pub after: Option<Cursor>,
}

/// Where the next page of a newest-first listing starts: just after the row with this
/// time and key (a history row's id, a run's id). Callers see it only as an opaque
/// text ([`Cursor::encode`]), so its shape may change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    pub at: i64,
    pub key: String,
}

impl Cursor {
    /// `AT.KEY` in URL-safe characters.
    pub fn encode(&self) -> String {
        format!("{}.{}", self.at, self.key)
    }

    /// `None` for text [`Cursor::encode`] did not write.
    pub fn decode(text: &str) -> Option<Self> {
        let (at, key) = text.split_once('.')?;
        let ok = !key.is_empty()
            && key.len() <= 128
            && key
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        Some(Self {
            at: at.parse().ok()?,
            key: key.to_string(),
        })
        .filter(|_| ok)
    }

    /// A history row id as the key.
    pub fn id(&self) -> Option<i64> {
        self.key.parse().ok()
    }
}

/// One page of a newest-first listing and the cursor of the next, `None` on the last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub next: Option<Cursor>,
}

impl<T> Page<T> {
    /// A page of `items` read with `limit`: a full page may have more after it.
    pub fn of(items: Vec<T>, limit: Option<u32>, cursor_of: impl Fn(&T) -> Cursor) -> Self {
        let full = limit.is_some_and(|l| l > 0 && items.len() >= l as usize);
        let next = if full {
            items.last().map(cursor_of)
        } else {
            None
        };
        Self { items, next }
    }
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
