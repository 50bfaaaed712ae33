//! `waypoint config` and the file it reads, as a user meets them: a project's own
//! `waypoint.toml`, a typo in it, a starter file, the effective values with sources.

#![allow(
    clippy::unwrap_used,
    clippy::missing_panics_doc,
    reason = "tests fail loudly on purpose"
)]

mod common;

use common::{command, stderr, stdout};
use serde_json::Value;

fn in_dir(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    command(args).current_dir(dir).output().unwrap()
}

#[test]
fn finding_7_a_projects_waypoint_toml_is_read_and_a_typo_in_it_is_an_error_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("waypoint.toml"), "[run]\n\nmax_step = 3\n").unwrap();
    // Every command reads it, so the typo stops `plan` with the line and a suggestion.
    let o = in_dir(dir.path(), &["plan", "find CommandRouter"]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("waypoint.toml"), "{e}");
    assert!(e.contains("line 3"), "{e}");
    assert!(e.contains("did you mean `max_steps`?"), "{e}");
    // `config path` says which file that was, and why.
    let o = in_dir(dir.path(), &["config", "path", "--json"]);
    let places: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(places[0]["origin"], "project");
    assert_eq!(places[0]["in_effect"], true);
    assert_eq!(places[1]["origin"], "user");
    assert_eq!(places[1]["in_effect"], false);
    // An unknown section is refused the same way.
    std::fs::write(dir.path().join("waypoint.toml"), "[rn]\nmax_steps = 3\n").unwrap();
    let o = in_dir(dir.path(), &["config", "check", "--json"]);
    assert!(!o.status.success());
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["ok"], false);
    assert!(
        v["error"].as_str().unwrap().contains("did you mean `run`?"),
        "{v}"
    );
}

#[test]
fn config_init_writes_a_starter_that_checks_and_show_says_where_each_value_comes_from() {
    let dir = tempfile::tempdir().unwrap();
    let o = in_dir(dir.path(), &["config", "init", "./waypoint.toml"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let again = in_dir(dir.path(), &["config", "init", "./waypoint.toml"]);
    assert!(
        !again.status.success(),
        "init never overwrites without --force"
    );
    assert!(stderr(&again).contains("--force"), "{}", stderr(&again));
    let o = in_dir(dir.path(), &["config", "check"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("ok: "), "{}", stdout(&o));
    let o = in_dir(dir.path(), &["config", "show", "--json"]);
    let rows: Vec<Value> = serde_json::from_str(&stdout(&o)).unwrap();
    let row = |key: &str| rows.iter().find(|r| r["key"] == key).unwrap().clone();
    let approve = row("run.approve");
    assert_eq!(approve["value"], "write");
    assert!(
        approve["source"]
            .as_str()
            .unwrap()
            .contains("waypoint.toml:"),
        "{approve}"
    );
    let steps = row("run.max_steps");
    assert_eq!(steps["value"], 32);
    assert_eq!(steps["source"], "default");
    assert!(rows.iter().any(|r| r["key"] == "serve.max_rate_per_caller"));
}

#[test]
fn config_show_never_prints_a_callers_token() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("waypoint.toml"),
        "[serve.callers]\nalice = { token = \"alice-secret-0123456789\" }\n",
    )
    .unwrap();
    for args in [&["config", "show"][..], &["config", "show", "--json"][..]] {
        let o = in_dir(dir.path(), args);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stdout(&o).contains("alice"), "{}", stdout(&o));
        assert!(!stdout(&o).contains("alice-secret"), "{}", stdout(&o));
    }
}
