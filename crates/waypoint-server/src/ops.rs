//! The JSON face of the application's operations, shared by MCP and the HTTP API: the
//! inputs as they arrive on the wire, the answers as JSON, and errors told in terms a
//! remote caller can act on (fields and endpoints, never command-line flags).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use waypoint_app::contract::{self, Forgotten};
use waypoint_app::{App, AppError, ErrorKind, Routes, RunOptions, SubmitInput};
use waypoint_protocol::Plan;
pub use waypoint_protocol::RequestInput;
use waypoint_store::{Forget, HistoryFilter, now_unix};

use crate::metrics::Metrics;

/// What `history` takes.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryInput {
    /// Only plans with a step using this tool.
    #[serde(default)]
    pub tool: Option<String>,
    /// Group by request: counts, outcomes, tool sequences and the learned one.
    #[serde(default)]
    pub plans: bool,
    /// Most rows (default 50).
    #[serde(default)]
    pub limit: Option<u32>,
    /// The `next_cursor` of the page before: the rows after it.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// What `forget` removes; give exactly one.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForgetInput {
    /// All of the caller's history.
    #[serde(default)]
    pub all: bool,
    /// Rows older than this many days.
    #[serde(default)]
    pub older_than_days: Option<u32>,
    /// The rows of one request, by its intent hash (from `history`).
    #[serde(default)]
    pub intent: Option<String>,
}

/// What `approve` takes: the held steps to let run, or all of them.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApproveInput {
    /// The run, as `POST /v1/runs` answered it (MCP only; HTTP takes it in the path).
    #[serde(default)]
    pub run_id: Option<String>,
    /// Plan steps whose calls may run (`["s2"]`), as the run's questions name them.
    #[serde(default)]
    pub steps: Vec<String>,
    /// Every call of the run from here on.
    #[serde(default)]
    pub all: bool,
}

/// What `resume` takes: answers to a stopped run's questions, under the keys they give,
/// and what to do about steps whose outcome is unknown — the API's `waypoint resume`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResumeInput {
    /// The run, as `POST /v1/runs` answered it (MCP only; HTTP takes it in the path).
    #[serde(default)]
    pub run_id: Option<String>,
    /// Answers by question key (`{"s1": "main", "s1.2.1.topic": "pricing"}`).
    #[serde(default)]
    pub answers: std::collections::BTreeMap<String, String>,
    /// Steps whose outcome is unknown that did not happen: call them again.
    #[serde(default)]
    pub retry: Vec<String>,
    /// Steps whose outcome is unknown that did happen: go on without calling them.
    #[serde(default)]
    pub done: Vec<String>,
    /// Held steps whose calls may run, as `approve` takes them.
    #[serde(default)]
    pub approve: Vec<String>,
}

/// What `cancel` takes.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CancelInput {
    /// The run (MCP only; HTTP takes it in the path).
    #[serde(default)]
    pub run_id: Option<String>,
}

/// How an operation failed, as a remote caller is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpError {
    pub kind: ErrorKind,
    pub message: String,
}

impl OpError {
    pub fn message(&self) -> &str {
        &self.message
    }

    fn bad_input(message: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::BadInput,
            message: message.into(),
        }
    }
}

impl From<AppError> for OpError {
    fn from(e: AppError) -> Self {
        let message = match &e {
            AppError::NoStore { why: None } => {
                "history and runs are off on this server (started with `--store none`); start it with a store (`--store sqlite:PATH` or a postgres:// URL) to keep them".to_string()
            }
            AppError::NoStore { why: Some(why) } => {
                format!("the server's store is unavailable: {why}")
            }
            AppError::RunsOff => "running tools on this server is off; set `allow_run = true` under [serve] in its waypoint.toml to allow it".to_string(),
            AppError::NoSuchRun { run_id, .. } => format!("no run `{run_id}` of yours; GET /v1/runs lists them"),
            other => other.to_string(),
        };
        Self {
            kind: e.kind(),
            message,
        }
    }
}

pub(crate) fn json<T: Serialize>(v: &T) -> Result<Value, OpError> {
    serde_json::to_value(v).map_err(|e| OpError {
        kind: ErrorKind::Internal,
        message: e.to_string(),
    })
}

