//! The validate stage: whatever wrote the steps, the guards hold.

use std::collections::HashSet;

use serde_json::json;
use waypoint_core::validate::{Guards, validate};
use waypoint_protocol::{Step, StepKind};

fn step(id: &str, tool: &str, args: serde_json::Value, refs: &[&str]) -> Step {
    Step {
        id: id.into(),
        order: 0,
        kind: StepKind::Tool,
        tool: tool.into(),
        args: args.as_object().cloned().unwrap_or_default(),
        input_refs: refs.iter().map(|r| (*r).to_string()).collect(),
        after: Vec::new(),
        group: 0,
        rationale: String::new(),
        clause: None,
    }
}

fn run(
    steps: &mut Vec<Step>,
    allow: Option<&HashSet<String>>,
    max_steps: usize,
) -> waypoint_core::validate::Verdict {
    let catalog = crate::engine().catalog();
    validate(
        steps,
        &Guards {
            catalog,
            allowlist: allow,
            max_steps,
        },
    )
}

#[test]
fn unknown_tools_are_demoted_with_a_gap_rationale() {
    let mut steps = vec![step("s1", "teleport", json!({}), &[])];
    run(&mut steps, None, 10);
    assert_eq!(steps[0].kind, StepKind::Unknown);
    assert_eq!(steps[0].tool, "unknown");
    assert!(steps[0].rationale.starts_with("gap:"));
}

#[test]
fn a_step_may_not_call_the_planner() {
    let mut steps = vec![step("s1", "waypoint.plan", json!({}), &[])];
    let v = run(&mut steps, None, 10);
    assert_eq!(steps[0].kind, StepKind::Unknown);
    assert!(v.warnings[0].contains("recursion"));
}

#[test]
fn args_are_checked_against_the_input_schema() {
    let mut steps = vec![step("s1", "git_log", json!({"limit": "ten"}), &[])];
    let v = run(&mut steps, None, 10);
    assert!(
        v.warnings.iter().any(|w| w.contains("git_log")),
        "{:?}",
        v.warnings
    );
    assert!(steps[0].args["limit"].get("$placeholder").is_some());
    let mut ok = vec![step(
        "s1",
        "email_send",
        json!({"to": "a@b.co", "body": {"$ref": "s0/output"}}),
        &[],
    )];
    let v = run(&mut ok, None, 10);
    assert!(v.warnings.is_empty(), "{:?}", v.warnings);
}

#[test]
fn only_allowlisted_tools_survive() {
    let allow: HashSet<String> = ["git_status".to_string()].into();
    let mut steps = vec![
        step("s1", "git_status", json!({}), &[]),
        step("s2", "git_log", json!({}), &[]),
    ];
    run(&mut steps, Some(&allow), 10);
    assert_eq!(steps[0].kind, StepKind::Tool);
    assert_eq!(steps[1].kind, StepKind::Unknown);
}

#[test]
fn references_point_backwards_and_groups_follow_them() {
    let mut steps = vec![
        step("s1", "web_fetch", json!({"url": "https://a.io"}), &["s2"]),
        step(
            "s2",
            "translate_text",
            json!({"text": "x", "target_language": "French"}),
            &["s1"],
        ),
        step("s3", "git_status", json!({}), &[]),
    ];
    let v = run(&mut steps, None, 10);
    assert!(steps[0].input_refs.is_empty());
    assert!(
        v.warnings
            .iter()
            .any(|w| w.contains("does not come before"))
    );
    assert_eq!(steps.iter().map(|s| s.group).collect::<Vec<_>>(), [1, 2, 1]);
    assert_eq!(steps.iter().map(|s| s.order).collect::<Vec<_>>(), [1, 2, 3]);
}

