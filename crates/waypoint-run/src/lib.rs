//! The executor: runs a validated plan under hard limits.
//!
//! - [`limits`]: the caps (`max_steps`, `max_tool_calls`, `max_wall_ms`, `max_usd`,
//!   `max_replans`, tool timeout, concurrency) and the meter that enforces them;
//! - [`approval`]: the gate a call that changes the world waits at, and its bar;
//! - [`adapters`]: how a tool's `run:` becomes a call — built-ins, commands (no shell),
//!   HTTP, MCP servers (rmcp), the configured model;
//! - [`origin`]: how a run was started (catalog, working directory, entry digests), so
//!   a resume from anywhere runs the same tools in the same place;
//! - [`policy`]: what calls may reach — the destination policy of outbound HTTP;
//! - [`refs`]: `$ref` data flow from earlier outputs into args;
//! - [`executor`]: groups in order, steps of a group together, resume from the journal —
//!   the run loop in `executor`, one step's call in `executor::step`, args and plan
//!   shape in `executor::args`, the journal and the report in `executor::journal`;
//! - [`verify`]: the completion check against the goals' evidence needs;
//! - [`replan`]: bounded replanning with an error digest, then a human;
//! - [`specialists`]: the planner-first specialist runner;
//! - [`documents`]: plan documents run as one step — the clarity gate,
//!   placeholders, constraints, success criteria.

pub mod adapters;
pub mod approval;
pub mod documents;
pub mod executor;
pub mod limits;
pub mod origin;
pub mod policy;
pub mod refs;
pub mod replan;
pub mod specialists;
pub mod verify;

pub use adapters::{Asking, Model, Toolbox};
pub use approval::{Approvals, Bar as ApproveBar};
pub use executor::{Decisions, EventSink, RunError, Runner, Settings};
pub use limits::{Limit, Limits};
pub use origin::Origin;
pub use policy::{DestinationError, Destinations};
pub use replan::{NoReplan, Recovery, ReplanAsk, Replanner};