/// The server's state: the application and the counters `/metrics` shows.
pub struct Server {
    pub app: App,
    pub metrics: Metrics,
}

impl Server {
    pub fn new(app: App) -> Self {
        Self {
            app,
            metrics: Metrics::default(),
        }
    }

    /// Plans a request and records the plan in the caller's history (hashes only).
    /// The plan itself rather than a JSON value: the HTTP face writes it straight to the
    /// response body, and under load the detour through `Value` cost a tenth of the time.
    pub async fn plan(&self, caller: &str, input: &RequestInput) -> Result<Plan, OpError> {
        Ok(self
            .app
            .plan(caller, &input.request, input.context.as_ref())
            .await?)
    }

    pub fn route(&self, input: &RequestInput) -> Result<Value, OpError> {
        let clauses = self.app.route(&input.request, input.context.as_ref())?;
        json(&Routes { clauses })
    }

    pub fn understand(&self, input: &RequestInput) -> Result<Value, OpError> {
        json(
            &self
                .app
                .understand(&input.request, input.context.as_ref())?,
        )
    }

    /// The caller's history: a page of rows, or grouped by request.
    pub async fn history(&self, caller: &str, input: &HistoryInput) -> Result<Value, OpError> {
        let filter = HistoryFilter {
            tool: input.tool.clone(),
            limit: Some(input.limit.unwrap_or(50).clamp(1, 1000)),
            after: contract::cursor(input.cursor.as_deref())?,
            ..HistoryFilter::default()
        };
        json(&self.app.history(caller, &filter, input.plans).await?)
    }

    pub async fn forget(&self, caller: &str, input: &ForgetInput) -> Result<Value, OpError> {
        let what = match (input.all, input.older_than_days, &input.intent) {
            (true, None, None) => Forget::All,
            (false, Some(days), None) => {
                Forget::OlderThan(now_unix() - i64::from(days) * 24 * 3600)
            }
            (false, None, Some(sha)) => Forget::Intent(sha.clone()),
            _ => {
                return Err(OpError::bad_input(
                    "give exactly one of `all: true`, `older_than_days` or `intent`",
                ));
            }
        };
        json(&Forgotten {
            forgotten: self.app.forget(caller, &what).await?,
        })
    }

    /// Plans a request and runs it here, now (the MCP `run` tool).
    pub async fn run_now(&self, caller: &str, input: &RequestInput) -> Result<Value, OpError> {
        let report = self
            .app
            .run_request(
                caller,
                &input.request,
                input.context.clone(),
                &RunOptions::default(),
            )
            .await?;
        json(&report)
    }

    /// Queues a run for whichever instance claims it first.
    pub async fn submit(&self, caller: &str, input: SubmitInput) -> Result<Value, OpError> {
        let run_id = self.app.submit(caller, input).await?;
        self.metrics
            .runs_submitted
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(json!({ "run_id": run_id, "status": "queued" }))
    }

    /// Lets held calls of one of the caller's runs go ahead and drives the run on from
    /// its journal; answers its report (which may wait again, on a later step).
    pub async fn approve(
        &self,
        caller: &str,
        run_id: &str,
        input: &ApproveInput,
    ) -> Result<Value, OpError> {
        if input.steps.is_empty() && !input.all {
            return Err(OpError {
                kind: ErrorKind::BadInput,
                message: "name the steps to approve in `steps` (the run's questions list them) or set `all: true`".into(),
            });
        }
        let status = self.app.run_status(caller, run_id).await?;
        if status.status != "needs_approval" {
            return Err(OpError {
                kind: ErrorKind::BadInput,
                message: format!(
                    "run `{run_id}` is {}; only a run waiting for approval (needs_approval) can be approved",
                    status.status
                ),
            });
        }
        let approved = waypoint_run::Approvals {
            all: input.all,
            steps: input.steps.iter().cloned().collect(),
        };
        let options = RunOptions {
            approved,
            ..RunOptions::default()
        };
        let report = self
            .app
            .resume(
                caller,
                run_id,
                waypoint_run::Decisions::default(),
                &waypoint_app::LimitOverrides::default(),
                &options,
            )
            .await?;
        json(&report)
    }