#[test]
fn an_order_another_dependency_implies_is_dropped_and_groups_stay() {
    // s1, then s2; s3 also follows s1 but takes s2's output, which follows s1 already;
    // s4 lists s2 both as its input and as an order.
    let mut s2 = step("s2", "git_status", json!({}), &[]);
    s2.after = vec!["s1".into()];
    let mut s3 = step("s3", "git_status", json!({}), &["s2"]);
    s3.after = vec!["s1".into()];
    let mut s4 = step("s4", "git_status", json!({}), &["s2"]);
    s4.after = vec!["s2".into(), "s1".into()];
    let mut steps = vec![step("s1", "git_status", json!({}), &[]), s2, s3, s4];
    run(&mut steps, None, 10);
    let after: Vec<&[String]> = steps.iter().map(|s| s.after.as_slice()).collect();
    assert_eq!(after, [&[][..], &["s1".to_string()][..], &[][..], &[][..]]);
    assert_eq!(
        steps.iter().map(|s| s.group).collect::<Vec<_>>(),
        [1, 2, 3, 3]
    );
}

#[test]
fn max_steps_truncates_with_a_warning() {
    let mut steps: Vec<Step> = (1..=5)
        .map(|i| step(&format!("s{i}"), "git_status", json!({}), &[]))
        .collect();
    let v = run(&mut steps, None, 3);
    assert_eq!(steps.len(), 3);
    assert!(v.warnings[0].contains("max_steps"));
}

/// A catalog where one note tool reads and one destroys, described alike.
fn notes_engine() -> waypoint_core::Engine {
    let text = "tools:\n  - name: notes_show\n    description: show the notes\n    effects: read\n    keywords: [notes]\n  - name: notes_purge\n    description: purge the notes\n    effects: destructive\n    keywords: [notes]\n";
    let catalog = waypoint_catalog::load(&[waypoint_catalog::Source {
        name: "notes.yaml".into(),
        text: text.into(),
    }])
    .unwrap()
    .catalog;
    waypoint_core::Engine::new(catalog, waypoint_core::Options::default()).unwrap()
}

#[test]
fn a_destructive_tool_needs_a_clear_lead_over_a_harmless_one() {
    let e = notes_engine();
    let first = |request: &str| e.plan(request, None).unwrap().steps()[0].clone();
    // Both fit "handle the notes" equally (the destructive one first by name): nothing
    // says destroy, so the clause is a gap that names both.
    let step = first("handle the notes");
    assert_eq!(step.tool, "unknown", "{}", step.rationale);
    assert!(
        step.rationale.contains("notes_purge") && step.rationale.contains("notes_show"),
        "{}",
        step.rationale
    );
    // A destroying verb gives it a clear lead; a reading tool needs none.
    assert_eq!(first("clear the notes").tool, "notes_purge");
    assert_eq!(first("show the notes").tool, "notes_show");
}

#[test]
fn a_harmless_reading_under_the_threshold_still_counts_against_a_destructive_pick() {
    // "clear the notes": purge 0.68, show 0.48. With the threshold at 0.5 the reading one
    // does not clear it, yet it is within a margin of 0.25 of the destructive one, so
    // the words do not ask for the harm clearly enough.
    let catalog = notes_engine().catalog().clone();
    let options = waypoint_core::Options {
        threshold: 0.5,
        destructive_margin: 0.25,
        ..waypoint_core::Options::default()
    };
    let e = waypoint_core::Engine::new(catalog, options).unwrap();
    let step = e.plan("clear the notes", None).unwrap().steps()[0].clone();
    assert_eq!(step.tool, "unknown", "{}", step.rationale);
    assert!(step.rationale.contains("notes_show"), "{}", step.rationale);
    // "purge the notes" asks for `notes_purge` by its name's verb: a reading under the
    // threshold is no rival then (0.95 against 0.48, inside a margin of 0.5).
    let options = waypoint_core::Options {
        threshold: 0.5,
        destructive_margin: 0.5,
        ..waypoint_core::Options::default()
    };
    let e = waypoint_core::Engine::new(notes_engine().catalog().clone(), options).unwrap();
    let step = e.plan("purge the notes", None).unwrap().steps()[0].clone();
    assert_eq!(step.tool, "notes_purge", "{}", step.rationale);
    // A lead past the margin runs.
    assert_eq!(
        notes_engine()
            .plan("clear the notes", None)
            .unwrap()
            .steps()[0]
            .tool,
        "notes_purge"
    );
}

