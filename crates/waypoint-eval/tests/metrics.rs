//! The scorer on hand-made plans whose metrics were worked out by hand (see each
//! comment), plus the strict reading of case files.

#![allow(
    clippy::unwrap_used,
    clippy::missing_panics_doc,
    clippy::needless_pass_by_value,
    reason = "test helpers fail loudly on purpose"
)]

use serde_json::json;
use waypoint_eval::{EvalError, Planned, Scorer, evaluate_by, read_cases};
use waypoint_protocol::{
    Clarity, EvalCase, Extracted, Goal, Plan, PlanParts, PlannerKind, Step, StepKind, Understanding,
};

fn step(n: u32, tool: &str, kind: StepKind, refs: &[&str]) -> Step {
    Step {
        id: format!("s{n}"),
        order: n,
        kind,
        tool: tool.into(),
        args: serde_json::Map::new(),
        input_refs: refs.iter().map(|r| (*r).to_string()).collect(),
        after: Vec::new(),
        group: 1,
        rationale: String::new(),
        clause: None,
    }
}

fn plan(steps: Vec<Step>, goal: Option<(&str, &str)>, urls: &[&str], ready: bool) -> Plan {
    plan_by(PlannerKind::Deterministic, steps, goal, urls, ready)
}

fn plan_by(
    planner: PlannerKind,
    steps: Vec<Step>,
    goal: Option<(&str, &str)>,
    urls: &[&str],
    ready: bool,
) -> Plan {
    let goals = goal
        .map(|(i, e)| Goal {
            intent: i.into(),
            entity: Some(e.into()),
            confidence: 0.9,
            ..Goal::default()
        })
        .into_iter()
        .collect();
    let extracted = Extracted {
        urls: urls.iter().map(|u| (*u).to_string()).collect(),
        ..Extracted::default()
    };
    Plan::new(PlanParts {
        plan_id: "pl_test".into(),
        request: "r".into(),
        steps,
        reasoning: String::new(),
        understanding: Understanding {
            clauses: vec![],
            goals,
            extracted,
        },
        clarity: if ready {
            Clarity::new(0.0, vec![])
        } else {
            Clarity::new(0.9, vec!["?".into()])
        },
        planner,
        model: None,
        compaction: None,
        usage: None,
        warnings: vec![],
    })
}

fn case(line: serde_json::Value) -> EvalCase {
    serde_json::from_value(line).unwrap()
}

