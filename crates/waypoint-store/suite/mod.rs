//! One behaviour suite for every store backend. Each backend's `tests/` includes this
//! file and implements [`Backend`] for its store; the tests are the same text.

use std::sync::atomic::{AtomicU64, Ordering};

use waypoint_store::{
    Forget, HistoryFilter, HistoryRow, HistoryStore, LearnRule, Outcome, StepRecord, learned,
};

/// What the suite needs from a store: the one interface, and cheap clones for writers.
pub trait Backend: HistoryStore + Clone + 'static {}

impl<T: HistoryStore + Clone + 'static> Backend for T {}

/// A caller name no other test (or earlier run) uses.
pub fn caller(tag: &str) -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "{tag}-{}-{nanos}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

pub const NOW: i64 = 1_900_000_000;

pub fn row(caller: &str, intent: &str, tools: &[&str], outcome: Outcome, at: i64) -> HistoryRow {
    HistoryRow {
        caller: caller.into(),
        intent_sha: intent.into(),
        complexity: if tools.len() > 1 {
            "pack-chain".into()
        } else {
            "single-action".into()
        },
        steps: tools
            .iter()
            .enumerate()
            .map(|(i, t)| StepRecord {
                order: u32::try_from(i + 1).unwrap_or(u32::MAX),
                tool: (*t).into(),
                args_sha: "00ff00ff00ff00ff".into(),
            })
            .collect(),
        outcome,
        at_unix: at,
        duration_ms: 12,
        model: None,
        planner: "deterministic".into(),
    }
}

pub async fn rows_round_trip_and_filter<B: Backend>(store: B) {
    let c = caller("filter");
    store
        .record(&row(&c, "aaaa", &["git_status"], Outcome::Ok, NOW - 30))
        .await
        .unwrap();
    store
        .record(&row(
            &c,
            "bbbb",
            &["git_diff", "code_review"],
            Outcome::Failed,
            NOW - 20,
        ))
        .await
        .unwrap();
    store
        .record(&row(
            &c,
            "bbbb",
            &["git_diff", "code_review"],
            Outcome::Ok,
            NOW - 10,
        ))
        .await
        .unwrap();
    let all = store
        .history(&c, &HistoryFilter::default(), NOW)
        .await
        .unwrap();
    assert_eq!(all.len(), 3);
    assert_eq!(all[0].at_unix, NOW - 10, "newest first");
    assert_eq!(
        all[2],
        row(&c, "aaaa", &["git_status"], Outcome::Ok, NOW - 30),
        "rows come back as written"
    );
    let by_tool = store
        .history(
            &c,
            &HistoryFilter {
                tool: Some("code_review".into()),
                ..HistoryFilter::default()
            },
            NOW,
        )
        .await
        .unwrap();
    assert_eq!(by_tool.len(), 2);
    let partial = store
        .history(
            &c,
            &HistoryFilter {
                tool: Some("code".into()),
                ..HistoryFilter::default()
            },
            NOW,
        )
        .await
        .unwrap();
    assert!(partial.is_empty(), "tool filter matches whole names only");
    let failed = store
        .history(
            &c,
            &HistoryFilter {
                outcome: Some(Outcome::Failed),
                ..HistoryFilter::default()
            },
            NOW,
        )
        .await
        .unwrap();
    assert_eq!(failed.len(), 1);
    let since = store
        .history(
            &c,
            &HistoryFilter {
                since: Some(NOW - 15),
                ..HistoryFilter::default()
            },
            NOW,
        )
        .await
        .unwrap();
    assert_eq!(since.len(), 1);
    let intent = store
        .history(
            &c,
            &HistoryFilter {
                intent_sha: Some("aaaa".into()),
                limit: Some(1),
                ..HistoryFilter::default()
            },
            NOW,
        )
        .await
        .unwrap();
    assert_eq!(intent.len(), 1);
}

/// A batch is written whole and reads back like rows written one by one, a model and
/// no model alike; an empty batch writes nothing.
pub async fn batches_round_trip<B: Backend>(store: B) {
    let c = caller("batch");
    let mut with_model = row(&c, "cccc", &["pdf_summarize"], Outcome::Ok, NOW - 5);
    with_model.model = Some("llamacpp/gemma3-270m".into());
    with_model.planner = "llm".into();
    let batch: Vec<HistoryRow> = (0..40)
        .map(|i| {
            row(
                &c,
                "dddd",
                &["git_status", "run_tests"],
                Outcome::Ok,
                NOW - 100 + i,
            )
        })
        .chain([with_model.clone()])
        .collect();
    store.record_many(&[]).await.unwrap();
    store.record_many(&batch).await.unwrap();
    let all = store
        .history(&c, &HistoryFilter::default(), NOW)
        .await
        .unwrap();
    assert_eq!(all.len(), 41);
    assert_eq!(
        all[0], with_model,
        "the model and planner come back as written"
    );
    assert_eq!(all[1], batch[39]);
    assert_eq!(all[1].model, None, "no model stays no model");
}

