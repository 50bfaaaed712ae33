//! The executor against real parts: a SQLite journal, real processes for command tools,
//! the built-in memory tools on the same store.

#![allow(
    clippy::unwrap_used,
    clippy::missing_panics_doc,
    reason = "tests fail loudly on purpose"
)]

use std::sync::Arc;

use serde_json::{Value, json};
use waypoint_catalog::{Catalog, Source, load};
use waypoint_protocol::{Plan, RunReport, RunStatus, StepStatus};
use waypoint_run::{Decisions, Limits, NoReplan, ReplanAsk, Replanner, Runner, Settings, Toolbox};
use waypoint_store::{RunRow, RunStore as _, StepRow};
use waypoint_store_sqlite::SqliteStore;

const CATALOG: &str = r#"
tools:
  - name: echo
    description: Print a message.
    input_schema: {type: object, properties: {text: {type: string}}, required: [text]}
    run: {command: [echo, "{text}"]}
  - name: nap
    description: Sleep for some seconds.
    input_schema: {type: object, properties: {secs: {type: string}}, required: [secs]}
    run: {command: [sleep, "{secs}"]}
  - name: append
    description: Append a line to a file.
    effects: write
    input_schema: {type: object, properties: {line: {type: string}, file: {type: string}}, required: [line, file]}
    run: {command: [sh, -c, 'echo "$0" >> "$1"', "{line}", "{file}"]}
  - name: pricey
    description: Costs money.
    cost_usd: 0.4
    run: {command: [echo, priced]}
  - name: broken
    description: Always fails.
    run: {command: ["false"]}
  - name: remember
    description: Keep a note.
    effects: write
    input_schema: {type: object, properties: {key: {type: string}, value: {type: string}}, required: [value]}
    run: {builtin: memory_store}
  - name: recall
    description: Find notes.
    input_schema: {type: object, properties: {query: {type: string}}, required: [query]}
    run: {builtin: memory_recall}
  - name: ask
    description: Ask the user.
    input_schema: {type: object, properties: {question: {type: string}}, required: [question]}
    run: {builtin: ask_user}
  - name: planned_only
    description: Has no run field.
"#;

struct Harness {
    _dir: tempfile::TempDir,
    work: std::path::PathBuf,
    catalog: Catalog,
    store: Arc<SqliteStore>,
    toolbox: Toolbox<SqliteStore>,
}

async fn harness() -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let catalog = load(&[Source {
        name: "test.yaml".into(),
        text: CATALOG.into(),
    }])
    .unwrap()
    .catalog;
    let store = Arc::new(
        SqliteStore::open(&dir.path().join("wp.db"), 3600)
            .await
            .unwrap(),
    );
    let toolbox = Toolbox::new(&work, catalog.servers(), store.clone(), 1 << 20).unwrap();
    Harness {
        _dir: dir,
        work,
        catalog,
        store,
        toolbox,
    }
}

impl Harness {
    fn runner<'a>(&'a self, replanner: &'a dyn Replanner) -> Runner<'a, SqliteStore> {
        Runner {
            replanner,
            ..Runner::new(&self.catalog, self.store.clone(), &self.toolbox, "tester")
                .approving(waypoint_run::Approvals::all())
        }
    }

    async fn run(&self, plan: Plan, limits: Limits) -> RunReport {
        self.runner(&NoReplan)
            .run(
                plan,
                Settings {
                    limits,
                    ..Settings::default()
                },
            )
            .await
            .unwrap()
    }

    fn file(&self, name: &str) -> String {
        self.work.join(name).to_string_lossy().into_owned()
    }
}

/// A plan from `(id, tool, args, group, input_refs)`.
fn plan(steps: &[(&str, &str, Value, u32, &[&str])]) -> Plan {
    let steps: Vec<Value> = steps
        .iter()
        .enumerate()
        .map(|(i, (id, tool, args, group, refs))| {
            json!({"id": id, "order": i + 1, "kind": "tool", "tool": tool, "args": args,
                   "group": group, "input_refs": refs})
        })
        .collect();
    serde_json::from_value(json!({"plan_id": "pl_test", "steps": steps})).unwrap()
}

fn lines(path: &str) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

