//! The JSON API: `/v1/*` handlers and the `OpenAPI` document generated from the same
//! types they read and write.

use std::sync::Arc;

use axum::Extension;
use axum::extract::{FromRequest, FromRequestParts, Path, Query, Request, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use schemars::{JsonSchema, SchemaGenerator};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use waypoint_app::SubmitInput;

use crate::auth::Caller;
use crate::ops::{
    ApproveInput, ForgetInput, HistoryInput, OpError, RequestInput, ResumeInput, Server,
};

/// An error as every endpoint answers it: `{"error": {"code", "message"}}`.
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
        }
    }

    /// One of axum's own rejections (a query that does not parse, a body it cannot
    /// read, a method a path does not take), told in the API's error shape with
    /// axum's explanation as the message.
    pub async fn from_rejection(rejection: Response) -> Self {
        let status = rejection.status();
        let code = match status {
            StatusCode::PAYLOAD_TOO_LARGE => "too_large",
            StatusCode::METHOD_NOT_ALLOWED => "method_not_allowed",
            StatusCode::NOT_FOUND => "not_found",
            s if s.is_server_error() => "internal",
            _ => "bad_input",
        };
        let bytes = axum::body::to_bytes(rejection.into_body(), 4096)
            .await
            .unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes);
        let message = if text.trim().is_empty() {
            status
                .canonical_reason()
                .unwrap_or("refused")
                .to_lowercase()
        } else {
            text.into_owned()
        };
        Self::new(status, code, message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({ "error": { "code": self.code, "message": self.message } });
        (self.status, axum::Json(body)).into_response()
    }
}

impl From<OpError> for ApiError {
    fn from(e: OpError) -> Self {
        use waypoint_app::ErrorKind;
        let (status, code) = match e.kind {
            ErrorKind::BadInput => (StatusCode::BAD_REQUEST, "bad_input"),
            ErrorKind::Forbidden => (StatusCode::FORBIDDEN, "forbidden"),
            ErrorKind::NotFound => (StatusCode::NOT_FOUND, "not_found"),
            ErrorKind::Conflict => (StatusCode::CONFLICT, "conflict"),
            ErrorKind::Unavailable => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
            ErrorKind::Internal => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        };
        Self::new(status, code, e.message)
    }
}

type Answer = Result<axum::Json<Value>, ApiError>;

/// A JSON body whose errors are answered in the API's error shape, with serde's line
/// and column, instead of axum's plain-text rejections.
pub struct JsonBody<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = match axum::body::Bytes::from_request(req, state).await {
            Ok(bytes) => bytes,
            Err(r) => {
                let rejection = r.into_response();
                return Err(ApiError::from_rejection(rejection).await);
            }
        };
        serde_json::from_slice(&bytes).map(JsonBody).map_err(|e| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "bad_input",
                format!("the body is not the JSON this endpoint takes: {e}"),
            )
        })
    }
}

/// An extractor from the request's head (query, path) whose rejection is answered in
/// the API's error shape instead of axum's plain text.
pub struct Checked<E>(pub E);

impl<S: Send + Sync, E: FromRequestParts<S>> FromRequestParts<S> for Checked<E>
where
    E::Rejection: IntoResponse,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let rejection = match E::from_request_parts(parts, state).await {
            Ok(v) => return Ok(Self(v)),
            Err(r) => r.into_response(),
        };
        Err(ApiError::from_rejection(rejection).await)
    }
}

/// A path the API has, asked with a method it does not take.
pub async fn method_not_allowed(req: Request) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        format!(
            "{} does not take {}; see /openapi.json for what it takes",
            req.uri().path(),
            req.method()
        ),
    )
}

pub async fn plan(
    State(app): State<Arc<Server>>,
    Extension(caller): Extension<Caller>,
    JsonBody(input): JsonBody<RequestInput>,
) -> Result<axum::Json<waypoint_protocol::Plan>, ApiError> {
    Ok(axum::Json(app.plan(&caller.0, &input).await?))
}

pub async fn route(
    State(app): State<Arc<Server>>,
    JsonBody(input): JsonBody<RequestInput>,
) -> Answer {
    Ok(axum::Json(app.route(&input)?))
}

pub async fn understand(
    State(app): State<Arc<Server>>,
    JsonBody(input): JsonBody<RequestInput>,
) -> Answer {
    Ok(axum::Json(app.understand(&input)?))
}

pub async fn history(
    State(app): State<Arc<Server>>,
    Extension(caller): Extension<Caller>,
    Checked(Query(input)): Checked<Query<HistoryInput>>,
) -> Answer {
    Ok(axum::Json(app.history(&caller.0, &input).await?))
}

