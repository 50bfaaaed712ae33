//! Waypoint's application core: what the CLI, the MCP server and the HTTP API all do,
//! done once. A face parses its input, calls an operation here for a caller, and
//! renders the answer; it never opens a store, layers limits or runs the cascade itself.
//!
//! - [`config`]: `waypoint.toml`, read once into one typed [`Config`]; unknown sections
//!   and keys are errors with their line.
//! - [`setup`]: what a face decided (catalogs, training files, store, overrides) and the
//!   engine built from it, with the [`Notice`]s a person should see.
//! - [`planner`]: how a request becomes a plan — learned, deterministic, the model.
//! - [`history`]: plan history off the request path — a write-behind recorder and a
//!   learned-plan cache — for long-lived applications.
//! - [`live`]: the engine, planner and configuration in service as one [`Snapshot`],
//!   swapped whole on reload.
//! - [`limits`]: run limits in layers — defaults, `[run]`, the caller's overrides.
//! - [`app`]: the operations — plan, route, understand, history, forget, run, submit,
//!   resume, runs — over one store.
//! - [`evaluate`]: a case file scored with the planner in service.
//! - [`telemetry`]: spans through every stage, exported over OTLP when configured;
//!   structured logs.
//! - [`train`]: teaching the router and fitting its abstain threshold, with reports.
//! - [`meaning`]: the sentence encoder, when one is configured.
//! - [`error`]: one error type whose variants carry data; faces add the advice.

pub mod app;
pub mod config;
pub mod contract;
pub mod error;
pub mod evaluate;
pub mod history;
pub mod limits;
pub mod live;
pub mod meaning;
pub mod planner;
pub mod setup;
pub mod telemetry;
pub mod train;

pub use app::{App, DryRun, DryStep, RunOptions, RunPolicy, SubmitInput};
pub use config::{Config, ConfigError, ServeConfig};
pub use contract::{History, HistoryPage, MyPlans, Routes, RunSummary, RunsPage};
pub use error::{AppError, ErrorKind};
pub use limits::{LimitError, LimitOverrides};
pub use live::{Live, Snapshot};
pub use planner::{Planner, PlannerOverrides};
pub use setup::{Built, Notice, Setup};
pub use waypoint_cascade::Strategy;
pub use waypoint_llm::Overrides as LlmOverrides;
