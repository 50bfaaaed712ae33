//! Running the `waypoint` binary from tests, isolated from the user's settings.

#![allow(dead_code, reason = "each test binary uses a different subset")]

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

pub fn waypoint(args: &[&str]) -> Output {
    waypoint_with_stdin(args, None)
}

/// The binary with an isolated environment, not yet started.
pub fn command(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_waypoint"));
    cmd.args(args)
        .env_remove("NO_COLOR")
        // Tests never touch the user's history; those that need a store name one.
        .env("WAYPOINT_STORE", "none")
        .env_remove("WAYPOINT_CALLER")
        .env_remove("CLICOLOR_FORCE")
        // Nor the user's planner settings: no model unless a test names one.
        .env_remove("WAYPOINT_MODEL")
        // Nor the user's sentence encoder: routing is model-free unless a test names one.
        .env_remove("WAYPOINT_EMBED_MODEL")
        .env_remove("WAYPOINT_PLANNER")
        .env_remove("WAYPOINT_CONFIG")
        .env("XDG_CONFIG_HOME", isolated("config"))
        .env("XDG_CACHE_HOME", isolated("cache"));
    cmd
}

pub fn waypoint_with_stdin(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = command(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    drop(child.stdin.take());
    child.wait_with_output().unwrap()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

pub fn fixture(path: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../waypoint-catalog/tests/fixtures")
        .join(path)
        .display()
        .to_string()
}

/// A directory of this test binary's own, so no test reads the user's files.
fn isolated(what: &str) -> PathBuf {
    let dir = std::env::temp_dir()
        .join(format!("waypoint-cli-tests-{}", std::process::id()))
        .join(what);
    let _ = std::fs::create_dir_all(&dir);
    dir
}

/// `scripts/mcp/node_modules` (or `WAYPOINT_MCP_PEERS`) when every file in `needs` is
/// under it. Otherwise says loudly that `what` did not run, and fails instead when
/// `WAYPOINT_REQUIRE_MCP` is set (as `.ci/run` does).
pub fn mcp_peers(needs: &[&str], what: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("WAYPOINT_MCP_PEERS").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/mcp/node_modules"),
        PathBuf::from,
    );
    if needs.iter().all(|n| dir.join(n).is_file()) {
        return Some(dir);
    }
    eprintln!(
        "\n!!!!!!!! {needs:?} not found under {}; run `scripts/mcp-peers install`\n!!!!!!!! {what} did NOT run\n",
        dir.display()
    );
    assert!(
        std::env::var_os("WAYPOINT_REQUIRE_MCP").is_none(),
        "WAYPOINT_REQUIRE_MCP is set and {needs:?} is not installed"
    );
    None
}

/// The official MCP Inspector's CLI (without the launcher that would start its web UI).
pub const INSPECTOR: &str = "@modelcontextprotocol/inspector/cli/build/index.js";

/// The local model server's base URL (`WAYPOINT_LLM_URL`, exported by `scripts/test`).
/// Without one, says that `what` did not run, and fails instead when
/// `WAYPOINT_REQUIRE_LLM=1` (as `.ci/run` sets).
pub fn local_llm(what: &str) -> Option<String> {
    if let Ok(url) = std::env::var("WAYPOINT_LLM_URL") {
        return Some(url);
    }
    assert!(
        std::env::var("WAYPOINT_REQUIRE_LLM").as_deref() != Ok("1"),
        "WAYPOINT_REQUIRE_LLM=1 but WAYPOINT_LLM_URL is unset"
    );
    eprintln!("skipped: no local model, so {what} did not run (scripts/local-llm start)");
    None
}
