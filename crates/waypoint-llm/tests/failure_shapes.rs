//! The client against failure shapes a real model will not produce on demand, served by
//! the recorded-response server.

#![allow(clippy::unwrap_used, reason = "tests fail loudly on purpose")]

use std::time::{Duration, Instant};

use serde_json::json;
use waypoint_llm::replay::{Replay, Scripted};
use waypoint_llm::{
    CancellationToken, ChatRequest, Client, Config, Endpoint, LlmError, Message, OutputMode,
    Overrides,
};

fn endpoint(server: &Replay, timeout: Duration) -> Endpoint {
    server.endpoint("replay/test-model", timeout).unwrap()
}

/// One call with a roomy deadline and no cancellation.
async fn call(server: &Replay, schema: bool) -> Result<waypoint_llm::Reply, LlmError> {
    client()
        .chat(
            &endpoint(server, Duration::from_secs(20)),
            &request(schema),
            &CancellationToken::new(),
        )
        .await
}

fn request(schema: bool) -> ChatRequest {
    ChatRequest {
        messages: vec![Message::system("be brief"), Message::user("hi")],
        schema: schema.then(|| ("plan".to_string(), json!({"type": "object"}))),
        max_tokens: 64,
    }
}

fn client() -> Client {
    Client::new()
        .unwrap()
        .with_backoff(Duration::from_millis(5))
}

#[tokio::test]
async fn retries_5xx_and_429_then_succeeds() {
    let server = Replay::start(vec![
        Scripted::json(500, r#"{"error":"boom"}"#),
        Scripted::Reply {
            status: 429,
            headers: vec![("retry-after".into(), "0".into())],
            body: "slow down".into(),
        },
        Scripted::completion("{\"ok\":true}"),
    ])
    .unwrap();
    let r = call(&server, false).await.unwrap();
    assert_eq!(r.content, "{\"ok\":true}");
    assert_eq!(r.attempts, 3);
    assert_eq!((r.prompt_tokens, r.completion_tokens), (100, 20));
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    assert_eq!(reqs[0].path, "/v1/chat/completions");
    assert_eq!(reqs[0].body["model"], "test-model");
}

#[tokio::test]
async fn gives_up_after_the_configured_retries() {
    let server = Replay::start(vec![Scripted::json(503, "{}")]).unwrap();
    let ep = endpoint(&server, Duration::from_secs(20));
    assert_eq!(ep.retries, 2);
    let e = client()
        .chat(&ep, &request(false), &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(e, LlmError::Status { status: 503, .. }), "{e}");
    assert_eq!(server.requests().len(), 3, "one call and two retries");
}

#[tokio::test]
async fn does_not_retry_other_errors() {
    let server = Replay::start(vec![Scripted::json(404, r#"{"error":"no such model"}"#)]).unwrap();
    let e = call(&server, false).await.unwrap_err();
    assert!(matches!(e, LlmError::Status { status: 404, .. }));
    assert!(e.to_string().contains("no such model"), "{e}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_hanging_server_times_out_at_the_deadline() {
    let server = Replay::start(vec![Scripted::Hang]).unwrap();
    let started = Instant::now();
    let e = client()
        .chat(
            &endpoint(&server, Duration::from_millis(300)),
            &request(false),
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert!(matches!(e, LlmError::Timeout { .. }), "{e}");
    assert!(e.to_string().contains("0.3 s"), "{e}");
    // The server hangs for 60 s; returning long before that shows the deadline held.
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[tokio::test]
async fn cancellation_stops_a_call() {
    let server = Replay::start(vec![Scripted::Hang]).unwrap();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.cancel();
    });
    let e = client()
        .chat(
            &endpoint(&server, Duration::from_secs(30)),
            &request(false),
            &cancel,
        )
        .await
        .unwrap_err();
    assert!(matches!(e, LlmError::Cancelled));
}

#[tokio::test]
async fn truncated_and_garbage_bodies_are_bad_responses() {
    for script in [
        Scripted::Cut(r#"{"choices":[{"message":{"content":"{\"st"#.into()),
        Scripted::Reply {
            status: 200,
            headers: vec![],
            body: "<html>gateway</html>".into(),
        },
        Scripted::json(200, r#"{"choices":[]}"#),
    ] {
        let server = Replay::start(vec![script.clone()]).unwrap();
        let e = call(&server, false).await.unwrap_err();
        assert!(matches!(e, LlmError::BadResponse { .. }), "{script:?}: {e}");
    }
}

#[tokio::test]
async fn a_refused_connection_fails_fast_without_retries() {
    // Bind then drop a listener: the port is free and nobody listens.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let ep = Config::builtin()
        .endpoint(
            Some("replay/x"),
            &Overrides {
                base_url: Some(format!("http://127.0.0.1:{port}/v1")),
                ..Overrides::default()
            },
        )
        .unwrap();
    let e = client()
        .chat(&ep, &request(false), &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(e, LlmError::Unreachable { .. }), "{e}");
    assert!(!e.is_retryable());
}

#[tokio::test]
async fn structured_output_degrades_once_and_is_remembered() {
    let server = Replay::start(vec![
        Scripted::json(
            400,
            r#"{"error":"response_format json_schema is not supported"}"#,
        ),
        Scripted::completion("{}"),
        Scripted::completion("{}"),
    ])
    .unwrap();
    let c = client();
    let ep = endpoint(&server, Duration::from_secs(20));
    let r = c
        .chat(&ep, &request(true), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(r.mode, OutputMode::JsonObject);
    let _ = c
        .chat(&ep, &request(true), &CancellationToken::new())
        .await
        .unwrap();
    let reqs = server.requests();
    assert_eq!(reqs[0].body["response_format"]["type"], "json_schema");
    assert_eq!(reqs[1].body["response_format"]["type"], "json_object");
    // Without server-side enforcement the schema travels in the system prompt.
    let system = reqs[1].body["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("JSON Schema"), "{system}");
    // The next call starts where the last one ended.
    assert_eq!(reqs[2].body["response_format"]["type"], "json_object");
    assert_eq!(
        c.known_modes().get(&ep.base_url),
        Some(&OutputMode::JsonObject)
    );
}

#[tokio::test]
async fn a_400_without_a_schema_is_an_error() {
    let server = Replay::start(vec![Scripted::json(400, r#"{"error":"bad messages"}"#)]).unwrap();
    let e = call(&server, false).await.unwrap_err();
    assert!(matches!(e, LlmError::Status { status: 400, .. }), "{e}");
}

#[tokio::test]
async fn the_api_key_is_sent_as_a_bearer_token() {
    let server = Replay::start(vec![Scripted::completion("{}")]).unwrap();
    let mut ep = endpoint(&server, Duration::from_secs(20));
    ep.api_key = Some("sk-test".into());
    let _ = client()
        .chat(&ep, &request(false), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        server.requests()[0].header("authorization"),
        Some("Bearer sk-test")
    );
}

#[tokio::test]
async fn usage_is_counted_when_the_server_omits_it() {
    let body =
        json!({"choices": [{"message": {"content": "hello world"}, "finish_reason": "length"}]});
    let server = Replay::start(vec![Scripted::json(200, &body.to_string())]).unwrap();
    let r = call(&server, false).await.unwrap();
    assert_eq!(r.completion_tokens, 2);
    assert!(r.prompt_tokens > 0);
    assert!(r.truncated());
}
