//! History written behind the request, against a real SQLite store: rows are committed
//! in batches and none is lost, a flush waits for what was queued before it, and the
//! learned-plan cache sees this instance's rows at once and other instances' rows after
//! its refresh period.

#![allow(
    clippy::unwrap_used,
    clippy::missing_panics_doc,
    reason = "tests fail loudly on purpose"
)]

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use waypoint_app::history::{LearnedCache, Recorder, WriteBehind};
use waypoint_store::{
    HistoryFilter, HistoryRow, HistoryStore as _, LearnRule, Outcome, StepRecord,
};
use waypoint_stores::Store;

async fn store(dir: &std::path::Path) -> Arc<Store> {
    let spec = format!("sqlite:{}", dir.join("h.db").display());
    Arc::new(Store::open(&spec, 3600).await.unwrap().unwrap())
}

fn row(caller: &str, request: &str, tools: &[&str]) -> HistoryRow {
    HistoryRow {
        caller: caller.into(),
        intent_sha: waypoint_store::intent_sha(request),
        complexity: "pack".into(),
        steps: tools
            .iter()
            .enumerate()
            .map(|(i, t)| StepRecord {
                order: u32::try_from(i + 1).unwrap(),
                tool: (*t).into(),
                args_sha: String::new(),
            })
            .collect(),
        outcome: Outcome::Ok,
        at_unix: waypoint_store::now_unix(),
        duration_ms: 1,
        model: None,
        planner: "deterministic".into(),
    }
}

async fn rows_of(store: &Store, caller: &str) -> usize {
    store
        .history(
            caller,
            &HistoryFilter::default(),
            waypoint_store::now_unix(),
        )
        .await
        .unwrap()
        .len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_queue_waits_and_every_row_is_committed_in_batches() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path()).await;
    // A queue of 8 rows and batches of at most 16: 500 rows from 10 writers at once
    // must all land, in far fewer transactions than rows.
    let config = WriteBehind {
        capacity: 8,
        max_batch: 16,
        window: Duration::from_millis(20),
        ..WriteBehind::default()
    };
    let recorder = Arc::new(Recorder::spawn(store.clone(), config));
    let mut writers = Vec::new();
    for w in 0..10 {
        let recorder = recorder.clone();
        writers.push(tokio::spawn(async move {
            for i in 0..50 {
                recorder
                    .record(row("ana", &format!("request {w} {i}"), &["git_status"]))
                    .await;
            }
        }));
    }
    for w in writers {
        w.await.unwrap();
    }
    recorder.flush().await;
    let counts = recorder.counts();
    assert_eq!(counts.queued.load(Ordering::Relaxed), 500);
    assert_eq!(counts.flushed.load(Ordering::Relaxed), 500);
    assert_eq!(counts.failed.load(Ordering::Relaxed), 0);
    let batches = counts.batches.load(Ordering::Relaxed);
    assert!((500 / 16..500).contains(&batches), "{batches} transactions");
    assert_eq!(rows_of(&store, "ana").await, 500);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flush_returns_only_once_the_rows_before_it_are_committed() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path()).await;
    // A window far longer than the test: only the flush can commit the row.
    let config = WriteBehind {
        window: Duration::from_mins(1),
        ..WriteBehind::default()
    };
    let recorder = Recorder::spawn(store.clone(), config);
    recorder
        .record(row("ana", "what changed", &["git_status"]))
        .await;
    recorder.flush().await;
    assert_eq!(rows_of(&store, "ana").await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_learned_cache_sees_own_rows_at_once_and_others_after_a_refresh() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path()).await;
    let refresh = Duration::from_millis(300);
    let config = WriteBehind {
        learned_refresh: refresh,
        ..WriteBehind::default()
    };
    let recorder = Recorder::spawn(store.clone(), config);
    let cache = LearnedCache::new(refresh);
    let rule = LearnRule { min_ok: 2 };
    let request = "find CommandRouter";
    let learned = async || {
        cache
            .learned(
                &store,
                &recorder,
                "ana",
                request,
                rule,
                waypoint_store::now_unix(),
            )
            .await
            .unwrap()
    };
    assert_eq!(learned().await, None, "nothing learned yet");
    // This instance's rows count at once, before they are committed.
    for _ in 0..2 {
        let r = row("ana", request, &["find_symbol"]);
        cache.note(&r);
        recorder.record(r).await;
    }
    assert_eq!(learned().await, Some(vec!["find_symbol".to_string()]));
    // Another instance writes a failure straight to the store: it ends the learned
    // sequence, but this cache sees it only after its refresh period.
    let mut failed = row("ana", request, &["find_symbol"]);
    failed.outcome = Outcome::Failed;
    failed.at_unix += 1;
    store.record(&failed).await.unwrap();
    assert!(learned().await.is_some(), "still the cached entry");
    tokio::time::sleep(refresh + Duration::from_millis(50)).await;
    assert_eq!(learned().await, None, "read again: the failure is seen");
}
