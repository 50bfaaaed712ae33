//! The shared store suite on PostgreSQL (`WAYPOINT_TEST_POSTGRES`, default
//! `postgres://postgres@127.0.0.1:5432/test`). When the server cannot be reached the
//! tests say so loudly; with `WAYPOINT_REQUIRE_POSTGRES=1` (set by `.ci/run`) they fail.

#![allow(
    clippy::unwrap_used,
    clippy::missing_panics_doc,
    reason = "tests fail loudly on purpose"
)]

#[path = "../../waypoint-store/suite/mod.rs"]
mod suite;

use waypoint_store_postgres::PostgresStore;

const TTL: i64 = 30 * 24 * 3600;

async fn store() -> Option<PostgresStore> {
    let url = std::env::var("WAYPOINT_TEST_POSTGRES")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into());
    match PostgresStore::connect(&url, TTL).await {
        Ok(s) => Some(s),
        Err(e) => {
            let required = std::env::var_os("WAYPOINT_REQUIRE_POSTGRES").is_some();
            eprintln!(
                "\n!!!!!!!! PostgreSQL is unreachable at {url}: {e}\n!!!!!!!! the PostgreSQL store suite did NOT run\n"
            );
            assert!(
                !required,
                "WAYPOINT_REQUIRE_POSTGRES is set and PostgreSQL is unreachable: {e}"
            );
            None
        }
    }
}

#[tokio::test]
async fn rows_round_trip_and_filter() {
    if let Some(s) = store().await {
        suite::rows_round_trip_and_filter(s).await;
    }
}

#[tokio::test]
async fn forget_touches_only_its_caller() {
    if let Some(s) = store().await {
        suite::forget_touches_only_its_caller(s).await;
    }
}

#[tokio::test]
async fn expired_rows_are_hidden_and_purged() {
    if let Some(s) = store().await {
        suite::expired_rows_are_hidden_and_purged(s, TTL).await;
    }
}

#[tokio::test]
async fn repeated_successes_become_learned() {
    if let Some(s) = store().await {
        suite::repeated_successes_become_learned(s).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_lose_nothing() {
    if let Some(s) = store().await {
        suite::concurrent_writers_lose_nothing(s).await;
    }
}

#[tokio::test]
async fn the_journal_keeps_runs_and_steps() {
    if let Some(s) = store().await {
        suite::the_journal_keeps_runs_and_steps(s).await;
    }
}

#[tokio::test]
async fn memories_are_kept_per_caller() {
    if let Some(s) = store().await {
        suite::memories_are_kept_per_caller(s).await;
    }
}

#[tokio::test]
async fn queued_runs_are_claimed_once() {
    if let Some(s) = store().await {
        suite::queued_runs_are_claimed_once(s).await;
    }
}

#[tokio::test]
async fn pages_follow_their_cursors() {
    if let Some(s) = store().await {
        suite::pages_follow_their_cursors(s).await;
    }
}

#[tokio::test]
async fn batches_round_trip() {
    if let Some(s) = store().await {
        suite::batches_round_trip(s).await;
    }
}
