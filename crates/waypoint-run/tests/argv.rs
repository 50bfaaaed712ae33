//! Request text in command argv: no options, no shell code, no paths outside the
//! working directory — against real processes and files.

#![allow(
    clippy::unwrap_used,
    clippy::missing_panics_doc,
    reason = "tests fail loudly on purpose"
)]

use std::sync::Arc;

use serde_json::{Value, json};
use waypoint_catalog::{CatalogError, Source, load};
use waypoint_protocol::{Plan, RunReport};
use waypoint_run::{Limits, Runner, Settings, Toolbox};
use waypoint_store_sqlite::SqliteStore;

const CATALOG: &str = r#"tools:
  - name: sort_text
    description: Sort lines.
    input_schema: {type: object, properties: {text: {type: string}}, required: [text]}
    run: {command: [sort, "{text}"]}
  - name: sort_files
    description: Sort files.
    input_schema: {type: object, properties: {text: {type: string}}, required: [text]}
    run: {command: [sort, --, "{text}"]}
  - name: show
    description: Print a file.
    input_schema: {type: object, properties: {path: {type: string}}, required: [path]}
    run: {command: [cat, "{path}"]}
  - name: say
    description: Echo through a shell.
    input_schema: {type: object, properties: {text: {type: string, shell_quoted: true}}, required: [text]}
    run: {command: [sh, -c, "echo {text}"]}
"#;

/// Runs one-step plans of `tool` with each args in turn, in a working directory inside
/// a parent that also holds `outside`.
async fn run_each(tool: &str, args: &[Value]) -> (tempfile::TempDir, Vec<RunReport>) {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    std::fs::write(dir.path().join("outside"), "SECRET\n").unwrap();
    std::fs::write(work.join("inside.txt"), "inside\n").unwrap();
    let catalog = load(&[Source {
        name: "argv.yaml".into(),
        text: CATALOG.into(),
    }])
    .unwrap()
    .catalog;
    let store = Arc::new(
        SqliteStore::open(&dir.path().join("wp.db"), 60)
            .await
            .unwrap(),
    );
    let toolbox = Toolbox::new(&work, &[], store.clone(), 1 << 20).unwrap();
    let runner =
        Runner::new(&catalog, store, &toolbox, "t").approving(waypoint_run::Approvals::all());
    let mut reports = Vec::new();
    for a in args {
        let steps =
            json!([{"id": "s1", "order": 1, "kind": "tool", "tool": tool, "group": 1, "args": a}]);
        let plan: Plan =
            serde_json::from_value(json!({"plan_id": "pl_argv", "steps": steps})).unwrap();
        let limits = Limits {
            max_replans: 0,
            ..Limits::default()
        };
        reports.push(
            runner
                .run(
                    plan,
                    Settings {
                        limits,
                        ..Settings::default()
                    },
                )
                .await
                .unwrap(),
        );
    }
    (dir, reports)
}

fn error(r: &RunReport) -> String {
    r.steps[0].error.clone().unwrap_or_default()
}

#[tokio::test]
async fn argv_values_cannot_start_options() {
    let (dir, r) = run_each(
        "sort_text",
        &[
            json!({"text": "--output=pwned"}),
            json!({"text": "-opwned"}),
        ],
    )
    .await;
    for r in &r {
        assert!(error(r).contains("starts with `-`"), "{}", error(r));
    }
    assert!(
        !dir.path().join("work/pwned").exists(),
        "the option was not passed"
    );
    // After a literal `--` the same text is an operand: sort is asked to read a file.
    let (dir, r) = run_each("sort_files", &[json!({"text": "--output=pwned"})]).await;
    assert!(
        !error(&r[0]).contains("starts with `-`"),
        "{}",
        error(&r[0])
    );
    assert!(!dir.path().join("work/pwned").exists());
}

