//! One chat-completions call, made safe: a deadline over the whole call, retries with
//! backoff on 429 and 5xx only, cancellation, and structured output that degrades from
//! `json_schema` to `json_object` to prompt-only once per endpoint and is remembered.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::config::Endpoint;
use crate::error::LlmError;
use crate::tokens::TokenCounter;
use crate::wire::Completion;

/// How a server is asked for JSON, strongest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputMode {
    /// `response_format: json_schema`: the server enforces the schema (llama.cpp
    /// compiles it to a grammar; OpenAI's strict mode).
    JsonSchema,
    /// `response_format: json_object`: valid JSON, shape only asked for in the prompt.
    JsonObject,
    /// Nothing but the prompt's instructions.
    PromptOnly,
}

impl OutputMode {
    fn weaker(self) -> Option<Self> {
        match self {
            Self::JsonSchema => Some(Self::JsonObject),
            Self::JsonObject => Some(Self::PromptOnly),
            Self::PromptOnly => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
}

#[derive(Debug, Clone, Serialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

impl Message {
    pub fn system(content: impl Into<String>) -> Self {
        Self {
            role: Role::System,
            content: content.into(),
        }
    }
    pub fn user(content: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: content.into(),
        }
    }
    pub fn assistant(content: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// What to ask.
#[derive(Debug, Clone)]
pub struct ChatRequest {
    pub messages: Vec<Message>,
    /// The JSON Schema the reply must follow, with a name for `response_format`.
    pub schema: Option<(String, Value)>,
    pub max_tokens: u32,
}

/// What came back, with what it cost.
#[derive(Debug, Clone)]
pub struct Reply {
    pub content: String,
    /// As the server said it (`stop`, `length`, …).
    pub finish_reason: Option<String>,
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    /// Wall time of the call, retries and backoff included.
    pub latency: Duration,
    /// The output mode that produced this reply.
    pub mode: OutputMode,
    /// HTTP requests made, retries and mode downgrades included.
    pub attempts: u32,
}

impl Reply {
    /// Whether the server stopped because it hit `max_tokens`.
    pub fn truncated(&self) -> bool {
        self.finish_reason.as_deref() == Some("length")
    }
}

/// A client for any number of OpenAI-compatible endpoints. `Sync`; share one.
pub struct Client {
    http: reqwest::Client,
    modes: Mutex<HashMap<String, OutputMode>>,
    backoff: Duration,
}

impl Client {
    pub fn new() -> Result<Self, LlmError> {
        // reqwest is built without a bundled crypto provider; rustls's ring provider is
        // already in the tree (sqlx), so it is installed once here. A provider installed
        // earlier by the embedding program is kept.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .user_agent(concat!("waypoint/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| LlmError::Unreachable {
                url: String::new(),
                message: format!("cannot build an HTTP client: {e}"),
            })?;
        Ok(Self {
            http,
            modes: Mutex::new(HashMap::new()),
            backoff: Duration::from_millis(250),
        })
    }

    /// Sets the first backoff delay (doubled per retry); tests shorten it.
    #[must_use]
    pub fn with_backoff(mut self, first: Duration) -> Self {
        self.backoff = first;
        self
    }

    /// The output mode known to work for each base URL so far.
    pub fn known_modes(&self) -> HashMap<String, OutputMode> {
        self.modes.lock().map(|m| m.clone()).unwrap_or_default()
    }

    /// Seeds what an earlier process learned about endpoints.
    pub fn remember_modes(&self, modes: HashMap<String, OutputMode>) {
        if let Ok(mut m) = self.modes.lock() {
            m.extend(modes);
        }
    }

    fn mode_for(&self, base_url: &str) -> OutputMode {
        self.modes
            .lock()
            .ok()
            .and_then(|m| m.get(base_url).copied())
            .unwrap_or(OutputMode::JsonSchema)
    }

    fn set_mode(&self, base_url: &str, mode: OutputMode) {
        if let Ok(mut m) = self.modes.lock() {
            m.insert(base_url.to_string(), mode);
        }
    }

    /// Makes one chat call within the endpoint's deadline.
    pub async fn chat(
        &self,
        ep: &Endpoint,
        req: &ChatRequest,
        cancel: &CancellationToken,
    ) -> Result<Reply, LlmError> {
        let url = format!("{}/chat/completions", ep.base_url);
        let started = Instant::now();
        let work = self.chat_until_done(ep, &url, req, started);
        tokio::select! {
            () = cancel.cancelled() => Err(LlmError::Cancelled),
            r = tokio::time::timeout(ep.timeout, work) => r.unwrap_or(Err(LlmError::Timeout {
                url,
                after: ep.timeout,
            })),
        }
    }

    async fn chat_until_done(
        &self,
        ep: &Endpoint,
        url: &str,
        req: &ChatRequest,
        started: Instant,
    ) -> Result<Reply, LlmError> {
        let mut mode = self.mode_for(&ep.base_url);
        let mut attempts = 0;
        let mut retries_left = ep.retries;
        let mut delay = self.backoff;
        loop {
            attempts += 1;
            match self.once(ep, url, req, mode).await {
                Ok(completion) => {
                    self.set_mode(&ep.base_url, mode);
                    return finish(completion, req, mode, attempts, started, url);
                }
                Err(Failure::Rejected(status, excerpt)) if req.schema.is_some() => {
                    // A 400/422 to a request with response_format most often means the
                    // server does not know that form; try the next weaker one before
                    // calling it an error.
                    match mode.weaker() {
                        Some(next) => mode = next,
                        None => {
                            return Err(LlmError::Status {
                                url: url.to_string(),
                                status,
                                excerpt,
                            });
                        }
                    }
                }
                Err(Failure::Error(e, retry_after)) if e.is_retryable() && retries_left > 0 => {
                    retries_left -= 1;
                    tokio::time::sleep(retry_after.unwrap_or(delay)).await;
                    delay = delay.saturating_mul(2).min(Duration::from_secs(8));
                }
                Err(Failure::Rejected(status, excerpt)) => {
                    return Err(LlmError::Status {
                        url: url.to_string(),
                        status,
                        excerpt,
                    });
                }
                Err(Failure::Error(e, _)) => return Err(e),
            }
        }
    }

    async fn once(
        &self,
        ep: &Endpoint,
        url: &str,
        req: &ChatRequest,
        mode: OutputMode,
    ) -> Result<Completion, Failure> {
        let body = request_body(ep, req, mode);
        let mut http = self
            .http
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_string());
        if let Some(key) = &ep.api_key {
            http = http.bearer_auth(key);
        }
        let resp = http.send().await.map_err(|e| {
            Failure::error(LlmError::Unreachable {
                url: url.to_string(),
                message: root_cause(&e),
            })
        })?;
        let status = resp.status().as_u16();
        let retry_after = resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(|secs| Duration::from_secs(secs.min(30)));
        let text = resp.text().await.map_err(|e| {
            Failure::error(LlmError::BadResponse {
                url: url.to_string(),
                why: format!("the body could not be read: {}", root_cause(&e)),
            })
        })?;
        if status == 400 || status == 422 {
            return Err(Failure::Rejected(status, excerpt(&text)));
        }
        if !(200..300).contains(&status) {
            return Err(Failure::Error(
                LlmError::Status {
                    url: url.to_string(),
                    status,
                    excerpt: excerpt(&text),
                },
                retry_after,
            ));
        }
        serde_json::from_str(&text).map_err(|e| {
            Failure::error(LlmError::BadResponse {
                url: url.to_string(),
                why: format!("{e}; body starts `{}`", excerpt(&text)),
            })
        })
    }
}

