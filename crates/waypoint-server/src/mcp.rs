//! The MCP face of Waypoint: the planner's stages as tools, the caller's history and
//! the catalog as resources.
//!
//! Each tool answers with the same JSON the CLI prints with `--json`, as structured
//! content, and as compact text too while it is small (a summary past that). A call the server refuses (empty request, history off, running
//! not allowed) is an error *result* (`isError: true`) with the message, so an agent can
//! read and fix it. Over HTTP the caller comes from the bearer token (the `auth` layer
//! puts it in the request's extensions); over stdio it is the local user.

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

use crate::auth::Caller;
use crate::ops::{
    ApproveInput, CancelInput, ForgetInput, HistoryInput, OpError, RequestInput, ResumeInput,
    Server,
};

/// The MCP server over the shared [`Server`].
#[derive(Clone)]
pub struct WaypointMcp {
    app: Arc<Server>,
    /// Who calls when the transport does not say (stdio: the local user).
    caller: String,
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

/// Largest answer also sent whole as text, for clients that read only `content`
/// (the MCP spec asks tools with structured content to do so for compatibility).
/// Past it the text is a summary: a plan echoes its request and context in its steps,
/// and sending a megabyte request's plan twice, pretty-printed, made a 134 MB reply.
const MAX_TEXT_JSON_BYTES: usize = 64 * 1024;
/// Longest summary, in characters.
const MAX_SUMMARY_CHARS: usize = 512;

/// A short account of an answer too big to repeat as text.
fn summary(v: &serde_json::Value, bytes: usize) -> String {
    let head = if let Some(steps) = v.get("steps").and_then(serde_json::Value::as_array) {
        let tools: Vec<&str> = steps
            .iter()
            .map(|s| {
                s.get("tool")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or("?")
            })
            .collect();
        format!("plan with {} steps: {}", steps.len(), tools.join(" → "))
    } else {
        let keys: Vec<&str> = v
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default();
        format!("answer with {}", keys.join(", "))
    };
    let mut text: String = head.chars().take(MAX_SUMMARY_CHARS).collect();
    if text.len() < head.len() {
        text.push('…');
    }
    format!("{text} ({bytes} bytes of JSON in structuredContent)")
}

fn answer(value: Result<serde_json::Value, OpError>) -> CallToolResult {
    match value {
        Ok(v) => {
            let json = v.to_string();
            let text = if json.len() <= MAX_TEXT_JSON_BYTES {
                json
            } else {
                summary(&v, json.len())
            };
            let mut r = CallToolResult::structured(serde_json::Value::Null);
            r.structured_content = Some(v);
            r.content = vec![ContentBlock::text(text)];
            r
        }
        Err(e) => CallToolResult::error(vec![ContentBlock::text(e.message())]),
    }
}

#[tool_router]
impl WaypointMcp {
    pub fn new(app: Arc<Server>, caller: String) -> Self {
        Self {
            app,
            caller,
            tool_router: Self::tool_router(),
        }
    }

    /// The caller the HTTP auth layer found, else the server's own.
    fn caller(&self, ctx: &RequestContext<RoleServer>) -> String {
        ctx.extensions
            .get::<axum::http::request::Parts>()
            .and_then(|p| p.extensions.get::<Caller>())
            .map_or_else(|| self.caller.clone(), |c| c.0.clone())
    }