/// A vault that reads passwords and a note store that remembers things: the object fits
/// the one, the verb the other.
fn vault_engine(effects: &str) -> waypoint_core::Engine {
    let text = format!(
        "tools:\n  - name: get_password\n    description: Fetch a password from the vault.\n    keywords: [password, credential]\n    effects: read\n  - name: note_keep\n    description: Keep a short note so it can be recalled later.\n    keywords: [remember, note down]\n    effects: {effects}\n"
    );
    crate::engine_over("vault.yaml", &text)
}

#[test]
fn a_verb_that_asks_to_change_something_is_no_request_for_a_tool_that_only_reads() {
    let e = vault_engine("write");
    // "remember" asks to store: the vault, which only reads, keeps half its score, so
    // the write leads it by more than the margin a write needs.
    let request = "remember my wifi password";
    let (keep, vault) = (
        crate::score_of(&e, request, "note_keep"),
        crate::score_of(&e, request, "get_password"),
    );
    assert!(
        keep > vault,
        "note_keep {keep} against get_password {vault}"
    );
    let step = e.plan(request, None).unwrap().steps()[0].clone();
    assert_eq!(step.tool, "note_keep", "{}", step.rationale);
    // Asking for the password reads it.
    assert_eq!(
        e.plan("fetch my wifi password", None).unwrap().steps()[0].tool,
        "get_password"
    );
    // Where no tool says it changes anything, effects decide nothing: the same words
    // score the vault as they would without the rule.
    let vault_unjudged = crate::score_of(&vault_engine("read"), request, "get_password");
    assert!(
        vault_unjudged > vault,
        "unjudged {vault_unjudged} against judged {vault}"
    );
}

#[test]
fn a_request_longer_than_twice_max_steps_plans_its_first_clauses_and_says_so() {
    let request = "translate the notes into French and email them to ana@example.com. ".repeat(60);
    let plan = crate::engine().plan(&request, None).unwrap();
    assert_eq!(plan.steps().len(), 32);
    // 120 action clauses, of which twice `max_steps` are planned.
    assert!(
        plan.warnings()
            .iter()
            .any(|w| w.contains("56 more action clauses") && w.contains("left out")),
        "{:?}",
        plan.warnings()
    );
}

#[test]
fn a_synonym_that_holds_only_as_a_verb_is_a_noun_of_its_own_elsewhere() {
    let e = crate::engine();
    // "cat" reads a file where a verb stands, and "store" remembers.
    assert_eq!(
        e.plan("cat README.md", None).unwrap().steps()[0].tool,
        "read_file"
    );
    assert_eq!(
        e.plan("please store my wifi password", None)
            .unwrap()
            .steps()[0]
            .tool,
        "memory_store"
    );
    // After a determiner or a noun they are the animal and the shop: nothing here feeds
    // cats or shops for groceries.
    for request in ["feed the cat at noon", "pick up milk at the grocery store"] {
        let step = e.plan(request, None).unwrap().steps()[0].clone();
        assert_eq!(step.tool, "unknown", "{request}: {}", step.rationale);
    }
}

#[test]
fn a_clause_that_tells_the_speakers_situation_is_context_for_the_request_beside_it() {
    let e = crate::engine();
    let tools = |request: &str| -> Vec<String> {
        let plan = e.plan(request, None).unwrap();
        plan.steps().iter().map(|s| s.tool.clone()).collect()
    };
    let asked = "Summarize https://example.com/report.pdf";
    // Nothing in the catalog fits these, and they ask for nothing: no gap.
    for situation in ["My brother lives in Porto.", "We are a family of five."] {
        assert_eq!(
            tools(&format!("{situation} {asked}")),
            ["pdf_summarize"],
            "{situation}"
        );
    }
    // A want, a duty or a question asks for something, which stays a gap.
    for request in [
        "I need a plumber.",
        "We are going to call a plumber.",
        "Is it sunny in Porto?",
    ] {
        assert_eq!(
            tools(&format!("{request} {asked}")),
            ["unknown", "pdf_summarize"],
            "{request}"
        );
    }
}
