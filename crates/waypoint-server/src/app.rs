//! What the server does, whichever face (MCP or the JSON API) a call came in by.
//!
//! Each operation takes the caller it acts for and answers JSON or an [`OpError`] that
//! says what kind of failure it is, so MCP can make it an error result and HTTP a
//! status code, with the same message.

use std::sync::Arc;
use std::time::Instant;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use waypoint_core::Engine;
use waypoint_protocol::{Plan, RunReport};
use waypoint_run::{Limits, Recovery, Runner, Settings, Toolbox};
use waypoint_store::{
    Forget, HistoryFilter, HistoryStore as _, Outcome, RunStore as _, now_unix, project,
};
use waypoint_stores::Store;

use crate::live::LiveEngine;
use crate::metrics::Metrics;
use crate::planner::Planner;

/// What every planning call takes.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestInput {
    /// The request in the user's words; several asks in one message are fine.
    pub request: String,
    /// Extra context: pasted material, values the request refers to.
    #[serde(default)]
    pub context: Option<Value>,
}

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

/// What `POST /v1/runs` takes: a request to plan, or a plan already made.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SubmitInput {
    /// The request to plan and run.
    #[serde(default)]
    pub request: Option<String>,
    /// A plan (as `/v1/plan` answers it) to run as it is.
    #[serde(default)]
    pub plan: Option<Plan>,
    #[serde(default)]
    pub context: Option<Value>,
}

/// A submitted run as `/v1/runs` lists it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RunSummary {
    pub run_id: String,
    /// `queued`, `running`, `ok`, `failed`, `limit`, `needs_input`, `needs_human`.
    pub status: String,
    /// The instance that claimed it, once one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub claimed_by: Option<String>,
    /// Unix milliseconds.
    pub created_at: i64,
    pub updated_at: i64,
    /// The run report, once the run has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<RunReport>,
}

/// What a server lets runs do; absent, runs are refused.
#[derive(Debug, Clone)]
pub struct RunPolicy {
    /// The directory file tools are confined to and commands run in.
    pub workdir: std::path::PathBuf,
    pub limits: Limits,
}

/// How an operation failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpError {
    /// The input is wrong; the message says how to fix it.
    BadInput(String),
    /// The server's config does not allow it.
    Forbidden(String),
    NotFound(String),
    /// The store or another part the server needs is not there.
    Unavailable(String),
    Internal(String),
}

impl OpError {
    pub fn message(&self) -> &str {
        match self {
            Self::BadInput(m)
            | Self::Forbidden(m)
            | Self::NotFound(m)
            | Self::Unavailable(m)
            | Self::Internal(m) => m,
        }
    }
}

const NO_STORE: &str = "history is off on this server (started with `--store none`)";

fn json<T: Serialize>(v: &T) -> Result<Value, OpError> {
    serde_json::to_value(v).map_err(|e| OpError::Internal(e.to_string()))
}

/// The server's parts, shared by every connection and worker.
pub struct App {
    pub engine: Arc<LiveEngine>,
    /// How requests become plans: learned, deterministic, the model.
    pub planner: Planner,
    pub store: Option<Arc<Store>>,
    pub run_policy: Option<RunPolicy>,
    /// The model table, as `[{pattern, context_tokens, max_output_tokens, …}]`.
    pub models: Value,
    pub metrics: Metrics,
}

impl App {
    fn store(&self) -> Result<&Arc<Store>, OpError> {
        self.store
            .as_ref()
            .ok_or_else(|| OpError::Unavailable(NO_STORE.into()))
    }

    /// Plans a request and records the plan in the caller's history (hashes only).
    pub async fn plan(&self, caller: &str, input: &RequestInput) -> Result<Value, OpError> {
        let plan = self
            .plan_recorded(
                &self.engine.get(),
                caller,
                &input.request,
                input.context.as_ref(),
            )
            .await?;
        json(&plan)
    }

