//! `waypoint serve --http` as a client meets it: the official MCP Inspector over
//! streamable HTTP, the JSON API with bearer tokens (one caller never sees another's
//! history or runs), guards, catalog reload, and two instances sharing one PostgreSQL
//! store executing each of 1,000 submitted runs exactly once.

#![allow(
    clippy::unwrap_used,
    clippy::missing_panics_doc,
    reason = "tests fail loudly on purpose"
)]

mod common;

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const ALICE: &str = "alice-token-0123456789abcdef";
const BOB: &str = "bob-token-0123456789abcdef";

/// A running `waypoint serve --http`, stopped when dropped.
struct Server {
    child: Child,
    base: String,
    log: Arc<Mutex<String>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn start(dir: &Path, args: &[&str]) -> Self {
        Self::try_start(dir, args).unwrap_or_else(|log| panic!("the server did not start:\n{log}"))
    }

    /// `waypoint GLOBALS… serve --http 127.0.0.1:0 FLAGS…`.
    fn http(dir: &Path, globals: &[(&str, &str)], flags: &[&str]) -> Self {
        let mut args: Vec<&str> = globals.iter().flat_map(|(k, v)| [*k, *v]).collect();
        args.extend(["serve", "--http", "127.0.0.1:0"]);
        args.extend(flags);
        Self::start(dir, &args)
    }

    /// Starts a server; `Err` holds what it printed when it exited instead.
    fn try_start(dir: &Path, args: &[&str]) -> Result<Self, String> {
        let mut child = Command::new(env!("CARGO_BIN_EXE_waypoint"))
            .args(args)
            .env("WAYPOINT_TEST_BOB", BOB)
            .current_dir(dir)
            .env("XDG_CONFIG_HOME", dir.join("xdg"))
            .env_remove("WAYPOINT_MODEL")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let log = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let stderr = child.stderr.take().unwrap();
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("serving MCP on http://").nth(1) {
                    let _ = tx.send(rest.split('/').next().unwrap_or("").to_string());
                }
                sink.lock().unwrap().push_str(&format!("{line}\n"));
            }
        });
        let Ok(addr) = rx.recv_timeout(Duration::from_mins(1)) else {
            let _ = child.kill();
            let _ = child.wait();
            // Let the reader thread take the last lines.
            std::thread::sleep(Duration::from_millis(100));
            return Err(log.lock().unwrap().clone());
        };
        Ok(Self {
            child,
            base: format!("http://{addr}"),
            log,
        })
    }

    fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }
}