    /// Answers a stopped run's questions and drives it on, with the checks `waypoint
    /// resume` makes: a key the run does not ask is an error that leaves it waiting.
    pub async fn resume(
        &self,
        caller: &str,
        run_id: &str,
        input: &ResumeInput,
    ) -> Result<Value, OpError> {
        if input.answers.is_empty()
            && input.retry.is_empty()
            && input.done.is_empty()
            && input.approve.is_empty()
        {
            return Err(OpError {
                kind: ErrorKind::BadInput,
                message: "give `answers`, `retry`, `done` or `approve`: the run's questions say which, under which keys".into(),
            });
        }
        if let Some(both) = input.retry.iter().find(|s| input.done.contains(s)) {
            return Err(OpError {
                kind: ErrorKind::BadInput,
                message: format!(
                    "`{both}` is in both `retry` and `done`; it either happened or it did not"
                ),
            });
        }
        let decisions = waypoint_run::Decisions {
            answers: input.answers.clone().into_iter().collect(),
            retry: input.retry.iter().cloned().collect(),
            done: input.done.iter().cloned().collect(),
            limits: None,
        };
        let options = RunOptions {
            approved: waypoint_run::Approvals {
                all: false,
                steps: input.approve.iter().cloned().collect(),
            },
            ..RunOptions::default()
        };
        let report = self
            .app
            .resume(
                caller,
                run_id,
                decisions,
                &waypoint_app::LimitOverrides::default(),
                &options,
            )
            .await?;
        json(&report)
    }

    /// Cancels one of the caller's queued or stopped runs.
    pub async fn cancel(&self, caller: &str, run_id: &str) -> Result<Value, OpError> {
        json(&self.app.cancel(caller, run_id).await?)
    }

    /// A page of the caller's runs, newest first, after `cursor`.
    pub async fn runs(
        &self,
        caller: &str,
        cursor: Option<&str>,
        limit: u32,
    ) -> Result<Value, OpError> {
        let after = contract::cursor(cursor)?;
        json(&self.app.runs(caller, after.as_ref(), limit).await?)
    }

    /// One of the caller's runs.
    pub async fn run_status(&self, caller: &str, run_id: &str) -> Result<Value, OpError> {
        json(&self.app.run_status(caller, run_id).await?)
    }

    /// The catalog as route and plan see it.
    pub fn routing_guide(&self) -> Value {
        let engine = self.app.engine();
        let c = engine.catalog();
        json!({
            "tools": c.tools().iter().map(|t| json!({
                "name": t.name, "description": t.description,
                "args": t.properties().map(|(n, _)| n).collect::<Vec<_>>(),
                "required": t.required().collect::<Vec<_>>(),
                "accepts": t.accepts, "produces": t.produces, "effects": t.effects,
                "runnable": t.run.is_some(),
            })).collect::<Vec<_>>(),
            "pipelines": c.pipelines().iter().map(|p| json!({
                "id": p.id, "description": p.description, "steps": p.steps,
                "accepts": p.accepts, "produces": p.produces,
            })).collect::<Vec<_>>(),
            "plans": c.plans().iter().map(|p| json!({
                "id": p.uri, "intent": p.intent, "ready": p.intent_clarity.ready(),
            })).collect::<Vec<_>>(),
        })
    }

    pub async fn my_plans(&self, caller: &str) -> Result<Value, OpError> {
        json(&self.app.my_plans(caller).await?)
    }

    /// Per model: the context window, the reply budget and what is left for the prompt.
    pub fn budgets(&self) -> Value {
        let rows = self.app.models().as_array().cloned().unwrap_or_default();
        Value::Array(
            rows.iter()
                .map(|m| {
                    let ctx = m["context_tokens"].as_u64().unwrap_or(0);
                    let out = m["max_output_tokens"].as_u64().unwrap_or(0);
                    json!({
                        "pattern": m["pattern"], "context_tokens": ctx,
                        "reply_tokens": out, "prompt_tokens": ctx.saturating_sub(out),
                    })
                })
                .collect(),
        )
    }
}
