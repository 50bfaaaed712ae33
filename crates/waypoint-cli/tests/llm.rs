//! `waypoint plan` with a model: the planner flags, config files, and what a person sees
//! when the model is away, slow or wrong. Failure shapes come from the recorded-response
//! server; the real-model check runs when `scripts/test` has started llama.cpp.

#![allow(clippy::unwrap_used, reason = "tests fail loudly on purpose")]

mod common;

use common::{stderr, stdout, waypoint};
use waypoint_llm::replay::{Replay, Scripted};

const REQUEST: &str = "fetch https://blog.rust-lang.org/ and translate it into Spanish";

fn json(o: &std::process::Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", stderr(o));
    serde_json::from_str(&stdout(o)).unwrap()
}

fn llm_plan(base_url: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "plan",
        REQUEST,
        "--json",
        "--planner",
        "llm",
        "--model",
        "llamacpp/gemma3-270m",
        "--llm-base-url",
        base_url,
    ];
    args.extend_from_slice(extra);
    waypoint(&args)
}

#[test]
fn a_stopped_server_gives_the_deterministic_plan_and_a_warning() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let plan = json(&llm_plan(&format!("http://127.0.0.1:{port}/v1"), &[]));
    assert_eq!(plan["planner"], "deterministic");
    assert_eq!(plan["steps"][0]["tool"], "web_fetch");
    let warnings = plan["warnings"].to_string();
    assert!(warnings.contains("cannot reach"), "{warnings}");
    assert!(
        warnings.contains("this is the deterministic plan"),
        "{warnings}"
    );
}

#[test]
fn a_silent_server_is_abandoned_at_the_timeout() {
    let server = Replay::start(vec![Scripted::Hang]).unwrap();
    let plan = json(&llm_plan(&server.base_url(), &["--llm-timeout", "1"]));
    assert_eq!(plan["planner"], "deterministic");
    let warnings = plan["warnings"].to_string();
    assert!(
        warnings.contains("did not answer within 1.0 s"),
        "{warnings}"
    );
}

#[test]
fn a_model_answer_carries_model_compaction_and_usage() {
    let reply = r#"{"reasoning":"fetch then translate","steps":[
      {"tool":"web_fetch","args":[{"name":"url","value":"https://blog.rust-lang.org/"}],"uses":[],"why":"get it"},
      {"tool":"translate_text","args":[{"name":"text","value":"$s1"},{"name":"target_language","value":"Spanish"}],"uses":[1],"why":"translate"}]}"#;
    let server = Replay::start(vec![Scripted::completion(reply)]).unwrap();
    let plan = json(&llm_plan(&server.base_url(), &[]));
    assert_eq!(plan["planner"], "llm");
    assert_eq!(plan["model"], "llamacpp/gemma3-270m");
    assert_eq!(plan["usage"]["calls"], 1);
    assert_eq!(plan["usage"]["cost_usd"], 0.0, "local models cost nothing");
    assert!(plan["compaction"]["before_tokens"].as_u64().unwrap() > 100);
    assert_eq!(plan["steps"][1]["input_refs"][0], "s1");
    // The text view says who answered and what it cost.
    let text = stdout(&waypoint(&[
        "plan",
        REQUEST,
        "--planner",
        "llm",
        "--model",
        "llamacpp/gemma3-270m",
        "--llm-base-url",
        &server.base_url(),
    ]));
    assert!(text.contains("planner: llm"), "{text}");
    assert!(text.contains("model llamacpp/gemma3-270m"), "{text}");
    assert!(text.contains("1 model call"), "{text}");
}