fn client() -> reqwest::Client {
    // reqwest is built without a default TLS provider; plain HTTP still wants one set.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

/// One HTTP call; answers the status and the JSON body (`null` if it is not JSON).
async fn call(method: &str, url: &str, token: Option<&str>, body: Option<Value>) -> (u16, Value) {
    let client = client();
    let mut req = client.request(method.parse().unwrap(), url);
    if let Some(t) = token {
        req = req.header("authorization", format!("Bearer {t}"));
    }
    if let Some(b) = body {
        req = req
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(b.to_string());
    }
    let res = req.send().await.unwrap();
    let status = res.status().as_u16();
    let text = res.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

fn config(dir: &Path, extra: &str) -> String {
    config_with_run(dir, extra, "")
}

/// A config whose `[run]` section holds `run` besides the `[serve]` keys in `serve`.
fn config_with_run(dir: &Path, serve: &str, run: &str) -> String {
    let path = dir.join("serve.toml");
    std::fs::write(
        &path,
        format!(
            "[run]\n{run}\n[serve]\n{serve}\n[serve.callers]\nalice = {{ token = \"{ALICE}\" }}\nbob = {{ token_env = \"WAYPOINT_TEST_BOB\" }}\n"
        ),
    )
    .unwrap();
    path.display().to_string()
}

fn inspector() -> Option<PathBuf> {
    common::mcp_peers(&[common::INSPECTOR], "the MCP-over-HTTP test")
        .map(|d| d.join(common::INSPECTOR))
}

/// The official Inspector's CLI against `server`'s `/mcp`, carrying `token`; its stdout
/// parsed, or its stderr when it fails.
fn inspect_http(
    cli: &Path,
    server: &Server,
    token: Option<&str>,
    args: &[&str],
) -> Result<Value, String> {
    let mut cmd = Command::new("node");
    cmd.arg(cli)
        .arg(format!("{}/mcp", server.base))
        .args(["--transport", "http"]);
    if let Some(t) = token {
        cmd.args(["--header", &format!("Authorization: Bearer {t}")]);
    }
    let out = cmd.args(args).output().unwrap();
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(serde_json::from_str(&String::from_utf8_lossy(&out.stdout)).unwrap())
}

#[test]
fn the_official_inspector_lists_the_tools_and_plans_over_http() {
    let Some(cli) = inspector() else { return };
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), "");
    let store = format!("sqlite:{}", dir.path().join("h.db").display());
    let server = Server::http(dir.path(), &[("--store", &store), ("--config", &cfg)], &[]);
    let inspect = |token, args: &[&str]| {
        inspect_http(&cli, &server, Some(token), args)
            .unwrap_or_else(|e| panic!("inspector failed: {e}"))
    };
    let listed = inspect(ALICE, &["--method", "tools/list"]);
    let mut names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "approve_run",
            "cancel_run",
            "forget",
            "history",
            "plan",
            "resume_run",
            "route",
            "run",
            "understand"
        ]
    );
    let plan = [
        "--method",
        "tools/call",
        "--tool-name",
        "plan",
        "--tool-arg",
    ];
    let planned = inspect(
        ALICE,
        &[&plan[..], &["request=find CommandRouter"]].concat(),
    );
    let steps = &planned["structuredContent"]["steps"];
    assert_eq!(steps[0]["tool"], "find_symbol", "{planned}");
    assert_eq!(steps[0]["args"]["name"], "CommandRouter");
    let bad = inspect(ALICE, &[&plan[..], &["request= "]].concat());
    assert_eq!(bad["isError"], true, "{bad}");

    // The token names the caller: Alice's plan is in her history, not in Bob's.
    let history = ["--method", "tools/call", "--tool-name", "history"];
    let rows = |token| {
        inspect(token, &history)["structuredContent"]["rows"]
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!(rows(ALICE), 1);
    assert_eq!(rows(BOB), 0);
    // No token, or a wrong one: the client cannot even connect.
    for token in [None, Some("not-a-token-this-server-knows")] {
        let refused = inspect_http(&cli, &server, token, &["--method", "tools/list"]);
        assert!(
            refused
                .as_ref()
                .is_err_and(|e| e.contains("401") || e.contains("unauthorized")),
            "{refused:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn callers_cannot_read_or_forget_each_others_history() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), "");
    let store = format!("sqlite:{}", dir.path().join("h.db").display());
    // Bob's token comes from the environment (`token_env`), Alice's from the file.
    let server = Server::http(dir.path(), &[("--store", &store), ("--config", &cfg)], &[]);
    let b = &server.base;

    let plan = json!({"request": "find CommandRouter"});
    let (s, body) = call("POST", &format!("{b}/v1/plan"), None, Some(plan)).await;
    assert_eq!(s, 401, "{body}");
    assert_eq!(body["error"]["code"], "unauthorized");
    let (s, _) = call("GET", &format!("{b}/v1/history"), Some("no-such"), None).await;
    assert_eq!(s, 401);

    for r in ["find CommandRouter", "read the file notes.txt"] {
        let (s, body) = call(
            "POST",
            &format!("{b}/v1/plan"),
            Some(ALICE),
            Some(json!({"request": r})),
        )
        .await;
        assert_eq!(s, 200, "{body}");
    }
    let (s, _) = call(
        "POST",
        &format!("{b}/v1/plan"),
        Some(BOB),
        Some(json!({"request": "find CommandRouter"})),
    )
    .await;
    assert_eq!(s, 200);

    let history = async |token| {
        call("GET", &format!("{b}/v1/history"), Some(token), None)
            .await
            .1["rows"]
            .as_array()
            .unwrap()
            .clone()
    };
    let alice_rows = history(ALICE).await;
    assert_eq!(alice_rows.len(), 2);
    assert!(alice_rows.iter().all(|r| r["caller"] == "alice"));
    assert_eq!(history(BOB).await.len(), 1);

    // Bob forgets everything, then tries Alice's request by its hash: only his go.
    let (_, gone) = call(
        "DELETE",
        &format!("{b}/v1/history?all=true"),
        Some(BOB),
        None,
    )
    .await;
    assert_eq!(gone["forgotten"], 1);
    let sha = alice_rows[0]["intent_sha"].as_str().unwrap();
    let (_, gone) = call(
        "DELETE",
        &format!("{b}/v1/history?intent={sha}"),
        Some(BOB),
        None,
    )
    .await;
    assert_eq!(gone["forgotten"], 0);
    assert_eq!(history(ALICE).await.len(), 2);
    assert!(history(BOB).await.is_empty());

    // The same isolation over MCP: the caller comes from the token, not the transport.
    let mcp = async |token| {
        let rpc = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                         "params": {"name": "history", "arguments": {}}});
        call("POST", &format!("{b}/mcp"), Some(token), Some(rpc))
            .await
            .1["result"]["structuredContent"]["rows"]
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!(mcp(ALICE).await, 2);
    assert_eq!(mcp(BOB).await, 0);
    let (s, _) = call(
        "POST",
        &format!("{b}/mcp"),
        None,
        Some(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})),
    )
    .await;
    assert_eq!(s, 401, "MCP needs a token too");
}

/// Submits Alice's `request` as a run and waits until it stands at `status`; answers
/// its id and `GET /v1/runs/{id}` then.
async fn submit_until(server: &Server, request: &str, status: &str) -> (String, Value) {
    let b = &server.base;
    let (s, sub) = call(
        "POST",
        &format!("{b}/v1/runs"),
        Some(ALICE),
        Some(json!({ "request": request })),
    )
    .await;
    assert_eq!(s, 202, "{sub}");
    let id = sub["run_id"].as_str().unwrap().to_string();
    let reached = wait_for(Duration::from_secs(30), async || {
        let (_, r) = call("GET", &format!("{b}/v1/runs/{id}"), Some(ALICE), None).await;
        (r["status"] == status).then_some(r)
    })
    .await
    .unwrap_or_else(|| panic!("the run did not reach {status}:\n{}", server.log()));
    (id, reached)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callers_runs_are_invisible_to_other_callers() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "hello").unwrap();
    let cfg = config(dir.path(), "allow_run = true\nworkers = 1");
    let store = format!("sqlite:{}", dir.path().join("h.db").display());
    let server = Server::http(dir.path(), &[("--store", &store), ("--config", &cfg)], &[]);
    let b = &server.base;
    // Runs: Alice's run is hers alone.
    let (id, done) = submit_until(&server, "read the file notes.txt", "ok").await;
    assert_eq!(
        done["report"]["steps"][0]["output"]["content"], "hello",
        "{done}"
    );
    assert!(done["claimed_by"].is_string());
    let (s, r) = call("GET", &format!("{b}/v1/runs/{id}"), Some(BOB), None).await;
    assert_eq!(s, 404, "{r}");
    let (_, listed) = call("GET", &format!("{b}/v1/runs"), Some(BOB), None).await;
    assert_eq!(listed["runs"].as_array().unwrap().len(), 0);
    let (_, listed) = call("GET", &format!("{b}/v1/runs"), Some(ALICE), None).await;
    assert_eq!(listed["runs"][0]["run_id"], id.as_str());
    // Issue 20, finding 6: a query parameter the API does not take is an error.
    for query in ["offset=10", "limt=5"] {
        let (s, r) = call("GET", &format!("{b}/v1/runs?{query}"), Some(ALICE), None).await;
        assert_eq!(s, 400, "{query}: {r}");
    }
    let (s, _) = call(
        "GET",
        &format!("{b}/v1/history?offset=10"),
        Some(ALICE),
        None,
    )
    .await;
    assert_eq!(s, 400);
}

