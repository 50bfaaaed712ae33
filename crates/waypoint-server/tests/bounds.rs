//! The server's bounds as a browser or a hostile client meets them: a real listener on
//! a loopback port, raw HTTP/1.1 over TCP (so a test can send a body slowly, or a
//! header a browser would), a real SQLite store in a temporary directory.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::missing_panics_doc,
    reason = "tests fail loudly on purpose"
)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;
use waypoint_app::{App, Live, RunPolicy, Snapshot};
use waypoint_server::auth::Auth;
use waypoint_server::{ServeConfig, Server};

const ALICE: &str = "alice-token-0123456789abcdef";
const BOB: &str = "bob-token-0123456789abcdef";

/// A server listening on a loopback port until dropped.
struct Bound {
    addr: SocketAddr,
    stop: CancellationToken,
    _dir: tempfile::TempDir,
}

impl Drop for Bound {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Serves the built-in catalog over a SQLite store with runs allowed, under `config`.
async fn serve(config: ServeConfig, auth: Auth) -> Bound {
    let dir = tempfile::tempdir().unwrap();
    let loaded = waypoint_catalog::builtin().unwrap();
    let engine =
        waypoint_core::Engine::new(loaded.catalog, waypoint_core::Options::default()).unwrap();
    let spec = format!("sqlite:{}", dir.path().join("history.db").display());
    let store = waypoint_stores::Store::open(&spec, 30 * 24 * 3600)
        .await
        .unwrap()
        .map(Arc::new);
    let runs = RunPolicy {
        workdir: dir.path().to_path_buf(),
    };
    let app = Arc::new(Server::new(App::with(
        Live::fixed(Snapshot::of(engine)),
        store,
        Some(runs),
    )));
    let stop = CancellationToken::new();
    let router = waypoint_server::http::router(app, &config, auth, stop.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let until = stop.clone();
    tokio::spawn(async move {
        axum::serve(listener, router)
            .with_graceful_shutdown(async move { until.cancelled().await })
            .await
    });
    Bound {
        addr,
        stop,
        _dir: dir,
    }
}

fn no_auth() -> (ServeConfig, Auth) {
    let config = ServeConfig {
        allow_run: true,
        ..ServeConfig::default()
    };
    (config, Auth::Off("local".into()))
}

/// An answer: status, headers (lower-case names) and the body as JSON (or as a JSON
/// string when it is not JSON).
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Value,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

fn decode_chunked(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(end) = raw.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size = std::str::from_utf8(&raw[..end])
            .ok()
            .and_then(|s| usize::from_str_radix(s.split(';').next().unwrap_or("").trim(), 16).ok())
            .unwrap_or(0);
        if size == 0 || raw.len() < end + 2 + size {
            return out;
        }
        out.extend_from_slice(&raw[end + 2..end + 2 + size]);
        raw = &raw[(end + 4 + size).min(raw.len())..];
    }
}

fn parse_answer(raw: &[u8]) -> Answer {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("an HTTP answer");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_lowercase(), v.trim().to_string()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    if headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"))
    {
        body = decode_chunked(&body);
    }
    let body = serde_json::from_slice(&body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()));
    Answer {
        status,
        headers,
        body,
    }
}

/// One request over a fresh connection: `headers` as given (`Host` and
/// `Content-Length` are added), then the body, then the whole answer.
async fn send(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Answer {
    let mut s = TcpStream::connect(addr).await.unwrap();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (n, v) in headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).await.unwrap();
    s.write_all(body).await.unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).await.unwrap();
    parse_answer(&raw)
}

fn run_body() -> Vec<u8> {
    json!({"request": "read the file notes.txt"})
        .to_string()
        .into_bytes()
}