pub async fn forget(
    State(app): State<Arc<Server>>,
    Extension(caller): Extension<Caller>,
    Checked(Query(input)): Checked<Query<ForgetInput>>,
) -> Answer {
    Ok(axum::Json(app.forget(&caller.0, &input).await?))
}

/// Queues a run: 202 with the run's id, and `Location` where its status is read.
pub async fn submit(
    State(app): State<Arc<Server>>,
    Extension(caller): Extension<Caller>,
    JsonBody(input): JsonBody<SubmitInput>,
) -> Result<axum::response::Response, ApiError> {
    let queued = app.submit(&caller.0, input).await?;
    let mut response = (StatusCode::ACCEPTED, axum::Json(&queued)).into_response();
    if let Some(location) = queued["run_id"]
        .as_str()
        .and_then(|id| axum::http::HeaderValue::from_str(&format!("/v1/runs/{id}")).ok())
    {
        response
            .headers_mut()
            .insert(axum::http::header::LOCATION, location);
    }
    Ok(response)
}

/// `GET /v1/runs`'s query; an unknown parameter (`offset`, a typo) is 400, not ignored.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListRuns {
    /// Most runs (default 50, at most 1000).
    #[serde(default)]
    pub limit: Option<u32>,
    /// The `next_cursor` of the page before: the runs after it.
    #[serde(default)]
    pub cursor: Option<String>,
}

pub async fn runs(
    State(app): State<Arc<Server>>,
    Extension(caller): Extension<Caller>,
    Checked(Query(q)): Checked<Query<ListRuns>>,
) -> Answer {
    let limit = q.limit.unwrap_or(50).clamp(1, 1000);
    Ok(axum::Json(
        app.runs(&caller.0, q.cursor.as_deref(), limit).await?,
    ))
}

pub async fn run_status(
    State(app): State<Arc<Server>>,
    Extension(caller): Extension<Caller>,
    Checked(Path(run_id)): Checked<Path<String>>,
) -> Answer {
    Ok(axum::Json(app.run_status(&caller.0, &run_id).await?))
}

pub async fn approve(
    State(app): State<Arc<Server>>,
    Extension(caller): Extension<Caller>,
    Checked(Path(run_id)): Checked<Path<String>>,
    JsonBody(input): JsonBody<ApproveInput>,
) -> Answer {
    Ok(axum::Json(app.approve(&caller.0, &run_id, &input).await?))
}

pub async fn resume(
    State(app): State<Arc<Server>>,
    Extension(caller): Extension<Caller>,
    Checked(Path(run_id)): Checked<Path<String>>,
    JsonBody(input): JsonBody<ResumeInput>,
) -> Answer {
    Ok(axum::Json(app.resume(&caller.0, &run_id, &input).await?))
}

pub async fn cancel(
    State(app): State<Arc<Server>>,
    Extension(caller): Extension<Caller>,
    Checked(Path(run_id)): Checked<Path<String>>,
) -> Answer {
    Ok(axum::Json(app.cancel(&caller.0, &run_id).await?))
}

pub async fn healthz(State(app): State<Arc<Server>>) -> (StatusCode, axum::Json<Value>) {
    let engine = app.app.engine();
    let c = engine.catalog();
    let reload_error = app.app.live().last_error();
    (
        StatusCode::OK,
        axum::Json(json!({
            "status": if reload_error.is_some() { "degraded" } else { "ok" },
            "version": env!("CARGO_PKG_VERSION"),
            "catalog": {
                "tools": c.tools().len(),
                "pipelines": c.pipelines().len(),
                "plans": c.plans().len(),
                "loads": app.app.live().loads.load(std::sync::atomic::Ordering::Relaxed),
                "reload_error": reload_error,
            },
            "store": app.app.store().is_some(),
            "runs": app.app.runs_allowed(),
        })),
    )
}

pub async fn metrics(State(app): State<Arc<Server>>) -> impl IntoResponse {
    let engine = app.app.engine();
    let tools = engine.catalog().tools().len() as f64;
    let loads = app
        .app
        .live()
        .loads
        .load(std::sync::atomic::Ordering::Relaxed) as f64;
    let failed = app
        .app
        .live()
        .failed_loads
        .load(std::sync::atomic::Ordering::Relaxed) as f64;
    let history =
        |f: fn(&waypoint_app::history::Counts) -> u64| app.app.history_counts().map_or(0, f) as f64;
    let queued = history(|c| c.queued.load(std::sync::atomic::Ordering::Relaxed));
    let flushed = history(|c| c.flushed.load(std::sync::atomic::Ordering::Relaxed));
    let failed_rows = history(|c| c.failed.load(std::sync::atomic::Ordering::Relaxed));
    let batches = history(|c| c.batches.load(std::sync::atomic::Ordering::Relaxed));
    let text = app.metrics.render(&[
        (
            "waypoint_history_rows_queued",
            "Plan history rows handed to the write-behind recorder.",
            queued,
        ),
        (
            "waypoint_history_rows_flushed",
            "Plan history rows committed to the store.",
            flushed,
        ),
        (
            "waypoint_history_rows_failed",
            "Plan history rows whose batch the store refused.",
            failed_rows,
        ),
        (
            "waypoint_history_batches",
            "Transactions the recorder committed.",
            batches,
        ),
        (
            "waypoint_catalog_tools",
            "Tools in the catalog in service.",
            tools,
        ),
        (
            "waypoint_catalog_loads",
            "Catalog loads that succeeded, the first included.",
            loads,
        ),
        (
            "waypoint_catalog_load_failures",
            "Catalog reloads that failed (the old one kept).",
            failed,
        ),
    ]);
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
}

