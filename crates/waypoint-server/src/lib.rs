//! Waypoint as a server for agents and services.
//!
//! - [`ops`]: the application's operations (`waypoint_app`) as JSON for remote callers,
//!   with the counters `/metrics` shows; MCP and the JSON API both call them.
//! - [`mcp`]: the MCP face (rmcp): those operations as tools, the catalog and the
//!   caller's plans as resources; over stdio ([`serve_stdio`]) or streamable HTTP.
//! - [`http`]: one listener for `/mcp`, the JSON API (`/v1/*`, [`api`]), `/openapi.json`,
//!   `/healthz` and `/metrics`, behind host, concurrency, time, body and token guards.
//! - [`auth`]: bearer tokens → caller namespaces.
//! - [`rate`]: per-caller token buckets behind `max_rate_per_caller`.
//! - [`worker`]: instances claim queued runs from the shared store, each run once.
//! - [`metrics`]: the counters `/metrics` shows.

pub mod api;
pub mod auth;
pub mod http;
pub mod mcp;
pub mod metrics;
pub mod ops;
pub mod rate;
pub mod worker;

pub use http::serve_http;
pub use mcp::{ServeError, WaypointMcp, serve_stdio};
pub use ops::{ForgetInput, HistoryInput, RequestInput, Server};
pub use waypoint_app::ServeConfig;
pub use worker::spawn_workers;