/// Issue finding 1, through the server: a run that writes stops `needs_approval`
/// with the call it holds, and the approve operation (the caller's own runs only, the
/// steps the run has) lets it finish.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finding_1_a_server_run_that_writes_waits_until_its_caller_approves_it() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), "allow_run = true\nworkers = 1");
    let store = format!("sqlite:{}", dir.path().join("h.db").display());
    let server = Server::http(dir.path(), &[("--store", &store), ("--config", &cfg)], &[]);
    let b = &server.base;
    let (id, held) = submit_until(
        &server,
        "remember that the launch is on Friday",
        "needs_approval",
    )
    .await;
    let q = &held["report"]["questions"][0];
    assert_eq!(q["expects"], "approve", "{held}");
    assert_eq!(q["call"]["tool"], "memory_store", "{held}");
    assert!(held["report"]["steps"].as_array().unwrap().is_empty());

    let approve = format!("{b}/v1/runs/{id}/approve");
    let (s, r) = call("POST", &approve, Some(BOB), Some(json!({"all": true}))).await;
    assert_eq!(s, 404, "another caller approved it: {r}");
    let (s, r) = call(
        "POST",
        &approve,
        Some(ALICE),
        Some(json!({"steps": ["s9"]})),
    )
    .await;
    assert_eq!(s, 400, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no step s9"),
        "{r}"
    );
    let (s, r) = call("POST", &approve, Some(ALICE), Some(json!({}))).await;
    assert_eq!(s, 400, "{r}");
    let (s, r) = call(
        "POST",
        &approve,
        Some(ALICE),
        Some(json!({"steps": ["s1"]})),
    )
    .await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["status"], "ok", "{r}");
    assert_eq!(r["steps"][0]["tool"], "memory_store", "{r}");
    let (s, r) = call(
        "POST",
        &approve,
        Some(ALICE),
        Some(json!({"steps": ["s1"]})),
    )
    .await;
    assert_eq!(s, 400, "a finished run was approved again: {r}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_plans_like_the_cli_and_learns_per_caller() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), "");
    let store = format!("sqlite:{}", dir.path().join("h.db").display());
    let server = Server::http(
        dir.path(),
        &[
            ("--store", &store),
            ("--config", &cfg),
            ("--learn-after", "2"),
        ],
        &[],
    );
    let plan = async |token| {
        let body = json!({"request": "find CommandRouter and then run the tests"});
        let (s, p) = call(
            "POST",
            &format!("{}/v1/plan", server.base),
            Some(token),
            Some(body),
        )
        .await;
        assert_eq!(s, 200, "{p}");
        p
    };
    for _ in 0..3 {
        assert_eq!(
            plan(ALICE).await["planner"],
            "deterministic",
            "plans teach nothing"
        );
    }
    // Alice accepts the plan (from the CLI, on the same store): her next plan is
    // learned once the server re-reads the store (within a second)…
    let accepted = common::waypoint(&[
        "--store",
        &store,
        "--caller",
        "alice",
        "plans",
        "accept",
        "find CommandRouter and then run the tests",
    ]);
    assert!(accepted.status.success(), "{}", common::stderr(&accepted));
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut learned = plan(ALICE).await;
    while learned["planner"] != "learned" && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
        learned = plan(ALICE).await;
    }
    assert_eq!(learned["planner"], "learned", "{learned}");
    assert_eq!(learned["steps"][0]["tool"], "find_symbol");
    // …and Bob's is not: learning is per caller.
    assert_eq!(plan(BOB).await["planner"], "deterministic");
    // The learned sequence shows in Alice's my-plans, with the server's rule.
    let (_, mine) = call(
        "GET",
        &format!("{}/v1/history?plans=true", server.base),
        Some(ALICE),
        None,
    )
    .await;
    assert!(mine["plans"][0]["stable"].is_array(), "{mine}");
}

