//! `run: {mcp: {server, tool}}`: tools on MCP servers declared under `servers:`, called
//! through the official Rust SDK (rmcp) over stdio (a child process) or streamable HTTP.
//!
//! A server is started on first use and shared by every step of the run; `close` shuts
//! it down. The client advertises no roots, so a filesystem server keeps the
//! directories it was started with. [`list_tools`] is what `catalog import --mcp` reads.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt as _};
use serde_json::{Value, json};
use tokio::sync::Mutex;
use waypoint_catalog::Server;

use super::{Call, Output, ToolError};
use crate::policy::Destinations;

/// How long starting a server and its handshake may take.
const CONNECT_TIMEOUT: Duration = Duration::from_mins(1);

type Client = RunningService<RoleClient, ()>;

/// The MCP servers of a catalog, connected on first use.
pub struct McpPool {
    servers: HashMap<String, Server>,
    workdir: PathBuf,
    destinations: Destinations,
    live: Mutex<HashMap<String, Arc<Client>>>,
}

/// A tool as an MCP server lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteTool {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub open_world: Option<bool>,
}

impl McpPool {
    pub fn new(servers: &[Server], workdir: &Path) -> Self {
        Self {
            servers: servers
                .iter()
                .map(|s| (s.name.clone(), s.clone()))
                .collect(),
            workdir: workdir.to_path_buf(),
            destinations: Destinations::default(),
            live: Mutex::new(HashMap::new()),
        }
    }

    /// Where servers reached over HTTP may be (`[run] allow_hosts`); by default, as for
    /// every outbound call, no loopback, private or metadata address.
    pub fn set_destinations(&mut self, destinations: Destinations) {
        self.destinations = destinations;
    }

    async fn client(&self, name: &str) -> Result<Arc<Client>, ToolError> {
        let mut live = self.live.lock().await;
        if let Some(c) = live.get(name) {
            return Ok(c.clone());
        }
        let server = self.servers.get(name).ok_or_else(|| {
            ToolError::Unconfigured(format!(
                "no MCP server `{name}` under `servers:` in the catalog"
            ))
        })?;
        let client = tokio::time::timeout(
            CONNECT_TIMEOUT,
            connect(server, &self.workdir, &self.destinations),
        )
        .await
        .map_err(|_| {
            ToolError::Failed(format!(
                "MCP server `{name}` did not finish its handshake within {CONNECT_TIMEOUT:?}"
            ))
        })??;
        let client = Arc::new(client);
        live.insert(name.to_string(), client.clone());
        Ok(client)
    }

    /// Calls `tool` on `server`; a result flagged `isError` is a failed call.
    pub async fn call(
        &self,
        server: &str,
        tool: &str,
        call: &Call<'_>,
        timeout: Duration,
    ) -> Result<Output, ToolError> {
        let client = self.client(server).await?;
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(call.args.clone());
        let result = tokio::time::timeout(timeout, client.call_tool(params))
            .await
            .map_err(|_| {
                ToolError::Failed(format!("`{server}/{tool}` ran longer than {timeout:?}"))
            })?
            .map_err(|e| ToolError::Failed(format!("`{server}/{tool}`: {e}")))?;
        let (text, value) = result_value(&result);
        if result.is_error == Some(true) {
            return Err(ToolError::Failed(format!("`{server}/{tool}`: {text}")));
        }
        Ok(Output::of(value))
    }

    /// Every tool a server lists.
    pub async fn list_tools(&self, server: &str) -> Result<Vec<RemoteTool>, ToolError> {
        let client = self.client(server).await?;
        let tools = client
            .list_all_tools()
            .await
            .map_err(|e| ToolError::Failed(format!("`{server}` tools/list: {e}")))?;
        Ok(tools
            .into_iter()
            .map(|t| RemoteTool {
                name: t.name.to_string(),
                description: t.description.map(|d| d.to_string()).unwrap_or_default(),
                input_schema: Value::Object((*t.input_schema).clone()),
                read_only: t.annotations.as_ref().and_then(|a| a.read_only_hint),
                destructive: t.annotations.as_ref().and_then(|a| a.destructive_hint),
                open_world: t.annotations.as_ref().and_then(|a| a.open_world_hint),
            })
            .collect())
    }