pub async fn forget_touches_only_its_caller<B: Backend>(store: B) {
    let (a, b) = (caller("forget-a"), caller("forget-b"));
    for c in [&a, &b] {
        store
            .record(&row(c, "i1", &["x"], Outcome::Ok, NOW - 100))
            .await
            .unwrap();
        store
            .record(&row(c, "i2", &["y"], Outcome::Ok, NOW - 10))
            .await
            .unwrap();
    }
    assert_eq!(
        store
            .forget(&a, &Forget::OlderThan(NOW - 50))
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        store
            .forget(&a, &Forget::Intent("i2".into()))
            .await
            .unwrap(),
        1
    );
    store
        .record(&row(&a, "i3", &["z"], Outcome::Ok, NOW))
        .await
        .unwrap();
    assert_eq!(store.forget(&a, &Forget::All).await.unwrap(), 1);
    assert!(
        store
            .history(&a, &HistoryFilter::default(), NOW)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store
            .history(&b, &HistoryFilter::default(), NOW)
            .await
            .unwrap()
            .len(),
        2,
        "another caller keeps its rows"
    );
}

pub async fn expired_rows_are_hidden_and_purged<B: Backend>(store: B, ttl: i64) {
    let c = caller("ttl");
    store
        .record(&row(&c, "old", &["x"], Outcome::Ok, NOW - ttl - 1))
        .await
        .unwrap();
    store
        .record(&row(&c, "new", &["x"], Outcome::Ok, NOW))
        .await
        .unwrap();
    let visible = store
        .history(&c, &HistoryFilter::default(), NOW)
        .await
        .unwrap();
    assert_eq!(visible.len(), 1);
    assert_eq!(visible[0].intent_sha, "new");
    assert!(store.purge_expired(NOW).await.unwrap() >= 1);
    assert_eq!(
        store
            .history(&c, &HistoryFilter::default(), NOW - ttl - 2)
            .await
            .unwrap()
            .len(),
        1,
        "the expired row is gone"
    );
}

pub async fn repeated_successes_become_learned<B: Backend>(store: B) {
    let c = caller("learn");
    for at in 1..=3 {
        store
            .record(&row(
                &c,
                "same",
                &["web_fetch", "translate_text"],
                Outcome::Ok,
                NOW - 10 + at,
            ))
            .await
            .unwrap();
    }
    let rows = store
        .history(
            &c,
            &HistoryFilter {
                intent_sha: Some("same".into()),
                ..HistoryFilter::default()
            },
            NOW,
        )
        .await
        .unwrap();
    assert_eq!(
        learned(&rows, LearnRule::default()),
        Some(vec!["web_fetch".to_string(), "translate_text".to_string()])
    );
    store
        .record(&row(
            &c,
            "same",
            &["web_fetch", "translate_text"],
            Outcome::Failed,
            NOW,
        ))
        .await
        .unwrap();
    let rows = store
        .history(
            &c,
            &HistoryFilter {
                intent_sha: Some("same".into()),
                ..HistoryFilter::default()
            },
            NOW,
        )
        .await
        .unwrap();
    assert_eq!(
        learned(&rows, LearnRule::default()),
        None,
        "a failure demotes the learned plan"
    );
}

