//! The HTTP face in process: the router the server serves, over a real SQLite store,
//! called the way a client calls it. Every refusal has the API's one error shape, no
//! body or query makes it fail (5xx), the `OpenAPI` document describes the routes the
//! router has, and MCP bad input is an MCP error, never a crash.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::missing_panics_doc,
    reason = "tests fail loudly on purpose"
)]

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use proptest::prelude::*;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt as _;
use waypoint_app::{App, Live, Snapshot};
use waypoint_server::auth::Auth;
use waypoint_server::{ServeConfig, Server};

const ALICE: &str = "alice-token-0123456789abcdef";
const BOB: &str = "bob-token-0123456789abcdef";

/// A router over the built-in catalog and a SQLite store in `dir`, with two callers.
async fn router(dir: &std::path::Path) -> Router {
    let spec = format!("sqlite:{}", dir.join("history.db").display());
    router_on(&spec).await
}

/// The same over the store `spec` (`none` for none).
async fn router_on(spec: &str) -> Router {
    let loaded = waypoint_catalog::builtin().unwrap();
    let engine =
        waypoint_core::Engine::new(loaded.catalog, waypoint_core::Options::default()).unwrap();
    let store = waypoint_stores::Store::open(spec, 30 * 24 * 3600)
        .await
        .unwrap()
        .map(Arc::new);
    let app = Arc::new(Server::new(App::with(
        Live::fixed(Snapshot::of(engine)),
        store,
        None,
    )));
    let auth = Auth::tokens([
        ("alice".to_string(), ALICE.to_string()),
        ("bob".to_string(), BOB.to_string()),
    ]);
    let config = ServeConfig {
        max_body_bytes: 64 * 1024,
        ..ServeConfig::default()
    };
    waypoint_server::http::router(app, &config, auth, CancellationToken::new())
}

/// One request through the router: the status and the body (JSON, or the text as a
/// JSON string when it is not JSON).
async fn send(
    router: &Router,
    method: &str,
    uri: &str,
    token: Option<&str>,
    body: Option<Vec<u8>>,
) -> (StatusCode, Value) {
    let mut req = Request::builder()
        .method(method)
        .uri(uri)
        .header(header::HOST, "127.0.0.1");
    if let Some(t) = token {
        req = req.header(header::AUTHORIZATION, format!("Bearer {t}"));
    }
    if body.is_some() {
        req = req
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, "application/json, text/event-stream");
    }
    let req = req.body(Body::from(body.unwrap_or_default())).unwrap();
    let res = router.clone().oneshot(req).await.unwrap();
    let status = res.status();
    let bytes = axum::body::to_bytes(res.into_body(), 16 << 20)
        .await
        .unwrap();
    let value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    (status, value)
}