#[test]
fn metrics_match_the_hand_computed_figures() {
    use StepKind::{Pipeline, Tool, Unknown};
    let mut s = Scorer::default();
    // 1: sequence hit, 2 true nodes, 1 true edge, complexity hit.
    s.score(
        &case(json!({"id": "1", "request": "r", "expect": {"tools": ["a", "b"], "links": [["a", "b"]], "complexity": "pack-chain"}})),
        Ok(&plan(vec![step(1, "a", Tool, &[]), step(2, "b", Tool, &["s1"])], None, &[], true)),
        10,
    );
    // 2: sequence miss; nodes: expected [a], got [c] → 1 false positive, 1 false negative;
    //    the plan has no unknown step although one was expected.
    s.score(
        &case(json!({"id": "2", "request": "r", "expect": {"tools": ["a", "unknown"], "unknown": true}})),
        Ok(&plan(vec![step(1, "c", Tool, &[])], None, &[], true)),
        20,
    );
    // 3: set hit ({a, b}); nodes: expected [b, a], got [a, b, b] → 2 true, 1 false positive;
    //    the unknown step is left out of both.
    s.score(
        &case(json!({"id": "3", "request": "r", "expect": {"tool_set": ["b", "a"]}})),
        Ok(&plan(
            vec![
                step(1, "a", Tool, &[]),
                step(2, "b", Tool, &[]),
                step(3, "b", Tool, &[]),
                step(4, "unknown", Unknown, &[]),
            ],
            None,
            &[],
            true,
        )),
        30,
    );
    // 4: goal hit (entity is one of a list), ready hit, 1 of 2 URLs found.
    s.score(
        &case(json!({"id": "4", "request": "r", "expect": {"goal": {"intent": "status", "entity": ["x", "y"]}, "ready_to_formalize": true, "extracted": {"urls": ["u1", "u2"]}}})),
        Ok(&plan(vec![], Some(("status", "y")), &["u1"], true)),
        40,
    );
    // 5: complexity miss (one pipeline step is pipeline-direct).
    s.score(
        &case(json!({"id": "5", "request": "r", "expect": {"complexity": "single-action"}})),
        Ok(&plan(vec![step(1, "p", Pipeline, &[])], None, &[], true)),
        50,
    );
    let r = s.finish();
    assert_eq!(r.cases, 5);
    assert_eq!(r.goal_accuracy, Some(1.0));
    assert_eq!(r.sequence_accuracy, Some(0.5));
    assert_eq!(r.set_accuracy, Some(1.0));
    // tp 4, fp 2, fn 1 → 2·4 / (2·4 + 2 + 1) = 8/11
    assert_eq!(r.node_f1, Some(0.7273));
    assert_eq!(r.edge_f1, Some(1.0));
    assert_eq!(r.complexity_accuracy, Some(0.5));
    assert_eq!(r.unknown_accuracy, Some(0.0));
    assert_eq!(r.ready_accuracy, Some(1.0));
    assert_eq!(r.extracted_recall, Some(0.5));
    // nearest rank over [10, 20, 30, 40, 50]: p50 is the 3rd, p99 the 5th
    assert_eq!((r.latency_us.p50, r.latency_us.p99), (30, 50));
    let fields: Vec<(&str, &str)> = r
        .failures
        .iter()
        .map(|f| (f.id.as_str(), f.field.as_str()))
        .collect();
    assert_eq!(
        fields,
        [
            ("2", "tools"),
            ("2", "unknown"),
            ("4", "extracted.urls"),
            ("5", "complexity")
        ]
    );
}

