//! Traces as a collector sees them: a real OTLP/HTTP receiver (decoding the official
//! `opentelemetry-proto` messages) gets the spans of one `waypoint run`, with the stages
//! under `plan`, `plan` and each `execute_tool` under `run`, all in one trace.

#![allow(
    clippy::unwrap_used,
    clippy::missing_panics_doc,
    reason = "tests fail loudly on purpose"
)]

mod common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::routing::post;
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message as _;

/// Starts a receiver on a free port; answers its base URL and the spans it got.
async fn receiver() -> (String, Arc<Mutex<Vec<Span>>>) {
    let got: Arc<Mutex<Vec<Span>>> = Arc::default();
    let sink = got.clone();
    let app = axum::Router::new().route(
        "/v1/traces",
        post(move |body: Bytes| {
            let sink = sink.clone();
            async move {
                let req = ExportTraceServiceRequest::decode(body).unwrap();
                for rs in req.resource_spans {
                    for ss in rs.scope_spans {
                        sink.lock().unwrap().extend(ss.spans);
                    }
                }
                (
                    [("content-type", "application/x-protobuf")],
                    ExportTraceServiceResponse::default().encode_to_vec(),
                )
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), got)
}

fn attr<'s>(span: &'s Span, key: &str) -> Option<&'s str> {
    span.attributes.iter().find(|a| a.key == key).and_then(|a| {
        match a.value.as_ref()?.value.as_ref()? {
            opentelemetry_proto::tonic::common::v1::any_value::Value::StringValue(s) => {
                Some(s.as_str())
            }
            _ => None,
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runs_trace_arrives_at_an_otlp_receiver_with_its_spans_linked() {
    let (base, got) = receiver().await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("router.rs"), "pub struct CommandRouter;\n").unwrap();
    let store = format!("sqlite:{}", dir.path().join("h.db").display());
    let workdir = dir.path().display().to_string();
    let out = tokio::task::spawn_blocking(move || {
        common::command(&[
            "--store",
            &store,
            "run",
            "find CommandRouter",
            "--workdir",
            &workdir,
            "--json",
        ])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &base)
        .output()
        .unwrap()
    })
    .await
    .unwrap();
    assert!(out.status.success(), "{}", common::stderr(&out));
    let spans = got.lock().unwrap().clone();
    let by_name: HashMap<&str, &Span> = spans.iter().map(|s| (s.name.as_str(), s)).collect();
    for name in [
        "run",
        "plan",
        "understand",
        "route",
        "validate",
        "record",
        "execute_tool find_symbol",
    ] {
        assert!(
            by_name.contains_key(name),
            "no `{name}` span in {:?}",
            by_name.keys()
        );
    }
    let run = by_name["run"];
    let plan = by_name["plan"];
    let tool = by_name["execute_tool find_symbol"];
    assert!(run.parent_span_id.is_empty(), "run is the root");
    assert_eq!(plan.parent_span_id, run.span_id, "plan under run");
    assert_eq!(tool.parent_span_id, run.span_id, "each call under run");
    for stage in ["understand", "route", "validate"] {
        assert_eq!(
            by_name[stage].parent_span_id, plan.span_id,
            "{stage} under plan"
        );
    }
    // Two history rows: the plan's under `plan`, the run's outcome under `run`.
    let records: Vec<&[u8]> = spans
        .iter()
        .filter(|s| s.name == "record")
        .map(|s| s.parent_span_id.as_slice())
        .collect();
    assert_eq!(records.len(), 2, "{records:?}");
    assert!(
        records.contains(&plan.span_id.as_slice()),
        "a record under plan"
    );
    assert!(
        records.contains(&run.span_id.as_slice()),
        "a record under run"
    );
    assert!(
        spans.iter().all(|s| s.trace_id == run.trace_id),
        "one trace"
    );
    assert_eq!(attr(tool, "gen_ai.operation.name"), Some("execute_tool"));
    assert_eq!(attr(tool, "gen_ai.tool.name"), Some("find_symbol"));
    assert_eq!(attr(plan, "gen_ai.operation.name"), Some("plan"));
}
