//! The model as a planner: compact the catalog, ask with a schema, read and validate the
//! reply, repair once, and fall back to the deterministic plan when the model cannot
//! give a usable one. Whatever happens, the caller gets a contract-valid plan.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use waypoint_core::{ClauseEvidence, Engine};
use waypoint_llm::{CancellationToken, ChatRequest, Client, Endpoint, LlmError, TokenCounter};
use waypoint_protocol::{Plan, PlannerKind, Step, Usage};

use crate::compact::Compactor;
use crate::guard::{DEFAULT_ASSISTED_FLOOR, guard};
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
    /// Route score a model's step needs in some clause to be adopted ([`crate::guard`]).
    assisted_floor: f64,
}

impl LlmPlanner {
    pub fn new(client: Arc<Client>, endpoint: Endpoint) -> Self {
        Self {
            client,
            endpoint,
            compactor: OnceLock::new(),
            assisted_floor: DEFAULT_ASSISTED_FLOOR,
        }
    }

    /// The same planner with another assisted floor (0–1).
    #[must_use]
    pub fn with_assisted_floor(mut self, floor: f64) -> Self {
        self.assisted_floor = floor;
        self
    }

    pub fn assisted_floor(&self) -> f64 {
        self.assisted_floor
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
        let evidence = engine.clause_evidence(request, context).unwrap_or_default();
        let ranking = ClauseEvidence::ranking(&evidence);
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
                    let guarded = guard(
                        read.steps,
                        &evidence,
                        fallback.steps(),
                        self.assisted_floor,
                        |id| engine.catalog().entry(id).is_some(),
                    );
                    if self.assisted_floor > 0.0 && !guarded.steps.iter().any(Step::is_known) {
                        // Nothing the model chose has the router's support (or it chose
                        // nothing): the deterministic plan stands, suggestions noted.
                        let why = if guarded.notes.is_empty() {
                            format!("`{id}` named no catalog tool for it")
                        } else {
                            guarded.notes.join("; ")
                        };
                        attempt.fell_back = Some(why.clone());
                        let plan = fallback.with_gap_note(&why);
                        return (finish_fallback(plan, &attempt, &why), attempt);
                    }
                    let note = with_notes(&read.reasoning, &guarded.notes);
                    let adopted =
                        engine.adopt(request, context, guarded.steps, PlannerKind::Llm, &note);
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

/// The model's reasoning followed by what the guard changed.
fn with_notes(reasoning: &str, notes: &[String]) -> String {
    let mut note = reasoning.trim().trim_end_matches('.').to_string();
    for n in notes {
        if !note.is_empty() {
            note.push_str(". ");
        }
        note.push_str(n);
    }
    note
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
