//! What each operation answers, whichever face asks: the CLI's `--json`, the HTTP API
//! and the MCP tools serialise these same types, `/openapi.json` and
//! `docs/operations.schema.json` are generated from them (docs/contracts.md,
//! "Operations"), and a test holds the CLI's and the API's answers to one schema.
//!
//! Lists are objects with the list under a name and, where they page, the cursor of
//! the next page; times are RFC 3339 ([`waypoint_protocol::time`]).

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use waypoint_protocol::{Plan, RouteReport, RunReport, Understanding};
use waypoint_store::{Cursor, HistoryRow, MyPlan};

/// A run as the run lists show it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RunSummary {
    pub run_id: String,
    /// `queued`, `running`, `ok`, `failed`, `limit`, `needs_input`, `needs_approval`,
    /// `needs_human`, `cancelled`.
    pub status: String,
    /// The instance that claimed it, once one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub claimed_by: Option<String>,
    /// Kept in Unix milliseconds, written as RFC 3339.
    #[serde(with = "waypoint_protocol::time::millis")]
    #[schemars(schema_with = "waypoint_protocol::time::schema")]
    pub created_at: i64,
    #[serde(with = "waypoint_protocol::time::millis")]
    #[schemars(schema_with = "waypoint_protocol::time::schema")]
    pub updated_at: i64,
    /// How many plans the run has tried.
    pub generation: u32,
    /// The run report, once the run has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<RunReport>,
}

/// `route`: the ranked candidates of each clause.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Routes {
    pub clauses: Vec<RouteReport>,
}

/// `history`: a page of the caller's rows, newest first.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct HistoryPage {
    pub rows: Vec<HistoryRow>,
    /// Pass as `cursor` for the next page; `null` on the last.
    pub next_cursor: Option<String>,
}

/// `history --plans`: the caller's history grouped by request.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct MyPlans {
    pub plans: Vec<MyPlan>,
}

/// `history`, either shape.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum History {
    Rows(HistoryPage),
    Plans(MyPlans),
}

/// `runs`: a page of the caller's runs, newest first.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RunsPage {
    pub runs: Vec<RunSummary>,
    /// Pass as `cursor` for the next page; `null` on the last.
    pub next_cursor: Option<String>,
}

/// `forget`: how many rows went.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Forgotten {
    pub forgotten: u64,
}

/// A cursor as callers pass it back, checked.
///
/// # Errors
/// [`crate::AppError::BadInput`] for text no page handed out.
pub fn cursor(text: Option<&str>) -> Result<Option<Cursor>, crate::AppError> {
    text.map(|t| {
        Cursor::decode(t).ok_or_else(|| {
            crate::AppError::BadInput(format!(
                "`{t}` is not a cursor; pass the `next_cursor` of the page before, as it was"
            ))
        })
    })
    .transpose()
}

/// One operation every face offers.
#[derive(Debug, Clone, Copy)]
pub struct Operation {
    /// The `OpenAPI` operationId and the MCP tool's name where there is one.
    pub id: &'static str,
    /// The CLI command whose `--json` answers it.
    pub cli: &'static str,
    /// `METHOD /path` of the HTTP API.
    pub http: &'static str,
    /// The schema of a successful answer.
    pub output: fn(&mut SchemaGenerator) -> Schema,
}

fn schema<T: JsonSchema>(g: &mut SchemaGenerator) -> Schema {
    g.subschema_for::<T>()
}

/// Every operation, in the order docs/contracts.md lists them.
pub const OPERATIONS: &[Operation] = &[
    Operation {
        id: "plan",
        cli: "waypoint plan REQUEST --json",
        http: "POST /v1/plan",
        output: schema::<Plan>,
    },
    Operation {
        id: "route",
        cli: "waypoint route REQUEST --json",
        http: "POST /v1/route",
        output: schema::<Routes>,
    },
    Operation {
        id: "understand",
        cli: "waypoint understand REQUEST --json",
        http: "POST /v1/understand",
        output: schema::<Understanding>,
    },
    Operation {
        id: "history",
        cli: "waypoint history [--plans] [--cursor C] --json",
        http: "GET /v1/history",
        output: schema::<History>,
    },
    Operation {
        id: "forget",
        cli: "waypoint forget … --json",
        http: "DELETE /v1/history",
        output: schema::<Forgotten>,
    },
    Operation {
        id: "listRuns",
        cli: "waypoint runs [--cursor C] --json",
        http: "GET /v1/runs",
        output: schema::<RunsPage>,
    },
    Operation {
        id: "getRun",
        cli: "waypoint runs show RUN --json",
        http: "GET /v1/runs/{run_id}",
        output: schema::<RunSummary>,
    },
    Operation {
        id: "resumeRun",
        cli: "waypoint resume RUN [--answer K=V] --json",
        http: "POST /v1/runs/{run_id}/resume",
        output: schema::<RunReport>,
    },
    Operation {
        id: "approveRun",
        cli: "waypoint resume RUN --approve ID --json",
        http: "POST /v1/runs/{run_id}/approve",
        output: schema::<RunReport>,
    },
    Operation {
        id: "cancelRun",
        cli: "waypoint runs cancel RUN --json",
        http: "POST /v1/runs/{run_id}/cancel",
        output: schema::<RunSummary>,
    },
];

/// The operation with this id.
pub fn operation(id: &str) -> Option<&'static Operation> {
    OPERATIONS.iter().find(|o| o.id == id)
}

/// `docs/operations.schema.json`: each operation's answer schema, definitions shared.
pub fn document() -> serde_json::Value {
    let mut g = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let ops: serde_json::Map<String, serde_json::Value> = OPERATIONS
        .iter()
        .map(|o| {
            let schema = (o.output)(&mut g).to_value();
            (
                o.id.to_string(),
                serde_json::json!({"cli": o.cli, "http": o.http, "output": schema}),
            )
        })
        .collect();
    serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Waypoint operations",
        "description": "What each operation answers, the same from the CLI's --json, the HTTP API and MCP (docs/contracts.md, Operations).",
        "operations": ops,
        "$defs": g.take_definitions(true),
    })
}
