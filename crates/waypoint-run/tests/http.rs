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
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use waypoint_catalog::{Source, load};
use waypoint_protocol::{Plan, RunStatus};
use waypoint_run::{Destinations, Limits, Runner, Settings, Toolbox};
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
    // The test server is on loopback, which runs reach only when allowed.
    let toolbox = Toolbox::new(dir.path(), &[], store.clone(), 16 * 1024)
        .unwrap()
        .with_destinations(Destinations::allowing(["127.0.0.1"]).unwrap());
    let runner =
        Runner::new(&catalog, store, &toolbox, "t").approving(waypoint_run::Approvals::all());
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

/// Counts connections to a listener on `ip`; answers each with a 302 to `location`
/// when one is given, else 200.
fn counting(ip: &str, location: Option<String>) -> (std::net::SocketAddr, Arc<AtomicUsize>) {
    let listener = TcpListener::bind((ip, 0)).unwrap();
    let addr = listener.local_addr().unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let seen = hits.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            seen.fetch_add(1, Ordering::SeqCst);
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let head = location.as_ref().map_or_else(
                || "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n".to_string(),
                |l| format!("HTTP/1.1 302 Found\r\nlocation: {l}\r\ncontent-length: 2\r\n"),
            );
            let mut s = stream;
            let _ = write!(s, "{head}connection: close\r\n\r\nok");
        }
    });
    (addr, hits)
}

/// Runs `fetch` (`http_fetch`) and `get` (`run: {http}`) on each URL under `destinations`
/// and returns each step's error.
async fn fetch_all(urls: &[String], destinations: Destinations) -> Vec<(String, Option<String>)> {
    let catalog = load(&[Source {
        name: "fetch.yaml".into(),
        text: r#"tools:
  - name: fetch
    description: Fetch a URL.
    input_schema: {type: object, properties: {url: {type: string}}, required: [url]}
    run: {builtin: http_fetch}
  - name: get
    description: Get a URL through an HTTP tool.
    input_schema: {type: object, properties: {url: {type: string}}, required: [url]}
    run: {http: {url: "{url}"}}
"#
        .into(),
    }])
    .unwrap()
    .catalog;
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(
        SqliteStore::open(&dir.path().join("wp.db"), 60)
            .await
            .unwrap(),
    );
    let toolbox = Toolbox::new(dir.path(), &[], store.clone(), 1 << 20)
        .unwrap()
        .with_destinations(destinations);
    let runner =
        Runner::new(&catalog, store, &toolbox, "t").approving(waypoint_run::Approvals::all());
    let mut steps = Vec::new();
    for (i, url) in urls.iter().enumerate() {
        steps.push(
            json!({"id": format!("f{i}"), "order": 2 * i + 1, "kind": "tool",
            "tool": "fetch", "group": 1, "args": {"url": url}}),
        );
    }
    let plan: Plan = serde_json::from_value(json!({"plan_id": "pl_ssrf", "steps": steps})).unwrap();
    let limits = Limits {
        max_replans: 0,
        ..Limits::default()
    };
    let r = runner
        .run(
            plan,
            Settings {
                limits,
                ..Settings::default()
            },
        )
        .await
        .unwrap();
    // Steps of a group finish in any order; answer in the order of `urls`.
    (0..urls.len())
        .map(|i| {
            let id = format!("f{i}");
            let step = r.steps.iter().find(|s| s.step_id == id).unwrap();
            (id, step.error.clone())
        })
        .collect()
}

