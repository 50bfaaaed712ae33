//! `waypoint serve --stdio` driven by the official MCP Inspector in CLI mode (npm
//! @modelcontextprotocol/inspector, installed by `scripts/mcp-peers`). Without it the
//! test says so loudly; with `WAYPOINT_REQUIRE_MCP=1` (set by `.ci/run`) it fails.

#![allow(
    clippy::unwrap_used,
    clippy::missing_panics_doc,
    reason = "tests fail loudly on purpose"
)]

mod common;

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn inspector() -> Option<PathBuf> {
    common::mcp_peers(&[common::INSPECTOR], "the MCP server test over stdio")
        .map(|d| d.join(common::INSPECTOR))
}

/// Runs the Inspector's CLI against `waypoint serve --stdio`; its stdout is the result.
fn inspect(cli: &PathBuf, args: &[&str]) -> Value {
    inspect_with(cli, "none", args)
}

fn inspect_with(cli: &PathBuf, store: &str, args: &[&str]) -> Value {
    let out = Command::new("node")
        .arg(cli)
        .args([
            env!("CARGO_BIN_EXE_waypoint"),
            "--store",
            store,
            "serve",
            "--stdio",
        ])
        .args(args)
        .env(
            "XDG_CONFIG_HOME",
            std::env::temp_dir().join("waypoint-serve-test"),
        )
        .env_remove("WAYPOINT_MODEL")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "inspector failed: {text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn the_official_inspector_lists_the_tools_and_plans_over_stdio() {
    let Some(cli) = inspector() else { return };
    let listed = inspect(&cli, &["--method", "tools/list"]);
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
    let plan_tool = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "plan")
        .unwrap();
    assert_eq!(
        plan_tool["inputSchema"]["required"],
        serde_json::json!(["request"])
    );

    let planned = inspect(
        &cli,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "plan",
            "--tool-arg",
            "request=what changed and then run the tests",
        ],
    );
    assert_ne!(planned["isError"], true, "{planned}");
    let tools: Vec<&str> = planned["structuredContent"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["tool"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["git_status", "run_tests"]);
    assert_eq!(planned["structuredContent"]["complexity"], "pack-chain");

    // Bad input is an error result the agent can read, not a crash.
    let refused = inspect(
        &cli,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "plan",
            "--tool-arg",
            "request= ",
        ],
    );
    assert_eq!(refused["isError"], true, "{refused}");
    let message = refused["content"][0]["text"].as_str().unwrap();
    assert!(message.to_lowercase().contains("empty"), "{message}");
}

#[test]
fn history_and_forget_work_on_the_callers_store() {
    let Some(cli) = inspector() else { return };
    let dir = std::env::temp_dir().join(format!("waypoint-serve-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let store = format!("sqlite:{}", dir.join("wp.db").display());
    // A plan made by the CLI leaves a history row for caller `local`.
    let made = Command::new(env!("CARGO_BIN_EXE_waypoint"))
        .args(["--store", &store, "plan", "what changed"])
        .env("XDG_CONFIG_HOME", &dir)
        .output()
        .unwrap();
    assert!(made.status.success());
    let rows = inspect_with(
        &cli,
        &store,
        &["--method", "tools/call", "--tool-name", "history"],
    );
    let listed = &rows["structuredContent"]["rows"];
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{rows}");
    assert_eq!(listed[0]["steps"][0]["tool"], "git_status");
    assert!(
        !rows.to_string().contains("what changed"),
        "history keeps no request text"
    );
    let bad = inspect_with(
        &cli,
        &store,
        &["--method", "tools/call", "--tool-name", "forget"],
    );
    assert_eq!(bad["isError"], true, "{bad}");
    let gone = inspect_with(
        &cli,
        &store,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "forget",
            "--tool-arg",
            "all=true",
        ],
    );
    assert_eq!(gone["structuredContent"]["forgotten"], 1, "{gone}");
    let off = inspect(&cli, &["--method", "tools/call", "--tool-name", "history"]);
    assert_eq!(off["isError"], true, "{off}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_resources_list_and_read() {
    let Some(cli) = inspector() else { return };
    let listed = inspect(&cli, &["--method", "resources/list"]);
    let uris: Vec<&str> = listed["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        uris,
        [
            "waypoint://routing-guide",
            "waypoint://my-plans",
            "waypoint://context-budgets",
            "waypoint://models"
        ]
    );
    let guide = inspect(
        &cli,
        &[
            "--method",
            "resources/read",
            "--uri",
            "waypoint://routing-guide",
        ],
    );
    let text = guide["contents"][0]["text"].as_str().unwrap();
    let guide: Value = serde_json::from_str(text).unwrap();
    let git_log = guide["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "git_log")
        .unwrap();
    assert_eq!(git_log["args"], serde_json::json!(["limit", "path"]));
    let budgets = inspect(
        &cli,
        &[
            "--method",
            "resources/read",
            "--uri",
            "waypoint://context-budgets",
        ],
    );
    let rows: Value =
        serde_json::from_str(budgets["contents"][0]["text"].as_str().unwrap()).unwrap();
    let local = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["pattern"] == "llamacpp/*")
        .unwrap();
    assert_eq!(
        local["prompt_tokens"].as_u64().unwrap() + local["reply_tokens"].as_u64().unwrap(),
        local["context_tokens"].as_u64().unwrap()
    );
}

#[test]
fn run_is_refused_unless_the_servers_config_allows_it() {
    let Some(cli) = inspector() else { return };
    let dir = std::env::temp_dir().join(format!("waypoint-serve-run-{}", std::process::id()));
    let _ = std::fs::create_dir_all(dir.join("work"));
    std::fs::write(dir.join("work/notes.txt"), "pub struct CommandRouter;\n").unwrap();
    let store = format!("sqlite:{}", dir.join("wp.db").display());
    let call = [
        "--method",
        "tools/call",
        "--tool-name",
        "run",
        "--tool-arg",
        "request=find CommandRouter",
    ];
    let refused = inspect_with(&cli, &store, &call);
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(
        refused["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("allow_run"),
        "{refused}"
    );

    let config = dir.join("waypoint.toml");
    std::fs::write(
        &config,
        format!(
            "[serve]\nallow_run = true\nworkdir = {:?}\n",
            dir.join("work").display().to_string()
        ),
    )
    .unwrap();
    let out = Command::new("node")
        .arg(&cli)
        .args([
            env!("CARGO_BIN_EXE_waypoint"),
            "--store",
            &store,
            "--config",
            config.to_str().unwrap(),
            "serve",
            "--stdio",
        ])
        .args(call)
        .output()
        .unwrap();
    let ran: Value = serde_json::from_slice(&out.stdout).unwrap();
    let report = &ran["structuredContent"];
    assert_eq!(report["status"], "ok", "{ran}");
    let read = report["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["tool"] == "read_file")
        .unwrap();
    assert_eq!(read["output"]["content"], "pub struct CommandRouter;\n");
    let _ = std::fs::remove_dir_all(&dir);
}
