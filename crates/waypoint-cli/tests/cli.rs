//! The `waypoint` binary end to end: arguments in, exit code and output out.

#![allow(
    clippy::unwrap_used,
    clippy::missing_panics_doc,
    clippy::needless_pass_by_value,
    reason = "test helpers fail loudly on purpose"
)]

mod common;

use common::{fixture, stderr, stdout, waypoint, waypoint_with_stdin};
use std::process::{Command, Stdio};

#[test]
fn plan_prints_numbered_steps_without_colour_when_piped() {
    let o = waypoint(&[
        "plan",
        "remember this launch, write a blog about it, then make an illustration",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(!out.contains('\x1b'), "escape codes on a pipe");
    insta::assert_snapshot!(out);
}

#[test]
fn plan_json_is_the_contract() {
    let o = waypoint(&[
        "plan",
        "fetch https://blog.rust-lang.org/ and translate it into Spanish",
        "--json",
    ]);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["complexity"], "pack-chain");
    assert_eq!(v["steps"][1]["input_refs"][0], "s1");
    assert_eq!(v["planner"], "deterministic");
    assert!(
        v["rewritten_prompt"]
            .as_str()
            .unwrap()
            .starts_with("Plan for:")
    );
}

#[test]
fn a_dash_reads_the_request_from_stdin() {
    let o = waypoint_with_stdin(
        &["plan", "-", "--format", "json"],
        Some("which files changed\n"),
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["steps"][0]["tool"], "git_status");
}

#[test]
fn diagrams_come_in_mermaid_and_dot() {
    let m = waypoint(&["plan", "review my changes", "--format", "mermaid"]);
    assert!(stdout(&m).contains("s1 --> s2"));
    let d = waypoint(&["plan", "review my changes", "--format", "dot"]);
    assert!(stdout(&d).starts_with("digraph plan {"));
}

#[test]
fn context_comes_inline_or_from_a_file() {
    let o = waypoint(&[
        "plan",
        "turn it into a blog post",
        "--context",
        "{\"paste\": \"Launch day!\"}",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["understanding"]["extracted"]["payload"]["paste"],
        "Launch day!"
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ctx.json");
    std::fs::write(&file, "{\"paste\": \"from a file\"}").unwrap();
    let arg = format!("@{}", file.display());
    let o = waypoint(&[
        "plan",
        "turn it into a blog post",
        "--context",
        &arg,
        "--json",
    ]);
    assert!(stdout(&o).contains("from a file"));
    let bad = waypoint(&["plan", "x", "--context", "{not json"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(stderr(&bad).contains("is not valid JSON"));
}

#[test]
fn route_and_understand_answer_in_json() {
    let r = waypoint(&["route", "order me a pizza", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    let v = &v["clauses"];
    assert!(v[0]["recommendation"].is_null());
    assert!(
        v[0]["gap_warning"]
            .as_str()
            .unwrap()
            .contains("no catalog entry")
    );
    let u = waypoint(&["understand", "read file src/main.rs", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&u.stdout).unwrap();
    assert_eq!(v["extracted"]["paths"][0], "src/main.rs");
    assert_eq!(v["goals"][0]["intent"], "navigate");
}

#[test]
fn catalog_check_reports_every_mistake_with_its_line_and_fails() {
    let o = waypoint(&["catalog", "check", "--catalog", &fixture("bad/five.yaml")]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    for line in [":4:5", ":5:5", ":9:19", ":11:5", ":16:21"] {
        assert!(err.contains(line), "no {line} in\n{err}");
    }
    assert!(err.contains("5 errors found"));
}

#[test]
fn catalog_check_passes_on_good_catalogs_and_show_lists_them() {
    let o = waypoint(&["catalog", "check"]);
    assert!(o.status.success());
    assert!(stderr(&o).contains("catalog ok"));
    let o = waypoint(&["catalog", "show", "--json", "--catalog", &fixture("good")]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["tools"].as_array().unwrap().len(), 2);
    let o = waypoint(&[
        "catalog",
        "check",
        "--json",
        "--catalog",
        &fixture("bad/five.yaml"),
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["ok"], false);
    assert_eq!(v["diagnostics"].as_array().unwrap().len(), 5);
}

#[test]
fn eval_prints_every_metric_and_names_a_bad_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases = dir.path().join("cases.jsonl");
    std::fs::write(
        &cases,
        "{\"id\": \"a\", \"request\": \"which files changed\", \"expect\": {\"tools\": [\"git_status\"], \"goal\": {\"intent\": \"status\"}}}\n",
    )
    .unwrap();
    let o = waypoint(&["eval", cases.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["cases"], 1);
    assert_eq!(v["sequence_accuracy"], 1.0);
    assert!(v["latency_us"]["p50"].is_u64());
    let table = waypoint(&["eval", cases.to_str().unwrap()]);
    assert!(stdout(&table).contains("sequence_accuracy"));
    std::fs::write(&cases, "{\"id\": \"a\", \"request\": \"x\"}\n{oops}\n").unwrap();
    let o = waypoint(&["eval", cases.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("cases.jsonl:2:"), "{}", stderr(&o));
}

#[test]
fn every_command_teaches_with_an_example() {
    for cmd in [
        &["plan", "--help"][..],
        &["route", "--help"],
        &["understand", "--help"],
        &["eval", "--help"],
        &["catalog", "check", "--help"],
        &["catalog", "show", "--help"],
        &["history", "--help"],
        &["forget", "--help"],
        &["--help"],
    ] {
        let o = waypoint(cmd);
        assert!(o.status.success());
        assert!(stdout(&o).contains("Examples:"), "{cmd:?}");
    }
}

#[test]
fn an_empty_request_is_a_clear_error() {
    let o = waypoint(&["plan", "   "]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("the request is empty"));
}

#[test]
fn colour_can_be_forced() {
    let o = waypoint(&["plan", "which files changed", "--color", "always"]);
    assert!(stdout(&o).contains('\x1b'));
}

#[test]
fn eval_handles_a_ten_thousand_tool_catalog() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("catalog.yaml");
    let cases = dir.path().join("cases.jsonl");
    std::fs::write(&catalog, waypoint_core::synth::catalog_yaml(10_000)).unwrap();
    std::fs::write(&cases, waypoint_core::synth::cases_jsonl(2_000, 10_000)).unwrap();
    let o = waypoint(&[
        "eval",
        cases.to_str().unwrap(),
        "--catalog",
        catalog.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["cases"], 2_000);
    // Every synthetic request names a tool that exists; nearly all must be routed.
    assert!(
        v["unknown_accuracy"].as_f64().unwrap() > 0.95,
        "{}",
        v["unknown_accuracy"]
    );
}

fn sqlite_store(dir: &tempfile::TempDir) -> String {
    format!("sqlite:{}", dir.path().join("history.db").display())
}

#[test]
fn plans_teach_nothing_and_an_accepted_plan_is_served_with_args_derived_anew() {
    let dir = tempfile::tempdir().unwrap();
    let store = sqlite_store(&dir);
    let request = "fetch https://blog.rust-lang.org/ and translate it into Spanish";
    let plan = || {
        let o = waypoint(&["plan", request, "--json", "--store", &store]);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(
            v["steps"][1]["args"]["target_language"], "Spanish",
            "args are derived anew"
        );
        v["planner"].as_str().unwrap().to_string()
    };
    let planners: Vec<String> = (0..4).map(|_| plan()).collect();
    assert_eq!(
        planners, ["deterministic"; 4],
        "plans that never ran teach nothing"
    );
    let o = waypoint(&["plans", "accept", request, "--json", "--store", &store]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(plan(), "learned");
    let o = waypoint(&["history", "--plans", "--json", "--store", &store]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["plans"][0]["outcomes"]["accepted"], 1, "{v}");
    assert_eq!(v["plans"][0]["stable"][0], "web_fetch");
}

#[test]
fn accepting_a_plan_with_a_gap_or_an_unknown_tool_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = sqlite_store(&dir);
    let plan = dir.path().join("plan.json");
    std::fs::write(
        &plan,
        r#"{"plan_id": "pl_x", "steps": [{"id": "s1", "order": 1, "kind": "tool", "tool": "no_such_tool", "group": 1}]}"#,
    )
    .unwrap();
    let plan = plan.display().to_string();
    let o = waypoint(&[
        "plans", "accept", "do it", "--plan", &plan, "--store", &store,
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("no_such_tool"), "{}", stderr(&o));
    let o = waypoint(&["history", "--json", "--store", &store]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"rows": [], "next_cursor": null}),
        "a refused acceptance leaves no row"
    );
}

#[test]
fn forget_all_empties_one_callers_history_and_no_one_elses() {
    let dir = tempfile::tempdir().unwrap();
    let store = sqlite_store(&dir);
    for caller in ["ana", "bo"] {
        let o = waypoint(&[
            "plan",
            "which files changed",
            "--store",
            &store,
            "--caller",
            caller,
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let o = waypoint(&["forget", "--all", "--store", &store, "--caller", "ana"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("forgot 1 plan of caller `ana`"));
    let rows = |caller: &str| -> usize {
        let o = waypoint(&["history", "--json", "--store", &store, "--caller", caller]);
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()["rows"]
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!(rows("ana"), 0);
    assert_eq!(rows("bo"), 1);
    let bad = waypoint(&["forget", "--store", &store]);
    assert_eq!(bad.status.code(), Some(2), "forget needs to be told what");
}

#[test]
fn no_word_of_a_request_reaches_the_sqlite_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = sqlite_store(&dir);
    let request =
        "summarize https://zanzibar-quokka.example/report.pdf and email it to marigold@example.com";
    let o = waypoint(&["plan", request, "--store", &store]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut bytes = Vec::new();
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        bytes.extend(std::fs::read(entry.unwrap().path()).unwrap());
    }
    assert!(bytes.len() > 1_000, "the store was written");
    let text = String::from_utf8_lossy(&bytes).to_lowercase();
    for word in [
        "zanzibar",
        "quokka",
        "marigold",
        "report.pdf",
        "summarize https",
    ] {
        assert!(!text.contains(word), "`{word}` found in the history file");
    }
}

#[test]
fn a_store_that_cannot_open_does_not_stop_planning() {
    let o = waypoint(&["plan", "which files changed", "--store", "redis://nowhere"]);
    assert!(o.status.success());
    assert!(stderr(&o).contains("plan history is off"), "{}", stderr(&o));
    let o = waypoint(&["history", "--store", "none"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("history is off"));
}

#[test]
fn concurrent_processes_lose_no_history_rows() {
    let dir = tempfile::tempdir().unwrap();
    let store = sqlite_store(&dir);
    let children: Vec<_> = (0..8)
        .map(|i| {
            Command::new(env!("CARGO_BIN_EXE_waypoint"))
                .args([
                    "plan",
                    &format!("which files changed {i}"),
                    "--store",
                    &store,
                    "--caller",
                    "many",
                ])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        assert!(
            !String::from_utf8_lossy(&out.stderr).contains("warning"),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let o = waypoint(&["history", "--json", "--store", &store, "--caller", "many"]);
    let rows: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(rows["rows"].as_array().unwrap().len(), 8);
}

#[test]
fn learn_after_sets_how_many_successful_runs_make_a_plan_learned() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "hi\n").unwrap();
    let store = sqlite_store(&dir);
    let work = dir.path().display().to_string();
    let request = "read the file notes.txt";
    let globals = ["--store", &store, "--learn-after", "1"];
    let planner = || {
        let o = waypoint(&[&globals[..], &["plan", request, "--json"]].concat());
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()["planner"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(planner(), "deterministic");
    assert_eq!(planner(), "deterministic", "a plan is not a run");
    let o = waypoint(
        &[
            &globals[..],
            &["run", request, "--workdir", &work, "--json"],
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(planner(), "learned");
}

/// Inputs that never end are read up to the limit and refused with the path and the
/// limit, instead of being read until memory runs out.
#[test]
fn endless_inputs_dev_zero_are_refused_at_the_limit() {
    let limit = waypoint_catalog::limited::MAX_INPUT_BYTES.to_string();
    let context = waypoint(&["plan", "x", "--context", "@/dev/zero"]);
    let catalog = waypoint(&["--catalog", "/dev/zero", "plan", "x"]);
    let stdin = common::command(&["plan", "-"])
        .stdin(std::fs::File::open("/dev/zero").unwrap())
        .output()
        .unwrap();
    for (what, o, path) in [
        ("--context @/dev/zero", context, "/dev/zero"),
        ("--catalog /dev/zero", catalog, "/dev/zero"),
        ("plan - < /dev/zero", stdin, "standard input"),
    ] {
        let err = stderr(&o);
        assert!(!o.status.success(), "{what}: {err}");
        assert!(err.contains(path) && err.contains(&limit), "{what}: {err}");
    }
}

/// Issue 20, finding 5: a document whose step its own safety level always refuses
/// passed as "catalog ok". `plans check` now fails on it, naming the file and line;
/// `catalog check` still loads it (the run refuses the step) unless `--strict`.
#[test]
fn issue_20_finding_5_plans_check_fails_on_a_step_the_safety_level_refuses() {
    let examples = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/catalog");
    let o = waypoint(&["--catalog", examples, "plans", "check"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("cleanup.yaml:8"), "{err}");
    assert!(err.contains("no_destructive_actions"), "{err}");
    assert!(err.contains("waypoint plans check"), "{err}");
    let o = waypoint(&["--catalog", examples, "catalog", "check", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["ok"], true);
    assert_eq!(v["diagnostics"][0]["severity"], "warning", "{v}");
    let o = waypoint(&["--catalog", examples, "catalog", "check", "--strict"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}