/// What a web page's `fetch(url, {method: "POST", mode: "no-cors", body})` sends: a
/// "simple" request, which the browser sends without asking the server first.
#[tokio::test]
async fn csrf_text_plain_cross_origin_run_is_refused() {
    let (config, auth) = no_auth();
    let server = serve(config, auth).await;
    let page = [
        ("Content-Type", "text/plain;charset=UTF-8"),
        ("Origin", "https://evil.example"),
        ("Sec-Fetch-Site", "cross-site"),
    ];
    let r = send(server.addr, "POST", "/v1/runs", &page, &run_body()).await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert_eq!(r.body["error"]["code"], "origin_not_allowed", "{}", r.body);
    // Even declared JSON, another site's page is refused (it would need a preflight,
    // but the origin alone decides).
    let json_page = [
        ("Content-Type", "application/json"),
        ("Origin", "http://localhost:3000"),
    ];
    let r = send(server.addr, "POST", "/v1/plan", &json_page, &run_body()).await;
    assert_eq!(r.status, 403, "{}", r.body);
    // `Sec-Fetch-Site: cross-site` without an Origin is refused too.
    let r = send(
        server.addr,
        "POST",
        "/v1/plan",
        &[
            ("Content-Type", "application/json"),
            ("Sec-Fetch-Site", "cross-site"),
        ],
        &run_body(),
    )
    .await;
    assert_eq!(r.status, 403, "{}", r.body);
    // The same body from a client that is not a browser page still queues a run.
    let r = send(
        server.addr,
        "POST",
        "/v1/runs",
        &[("Content-Type", "application/json")],
        &run_body(),
    )
    .await;
    assert_eq!(r.status, 202, "{}", r.body);
    // And the server's own origin (a page it served) is allowed.
    let own = format!("http://{}", server.addr);
    let r = send(
        server.addr,
        "POST",
        "/v1/plan",
        &[("Content-Type", "application/json"), ("Origin", &own)],
        &run_body(),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
}

#[tokio::test]
async fn csrf_json_api_posts_need_application_json() {
    let (config, auth) = no_auth();
    let server = serve(config, auth).await;
    for (path, content_type) in [
        ("/v1/runs", Some("text/plain")),
        ("/v1/plan", Some("application/x-www-form-urlencoded")),
        ("/v1/route", Some("multipart/form-data; boundary=x")),
        ("/v1/understand", None),
    ] {
        let headers: Vec<(&str, &str)> = content_type
            .map(|c| ("Content-Type", c))
            .into_iter()
            .collect();
        let r = send(server.addr, "POST", path, &headers, &run_body()).await;
        assert_eq!(r.status, 415, "{path}: {}", r.body);
        assert_eq!(r.body["error"]["code"], "unsupported_media_type", "{path}");
    }
}

#[tokio::test]
async fn csrf_listed_origins_are_allowed() {
    let (mut config, auth) = no_auth();
    config.allowed_origins = vec!["https://console.example".into()];
    let server = serve(config, auth).await;
    let r = send(
        server.addr,
        "POST",
        "/v1/plan",
        &[
            ("Content-Type", "application/json"),
            ("Origin", "https://console.example"),
            ("Sec-Fetch-Site", "cross-site"),
        ],
        &run_body(),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
}

/// A plan echoes its request and context; the `plan` tool once sent it twice (the
/// second time pretty-printed), so a megabyte in made a hundred megabytes out.
#[tokio::test]
async fn mcp_plan_result_is_not_sent_twice_in_full() {
    let (config, auth) = no_auth();
    let server = serve(config, auth).await;
    let words: Vec<String> = (0..20_000).map(|i| format!("w{i}")).collect();
    let rpc = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "plan",
        "arguments": {"request": "read the file notes.txt and summarise it",
                      "context": {"paste": words.join(" ")}}}});
    let body = rpc.to_string().into_bytes();
    let r = send(
        server.addr,
        "POST",
        "/mcp",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ],
        &body,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let structured = r.body["result"]["structuredContent"].to_string();
    let text = r.body["result"]["content"][0]["text"].as_str().unwrap();
    let whole = r.body.to_string().len();
    assert!(
        structured.len() > 64 * 1024,
        "the plan should be big for this test: {} bytes",
        structured.len()
    );
    assert!(text.len() < 2048, "text of {} bytes: {text}", text.len());
    assert!(text.starts_with("plan with "), "{text}");
    assert!(
        whole < structured.len() + 4096,
        "{whole} vs {}",
        structured.len()
    );
    // A small answer is still repeated as compact JSON text for older clients.
    let rpc = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "plan", "arguments": {"request": "find CommandRouter"}}});
    let r = send(
        server.addr,
        "POST",
        "/mcp",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ],
        rpc.to_string().as_bytes(),
    )
    .await;
    let text = r.body["result"]["content"][0]["text"].as_str().unwrap();
    assert!(!text.contains('\n'), "compact, not pretty: {text}");
    let parsed: Value = serde_json::from_str(text).unwrap();
    assert_eq!(parsed, r.body["result"]["structuredContent"]);
}

