//! Talking to models over the OpenAI-compatible chat-completions API — llama.cpp's
//! server, Ollama, vLLM, LM Studio, OpenRouter, OpenAI.
//!
//! - [`config`]: which model, where it lives, its key, its context budget and price;
//!   built-in tables in `data/`, laid over by `waypoint.toml` and one-off flags.
//! - [`Client`]: one call with a deadline, retries on 429/5xx, cancellation, and
//!   structured output that degrades per endpoint (`json_schema` → `json_object` →
//!   prompt-only) and is remembered.
//! - [`TokenCounter`]: a real BPE tokenizer for budgets.
//!
//! - [`replay`] (feature `replay`): a recorded-response server for failure-shape tests.
//!
//! What to ask and what to do with the answer is the caller's business
//! (`waypoint-cascade` for plans).

mod client;
pub mod config;
mod error;
#[cfg(feature = "replay")]
pub mod replay;
mod tokens;
mod wire;

pub use client::{ChatRequest, Client, Message, OutputMode, Reply, Role};
pub use config::{Config, Endpoint, ModelInfo, Overrides, Settings};
pub use error::LlmError;
pub use tokens::TokenCounter;
pub use tokio_util::sync::CancellationToken;
