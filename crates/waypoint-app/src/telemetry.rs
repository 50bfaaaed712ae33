//! Traces and logs, for a person following what one request did.
//!
//! Spans run understand → route → plan → validate → `execute_tool` → record, named and
//! attributed after the OpenTelemetry `GenAI` semantic conventions where they apply (a
//! `plan` span, an `execute_tool {tool}` span per call with `gen_ai.tool.name` and token
//! usage). They are exported over OTLP (HTTP, protobuf) when `[telemetry]
//! otlp_endpoint` or `OTEL_EXPORTER_OTLP_ENDPOINT` names a collector; otherwise no span
//! is enabled, and one costs a cached check. Log lines go to standard error — warnings
//! and the progress of long training (target `waypoint::progress`) for a command, also
//! what a server does for a server, or what `RUST_LOG` asks — as JSON with
//! `[telemetry] log_format = "json"` or `WAYPOINT_LOG_FORMAT=json`.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig as _;
use opentelemetry_sdk::trace::SdkTracerProvider;
use serde::{Deserialize, Serialize};
use tracing_subscriber::Layer as _;
use tracing_subscriber::filter::{EnvFilter, LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// The `[telemetry]` section of `waypoint.toml`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TelemetrySection {
    /// An OTLP/HTTP collector, e.g. `http://127.0.0.1:4318` (traces go to
    /// `/v1/traces` under it); else `OTEL_EXPORTER_OTLP_ENDPOINT`.
    pub otlp_endpoint: Option<String>,
    /// `service.name` of the exported spans (default `waypoint`).
    pub service_name: Option<String>,
    /// `text` (default) or `json` for log lines on standard error.
    pub log_format: Option<String>,
}

/// Why telemetry could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    #[error("cannot set up the OTLP exporter for {endpoint}: {message}")]
    Exporter { endpoint: String, message: String },
    #[error("`log_format = \"{0}\"` is not one of text, json")]
    LogFormat(String),
}

/// Installed telemetry; dropping it sends the spans still buffered.
#[must_use = "dropping the guard shuts telemetry down"]
pub struct Telemetry {
    provider: Option<SdkTracerProvider>,
}

impl Telemetry {
    /// Whether spans are exported.
    pub fn exporting(&self) -> bool {
        self.provider.is_some()
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Some(p) = self.provider.take() {
            let _ = p.shutdown();
        }
    }
}

/// The crates whose spans are Waypoint's own.
fn ours() -> Targets {
    Targets::new()
        .with_target("waypoint_app", LevelFilter::INFO)
        .with_target("waypoint_core", LevelFilter::INFO)
        .with_target("waypoint_run", LevelFilter::INFO)
        .with_target("waypoint_cascade", LevelFilter::INFO)
}

/// How much a face logs when `RUST_LOG` does not say: a command what went wrong and the
/// progress of long work (training on thousands of requests, encoding them), a server
/// also what it did (start, reloads).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verbosity {
    Command,
    Server,
}

impl Verbosity {
    fn filter(self) -> &'static str {
        match self {
            Self::Command => "warn,waypoint::progress=info",
            Self::Server => {
                "warn,waypoint::progress=info,waypoint_app=info,waypoint_server=info,waypoint_run=info"
            }
        }
    }
}

/// Installs what the section and the environment ask for, once per process: log lines
/// on standard error (`RUST_LOG`, else `verbosity`'s default) and, when a collector is
/// named, span export.
pub fn init(section: &TelemetrySection, verbosity: Verbosity) -> Result<Telemetry, TelemetryError> {
    let endpoint = section
        .otlp_endpoint
        .clone()
        .filter(|e| !e.trim().is_empty());
    let from_env = std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT")
        .ok()
        .filter(|e| !e.trim().is_empty());
    let logs = std::env::var("RUST_LOG")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| verbosity.filter().to_string());
    let json = match section
        .log_format
        .clone()
        .or_else(|| std::env::var("WAYPOINT_LOG_FORMAT").ok())
        .as_deref()
    {
        None | Some("text" | "") => false,
        Some("json") => true,
        Some(other) => return Err(TelemetryError::LogFormat(other.to_string())),
    };
    let provider = match (&endpoint, &from_env) {
        (None, None) => None,
        (Some(base), _) => Some(provider(Some(&traces_url(base)), section)?),
        // The exporter reads the environment itself (and appends `/v1/traces`).
        (None, Some(_)) => Some(provider(None, section)?),
    };
    let otel = provider.as_ref().map(|p| {
        tracing_opentelemetry::layer()
            .with_tracer(p.tracer("waypoint"))
            .with_filter(ours())
    });
    let filter = EnvFilter::try_new(logs).unwrap_or_else(|_| EnvFilter::new("warn"));
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false);
    let fmt = if json {
        layer.json().with_filter(filter).boxed()
    } else {
        layer.with_filter(filter).boxed()
    };
    // Another subscriber already installed (a test, an embedding program) wins.
    let _ = tracing_subscriber::registry()
        .with(otel)
        .with(fmt)
        .try_init();
    Ok(Telemetry { provider })
}

/// `base` with the traces path, unless it already ends in it.
fn traces_url(base: &str) -> String {
    let base = base.trim_end_matches('/');
    if base.ends_with("/v1/traces") {
        base.to_string()
    } else {
        format!("{base}/v1/traces")
    }
}

fn provider(
    endpoint: Option<&str>,
    section: &TelemetrySection,
) -> Result<SdkTracerProvider, TelemetryError> {
    // reqwest is built without a default TLS provider; an https collector needs one.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut builder = opentelemetry_otlp::SpanExporter::builder().with_http();
    if let Some(e) = endpoint {
        builder = builder.with_endpoint(e);
    }
    let exporter = builder.build().map_err(|e| TelemetryError::Exporter {
        endpoint: endpoint
            .unwrap_or("OTEL_EXPORTER_OTLP_ENDPOINT")
            .to_string(),
        message: e.to_string(),
    })?;
    let resource = opentelemetry_sdk::Resource::builder()
        .with_service_name(
            section
                .service_name
                .clone()
                .unwrap_or_else(|| "waypoint".into()),
        )
        .build();
    Ok(SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource)
        .build())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_traces_path_is_added_once() {
        assert_eq!(
            traces_url("http://127.0.0.1:4318"),
            "http://127.0.0.1:4318/v1/traces"
        );
        assert_eq!(
            traces_url("http://c:4318/v1/traces/"),
            "http://c:4318/v1/traces"
        );
    }

    #[test]
    fn an_unknown_log_format_is_an_error() {
        let s = TelemetrySection {
            log_format: Some("xml".into()),
            ..TelemetrySection::default()
        };
        assert!(matches!(
            init(&s, Verbosity::Command),
            Err(TelemetryError::LogFormat(_))
        ));
    }
}
