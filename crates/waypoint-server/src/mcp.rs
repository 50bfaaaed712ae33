//! The MCP face of Waypoint: the planner's stages as tools.
//!
//! Each tool takes a [`RequestInput`] (the request in the user's words and optional
//! context) and answers with the same JSON the CLI prints with `--json`, as structured
//! content and as text. A request the engine refuses (empty, too large) is an error
//! *result* (`isError: true`) with the engine's message, so an agent can read and fix it.

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, ListResourcesResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{
    ErrorData, RoleServer, ServerHandler, ServiceExt as _, tool, tool_handler, tool_router,
};
use schemars::JsonSchema;
use serde::Deserialize;
use waypoint_core::Engine;
use waypoint_run::{Limits, Recovery, Runner, Settings, Toolbox};
use waypoint_store::{Forget, HistoryFilter, HistoryStore as _, LearnRule, now_unix, project};
use waypoint_stores::Store;

/// What every planning tool takes.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct RequestInput {
    /// The request in the user's words; several asks in one message are fine.
    pub request: String,
    /// Extra context: pasted material, values the request refers to.
    #[serde(default)]
    pub context: Option<serde_json::Value>,
}

/// What `history` takes.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
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

/// What a server lets its `run` tool do; absent, the tool refuses.
#[derive(Debug, Clone)]
pub struct RunPolicy {
    /// The directory file tools are confined to and commands run in.
    pub workdir: std::path::PathBuf,
    pub limits: Limits,
}

/// The MCP server over one engine and, when history is on, one store.
#[derive(Clone)]
pub struct WaypointMcp {
    engine: Arc<Engine>,
    store: Option<Arc<Store>>,
    run_policy: Option<RunPolicy>,
    /// The namespace history belongs to (stdio: the local user).
    caller: String,
    /// The model table and its context budgets, as the resources show them.
    models: serde_json::Value,
    tool_router: ToolRouter<Self>,
}

/// The resources every server lists: what each says and how it is named.
const RESOURCES: [(&str, &str, &str); 4] = [
    (
        "waypoint://routing-guide",
        "routing-guide",
        "The catalog as route and plan see it: tools with their args, effects and what they produce; pipelines; plan documents.",
    ),
    (
        "waypoint://my-plans",
        "my-plans",
        "The caller's plans grouped by request: counts, outcomes, tool sequences and the learned one (hashes only).",
    ),
    (
        "waypoint://context-budgets",
        "context-budgets",
        "Per model pattern: the context window, the reply budget and what is left for the prompt.",
    ),
    (
        "waypoint://models",
        "models",
        "The known model patterns with their token limits and prices.",
    ),
];

const NO_STORE: &str = "history is off on this server (started with `--store none`)";

fn answer(value: Result<serde_json::Value, String>) -> CallToolResult {
    match value {
        Ok(v) => {
            let text = serde_json::to_string_pretty(&v).unwrap_or_default();
            let mut r = CallToolResult::structured(v);
            r.content = vec![ContentBlock::text(text)];
            r
        }
        Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
    }
}

fn json<T: serde::Serialize>(v: &T) -> Result<serde_json::Value, String> {
    serde_json::to_value(v).map_err(|e| e.to_string())
}

#[tool_router]
impl WaypointMcp {
    /// `models` is the model table as `[{pattern, context_tokens, max_output_tokens,
    /// usd_per_mtok_in, usd_per_mtok_out}]`.
    pub fn new(
        engine: Arc<Engine>,
        store: Option<Arc<Store>>,
        caller: String,
        models: serde_json::Value,
    ) -> Self {
        Self {
            engine,
            store,
            run_policy: None,
            caller,
            models,
            tool_router: Self::tool_router(),
        }
    }

    /// Lets the `run` tool execute plans (config: `allow_run = true` under `[serve]`).
    #[must_use]
    pub fn with_run_policy(mut self, policy: Option<RunPolicy>) -> Self {
        self.run_policy = policy;
        self
    }