#[tokio::test]
async fn outputs_flow_into_later_args_and_values_are_never_a_shell() {
    let h = harness().await;
    let nasty = "$(touch pwned); echo `id` > x";
    let p = plan(&[
        ("s1", "echo", json!({"text": nasty}), 1, &[]),
        (
            "s2",
            "echo",
            json!({"text": {"$ref": "s1/output/stdout"}}),
            2,
            &["s1"],
        ),
    ]);
    let r = h.run(p, Limits::default()).await;
    assert_eq!(r.status, RunStatus::Ok, "{}", r.message);
    assert_eq!(r.output("s1").unwrap()["stdout"], format!("{nasty}\n"));
    assert_eq!(r.output("s2").unwrap()["stdout"], format!("{nasty}\n\n"));
    assert!(!h.work.join("pwned").exists(), "an arg reached a shell");
    let journal = h.store.steps(&r.run_id).await.unwrap();
    assert_eq!(journal.len(), 2);
    assert!(
        journal
            .iter()
            .all(|s| s.status == "ok" && s.finished_at.is_some())
    );
    assert_ne!(journal[0].idempotency_key, journal[1].idempotency_key);
}

#[tokio::test]
async fn max_steps_stops_before_the_step_that_would_exceed_it() {
    let h = harness().await;
    let p = plan(&[
        ("s1", "echo", json!({"text": "a"}), 1, &[]),
        ("s2", "echo", json!({"text": "b"}), 2, &[]),
        ("s3", "echo", json!({"text": "c"}), 3, &[]),
    ]);
    let r = h
        .run(
            p,
            Limits {
                max_steps: 2,
                ..Limits::default()
            },
        )
        .await;
    assert_eq!(r.status, RunStatus::Limit);
    assert_eq!(r.limit.as_ref().unwrap().name, "max_steps");
    assert!(r.message.contains("max_steps"), "{}", r.message);
    assert_eq!(
        h.store.steps(&r.run_id).await.unwrap().len(),
        2,
        "s3 never called"
    );
}

#[tokio::test]
async fn max_tool_calls_counts_every_adapter_call() {
    let h = harness().await;
    let p = plan(&[
        ("s1", "echo", json!({"text": "a"}), 1, &[]),
        ("s2", "echo", json!({"text": "b"}), 1, &[]),
        ("s3", "echo", json!({"text": "c"}), 1, &[]),
    ]);
    let r = h
        .run(
            p,
            Limits {
                max_tool_calls: 2,
                ..Limits::default()
            },
        )
        .await;
    assert_eq!(r.status, RunStatus::Limit);
    assert_eq!(r.limit.as_ref().unwrap().name, "max_tool_calls");
    assert!(
        r.message.contains("max_tool_calls (3 > 2)"),
        "{}",
        r.message
    );
    assert_eq!(r.totals.tool_calls, 2);
}

#[tokio::test]
async fn max_usd_refuses_the_call_that_would_overspend() {
    let h = harness().await;
    let p = plan(&[
        ("s1", "pricey", json!({}), 1, &[]),
        ("s2", "pricey", json!({}), 2, &[]),
        ("s3", "pricey", json!({}), 3, &[]),
    ]);
    let r = h
        .run(
            p,
            Limits {
                max_usd: 1.0,
                ..Limits::default()
            },
        )
        .await;
    assert_eq!(r.status, RunStatus::Limit);
    let hit = r.limit.as_ref().unwrap();
    assert_eq!(hit.name, "max_usd");
    assert!((hit.used - 1.2).abs() < 1e-9, "{hit:?}");
    assert!(r.message.contains("max_usd"), "{}", r.message);
    assert!((r.totals.cost_usd - 0.8).abs() < 1e-9);
}

#[tokio::test]
async fn max_wall_interrupts_what_is_in_flight_and_says_so_in_the_journal() {
    let h = harness().await;
    let p = plan(&[("s1", "nap", json!({"secs": "5"}), 1, &[])]);
    let r = h
        .run(
            p,
            Limits {
                max_wall_ms: 300,
                ..Limits::default()
            },
        )
        .await;
    assert_eq!(r.status, RunStatus::Limit);
    assert_eq!(r.limit.as_ref().unwrap().name, "max_wall_ms");
    assert!(r.message.contains("max_wall_ms (300 ms)"), "{}", r.message);
    let journal = h.store.steps(&r.run_id).await.unwrap();
    assert_eq!(journal[0].status, "interrupted");
}

