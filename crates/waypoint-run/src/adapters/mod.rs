//! Tool adapters: how a catalog tool's `run:` field becomes a call.
//!
//! Every adapter takes concrete, schema-checked args and returns JSON. None of them
//! interprets a shell, reaches outside the working directory on its own, or keeps more
//! than `max_output_bytes` of output; each call runs under the tool timeout set by the
//! executor.

mod builtin;
mod command;
mod group;
mod http;
mod llm;
pub mod mcp;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use waypoint_catalog::{RunSpec, Server, Tool};
use waypoint_llm::{Client, Endpoint};
use waypoint_store::MemoryStore;

pub use mcp::McpPool;

use crate::policy::{DestinationError, Destinations};

/// One call of one tool.
#[derive(Debug)]
pub struct Call<'a> {
    pub tool: &'a Tool,
    pub step_id: &'a str,
    /// Concrete args, already checked against the tool's input schema.
    pub args: Map<String, Value>,
    /// The outputs of the steps this one names in `input_refs`: all of the earlier
    /// work a model-backed step may see (the narrowed context).
    pub inputs: Vec<(String, Value)>,
    /// Stable across retries of the same call; sent where the transport can carry it.
    pub idempotency_key: String,
    pub caller: &'a str,
}

/// What a call returned and what it cost beyond the catalog price.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Output {
    pub value: Value,
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    /// What a model call cost, when its price is known.
    pub model_usd: f64,
}

impl Output {
    pub fn of(value: Value) -> Self {
        Self {
            value,
            ..Self::default()
        }
    }
}

/// Why a call did not produce an output.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ToolError {
    #[error("`{0}` has no `run:` in the catalog, so it can be planned but not run")]
    NotRunnable(String),
    #[error("{0}")]
    Failed(String),
    #[error("refused: {0}")]
    Denied(String),
    #[error("output is larger than {limit} bytes")]
    TooLarge { limit: usize },
    /// The call needs a person's answer first.
    #[error("needs an answer: {0}")]
    NeedsInput(String),
    #[error("not configured: {0}")]
    Unconfigured(String),
    /// An outbound call's host is outside the destination policy.
    #[error("refused: {0}")]
    Destination(#[from] DestinationError),
}

/// How `ask_user` gets an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asking {
    /// Prompt on the terminal (stdin and stderr are a TTY).
    Terminal,
    /// Nobody to ask: the run stops with `needs_input`.
    Nobody,
}

/// The model `llm_subtask` steps call.
#[derive(Clone)]
pub struct Model {
    pub client: Arc<Client>,
    pub endpoint: Endpoint,
}

/// Everything adapters need, built once per run.
pub struct Toolbox<M> {
    workdir: PathBuf,
    destinations: Destinations,
    mcp: McpPool,
    model: Option<Model>,
    memory: Arc<M>,
    asking: Asking,
    max_output_bytes: usize,
}

