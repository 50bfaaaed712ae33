//! Write and read throughput of the SQLite store: `cargo bench -p waypoint-store-sqlite`.
//! Rows per second = 1,000 / median.

#![allow(clippy::unwrap_used, reason = "benchmark set-up fails loudly")]

#[path = "../../waypoint-store/suite/bench.rs"]
mod bench;

use waypoint_store_sqlite::SqliteStore;

fn main() {
    divan::main();
}

fn open(rt: &tokio::runtime::Runtime, dir: &tempfile::TempDir) -> SqliteStore {
    rt.block_on(SqliteStore::open(
        &dir.path().join("bench.db"),
        86_400 * 365,
    ))
    .unwrap()
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn write_1000_rows(bencher: divan::Bencher) {
    let (rt, dir) = (
        tokio::runtime::Runtime::new().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    bench::write_rows(bencher, &rt, &open(&rt, &dir));
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn read_1000_rows(bencher: divan::Bencher) {
    let (rt, dir) = (
        tokio::runtime::Runtime::new().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    bench::read_rows(bencher, &rt, &open(&rt, &dir));
}
