//! Whole plans for the seeds' examples, pinned as snapshots of the text rendering, plus
//! the JSON contract's round trip.

use waypoint_core::render;
use waypoint_protocol::{Complexity, Plan};

use crate::engine;

fn snapshot(name: &str, request: &str) {
    let plan = engine().plan(request, None).unwrap();
    insta::assert_snapshot!(name, render::text(&plan, false));
}

#[test]
fn seed_000_remember_blog_illustrate() {
    snapshot(
        "seed_000_chain",
        "remember this MiniMax M3 launch, write a blog about it, then make an illustration",
    );
}

#[test]
fn seed_000_pipeline_supersedes_its_chain() {
    snapshot(
        "seed_000_supersedes",
        "rewrite this brief, ground it, then publish it as a blog",
    );
}

#[test]
fn seed_000_payload_then_two_actions() {
    snapshot(
        "seed_000_payload",
        "here's a launch announcement; turn it into a blog post and persist the source",
    );
}

#[test]
fn seed_002_working_tree_status() {
    snapshot("seed_002_status", "what files changed");
}

#[test]
fn seed_004_agent_with_schedule_keeps_the_url() {
    snapshot(
        "seed_004_agent",
        "create an agent that checks my saved search https://jobs.example.com/search?q=rust every morning and emails me new results",
    );
}

#[test]
fn gaps_are_set_apart() {
    snapshot("gap", "remember this note and book me a flight to Lisbon");
}

#[test]
fn plan_json_round_trips_and_rederives() {
    let plan = engine()
        .plan(
            "fetch https://blog.rust-lang.org/ and translate it into Spanish",
            None,
        )
        .unwrap();
    let json = serde_json::to_string(&plan).unwrap();
    let back: Plan = serde_json::from_str(&json).unwrap();
    assert_eq!(back.steps(), plan.steps());
    assert_eq!(back.complexity(), Complexity::PackChain);
    assert_eq!(back.steps()[1].input_refs, ["s1"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let schema = waypoint_protocol::plan_schema();
    let validator = jsonschema::validator_for(&schema).unwrap();
    assert!(
        validator.is_valid(&v),
        "plan JSON does not match its own schema"
    );
}

#[test]
fn the_same_request_gives_the_same_plan() {
    let a = engine()
        .plan(
            "summarize https://example.com/a.pdf and email it to bo@example.com",
            None,
        )
        .unwrap();
    let b = engine()
        .plan(
            "summarize https://example.com/a.pdf and email it to bo@example.com",
            None,
        )
        .unwrap();
    assert_eq!(a, b);
}

#[test]
fn diagrams_draw_every_step_and_edge() {
    let plan = engine()
        .plan(
            "translate this summary into French and email it to ana@example.com",
            None,
        )
        .unwrap();
    let m = render::mermaid(&plan);
    assert!(m.starts_with("flowchart TD"));
    assert!(m.contains("s1 --> s2"));
    let d = render::dot(&plan);
    assert!(d.contains("s1 -> s2;"));
}

#[test]
fn a_finished_thing_needs_only_the_chains_last_step() {
    use crate::tools;
    assert_eq!(tools("publish this post to the blog"), ["blog_publish"]);
    // Turned into something, or named by an earlier step's words, it needs the chain.
    assert_eq!(
        tools("publish this announcement as a blog post"),
        ["builtin.brief-rewrite-blog"]
    );
    assert_eq!(
        tools("write a blog post about our launch"),
        ["builtin.brief-rewrite-blog"]
    );
}

#[test]
fn values_said_apart_are_no_list_to_run_one_step_each() {
    use crate::tools;
    assert_eq!(
        tools("create a workflow that posts the weekly metrics every Monday"),
        ["create_workflow"]
    );
    assert_eq!(
        tools("translate it into French and German"),
        ["translate_text", "translate_text"]
    );
}

#[test]
fn a_verb_that_changes_makes_a_part_of_what_it_changes() {
    use crate::tools;
    assert_eq!(tools("add a retry to the fetch loop"), ["apply_patch"]);
    assert_eq!(
        tools("add a null check to parse_config in src/config.rs"),
        ["apply_patch"]
    );
}

#[test]
fn a_past_span_is_no_schedule_and_staging_is_no_index() {
    use crate::tools;
    assert_eq!(
        tools("show me the commit history for the past week"),
        ["git_log"]
    );
    assert_eq!(
        tools("note that the staging database password rotates on Fridays"),
        ["memory_store"]
    );
}

#[test]
fn a_named_text_file_is_read_before_a_tool_that_takes_text() {
    use crate::{engine, tools};
    for request in [
        "translate notes.txt into French",
        "translate the README into Japanese",
    ] {
        let plan = engine().plan(request, None).unwrap();
        let steps = plan.steps();
        let names: Vec<&str> = steps.iter().map(|s| s.tool.as_str()).collect();
        assert_eq!(names, ["read_file", "translate_text"], "{request}");
        assert_eq!(steps[1].input_refs, [steps[0].id.clone()], "{request}");
        // The file's name is the reader's path, never the text to translate.
        assert!(steps[0].args["path"].is_string(), "{request}");
        assert!(!steps[1].args["text"].is_string(), "{request}");
    }
    // A tool that takes the path itself needs no reader; nor does text given inline.
    assert_eq!(tools("summarize report.pdf"), ["pdf_summarize"]);
    assert_eq!(
        tools("translate 'good morning' into French"),
        ["translate_text"]
    );
}

#[test]
fn a_file_the_verb_acts_on_is_not_for_an_entry_that_acts_on_something_else() {
    let plan = engine()
        .plan("update the Makefile to add a lint target", None)
        .unwrap();
    let step = &plan.steps()[0];
    assert_eq!(step.tool, "apply_patch");
    assert_eq!(step.args["path"], "Makefile");
    // The article before the file goes with it, not into the instructions.
    assert_eq!(step.args["instructions"], "lint target");
    assert_eq!(
        crate::tools("update src/main.rs to add logging"),
        ["apply_patch"]
    );
}

#[test]
fn putting_something_into_a_language_is_translating_it() {
    let plan = engine()
        .plan("put this paragraph into German", None)
        .unwrap();
    let step = &plan.steps()[0];
    assert_eq!(step.tool, "translate_text");
    assert_eq!(step.args["target_language"], "German");
    // "put" is the verb, not part of what is translated.
    assert!(!step.args["text"].to_string().contains("put"));
}

#[test]
fn a_word_written_as_a_call_is_the_code_it_names() {
    let plan = engine()
        .plan("grep the codebase for unwrap()", None)
        .unwrap();
    let step = &plan.steps()[0];
    assert_eq!(step.tool, "grep");
    assert_eq!(
        step.args["pattern"], "unwrap",
        "not a question for the pattern"
    );
    let plan = engine().plan("where is parse_args() called", None).unwrap();
    assert_eq!(plan.steps()[0].args["name"], "parse_args");
}
