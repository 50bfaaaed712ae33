//! `waypoint calibrate`: the abstain threshold fitted on held-out requests or by
//! cross-validating the training requests.

#![allow(clippy::unwrap_used, reason = "tests fail loudly on purpose")]

mod common;

use std::path::{Path, PathBuf};

use common::waypoint;

const TOOLS: &str = "tools:
  - name: get_weather
    description: weather forecast
  - name: play_music
    description: play music
  - name: set_alarm
    description: set an alarm
";

const TRAIN: &str = r#"{"id": "t1", "request": "will it rain tomorrow", "expect": {"tools": ["get_weather"]}}
{"id": "t2", "request": "how hot is it outside", "expect": {"tools": ["get_weather"]}}
{"id": "t3", "request": "is it going to snow this week", "expect": {"tools": ["get_weather"]}}
{"id": "t4", "request": "what's the forecast for boston", "expect": {"tools": ["get_weather"]}}
{"id": "t5", "request": "play some jazz", "expect": {"tools": ["play_music"]}}
{"id": "t6", "request": "put on my workout playlist", "expect": {"tools": ["play_music"]}}
{"id": "t7", "request": "i want to hear some rock", "expect": {"tools": ["play_music"]}}
{"id": "t8", "request": "start the new album by adele", "expect": {"tools": ["play_music"]}}
{"id": "t9", "request": "wake me up at 7am", "expect": {"tools": ["set_alarm"]}}
{"id": "t10", "request": "set an alarm for six thirty", "expect": {"tools": ["set_alarm"]}}
{"id": "t11", "request": "i need a wake up call at 8", "expect": {"tools": ["set_alarm"]}}
{"id": "t12", "request": "alarm for noon please", "expect": {"tools": ["set_alarm"]}}
{"id": "t13", "request": "transfer money to my savings account", "expect": {"unknown": true}}
{"id": "t14", "request": "book me a flight to rome", "expect": {"unknown": true}}
{"id": "t15", "request": "what is the capital of peru", "expect": {"unknown": true}}
"#;

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tools.yaml"), TOOLS).unwrap();
    std::fs::write(dir.path().join("train.jsonl"), TRAIN).unwrap();
    dir
}