    #[tool(
        description = "Plan a request and run the plan under the server's limits, journaling every call; answers the run report (status ok, failed, limit, needs_input, needs_approval or needs_human, each step's output). Calls that are not reads wait for approval (`approve_run`) unless the server's `[run] approve` says otherwise. Off unless the server's config allows it.",
        annotations(destructive_hint = true, open_world_hint = true)
    )]
    async fn run(
        &self,
        ctx: RequestContext<RoleServer>,
        Parameters(input): Parameters<RequestInput>,
    ) -> CallToolResult {
        answer(self.app.run_now(&self.caller(&ctx), &input).await)
    }

    #[tool(
        description = "Approve calls a run holds (status needs_approval: a step that writes, deletes or reaches outside, listed in the run's questions with its tool, effects and args) and drive the run on; answers its report, which may wait again on a later step. Give `run_id` and `steps` (e.g. [\"s2\"]) or `all: true`.",
        annotations(destructive_hint = true, open_world_hint = true)
    )]
    async fn approve_run(
        &self,
        ctx: RequestContext<RoleServer>,
        Parameters(input): Parameters<ApproveInput>,
    ) -> CallToolResult {
        let Some(run_id) = input.run_id.clone() else {
            return answer(Err(OpError {
                kind: waypoint_app::ErrorKind::BadInput,
                message: "give `run_id`: the run to approve, as `run` answered it".into(),
            }));
        };
        answer(self.app.approve(&self.caller(&ctx), &run_id, &input).await)
    }

    #[tool(
        description = "Answer a stopped run's questions and drive it on (status needs_input or needs_approval): `answers` by the key each question gives (e.g. {\"s1\": \"main\"}), `retry`/`done` for steps whose outcome is unknown, `approve` for held calls. A key the run does not ask is an error and the run waits as it was. Answers the run's report.",
        annotations(destructive_hint = true, open_world_hint = true)
    )]
    async fn resume_run(
        &self,
        ctx: RequestContext<RoleServer>,
        Parameters(input): Parameters<ResumeInput>,
    ) -> CallToolResult {
        let Some(run_id) = input.run_id.clone() else {
            return answer(Err(OpError {
                kind: waypoint_app::ErrorKind::BadInput,
                message: "give `run_id`: the run to resume, as `run` answered it".into(),
            }));
        };
        answer(self.app.resume(&self.caller(&ctx), &run_id, &input).await)
    }

    #[tool(
        description = "Cancel one of the caller's queued or stopped runs: it is never claimed or resumed. A running or ended run is refused.",
        annotations(destructive_hint = false, idempotent_hint = true)
    )]
    async fn cancel_run(
        &self,
        ctx: RequestContext<RoleServer>,
        Parameters(input): Parameters<CancelInput>,
    ) -> CallToolResult {
        let Some(run_id) = input.run_id.clone() else {
            return answer(Err(OpError {
                kind: waypoint_app::ErrorKind::BadInput,
                message: "give `run_id`: the run to cancel".into(),
            }));
        };
        answer(self.app.cancel(&self.caller(&ctx), &run_id).await)
    }

    #[tool(
        description = "List the caller's plan history: hashes and tool names only, never request text. With `plans: true`, grouped by request with counts, outcomes, tool sequences and the learned one.",
        annotations(read_only_hint = true)
    )]
    async fn history(
        &self,
        ctx: RequestContext<RoleServer>,
        Parameters(input): Parameters<HistoryInput>,
    ) -> CallToolResult {
        answer(self.app.history(&self.caller(&ctx), &input).await)
    }

    #[tool(
        description = "Delete the caller's plan history: `all`, rows older than `older_than_days`, or one request's rows by `intent` hash. Answers how many rows went.",
        annotations(destructive_hint = true)
    )]
    async fn forget(
        &self,
        ctx: RequestContext<RoleServer>,
        Parameters(input): Parameters<ForgetInput>,
    ) -> CallToolResult {
        answer(self.app.forget(&self.caller(&ctx), &input).await)
    }

    #[tool(
        description = "Plan a request over the catalog: ordered steps with tools, args, dependencies (input_refs), parallel groups, gaps (kind `unknown`) and clarifying questions. Deterministic; the same request gives the same plan.",
        annotations(read_only_hint = true)
    )]
    async fn plan(
        &self,
        ctx: RequestContext<RoleServer>,
        Parameters(input): Parameters<RequestInput>,
    ) -> CallToolResult {
        answer(
            self.app
                .plan(&self.caller(&ctx), &input)
                .await
                .and_then(|p| crate::ops::json(&p)),
        )
    }

    #[tool(
        description = "Rank the catalog's tools, pipelines and plan documents for each clause of a request, with calibrated scores; below the threshold a clause is a gap, never a guess.",
        annotations(read_only_hint = true)
    )]
    fn route(&self, Parameters(input): Parameters<RequestInput>) -> CallToolResult {
        answer(self.app.route(&input))
    }

    #[tool(
        description = "Show how a request is understood: its clauses (a message with several asks is split), a goal per clause (intent, entity, artifact, scope, confidence, ambiguities) and the concrete values it contains (URLs, paths, ids, dates, schedules).",
        annotations(read_only_hint = true)
    )]
    fn understand(&self, Parameters(input): Parameters<RequestInput>) -> CallToolResult {
        answer(self.app.understand(&input))
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
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let value = match request.uri.as_str() {
            "waypoint://routing-guide" => Ok(self.app.routing_guide()),
            "waypoint://my-plans" => self.app.my_plans(&self.caller(&context)).await,
            "waypoint://context-budgets" => Ok(self.app.budgets()),
            "waypoint://models" => Ok(self.app.app.models()),
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
        .map_err(|e| ErrorData::internal_error(e.message().to_string(), None))?;
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
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: std::net::SocketAddr,
        source: std::io::Error,
    },
    #[error(transparent)]
    Config(#[from] waypoint_app::config::serve::ServeConfigError),
    #[error("the HTTP server stopped: {0}")]
    Http(std::io::Error),
}
