//! Repair, fallback and the cascade's choices, against the recorded-response server.

#![allow(clippy::unwrap_used, reason = "tests fail loudly on purpose")]

use std::sync::Arc;
use std::time::Duration;

use waypoint_cascade::{Cascade, LlmPlanner, Strategy, confidence};
use waypoint_core::{Engine, Options};
use waypoint_llm::replay::{Replay, Scripted};
use waypoint_llm::{CancellationToken, Client};
use waypoint_protocol::{PlannerKind, StepKind};

fn engine() -> Engine {
    Engine::new(
        waypoint_catalog::builtin().unwrap().catalog,
        Options::default(),
    )
    .unwrap()
}

fn planner(server: &Replay, timeout: Duration) -> LlmPlanner {
    let endpoint = server.endpoint("replay/test-model", timeout).unwrap();
    let client = Client::new()
        .unwrap()
        .with_backoff(Duration::from_millis(5));
    LlmPlanner::new(Arc::new(client), endpoint)
}

const REQUEST: &str = "fetch https://blog.rust-lang.org/ and translate it into Spanish";

const GOOD: &str = r#"{"reasoning":"fetch, then translate","steps":[
  {"tool":"web_fetch","args":[{"name":"url","value":"https://blog.rust-lang.org/"}],"uses":[],"why":"get the page"},
  {"tool":"translate_text","args":[{"name":"text","value":"$s1"},{"name":"target_language","value":"Spanish"}],"uses":[1],"why":"translate"}]}"#;

#[tokio::test]
async fn a_good_reply_becomes_an_llm_plan() {
    let server = Replay::start(vec![Scripted::completion(GOOD)]).unwrap();
    let e = engine();
    let llm = planner(&server, Duration::from_secs(20));
    let fallback = e.plan(REQUEST, None).unwrap();
    let (plan, attempt) = llm
        .plan(&e, REQUEST, None, fallback, &CancellationToken::new())
        .await;
    assert_eq!(plan.planner(), PlannerKind::Llm);
    assert_eq!(plan.model(), Some("replay/test-model"));
    let tools: Vec<&str> = plan.steps().iter().map(|s| s.tool.as_str()).collect();
    assert_eq!(tools, ["web_fetch", "translate_text"]);
    assert_eq!(plan.steps()[1].input_refs, ["s1"]);
    assert_eq!(plan.steps()[1].group, 2);
    assert_eq!(attempt.repairs, 0);
    assert!(attempt.fell_back.is_none());
    let usage = plan.usage().unwrap();
    assert_eq!(
        (usage.calls, usage.prompt_tokens, usage.completion_tokens),
        (1, 100, 20)
    );
    assert_eq!(usage.cost_usd, None, "no price is known for replay/*");
    assert!(plan.compaction().is_some());
    assert!(
        plan.reasoning().contains("fetch, then translate"),
        "{}",
        plan.reasoning()
    );
    // The request the model saw: schema-bound, tool ids enumerated.
    let req = &server.requests()[0].body;
    assert_eq!(req["response_format"]["type"], "json_schema");
    let tools = &req["response_format"]["json_schema"]["schema"]["properties"]["steps"]["items"]["properties"]
        ["tool"]["enum"];
    assert!(tools.as_array().unwrap().iter().any(|t| t == "web_fetch"));
    assert!(tools.as_array().unwrap().iter().any(|t| t == "unknown"));
}

