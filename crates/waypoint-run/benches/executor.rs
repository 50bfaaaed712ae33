//! Executor speed: how close 8 independent 100 ms steps at concurrency 8 come to their
//! critical path (one step, 100 ms), and the executor's own cost per step (journal
//! writes to a SQLite file before and after each call, arg checks, events) measured on
//! a built-in tool that does almost nothing.
//!
//! `cargo bench -p waypoint-run --bench executor`; report medians and ratios.

#![allow(clippy::unwrap_used, reason = "a benchmark fails loudly")]

use std::sync::Arc;

use serde_json::{Value, json};
use waypoint_catalog::{Catalog, Source, load};
use waypoint_protocol::{Plan, RunStatus};
use waypoint_run::{Limits, Runner, Settings, Toolbox};
use waypoint_store_sqlite::SqliteStore;

fn main() {
    divan::main();
}

const CATALOG: &str = r#"
tools:
  - name: nap
    description: Sleep a tenth of a second.
    run: {command: [sleep, "0.1"]}
  - name: look
    description: List the working directory.
    run: {builtin: list_dir}
"#;

struct Bench {
    rt: tokio::runtime::Runtime,
    _dir: tempfile::TempDir,
    catalog: Catalog,
    store: Arc<SqliteStore>,
    toolbox: Toolbox<SqliteStore>,
}

fn setup() -> Bench {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let catalog = load(&[Source {
        name: "bench.yaml".into(),
        text: CATALOG.into(),
    }])
    .unwrap()
    .catalog;
    let store = Arc::new(
        rt.block_on(SqliteStore::open(&dir.path().join("wp.db"), 3600))
            .unwrap(),
    );
    let toolbox = Toolbox::new(dir.path(), &[], store.clone(), 1 << 20).unwrap();
    Bench {
        rt,
        _dir: dir,
        catalog,
        store,
        toolbox,
    }
}

fn plan(tool: &str, n: u32, parallel: bool) -> Plan {
    let steps: Vec<Value> = (1..=n)
        .map(|i| {
            json!({"id": format!("s{i}"), "order": i, "kind": "tool", "tool": tool,
                   "group": if parallel { 1 } else { i }})
        })
        .collect();
    serde_json::from_value(json!({"plan_id": "pl_bench", "steps": steps})).unwrap()
}

fn run(b: &Bench, p: Plan, concurrency: usize) {
    let runner = Runner::new(&b.catalog, b.store.clone(), &b.toolbox, "bench")
        .approving(waypoint_run::Approvals::all());
    let settings = Settings {
        limits: Limits {
            concurrency,
            ..Limits::default()
        },
        ..Settings::default()
    };
    let report = b.rt.block_on(runner.run(p, settings)).unwrap();
    assert_eq!(report.status, RunStatus::Ok, "{}", report.message);
}

/// Critical path: 100 ms. The ratio median / 100 ms is the figure to report.
#[divan::bench(sample_count = 10, sample_size = 1)]
fn eight_100ms_steps_at_concurrency_8(bencher: divan::Bencher) {
    let b = setup();
    bencher.bench_local(|| run(&b, plan("nap", 8, true), 8));
}

/// The same steps one at a time, for contrast (about 8 × 100 ms).
#[divan::bench(sample_count = 3, sample_size = 1)]
fn eight_100ms_steps_at_concurrency_1(bencher: divan::Bencher) {
    let b = setup();
    bencher.bench_local(|| run(&b, plan("nap", 8, true), 1));
}

/// 16 near-instant steps in a row; median / 16 is the executor's cost per step.
#[divan::bench(sample_count = 30, sample_size = 1)]
fn sixteen_builtin_steps_in_sequence(bencher: divan::Bencher) {
    let b = setup();
    bencher.bench_local(|| run(&b, plan("look", 16, false), 1));
}
