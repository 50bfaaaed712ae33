//! The model planner against a real llama.cpp server with Gemma 3 270M (both from PyPI,
//! started by `scripts/local-llm`; `scripts/test` exports `WAYPOINT_LLM_URL`).
//!
//! A 270M base model writes poor plans; what is tested is the mechanics: replies arrive
//! schema-bound and parse, every plan is contract-valid, no tool outside the catalog
//! survives validation except as an `unknown` step, and failures fall back.

#![allow(clippy::unwrap_used, reason = "tests fail loudly on purpose")]

use std::sync::Arc;
use std::time::Duration;

use waypoint_cascade::{Cascade, LlmPlanner, Strategy};
use waypoint_core::{Engine, Options};
use waypoint_llm::{CancellationToken, Client, Config, Overrides};
use waypoint_protocol::{PlannerKind, StepKind};

/// The server's base URL, or `None` to skip (a failure when `WAYPOINT_REQUIRE_LLM=1`).
fn server() -> Option<String> {
    match std::env::var("WAYPOINT_LLM_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var("WAYPOINT_REQUIRE_LLM").as_deref() != Ok("1"),
                "WAYPOINT_REQUIRE_LLM=1 but WAYPOINT_LLM_URL is unset; run scripts/local-llm start"
            );
            eprintln!(
                "skipped: no local model (run scripts/local-llm start and set WAYPOINT_LLM_URL)"
            );
            None
        }
    }
}

/// A small output budget keeps each call to a few seconds on one CPU thread.
const TEST_CONFIG: &str = r#"
[models."llamacpp/*"]
context_tokens = 4096
max_output_tokens = 384
usd_per_mtok_in = 0.0
usd_per_mtok_out = 0.0
"#;

fn endpoint(url: &str) -> waypoint_llm::Endpoint {
    Config::with_file(TEST_CONFIG, "test config")
        .unwrap()
        .endpoint(
            Some("llamacpp/gemma3-270m"),
            &Overrides {
                base_url: Some(url.to_string()),
                api_key_env: None,
                timeout: Some(Duration::from_mins(2)),
            },
        )
        .unwrap()
}

fn planner(url: &str) -> LlmPlanner {
    LlmPlanner::new(Arc::new(Client::new().unwrap()), endpoint(url))
}

fn cases() -> Vec<waypoint_protocol::EvalCase> {
    let root = env!("CARGO_MANIFEST_DIR");
    let shared = format!("{root}/../../../shared/eval/cases.jsonl");
    let path = if std::path::Path::new(&shared).is_file() {
        shared
    } else {
        format!("{root}/../../eval/dev.jsonl")
    };
    let text = std::fs::read_to_string(&path).unwrap();
    // Every third request, spread over the whole set: the mechanics under test are the
    // same for each, and a reply costs seconds on two cores. `waypoint eval FILE
    // --planner llm` plans them all (docs/llm.md).
    let all = waypoint_eval::read_cases(&text, &path).unwrap();
    all.into_iter().step_by(3).collect()
}

