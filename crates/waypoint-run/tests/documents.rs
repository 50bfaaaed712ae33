//! Plan documents run end to end: three levels of nesting with a placeholder
//! whose value feeds the steps after it, the clarity gate, safety, constraints and
//! success criteria.

#![allow(
    clippy::unwrap_used,
    clippy::missing_panics_doc,
    reason = "tests fail loudly on purpose"
)]

use std::sync::Arc;

use serde_json::json;
use waypoint_catalog::{Catalog, Source, load};
use waypoint_protocol::{Plan, RunReport, RunStatus};
use waypoint_run::{Decisions, Limits, Runner, Settings, Toolbox};
use waypoint_store::RunStore as _;
use waypoint_store_sqlite::SqliteStore;

const TOOLS: &str = r#"
tools:
  - name: shout
    description: Upper-case a text.
    input_schema: {type: object, properties: {text: {type: string}}, required: [text]}
    produces: [loud_text]
    run: {command: [sh, -c, 'printf %s "$0" | tr a-z A-Z', "{text}"]}
  - name: wrap
    description: Wrap a text in brackets.
    input_schema: {type: object, properties: {text: {type: string}, left: {type: string}}, required: [text, left]}
    run: {command: [sh, -c, 'printf "%s%s]" "$1" "$0"', "{text}", "{left}"]}
  - name: wipe
    description: Delete everything.
    effects: destructive
    run: {command: ["true"]}
  - name: today
    description: Say which day it is.
    produces: [day]
    run: {command: [echo, Friday]}
"#;

const INNER: &str = r"id: plan://t/inner@1.0.0
intent: Shout a name
steps:
  - placeholder: The name of the person to greet
    type: name
    schema: {type: string, minLength: 2}
  - script: shout
    inputs:
      text: {description: The name from the placeholder}
";

const MIDDLE: &str = r#"id: plan://t/middle@1.3.0
intent: Shout a name and bracket it
steps:
  - plan: plan://t/inner@^1.0
  - script: wrap
    inputs:
      text: {description: The shouted name}
      left: {value: "["}
"#;

const OUTER: &str = r"id: plan://t/outer@2.0.0
intent: Greet someone loudly
constraints: {budget_usd: 0.25, max_runtime_seconds: 60, safety: no_destructive_actions}
success_criteria:
  - step 1 produced output
  - step 2 produced loud_text
  - everyone feels welcome
steps:
  - plan: plan://t/middle@^1
  - script: shout
    inputs:
      text: {description: The bracketed name}
";

const FOGGY: &str = r#"id: plan://t/foggy@0.1.0
intent: Do the report thing
intent_clarity:
  ambiguity_score: 0.6
  missing_criteria: ["Which data source: production or staging?", "Which format: JSON or PDF?"]
steps:
  - tool: today
"#;

const CAREFUL: &str = r"id: plan://t/careful@1.0.0
intent: Clean up safely
constraints: {safety: no_destructive_actions}
steps:
  - tool: today
  - tool: wipe
";

const DAILY: &str = r"id: plan://t/daily@1.0.0
intent: Shout the day
steps:
  - placeholder: Which day it is
    type: day
  - script: shout
    inputs:
      text: {description: The day}
";

const NICKNAME: &str = "id: plan://t/nickname@1.0.0\nintent: Make up a nickname\nproduces: [nickname]\nsteps:\n  - tool: shout\n    args: {text: ziggy}\n";
const HAIL: &str = "id: plan://t/hail@1.0.0\nintent: Hail someone by nickname\nsteps:\n  - placeholder: A nickname\n    type: nickname\n  - script: wrap\n    inputs:\n      text: {description: The nickname}\n      left: {value: \"(\"}\n";

fn catalog() -> Catalog {
    let files = [
        ("tools.yaml", TOOLS),
        ("plans/inner.yaml", INNER),
        ("plans/middle.yaml", MIDDLE),
        ("plans/outer.yaml", OUTER),
        ("plans/foggy.yaml", FOGGY),
        ("plans/careful.yaml", CAREFUL),
        ("plans/daily.yaml", DAILY),
        ("plans/nickname.yaml", NICKNAME),
        ("plans/hail.yaml", HAIL),
    ];
    let sources: Vec<Source> = files
        .iter()
        .map(|(n, t)| Source {
            name: (*n).into(),
            text: (*t).into(),
        })
        .collect();
    load(&sources).unwrap().catalog
}

fn plan_of(id: &str) -> Plan {
    serde_json::from_value(json!({"plan_id": "pl_doc", "steps": [
        {"id": "s1", "order": 1, "kind": "plan", "tool": id, "group": 1},
        {"id": "s2", "order": 2, "kind": "tool", "tool": "wrap", "group": 2, "input_refs": ["s1"],
         "args": {"text": {"$ref": "s1/output"}, "left": "<"}}
    ]}))
    .unwrap()
}