enum Failure {
    /// The server refused the request's form (400, 422).
    Rejected(u16, String),
    /// Any other failure, with the server's Retry-After when it sent one.
    Error(LlmError, Option<Duration>),
}

impl Failure {
    fn error(e: LlmError) -> Self {
        Self::Error(e, None)
    }
}

fn finish(
    completion: Completion,
    req: &ChatRequest,
    mode: OutputMode,
    attempts: u32,
    started: Instant,
    url: &str,
) -> Result<Reply, LlmError> {
    let Some((content, finish_reason)) = completion.first() else {
        return Err(LlmError::BadResponse {
            url: url.to_string(),
            why: "the reply has no choices".into(),
        });
    };
    let counter = TokenCounter;
    let usage = completion.usage.unwrap_or_default();
    let prompt_tokens = usage.prompt_tokens.map_or_else(
        || req.messages.iter().map(|m| counter.count(&m.content)).sum(),
        |n| u32::try_from(n).unwrap_or(u32::MAX),
    );
    let completion_tokens = usage.completion_tokens.map_or_else(
        || counter.count(&content),
        |n| u32::try_from(n).unwrap_or(u32::MAX),
    );
    Ok(Reply {
        content,
        finish_reason,
        prompt_tokens,
        completion_tokens,
        latency: started.elapsed(),
        mode,
        attempts,
    })
}

fn request_body(ep: &Endpoint, req: &ChatRequest, mode: OutputMode) -> Value {
    let mut messages = req.messages.clone();
    if let Some((_, schema)) = &req.schema
        && mode != OutputMode::JsonSchema
    {
        // Without server-side enforcement the schema has to be in the prompt.
        let hint = format!(
            "\n\nReply with one JSON object and nothing else. It must follow this JSON Schema:\n{schema}"
        );
        match messages.iter_mut().find(|m| m.role == Role::System) {
            Some(m) => m.content.push_str(&hint),
            None => messages.insert(0, Message::system(hint.trim_start())),
        }
    }
    let mut body = json!({
        "model": ep.model,
        "messages": messages,
        "max_tokens": req.max_tokens,
        "temperature": ep.temperature,
        "stream": false,
    });
    if let Some((name, schema)) = &req.schema {
        match mode {
            OutputMode::JsonSchema => {
                body["response_format"] = json!({
                    "type": "json_schema",
                    "json_schema": {"name": name, "strict": true, "schema": schema},
                });
            }
            OutputMode::JsonObject => body["response_format"] = json!({"type": "json_object"}),
            OutputMode::PromptOnly => {}
        }
    }
    body
}

fn excerpt(text: &str) -> String {
    let t = text.trim();
    let cut: String = t.chars().take(200).collect();
    if cut.len() < t.len() {
        format!("{cut}…")
    } else {
        cut
    }
}

/// The innermost error message: reqwest's top level says only "error sending request".
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}