#[tokio::test]
async fn one_repair_round_then_the_deterministic_plan() {
    let server = Replay::start(vec![
        Scripted::completion("I think you should fetch the page"),
        Scripted::completion("{\"plan\": []}"),
    ])
    .unwrap();
    let e = engine();
    let fallback = e.plan(REQUEST, None).unwrap();
    let (plan, attempt) = planner(&server, Duration::from_secs(20))
        .plan(
            &e,
            REQUEST,
            None,
            fallback.clone(),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(plan.planner(), PlannerKind::Deterministic);
    assert_eq!(plan.steps(), fallback.steps());
    assert_eq!(attempt.repairs, 1);
    assert_eq!(plan.usage().unwrap().calls, 2);
    let warning = plan.warnings().last().unwrap();
    assert!(warning.contains("after one repair round"), "{warning}");
    assert!(warning.contains("no `steps`"), "{warning}");
    // The repair message carried the first digest.
    let second = &server.requests()[1].body["messages"];
    let last = second.as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap();
    assert!(last.contains("not a JSON object"), "{last}");
}

#[tokio::test]
async fn a_repaired_reply_is_used() {
    let server = Replay::start(vec![
        Scripted::completion_with(
            "{\"reasoning\":\"x\",\"steps\":[{\"tool\":\"web_f",
            "length",
        ),
        Scripted::completion(GOOD),
    ])
    .unwrap();
    let e = engine();
    let fallback = e.plan(REQUEST, None).unwrap();
    let (plan, attempt) = planner(&server, Duration::from_secs(20))
        .plan(&e, REQUEST, None, fallback, &CancellationToken::new())
        .await;
    assert_eq!(plan.planner(), PlannerKind::Llm);
    assert_eq!(attempt.repairs, 1);
    let second = &server.requests()[1].body["messages"];
    let last = second.as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap();
    assert!(last.contains("cut off"), "{last}");
}

#[tokio::test]
async fn names_outside_the_catalog_become_gaps() {
    let reply = r#"{"reasoning":"","steps":[
      {"tool":"launch_rocket","args":[],"uses":[],"why":"go"},
      {"tool":"waypoint.plan","args":[],"uses":[],"why":"again"},
      {"tool":"web_fetch","args":[{"name":"url","value":"https://a.example/"},{"name":"colour","value":"red"}],"uses":[5],"why":""}]}"#;
    let server = Replay::start(vec![Scripted::completion(reply)]).unwrap();
    let e = engine();
    let fallback = e.plan(REQUEST, None).unwrap();
    let (plan, _) = planner(&server, Duration::from_secs(20))
        .plan(&e, REQUEST, None, fallback, &CancellationToken::new())
        .await;
    assert_eq!(plan.planner(), PlannerKind::Llm);
    let s = plan.steps();
    assert_eq!(s[0].kind, StepKind::Unknown);
    assert!(s[0].rationale.contains("not in the catalog"));
    assert_eq!(
        s[1].kind,
        StepKind::Unknown,
        "the recursion guard holds for models too"
    );
    assert_eq!(s[2].tool, "web_fetch");
    assert!(
        !s[2].args.contains_key("colour"),
        "undeclared args are dropped"
    );
    assert!(s[2].input_refs.is_empty(), "a forward reference is dropped");
    let w = plan.warnings().join("\n");
    assert!(w.contains("launch_rocket") && w.contains("colour"), "{w}");
}

#[tokio::test]
async fn a_hanging_model_falls_back_within_the_deadline() {
    let server = Replay::start(vec![Scripted::Hang]).unwrap();
    let e = engine();
    let fallback = e.plan(REQUEST, None).unwrap();
    let (plan, attempt) = planner(&server, Duration::from_millis(300))
        .plan(&e, REQUEST, None, fallback, &CancellationToken::new())
        .await;
    assert_eq!(plan.planner(), PlannerKind::Deterministic);
    assert!(plan.usage().is_none(), "no call completed");
    let why = attempt.fell_back.unwrap();
    assert!(why.contains("did not answer within 0.3 s"), "{why}");
    assert!(
        plan.warnings()
            .iter()
            .any(|w| w.contains("deterministic plan"))
    );
}

#[tokio::test]
async fn the_cascade_asks_the_model_only_when_unsure() {
    let server = Replay::start(vec![Scripted::completion(GOOD)]).unwrap();
    let e = engine();
    let llm = planner(&server, Duration::from_secs(20));
    let cascade = Cascade {
        engine: &e,
        llm: Some(&llm),
        strategy: Strategy::Cascade,
        threshold: 0.6,
    };
    let cancel = CancellationToken::new();
    // A clear request: the deterministic planner is confident.
    let clear = e.plan(REQUEST, None).unwrap();
    assert!(confidence(&clear) >= 0.6, "{}", confidence(&clear));
    let (plan, attempt) = cascade.plan(REQUEST, None, None, &cancel).await.unwrap();
    assert_eq!(plan.planner(), PlannerKind::Deterministic);
    assert!(attempt.is_none());
    assert!(server.requests().is_empty());
    // A learned sequence answers before anything else.
    let learned = vec!["web_fetch".to_string()];
    let (plan, _) = cascade
        .plan("do the usual thing", None, Some(&learned), &cancel)
        .await
        .unwrap();
    assert_eq!(plan.planner(), PlannerKind::Learned);
    assert!(server.requests().is_empty());
    // A request in which the router sees no entry at all is an honest gap: the model,
    // which could only force-fit a tool, is not asked.
    let vague = "hmm, sort that out for me somehow";
    assert!(confidence(&e.plan(vague, None).unwrap()) < 0.6);
    let (plan, attempt) = cascade.plan(vague, None, None, &cancel).await.unwrap();
    assert!(attempt.is_none());
    assert!(plan.has_unknown());
    assert!(server.requests().is_empty());
    // One the router places below the threshold but above the assisted floor goes to the
    // model: it may rescue a paraphrase.
    let unsure = "look at example dot com";
    let best = e.route(unsure, None).unwrap()[0]
        .alternatives
        .first()
        .map_or(0.0, |c| c.score);
    assert!((llm.assisted_floor()..0.35).contains(&best), "{best}");
    let (_, attempt) = cascade.plan(unsure, None, None, &cancel).await.unwrap();
    assert!(attempt.is_some());
    assert_eq!(server.requests().len(), 1);
}
