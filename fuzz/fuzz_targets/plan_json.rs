//! Arbitrary bytes as the plan JSON of `waypoint run --plan FILE`: parsed, its shape
//! checked, and journaled and read back as the runner does. Never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use waypoint_protocol::{Plan, parse_plan};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(plan) = parse_plan(text) else {
        return;
    };
    let _ = plan.check_shape();
    for step in plan.steps() {
        let _ = step.dependencies();
    }
    // The runner journals the plan and a claimed or resumed run reads it back.
    let journaled = serde_json::to_string(&plan).expect("a plan serialises");
    let back: Plan = parse_plan(&journaled).expect("a journaled plan reads back");
    assert_eq!(back.steps().len(), plan.steps().len());
});