/// Submits Alice's `plan` as a run and answers the 202's `Location` and the run's id.
async fn submit_plan(base: &str, plan: Value) -> (String, String) {
    let res = client()
        .post(format!("{base}/v1/runs"))
        .header("authorization", format!("Bearer {ALICE}"))
        .header("content-type", "application/json")
        .body(json!({ "plan": plan }).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 202);
    let location = res.headers()["location"].to_str().unwrap().to_string();
    let body: Value = res.json().await.unwrap();
    (location, body["run_id"].as_str().unwrap().to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue_20_finding_3_the_api_answers_resumes_and_cancels_runs() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), "allow_run = true\nworkers = 1");
    let store = format!("sqlite:{}", dir.path().join("h.db").display());
    let server = Server::http(dir.path(), &[("--store", &store), ("--config", &cfg)], &[]);
    let b = server.base.clone();
    let ask = json!({"plan_id": "pl_ask", "steps": [{"id": "s1", "order": 1, "kind": "ask_user",
        "tool": "clarify", "group": 1, "args": {"question": "Which branch?"}}]});
    let waits = async |location: &str| {
        wait_for(Duration::from_secs(30), async || {
            let (_, r) = call("GET", &format!("{b}{location}"), Some(ALICE), None).await;
            (r["status"] == "needs_input").then_some(r)
        })
        .await
        .unwrap_or_else(|| panic!("the run did not stop for input:\n{}", server.log()))
    };
    let (location, id) = submit_plan(&b, ask.clone()).await;
    assert_eq!(location, format!("/v1/runs/{id}"));
    let held = waits(&location).await;
    assert_eq!(held["report"]["questions"][0]["key"], "s1", "{held}");
    let resume = format!("{b}/v1/runs/{id}/resume");
    // A key the run does not ask: 400, and the run waits as it was.
    let (s, r) = call(
        "POST",
        &resume,
        Some(ALICE),
        Some(json!({"answers": {"path": "main"}})),
    )
    .await;
    assert_eq!(s, 400, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("does not ask `path`"),
        "{r}"
    );
    let (s, r) = call(
        "POST",
        &resume,
        Some(BOB),
        Some(json!({"answers": {"s1": "main"}})),
    )
    .await;
    assert_eq!(s, 404, "another caller resumed it: {r}");
    let (s, r) = call(
        "POST",
        &resume,
        Some(ALICE),
        Some(json!({"answers": {"s1": "main"}})),
    )
    .await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["status"], "ok", "{r}");
    assert_eq!(r["steps"][0]["output"]["answer"], "main", "{r}");

    // Cancel: a stopped run is cancelled for good; an ended one is a conflict.
    let (location, second) = submit_plan(&b, ask).await;
    waits(&location).await;
    let cancel = format!("{b}/v1/runs/{second}/cancel");
    let (s, r) = call("POST", &cancel, Some(ALICE), Some(json!({}))).await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["status"], "cancelled", "{r}");
    let (s, r) = call(
        "POST",
        &format!("{b}/v1/runs/{second}/resume"),
        Some(ALICE),
        Some(json!({"answers": {"s1": "main"}})),
    )
    .await;
    assert_eq!(s, 400, "a cancelled run went on: {r}");
    let (s, r) = call(
        "POST",
        &format!("{b}/v1/runs/{id}/cancel"),
        Some(ALICE),
        Some(json!({})),
    )
    .await;
    assert_eq!(s, 409, "{r}");
}

