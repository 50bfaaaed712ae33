//! Write and read throughput of the PostgreSQL store: `cargo bench -p waypoint-store-postgres`
//! (the server of `WAYPOINT_TEST_POSTGRES`, default 127.0.0.1:5432 `test`).
//! Rows per second = 1,000 / median.

#![allow(clippy::unwrap_used, reason = "benchmark set-up fails loudly")]

#[path = "../../waypoint-store/suite/bench.rs"]
mod bench;

use waypoint_store_postgres::PostgresStore;

fn main() {
    divan::main();
}

fn open(rt: &tokio::runtime::Runtime) -> PostgresStore {
    let url = std::env::var("WAYPOINT_TEST_POSTGRES")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into());
    rt.block_on(PostgresStore::connect(&url, 86_400 * 365))
        .unwrap()
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn write_1000_rows(bencher: divan::Bencher) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    bench::write_rows(bencher, &rt, &open(&rt));
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn read_1000_rows(bencher: divan::Bencher) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    bench::read_rows(bencher, &rt, &open(&rt));
}