fn has_error_shape(body: &Value) -> bool {
    body["error"]["code"]
        .as_str()
        .is_some_and(|c| !c.is_empty())
        && body["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty())
}

/// A request and how it is refused: method, URI, token, body, status, error code.
type Refused = (
    &'static str,
    &'static str,
    Option<&'static str>,
    Option<&'static str>,
    u16,
    &'static str,
);

#[tokio::test]
async fn every_refusal_has_the_one_error_shape() {
    let dir = tempfile::tempdir().unwrap();
    let r = router(dir.path()).await;
    let cases: [Refused; 11] = [
        (
            "POST",
            "/v1/plan",
            None,
            Some(r#"{"request":"x"}"#),
            401,
            "unauthorized",
        ),
        (
            "POST",
            "/v1/plan",
            Some("not-a-known-token-at-all"),
            Some(r#"{"request":"x"}"#),
            401,
            "unauthorized",
        ),
        (
            "POST",
            "/v1/plan",
            Some(ALICE),
            Some("{not json"),
            400,
            "bad_input",
        ),
        (
            "POST",
            "/v1/plan",
            Some(ALICE),
            Some(r#"{"request":"   "}"#),
            400,
            "bad_input",
        ),
        (
            "POST",
            "/v1/plan",
            Some(ALICE),
            Some(r#"{"request":"x","extra":1}"#),
            400,
            "bad_input",
        ),
        (
            "GET",
            "/v1/history?limit=many",
            Some(ALICE),
            None,
            400,
            "bad_input",
        ),
        (
            "GET",
            "/v1/history?lmit=3",
            Some(ALICE),
            None,
            400,
            "bad_input",
        ),
        ("DELETE", "/v1/history", Some(ALICE), None, 400, "bad_input"),
        (
            "GET",
            "/v1/runs?limit=-1",
            Some(ALICE),
            None,
            400,
            "bad_input",
        ),
        (
            "PUT",
            "/v1/plan",
            Some(ALICE),
            None,
            405,
            "method_not_allowed",
        ),
        ("GET", "/v2/plan", Some(ALICE), None, 404, "not_found"),
    ];
    for (method, uri, token, body, status, code) in cases {
        let (s, got) = send(&r, method, uri, token, body.map(|b| b.as_bytes().to_vec())).await;
        assert_eq!(s.as_u16(), status, "{method} {uri}: {got}");
        assert!(has_error_shape(&got), "{method} {uri}: {got}");
        assert_eq!(got["error"]["code"], code, "{method} {uri}: {got}");
    }
    let big = json!({"request": "x".repeat(100 * 1024)}).to_string();
    let (s, got) = send(&r, "POST", "/v1/plan", Some(ALICE), Some(big.into_bytes())).await;
    assert_eq!(s, StatusCode::PAYLOAD_TOO_LARGE, "{got}");
    assert_eq!(got["error"]["code"], "too_large");
}

/// Issue 20, finding 6: a server started with the store `none` answered the run and
/// history lists with 503, as if it would come back; history is off by its
/// configuration, so the answer is a refusal that says so and how to turn it on.
#[tokio::test]
async fn lists_on_a_server_without_a_store_are_refused_not_unavailable() {
    let router = router_on("none").await;
    for uri in ["/v1/runs", "/v1/history"] {
        let (status, body) = send(&router, "GET", uri, Some(ALICE), None).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{uri}: {body}");
        assert_eq!(body["error"]["code"], "forbidden", "{uri}: {body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains("--store"), "{uri}: {message}");
    }
}

#[tokio::test]
async fn history_belongs_to_the_caller_whose_token_made_it() {
    let dir = tempfile::tempdir().unwrap();
    let r = router(dir.path()).await;
    let body = |req: &str| Some(json!({ "request": req }).to_string().into_bytes());
    for (token, req) in [
        (ALICE, "find CommandRouter"),
        (ALICE, "what changed"),
        (BOB, "read the file notes.txt"),
    ] {
        let (s, plan) = send(&r, "POST", "/v1/plan", Some(token), body(req)).await;
        assert_eq!(s, StatusCode::OK, "{plan}");
    }
    let rows = async |token| {
        let (s, h) = send(&r, "GET", "/v1/history", Some(token), None).await;
        assert_eq!(s, StatusCode::OK, "{h}");
        h["rows"].as_array().unwrap().clone()
    };
    let alice = rows(ALICE).await;
    assert_eq!(alice.len(), 2);
    assert!(alice.iter().all(|row| row["caller"] == "alice"));
    assert_eq!(rows(BOB).await.len(), 1);
    // Bob forgets Alice's request by its hash: it is not his, so nothing goes.
    let sha = alice[0]["intent_sha"].as_str().unwrap();
    let uri = format!("/v1/history?intent={sha}");
    let (_, gone) = send(&r, "DELETE", &uri, Some(BOB), None).await;
    assert_eq!(gone["forgotten"], 0, "{gone}");
    assert_eq!(rows(ALICE).await.len(), 2, "Alice's rows are untouched");
    let (_, gone) = send(&r, "DELETE", "/v1/history?all=true", Some(BOB), None).await;
    assert_eq!(gone["forgotten"], 1, "{gone}");
    assert!(rows(BOB).await.is_empty());
    assert_eq!(rows(ALICE).await.len(), 2);
}

/// Every `$ref` in `value` (as `#/components/schemas/NAME`).
fn refs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                match (k.as_str(), v) {
                    ("$ref", Value::String(s)) => out.push(s.clone()),
                    _ => refs(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

#[tokio::test]
async fn the_openapi_document_describes_the_routes_the_server_has() {
    let dir = tempfile::tempdir().unwrap();
    let r = router(dir.path()).await;
    let (s, doc) = send(&r, "GET", "/openapi.json", None, None).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(doc["openapi"], "3.1.0");
    let schemas = doc["components"]["schemas"].as_object().unwrap();
    let mut all = Vec::new();
    refs(&doc, &mut all);
    assert!(!all.is_empty());
    for r in &all {
        let name = r
            .strip_prefix("#/components/schemas/")
            .unwrap_or_else(|| panic!("a $ref outside components: {r}"));
        assert!(schemas.contains_key(name), "dangling $ref {r}");
    }
    // Each documented operation is routed: with no token it is refused for the token
    // (or served, where none is needed), never "no such endpoint".
    let paths = doc["paths"].as_object().unwrap();
    let mut operations = Vec::new();
    for (path, item) in paths {
        for method in item.as_object().unwrap().keys() {
            operations.push(format!("{} {path}", method.to_uppercase()));
            let uri = path.replace("{run_id}", "run_0000");
            let (s, body) = send(&r, &method.to_uppercase(), &uri, None, None).await;
            assert_ne!(s, StatusCode::NOT_FOUND, "{method} {path}: {body}");
            assert_ne!(s, StatusCode::METHOD_NOT_ALLOWED, "{method} {path}: {body}");
            let public = item[method]["security"] == json!([]);
            assert_eq!(
                s == StatusCode::UNAUTHORIZED,
                !public,
                "{method} {path} needs a token exactly when the document says so"
            );
        }
    }
    operations.sort();
    insta::assert_snapshot!(operations.join("\n"));

    // Each operation's answer is the schema the CLI's `--json` answers with
    // (docs/operations.schema.json), definitions and all.
    let contract = waypoint_app::contract::document();
    let as_contract = |v: &Value| v.to_string().replace("#/components/schemas/", "#/$defs/");
    for op in waypoint_app::contract::OPERATIONS {
        let (method, path) = op.http.split_once(' ').unwrap();
        let item = &doc["paths"][path][method.to_lowercase()];
        assert_eq!(item["operationId"], op.id, "{}", op.http);
        let answer = item["responses"]
            .as_object()
            .unwrap()
            .iter()
            .find(|(code, _)| code.starts_with('2'))
            .map(|(_, r)| &r["content"]["application/json"]["schema"])
            .unwrap();
        let expected = &contract["operations"][op.id]["output"];
        assert_eq!(as_contract(answer), expected.to_string(), "{}", op.id);
        if let Some(name) = expected["$ref"].as_str().and_then(|r| r.rsplit('/').next()) {
            assert_eq!(
                as_contract(&schemas[name]),
                contract["$defs"][name].to_string(),
                "{name}"
            );
        }
    }
}

#[tokio::test]
async fn mcp_bad_input_is_an_mcp_error_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let r = router(dir.path()).await;
    // A `tools/call` of `name` with `arguments`, as `token`'s caller.
    let call = async |token, name: &str, arguments: Value| {
        let rpc = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                         "params": {"name": name, "arguments": arguments}});
        send(
            &r,
            "POST",
            "/mcp",
            Some(token),
            Some(rpc.to_string().into_bytes()),
        )
        .await
    };
    // Arguments of the wrong type: an error result naming the problem.
    let (s, wrong) = call(ALICE, "plan", json!({"request": 5})).await;
    assert_eq!(s, StatusCode::OK, "{wrong}");
    assert_eq!(wrong["result"]["isError"], true, "{wrong}");
    assert!(
        wrong["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("expected a string")),
        "{wrong}"
    );
    // An empty request: an error result the agent can read and fix.
    let (_, empty) = call(ALICE, "plan", json!({"request": " "})).await;
    assert_eq!(empty["result"]["isError"], true, "{empty}");
    // An unknown tool, and a body that is not JSON-RPC at all.
    let (_, unknown) = call(ALICE, "nope", json!({})).await;
    assert!(
        unknown["error"].is_object() || unknown["result"]["isError"] == true,
        "{unknown}"
    );
    let (s, garbage) = send(
        &r,
        "POST",
        "/mcp",
        Some(ALICE),
        Some(b"{\"jsonrpc\": 2".to_vec()),
    )
    .await;
    assert!(s.is_client_error(), "{s} {garbage}");
    // And a good call, for contrast.
    let (_, good) = call(BOB, "plan", json!({"request": "find CommandRouter"})).await;
    assert_eq!(
        good["result"]["structuredContent"]["steps"][0]["tool"], "find_symbol",
        "{good}"
    );
}

/// Bytes that look like what clients send: JSON-ish fragments, field names, junk.
fn body_strategy() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..200),
        "\\PC{0,120}".prop_map(String::into_bytes),
        (
            prop_oneof![Just("request"), Just("context"), Just("plan"), Just("x")],
            prop_oneof![
                any::<i64>().prop_map(Value::from),
                any::<bool>().prop_map(Value::from),
                "\\PC{0,60}".prop_map(Value::String),
                Just(json!({"nested": [1, null]})),
            ],
        )
            .prop_map(|(k, v)| json!({ k: v }).to_string().into_bytes()),
    ]
}

fn query_strategy() -> impl Strategy<Value = String> {
    let key = prop_oneof![
        Just("limit"),
        Just("tool"),
        Just("plans"),
        Just("all"),
        Just("older_than_days"),
        Just("intent"),
        Just("zz"),
    ];
    let value = prop_oneof![
        "[0-9]{0,12}".boxed(),
        "-?[0-9]{1,25}".boxed(),
        "(true|false|yes|1|0)".boxed(),
        "[a-zA-Z0-9%&=+]{0,20}".boxed(),
    ];
    proptest::collection::vec((key, value), 0..4).prop_map(|pairs| {
        pairs
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("&")
    })
}

/// One runtime, store and router for every case of the property below: building
/// the engine for each case would cost more than the case.
fn shared() -> &'static (tokio::runtime::Runtime, Router, tempfile::TempDir) {
    static SHARED: std::sync::OnceLock<(tokio::runtime::Runtime, Router, tempfile::TempDir)> =
        std::sync::OnceLock::new();
    SHARED.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let r = rt.block_on(router(dir.path()));
        (rt, r, dir)
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Whatever a client sends, the server answers it as a client error or a result —
    /// never a 5xx, never a body outside the error shape.
    #[test]
    fn no_body_or_query_makes_the_server_fail(
        body in body_strategy(),
        query in query_strategy(),
        endpoint in 0usize..6,
    ) {
        let (rt, served, _dir) = shared();
        let (s, got) = rt.block_on(async {
            match endpoint {
                0 => send(served, "POST", "/v1/plan", Some(ALICE), Some(body)).await,
                1 => send(served, "POST", "/v1/route", Some(ALICE), Some(body)).await,
                2 => send(served, "POST", "/v1/understand", Some(ALICE), Some(body)).await,
                3 => send(served, "POST", "/v1/runs", Some(ALICE), Some(body)).await,
                4 => send(served, "GET", &format!("/v1/history?{query}"), Some(ALICE), None).await,
                _ => send(served, "DELETE", &format!("/v1/history?{query}"), Some(ALICE), None).await,
            }
        });
        prop_assert!(!s.is_server_error(), "{s}: {got}");
        if !s.is_success() {
            prop_assert!(has_error_shape(&got), "{s}: {got}");
        }
    }
}