pub async fn openapi() -> axum::Json<Value> {
    axum::Json(document())
}

/// The `OpenAPI` 3.1 document: paths written here, every schema generated from the Rust
/// types the handlers use, so the two cannot drift.
pub fn document() -> Value {
    let mut settings = schemars::generate::SchemaSettings::draft2020_12();
    settings.definitions_path = "#/components/schemas/".into();
    let mut g = SchemaGenerator::new(settings);
    let request = g.subschema_for::<RequestInput>().to_value();
    // Every answer's schema comes from the one table the CLI answers from too.
    let mut out = |id: &str| {
        waypoint_app::contract::operation(id)
            .map(|o| (o.output)(&mut g).to_value())
            .unwrap_or_default()
    };
    let (plan, route, understanding) = (out("plan"), out("route"), out("understand"));
    let (history, forgotten, runs) = (out("history"), out("forget"), out("listRuns"));
    let (summary, report) = (out("getRun"), out("resumeRun"));
    let submit = g.subschema_for::<SubmitInput>().to_value();
    let approve = g.subschema_for::<ApproveInput>().to_value();
    let resume = g.subschema_for::<ResumeInput>().to_value();
    let error = json!({"type": "object", "required": ["error"], "properties": {"error": {
        "type": "object", "required": ["code", "message"],
        "properties": {"code": {"type": "string"}, "message": {"type": "string"}}}}});
    let ok = json_response;
    let errors = json!({
        "400": ok("The input is wrong; the message says how.", error.clone()),
        "401": ok("No bearer token, or an unknown one.", error.clone()),
        "403": ok("A browser request from another site (Origin not allowed), or history and runs are off on this server (`--store none`).", error.clone()),
        "415": ok("A POST body not sent as application/json.", error.clone()),
        "503": ok("Busy, timed out, or the store is unavailable.", error.clone()),
    });
    let with_errors = |mut responses: Value| {
        if let (Some(r), Some(e)) = (responses.as_object_mut(), errors.as_object()) {
            r.extend(e.clone());
        }
        responses
    };
    let body = json_body;
    let query = |name: &str, ty: &str, what: &str| json!({"name": name, "in": "query", "required": false, "schema": {"type": ty}, "description": what});
    let post = |id: &str, summary: &str, req: Value, res: Value| {
        json!({"post": {
            "operationId": id, "summary": summary, "requestBody": body(req),
            "responses": with_errors(json!({"200": ok("OK", res)})),
        }})
    };
    let actions = run_actions(&approve, &resume, &report, &summary, &error, &with_errors);
    let mut doc = json!({
        "openapi": "3.1.0",
        "info": {"title": "Waypoint", "version": env!("CARGO_PKG_VERSION"),
                 "description": "Plans what a person asks an agent into validated, ordered steps over a catalog of tools, and runs them under guardrails."},
        "security": [{"bearer": []}],
        "paths": {
            "/v1/plan": post("plan", "Plan a request: ordered steps, groups, gaps and questions.", request.clone(), plan),
            "/v1/route": post("route", "Rank catalog entries for each clause of a request.", request.clone(), route),
            "/v1/understand": post("understand", "Clauses, goals and concrete values of a request.", request, understanding),
            "/v1/runs": {
                "post": {"operationId": "submitRun", "summary": "Queue a run of a request or a plan; one instance claims and executes it.",
                         "requestBody": body(submit),
                         "responses": with_errors(json!({
                             "202": {"description": "Queued; `Location` is the run's status URL.", "headers": {"Location": {"schema": {"type": "string"}}}, "content": {"application/json": {"schema": json!({"type": "object", "properties": {"run_id": {"type": "string"}, "status": {"const": "queued"}}})}}},
                             "403": ok("Runs are off on this server.", error.clone())}))},
                "get": {"operationId": "listRuns", "summary": "The caller's runs, newest first.",
                        "parameters": [query("limit", "integer", "Most runs (default 50, at most 1000)."),
                                       query("cursor", "string", "The `next_cursor` of the page before.")],
                        "responses": with_errors(json!({"200": ok("OK", runs)}))}
            },
            "/v1/runs/{run_id}": {"get": {"operationId": "getRun", "summary": "One of the caller's runs with its report.",
                "parameters": [{"name": "run_id", "in": "path", "required": true, "schema": {"type": "string"}}],
                "responses": with_errors(json!({"200": ok("OK", summary.clone()), "404": ok("No such run of this caller.", error.clone())}))}},
            "/v1/history": {
                "get": {"operationId": "history", "summary": "The caller's plan history (hashes and tool names only).",
                        "parameters": [query("tool", "string", "Only plans using this tool."),
                                       query("plans", "boolean", "Group by request."),
                                       query("limit", "integer", "Most rows (default 50, at most 1000)."),
                                       query("cursor", "string", "The `next_cursor` of the page before.")],
                        "responses": with_errors(json!({"200": ok("OK", history)}))},
                "delete": {"operationId": "forget", "summary": "Delete the caller's history: all, older than N days, or one intent.",
                           "parameters": [query("all", "boolean", "Everything."),
                                          query("older_than_days", "integer", "Rows older than this."),
                                          query("intent", "string", "One request's rows by intent hash.")],
                           "responses": with_errors(json!({"200": ok("OK", forgotten)}))}
            },
            "/healthz": {"get": {"operationId": "health", "summary": "Liveness and the catalog in service (no token needed).", "security": [],
                                 "responses": {"200": {"description": "OK"}}}},
            "/metrics": {"get": {"operationId": "metrics", "summary": "Prometheus text format (no token needed).", "security": [],
                                 "responses": {"200": {"description": "OK", "content": {"text/plain": {}}}}}},
            "/mcp": {"post": {"operationId": "mcp", "summary": "MCP over streamable HTTP: the same tools and resources as the MCP server over stdio.",
                              "responses": {"200": {"description": "A JSON-RPC answer."}}}}
        },
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": g.take_definitions(true),
        }
    });
    if let Some(paths) = doc["paths"].as_object_mut() {
        paths.extend(actions);
    }
    doc
}

