//! The checked-in JSON Schema of the plan must match the Rust types.
//! Run with `WAYPOINT_BLESS=1` to regenerate `docs/plan.schema.json` after a change.

use std::path::PathBuf;

#[test]
fn checked_in_plan_schema_is_current() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/plan.schema.json");
    let fresh = serde_json::to_string_pretty(&waypoint_protocol::plan_schema()).unwrap() + "\n";
    if std::env::var_os("WAYPOINT_BLESS").is_some() {
        std::fs::write(&path, &fresh).unwrap();
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == fresh,
        "docs/plan.schema.json is stale; run `WAYPOINT_BLESS=1 cargo test -p waypoint-protocol --test schema`"
    );
}

#[test]
fn schema_names_every_contract_field() {
    let schema = waypoint_protocol::plan_schema();
    let props = schema["properties"].as_object().unwrap();
    for key in [
        "schema_version",
        "plan_id",
        "steps",
        "complexity",
        "rewritten_prompt",
        "reasoning",
        "understanding",
        "clarity",
        "planner",
        "model",
        "compaction",
        "usage",
    ] {
        assert!(props.contains_key(key), "plan schema lacks `{key}`");
    }
    let kinds = serde_json::to_string(&schema["$defs"]["StepKind"]).unwrap();
    for kind in [
        "tool",
        "pipeline",
        "plan",
        "llm_subtask",
        "ask_user",
        "unknown",
    ] {
        assert!(kinds.contains(kind), "StepKind lacks `{kind}`");
    }
}