#[test]
fn planner_mistakes_are_explained() {
    let o = waypoint(&["plan", REQUEST, "--planner", "llm"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("--model PROVIDER/MODEL"),
        "{}",
        stderr(&o)
    );

    let o = waypoint(&["plan", REQUEST, "--model", "nowhere/x"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("unknown provider `nowhere`"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("--llm-base-url"), "{}", stderr(&o));

    let o = waypoint(&[
        "plan",
        REQUEST,
        "--model",
        "openai/gpt-4o-mini",
        "--llm-api-key-env",
        "WAYPOINT_SURELY_UNSET",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("WAYPOINT_SURELY_UNSET"),
        "{}",
        stderr(&o)
    );

    // Without a model, the default planner is the deterministic one: no warning, no call.
    let plan = json(&waypoint(&["plan", REQUEST, "--json"]));
    assert_eq!(plan["planner"], "deterministic");
    assert!(plan.get("warnings").is_none());
}

#[test]
fn the_config_file_names_the_model_and_the_strategy() {
    let reply = r#"{"reasoning":"","steps":[{"tool":"web_fetch","args":[],"uses":[],"why":""}]}"#;
    let server = Replay::start(vec![Scripted::completion(reply)]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("waypoint.toml");
    std::fs::write(
        &config,
        format!(
            "[llm]\nmodel = \"mine/tiny\"\ntimeout_secs = 10\n\n[providers.mine]\nbase_url = \"{}\"\n\n[planner]\nstrategy = \"llm\"\n",
            server.base_url()
        ),
    )
    .unwrap();
    let plan = json(&waypoint(&[
        "plan",
        REQUEST,
        "--json",
        "--config",
        config.to_str().unwrap(),
    ]));
    assert_eq!(plan["planner"], "llm");
    assert_eq!(plan["model"], "mine/tiny");
    assert_eq!(server.requests()[0].body["model"], "tiny");

    std::fs::write(&config, "[llm]\nmodle = \"x\"\n").unwrap();
    let o = waypoint(&["plan", REQUEST, "--config", config.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("waypoint.toml"), "{}", stderr(&o));
    assert!(stderr(&o).contains("modle"), "{}", stderr(&o));
}

#[test]
fn a_real_model_answers_through_the_cli() {
    let Some(url) = common::local_llm("the real-model plan test") else {
        return;
    };
    // The guard off: what is tested is that the model's answer reaches the plan (a 270M
    // model's tool choices are mostly below the router's floor; docs/llm.md, "The guard").
    let plan = json(&llm_plan(
        &url,
        &["--llm-timeout", "120", "--assisted-floor", "0"],
    ));
    assert_eq!(plan["planner"], "llm", "{}", plan["warnings"]);
    assert_eq!(plan["model"], "llamacpp/gemma3-270m");
    assert!(plan["usage"]["completion_tokens"].as_u64().unwrap() > 0);
}

/// A catalog with one command tool, and a plan whose second step is an `llm_subtask`
/// fed only by the first.
fn subtask_plan(dir: &std::path::Path) -> (String, String) {
    let catalog = dir.join("catalog.yaml");
    std::fs::write(
        &catalog,
        "tools:\n  - name: say\n    description: Print a sentence.\n    input_schema: {type: object, properties: {text: {type: string}}, required: [text]}\n    run: {command: [echo, \"{text}\"]}\n",
    )
    .unwrap();
    let plan = dir.join("plan.json");
    std::fs::write(
        &plan,
        r#"{"plan_id": "pl_subtask", "steps": [
          {"id": "s1", "order": 1, "kind": "tool", "tool": "say", "group": 1, "args": {"text": "The capital of France is Paris."}},
          {"id": "s2", "order": 2, "kind": "llm_subtask", "tool": "summarise", "group": 2, "input_refs": ["s1"],
           "args": {"task": "Repeat the input sentence."}, "rationale": "Repeat the input sentence."}]}"#,
    )
    .unwrap();
    (catalog.display().to_string(), plan.display().to_string())
}

#[test]
fn an_llm_subtask_without_a_model_says_how_to_name_one() {
    let dir = tempfile::tempdir().unwrap();
    let (catalog, plan) = subtask_plan(dir.path());
    let store = format!("sqlite:{}", dir.path().join("wp.db").display());
    let o = waypoint(&[
        "--catalog",
        &catalog,
        "--store",
        &store,
        "run",
        "--plan",
        &plan,
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let err = r["steps"][1]["error"].as_str().unwrap();
    assert!(
        err.contains("needs a model") && err.contains("[llm]"),
        "{err}"
    );
}

#[test]
fn a_real_model_runs_an_llm_subtask_on_its_inputs() {
    let Some(url) = common::local_llm("the real-model llm_subtask test") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (catalog, plan) = subtask_plan(dir.path());
    let store = format!("sqlite:{}", dir.path().join("wp.db").display());
    let o = waypoint(&[
        "--catalog",
        &catalog,
        "--store",
        &store,
        "--model",
        "llamacpp/gemma3-270m",
        "--llm-base-url",
        &url,
        "--llm-timeout",
        "120",
        "run",
        "--plan",
        &plan,
        "--json",
        "--tool-timeout",
        "150s",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}\n{}", stdout(&o), stderr(&o));
    let r: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let s2 = &r["steps"][1];
    assert_eq!(s2["status"], "ok", "{s2}");
    assert!(
        !s2["output"]["text"].as_str().unwrap().trim().is_empty(),
        "{s2}"
    );
    assert_eq!(s2["output"]["model"], "llamacpp/gemma3-270m");
    assert!(s2["prompt_tokens"].as_u64().unwrap() > 10, "{s2}");
    assert!(
        r["totals"]["completion_tokens"].as_u64().unwrap() > 0,
        "{r}"
    );
}