#[tokio::test]
async fn ssrf_loopback_forms_are_refused() {
    let (addr, hits) = counting("127.0.0.1", None);
    let port = addr.port();
    let urls: Vec<String> = [
        "127.0.0.1",
        "localhost",
        "[::ffff:127.0.0.1]",
        "[::ffff:7f00:1]",
        "[::127.0.0.1]",
        "2130706433",
        "0x7f000001",
        "0177.0.0.1",
        "0x7f.0.0.1",
        "127.1",
        "127.0.1",
        "0",
        "0.0.0.0",
        "[::]",
        "[::1]",
        "LocalHost",
    ]
    .iter()
    .map(|h| format!("http://{h}:{port}/secret"))
    .collect();
    let got = fetch_all(&urls, Destinations::default()).await;
    assert_eq!(got.len(), urls.len());
    for ((_, error), url) in got.iter().zip(&urls) {
        let e = error
            .as_deref()
            .unwrap_or_else(|| panic!("{url} was fetched"));
        assert!(e.starts_with("refused: "), "{url}: {e}");
        assert!(
            e.contains("allow_hosts") && e.contains("[run]"),
            "{url}: {e}"
        );
        assert!(
            e.contains("loopback") || e.contains("unspecified"),
            "{url}: {e}"
        );
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert_eq!(
        hits.load(Ordering::SeqCst),
        0,
        "no connection reached the listener"
    );
}

#[tokio::test]
async fn ssrf_http_tools_are_refused_too() {
    let (addr, hits) = counting("127.0.0.1", None);
    // The request's text picks the host of an HTTP tool's URL template.
    let catalog = load(&[Source {
        name: "get.yaml".into(),
        text: format!(
            "tools:\n  - name: get\n    description: Get.\n    input_schema: {{type: object, properties: {{host: {{type: string}}}}}}\n    run: {{http: {{url: \"http://{{host}}:{}/x\", method: POST}}}}\n",
            addr.port()
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
    let toolbox = Toolbox::new(dir.path(), &[], store.clone(), 1 << 20).unwrap();
    let runner =
        Runner::new(&catalog, store, &toolbox, "t").approving(waypoint_run::Approvals::all());
    let steps = json!([
        {"id": "s1", "order": 1, "kind": "tool", "tool": "get", "group": 1, "args": {"host": "127.0.0.1"}},
        {"id": "s2", "order": 2, "kind": "tool", "tool": "get", "group": 1, "args": {"host": "localhost"}},
        {"id": "s3", "order": 3, "kind": "tool", "tool": "get", "group": 1, "args": {"host": "2130706433"}},
    ]);
    let plan: Plan = serde_json::from_value(json!({"plan_id": "pl_get", "steps": steps})).unwrap();
    let limits = Limits {
        max_replans: 0,
        ..Limits::default()
    };
    let r = runner
        .run(
            plan,
            Settings {
                limits,
                ..Settings::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(r.steps.len(), 3);
    for s in &r.steps {
        let e = s.error.clone().unwrap_or_default();
        assert!(
            e.starts_with("refused: ") && e.contains("loopback"),
            "{}: {e}",
            s.step_id
        );
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert_eq!(hits.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn ssrf_redirects_and_metadata_are_refused() {
    let (target, hits) = counting("127.0.0.1", None);
    let (redirector, redirected) = counting(
        "127.0.0.2",
        Some(format!("http://127.0.0.1:{}/secret", target.port())),
    );
    let (to_metadata, _) = counting(
        "127.0.0.2",
        Some("http://169.254.169.254/latest/meta-data/".into()),
    );
    let urls = vec![
        format!("http://{redirector}/start"),
        format!("http://{to_metadata}/start"),
        "http://169.254.169.254/latest/meta-data/".to_string(),
        "http://[fd00:ec2::254]/latest/meta-data/".to_string(),
        "http://10.0.0.1/".to_string(),
        "http://100.64.0.1/".to_string(),
    ];
    let got = fetch_all(&urls, Destinations::allowing(["127.0.0.2"]).unwrap()).await;
    let errors: Vec<String> = got
        .into_iter()
        .map(|(_, e)| e.unwrap_or_default())
        .collect();
    assert!(
        errors[0].contains("`127.0.0.1` is 127.0.0.1, in the loopback range"),
        "{}",
        errors[0]
    );
    assert!(errors[1].contains("metadata"), "{}", errors[1]);
    assert!(
        errors[2].contains("the cloud metadata address 169.254.169.254"),
        "{}",
        errors[2]
    );
    assert!(errors[3].contains("metadata"), "{}", errors[3]);
    assert!(errors[4].contains("RFC 1918"), "{}", errors[4]);
    assert!(errors[5].contains("CGNAT"), "{}", errors[5]);
    assert_eq!(
        redirected.load(Ordering::SeqCst),
        1,
        "the allowed first hop was made"
    );
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert_eq!(
        hits.load(Ordering::SeqCst),
        0,
        "the redirect's target was never reached"
    );
}

#[tokio::test]
async fn ssrf_allowed_hosts_are_reached_but_never_the_servers_own_address() {
    let (open, opened) = counting("127.0.0.1", None);
    let (own, owned) = counting("127.0.0.1", None);
    let urls = vec![
        format!("http://{open}/"),
        format!("http://localhost:{}/", own.port()),
    ];
    let destinations = Destinations::allowing(["127.0.0.0/8", "localhost"])
        .unwrap()
        .refusing_always([own]);
    let got = fetch_all(&urls, destinations).await;
    assert_eq!(got[0].1, None, "an allowed host is fetched");
    let e = got[1].1.clone().unwrap_or_default();
    assert!(e.contains("this server itself listens"), "{e}");
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert_eq!(opened.load(Ordering::SeqCst), 1);
    assert_eq!(owned.load(Ordering::SeqCst), 0);
}
