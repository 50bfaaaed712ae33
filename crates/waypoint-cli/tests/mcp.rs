//! End to end with real MCP servers from the npm registry (`scripts/mcp-peers install`
//! puts them in `scripts/mcp/node_modules`): import their catalogs, then plan and run
//! two-step requests. Without the servers the test says so loudly; with
//! `WAYPOINT_REQUIRE_MCP=1` (set by `.ci/run`) it fails instead.

#![allow(
    clippy::unwrap_used,
    clippy::missing_panics_doc,
    reason = "tests fail loudly on purpose"
)]

mod common;

use std::path::{Path, PathBuf};

use common::{stderr, stdout, waypoint};
use serde_json::Value;

fn peers() -> Option<PathBuf> {
    common::mcp_peers(
        &[
            "@modelcontextprotocol/server-filesystem/dist/index.js",
            "@modelcontextprotocol/server-memory/dist/index.js",
        ],
        "the MCP end-to-end test",
    )
}

fn servers_yaml(dir: &Path, peers: &Path) -> String {
    let m = peers.join("@modelcontextprotocol");
    let root = dir.join("root");
    std::fs::create_dir_all(&root).unwrap();
    let text = format!(
        "servers:\n  - name: fs\n    command: [node, {fs:?}, {root:?}]\n  - name: memory\n    command: [node, {mem:?}]\n    env: {{MEMORY_FILE_PATH: {file:?}}}\n",
        fs = m
            .join("server-filesystem/dist/index.js")
            .display()
            .to_string(),
        root = root.display().to_string(),
        mem = m.join("server-memory/dist/index.js").display().to_string(),
        file = dir.join("memory.jsonl").display().to_string(),
    );
    let path = dir.join("servers.yaml");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn imported_mcp_tools_plan_and_run_two_step_requests() {
    let Some(peers) = peers() else { return };
    let dir = tempfile::tempdir().unwrap();
    let servers = servers_yaml(dir.path(), &peers);
    let fs_yaml = dir.path().join("fs.yaml").display().to_string();
    let mem_yaml = dir.path().join("memory.yaml").display().to_string();

    // Import both servers' tools/list as catalog files.
    for (name, out) in [("fs", &fs_yaml), ("memory", &mem_yaml)] {
        let o = waypoint(&[
            "catalog",
            "import",
            "--mcp",
            name,
            "--catalog",
            &servers,
            "--out",
            out,
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stderr(&o).contains("tools of"), "{}", stderr(&o));
    }
    let fs_text = std::fs::read_to_string(&fs_yaml).unwrap();
    assert!(fs_text.contains("name: \"fs.write_file\""), "{fs_text}");
    assert!(fs_text.contains("run: {mcp: {server: \"fs\", tool: \"read_text_file\"}}"));
    let store = format!("sqlite:{}", dir.path().join("wp.db").display());
    let base = [
        "--catalog",
        servers.as_str(),
        "--catalog",
        fs_yaml.as_str(),
        "--catalog",
        mem_yaml.as_str(),
        "--store",
        store.as_str(),
    ];
    let check = {
        let mut a = base.to_vec();
        a.extend(["catalog", "check"]);
        waypoint(&a)
    };
    assert!(check.status.success(), "{}", stderr(&check));

    // A two-step request over the filesystem server: planned, then run.
    let request = "write 'hello from waypoint' to the file notes.txt, then read the file notes.txt";
    let mut args = base.to_vec();
    args.extend(["run", request, "--yes", "--json"]);
    let o = waypoint(&args);
    assert_eq!(o.status.code(), Some(0), "{}\n{}", stdout(&o), stderr(&o));
    let r: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let steps = r["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2, "{r}");
    assert!(
        steps[0]["tool"].as_str().unwrap().starts_with("fs.write"),
        "{r}"
    );
    assert!(
        steps[1]["tool"].as_str().unwrap().starts_with("fs.read"),
        "{r}"
    );
    assert_eq!(steps[1]["output"]["text"], "hello from waypoint", "{r}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("root/notes.txt")).unwrap(),
        "hello from waypoint"
    );

    memory_plan_runs(&base, dir.path());

    // An MCP error result is a failed step with the server's message.
    let mut args = base.to_vec();
    args.extend([
        "run",
        "read the file /etc/passwd",
        "--json",
        "--max-replans",
        "0",
    ]);
    let o = waypoint(&args);
    let r: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_ne!(r["status"], "ok", "{r}");
    let err = r["steps"][0]["error"].as_str().unwrap_or_default();
    assert!(err.contains("denied") || err.contains("outside"), "{r}");
}

/// A two-step plan over the memory server: create, then search what was created.
fn memory_plan_runs(base: &[&str], dir: &Path) {
    let plan = dir.join("memory-plan.json");
    std::fs::write(
        &plan,
        r#"{"plan_id": "pl_memory", "steps": [
          {"id": "s1", "order": 1, "kind": "tool", "tool": "memory.create_entities", "group": 1,
           "args": {"entities": [{"name": "Ada Lovelace", "entityType": "person", "observations": ["wrote the first program"]}]}},
          {"id": "s2", "order": 2, "kind": "tool", "tool": "memory.search_nodes", "group": 2, "input_refs": ["s1"],
           "args": {"query": "Lovelace"}}]}"#,
    )
    .unwrap();
    let mut args = base.to_vec();
    let plan_s = plan.display().to_string();
    args.extend(["run", "--plan", &plan_s, "--yes", "--json"]);
    let o = waypoint(&args);
    assert_eq!(o.status.code(), Some(0), "{}\n{}", stdout(&o), stderr(&o));
    let r: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let found = &r["steps"][1]["output"];
    let entities = found["json"]["entities"]
        .as_array()
        .or_else(|| found["structured"]["entities"].as_array())
        .unwrap_or_else(|| panic!("{found}"));
    assert_eq!(entities.len(), 1);
    assert_eq!(entities[0]["name"], "Ada Lovelace");
    assert!(
        std::fs::read_to_string(dir.join("memory.jsonl"))
            .unwrap()
            .contains("wrote the first program")
    );

    // Issue finding 1 on an imported server: "delete …" planned
    // `memory.delete_entities` and ran it unasked. Now it waits, and nothing is deleted.
    let delete = dir.join("delete-plan.json");
    std::fs::write(
        &delete,
        r#"{"plan_id": "pl_delete", "steps": [
          {"id": "s1", "order": 1, "kind": "tool", "tool": "memory.delete_entities", "group": 1,
           "args": {"entityNames": ["Ada Lovelace"]}}]}"#,
    )
    .unwrap();
    let mut args = base.to_vec();
    let delete_s = delete.display().to_string();
    args.extend(["run", "--plan", &delete_s, "--json"]);
    let o = waypoint(&args);
    assert_eq!(o.status.code(), Some(6), "{}\n{}", stdout(&o), stderr(&o));
    let r: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(r["questions"][0]["call"]["effects"], "destructive", "{r}");
    assert!(
        std::fs::read_to_string(dir.join("memory.jsonl"))
            .unwrap()
            .contains("Ada Lovelace"),
        "the held delete ran"
    );
}

#[test]
fn importing_an_undeclared_server_says_how_to_declare_it() {
    let o = waypoint(&["catalog", "import", "--mcp", "nope"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("servers:"), "{}", stderr(&o));
}