    #[tool(
        description = "Plan a request and run the plan under the server's limits, journaling every call; answers the run report (status ok, failed, limit, needs_input or needs_human, each step's output). Off unless the server's config allows it.",
        annotations(destructive_hint = true, open_world_hint = true)
    )]
    async fn run(&self, Parameters(input): Parameters<RequestInput>) -> CallToolResult {
        let Some(policy) = &self.run_policy else {
            return answer(Err(
                "running tools on this server is off; set `allow_run = true` under [serve] in its waypoint.toml to allow it".into(),
            ));
        };
        let Some(store) = &self.store else {
            return answer(Err(format!("{NO_STORE}; runs are journaled in the store")));
        };
        let plan = match self.engine.plan(&input.request, input.context.as_ref()) {
            Ok(p) => p,
            Err(e) => return answer(Err(e.to_string())),
        };
        let catalog = self.engine.catalog();
        let toolbox = match Toolbox::new(
            &policy.workdir,
            catalog.servers(),
            store.clone(),
            policy.limits.max_output_bytes,
        ) {
            Ok(t) => t,
            Err(e) => return answer(Err(e.to_string())),
        };
        let recovery = Recovery {
            catalog,
            options: self.engine.options().clone(),
        };
        let runner = Runner {
            catalog,
            store: store.clone(),
            toolbox: &toolbox,
            replanner: &recovery,
            caller: self.caller.clone(),
            events: None,
        };
        let settings = Settings {
            limits: policy.limits.clone(),
            request: Some(input.request.clone()),
            context: input.context.clone(),
            ..Settings::default()
        };
        let report = runner.run(plan, settings).await;
        toolbox.close().await;
        answer(report.map_err(|e| e.to_string()).and_then(|r| json(&r)))
    }

    fn routing_guide(&self) -> serde_json::Value {
        let c = self.engine.catalog();
        serde_json::json!({
            "tools": c.tools().iter().map(|t| serde_json::json!({
                "name": t.name, "description": t.description,
                "args": t.properties().map(|(n, _)| n).collect::<Vec<_>>(),
                "required": t.required().collect::<Vec<_>>(),
                "accepts": t.accepts, "produces": t.produces, "effects": t.effects,
                "runnable": t.run.is_some(),
            })).collect::<Vec<_>>(),
            "pipelines": c.pipelines().iter().map(|p| serde_json::json!({
                "id": p.id, "description": p.description, "steps": p.steps,
                "accepts": p.accepts, "produces": p.produces,
            })).collect::<Vec<_>>(),
            "plans": c.plans().iter().map(|p| serde_json::json!({
                "id": p.uri, "intent": p.intent, "ready": p.intent_clarity.ready(),
            })).collect::<Vec<_>>(),
        })
    }

    async fn my_plans(&self) -> Result<serde_json::Value, String> {
        let Some(store) = &self.store else {
            return Err(NO_STORE.into());
        };
        let rows = store
            .history(&self.caller, &HistoryFilter::default(), now_unix())
            .await
            .map_err(|e| e.to_string())?;
        json(&project(&rows, LearnRule::default()))
    }

    fn budgets(&self) -> serde_json::Value {
        let rows = self.models.as_array().cloned().unwrap_or_default();
        serde_json::Value::Array(
            rows.iter()
                .map(|m| {
                    let ctx = m["context_tokens"].as_u64().unwrap_or(0);
                    let out = m["max_output_tokens"].as_u64().unwrap_or(0);
                    serde_json::json!({
                        "pattern": m["pattern"], "context_tokens": ctx,
                        "reply_tokens": out, "prompt_tokens": ctx.saturating_sub(out),
                    })
                })
                .collect(),
        )
    }

    #[tool(
        description = "List the caller's plan history: hashes and tool names only, never request text. With `plans: true`, grouped by request with counts, outcomes, tool sequences and the learned one.",
        annotations(read_only_hint = true)
    )]
    async fn history(&self, Parameters(input): Parameters<HistoryInput>) -> CallToolResult {
        let Some(store) = &self.store else {
            return answer(Err(NO_STORE.into()));
        };
        let filter = HistoryFilter {
            tool: input.tool,
            limit: Some(input.limit.unwrap_or(50)),
            ..HistoryFilter::default()
        };
        let rows = match store.history(&self.caller, &filter, now_unix()).await {
            Ok(r) => r,
            Err(e) => return answer(Err(e.to_string())),
        };
        // Structured content must be an object, so lists come under a key.
        if input.plans {
            answer(
                json(&project(&rows, LearnRule::default()))
                    .map(|v| serde_json::json!({ "plans": v })),
            )
        } else {
            answer(json(&rows).map(|v| serde_json::json!({ "rows": v })))
        }
    }

    #[tool(
        description = "Delete the caller's plan history: `all`, rows older than `older_than_days`, or one request's rows by `intent` hash. Answers how many rows went.",
        annotations(destructive_hint = true)
    )]
    async fn forget(&self, Parameters(input): Parameters<ForgetInput>) -> CallToolResult {
        let Some(store) = &self.store else {
            return answer(Err(NO_STORE.into()));
        };
        let what = match (input.all, input.older_than_days, input.intent) {
            (true, None, None) => Forget::All,
            (false, Some(days), None) => {
                Forget::OlderThan(now_unix() - i64::from(days) * 24 * 3600)
            }
            (false, None, Some(sha)) => Forget::Intent(sha),
            _ => {
                return answer(Err(
                    "give exactly one of `all: true`, `older_than_days` or `intent`".into(),
                ));
            }
        };
        answer(
            store
                .forget(&self.caller, &what)
                .await
                .map(|n| serde_json::json!({ "forgotten": n }))
                .map_err(|e| e.to_string()),
        )
    }

    #[tool(
        description = "Plan a request over the catalog: ordered steps with tools, args, dependencies (input_refs), parallel groups, gaps (kind `unknown`) and clarifying questions. Deterministic; the same request gives the same plan.",
        annotations(read_only_hint = true)
    )]
    fn plan(&self, Parameters(input): Parameters<RequestInput>) -> CallToolResult {
        answer(
            self.engine
                .plan(&input.request, input.context.as_ref())
                .map_err(|e| e.to_string())
                .and_then(|p| json(&p)),
        )
    }

    #[tool(
        description = "Rank the catalog's tools, pipelines and plan documents for each clause of a request, with calibrated scores; below the threshold a clause is a gap, never a guess.",
        annotations(read_only_hint = true)
    )]
    fn route(&self, Parameters(input): Parameters<RequestInput>) -> CallToolResult {
        answer(
            self.engine
                .route(&input.request, input.context.as_ref())
                .map_err(|e| e.to_string())
                .and_then(|r| json(&r))
                .map(|v| serde_json::json!({ "clauses": v })),
        )
    }

    #[tool(
        description = "Show how a request is understood: its clauses (a message with several asks is split), a goal per clause (intent, entity, artifact, scope, confidence, ambiguities) and the concrete values it contains (URLs, paths, ids, dates, schedules).",
        annotations(read_only_hint = true)
    )]
    fn understand(&self, Parameters(input): Parameters<RequestInput>) -> CallToolResult {
        answer(
            self.engine
                .understand(&input.request, input.context.as_ref())
                .map_err(|e| e.to_string())
                .and_then(|u| json(&u)),
        )
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for WaypointMcp {
    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(
            RESOURCES
                .iter()
                .map(|(uri, name, what)| {
                    Resource::new(*uri, *name)
                        .with_description(*what)
                        .with_mime_type("application/json")
                })
                .collect(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let value = match request.uri.as_str() {
            "waypoint://routing-guide" => Ok(self.routing_guide()),
            "waypoint://my-plans" => self.my_plans().await,
            "waypoint://context-budgets" => Ok(self.budgets()),
            "waypoint://models" => Ok(self.models.clone()),
            other => {
                return Err(ErrorData::resource_not_found(
                    format!(
                        "no resource `{other}`; this server has {}",
                        RESOURCES.map(|r| r.0).join(", ")
                    ),
                    None,
                ));
            }
        }
        .map_err(|e| ErrorData::internal_error(e, None))?;
        let text = serde_json::to_string_pretty(&value).unwrap_or_default();
        let contents = ResourceContents::text(text, request.uri).with_mime_type("application/json");
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
            .with_server_info(Implementation::new("waypoint", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Waypoint turns what a person asks into a validated, ordered plan over a catalog of tools. Call `plan` with the user's request; `route` and `understand` explain how it was read; `history` and `forget` manage the caller's plan history; `run` executes a plan when the server allows it.",
            )
    }
}

/// Serves the tools on standard input and output until the client closes them.
pub async fn serve_stdio(server: WaypointMcp) -> Result<(), ServeError> {
    let service = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| ServeError::Start(e.to_string()))?;
    service
        .waiting()
        .await
        .map_err(|e| ServeError::Stopped(e.to_string()))?;
    Ok(())
}

/// Why serving stopped.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("the MCP session did not start: {0}")]
    Start(String),
    #[error("the MCP server stopped: {0}")]
    Stopped(String),
}
