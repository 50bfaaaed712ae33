//! The file built-ins (`read_file`, `grep`, `find_symbol`) read only regular files, and a
//! bounded number of bytes of each: a FIFO in the working directory would block a read
//! forever, a huge file would be read whole into memory.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::missing_panics_doc,
    reason = "tests fail loudly on purpose"
)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use waypoint_catalog::{Source, load};
use waypoint_protocol::{Plan, RunReport};
use waypoint_run::{Limits, Runner, Settings, Toolbox};
use waypoint_store_sqlite::SqliteStore;

const CATALOG: &str = r"tools:
  - name: read_file
    description: Read a file.
    input_schema: {type: object, properties: {path: {type: string}}, required: [path]}
    run: {builtin: read_file}
  - name: grep
    description: Search files.
    input_schema: {type: object, properties: {pattern: {type: string}}, required: [pattern]}
    run: {builtin: grep}
  - name: find_symbol
    description: Find a symbol.
    input_schema: {type: object, properties: {name: {type: string}}, required: [name]}
    run: {builtin: find_symbol}
";

/// A working directory with a FIFO nobody writes to, a sparse file past the read limit
/// that holds a match at its end, and one small file that matches.
fn workdir() -> Option<tempfile::TempDir> {
    let dir = tempfile::tempdir().unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(dir.path().join("pipe"))
        .status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("skipped: no mkfifo");
        return None;
    }
    let big = dir.path().join("big.txt");
    let file = std::fs::File::create(&big).unwrap();
    file.set_len(waypoint_catalog::limited::MAX_INPUT_BYTES + 16)
        .unwrap();
    drop(file);
    let mut text = std::fs::OpenOptions::new().append(true).open(&big).unwrap();
    std::io::Write::write_all(&mut text, b"\nRouter in big\n").unwrap();
    std::fs::write(dir.path().join("small.rs"), "struct Router;\n").unwrap();
    Some(dir)
}

async fn run(dir: &std::path::Path, tool: &str, args: Value) -> RunReport {
    let catalog = load(&[Source {
        name: "files.yaml".into(),
        text: CATALOG.into(),
    }])
    .unwrap()
    .catalog;
    let db = tempfile::tempdir().unwrap();
    let store = Arc::new(
        SqliteStore::open(&db.path().join("wp.db"), 60)
            .await
            .unwrap(),
    );
    let toolbox = Toolbox::new(dir, &[], store.clone(), 1 << 20).unwrap();
    let runner = Runner::new(&catalog, store, &toolbox, "t");
    let steps =
        json!([{"id": "s1", "order": 1, "kind": "tool", "tool": tool, "group": 1, "args": args}]);
    let plan: Plan =
        serde_json::from_value(json!({"plan_id": "pl_files", "steps": steps})).unwrap();
    let limits = Limits {
        max_replans: 0,
        tool_timeout_ms: 20_000,
        ..Limits::default()
    };
    let settings = Settings {
        limits,
        ..Settings::default()
    };
    // A blocked read would hold the blocking pool past the step's timeout: bound it here.
    tokio::time::timeout(Duration::from_secs(30), runner.run(plan, settings))
        .await
        .expect("the run blocked")
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grep_and_find_symbol_skip_fifos_and_files_past_the_read_limit() {
    let Some(dir) = workdir() else { return };
    for (tool, args) in [
        ("grep", json!({"pattern": "Router"})),
        ("find_symbol", json!({"name": "Router"})),
    ] {
        let started = Instant::now();
        let r = run(dir.path(), tool, args).await;
        assert_eq!(
            r.steps[0].status.as_str(),
            "ok",
            "{tool}: {:?}",
            r.steps[0].error
        );
        let matches = r.steps[0].output.as_ref().unwrap()["matches"]
            .as_array()
            .unwrap()
            .clone();
        let paths: Vec<&str> = matches.iter().filter_map(|m| m["path"].as_str()).collect();
        assert_eq!(paths, ["small.rs"], "{tool}");
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{tool} was slow"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_file_refuses_a_fifo_without_blocking() {
    let Some(dir) = workdir() else { return };
    let r = run(dir.path(), "read_file", json!({"path": "pipe"})).await;
    assert_eq!(r.steps[0].status.as_str(), "failed");
    let err = r.steps[0].error.clone().unwrap_or_default();
    assert!(err.contains("not a regular file"), "{err}");
}
