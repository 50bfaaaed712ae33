//! The operations' answer schemas and the table in docs/contracts.md are generated from
//! the types every face answers with. `WAYPOINT_BLESS=1` rewrites both.

#![allow(clippy::unwrap_used, reason = "tests fail loudly on purpose")]

use std::path::PathBuf;

use waypoint_app::contract::{OPERATIONS, document};

fn docs(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs")
        .join(file)
}

#[test]
fn the_checked_in_operations_schema_is_current() {
    let path = docs("operations.schema.json");
    let fresh = serde_json::to_string_pretty(&document()).unwrap() + "\n";
    if std::env::var_os("WAYPOINT_BLESS").is_some() {
        std::fs::write(&path, &fresh).unwrap();
    }
    assert!(
        std::fs::read_to_string(&path).unwrap_or_default() == fresh,
        "docs/operations.schema.json is stale; run `WAYPOINT_BLESS=1 cargo test -p waypoint-app --test contract`"
    );
}

#[test]
fn the_operations_table_in_the_contracts_doc_is_current() {
    let path = docs("contracts.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let (start, end) = (
        "<!-- operations: generated, do not edit -->\n",
        "<!-- /operations -->",
    );
    let (a, b) = (
        text.find(start).unwrap() + start.len(),
        text.find(end).unwrap(),
    );
    let schema = document();
    let mut table = String::from("| operation | CLI | HTTP | answer |\n|---|---|---|---|\n");
    for op in OPERATIONS {
        let output = &schema["operations"][op.id]["output"];
        let name = output["$ref"]
            .as_str()
            .and_then(|r| r.rsplit('/').next())
            .unwrap_or("(inline)");
        table.push_str(&format!(
            "| `{}` | `{}` | `{}` | `{name}` |\n",
            op.id, op.cli, op.http
        ));
    }
    if std::env::var_os("WAYPOINT_BLESS").is_some() {
        let fresh = format!("{}{table}{}", &text[..a], &text[b..]);
        std::fs::write(&path, fresh).unwrap();
        return;
    }
    assert_eq!(
        &text[a..b],
        table,
        "the Operations table in docs/contracts.md is stale; run `WAYPOINT_BLESS=1 cargo test -p waypoint-app --test contract`"
    );
}

#[test]
fn every_answer_with_a_time_writes_rfc3339() {
    let schema = serde_json::to_string(&document()).unwrap();
    assert!(
        schema.contains("\"date-time\""),
        "no time field is a date-time"
    );
    for unit in ["at_unix", "last_at_unix"] {
        assert!(
            !schema.contains(&format!("\"{unit}\"")),
            "`{unit}` leaks into the contract"
        );
    }
}