/// Headers of a POST whose body never comes, on a connection kept open.
async fn stall(addr: SocketAddr, token: &str) -> TcpStream {
    let mut s = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /v1/plan HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{\"request\": "
    );
    s.write_all(head.as_bytes()).await.unwrap();
    s
}

/// Reads an answer the server sends before the request is complete.
async fn answer_of(mut s: TcpStream) -> Answer {
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        match tokio::time::timeout(Duration::from_millis(500), s.read(&mut buf)).await {
            Ok(Ok(0) | Err(_)) => break,
            Ok(Ok(n)) => raw.extend_from_slice(&buf[..n]),
            Err(_) if !raw.is_empty() => break,
            Err(_) => {}
        }
    }
    parse_answer(&raw)
}

#[tokio::test]
async fn starvation_one_callers_slow_bodies_leave_healthz_and_others_served() {
    let config = ServeConfig {
        max_concurrent: 8,
        ..ServeConfig::default()
    };
    let auth = Auth::tokens([
        ("alice".to_string(), ALICE.to_string()),
        ("bob".to_string(), BOB.to_string()),
    ]);
    let server = serve(config, auth).await;
    // Alice opens as many stalled requests as the whole server allows.
    let mut stalled = Vec::new();
    for _ in 0..8 {
        stalled.push(stall(server.addr, ALICE).await);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    // Past her share (a quarter of max_concurrent) she is told to come back.
    let refused = answer_of(stalled.pop().unwrap()).await;
    assert_eq!(refused.status, 429, "{}", refused.body);
    assert_eq!(refused.body["error"]["code"], "caller_busy");
    assert_eq!(refused.header("retry-after"), Some("1"));
    // Health answers at once, and Bob is served.
    let started = Instant::now();
    let health = send(server.addr, "GET", "/healthz", &[], b"").await;
    assert_eq!(health.status, 200, "{}", health.body);
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    let bob = format!("Bearer {BOB}");
    let r = send(
        server.addr,
        "POST",
        "/v1/plan",
        &[
            ("Content-Type", "application/json"),
            ("Authorization", &bob),
        ],
        &run_body(),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    drop(stalled);
}

#[tokio::test]
async fn starvation_a_body_that_trickles_is_cut_off() {
    let config = ServeConfig {
        body_timeout_ms: 300,
        ..ServeConfig::default()
    };
    let auth = Auth::tokens([("alice".to_string(), ALICE.to_string())]);
    let server = serve(config, auth).await;
    let started = Instant::now();
    let r = answer_of(stall(server.addr, ALICE).await).await;
    assert_eq!(r.status, 408, "{}", r.body);
    assert_eq!(r.body["error"]["code"], "timeout");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn starvation_a_caller_over_its_rate_is_refused_and_the_others_are_not() {
    let config = ServeConfig {
        max_rate_per_caller: Some(5),
        ..ServeConfig::default()
    };
    let auth = Auth::tokens([
        ("alice".to_string(), ALICE.to_string()),
        ("bob".to_string(), BOB.to_string()),
    ]);
    let server = serve(config, auth).await;
    let plan = async |token: &str| {
        let bearer = format!("Bearer {token}");
        send(
            server.addr,
            "POST",
            "/v1/plan",
            &[
                ("Content-Type", "application/json"),
                ("Authorization", &bearer),
            ],
            br#"{"request": "find CommandRouter"}"#,
        )
        .await
    };
    // Twenty at once: one second's worth passes, the rest are told when to come back.
    let mut answers = Vec::new();
    for _ in 0..20 {
        answers.push(plan(ALICE).await);
    }
    let ok = answers.iter().filter(|a| a.status == 200).count();
    assert!((5..=6).contains(&ok), "{ok} of 20 passed at 5 a second");
    let refused = answers.iter().find(|a| a.status == 429).unwrap();
    assert_eq!(
        refused.body["error"]["code"], "rate_limited",
        "{}",
        refused.body
    );
    assert_eq!(refused.header("retry-after"), Some("1"));
    // Bob's bucket is his own; /healthz is not limited at all.
    assert_eq!(plan(BOB).await.status, 200);
    for _ in 0..20 {
        let h = send(server.addr, "GET", "/healthz", &[], b"").await;
        assert_eq!(h.status, 200);
    }
    // Refills: after a second Alice is served again.
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    assert_eq!(plan(ALICE).await.status, 200);
}
