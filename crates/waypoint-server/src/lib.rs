//! Waypoint as a server for agents.
//!
//! - [`mcp`]: the MCP server (rmcp) — tools `plan`, `route`, `understand`, `history`,
//!   `forget` (history per caller, in the store `--store` names), `run` (only when the
//!   config allows it) and resources
//!   `waypoint://routing-guide`, `my-plans`, `context-budgets`, `models`, served over
//!   stdio by `waypoint serve --stdio`. Inputs are the same request types the CLI reads;
//!   bad input comes back as an MCP error result, never a crash.

pub mod mcp;

pub use mcp::{RequestInput, RunPolicy, WaypointMcp, serve_stdio};