#[tokio::test]
async fn a_slow_tool_fails_at_the_tool_timeout() {
    let h = harness().await;
    let p = plan(&[("s1", "nap", json!({"secs": "5"}), 1, &[])]);
    let r = h
        .run(
            p,
            Limits {
                tool_timeout_ms: 200,
                max_replans: 0,
                ..Limits::default()
            },
        )
        .await;
    assert_eq!(r.status, RunStatus::NeedsHuman);
    assert!(
        r.steps[0].error.as_ref().unwrap().contains("ran longer"),
        "{:?}",
        r.steps[0]
    );
}

/// Always offers the same broken plan again.
struct Stubborn;
impl Replanner for Stubborn {
    fn replan(&self, _: &ReplanAsk<'_>) -> Option<Plan> {
        Some(plan(&[("s1", "broken", json!({}), 1, &[])]))
    }
}

#[tokio::test]
async fn max_replans_bounds_the_new_plans_then_a_human_is_asked() {
    let h = harness().await;
    let p = plan(&[("s1", "broken", json!({}), 1, &[])]);
    let r = h
        .runner(&Stubborn)
        .run(
            p,
            Settings {
                limits: Limits {
                    max_replans: 2,
                    ..Limits::default()
                },
                ..Settings::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(r.status, RunStatus::NeedsHuman);
    assert_eq!(r.limit.as_ref().unwrap().name, "max_replans");
    assert!(r.message.contains("max_replans (2)"), "{}", r.message);
    assert_eq!(r.attempts.len(), 3, "the first plan and two replans");
    assert_eq!(r.totals.replans, 2);
    assert!(
        r.attempts
            .iter()
            .all(|a| a.digest.contains("exited with status 1"))
    );
}

#[tokio::test]
async fn bad_args_and_unknown_tools_are_refused_before_any_call() {
    let h = harness().await;
    let p = plan(&[
        ("s1", "echo", json!({"text": 5}), 1, &[]),
        ("s2", "rm_rf", json!({}), 1, &[]),
        ("s3", "planned_only", json!({}), 1, &[]),
    ]);
    let r = h
        .run(
            p,
            Limits {
                max_replans: 0,
                ..Limits::default()
            },
        )
        .await;
    assert_eq!(r.status, RunStatus::NeedsHuman);
    let err = |id: &str| {
        r.steps
            .iter()
            .find(|s| s.step_id == id)
            .unwrap()
            .error
            .clone()
            .unwrap()
    };
    assert!(err("s1").contains("input_schema"), "{}", err("s1"));
    assert!(err("s2").contains("not in the catalog"), "{}", err("s2"));
    assert!(err("s3").contains("no `run:`"), "{}", err("s3"));
    let journal = h.store.steps(&r.run_id).await.unwrap();
    assert_eq!(
        journal.len(),
        1,
        "only the runnable-but-unrunnable s3 reached an adapter"
    );
}

/// Runs a plan whose `s1` fails and asserts that `s2` was skipped because of it.
async fn s2_is_skipped_after_s1_fails(p: Plan) {
    let h = harness().await;
    let limits = Limits {
        max_replans: 0,
        ..Limits::default()
    };
    let r = h.run(p, limits).await;
    let s2 = r.steps.iter().find(|s| s.step_id == "s2").unwrap();
    assert_eq!(s2.status, StepStatus::Skipped);
    assert!(s2.error.as_ref().unwrap().contains("s1"));
}

#[tokio::test]
async fn a_step_after_a_failure_it_depends_on_is_skipped() {
    let text = json!({"text": {"$ref": "s1/output"}});
    let p = plan(&[
        ("s1", "broken", json!({}), 1, &[]),
        ("s2", "echo", text, 2, &["s1"]),
    ]);
    s2_is_skipped_after_s1_fails(p).await;
}

#[tokio::test]
async fn a_step_ordered_after_a_failure_is_skipped_though_it_takes_nothing() {
    let p = plan(&[
        ("s1", "broken", json!({}), 1, &[]),
        ("s2", "echo", json!({"text": "deploy"}), 2, &[]),
    ]);
    // "run the tests, then deploy": s2 follows s1 without consuming it.
    let mut value = serde_json::to_value(&p).unwrap();
    value["steps"][1]["after"] = json!(["s1"]);
    s2_is_skipped_after_s1_fails(serde_json::from_value(value).unwrap()).await;
}

#[tokio::test]
async fn memories_round_trip_through_the_store() {
    let h = harness().await;
    let p = plan(&[
        (
            "s1",
            "remember",
            json!({"key": "launch", "value": "Friday at nine"}),
            1,
            &[],
        ),
        ("s2", "recall", json!({"query": "launch"}), 2, &[]),
    ]);
    let r = h.run(p, Limits::default()).await;
    assert_eq!(r.status, RunStatus::Ok, "{}", r.message);
    assert_eq!(r.output("s2").unwrap()["text"], "Friday at nine");
}

/// Writes the journal a crash would leave: s1 finished, s2 called and never answered.
async fn crashed_run(h: &Harness, p: &Plan, s2_tool: &str) -> String {
    let run_id = "run_crashed".to_string();
    let settings = serde_json::to_string(&Settings::default()).unwrap();
    h.store
        .create_run(&RunRow {
            run_id: run_id.clone(),
            caller: "tester".into(),
            status: "running".into(),
            plan: serde_json::to_string(p).unwrap(),
            generation: 0,
            report: String::new(),
            settings,
            created_at: 1,
            updated_at: 1,
        })
        .await
        .unwrap();
    let row = |key: &str, tool: &str, status: &str, output: &str| StepRow {
        run_id: run_id.clone(),
        key: key.into(),
        tool: tool.into(),
        status: status.into(),
        idempotency_key: "k".into(),
        output: output.into(),
        error: None,
        latency_ms: 1,
        prompt_tokens: 0,
        completion_tokens: 0,
        cost_usd: 0.0,
        started_at: 1,
        finished_at: None,
    };
    h.store
        .begin_step(&row("g0/s1", "append", "ok", r#"{"stdout":""}"#))
        .await
        .unwrap();
    h.store
        .begin_step(&row("g0/s2", s2_tool, "running", ""))
        .await
        .unwrap();
    run_id
}

#[tokio::test]
async fn resume_never_repeats_a_write_whose_outcome_is_unknown_without_asking() {
    let h = harness().await;
    let log = h.file("log.txt");
    let p = plan(&[
        ("s1", "append", json!({"line": "one", "file": log}), 1, &[]),
        ("s2", "append", json!({"line": "two", "file": log}), 2, &[]),
        (
            "s3",
            "append",
            json!({"line": "three", "file": log}),
            3,
            &[],
        ),
    ]);
    let id = crashed_run(&h, &p, "append").await;
    let r = h
        .runner(&NoReplan)
        .resume(&id, Decisions::default())
        .await
        .unwrap();
    assert_eq!(r.status, RunStatus::NeedsInput);
    assert_eq!(r.questions[0].step_id, "s2");
    assert_eq!(r.questions[0].expects, "retry_or_done");
    assert_eq!(r.questions[0].key, "s2");
    assert!(lines(&log).is_empty(), "nothing was called");

    let decisions = Decisions {
        retry: ["s2".to_string()].into(),
        ..Decisions::default()
    };
    let r = h.runner(&NoReplan).resume(&id, decisions).await.unwrap();
    assert_eq!(r.status, RunStatus::Ok, "{}", r.message);
    assert_eq!(lines(&log), ["two", "three"], "s1 came from the journal");
    assert!(r.steps.iter().any(|s| s.step_id == "s1" && s.replayed));
    assert!(matches!(
        h.runner(&NoReplan).resume(&id, Decisions::default()).await,
        Err(waypoint_run::RunError::NotResumable { .. })
    ));
}

#[tokio::test]
async fn resume_takes_a_step_as_done_when_told_it_happened() {
    let h = harness().await;
    let log = h.file("log.txt");
    let p = plan(&[
        ("s1", "append", json!({"line": "one", "file": log}), 1, &[]),
        ("s2", "append", json!({"line": "two", "file": log}), 2, &[]),
    ]);
    let id = crashed_run(&h, &p, "append").await;
    let decisions = Decisions {
        done: ["s2".to_string()].into(),
        ..Decisions::default()
    };
    let r = h.runner(&NoReplan).resume(&id, decisions).await.unwrap();
    assert_eq!(r.status, RunStatus::Ok, "{}", r.message);
    assert!(lines(&log).is_empty(), "neither step was called again");
}

#[tokio::test]
async fn resume_calls_a_read_only_step_again_on_its_own() {
    let h = harness().await;
    let log = h.file("log.txt");
    let p = plan(&[
        ("s1", "append", json!({"line": "one", "file": log}), 1, &[]),
        ("s2", "echo", json!({"text": "again"}), 2, &[]),
    ]);
    let id = crashed_run(&h, &p, "echo").await;
    let r = h
        .runner(&NoReplan)
        .resume(&id, Decisions::default())
        .await
        .unwrap();
    assert_eq!(r.status, RunStatus::Ok, "{}", r.message);
    assert_eq!(r.output("s2").unwrap()["stdout"], "again\n");
}

#[tokio::test]
async fn questions_stop_the_run_and_answers_resume_it() {
    let h = harness().await;
    let p = plan(&[
        ("s1", "ask", json!({"question": "Which branch?"}), 1, &[]),
        (
            "s2",
            "echo",
            json!({"text": {"$placeholder": "a greeting"}}),
            2,
            &[],
        ),
    ]);
    let r = h.run(p, Limits::default()).await;
    assert_eq!(r.status, RunStatus::NeedsInput);
    assert_eq!(r.questions[0].text, "Which branch?");
    let decisions = Decisions {
        answers: [("s1".to_string(), "main".to_string())].into(),
        ..Decisions::default()
    };
    let r = h
        .runner(&NoReplan)
        .resume(&r.run_id, decisions)
        .await
        .unwrap();
    assert_eq!(r.status, RunStatus::NeedsInput, "{}", r.message);
    assert_eq!(r.questions[0].key, "s2.text", "{}", r.questions[0].text);
    let decisions = Decisions {
        answers: [
            ("s1".to_string(), "main".to_string()),
            ("s2.text".to_string(), "hi".to_string()),
        ]
        .into(),
        ..Decisions::default()
    };
    let r = h
        .runner(&NoReplan)
        .resume(&r.run_id, decisions)
        .await
        .unwrap();
    assert_eq!(r.status, RunStatus::Ok, "{}", r.message);
    assert_eq!(r.output("s1").unwrap()["answer"], "main");
    assert_eq!(r.output("s2").unwrap()["stdout"], "hi\n");
}

#[tokio::test]
async fn a_run_without_the_evidence_its_goal_needs_is_not_done() {
    let h = harness().await;
    let text = format!(
        "{CATALOG}  - name: status\n    description: Show the working tree status.\n    produces: [git_status]\n    run: {{command: [echo, clean]}}\nevidence:\n  - {{intent: status, entity: git_working_tree, needs: [git_status]}}\n"
    );
    let catalog = load(&[Source {
        name: "evidence.yaml".into(),
        text,
    }])
    .unwrap()
    .catalog;
    // A plan for "what changed" that never asks for the working tree.
    let mut p =
        serde_json::to_value(plan(&[("s1", "echo", json!({"text": "hi"}), 1, &[])])).unwrap();
    p["understanding"] = json!({"clauses": [{"index": 0, "text": "what changed", "span": {"start": 0, "end": 12}, "role": "action"}],
        "goals": [{"clause": 0, "intent": "status", "entity": "git_working_tree", "confidence": 0.9}], "extracted": {}});
    let p: Plan = serde_json::from_value(p).unwrap();
    let runner = Runner {
        catalog: &catalog,
        ..h.runner(&NoReplan)
    };
    let r = runner
        .run(
            p,
            Settings {
                limits: Limits {
                    max_replans: 0,
                    ..Limits::default()
                },
                ..Settings::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(r.status, RunStatus::NeedsHuman);
    assert_eq!(r.verification.as_ref().unwrap().missing, ["git_status"]);
    assert!(
        r.message.contains("missing evidence: git_status"),
        "{}",
        r.message
    );
}

#[tokio::test]
async fn a_plan_file_whose_shape_cannot_run_is_refused_before_anything_runs() {
    let h = harness().await;
    let twice = plan(&[
        ("s1", "echo", json!({"text": "a"}), 1, &[]),
        ("s1", "echo", json!({"text": "b"}), 2, &[]),
    ]);
    let e = h
        .runner(&NoReplan)
        .run(twice, Settings::default())
        .await
        .unwrap_err();
    assert!(e.to_string().contains("`s1` is used twice"), "{e}");
    let backwards = plan(&[
        ("s1", "echo", json!({"text": {"$ref": "s2/output"}}), 1, &[]),
        ("s2", "echo", json!({"text": "b"}), 1, &[]),
    ]);
    let e = h
        .runner(&NoReplan)
        .run(backwards, Settings::default())
        .await
        .unwrap_err();
    assert!(e.to_string().contains("later group"), "{e}");
    let dangling = plan(&[("s1", "echo", json!({"text": "a"}), 1, &["s9"])]);
    let e = h
        .runner(&NoReplan)
        .run(dangling, Settings::default())
        .await
        .unwrap_err();
    assert!(e.to_string().contains("`s9`"), "{e}");
    assert!(
        h.store
            .runs("tester", None, 10)
            .await
            .unwrap()
            .items
            .is_empty(),
        "no run was journaled"
    );
}

/// Issue finding 1: "delete every file" planned and ran a destructive step unasked.
#[tokio::test]
async fn finding_1_a_step_that_writes_waits_for_approval_and_nothing_is_called() {
    let h = harness().await;
    let file = h.file("log.txt");
    let p = plan(&[
        ("s1", "echo", json!({"text": "before"}), 1, &[]),
        ("s2", "append", json!({"line": "x", "file": file}), 2, &[]),
    ]);
    let held = Runner {
        approved: waypoint_run::Approvals::default(),
        ..h.runner(&NoReplan)
    };
    let r = held.run(p, Settings::default()).await.unwrap();
    assert_eq!(r.status, RunStatus::NeedsApproval, "{}", r.message);
    assert!(lines(&file).is_empty(), "the held call ran");
    let q = &r.questions[0];
    assert_eq!((q.expects.as_str(), q.key.as_str()), ("approve", "s2"));
    let call = q.call.as_ref().unwrap();
    assert_eq!(
        (call.tool.as_str(), call.effects.as_str()),
        ("append", "write")
    );
    assert_eq!(call.args["line"], "x");
    // Held before it counts: only s1 ran.
    assert_eq!(r.totals.steps, 1, "{:?}", r.totals);

    // Approving another step releases nothing.
    let other = Runner {
        approved: waypoint_run::Approvals {
            all: false,
            steps: ["s9".to_string()].into(),
        },
        ..h.runner(&NoReplan)
    };
    let again = other.resume(&r.run_id, Decisions::default()).await.unwrap();
    assert_eq!(again.status, RunStatus::NeedsApproval);
    assert!(lines(&file).is_empty());

    let approved = Runner {
        approved: waypoint_run::Approvals {
            all: false,
            steps: ["s2".to_string()].into(),
        },
        ..h.runner(&NoReplan)
    };
    let done = approved
        .resume(&r.run_id, Decisions::default())
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Ok, "{}", done.message);
    assert_eq!(lines(&file), ["x"]);
    // s1 came from the journal: called once in all.
    assert_eq!(done.totals.steps, 2, "{:?}", done.totals);
}

#[tokio::test]
async fn the_approval_bar_decides_which_effects_wait() {
    let h = harness().await;
    let file = h.file("log.txt");
    let unapproved = Runner {
        approved: waypoint_run::Approvals::default(),
        ..h.runner(&NoReplan)
    };
    for (bar, status, written) in [
        (waypoint_run::ApproveBar::Never, RunStatus::Ok, 1),
        (waypoint_run::ApproveBar::Destructive, RunStatus::Ok, 2),
        (waypoint_run::ApproveBar::Write, RunStatus::NeedsApproval, 2),
    ] {
        let p = plan(&[("s1", "append", json!({"line": "x", "file": file}), 1, &[])]);
        let settings = Settings {
            approve: bar,
            ..Settings::default()
        };
        let r = unapproved.run(p, settings).await.unwrap();
        assert_eq!(r.status, status, "{bar:?}: {}", r.message);
        assert_eq!(lines(&file).len(), written, "{bar:?}");
    }
}

/// Issue finding 8: a resume counted replayed steps against `max_steps` ("7 > 6").
#[tokio::test]
async fn finding_8_replayed_steps_do_not_count_against_max_steps() {
    let h = harness().await;
    let p = plan(&[
        ("s1", "echo", json!({"text": "a"}), 1, &[]),
        ("s2", "echo", json!({"text": "b"}), 2, &[]),
        ("s3", "ask", json!({"question": "Which branch?"}), 3, &[]),
        ("s4", "echo", json!({"text": "c"}), 4, &[]),
    ]);
    let limits = Limits {
        max_steps: 4,
        ..Limits::default()
    };
    let r = h.run(p, limits.clone()).await;
    assert_eq!(r.status, RunStatus::NeedsInput, "{}", r.message);
    let decisions = Decisions {
        answers: [("s3".to_string(), "main".to_string())].into(),
        limits: Some(limits),
        ..Decisions::default()
    };
    let r = h
        .runner(&NoReplan)
        .resume(&r.run_id, decisions)
        .await
        .unwrap();
    assert_eq!(r.status, RunStatus::Ok, "{}", r.message);
    assert_eq!(r.totals.steps, 4, "{:?}", r.totals);
}

/// Issue finding 10: after `code_review has no run` the replan tried `update_workflow`,
/// then `apply_patch` (a write). A replan now offers neither a tool nothing can run nor
/// a step stronger than the failed plan's.
#[test]
fn finding_10_a_replan_never_offers_a_tool_without_an_adapter_or_a_stronger_effect() {
    let base = r#"
tools:
  - name: inspect_code
    description: Inspect the code for problems.
    keywords: [inspect, code]
    run: {command: ["false"]}
  - name: review_code
    description: Inspect the code and review it.
    keywords: [inspect, code, review]
  - name: rewrite_code
    description: Inspect the code and rewrite it.
    keywords: [inspect, code, rewrite]
    effects: write
    run: {command: [echo, rewritten]}
"#;
    let replan = |text: &str| {
        let catalog = load(&[Source {
            name: "replan.yaml".into(),
            text: text.into(),
        }])
        .unwrap()
        .catalog;
        let recovery = waypoint_run::Recovery {
            catalog: &catalog,
            options: waypoint_core::Options::default(),
        };
        let failed = ["inspect_code".to_string()].into();
        let tried = vec![vec!["inspect_code".to_string()]];
        recovery
            .replan(&ReplanAsk {
                request: "inspect the code",
                context: None,
                failed_tools: &failed,
                digest: "s1 (inspect_code) failed",
                tried: &tried,
            })
            .map(|p| p.steps().iter().map(|s| s.tool.clone()).collect::<Vec<_>>())
    };
    assert_eq!(replan(base), None);
    let with_a_read = format!(
        "{base}  - name: scan_code\n    description: Scan files for problems.\n    keywords: [scan, inspect]\n    run: {{command: [echo, clean]}}\n"
    );
    assert_eq!(replan(&with_a_read), Some(vec!["scan_code".to_string()]));
}

/// Issue finding 10: answers were strings only (`--answer s1.n=2` failed "not of type
/// number"); an answer now takes the type its argument's schema asks for.
#[tokio::test]
async fn finding_10_an_answer_is_parsed_by_its_arguments_schema_type() {
    let h = harness().await;
    let text = format!(
        "{CATALOG}  - name: repeat\n    description: Repeat a word.\n    input_schema: {{type: object, properties: {{n: {{type: number}}}}, required: [n]}}\n    run: {{command: [echo, \"{{n}}\"]}}\n"
    );
    let catalog = load(&[Source {
        name: "typed.yaml".into(),
        text,
    }])
    .unwrap()
    .catalog;
    let runner = Runner {
        catalog: &catalog,
        ..h.runner(&NoReplan)
    };
    let p = plan(&[(
        "s1",
        "repeat",
        json!({"n": {"$placeholder": "how many"}}),
        1,
        &[],
    )]);
    let r = runner.run(p, Settings::default()).await.unwrap();
    assert_eq!(r.status, RunStatus::NeedsInput, "{}", r.message);
    assert_eq!(r.questions[0].key, "s1.n");
    let decisions = Decisions {
        answers: [("s1.n".to_string(), "2".to_string())].into(),
        ..Decisions::default()
    };
    let r = runner.resume(&r.run_id, decisions).await.unwrap();
    assert_eq!(r.status, RunStatus::Ok, "{}", r.message);
    assert_eq!(r.output("s1").unwrap()["stdout"], "2\n");
}
