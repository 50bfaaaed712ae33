//! Throughput benchmarks shared by every store backend; each backend's `benches/store.rs`
//! opens its store and calls these. One sample writes, or reads, [`ROWS`] rows.

use waypoint_store::{Forget, HistoryFilter, HistoryRow, HistoryStore, Outcome, StepRecord};

pub const ROWS: i64 = 1_000;
const AT: i64 = 1_900_000_000;

/// A caller no earlier run used, so rows never mix.
pub fn caller(tag: &str) -> String {
    format!("bench-{tag}-{}", std::process::id())
}

fn row(caller: &str, i: i64) -> HistoryRow {
    let step = |order: u32, tool: &str| StepRecord {
        order,
        tool: tool.into(),
        args_sha: "0011223344556677".into(),
    };
    HistoryRow {
        caller: caller.into(),
        intent_sha: format!("{:016x}", i % 50),
        complexity: "pack-chain".into(),
        steps: vec![step(1, "web_fetch"), step(2, "translate_text")],
        outcome: Outcome::Ok,
        at_unix: AT + i,
        duration_ms: 3,
        model: None,
        planner: "deterministic".into(),
    }
}

pub fn write_rows<S: HistoryStore>(
    bencher: divan::Bencher,
    rt: &tokio::runtime::Runtime,
    store: &S,
) {
    let who = caller("write");
    bencher.bench_local(|| {
        rt.block_on(async {
            for i in 0..ROWS {
                store.record(&row(&who, i)).await.unwrap();
            }
        });
    });
    rt.block_on(store.forget(&who, &Forget::All)).unwrap();
}

pub fn read_rows<S: HistoryStore>(
    bencher: divan::Bencher,
    rt: &tokio::runtime::Runtime,
    store: &S,
) {
    let who = caller("read");
    rt.block_on(async {
        for i in 0..ROWS {
            store.record(&row(&who, i)).await.unwrap();
        }
    });
    bencher.bench_local(|| {
        let rows = rt
            .block_on(store.history(&who, &HistoryFilter::default(), AT))
            .unwrap();
        assert_eq!(rows.len(), usize::try_from(ROWS).unwrap());
    });
    rt.block_on(store.forget(&who, &Forget::All)).unwrap();
}
