//! The inputs kept from the `request_path` fuzz campaign (docs/security.md, "Fuzzing"),
//! replayed as the fuzz target feeds them: the bytes as a request to the model-free
//! planner on the built-in catalog, and, where they parse as the JSON body of
//! `POST /v1/plan`, that body's request and context. Each must plan or fail with a typed
//! error, never panic, and a plan must have a shape that can run.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use waypoint_protocol::RequestInput;

use crate::engine;

fn cases() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_cases/request_path");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no kept cases in {}", dir.display());
    files
}

fn plan_and_check(request: &str, context: Option<&serde_json::Value>) {
    if let Ok(plan) = engine().plan(request, context)
        && let Err(e) = plan.check_shape()
    {
        panic!("the planner made a plan that cannot run: {e}");
    }
}

/// What the fuzz target does with one input, with the plan's shape checked too.
fn check(bytes: &[u8]) {
    plan_and_check(&String::from_utf8_lossy(bytes), None);
    if let Ok(input) = serde_json::from_slice::<RequestInput>(bytes) {
        plan_and_check(&input.request, input.context.as_ref());
    }
}

#[test]
fn kept_fuzz_requests_plan_or_fail_with_a_typed_error() {
    let mut failed = Vec::new();
    for path in cases() {
        let bytes = std::fs::read(&path).unwrap();
        if catch_unwind(AssertUnwindSafe(|| check(&bytes))).is_err() {
            failed.push(path.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    assert!(failed.is_empty(), "panicked on {failed:?}");
}
