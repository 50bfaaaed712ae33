//! Compaction keeps what matters: at a quarter of the default catalog's tokens, the
//! tools the deterministic planner picks for the evaluation cases are still shown.

#![allow(clippy::unwrap_used, reason = "tests fail loudly on purpose")]

use waypoint_cascade::Compactor;
use waypoint_core::{Engine, Options};
use waypoint_protocol::StepKind;

/// The shared evaluation cases (when the checkout sits beside `shared/`) and our own
/// paraphrase sets, which test wording the router was not tuned on.
fn cases() -> Vec<waypoint_protocol::EvalCase> {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut cases = Vec::new();
    for path in [
        format!("{root}/../../../shared/eval/cases.jsonl"),
        format!("{root}/../../eval/dev.jsonl"),
        format!("{root}/../../eval/dev2.jsonl"),
    ] {
        if let Ok(text) = std::fs::read_to_string(&path) {
            cases.extend(waypoint_eval::read_cases(&text, &path).unwrap());
        }
    }
    assert!(!cases.is_empty(), "no evaluation cases found");
    cases
}

#[test]
fn a_quarter_budget_keeps_the_planned_tools() {
    let engine = Engine::new(
        waypoint_catalog::builtin().unwrap().catalog,
        Options::default(),
    )
    .unwrap();
    let compactor = Compactor::new(engine.catalog());
    let budget = compactor.full_tokens() / 4;
    let (mut picked, mut kept) = (0usize, 0usize);
    let mut lost = Vec::new();
    for case in cases() {
        let plan = engine.plan(&case.request, case.context.as_ref()).unwrap();
        let ranking = engine
            .rank_catalog(&case.request, case.context.as_ref())
            .unwrap();
        let out = compactor.compact(&ranking, budget);
        assert!(
            out.report.after_tokens <= budget,
            "{}: {} tokens over a budget of {budget}",
            case.id,
            out.report.after_tokens
        );
        assert!(out.report.before_tokens >= compactor.full_tokens() - 8);
        for step in plan.steps().iter().filter(|s| s.kind != StepKind::Unknown) {
            picked += 1;
            if out.kept.contains(&step.tool) {
                kept += 1;
            } else {
                lost.push(format!("{}: {}", case.id, step.tool));
            }
        }
    }
    let recall = kept as f64 / picked as f64;
    eprintln!("compaction recall at 25%: {kept}/{picked} = {recall:.3}");
    assert!(picked > 50, "the cases should pick tools");
    assert!(recall >= 0.99, "recall {recall:.3}; lost: {lost:?}");
}
