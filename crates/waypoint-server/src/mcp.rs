//! The MCP face of Waypoint: the planner's stages as tools.
//!
//! Each tool takes a [`RequestInput`] (the request in the user's words and optional
//! context) and answers with the same JSON the CLI prints with `--json`, as structured
//! content and as text. A request the engine refuses (empty, too large) is an error
//! *result* (`isError: true`) with the engine's message, so an agent can read and fix it.

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, ServiceExt as _, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use waypoint_core::Engine;

/// What every planning tool takes.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct RequestInput {
    /// The request in the user's words; several asks in one message are fine.
    pub request: String,
    /// Extra context: pasted material, values the request refers to.
    #[serde(default)]
    pub context: Option<serde_json::Value>,
}

/// The MCP server over one engine.
#[derive(Clone)]
pub struct WaypointMcp {
    engine: Arc<Engine>,
    tool_router: ToolRouter<Self>,
}

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
    pub fn new(engine: Arc<Engine>) -> Self {
        Self {
            engine,
            tool_router: Self::tool_router(),
        }
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
                .and_then(|r| json(&r)),
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
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("waypoint", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Waypoint turns what a person asks into a validated, ordered plan over a catalog of tools. Call `plan` with the user's request; `route` and `understand` explain how it was read.",
            )
    }
}

/// Serves the tools on standard input and output until the client closes them.
pub async fn serve_stdio(engine: Arc<Engine>) -> Result<(), ServeError> {
    let service = WaypointMcp::new(engine)
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
