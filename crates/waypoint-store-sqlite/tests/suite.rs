//! The shared store suite on a SQLite file.

#![allow(
    clippy::unwrap_used,
    clippy::missing_panics_doc,
    reason = "tests fail loudly on purpose"
)]

#[path = "../../waypoint-store/suite/mod.rs"]
mod suite;

use waypoint_store::{HistoryFilter, HistoryStore};
use waypoint_store_sqlite::SqliteStore;

const TTL: i64 = 30 * 24 * 3600;

async fn store() -> (tempfile::TempDir, SqliteStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("nested/history.db"), TTL)
        .await
        .unwrap();
    (dir, store)
}

#[tokio::test]
async fn rows_round_trip_and_filter() {
    let (_d, s) = store().await;
    suite::rows_round_trip_and_filter(s).await;
}

#[tokio::test]
async fn forget_touches_only_its_caller() {
    let (_d, s) = store().await;
    suite::forget_touches_only_its_caller(s).await;
}

#[tokio::test]
async fn expired_rows_are_hidden_and_purged() {
    let (_d, s) = store().await;
    suite::expired_rows_are_hidden_and_purged(s, TTL).await;
}

#[tokio::test]
async fn repeated_successes_become_learned() {
    let (_d, s) = store().await;
    suite::repeated_successes_become_learned(s).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_lose_nothing() {
    let (_d, s) = store().await;
    suite::concurrent_writers_lose_nothing(s).await;
}

#[tokio::test]
async fn reopening_keeps_rows_and_migrations_are_idempotent() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.db");
    let s = SqliteStore::open(&path, TTL).await.unwrap();
    waypoint_store::HistoryStore::record(
        &s,
        &suite::row("re", "i", &["x"], waypoint_store::Outcome::Ok, suite::NOW),
    )
    .await
    .unwrap();
    s.close().await;
    let s = SqliteStore::open(&path, TTL).await.unwrap();
    assert_eq!(
        s.history("re", &HistoryFilter::default(), suite::NOW)
            .await
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_openers_of_a_new_file_all_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("race.db");
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let path = path.clone();
        tasks.push(tokio::spawn(async move {
            SqliteStore::open(&path, TTL).await.map(|_| ())
        }));
    }
    for t in tasks {
        t.await.unwrap().unwrap();
    }
}

#[tokio::test]
async fn the_journal_keeps_runs_and_steps() {
    let (_d, s) = store().await;
    suite::the_journal_keeps_runs_and_steps(s).await;
}

#[tokio::test]
async fn memories_are_kept_per_caller() {
    let (_d, s) = store().await;
    suite::memories_are_kept_per_caller(s).await;
}

#[tokio::test]
async fn queued_runs_are_claimed_once() {
    let (_d, s) = store().await;
    suite::queued_runs_are_claimed_once(s).await;
}

#[tokio::test]
async fn pages_follow_their_cursors() {
    let (_d, s) = store().await;
    suite::pages_follow_their_cursors(s).await;
}

#[tokio::test]
async fn batches_round_trip() {
    let (_dir, s) = store().await;
    suite::batches_round_trip(s).await;
}
