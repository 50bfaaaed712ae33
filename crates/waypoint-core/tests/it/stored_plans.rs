//! Plan documents as planning candidates (beside the pipeline rule): a
//! request whose intent fits a stored plan gets that plan as one step.

use waypoint_catalog::{Source, load};
use waypoint_core::{Engine, Options};
use waypoint_protocol::{Complexity, StepKind};

fn engine_with_plans() -> Engine {
    let mut sources: Vec<Source> = waypoint_catalog::BUILTIN_SOURCES
        .iter()
        .map(|(name, text)| Source {
            name: (*name).into(),
            text: (*text).into(),
        })
        .collect();
    sources.push(Source {
        name: "plans/release-notes.yaml".into(),
        text: "id: plan://team/release-notes@1.1.0\nintent: Write the release notes for a version\nkeywords: [release notes, changelog for the release]\nproduces: [text]\nsteps:\n  - tool: git_log\n    args: {limit: 50}\n  - guidance: Group changes by feature.\n".into(),
    });
    let catalog = load(&sources).unwrap().catalog;
    Engine::new(catalog, Options::default()).unwrap()
}

#[test]
fn a_request_that_fits_a_stored_plan_gets_it_as_one_step() {
    let e = engine_with_plans();
    let plan = e
        .plan("write the release notes for version 2.4", None)
        .unwrap();
    assert_eq!(plan.steps().len(), 1, "{:?}", plan.steps());
    let step = &plan.steps()[0];
    assert_eq!(step.kind, StepKind::Plan);
    assert_eq!(step.tool, "plan://team/release-notes@1.1.0");
    assert!(
        step.rationale.starts_with("a stored plan fits"),
        "{}",
        step.rationale
    );
    assert_eq!(plan.complexity(), Complexity::PipelineDirect);
}

#[test]
fn requests_the_stored_plan_does_not_fit_plan_as_before() {
    let with = engine_with_plans();
    for request in [
        "what changed",
        "find CommandRouter",
        "summarize this: the launch went well",
    ] {
        let a: Vec<String> = with
            .plan(request, None)
            .unwrap()
            .steps()
            .iter()
            .map(|s| s.tool.clone())
            .collect();
        let b: Vec<String> = crate::engine()
            .plan(request, None)
            .unwrap()
            .steps()
            .iter()
            .map(|s| s.tool.clone())
            .collect();
        assert_eq!(a, b, "{request}");
    }
}