/// 10,000 rows from 8 concurrent writers, all read back.
pub async fn concurrent_writers_lose_nothing<B: Backend>(store: B) {
    let c = caller("concurrent");
    let mut tasks = Vec::new();
    for w in 0..8_i64 {
        let store = store.clone();
        let c = c.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..1_250_i64 {
                store
                    .record(&row(
                        &c,
                        &format!("w{w}"),
                        &["git_status"],
                        Outcome::Ok,
                        NOW - 100_000 + w * 10_000 + i,
                    ))
                    .await
                    .unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let rows = store
        .history(&c, &HistoryFilter::default(), NOW)
        .await
        .unwrap();
    assert_eq!(rows.len(), 10_000);
    for w in 0..8 {
        assert_eq!(
            rows.iter()
                .filter(|r| r.intent_sha == format!("w{w}"))
                .count(),
            1_250
        );
    }
}

fn run_row(caller: &str, run_id: &str, at: i64) -> waypoint_store::RunRow {
    waypoint_store::RunRow {
        run_id: run_id.into(),
        caller: caller.into(),
        status: "running".into(),
        plan: "{}".into(),
        generation: 0,
        report: String::new(),
        settings: "{}".into(),
        created_at: at,
        updated_at: at,
    }
}

fn step_row(run_id: &str, key: &str) -> waypoint_store::StepRow {
    waypoint_store::StepRow {
        run_id: run_id.into(),
        key: key.into(),
        tool: "git_status".into(),
        status: "running".into(),
        idempotency_key: "k".into(),
        output: String::new(),
        error: None,
        latency_ms: 0,
        prompt_tokens: 0,
        completion_tokens: 0,
        cost_usd: 0.25,
        started_at: NOW,
        finished_at: None,
    }
}

/// A run's rows are written before and after each call, read back in order, and only
/// by the run's caller.
pub async fn the_journal_keeps_runs_and_steps<B: waypoint_store::RunStore>(store: B) {
    let me = caller("journal");
    let other = caller("journal-other");
    let id = format!("run_{me}");
    store.create_run(&run_row(&me, &id, NOW)).await.unwrap();
    store.begin_step(&step_row(&id, "g0/s1")).await.unwrap();
    store.begin_step(&step_row(&id, "g0/s2")).await.unwrap();
    let end = waypoint_store::StepEnd {
        status: "ok".into(),
        output: r#"{"stdout":"x"}"#.into(),
        error: None,
        latency_ms: 7,
        prompt_tokens: 1,
        completion_tokens: 2,
        cost_usd: 0.5,
        finished_at: NOW + 1,
    };
    store.finish_step(&id, "g0/s1", &end).await.unwrap();
    // Beginning the same key again (a retry) replaces the row instead of adding one.
    store.begin_step(&step_row(&id, "g0/s2")).await.unwrap();
    let steps = store.steps(&id).await.unwrap();
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[0].key, "g0/s1");
    assert_eq!(steps[0].status, "ok");
    assert_eq!(steps[0].output, r#"{"stdout":"x"}"#);
    assert_eq!(steps[0].finished_at, Some(NOW + 1));
    assert_eq!(steps[1].status, "running");
    assert_eq!(steps[1].finished_at, None);

    let mut done = run_row(&me, &id, NOW);
    done.status = "ok".into();
    done.generation = 2;
    done.report = "{\"r\":1}".into();
    done.updated_at = NOW + 5;
    store.update_run(&done).await.unwrap();
    let got = store.run(&me, &id).await.unwrap().unwrap();
    assert_eq!(got, done);
    assert!(
        store.run(&other, &id).await.unwrap().is_none(),
        "another caller's run is invisible"
    );
    store
        .create_run(&run_row(&me, &format!("{id}-2"), NOW + 10))
        .await
        .unwrap();
    let listed = store.runs(&me, None, 10).await.unwrap();
    assert_eq!(listed.items.len(), 2);
    assert_eq!(listed.items[0].run_id, format!("{id}-2"), "newest first");
    assert_eq!(listed.next, None, "a short page is the last");
    assert!(store.runs(&other, None, 10).await.unwrap().items.is_empty());
}

/// Pages of runs and of history rows follow their cursors: every item once, newest
/// first, across items written in the same instant, and the last page says so.
pub async fn pages_follow_their_cursors<B: Backend + waypoint_store::RunStore>(store: B) {
    let me = caller("pages");
    // 25 runs, in pairs that share a creation time.
    for i in 0..25_i64 {
        store
            .create_run(&run_row(&me, &format!("{me}-run-{i:02}"), NOW + i / 2))
            .await
            .unwrap();
    }
    let mut seen = Vec::new();
    let mut after = None;
    let mut pages = 0;
    loop {
        let page = store.runs(&me, after.as_ref(), 10).await.unwrap();
        pages += 1;
        seen.extend(page.items.into_iter().map(|r| r.run_id));
        match page.next {
            Some(c) => {
                let text = c.encode();
                after = Some(waypoint_store::Cursor::decode(&text).unwrap());
            }
            None => break,
        }
    }
    // Run ids are global keys: they carry the caller so a shared database that kept an
    // earlier run of this suite does not collide.
    let expected: Vec<String> = (0..25).rev().map(|i| format!("{me}-run-{i:02}")).collect();
    assert_eq!(seen, expected, "every run once, newest first");
    assert_eq!(pages, 3);

    // 25 history rows, all in one second: the row id keeps them apart.
    let rows: Vec<HistoryRow> = (0..25)
        .map(|i| row(&me, &format!("i{i:02}"), &["a"], Outcome::Planned, NOW))
        .collect();
    store.record_many(&rows).await.unwrap();
    let mut seen = Vec::new();
    let mut filter = HistoryFilter {
        limit: Some(10),
        ..HistoryFilter::default()
    };
    loop {
        let page = store.history_page(&me, &filter, NOW).await.unwrap();
        seen.extend(page.items.into_iter().map(|r| r.intent_sha));
        match page.next {
            Some(c) => filter.after = Some(c),
            None => break,
        }
    }
    let expected: Vec<String> = (0..25).rev().map(|i| format!("i{i:02}")).collect();
    assert_eq!(seen, expected, "every row once, newest first");
    assert!(waypoint_store::Cursor::decode("12.a b").is_none());
    assert!(waypoint_store::Cursor::decode("x.1").is_none());
}

/// Queued runs are claimed oldest first, each by exactly one of several racing
/// claimers, and the claim remembers who took it.
pub async fn queued_runs_are_claimed_once<B: waypoint_store::RunStore>(store: B) {
    let me = caller("claims");
    let ids: Vec<String> = (0..40).map(|i| format!("run_{me}_{i:02}")).collect();
    for (at, id) in (0i64..).zip(&ids) {
        let mut row = run_row(&me, id, NOW + at);
        row.status = "queued".into();
        store.create_run(&row).await.unwrap();
    }
    let claimer = |name: &'static str| {
        let store = &store;
        async move {
            let mut got = Vec::new();
            while let Some(row) = store.claim_run(name, NOW + 100).await.unwrap() {
                assert_eq!(row.status, "running");
                got.push((name, row.run_id));
            }
            got
        }
    };
    let (a, b, c, d) = tokio::join!(claimer("a"), claimer("b"), claimer("c"), claimer("d"));
    let mut mine: Vec<(&str, String)> = [a, b, c, d]
        .into_iter()
        .flatten()
        .filter(|(_, id)| id.contains(&me))
        .collect();
    mine.sort_by(|x, y| x.1.cmp(&y.1));
    let claimed: Vec<&String> = mine.iter().map(|(_, id)| id).collect();
    assert_eq!(
        claimed,
        ids.iter().collect::<Vec<_>>(),
        "each run exactly once"
    );
    for (name, id) in &mine {
        assert_eq!(store.claimed_by(id).await.unwrap().as_deref(), Some(*name));
        assert_eq!(store.run(&me, id).await.unwrap().unwrap().status, "running");
    }
    assert_eq!(store.claimed_by("run_nobody").await.unwrap(), None);
}

/// Memories are per caller, replaced by key, found by key or content, and forgotten.
pub async fn memories_are_kept_per_caller<B: waypoint_store::MemoryStore>(store: B) {
    let me = caller("memory");
    let other = caller("memory-other");
    let m = |key: &str, value: &str, at: i64| waypoint_store::Memory {
        key: key.into(),
        value: value.into(),
        at_unix: at,
    };
    store
        .remember(&me, &m("launch", "Friday 9am", NOW))
        .await
        .unwrap();
    store
        .remember(&me, &m("launch", "Monday 10am", NOW + 1))
        .await
        .unwrap();
    store
        .remember(&me, &m("office", "100% remote_first", NOW + 2))
        .await
        .unwrap();
    let got = store.recall(&me, "launch", 10).await.unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(
        got[0].value, "Monday 10am",
        "a key is replaced, not duplicated"
    );
    assert_eq!(
        store.recall(&me, "remote", 10).await.unwrap().len(),
        1,
        "found by content"
    );
    assert!(
        store.recall(&me, "%", 10).await.unwrap().len() == 1,
        "% is literal"
    );
    assert!(store.recall(&other, "launch", 10).await.unwrap().is_empty());
    assert!(!store.forget_memory(&other, "launch").await.unwrap());
    assert!(store.forget_memory(&me, "launch").await.unwrap());
    assert!(store.recall(&me, "launch", 10).await.unwrap().is_empty());
}
