//! The model as a planner: compact the catalog, ask with a schema, read and validate the
//! reply, repair once, and fall back to the deterministic plan when the model cannot
//! give a usable one. Whatever happens, the caller gets a contract-valid plan.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use waypoint_core::Engine;
use waypoint_llm::{CancellationToken, ChatRequest, Client, Endpoint, LlmError, TokenCounter};
use waypoint_protocol::{Plan, PlannerKind, Usage};

use crate::compact::Compactor;
use crate::{prompt, reply};

/// A tenth of the window is kept free for the difference between our tokenizer and
/// the model's.
const MARGIN_DIVISOR: u32 = 10;

/// What happened while asking the model, for reports and benchmarks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Attempt {
    pub usage: Usage,
    /// Repair rounds asked for (0 or 1).
    pub repairs: u32,
    /// Why the deterministic plan answered instead, if it did.
    pub fell_back: Option<String>,
}

/// A model bound to a catalog.
pub struct LlmPlanner {
    client: Arc<Client>,
    endpoint: Endpoint,
    compactor: OnceLock<Compactor>,
}

impl LlmPlanner {
    pub fn new(client: Arc<Client>, endpoint: Endpoint) -> Self {
        Self {
            client,
            endpoint,
            compactor: OnceLock::new(),
        }
    }

    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    fn compactor(&self, engine: &Engine) -> &Compactor {
        self.compactor
            .get_or_init(|| Compactor::new(engine.catalog()))
    }

    /// Tokens the catalog may use: the window, less the reply, the fixed prompt and the
    /// request, less a margin.
    fn catalog_budget(&self, request: &str) -> u32 {
        let info = &self.endpoint.info;
        let fixed = prompt::messages("", request, &waypoint_protocol::Understanding::default())
            .iter()
            .map(|m| TokenCounter.count(&m.content))
            .sum::<u32>()
            + 64;
        let window = info.context_tokens.saturating_sub(info.max_output_tokens);
        let usable = window - window / MARGIN_DIVISOR;
        usable.saturating_sub(fixed)
    }

    /// Plans `request` with the model; `fallback` is the deterministic plan for it,
    /// returned with a warning when the model's answer cannot be used.
    pub async fn plan(
        &self,
        engine: &Engine,
        request: &str,
        context: Option<&serde_json::Value>,
        fallback: Plan,
        cancel: &CancellationToken,
    ) -> (Plan, Attempt) {
        let mut attempt = Attempt::default();
        let ranking = engine.rank_catalog(request, context).unwrap_or_default();
        let compacted = self
            .compactor(engine)
            .compact(&ranking, self.catalog_budget(request));
        let bounds = prompt::Bounds::for_output(
            self.endpoint.info.max_output_tokens,
            engine.options().max_steps,
        );
        let max_steps = bounds.steps;
        let schema = prompt::reply_schema(&compacted.kept, engine.catalog(), bounds);
        let mut req = ChatRequest {
            messages: prompt::messages(&compacted.text, request, fallback.understanding()),
            schema: Some(("plan".to_string(), schema)),
            max_tokens: self.endpoint.info.max_output_tokens,
        };
        let id = &self.endpoint.id;
        loop {
            let answer = self.client.chat(&self.endpoint, &req, cancel).await;
            let r = match answer {
                Ok(r) => r,
                Err(e) => {
                    let why = describe(&e, id);
                    attempt.fell_back = Some(why.clone());
                    return (finish_fallback(fallback, &attempt, &why), attempt);
                }
            };
            attempt.usage.calls += 1;
            attempt.usage.prompt_tokens += r.prompt_tokens;
            attempt.usage.completion_tokens += r.completion_tokens;
            attempt.usage.latency_ms += u64::try_from(r.latency.as_millis()).unwrap_or(u64::MAX);
            attempt.usage.cost_usd = self
                .endpoint
                .info
                .cost(attempt.usage.prompt_tokens, attempt.usage.completion_tokens);
            let read = if r.truncated() {
                Err(format!(
                    "the reply was cut off at {} tokens; write fewer steps and shorter text",
                    req.max_tokens
                ))
            } else {
                reply::read(&r.content, engine.catalog(), max_steps)
            };
            match read {
                Ok(read) => {
                    let adopted = engine.adopt(
                        request,
                        context,
                        read.steps,
                        PlannerKind::Llm,
                        &read.reasoning,
                    );
                    return match adopted {
                        Ok(plan) => (
                            plan.with_model(Some(id.clone()), Some(compacted.report))
                                .with_usage(attempt.usage.clone()),
                            attempt,
                        ),
                        Err(e) => {
                            let why = format!("the model's plan could not be adopted: {e}");
                            attempt.fell_back = Some(why.clone());
                            (finish_fallback(fallback, &attempt, &why), attempt)
                        }
                    };
                }
                Err(digest) if attempt.repairs == 0 => {
                    attempt.repairs = 1;
                    req.messages
                        .push(waypoint_llm::Message::assistant(r.content));
                    req.messages.push(prompt::repair(&digest));
                }
                Err(digest) => {
                    let why =
                        format!("`{id}` gave no usable plan after one repair round ({digest})");
                    attempt.fell_back = Some(why.clone());
                    return (finish_fallback(fallback, &attempt, &why), attempt);
                }
            }
        }
    }
}

fn finish_fallback(fallback: Plan, attempt: &Attempt, why: &str) -> Plan {
    let plan = fallback.with_warning(format!("{why}; this is the deterministic plan"));
    if attempt.usage.calls > 0 {
        plan.with_usage(attempt.usage.clone())
    } else {
        plan
    }
}

fn describe(e: &LlmError, id: &str) -> String {
    match e {
        LlmError::Timeout { after, .. } => {
            format!("`{id}` did not answer within {}", human(*after))
        }
        other => format!("`{id}` could not be used: {other}"),
    }
}

fn human(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}