struct H {
    _dir: tempfile::TempDir,
    catalog: Catalog,
    store: Arc<SqliteStore>,
    toolbox: Toolbox<SqliteStore>,
}

async fn h() -> H {
    let dir = tempfile::tempdir().unwrap();
    let catalog = catalog();
    let store = Arc::new(
        SqliteStore::open(&dir.path().join("wp.db"), 60)
            .await
            .unwrap(),
    );
    let toolbox = Toolbox::new(dir.path(), &[], store.clone(), 1 << 20).unwrap();
    H {
        _dir: dir,
        catalog,
        store,
        toolbox,
    }
}

impl H {
    fn runner(&self) -> Runner<'_, SqliteStore> {
        Runner::new(&self.catalog, self.store.clone(), &self.toolbox, "t")
            .approving(waypoint_run::Approvals::all())
    }

    async fn run(&self, plan: Plan) -> RunReport {
        let settings = Settings {
            limits: Limits {
                max_replans: 0,
                ..Limits::default()
            },
            ..Settings::default()
        };
        self.runner().run(plan, settings).await.unwrap()
    }
}

#[tokio::test]
async fn a_three_level_plan_with_a_placeholder_runs_and_feeds_the_step_after_it() {
    let h = h().await;
    let r = h.run(plan_of("plan://t/outer@^2")).await;
    assert_eq!(r.status, RunStatus::NeedsInput, "{}", r.message);
    let q = &r.questions[0];
    assert!(
        q.text.contains("The name of the person to greet"),
        "{}",
        q.text
    );
    assert_eq!(q.key, "s1.1.1.1", "the key to answer under");

    // An answer that breaks the placeholder's schema is refused before use.
    let short = Decisions {
        answers: [("s1.1.1.1".to_string(), "A".to_string())].into(),
        ..Decisions::default()
    };
    let r2 = h.runner().resume(&r.run_id, short).await.unwrap();
    assert_ne!(r2.status, RunStatus::Ok);
    assert!(
        r2.steps.iter().any(|s| s
            .error
            .as_deref()
            .is_some_and(|e| e.contains("breaks its constraints"))),
        "{r2:?}"
    );

    let id = h.run(plan_of("plan://t/outer@^2")).await.run_id;
    let answer = Decisions {
        answers: [("s1.1.1.1".to_string(), "ada".to_string())].into(),
        ..Decisions::default()
    };
    let r = h.runner().resume(&id, answer).await.unwrap();
    assert_eq!(r.status, RunStatus::Ok, "{}", r.message);
    // inner shouts, middle brackets, outer shouts again; the next plan step wraps it.
    assert_eq!(r.output("s1").unwrap()["stdout"], "[ADA]");
    assert_eq!(r.output("s2").unwrap()["stdout"], "<[ADA]]");
    let keys: Vec<&str> = r
        .steps
        .iter()
        .filter(|s| !s.replayed)
        .map(|s| s.key.as_str())
        .collect();
    assert!(
        keys.contains(&"g0/s1.1.1.2"),
        "inner calls are journaled by path: {keys:?}"
    );
    let v = r.verification.unwrap();
    let verdicts: Vec<Option<bool>> = v.criteria.iter().map(|c| c.held).collect();
    assert_eq!(verdicts, [Some(true), Some(true), None], "{:?}", v.criteria);
}

#[tokio::test]
async fn the_clarity_gate_returns_the_plans_questions() {
    let h = h().await;
    let r = h.run(plan_of("plan://t/foggy@0.1.0")).await;
    assert_eq!(r.status, RunStatus::NeedsInput);
    let texts: Vec<&str> = r.questions.iter().map(|q| q.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "Which data source: production or staging?",
            "Which format: JSON or PDF?"
        ]
    );
    assert!(
        h.store.steps(&r.run_id).await.unwrap().is_empty(),
        "nothing ran"
    );
    // Issue 20, finding 2: each question has its own key, and answering them all
    // releases the gate.
    let keys: Vec<&str> = r.questions.iter().map(|q| q.key.as_str()).collect();
    assert_eq!(keys, ["s1.clarify.1", "s1.clarify.2"]);
    assert!(r.questions.iter().all(|q| q.expects == "clarify"));
    let one = Decisions {
        answers: [("s1.clarify.1".to_string(), "staging".to_string())].into(),
        ..Decisions::default()
    };
    let r2 = h.runner().resume(&r.run_id, one).await.unwrap();
    assert_eq!(
        r2.status,
        RunStatus::NeedsInput,
        "half the answers keep it shut"
    );
    let both = Decisions {
        answers: [
            ("s1.clarify.1".to_string(), "staging".to_string()),
            ("s1.clarify.2".to_string(), "JSON".to_string()),
        ]
        .into(),
        ..Decisions::default()
    };
    let r3 = h.runner().resume(&r.run_id, both).await.unwrap();
    assert_eq!(r3.status, RunStatus::Ok, "{}", r3.message);
}

