//! `waypoint serve --stdio` driven by the official MCP Inspector in CLI mode (npm
//! @modelcontextprotocol/inspector, installed by `scripts/mcp-peers`). Without it the
//! test says so loudly; with `WAYPOINT_REQUIRE_MCP=1` (set by `.ci/run`) it fails.

#![allow(
    clippy::unwrap_used,
    clippy::missing_panics_doc,
    reason = "tests fail loudly on purpose"
)]

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn inspector() -> Option<PathBuf> {
    let dir = std::env::var_os("WAYPOINT_MCP_PEERS").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/mcp/node_modules"),
        PathBuf::from,
    );
    // The CLI itself, without the launcher that would start the web UI.
    let cli = dir.join("@modelcontextprotocol/inspector-cli/build/index.js");
    if cli.is_file() {
        return Some(cli);
    }
    eprintln!(
        "\n!!!!!!!! the MCP Inspector is not under {}; run `scripts/mcp-peers install`\n!!!!!!!! the MCP server test did NOT run\n",
        dir.display()
    );
    assert!(
        std::env::var_os("WAYPOINT_REQUIRE_MCP").is_none(),
        "WAYPOINT_REQUIRE_MCP is set and the MCP Inspector is not installed"
    );
    None
}

/// Runs the Inspector's CLI against `waypoint serve --stdio`; its stdout is the result.
fn inspect(cli: &PathBuf, args: &[&str]) -> Value {
    let out = Command::new("node")
        .arg(cli)
        .args([
            env!("CARGO_BIN_EXE_waypoint"),
            "--store",
            "none",
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
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["plan", "route", "understand"]);
    let schema = &listed["tools"][0]["inputSchema"];
    assert_eq!(schema["required"], serde_json::json!(["request"]));

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