fn json(args: &[&str]) -> serde_json::Value {
    let out = waypoint(args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn cross_validation_fits_a_threshold_from_the_training_requests() {
    let dir = setup();
    let catalog = dir.path().join("tools.yaml");
    let train = dir.path().join("train.jsonl");
    let v = json(&[
        "calibrate",
        "--catalog",
        catalog.to_str().unwrap(),
        "--train",
        train.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(v["requests"], 15);
    assert_eq!(v["out_of_scope"], 3);
    let t = v["fitted"]["threshold"].as_f64().unwrap();
    assert!((0.05..=0.95).contains(&t), "{t}");
    // The fit is at least as good as the default on what it was fitted to.
    let score = |p: &serde_json::Value| {
        p["in_scope_accuracy"].as_f64().unwrap() + p["oos_recall"].as_f64().unwrap()
    };
    assert!(score(&v["fitted"]) >= score(&v["current"]));
    assert_eq!(v["curve"].as_array().unwrap().len(), 91);
}

#[test]
fn a_held_out_file_is_routed_by_a_router_trained_on_the_rest() {
    let dir = setup();
    let catalog = dir.path().join("tools.yaml");
    let train = dir.path().join("train.jsonl");
    let held = dir.path().join("dev.jsonl");
    std::fs::write(
        &held,
        r#"{"id": "d1", "request": "will it be windy tomorrow", "expect": {"tools": ["get_weather"]}}
{"id": "d2", "request": "order a pizza", "expect": {"unknown": true}}
"#,
    )
    .unwrap();
    let v = json(&[
        "calibrate",
        held.to_str().unwrap(),
        "--catalog",
        catalog.to_str().unwrap(),
        "--train",
        train.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(v["requests"], 2);
    assert_eq!(v["in_scope"], 1);
}

#[test]
fn nothing_to_calibrate_on_is_a_clear_error() {
    let dir = setup();
    let out = waypoint(&[
        "calibrate",
        "--catalog",
        dir.path().join("tools.yaml").to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--train"), "{err}");
}

/// A catalog (`setup`'s) and a training file `name` holding `requests`; the folder
/// goes with them, as the files last only as long as it.
fn taught(name: &str, requests: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = setup();
    let catalog = dir.path().join("tools.yaml");
    let train = dir.path().join(name);
    std::fs::write(&train, requests).unwrap();
    (dir, catalog, train)
}

/// `waypoint train` without history over `catalog`, taught the requests in `train`.
fn train_args<'a>(catalog: &'a Path, train: &'a Path) -> [&'a str; 7] {
    [
        "--store",
        "none",
        "train",
        "--catalog",
        catalog.to_str().unwrap(),
        "--train",
        train.to_str().unwrap(),
    ]
}

/// A training file of `n` requests per entry, each asking for one entry, plus `pairs`
/// requests asking for two.
fn requests(n: usize, pairs: usize) -> String {
    let mut out = String::new();
    let places = [
        "paris", "oslo", "lima", "rome", "kyiv", "doha", "bern", "riga",
    ];
    for k in 0..n {
        let at = places[k % places.len()];
        let line = |id: String, request: String, tools: &[&str]| {
            serde_json::json!({"id": id, "request": request, "expect": {"tools": tools}})
                .to_string()
                + "\n"
        };
        out += &line(
            format!("w{k}"),
            format!("weather in {at} on day {k}"),
            &["get_weather"],
        );
        out += &line(
            format!("m{k}"),
            format!("play song {k} from {at}"),
            &["play_music"],
        );
        out += &line(
            format!("a{k}"),
            format!("alarm at {k} for {at}"),
            &["set_alarm"],
        );
        if k < pairs {
            out += &line(
                format!("p{k}"),
                format!("play song {k} and weather in {at}"),
                &["play_music", "get_weather"],
            );
        }
    }
    out
}

#[test]
fn train_says_what_the_requests_taught_and_whether_they_ask_one_thing_at_a_time() {
    let (_dir, catalog, train) = taught("one.jsonl", &requests(20, 0));
    let base = train_args(&catalog, &train);
    let v = json(&[&base[..], &["--json"]].concat());
    assert_eq!(v["requests_added"], 60);
    assert_eq!(v["requests_asking_two"], 0);
    assert_eq!(v["one_entry_per_request"], true);
    assert_eq!(
        v["examples_vote"], false,
        "labelled requests vote as requests"
    );
    // Without an encoder, the network reads the built-in static word vectors.
    assert_eq!(v["network_reads"], "word_vectors");
    assert_eq!(v["network_inputs"], 128);
    let text = String::from_utf8_lossy(&waypoint(&base).stdout).into_owned();
    assert!(
        text.contains("0 asking for two or more entries") && text.contains("one entry per request"),
        "{text}"
    );
    assert!(
        text.contains("a network over the static word vectors (128 values a request)"),
        "{text}"
    );

    // A tenth of the requests asking for two: requests are planned clause by clause.
    std::fs::write(&train, requests(20, 6)).unwrap();
    let v = json(&[&base[..], &["--json"]].concat());
    assert_eq!(v["requests_added"], 66);
    assert_eq!(v["requests_asking_two"], 6);
    assert_eq!(v["one_entry_per_request"], false);
    assert!(
        v["network_reads"].is_null(),
        "no network where requests ask for two"
    );
}

/// `waypoint train` of the catalog and the labelled-request files given positionally:
/// its report as JSON (`--json`) and as text.
fn train_report(catalog: &Path, files: &[&str]) -> (serde_json::Value, String) {
    let base = [
        &[
            "--store",
            "none",
            "train",
            "--catalog",
            catalog.to_str().unwrap(),
        ],
        files,
    ]
    .concat();
    let v = json(&[&base[..], &["--json"]].concat());
    let text = String::from_utf8_lossy(&waypoint(&base).stdout).into_owned();
    (v, text)
}

/// The entries of [`TOOLS`], each with three examples of its own.
const TAUGHT_BY_EXAMPLES: &str = "tools:
  - name: get_weather
    description: weather forecast
    examples: [will it rain tomorrow, how hot is it outside, is it going to snow]
  - name: play_music
    description: play music
    examples: [play some jazz, put on my workout playlist, i want to hear rock]
  - name: set_alarm
    description: set an alarm
    examples: [wake me up at 7am, set an alarm for six, alarm for noon please]
";

#[test]
fn train_says_when_a_catalog_is_taught_by_examples_that_vote() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("tools.yaml");
    std::fs::write(&catalog, TAUGHT_BY_EXAMPLES).unwrap();
    let (v, out) = train_report(&catalog, &[]);
    assert_eq!(v["examples_vote"], true);
    assert_eq!(v["one_entry_per_request"], false);
    assert!(out.contains("the closest examples vote"), "{out}");
}

#[test]
fn train_says_which_steps_the_taught_sequences_take_first() {
    // Twelve alarms, nine of them after a forecast: the forecast is taken first.
    let mut lines = String::new();
    for k in 0..12 {
        let tools = if k < 9 {
            r#"["get_weather", "set_alarm"]"#
        } else {
            r#"["set_alarm"]"#
        };
        lines.push_str(&format!(
            r#"{{"id": "s{k}", "request": "wake me up at {k} if it rains", "expect": {{"tools": {tools}}}}}"#
        ));
        lines.push('\n');
    }
    let (_dir, catalog, train) = taught("seq.jsonl", &lines);
    // The training file as the positional argument, where `train_args` passes `--train`:
    // both spellings teach.
    let (v, text) = train_report(&catalog, &[train.to_str().unwrap()]);
    assert_eq!(
        v["taken_first"],
        serde_json::json!([{"entry": "set_alarm", "first": "get_weather", "before": 9, "of": 12}])
    );
    assert_eq!(
        v["one_step_per_tool"], false,
        "twelve sequences say nothing"
    );
    assert!(
        text.contains("taken first  get_weather before set_alarm (9 of 12 taught sequences"),
        "{text}"
    );
}

#[test]
fn long_training_says_what_is_under_way_and_a_cached_router_says_nothing() {
    // 5,100 requests: enough that training takes long enough to report.
    let (_dir, catalog, train) = taught("many.jsonl", &requests(1700, 0));
    let args = [&train_args(&catalog, &train)[..], &["--json"]].concat();
    let run = || {
        common::command(&args)
            .env_remove("RUST_LOG")
            .output()
            .unwrap()
    };
    let first = run();
    assert!(first.status.success());
    let said = String::from_utf8_lossy(&first.stderr).into_owned();
    assert!(
        said.contains("training the router on 51")
            && said.contains("texts for 3 entries")
            && said.contains("trained the router in"),
        "{said}"
    );
    // Progress goes to standard error, so the JSON report stays whole.
    let v: serde_json::Value = serde_json::from_slice(&first.stdout).unwrap();
    assert_eq!(v["source"], "trained");

    let again = run();
    assert!(again.status.success());
    let said = String::from_utf8_lossy(&again.stderr).into_owned();
    assert!(!said.contains("training the router"), "{said}");
}
