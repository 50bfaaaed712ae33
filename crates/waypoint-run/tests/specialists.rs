//! The specialist runner's schedule on the built-in agent studio: priority
//! order becomes execution order, and every specialist's brief carries its instructions
//! and the request's concrete values.

#![allow(
    clippy::unwrap_used,
    clippy::missing_panics_doc,
    reason = "tests fail loudly on purpose"
)]

use waypoint_core::{Engine, Options};
use waypoint_protocol::{Priority, StepKind};
use waypoint_run::specialists::schedule;

fn engine() -> Engine {
    let catalog = waypoint_catalog::builtin().unwrap().catalog;
    Engine::new(catalog, Options::default()).unwrap()
}

#[test]
fn specialists_run_in_priority_order_with_their_briefs() {
    let engine = engine();
    let request =
        "create an agent that watches https://example.com/search and run it every Friday at 9";
    let plan = engine.plan(request, None).unwrap();
    let view = engine.specialist_plan(request, &plan);
    assert_eq!(
        view.priority_order,
        [
            Priority::One("agent".into()),
            Priority::One("workflow".into())
        ]
    );
    let (scheduled, briefs) = schedule(&view, &plan, engine.catalog());
    let tools: Vec<&str> = scheduled.steps().iter().map(|s| s.tool.as_str()).collect();
    assert_eq!(tools, ["create_agent", "create_workflow"]);
    let groups: Vec<u32> = scheduled.steps().iter().map(|s| s.group).collect();
    assert!(
        groups[0] < groups[1],
        "workflow runs after agent: {groups:?}"
    );
    for step in scheduled.steps() {
        let brief = &briefs[&step.id];
        assert!(brief.contains("https://example.com/search"), "{brief}");
        assert!(brief.contains("every Friday at 9"), "{brief}");
    }
    assert!(briefs["s1"].contains("You are the agent specialist"));
    assert!(briefs["s2"].contains("Attach what the agent specialist creates"));
}

#[test]
fn a_fallback_specialist_gets_the_whole_user_message() {
    let engine = engine();
    let request = "hmm, what would you suggest for https://example.com/x";
    let plan = engine.plan(request, None).unwrap();
    let mut view = engine.specialist_plan(request, &plan);
    view.fallback = true;
    view.priority_order = vec![Priority::One("general".into())];
    let (scheduled, briefs) = schedule(&view, &plan, engine.catalog());
    let general = scheduled
        .steps()
        .iter()
        .find(|s| s.tool == "specialist:general" || s.tool == "clarify")
        .unwrap();
    let brief = &briefs[&general.id];
    assert!(brief.contains("User message"), "{brief}");
    assert!(brief.contains(request), "{brief}");
    if general.tool == "specialist:general" {
        assert_eq!(general.kind, StepKind::LlmSubtask);
    }
}
