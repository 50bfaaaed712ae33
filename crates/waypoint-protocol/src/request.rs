//! The request every planning call takes over the wire (HTTP `POST /v1/plan`, MCP).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

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
