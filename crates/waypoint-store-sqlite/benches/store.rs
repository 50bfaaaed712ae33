//! Write and read throughput of the SQLite store: `cargo bench -p waypoint-store-sqlite`.
//! One sample writes (or reads) 1,000 rows; rows per second = 1,000 / median.

#![allow(clippy::unwrap_used, reason = "benchmark set-up fails loudly")]

use waypoint_store::{HistoryFilter, HistoryRow, HistoryStore, Outcome, StepRecord};
use waypoint_store_sqlite::SqliteStore;

fn main() {
    divan::main();
}

fn row(caller: &str, i: i64) -> HistoryRow {
    HistoryRow {
        caller: caller.into(),
        intent_sha: format!("{:016x}", i % 50),
        complexity: "pack-chain".into(),
        steps: vec![
            StepRecord {
                order: 1,
                tool: "web_fetch".into(),
                args_sha: "0011223344556677".into(),
            },
            StepRecord {
                order: 2,
                tool: "translate_text".into(),
                args_sha: "8899aabbccddeeff".into(),
            },
        ],
        outcome: Outcome::Ok,
        at_unix: 1_900_000_000 + i,
        duration_ms: 3,
        model: None,
        planner: "deterministic".into(),
    }
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn write_1000_rows(bencher: divan::Bencher) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = rt
        .block_on(SqliteStore::open(&dir.path().join("b.db"), 86_400 * 365))
        .unwrap();
    bencher.bench_local(|| {
        rt.block_on(async {
            for i in 0..1_000 {
                store.record(&row("bench", i)).await.unwrap();
            }
        });
    });
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn read_1000_rows(bencher: divan::Bencher) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = rt
        .block_on(SqliteStore::open(&dir.path().join("b.db"), 86_400 * 365))
        .unwrap();
    rt.block_on(async {
        for i in 0..1_000 {
            store.record(&row("reader", i)).await.unwrap();
        }
    });
    bencher.bench_local(|| {
        let rows = rt
            .block_on(store.history("reader", &HistoryFilter::default(), 1_900_000_000))
            .unwrap();
        assert_eq!(rows.len(), 1_000);
    });
}