#[test]
fn a_metric_no_case_carries_is_null_and_every_key_is_printed() {
    let mut s = Scorer::default();
    s.score(
        &case(json!({"id": "1", "request": "r"})),
        Ok(&plan(vec![], None, &[], true)),
        1,
    );
    let v = serde_json::to_value(s.finish()).unwrap();
    for key in [
        "cases",
        "goal_accuracy",
        "sequence_accuracy",
        "set_accuracy",
        "node_f1",
        "edge_f1",
        "complexity_accuracy",
        "unknown_accuracy",
        "ready_accuracy",
        "extracted_recall",
        "latency_us",
        "failures",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    assert!(v["goal_accuracy"].is_null());
}

#[test]
fn an_order_the_request_gave_is_an_edge_like_a_data_link() {
    let mut s = Scorer::default();
    let mut call = step(2, "call", StepKind::Tool, &[]);
    call.after = vec!["s1".into()];
    call.group = 2;
    let text = step(3, "text", StepKind::Tool, &["s1"]);
    s.score(
        &case(json!({"id": "o", "request": "r", "expect": {
            "tools": ["pay", "call", "text"],
            "links": [["pay", "call"], ["call", "text"]]}})),
        Ok(&plan(
            vec![step(1, "pay", StepKind::Tool, &[]), call, text],
            None,
            &[],
            true,
        )),
        1,
    );
    let r = s.finish();
    // got (pay, call) by order and (pay, text) by data: 1 of 2 right each way.
    assert_eq!(r.edge_f1, Some(0.5));
    assert_eq!(r.failures[0].field, "links");
}

#[test]
fn a_planning_error_fails_the_case() {
    let mut s = Scorer::default();
    s.score(
        &case(json!({"id": "e", "request": "", "expect": {"tools": ["a"]}})),
        Err("the request is empty".into()),
        1,
    );
    let r = s.finish();
    assert_eq!(r.sequence_accuracy, Some(0.0));
    assert_eq!(r.node_f1, Some(0.0));
    assert_eq!(r.failures[0].field, "plan");
}

#[test]
fn a_malformed_line_is_an_error_naming_its_line() {
    let text = "{\"id\": \"a\", \"request\": \"x\"}\n\n{\"id\": \"b\", \"request\": }\n";
    let err = read_cases(text, "cases.jsonl").unwrap_err();
    assert!(matches!(err, EvalError::Malformed { line: 3, .. }), "{err}");
    assert!(err.to_string().starts_with("cases.jsonl:3:"));
    let typo = read_cases(
        "{\"id\": \"a\", \"request\": \"x\", \"expect\": {\"tool\": [\"a\"]}}",
        "c.jsonl",
    )
    .unwrap_err();
    assert!(typo.to_string().contains("unknown field `tool`"), "{typo}");
    let dup = read_cases(
        "{\"id\": \"a\", \"request\": \"x\"}\n{\"id\": \"a\", \"request\": \"y\"}",
        "c.jsonl",
    )
    .unwrap_err();
    assert!(
        dup.to_string()
            .contains("duplicate case id `a` (first on line 1)")
    );
    assert!(matches!(
        read_cases("\n\n", "e.jsonl"),
        Err(EvalError::Empty(_))
    ));
}

#[test]
fn training_adds_examples_and_names_unknown_labels() {
    let mut catalog = waypoint_catalog::builtin().unwrap().catalog;
    let cases = read_cases(
        "{\"id\": \"t1\", \"request\": \"jot down that the office moves\", \"expect\": {\"tools\": [\"memory_store\", \"nope\"]}}",
        "t.jsonl",
    )
    .unwrap();
    let r = waypoint_eval::train(&mut catalog, &cases);
    assert_eq!(r.examples, 1);
    assert_eq!(r.unknown_labels, ["nope"]);
    assert!(
        catalog
            .tool("memory_store")
            .unwrap()
            .examples
            .contains(&"jot down that the office moves".to_string())
    );
}

#[test]
fn a_cascade_run_is_split_by_planner_and_says_what_the_model_changed() {
    let cases = [
        case(json!({"id": "fixed", "request": "a", "expect": {"tools": ["web_fetch"]}})),
        case(json!({"id": "broke", "request": "b", "expect": {"unknown": true}})),
        case(json!({"id": "alone", "request": "c", "expect": {"tools": ["grep"]}})),
    ];
    let one = |planner, tool: &str| {
        let kind = if tool == "unknown" {
            StepKind::Unknown
        } else {
            StepKind::Tool
        };
        plan_by(planner, vec![step(1, tool, kind, &[])], None, &[], true)
    };
    let report = evaluate_by(
        &cases,
        |c| {
            Ok(match c.id.as_str() {
                // The model turned a gap into the right tool…
                "fixed" => Planned {
                    plan: one(PlannerKind::Llm, "web_fetch"),
                    before_model: Some(one(PlannerKind::Deterministic, "unknown")),
                },
                // …and an honest gap into a forced fit.
                "broke" => Planned {
                    plan: one(PlannerKind::Llm, "email_send"),
                    before_model: Some(one(PlannerKind::Deterministic, "unknown")),
                },
                _ => one(PlannerKind::Deterministic, "grep").into(),
            })
        },
        |_| {},
    );
    assert_eq!(report.by_planner.len(), 2);
    assert_eq!(report.by_planner["llm"].cases, 2);
    assert_eq!(report.by_planner["llm"].unknown_accuracy, Some(0.0));
    assert_eq!(
        report.by_planner["deterministic"].sequence_accuracy,
        Some(1.0)
    );
    assert!(
        report.by_planner["llm"].failures.is_empty(),
        "listed once, at the top"
    );
    let effects: Vec<_> = report
        .model_cases
        .iter()
        .map(|m| (m.id.as_str(), m.effect))
        .collect();
    assert_eq!(
        effects,
        [
            ("fixed", waypoint_protocol::ModelEffect::Fixed),
            ("broke", waypoint_protocol::ModelEffect::Broke)
        ]
    );
    assert_eq!(report.model_cases[1].answered, ["email_send"]);
}
