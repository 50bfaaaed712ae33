//! The requests of docs/routing.md's "Arguments, links and order", planned by the binary
//! as a new user would: on the built-in catalog, on the catalogs `waypoint catalog
//! import` wrote for the npm MCP servers filesystem and memory
//! (`tests/fixtures/mcp`), and on a tool typed like the `everything` server's `add`.
//! Each rendered plan is a snapshot: values, links (`uses`) and order (`after`, groups).

#![allow(clippy::unwrap_used, reason = "test helpers fail loudly on purpose")]

mod common;

use common::{stdout, waypoint};

const MCP: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/mcp");
const ADD: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/add.yaml");

fn plan(request: &str, catalog: Option<&str>) -> String {
    let mut args = vec!["plan", request];
    if let Some(c) = catalog {
        args.extend(["--catalog", c]);
    }
    let o = waypoint(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    stdout(&o)
}

#[test]
fn content_comes_from_its_cue_and_then_orders_the_listing() {
    insta::assert_snapshot!(plan(
        "create a file notes.txt containing hello, then list the directory",
        Some(MCP)
    ));
}

#[test]
fn the_summary_is_a_link_and_the_address_a_value() {
    insta::assert_snapshot!(plan(
        "grab https://example.com, summarize it and email the summary to ana@example.com",
        None
    ));
}

#[test]
fn it_after_a_fetch_is_the_fetched_address() {
    insta::assert_snapshot!(plan(
        "fetch https://example.com and then summarize it",
        None
    ));
}

#[test]
fn two_languages_make_two_steps() {
    insta::assert_snapshot!(plan("translate it into French and German", None));
}

#[test]
fn numbers_fill_typed_arguments() {
    insta::assert_snapshot!(plan("add 2 and 3", Some(ADD)));
}

#[test]
fn then_orders_steps_that_share_no_data() {
    insta::assert_snapshot!(plan("run the tests, then build", None));
}

#[test]
fn the_first_command_of_the_readme_is_ordered() {
    insta::assert_snapshot!(plan(
        "remember this launch, write a blog about it, then make an illustration",
        None
    ));
}

#[test]
fn two_paths_fill_source_and_destination_in_order() {
    insta::assert_snapshot!(plan("move notes.txt to archive/notes.txt", Some(MCP)));
}

#[test]
fn a_fix_takes_what_was_read_and_a_missing_tool_is_a_gap() {
    // "it" is the code read before, so the patch tool (which takes file contents) fixes
    // it, not the agent tool; no tool opens pull requests, and the plan says so.
    insta::assert_snapshot!(plan(
        "find the bug in the retry logic, fix it, then run the tests and open a PR",
        None
    ));
}

#[test]
fn a_folder_called_something_is_its_path() {
    insta::assert_snapshot!(plan("make a folder called reports", Some(MCP)));
}

#[test]
fn what_is_looked_for_is_not_made() {
    // "any" after "look for" asks whether such files exist: no directory is to be made.
    let o = waypoint(&[
        "route",
        "look for any .env files under the project",
        "--catalog",
        MCP,
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let clause = &v["clauses"][0];
    let ranked: Vec<&str> = std::iter::once(&clause["recommendation"])
        .chain(clause["alternatives"].as_array().into_iter().flatten())
        .filter_map(|c| c["id"].as_str())
        .collect();
    assert_eq!(ranked.first(), Some(&"fs.search_files"), "{ranked:?}");
}
