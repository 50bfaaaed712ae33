use std::time::Duration;

/// Why a model call or its configuration failed. Every variant says what to do next,
/// because the caller (usually the cascade) turns it into a warning a person reads.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error(
        "no model chosen; name one as PROVIDER/MODEL (e.g. llamacpp/gemma3-270m), or set `model` under [llm] in waypoint.toml"
    )]
    NoModel,
    #[error("`{spec}` is not a model reference; write PROVIDER/MODEL, e.g. `llamacpp/gemma3-270m`")]
    BadModelRef { spec: String },
    #[error(
        "unknown provider `{provider}`; known: {known}. Add [providers.{provider}] to waypoint.toml or give its base URL"
    )]
    UnknownProvider { provider: String, known: String },
    #[error("the API key variable `{var}` is not set; export it or choose another provider")]
    MissingKey { var: String },
    #[error("cannot read config `{path}`: {message}")]
    Config { path: String, message: String },
    #[error("cannot reach {url}: {message}")]
    Unreachable { url: String, message: String },
    #[error("no answer from {url} within {}", seconds(*after))]
    Timeout { url: String, after: Duration },
    #[error("{url} answered HTTP {status}: {excerpt}")]
    Status {
        url: String,
        status: u16,
        excerpt: String,
    },
    #[error("{url} sent a reply that is not a chat completion: {why}")]
    BadResponse { url: String, why: String },
    #[error("the model call was cancelled")]
    Cancelled,
}

impl LlmError {
    /// Whether trying the same call again may succeed (429 and 5xx only, per the
    /// providers' own guidance; a refused connection or a 4xx will not heal by waiting).
    pub fn is_retryable(&self) -> bool {
        matches!(self, Self::Status { status, .. } if *status == 429 || *status >= 500)
    }
}

fn seconds(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}