    /// Shuts every started server down.
    pub async fn close(&self) {
        let live: Vec<Arc<Client>> = self.live.lock().await.drain().map(|(_, c)| c).collect();
        for client in live {
            if let Ok(client) = Arc::try_unwrap(client) {
                let _ = tokio::time::timeout(Duration::from_secs(5), client.cancel()).await;
            }
        }
    }
}

async fn connect(
    server: &Server,
    workdir: &Path,
    destinations: &Destinations,
) -> Result<Client, ToolError> {
    let name = &server.name;
    let failed = |e: &dyn std::fmt::Display| ToolError::Failed(format!("MCP server `{name}`: {e}"));
    if let Some(url) = &server.url {
        // The server's host is judged once and every request of the session goes to
        // the addresses judged.
        let parsed =
            reqwest::Url::parse(url).map_err(|e| failed(&format!("bad URL `{url}`: {e}")))?;
        let addrs = destinations.resolve(&parsed).await?;
        let client = Destinations::pinned_client(&parsed, &addrs).map_err(|e| failed(&e))?;
        let transport = StreamableHttpClientTransport::with_client(
            client,
            StreamableHttpClientTransportConfig::with_uri(url.as_str()),
        );
        return ().serve(transport).await.map_err(|e| failed(&e));
    }
    let (program, args) = server
        .command
        .split_first()
        .ok_or_else(|| ToolError::Unconfigured(format!("MCP server `{name}` has no command")))?;
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args).envs(&server.env).current_dir(workdir);
    let (transport, _stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| failed(&format!("cannot start `{program}`: {e}")))?;
    ().serve(transport).await.map_err(|e| failed(&e))
}

/// The text of a result's content blocks, and the value a step outputs: the structured
/// content when there is one, else the text (parsed when it is JSON).
fn result_value(result: &CallToolResult) -> (String, Value) {
    let text = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
        .collect::<Vec<_>>()
        .join("\n");
    let value = match &result.structured_content {
        Some(v) if !v.is_null() => json!({ "text": text, "structured": v }),
        _ => match serde_json::from_str::<Value>(&text) {
            Ok(v @ (Value::Object(_) | Value::Array(_))) => json!({ "text": text, "json": v }),
            _ => json!({ "text": text }),
        },
    };
    (text, value)
}

/// A catalog file (docs/contracts.md, Catalog YAML) with one tool per remote tool, named `SERVER.TOOL`.
///
/// Effects follow the server's annotations, cautiously: read-only → `read`,
/// destructive → `destructive`, open-world → `external`, no hint → `write`, so an
/// unannotated tool is never retried blindly after a crash. Strings are written as JSON,
/// which YAML reads as double-quoted scalars.
pub fn catalog_yaml(server: &str, tools: &[RemoteTool]) -> String {
    let q = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
    let mut out = format!(
        "# Tools of the MCP server `{server}`, from its tools/list.\n# Keep the server's entry under `servers:` in a catalog loaded beside this file.\ntools:\n"
    );
    for t in tools {
        let effects = match (t.read_only, t.destructive, t.open_world) {
            (Some(true), _, _) => "read",
            (_, Some(true), _) => "destructive",
            (_, _, Some(true)) => "external",
            _ => "write",
        };
        let name = format!("{server}.{}", t.name)
            .to_ascii_lowercase()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                    c
                } else {
                    '_'
                }
            })
            .collect::<String>();
        let description = t.description.lines().next().unwrap_or("").trim();
        let description = if description.is_empty() {
            format!("{} on {server}", t.name)
        } else {
            description.to_string()
        };
        let keywords: Vec<String> = t
            .name
            .split(['_', '-', '.'])
            .filter(|w| !w.is_empty())
            .map(str::to_ascii_lowercase)
            .collect();
        out.push_str(&format!(
            "  - name: {}\n    description: {}\n    keywords: {}\n    input_schema: {}\n    effects: {effects}\n    run: {{mcp: {{server: {}, tool: {}}}}}\n",
            q(&name),
            q(&description),
            serde_json::to_string(&keywords).unwrap_or_else(|_| "[]".into()),
            serde_json::to_string(&t.input_schema).unwrap_or_else(|_| "{}".into()),
            q(server),
            q(&t.name),
        ));
    }
    out
}