impl<M: MemoryStore + 'static> Toolbox<M> {
    /// `workdir` confines file builtins and is every command's working directory.
    pub fn new(
        workdir: &Path,
        servers: &[Server],
        memory: Arc<M>,
        max_output_bytes: usize,
    ) -> Result<Self, ToolError> {
        let workdir = workdir.canonicalize().map_err(|e| {
            ToolError::Unconfigured(format!("working directory {}: {e}", workdir.display()))
        })?;
        Ok(Self {
            mcp: McpPool::new(servers, &workdir),
            workdir,
            destinations: Destinations::default(),
            model: None,
            memory,
            asking: Asking::Nobody,
            max_output_bytes,
        })
    }

    /// Where outbound HTTP may go (`[run] allow_hosts`, the server's own address); by
    /// default no loopback, private, link-local or metadata address is reached.
    #[must_use]
    pub fn with_destinations(mut self, destinations: Destinations) -> Self {
        self.mcp.set_destinations(destinations.clone());
        self.destinations = destinations;
        self
    }

    #[must_use]
    pub fn with_model(mut self, model: Option<Model>) -> Self {
        self.model = model;
        self
    }

    #[must_use]
    pub fn with_asking(mut self, asking: Asking) -> Self {
        self.asking = asking;
        self
    }

    /// Whether a person at a terminal answers questions and approvals.
    pub fn asking(&self) -> Asking {
        self.asking
    }

    pub fn workdir(&self) -> &Path {
        &self.workdir
    }

    pub fn mcp(&self) -> &McpPool {
        &self.mcp
    }

    /// Calls a tool through the adapter its `run:` names.
    pub async fn call(&self, call: &Call<'_>, timeout: Duration) -> Result<Output, ToolError> {
        let Some(run) = &call.tool.run else {
            return Err(ToolError::NotRunnable(call.tool.name.clone()));
        };
        let output = match run {
            RunSpec::Builtin(name) => builtin::call(self, name, call, timeout).await?,
            RunSpec::Command(argv) => Box::pin(command::call(self, argv, call, timeout)).await?,
            RunSpec::Http { url, method } => http::call(self, url, method, call, timeout).await?,
            RunSpec::Mcp { server, tool } => self.mcp.call(server, tool, call, timeout).await?,
            RunSpec::Llm { prompt } => llm::call(self, Some(prompt), call, timeout).await?,
        };
        self.cap(output)
    }

    /// Calls the configured model for a plan step of kind `llm_subtask`.
    pub async fn subtask(&self, call: &Call<'_>, timeout: Duration) -> Result<Output, ToolError> {
        let output = llm::call(self, None, call, timeout).await?;
        self.cap(output)
    }

    fn cap(&self, output: Output) -> Result<Output, ToolError> {
        let size = serde_json::to_vec(&output.value).map_or(0, |v| v.len());
        if size > self.max_output_bytes {
            return Err(ToolError::TooLarge {
                limit: self.max_output_bytes,
            });
        }
        Ok(output)
    }

    /// Shuts MCP servers down.
    pub async fn close(&self) {
        self.mcp.close().await;
    }
}

/// Fills `{arg}` in a template from the args; `{{` and `}}` are literal braces. An
/// arg that is not a string is written as JSON; a missing one is an error.
pub(crate) fn fill_template(
    template: &str,
    args: &Map<String, Value>,
) -> Result<String, ToolError> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push_str(&tail[..1]);
            rest = &tail[2..];
            continue;
        }
        if let Some(after) = tail.strip_prefix('}') {
            out.push('}');
            rest = after;
            continue;
        }
        let Some(end) = tail.find('}') else {
            out.push_str(tail);
            rest = "";
            break;
        };
        let name = &tail[1..end];
        let value = args.get(name).ok_or_else(|| {
            ToolError::Failed(format!(
                "the template names `{{{name}}}`, which no arg gives"
            ))
        })?;
        out.push_str(&crate::refs::text_of(value));
        rest = &tail[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Reads at most `limit` bytes of a stream of chunks; more is an error.
pub(crate) fn check_size(len: usize, limit: usize) -> Result<(), ToolError> {
    if len > limit {
        Err(ToolError::TooLarge { limit })
    } else {
        Ok(())
    }
}

/// Args as `name → text`, for adapters that speak text.
pub(crate) fn texts(args: &Map<String, Value>) -> HashMap<&str, String> {
    args.iter()
        .map(|(k, v)| (k.as_str(), crate::refs::text_of(v)))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn templates_fill_args_and_keep_doubled_braces() {
        let args = json!({"limit": 5, "q": "a b"})
            .as_object()
            .cloned()
            .unwrap();
        assert_eq!(fill_template("-n {limit}", &args).unwrap(), "-n 5");
        assert_eq!(fill_template("{{x}} {q}", &args).unwrap(), "{x} a b");
        assert!(fill_template("{missing}", &args).is_err());
        assert_eq!(fill_template("open {", &args).unwrap(), "open {");
    }
}