fn json_response(description: &str, schema: Value) -> Value {
    let mut r = json!({"description": description, "content": {"application/json": {}}});
    r["content"]["application/json"]["schema"] = schema;
    r
}

fn json_body(schema: Value) -> Value {
    let mut r = json!({"required": true, "content": {"application/json": {}}});
    r["content"]["application/json"]["schema"] = schema;
    r
}

/// The operations on one run: approve, resume, cancel.
fn run_actions(
    approve: &Value,
    resume: &Value,
    report: &Value,
    summary: &Value,
    error: &Value,
    with_errors: &dyn Fn(Value) -> Value,
) -> serde_json::Map<String, Value> {
    let (ok, body) = (json_response, json_body);
    let (approve, resume, report, summary) = (
        approve.clone(),
        resume.clone(),
        report.clone(),
        summary.clone(),
    );
    let actions = json!({
            "/v1/runs/{run_id}/approve": {"post": {"operationId": "approveRun",
                "summary": "Let held calls of a run that waits for approval (needs_approval) run, and drive it on; answers its report.",
                "parameters": [{"name": "run_id", "in": "path", "required": true, "schema": {"type": "string"}}],
                "requestBody": body(approve),
                "responses": with_errors(json!({"200": ok("The run's report after it went on.", report.clone()),
                                                "404": ok("No such run of this caller.", error.clone())}))}},
            "/v1/runs/{run_id}/resume": {"post": {"operationId": "resumeRun",
                "summary": "Answer a stopped run's questions (answers by key, retry, done, approve) and drive it on; a key the run does not ask is 400 and the run waits as it was.",
                "parameters": [{"name": "run_id", "in": "path", "required": true, "schema": {"type": "string"}}],
                "requestBody": body(resume),
                "responses": with_errors(json!({"200": ok("The run's report after it went on.", report),
                                                "404": ok("No such run of this caller.", error.clone()),
                                                "409": ok("The run cannot go on: its catalog changed.", error.clone())}))}},
            "/v1/runs/{run_id}/cancel": {"post": {"operationId": "cancelRun",
                "summary": "Cancel a queued or stopped run; it is never claimed or resumed.",
                "parameters": [{"name": "run_id", "in": "path", "required": true, "schema": {"type": "string"}}],
                "responses": with_errors(json!({"200": ok("The cancelled run.", summary),
                                                "404": ok("No such run of this caller.", error.clone()),
                                                "409": ok("The run is running or has ended.", error.clone())}))}}
    });
    actions.as_object().cloned().unwrap_or_default()
}