    /// Plans a request the way `waypoint plan` does (learned, deterministic, the model)
    /// and leaves the audit row; every face that plans comes through here.
    async fn plan_recorded(
        &self,
        engine: &Arc<Engine>,
        caller: &str,
        request: &str,
        context: Option<&Value>,
    ) -> Result<Plan, OpError> {
        let started = Instant::now();
        let store = self.store.as_deref();
        let plan = self
            .planner
            .plan(engine, store, caller, request, context)
            .await
            .map_err(|e| OpError::BadInput(e.to_string()))?;
        if let Some(store) = store {
            let ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
            let row = waypoint_stores::history_row(&plan, request, caller, Outcome::Ok, ms);
            if let Err(e) = store.record(&row).await {
                eprintln!("waypoint: cannot record plan history: {e}");
            }
        }
        Ok(plan)
    }

    pub fn route(&self, input: &RequestInput) -> Result<Value, OpError> {
        let r = self
            .engine
            .get()
            .route(&input.request, input.context.as_ref())
            .map_err(|e| OpError::BadInput(e.to_string()))?;
        Ok(json!({ "clauses": json(&r)? }))
    }

    pub fn understand(&self, input: &RequestInput) -> Result<Value, OpError> {
        let u = self
            .engine
            .get()
            .understand(&input.request, input.context.as_ref())
            .map_err(|e| OpError::BadInput(e.to_string()))?;
        json(&u)
    }

    /// The caller's history; structured content must be an object, so lists come
    /// under a key (`rows` or `plans`).
    pub async fn history(&self, caller: &str, input: &HistoryInput) -> Result<Value, OpError> {
        let filter = HistoryFilter {
            tool: input.tool.clone(),
            limit: Some(input.limit.unwrap_or(50)),
            ..HistoryFilter::default()
        };
        let rows = self
            .store()?
            .history(caller, &filter, now_unix())
            .await
            .map_err(|e| OpError::Unavailable(e.to_string()))?;
        if input.plans {
            Ok(json!({ "plans": json(&project(&rows, self.planner.learn_rule()))? }))
        } else {
            Ok(json!({ "rows": json(&rows)? }))
        }
    }

    pub async fn forget(&self, caller: &str, input: &ForgetInput) -> Result<Value, OpError> {
        let what = match (input.all, input.older_than_days, &input.intent) {
            (true, None, None) => Forget::All,
            (false, Some(days), None) => {
                Forget::OlderThan(now_unix() - i64::from(days) * 24 * 3600)
            }
            (false, None, Some(sha)) => Forget::Intent(sha.clone()),
            _ => {
                return Err(OpError::BadInput(
                    "give exactly one of `all: true`, `older_than_days` or `intent`".into(),
                ));
            }
        };
        let n = self
            .store()?
            .forget(caller, &what)
            .await
            .map_err(|e| OpError::Unavailable(e.to_string()))?;
        Ok(json!({ "forgotten": n }))
    }

    fn policy(&self) -> Result<&RunPolicy, OpError> {
        self.run_policy.as_ref().ok_or_else(|| {
            OpError::Forbidden(
                "running tools on this server is off; set `allow_run = true` under [serve] in its waypoint.toml to allow it".into(),
            )
        })
    }

    /// Plans a request and runs it here, now (the MCP `run` tool).
    pub async fn run_now(&self, caller: &str, input: &RequestInput) -> Result<Value, OpError> {
        // Refused before planning, so a refused run leaves no history row.
        let policy = self.policy()?;
        self.store()?;
        let engine = self.engine.get();
        let plan = self
            .plan_recorded(&engine, caller, &input.request, input.context.as_ref())
            .await?;
        let settings = Settings {
            limits: policy.limits.clone(),
            request: Some(input.request.clone()),
            context: input.context.clone(),
            ..Settings::default()
        };
        let report = self
            .with_runner(&engine, caller, async |runner| {
                runner.run(plan, settings).await
            })
            .await?;
        json(&report)
    }

    /// Queues a run for whichever instance claims it first.
    pub async fn submit(&self, caller: &str, input: SubmitInput) -> Result<Value, OpError> {
        let policy = self.policy()?;
        self.store()?;
        let engine = self.engine.get();
        let plan = match (input.plan, &input.request) {
            (Some(plan), None) => plan,
            (None, Some(request)) => {
                self.plan_recorded(&engine, caller, request, input.context.as_ref())
                    .await?
            }
            _ => {
                return Err(OpError::BadInput(
                    "give exactly one of `request` (to plan) or `plan` (to run as it is)".into(),
                ));
            }
        };
        let settings = Settings {
            limits: policy.limits.clone(),
            request: input.request,
            context: input.context,
            ..Settings::default()
        };
        let run_id = self
            .with_runner(&engine, caller, async |runner| {
                runner.submit(plan, settings).await
            })
            .await?;
        self.metrics
            .runs_submitted
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(json!({ "run_id": run_id, "status": "queued" }))
    }