#[tokio::test]
async fn issue_20_finding_4_a_path_input_never_takes_the_previous_steps_text() {
    const NOTE: &str = "id: plan://t/note@1.0.0\nintent: Save a note\nsteps:\n  - tool: today\n  - script: save\n    inputs:\n      file: {description: Where to save it}\n      body: {description: The note}\n";
    const SAVE: &str = "tools:\n  - name: save\n    description: Save a text to a file.\n    effects: write\n    input_schema: {type: object, properties: {file: {type: string}, body: {type: string}}, required: [file, body]}\n    run: {command: [sh, -c, 'printf %s \"$1\" > \"$0\"', \"{file}\", \"{body}\"]}\n  - name: today\n    description: Say which day it is.\n    run: {command: [echo, Friday]}\n";
    let dir = tempfile::tempdir().unwrap();
    let catalog = load(&[
        Source {
            name: "tools.yaml".into(),
            text: SAVE.into(),
        },
        Source {
            name: "plans/note.yaml".into(),
            text: NOTE.into(),
        },
    ])
    .unwrap()
    .catalog;
    let store = Arc::new(
        SqliteStore::open(&dir.path().join("wp.db"), 60)
            .await
            .unwrap(),
    );
    let toolbox = Toolbox::new(dir.path(), &[], store.clone(), 1 << 20).unwrap();
    let runner =
        Runner::new(&catalog, store, &toolbox, "t").approving(waypoint_run::Approvals::all());
    let plan: Plan = serde_json::from_value(json!({"plan_id": "pl_doc", "steps": [
        {"id": "s1", "order": 1, "kind": "plan", "tool": "plan://t/note@1.0.0", "group": 1}]}))
    .unwrap();
    let r = runner.run(plan, Settings::default()).await.unwrap();
    assert_eq!(r.status, RunStatus::NeedsInput, "{}", r.message);
    assert_eq!(r.questions.len(), 1, "{:?}", r.questions);
    assert_eq!(r.questions[0].key, "s1.2.file", "the file name is asked");
    let written: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .filter(|n| n.to_string_lossy().contains("Friday"))
        .collect();
    assert!(
        written.is_empty(),
        "a file was named after the text: {written:?}"
    );
}

#[tokio::test]
async fn no_destructive_actions_refuses_a_destructive_tool() {
    let h = h().await;
    let r = h.run(plan_of("plan://t/careful@1.0.0")).await;
    assert_ne!(r.status, RunStatus::Ok);
    let refused = r
        .steps
        .iter()
        .find(|s| s.tool == "plan://t/careful@1.0.0" || s.key.ends_with(".2"))
        .unwrap();
    assert!(
        refused
            .error
            .as_ref()
            .unwrap()
            .contains("no_destructive_actions"),
        "{refused:?}"
    );
    let journal = h.store.steps(&r.run_id).await.unwrap();
    assert!(
        journal.iter().all(|s| s.tool != "wipe"),
        "wipe was never called"
    );
}

#[tokio::test]
async fn issue_20_finding_4_a_safety_refusal_stops_the_run_instead_of_replanning() {
    let h = h().await;
    // Replans allowed: a refusal must still not send the run looking elsewhere.
    let r = h
        .runner()
        .run(plan_of("plan://t/careful@1.0.0"), Settings::default())
        .await
        .unwrap();
    assert_eq!(r.status, RunStatus::Failed, "{}", r.message);
    assert!(
        r.attempts.is_empty(),
        "a replan was tried: {:?}",
        r.attempts
    );
    assert_eq!(r.generation, 0);
    assert!(r.message.contains("safety constraint"), "{}", r.message);
    assert!(
        r.message.contains("no_destructive_actions"),
        "{}",
        r.message
    );
}

#[tokio::test]
async fn a_placeholder_is_filled_by_a_tool_that_produces_what_it_needs() {
    let h = h().await;
    let r = h.run(plan_of("plan://t/daily@1.0.0")).await;
    assert_eq!(r.status, RunStatus::Ok, "{}", r.message);
    assert_eq!(r.output("s1").unwrap()["stdout"], "FRIDAY\n");
}

#[tokio::test]
async fn a_plans_constraints_tighten_the_run_limits() {
    let h = h().await;
    let mut limits = Limits::default();
    waypoint_run::documents::tighten(&plan_of("plan://t/outer@2.0.0"), &h.catalog, &mut limits);
    assert!((limits.max_usd - 0.25).abs() < 1e-9);
    assert_eq!(limits.max_wall_ms, 60_000);
}

#[tokio::test]
async fn a_placeholder_is_filled_by_a_plan_that_produces_what_it_needs() {
    let h = h().await;
    let r = h.run(plan_of("plan://t/hail@1.0.0")).await;
    assert_eq!(r.status, RunStatus::Ok, "{}", r.message);
    // nickname's shout gives {"stdout": "ZIGGY"}; wrap takes its principal text.
    assert_eq!(r.output("s1").unwrap()["stdout"], "(ZIGGY]");
}
