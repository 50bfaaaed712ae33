//! The inputs kept from the `plan_json` fuzz campaign (docs/security.md, "Fuzzing"),
//! replayed as the fuzz target feeds them: bytes as the plan JSON of `waypoint run
//! --plan FILE`, parsed, shape-checked, and journaled and read back as the runner does.
//! Each must answer `Ok` or `Err`, never panic.

#![allow(clippy::unwrap_used, reason = "test helpers fail loudly on purpose")]

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use waypoint_protocol::parse_plan;

/// What the fuzz target does with one input.
fn check(bytes: &[u8]) {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return;
    };
    let plan = match parse_plan(text) {
        Ok(plan) => plan,
        Err(e) => {
            assert!(e.to_string().starts_with("line "), "{e}");
            return;
        }
    };
    if let Err(e) = plan.check_shape() {
        assert!(!e.to_string().is_empty());
    }
    for step in plan.steps() {
        let _ = step.dependencies();
    }
    let journaled = serde_json::to_string(&plan).unwrap();
    let back = parse_plan(&journaled).unwrap();
    assert_eq!(back.steps().len(), plan.steps().len());
}

#[test]
fn kept_fuzz_plans_parse_or_fail_without_a_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_cases/plan_json");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no kept cases in {}", dir.display());
    let mut failed = Vec::new();
    for path in files {
        let bytes = std::fs::read(&path).unwrap();
        if catch_unwind(AssertUnwindSafe(|| check(&bytes))).is_err() {
            failed.push(path.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    assert!(failed.is_empty(), "panicked on {failed:?}");
}