    /// The caller's runs, newest first.
    pub async fn runs(&self, caller: &str, limit: u32) -> Result<Value, OpError> {
        let rows = self
            .store()?
            .runs(caller, limit)
            .await
            .map_err(|e| OpError::Unavailable(e.to_string()))?;
        let runs: Vec<RunSummary> = rows.into_iter().map(|r| summary(r, None)).collect();
        Ok(json!({ "runs": json(&runs)? }))
    }

    /// One of the caller's runs; another caller's is "not found", never "forbidden",
    /// so run ids do not leak across callers.
    pub async fn run_status(&self, caller: &str, run_id: &str) -> Result<Value, OpError> {
        let store = self.store()?;
        let unavailable = |e: waypoint_store::StoreError| OpError::Unavailable(e.to_string());
        let row = store
            .run(caller, run_id)
            .await
            .map_err(unavailable)?
            .ok_or_else(|| OpError::NotFound(format!("no run `{run_id}` of yours")))?;
        let claimed = store.claimed_by(run_id).await.map_err(unavailable)?;
        json(&summary(row, claimed))
    }

    /// Deletes history rows past their time to live every `every`, for as long as the
    /// runtime runs. Reads already hide such rows; this keeps a long-running server's
    /// store from growing without bound, as each `waypoint plan` does for the CLI.
    pub fn spawn_purge(self: &Arc<Self>, every: std::time::Duration) {
        let Some(store) = self.store.clone() else {
            return;
        };
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            loop {
                tick.tick().await;
                if let Err(e) = store.purge_expired(now_unix()).await {
                    eprintln!("waypoint: cannot purge expired history: {e}");
                }
            }
        });
    }

    /// The catalog as route and plan see it.
    pub fn routing_guide(&self) -> Value {
        let engine = self.engine.get();
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
        let rows = self
            .store()?
            .history(caller, &HistoryFilter::default(), now_unix())
            .await
            .map_err(|e| OpError::Unavailable(e.to_string()))?;
        json(&project(&rows, self.planner.learn_rule()))
    }

    /// Per model: the context window, the reply budget and what is left for the prompt.
    pub fn budgets(&self) -> Value {
        let rows = self.models.as_array().cloned().unwrap_or_default();
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

fn summary(r: waypoint_store::RunRow, claimed_by: Option<String>) -> RunSummary {
    RunSummary {
        report: serde_json::from_str(&r.report).ok(),
        run_id: r.run_id,
        status: r.status,
        claimed_by,
        created_at: r.created_at,
        updated_at: r.updated_at,
    }
}

impl App {
    /// Builds a runner for `caller` over a snapshot of the engine, hands it to `work`,
    /// and closes the tool connections after. Model-backed steps call the server's model.
    pub(crate) async fn with_runner<T>(
        &self,
        engine: &Engine,
        caller: &str,
        work: impl AsyncFnOnce(&Runner<'_, Store>) -> Result<T, waypoint_run::RunError>,
    ) -> Result<T, OpError> {
        let (store, policy) = (self.store()?, self.policy()?);
        let catalog = engine.catalog();
        let toolbox = Toolbox::new(
            &policy.workdir,
            catalog.servers(),
            store.clone(),
            policy.limits.max_output_bytes,
        )
        .map_err(|e| OpError::Internal(e.to_string()))?
        .with_model(self.planner.model());
        let recovery = Recovery {
            catalog,
            options: engine.options().clone(),
        };
        let runner = Runner {
            catalog,
            store: store.clone(),
            toolbox: &toolbox,
            replanner: &recovery,
            caller: caller.to_string(),
            events: None,
        };
        let out = work(&runner).await;
        toolbox.close().await;
        out.map_err(|e| match e {
            waypoint_run::RunError::InvalidPlan(_) | waypoint_run::RunError::Limits(_) => {
                OpError::BadInput(e.to_string())
            }
            other => OpError::Internal(other.to_string()),
        })
    }
}