/// The parts of a plan that must not depend on the face it came through.
fn plan_shape(plan: &Value) -> Value {
    let steps: Vec<Value> = plan["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| json!([s["tool"], s["args"], s["group"], s["input_refs"]]))
        .collect();
    json!({"steps": steps, "complexity": plan["complexity"], "planner": plan["planner"]})
}

/// One request through the CLI, MCP over stdio and the JSON API, all on one store as
/// one caller: the same plan each time, one history row per plan with the same hashes,
/// and what the history learned from any face is used by every face.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_mcp_and_http_faces_plan_record_and_learn_alike() {
    let Some(cli) = inspector() else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite:{}", dir.path().join("h.db").display());
    let request = "find CommandRouter and then run the tests";
    let globals = ["--store", &store, "--caller", "local", "--learn-after", "3"];
    let by_cli = || {
        let args = [&globals[..], &["plan", request, "--json"]].concat();
        let o = common::waypoint(&args);
        assert!(o.status.success(), "{}", common::stderr(&o));
        serde_json::from_str::<Value>(&common::stdout(&o)).unwrap()
    };
    let by_mcp = || {
        let o = Command::new("node")
            .arg(&cli)
            .arg(env!("CARGO_BIN_EXE_waypoint"))
            .args(globals)
            .args([
                "serve",
                "--stdio",
                "--method",
                "tools/call",
                "--tool-name",
                "plan",
            ])
            .args(["--tool-arg", &format!("request={request}")])
            .env("XDG_CONFIG_HOME", dir.path().join("xdg"))
            .env_remove("WAYPOINT_MODEL")
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
        v["structuredContent"].clone()
    };
    let server = Server::http(
        dir.path(),
        &[("--store", &store), ("--learn-after", "3")],
        &["--no-auth"],
    );
    let by_http = async || {
        let (s, p) = call(
            "POST",
            &format!("{}/v1/plan", server.base),
            None,
            Some(json!({ "request": request })),
        )
        .await;
        assert_eq!(s, 200, "{p}");
        p
    };
    let first = [by_cli(), by_mcp(), by_http().await];
    for p in &first {
        assert_eq!(plan_shape(p), plan_shape(&first[0]), "{p}");
        assert_eq!(p["planner"], "deterministic");
    }
    // Finding 10: three plans with the same tools (--learn-after 3) never ran, so they
    // teach nothing, whichever face made them.
    let again = [by_http().await, by_cli(), by_mcp()];
    for p in &again {
        assert_eq!(p["planner"], "deterministic", "planning alone taught: {p}");
    }
    // A person accepts the plan: the next one is learned, by whichever face asks (the
    // server re-reads what another process wrote within a second).
    let o = common::waypoint(&[&globals[..], &["plans", "accept", request]].concat());
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(
        common::stdout(&o).contains("accepted find_symbol"),
        "{}",
        common::stdout(&o)
    );
    let mut learned = vec![by_cli(), by_mcp()];
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let p = by_http().await;
        if p["planner"] == "learned" || Instant::now() > deadline {
            learned.push(p);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for p in &learned {
        assert_eq!(p["planner"], "learned", "{p}");
        assert_eq!(p["steps"][0]["tool"], "find_symbol");
    }
    let o = common::waypoint(&[&globals[..], &["history", "--json"]].concat());
    let rows: Value = serde_json::from_str(&common::stdout(&o)).unwrap();
    let rows = rows["rows"].as_array().unwrap();
    let outcomes: Vec<&str> = rows
        .iter()
        .map(|r| r["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(
        outcomes.iter().filter(|o| **o == "accepted").count(),
        1,
        "one acceptance, the rest plans: {outcomes:?}"
    );
    assert!(
        outcomes.iter().all(|o| *o == "accepted" || *o == "planned"),
        "no run happened, so no row says one did: {outcomes:?}"
    );
    same_request_and_tools(rows, &first[0]);
}

/// Every history row is of one request and caller, with the tools `plan` has.
fn same_request_and_tools(rows: &[Value], plan: &Value) {
    let planned: Vec<&Value> = plan["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["tool"])
        .collect();
    for r in rows {
        assert_eq!(r["intent_sha"], rows[0]["intent_sha"]);
        assert_eq!(r["caller"], "local");
        let tools: Vec<&Value> = r["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| &s["tool"])
            .collect();
        assert_eq!(tools, planned);
    }
}

/// The value of one metric in `/metrics`.
async fn metric(base: &str, name: &str) -> u64 {
    let text = client()
        .get(format!("{base}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse::<u64>().ok())
        .unwrap_or(0)
}

/// History is written behind the request; a kill -9 under load loses at most what was
/// not yet committed, never a row the server reported as flushed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_under_load_loses_no_row_the_server_reported_flushed() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite:{}", dir.path().join("h.db").display());
    let mut server = Server::http(dir.path(), &[("--store", &store)], &["--no-auth"]);
    let base = server.base.clone();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let answered = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let mut load = Vec::new();
    for w in 0..8 {
        let (base, stop, answered) = (base.clone(), stop.clone(), answered.clone());
        load.push(tokio::spawn(async move {
            let client = client();
            let mut i = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let body = json!({"request": format!("find Router{w}x{i} and run the tests")});
                let sent = client
                    .post(format!("{base}/v1/plan"))
                    .header("content-type", "application/json")
                    .body(body.to_string())
                    .send()
                    .await;
                if sent.is_ok_and(|r| r.status().is_success()) {
                    answered.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
                i += 1;
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let flushed = metric(&base, "waypoint_history_rows_flushed").await;
    // Keep the load on a little longer so some rows are in flight at the kill.
    tokio::time::sleep(Duration::from_millis(100)).await;
    server.child.kill().unwrap(); // SIGKILL: no flush at shutdown
    server.child.wait().unwrap();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for l in load {
        l.await.unwrap();
    }
    let o = common::waypoint(&["--store", &store, "history", "--json", "--limit", "1000000"]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let rows = serde_json::from_str::<Value>(&common::stdout(&o)).unwrap()["rows"]
        .as_array()
        .unwrap()
        .len() as u64;
    let answered = answered.load(std::sync::atomic::Ordering::Relaxed);
    assert!(flushed > 50, "the load ran: {flushed} rows flushed");
    assert!(
        rows >= flushed,
        "every row reported flushed is in the store: {rows} < {flushed}"
    );
    assert!(
        rows <= answered,
        "{rows} rows for {answered} answered plans"
    );
    eprintln!("answered {answered}, reported flushed {flushed}, in the store {rows}");
}

#[test]
fn a_configured_model_plans_through_the_server() {
    let Some(url) = common::local_llm("the server's model test") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // A small local model takes seconds; the request may take minutes.
    let cfg = dir.path().join("waypoint.toml");
    std::fs::write(
        &cfg,
        // The guard off (from the file, so the key reaches the server): what is tested is
        // that the model's answer comes back.
        "[serve]\nauth = \"off\"\nrequest_timeout_ms = 300000\n[planner]\nassisted_floor = 0.0\n",
    )
    .unwrap();
    let server = Server::http(
        dir.path(),
        &[
            ("--store", "none"),
            ("--config", cfg.to_str().unwrap()),
            ("--planner", "llm"),
            ("--model", "llamacpp/gemma3-270m"),
            ("--llm-base-url", &url),
            ("--llm-timeout", "120"),
        ],
        &[],
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    let body =
        json!({"request": "fetch https://blog.rust-lang.org/ and translate it into Spanish"});
    let (s, plan) = rt.block_on(call(
        "POST",
        &format!("{}/v1/plan", server.base),
        None,
        Some(body),
    ));
    assert_eq!(s, 200, "{plan}");
    assert_eq!(
        plan["planner"],
        "llm",
        "{}\n{}",
        plan["warnings"],
        server.log()
    );
    assert_eq!(plan["model"], "llamacpp/gemma3-270m");
    assert!(plan["usage"]["completion_tokens"].as_u64().unwrap() > 0);
}

async fn wait_for<T>(limit: Duration, mut probe: impl AsyncFnMut() -> Option<T>) -> Option<T> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if let Some(v) = probe().await {
            return Some(v);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guards_refuse_foreign_hosts_big_bodies_and_unsafe_configs() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), "max_body_bytes = 2048");
    let server = Server::http(dir.path(), &[("--store", "none"), ("--config", &cfg)], &[]);
    let b = &server.base;
    let big = json!({"request": "x".repeat(4096)});
    let (s, body) = call("POST", &format!("{b}/v1/plan"), Some(ALICE), Some(big)).await;
    assert_eq!(s, 413, "{body}");
    assert_eq!(body["error"]["code"], "too_large");
    let (s, body) = call(
        "POST",
        &format!("{b}/v1/plan"),
        Some(ALICE),
        Some(json!({"requst": "typo"})),
    )
    .await;
    assert_eq!(s, 400);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("requst"),
        "{body}"
    );
    let res = client()
        .get(format!("{b}/healthz"))
        .header("host", "rebinding.example")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 403);
    // Runs are off unless the config allows them.
    let (s, body) = call(
        "POST",
        &format!("{b}/v1/runs"),
        Some(ALICE),
        Some(json!({"request": "find CommandRouter"})),
    )
    .await;
    assert_eq!(s, 403);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("allow_run")
    );
    let (s, metrics) = {
        let res = client().get(format!("{b}/metrics")).send().await.unwrap();
        (res.status().as_u16(), res.text().await.unwrap())
    };
    assert_eq!(s, 200);
    assert!(
        metrics.contains("waypoint_http_requests_total{route=\"/v1/plan\",status=\"413\"} 1"),
        "{metrics}"
    );
    assert!(metrics.contains("waypoint_http_refused_total{reason=\"host\"} 1"));
    let (_, doc) = call("GET", &format!("{b}/openapi.json"), None, None).await;
    assert_eq!(doc["openapi"], "3.1.0");
    assert!(
        doc["components"]["schemas"]["Plan"].is_object(),
        "schemas come from the types"
    );

    // No tokens off loopback; no callers at all with tokens on.
    let open = Server::try_start(
        dir.path(),
        &[
            "--store",
            "none",
            "serve",
            "--http",
            "0.0.0.0:0",
            "--no-auth",
        ],
    );
    assert!(
        open.as_ref()
            .is_err_and(|log| log.contains("only allowed on a loopback address")),
        "{:?}",
        open.err()
    );
    let nobody = Server::try_start(
        dir.path(),
        &["--store", "none", "serve", "--http", "127.0.0.1:0"],
    );
    assert!(
        nobody
            .as_ref()
            .is_err_and(|log| log.contains("[serve.callers]")),
        "{:?}",
        nobody.err()
    );
}

const ONE_TOOL: &str =
    "tools:\n  - name: git_status\n    description: Show the working tree status\n";
const TWO_TOOLS: &str = "tools:\n  - name: git_status\n    description: Show the working tree status\n  - name: git_log\n    description: Show the commit log\n";

/// Replaces a file the server watches in one step: a plain write truncates first, and a
/// reload that reads the empty file between the two would serve an empty catalog.
fn replace(path: &std::path::Path, text: &str) {
    // Staged outside the watched folder, so the staging file itself is never seen.
    let tmp = path.parent().unwrap().with_extension("staged");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

async fn tools_served(b: &str) -> (u64, Value) {
    let (_, h) = call("GET", &format!("{b}/healthz"), None, None).await;
    (h["catalog"]["tools"].as_u64().unwrap(), h)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_catalog_reloads_on_change_and_keeps_the_old_one_on_error() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("catalog");
    std::fs::create_dir(&catalog).unwrap();
    std::fs::write(catalog.join("tools.yaml"), ONE_TOOL).unwrap();
    let cfg = dir.path().join("waypoint.toml");
    std::fs::write(&cfg, "[serve]\nauth = \"off\"\nwatch_ms = 100\n").unwrap();
    let server = Server::http(
        dir.path(),
        &[
            ("--store", "none"),
            ("--config", cfg.to_str().unwrap()),
            ("--catalog", catalog.to_str().unwrap()),
        ],
        &[],
    );
    let b = server.base.clone();
    assert_eq!(tools_served(&b).await.0, 1);
    replace(&catalog.join("tools.yaml"), TWO_TOOLS);
    wait_for(Duration::from_secs(20), async || {
        (tools_served(&b).await.0 == 2).then_some(())
    })
    .await
    .unwrap_or_else(|| panic!("no reload after a change:\n{}", server.log()));

    replace(&catalog.join("tools.yaml"), "tools:\n  - name: [broken\n");
    let (tools, health) = wait_for(Duration::from_secs(20), async || {
        let (n, h) = tools_served(&b).await;
        (h["status"] == "degraded").then_some((n, h))
    })
    .await
    .unwrap_or_else(|| panic!("a broken catalog was not reported:\n{}", server.log()));
    assert_eq!(tools, 2, "the old catalog stays in service");
    assert!(
        health["catalog"]["reload_error"]
            .as_str()
            .unwrap()
            .contains("tools.yaml"),
        "{health}"
    );
    assert!(server.log().contains("previous one stays in service"));
    let (s, _) = call(
        "POST",
        &format!("{b}/v1/plan"),
        None,
        Some(json!({"request": "show the commit log"})),
    )
    .await;
    assert_eq!(s, 200, "planning goes on with the old catalog");
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_reloads_the_catalog() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tools.yaml");
    std::fs::write(&file, ONE_TOOL).unwrap();
    let cfg = dir.path().join("waypoint.toml");
    // watch_ms = 0: only the signal reloads.
    std::fs::write(&cfg, "[serve]\nauth = \"off\"\nwatch_ms = 0\n").unwrap();
    let server = Server::http(
        dir.path(),
        &[
            ("--store", "none"),
            ("--config", cfg.to_str().unwrap()),
            ("--catalog", file.to_str().unwrap()),
        ],
        &[],
    );
    let b = server.base.clone();
    std::fs::write(&file, TWO_TOOLS).unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(tools_served(&b).await.0, 1, "no reload without the signal");
    let killed = Command::new("kill")
        .args(["-HUP", &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    wait_for(Duration::from_secs(20), async || {
        (tools_served(&b).await.0 == 2).then_some(())
    })
    .await
    .unwrap_or_else(|| panic!("SIGHUP did not reload:\n{}", server.log()));
    // The log line is read from the server's stderr on another thread; give it a moment.
    wait_for(Duration::from_secs(5), async || {
        server
            .log()
            .contains("catalog reloaded (SIGHUP)")
            .then_some(())
    })
    .await
    .unwrap_or_else(|| panic!("the reload was not logged:\n{}", server.log()));
}

/// A fresh PostgreSQL database for one test, dropped after; `None` (said loudly) when
/// there is no server to make it on.
struct Database {
    name: String,
    url: String,
}

fn psql(sql: &str) -> Result<(), String> {
    let out = Command::new("psql")
        .args([
            "-h",
            "127.0.0.1",
            "-U",
            "postgres",
            "-d",
            "test",
            "-v",
            "ON_ERROR_STOP=1",
            "-c",
            sql,
        ])
        .output()
        .map_err(|e| format!("cannot run psql: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

impl Database {
    fn create(tag: &str) -> Option<Self> {
        let name = format!("waypoint_{tag}_{}", std::process::id());
        let made = psql(&format!("DROP DATABASE IF EXISTS {name}"))
            .and_then(|()| psql(&format!("CREATE DATABASE {name}")));
        if let Err(e) = made {
            eprintln!(
                "\n!!!!!!!! cannot make a PostgreSQL database: {e}\n!!!!!!!! the two-instance test did NOT run\n"
            );
            assert!(
                std::env::var_os("WAYPOINT_REQUIRE_POSTGRES").is_none(),
                "WAYPOINT_REQUIRE_POSTGRES is set and PostgreSQL is unreachable: {e}"
            );
            return None;
        }
        Some(Self {
            url: format!("postgres://postgres@127.0.0.1:5432/{name}"),
            name,
        })
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        let _ = psql(&format!(
            "DROP DATABASE IF EXISTS {} WITH (FORCE)",
            self.name
        ));
    }
}

/// Submits `n` one-step runs (`stamp` with tags t0000…) across the instances and both
/// callers, 16 at a time.
async fn submit_stamps(bases: &[String; 2], n: usize) {
    for chunk in (0..n).collect::<Vec<_>>().chunks(16) {
        let mut tasks = Vec::new();
        for &i in chunk {
            let base = bases[i % 2].clone();
            let token = if i % 3 == 0 { BOB } else { ALICE };
            let plan = json!({"plan_id": format!("pl_{i}"), "steps": [{"id": "s1", "order": 1, "kind": "tool",
                "tool": "stamp", "group": 1, "args": {"tag": format!("t{i:04}")}}]});
            tasks.push(tokio::spawn(async move {
                let (s, body) = call(
                    "POST",
                    &format!("{base}/v1/runs"),
                    Some(token),
                    Some(json!({"plan": plan})),
                )
                .await;
                assert_eq!(s, 202, "{body}");
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
    }
}

/// `waypoint_runs_claimed_total` of one instance.
async fn claimed(base: &str) -> usize {
    usize::try_from(metric(base, "waypoint_runs_claimed_total").await).unwrap_or(usize::MAX)
}

/// The `stamp` catalog and a config that runs what is submitted: a batch nobody
/// watches, so the approval gate is off for it.
fn stamp_setup(dir: &Path) -> (PathBuf, String) {
    let catalog = dir.join("stamp.yaml");
    std::fs::write(
        &catalog,
        "tools:\n  - name: stamp\n    description: Append a tag to the executions log.\n    input_schema: {type: object, properties: {tag: {type: string}}, required: [tag]}\n    effects: write\n    run: {command: [sh, -c, 'echo \"$0\" >> executions.log', \"{tag}\"]}\n",
    )
    .unwrap();
    let cfg = config_with_run(dir, "allow_run = true\nworkers = 4", "approve = \"never\"");
    (catalog, cfg)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_on_postgres_execute_each_of_1000_runs_exactly_once() {
    const RUNS: usize = 1000;
    let Some(db) = Database::create("claims") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (catalog, cfg) = stamp_setup(dir.path());
    let start = |name: &str| {
        Server::http(
            dir.path(),
            &[
                ("--store", &db.url),
                ("--config", &cfg),
                ("--catalog", catalog.to_str().unwrap()),
            ],
            &["--instance", name],
        )
    };
    let (a, b) = (start("a"), start("b"));
    let bases = [a.base.clone(), b.base.clone()];

    // A caller is the same caller on every instance: a plan made through one is in
    // their history read through the other, and only theirs.
    let body = json!({"request": "stamp the build"});
    let (s, _) = call(
        "POST",
        &format!("{}/v1/plan", bases[1]),
        Some(ALICE),
        Some(body),
    )
    .await;
    assert_eq!(s, 200);
    let rows = async |base: &str, token| {
        let (_, h) = call("GET", &format!("{base}/v1/history"), Some(token), None).await;
        h["rows"].as_array().unwrap().len()
    };
    // Instance b writes its history behind the request: the row is in the shared store
    // within b's flush window (docs/server.md), so a reads it soon, not at once.
    let seen = wait_for(Duration::from_secs(5), async || {
        (rows(&bases[0], ALICE).await == 1).then_some(())
    })
    .await;
    assert!(seen.is_some(), "a plan made through b shows in a's history");
    assert_eq!(rows(&bases[0], BOB).await, 0);

    submit_stamps(&bases, RUNS).await;
    let log = dir.path().join("executions.log");
    let lines = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .count()
    };
    wait_for(Duration::from_mins(5), async || {
        (lines() >= RUNS).then_some(())
    })
    .await
    .unwrap_or_else(|| {
        panic!(
            "{} of {RUNS} runs executed\n{}\n{}",
            lines(),
            a.log(),
            b.log()
        )
    });
    // A little longer, so a second execution would have time to show up.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut tags: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    tags.sort();
    let expected: Vec<String> = (0..RUNS).map(|i| format!("t{i:04}")).collect();
    assert_eq!(tags, expected, "every run executed exactly once");

    // Both instances took part, and every run ended ok for its own caller.
    let (ca, cb) = (claimed(&bases[0]).await, claimed(&bases[1]).await);
    assert_eq!(ca + cb, RUNS, "claims: a {ca}, b {cb}");
    assert!(ca > 0 && cb > 0, "claims: a {ca}, b {cb}");
    let finished = wait_for(Duration::from_mins(1), async || {
        let mut ok = 0;
        for token in [ALICE, BOB] {
            let (_, listed) = call(
                "GET",
                &format!("{}/v1/runs?limit=1000", bases[0]),
                Some(token),
                None,
            )
            .await;
            ok += listed["runs"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|r| r["status"] == "ok")
                .count();
        }
        (ok == RUNS).then_some(ok)
    })
    .await;
    assert_eq!(finished, Some(RUNS));
    eprintln!("1000 runs: instance a claimed {ca}, instance b {cb}");
    drop((a, b));
    drop(db);
}

/// The shape of a JSON value: object keys with their shapes, the shapes an array's
/// items take, the type of a scalar. `null` matches anything optional, so it is kept
/// apart only where it is all there is.
fn shape(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), shape(v)))
                .collect(),
        ),
        Value::Array(items) => {
            let mut kinds: Vec<Value> = items.iter().map(shape).collect();
            kinds.sort_by_key(ToString::to_string);
            kinds.dedup();
            // Items of one kind may differ in which optional fields they carry.
            Value::Array(kinds.into_iter().take(1).collect())
        }
        Value::String(_) => json!("string"),
        Value::Number(n) if n.is_f64() => json!("number"),
        Value::Number(_) => json!("integer"),
        Value::Bool(_) => json!("boolean"),
        Value::Null => json!("null"),
    }
}

/// Issue 20, "one contract": every operation answers the same JSON from the CLI's
/// `--json` and from the API, and both answers hold to the operation's generated schema
/// (docs/operations.schema.json).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_operation_answers_the_cli_and_the_api_with_one_schema() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "hello").unwrap();
    let cfg = config(dir.path(), "allow_run = true\nworkers = 1");
    let store = format!("sqlite:{}", dir.path().join("h.db").display());
    let server = Server::http(dir.path(), &[("--store", &store), ("--config", &cfg)], &[]);
    let b = server.base.clone();
    let cli = |args: &[&str]| -> Value {
        let mut all = vec!["--store", store.as_str(), "--caller", "alice"];
        all.extend(args);
        let o = common::waypoint(&all);
        assert!(o.status.success(), "{args:?}: {}", common::stderr(&o));
        serde_json::from_str(&common::stdout(&o))
            .unwrap_or_else(|e| panic!("{args:?} printed no JSON ({e}): {}", common::stdout(&o)))
    };
    let api = async |method: &str, path: &str, body: Option<Value>| -> Value {
        let (s, v) = call(method, &format!("{b}{path}"), Some(ALICE), body).await;
        assert_eq!(s, 200, "{method} {path}: {v}");
        v
    };
    let (ok_run, _) = submit_until(&server, "read the file notes.txt", "ok").await;
    let held = held_runs(&server, 6).await;
    let request = json!({"request": "read the file notes.txt"});
    let answers: Vec<(&str, Value, Value)> = vec![
        (
            "plan",
            cli(&["plan", "read the file notes.txt", "--json"]),
            api("POST", "/v1/plan", Some(request.clone())).await,
        ),
        (
            "route",
            cli(&["route", "read the file notes.txt", "--json"]),
            api("POST", "/v1/route", Some(request.clone())).await,
        ),
        (
            "understand",
            cli(&["understand", "read the file notes.txt", "--json"]),
            api("POST", "/v1/understand", Some(request)).await,
        ),
        (
            "history",
            cli(&["history", "--limit", "2", "--json"]),
            api("GET", "/v1/history?limit=2", None).await,
        ),
        (
            "history",
            cli(&["history", "--plans", "--json"]),
            api("GET", "/v1/history?plans=true", None).await,
        ),
        (
            "forget",
            cli(&["forget", "--intent", "0000000000000000", "--json"]),
            api("DELETE", "/v1/history?intent=0000000000000000", None).await,
        ),
        (
            "listRuns",
            cli(&["runs", "--limit", "2", "--json"]),
            api("GET", "/v1/runs?limit=2", None).await,
        ),
        (
            "getRun",
            cli(&["runs", "show", &ok_run, "--json"]),
            api("GET", &format!("/v1/runs/{ok_run}"), None).await,
        ),
        (
            "approveRun",
            cli(&["resume", &held[0], "--approve", "s1", "--json"]),
            api(
                "POST",
                &format!("/v1/runs/{}/approve", held[1]),
                Some(json!({"steps": ["s1"]})),
            )
            .await,
        ),
        (
            "resumeRun",
            cli(&["resume", &held[2], "--approve", "s1", "--json"]),
            api(
                "POST",
                &format!("/v1/runs/{}/resume", held[3]),
                Some(json!({"approve": ["s1"]})),
            )
            .await,
        ),
        (
            "cancelRun",
            cli(&["runs", "cancel", &held[4], "--json"]),
            api(
                "POST",
                &format!("/v1/runs/{}/cancel", held[5]),
                Some(json!({})),
            )
            .await,
        ),
    ];
    hold_to_one_schema(&answers);
}

/// Each `(operation, CLI answer, API answer)` holds to the operation's schema, and the
/// two answers have one shape.
fn hold_to_one_schema(answers: &[(&str, Value, Value)]) {
    let doc = waypoint_app::contract::document();
    for (op, from_cli, from_api) in answers {
        let mut schema = doc["operations"][*op]["output"].clone();
        schema["$defs"] = doc["$defs"].clone();
        let validator = jsonschema::validator_for(&schema).unwrap();
        for (face, answer) in [("CLI", from_cli), ("API", from_api)] {
            let errors: Vec<String> = validator
                .iter_errors(answer)
                .map(|e| format!("{}: {e}", e.instance_path()))
                .collect();
            assert!(
                errors.is_empty(),
                "{op} from the {face}: {errors:?}\n{answer:#}"
            );
        }
        assert_eq!(
            shape(from_cli),
            shape(from_api),
            "{op}: the CLI and the API answer differently\nCLI: {from_cli:#}\nAPI: {from_api:#}"
        );
    }
}

/// `n` runs of the server that wait for their caller's approval.
async fn held_runs(server: &Server, n: usize) -> Vec<String> {
    let mut ids = Vec::new();
    for _ in 0..n {
        let request = "remember that the launch is on Friday";
        ids.push(submit_until(server, request, "needs_approval").await.0);
    }
    ids
}
