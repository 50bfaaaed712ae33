//! The HTTP adapters against a real HTTP/1.1 server on loopback: what is sent (method,
//! JSON body, idempotency key), what comes back, and the size cap.

#![allow(
    clippy::unwrap_used,
    clippy::missing_panics_doc,
    reason = "tests fail loudly on purpose"
)]

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::sync::Arc;

use serde_json::{Value, json};
use waypoint_catalog::{Source, load};
use waypoint_protocol::{Plan, RunStatus};
use waypoint_run::{Limits, NoReplan, Runner, Settings, Toolbox};
use waypoint_store_sqlite::SqliteStore;

/// Answers each request with JSON describing it; `/big` answers 64 KiB of text.
fn serve() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let mut parts = line.split_whitespace();
            let method = parts.next().unwrap_or("").to_string();
            let path = parts.next().unwrap_or("").to_string();
            let (mut len, mut key) = (0usize, String::new());
            loop {
                let mut h = String::new();
                reader.read_line(&mut h).unwrap();
                let h = h.trim_end();
                if h.is_empty() {
                    break;
                }
                let (name, value) = h.split_once(':').unwrap_or((h, ""));
                match name.to_ascii_lowercase().as_str() {
                    "content-length" => len = value.trim().parse().unwrap_or(0),
                    "idempotency-key" => key = value.trim().to_string(),
                    _ => {}
                }
            }
            let mut body = vec![0; len];
            reader.read_exact(&mut body).unwrap();
            let (ctype, out) = if path == "/big" {
                ("text/plain", "y".repeat(64 * 1024))
            } else {
                let seen = json!({"method": method, "path": path, "key": key,
                                  "body": String::from_utf8_lossy(&body)});
                ("application/json", seen.to_string())
            };
            let mut s = stream;
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\ncontent-type: {ctype}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{out}",
                out.len()
            );
        }
    });
    format!("http://{addr}")
}

#[tokio::test]
async fn http_tools_send_templates_bodies_and_keys_and_respect_the_size_cap() {
    let base = serve();
    let catalog = load(&[Source {
        name: "http.yaml".into(),
        text: format!(
            r#"tools:
  - name: fetch
    description: Fetch a URL.
    input_schema: {{type: object, properties: {{url: {{type: string}}}}, required: [url]}}
    effects: external
    run: {{builtin: http_fetch}}
  - name: create_ticket
    description: Create a ticket.
    input_schema: {{type: object, properties: {{project: {{type: string}}, title: {{type: string}}}}, required: [project, title]}}
    effects: external
    run: {{http: {{url: "{base}/projects/{{project}}/tickets", method: POST}}}}
"#
        ),
    }])
    .unwrap()
    .catalog;
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(
        SqliteStore::open(&dir.path().join("wp.db"), 60)
            .await
            .unwrap(),
    );
    let toolbox = Toolbox::new(dir.path(), &[], store.clone(), 16 * 1024).unwrap();
    let runner = Runner {
        catalog: &catalog,
        store,
        toolbox: &toolbox,
        replanner: &NoReplan,
        caller: "t".into(),
        events: None,
        approved: waypoint_run::Approvals::all(),
    };
    let steps = json!([
        {"id": "s1", "order": 1, "kind": "tool", "tool": "fetch", "group": 1,
         "args": {"url": format!("{base}/hello")}},
        {"id": "s2", "order": 2, "kind": "tool", "tool": "create_ticket", "group": 2,
         "args": {"project": "a b/c", "title": "Broken build"}},
        {"id": "s3", "order": 3, "kind": "tool", "tool": "fetch", "group": 3,
         "args": {"url": format!("{base}/big")}},
    ]);
    let plan: Plan = serde_json::from_value(json!({"plan_id": "pl_http", "steps": steps})).unwrap();
    let r = runner
        .run(
            plan,
            Settings {
                limits: Limits {
                    max_replans: 0,
                    ..Limits::default()
                },
                ..Settings::default()
            },
        )
        .await
        .unwrap();
    let got = r.output("s1").unwrap();
    assert_eq!(got["status"], 200);
    assert_eq!(got["json"]["method"], "GET");
    assert_eq!(
        got["json"]["key"].as_str().unwrap().len(),
        24,
        "an idempotency key is sent"
    );
    let posted = &r.output("s2").unwrap()["json"];
    assert_eq!(posted["method"], "POST");
    assert_eq!(
        posted["path"], "/projects/a%20b%2Fc/tickets",
        "values are encoded"
    );
    let body: Value = serde_json::from_str(posted["body"].as_str().unwrap()).unwrap();
    assert_eq!(body["title"], "Broken build");
    let big = r.steps.iter().find(|s| s.step_id == "s3").unwrap();
    assert!(
        big.error
            .as_ref()
            .unwrap()
            .contains("larger than 16384 bytes"),
        "{big:?}"
    );
    assert_eq!(r.status, RunStatus::NeedsHuman);
}