#[tokio::test]
async fn argv_shell_scripts_with_placeholders_are_refused_at_load() {
    let text = "tools:\n  - name: say\n    description: Echo.\n    input_schema: {type: object, properties: {text: {type: string}}}\n    run: {command: [sh, -c, \"echo {text}\"]}\n";
    let Err(CatalogError::Invalid { diagnostics }) = load(&[Source {
        name: "shell.yaml".into(),
        text: text.into(),
    }]) else {
        panic!("a shell script with a placeholder loaded");
    };
    let d = diagnostics.iter().find(|d| d.is_error()).unwrap();
    assert_eq!((d.at.file.as_str(), d.at.line), ("shell.yaml", 5), "{d}");
    assert!(d.message.contains("shell_quoted"), "{d}");
    for argv in [
        r#"[python3, -c, "print({text})"]"#,
        r#"[bash, -c, "echo '{text}'"]"#,
    ] {
        let text = text
            .replace(r#"[sh, -c, "echo {text}"]"#, argv)
            .replace("{type: string}", "{type: string, shell_quoted: true}");
        assert!(
            load(&[Source {
                name: "s.yaml".into(),
                text
            }])
            .is_err(),
            "{argv}"
        );
    }
}

#[tokio::test]
async fn argv_shell_quoted_values_stay_text() {
    let (dir, r) = run_each(
        "say",
        &[json!({"text": "a'b; id > pwned; $(id) `id` \"q\""})],
    )
    .await;
    let out = r[0].output("s1").unwrap();
    assert_eq!(
        out["stdout"], "a'b; id > pwned; $(id) `id` \"q\"\n",
        "{r:?}"
    );
    assert!(!dir.path().join("work/pwned").exists());
}

#[tokio::test]
async fn argv_paths_are_confined_to_the_workdir() {
    let (_dir, r) = run_each(
        "show",
        &[
            json!({"path": "../outside"}),
            json!({"path": "../missing"}),
            json!({"path": "inside.txt"}),
        ],
    )
    .await;
    let (exists, missing) = (error(&r[0]), error(&r[1]));
    assert!(exists.contains("outside the working directory"), "{exists}");
    assert_eq!(
        exists.replace("../outside", "X"),
        missing.replace("../missing", "X"),
        "the refusal does not tell whether the path exists"
    );
    assert!(!format!("{r:?}").contains("SECRET"));
    assert_eq!(r[2].output("s1").unwrap()["stdout"], "inside\n");
}

#[tokio::test]
async fn timeouts_kill_the_tools_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().canonicalize().unwrap();
    let catalog = load(&[Source {
        name: "late.yaml".into(),
        text: "tools:\n  - name: late\n    description: Writes late.\n    effects: write\n    run: {command: [sh, -c, '(sleep 2; echo late > f) & wait']}\n".into(),
    }])
    .unwrap()
    .catalog;
    let store = Arc::new(SqliteStore::open(&work.join("wp.db"), 60).await.unwrap());
    let toolbox = Toolbox::new(&work, &[], store.clone(), 1 << 20).unwrap();
    let runner =
        Runner::new(&catalog, store, &toolbox, "t").approving(waypoint_run::Approvals::all());
    let steps =
        json!([{"id": "s1", "order": 1, "kind": "tool", "tool": "late", "group": 1, "args": {}}]);
    let plan: Plan = serde_json::from_value(json!({"plan_id": "pl_late", "steps": steps})).unwrap();
    let limits = Limits {
        max_replans: 0,
        tool_timeout_ms: 300,
        ..Limits::default()
    };
    let r = runner
        .run(
            plan,
            Settings {
                limits,
                ..Settings::default()
            },
        )
        .await
        .unwrap();
    assert!(error(&r).contains("longer than"), "{}", error(&r));
    // Wait well past the sleep: nothing of the tool may still be running.
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    assert!(
        !work.join("f").exists(),
        "a child of the timed-out tool wrote after the step failed"
    );
}
