//! `--embed-model`: routing by meaning from the command line, and what a broken folder does.

#![allow(clippy::unwrap_used, reason = "tests fail loudly on purpose")]

mod common;

use common::waypoint;

const TOOLS: &str = "tools:
  - name: list_directory
    description: Get a detailed listing of all files and directories in a specified path.
  - name: read_text_file
    description: Read the complete contents of a file from the file system as text.
  - name: create_entities
    description: Create multiple new entities in the knowledge graph
";

fn catalog() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("mcp.yaml"), TOOLS).unwrap();
    dir
}

#[test]
fn a_missing_model_folder_is_one_warning_and_a_model_free_plan() {
    let dir = catalog();
    let out = waypoint(&[
        "route",
        "read the file notes.txt",
        "--catalog",
        dir.path().to_str().unwrap(),
        "--embed-model",
        "/nonexistent/model",
    ]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.matches("meaning-level matching is off").count(),
        1,
        "{err}"
    );
    assert!(err.contains("/nonexistent/model/config.json"), "{err}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("read_text_file"), "{text}");
}

#[test]
fn with_a_model_a_request_finds_its_tool_by_meaning() {
    let Some(model) = std::env::var_os("WAYPOINT_TEST_EMBED_MODEL") else {
        assert!(
            std::env::var_os("WAYPOINT_REQUIRE_EMBED").is_none(),
            "WAYPOINT_REQUIRE_EMBED is set but WAYPOINT_TEST_EMBED_MODEL is not (scripts/test sets it)"
        );
        eprintln!("skipped: WAYPOINT_TEST_EMBED_MODEL is not set (scripts/embed-model install)");
        return;
    };
    let dir = catalog();
    let args = |with: bool| {
        let mut a = vec![
            "route".to_string(),
            "show me what's in the folder".to_string(),
            "--json".to_string(),
            "--catalog".to_string(),
            dir.path().display().to_string(),
        ];
        if with {
            a.push("--embed-model".into());
            a.push(model.to_string_lossy().into_owned());
        }
        a
    };
    let best = |with: bool| {
        let a = args(with);
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        let out = waypoint(&refs);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["clauses"][0]["recommendation"]["id"]
            .as_str()
            .map(str::to_string)
    };
    // "folder" is a synonym of "directory" in the vocabulary, so the words find it too;
    // meaning must not lose what the words find.
    assert_eq!(best(false).as_deref(), Some("list_directory"));
    assert_eq!(best(true).as_deref(), Some("list_directory"));
}

#[test]
fn an_empty_environment_variable_turns_meaning_off_quietly() {
    let dir = catalog();
    let out = common::command(&[
        "route",
        "read the file notes.txt",
        "--catalog",
        dir.path().to_str().unwrap(),
    ])
    .env("WAYPOINT_EMBED_MODEL", "")
    .output()
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("meaning"));
}
