//! Waypoint as a server for agents and services.
//!
//! - [`app`]: what the server does — plan, route, understand, history, forget, runs —
//!   for a caller, whichever face the call came in by.
//! - [`mcp`]: the MCP face (rmcp): those operations as tools, the catalog and the
//!   caller's plans as resources; over stdio ([`serve_stdio`]) or streamable HTTP.
//! - [`http`]: one listener for `/mcp`, the JSON API (`/v1/*`, [`api`]), `/openapi.json`,
//!   `/healthz` and `/metrics`, behind host, concurrency, time, body and token guards.
//! - [`planner`]: how requests become plans — the CLI's cascade (learned, deterministic,
//!   the model), the model rebound when a reload swaps the catalog.
//! - [`auth`]: bearer tokens → caller namespaces; [`config`]: the `[serve]` section.
//! - [`worker`]: instances claim queued runs from the shared store, each run once.
//! - [`live`]: the engine in service, reloaded on SIGHUP or a catalog change, the old
//!   one kept when the new catalog has errors.
//! - [`metrics`]: the counters `/metrics` shows.

pub mod api;
pub mod app;
pub mod auth;
pub mod config;
pub mod http;
pub mod live;
pub mod mcp;
pub mod metrics;
pub mod planner;
pub mod worker;

pub use app::{App, ForgetInput, HistoryInput, RequestInput, RunPolicy, SubmitInput};
pub use config::ServeConfig;
pub use http::serve_http;
pub use live::LiveEngine;
pub use mcp::{ServeError, WaypointMcp, serve_stdio};
pub use planner::Planner;
pub use worker::spawn_workers;