fn plan_schema() -> jsonschema::Validator {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/plan.schema.json"
    ))
    .unwrap();
    jsonschema::validator_for(&serde_json::from_str(&text).unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_eval_request_gets_a_contract_valid_plan() {
    let Some(url) = server() else { return };
    let engine = Engine::new(
        waypoint_catalog::builtin().unwrap().catalog,
        Options::default(),
    )
    .unwrap();
    // The mechanics of reading replies, without the guard (tested below) refusing them.
    let llm = planner(&url).with_assisted_floor(0.0);
    let cascade = Cascade {
        engine: &engine,
        llm: Some(&llm),
        strategy: Strategy::Llm,
        threshold: 0.6,
    };
    let schema = plan_schema();
    let cancel = CancellationToken::new();
    let (mut answered, mut repairs, mut fallbacks) = (0u32, 0u32, Vec::new());
    let (mut prompt, mut completion) = (0u64, 0u64);
    let mut latencies = Vec::new();
    let cases = cases();
    for case in &cases {
        let (plan, attempt) = cascade
            .plan(&case.request, case.context.as_ref(), None, &cancel)
            .await
            .unwrap();
        let attempt = attempt.expect("strategy llm always asks the model");
        let json = serde_json::to_value(&plan).unwrap();
        let errors: Vec<String> = schema.iter_errors(&json).map(|e| e.to_string()).collect();
        assert!(
            errors.is_empty(),
            "{}: plan breaks the contract: {errors:?}",
            case.id
        );
        for step in plan.steps() {
            if step.kind != StepKind::Unknown {
                assert!(
                    engine.catalog().entry(&step.tool).is_some(),
                    "{}: `{}` is not in the catalog but survived",
                    case.id,
                    step.tool
                );
            }
        }
        match plan.planner() {
            PlannerKind::Llm => {
                answered += 1;
                assert_eq!(plan.model(), Some("llamacpp/gemma3-270m"));
                let c = plan.compaction().expect("an llm plan reports compaction");
                assert!(c.after_tokens <= c.before_tokens + 8);
            }
            PlannerKind::Deterministic => {
                assert!(attempt.fell_back.is_some(), "{}", case.id);
                assert!(
                    plan.warnings()
                        .iter()
                        .any(|w| w.contains("deterministic plan"))
                );
                fallbacks.push(format!(
                    "{}: {}",
                    case.id,
                    attempt.fell_back.unwrap_or_default()
                ));
            }
            PlannerKind::Learned => unreachable!("no history here"),
        }
        repairs += attempt.repairs;
        prompt += u64::from(attempt.usage.prompt_tokens);
        completion += u64::from(attempt.usage.completion_tokens);
        latencies.push(attempt.usage.latency_ms);
    }
    latencies.sort_unstable();
    let n = cases.len();
    eprintln!(
        "real server: {n} requests · answered by the model {answered} · repairs {repairs} · fallbacks {} · tokens {prompt} prompt + {completion} completion · latency p50 {} ms, p90 {} ms, max {} ms",
        fallbacks.len(),
        latencies[n / 2],
        latencies[n * 9 / 10],
        latencies[n - 1]
    );
    for f in &fallbacks {
        eprintln!("  fallback {f}");
    }
    // Grammar-bound replies parse; a reply that does not is a bug in the schema bounds.
    assert!(
        f64::from(answered) >= 0.9 * n as f64,
        "only {answered}/{n} answered by the model: {fallbacks:?}"
    );
}

#[tokio::test]
async fn the_server_accepts_json_schema_and_is_remembered() {
    let Some(url) = server() else { return };
    let engine = Engine::new(
        waypoint_catalog::builtin().unwrap().catalog,
        Options::default(),
    )
    .unwrap();
    let client = Arc::new(Client::new().unwrap());
    let endpoint = endpoint(&url);
    let llm = LlmPlanner::new(client.clone(), endpoint);
    let request = "list the files in the repo";
    let fallback = engine.plan(request, None).unwrap();
    let (plan, attempt) = llm
        .plan(&engine, request, None, fallback, &CancellationToken::new())
        .await;
    // Plumbing, not the model's judgement: the server answered under a JSON Schema and
    // the endpoint's mode is remembered. Which tool a 270M model names (if any) varies
    // with the build's arithmetic, so whether its plan is adopted is not asserted.
    assert!(attempt.usage.calls >= 1, "{:?}", plan.warnings());
    assert!(attempt.usage.completion_tokens > 0, "the model replied");
    assert_eq!(
        client.known_modes().get(url.trim_end_matches('/')),
        Some(&waypoint_llm::OutputMode::JsonSchema)
    );
}

#[tokio::test]
async fn whatever_the_model_names_a_request_the_catalog_cannot_serve_stays_a_gap() {
    let Some(url) = server() else { return };
    let engine = Engine::new(
        waypoint_catalog::builtin().unwrap().catalog,
        Options::default(),
    )
    .unwrap();
    let llm = planner(&url);
    // Always asked: the guard, not the cascade's choice, must keep the gap.
    let cascade = Cascade {
        engine: &engine,
        llm: Some(&llm),
        strategy: Strategy::Llm,
        threshold: 0.6,
    };
    let cancel = CancellationToken::new();
    for request in [
        "book a flight to Lisbon for next Friday",
        "order a pizza with extra cheese",
    ] {
        let (plan, attempt) = cascade.plan(request, None, None, &cancel).await.unwrap();
        assert!(attempt.is_some(), "strategy llm asks the model");
        assert!(
            plan.steps().iter().all(|s| s.kind == StepKind::Unknown),
            "{request}: {:?}",
            plan.steps()
        );
    }
}
