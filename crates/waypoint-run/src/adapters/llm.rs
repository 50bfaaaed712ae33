//! `llm_subtask` steps and `run: {llm: {prompt}}` tools: one call of the configured
//! model, given only the step's own args and the outputs its `input_refs` name — never
//! the whole run (the narrowed context).

use std::fmt::Write as _;
use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use waypoint_llm::{ChatRequest, Message};
use waypoint_store::MemoryStore;

use super::{Call, Output, ToolError, Toolbox, fill_template};

/// Most tokens a subtask may answer with.
const MAX_REPLY_TOKENS: u32 = 1024;
/// Most characters of one earlier output put in front of the model.
const MAX_INPUT_CHARS: usize = 16_000;

const SYSTEM: &str = "You carry out one step of a larger plan. Use only the task and the \
inputs given. Answer with the result itself, without preamble.";

pub(super) async fn call<M: MemoryStore + 'static>(
    tb: &Toolbox<M>,
    template: Option<&str>,
    call: &Call<'_>,
    timeout: Duration,
) -> Result<Output, ToolError> {
    let model = tb.model.as_ref().ok_or_else(|| {
        ToolError::Unconfigured(format!(
            "`{}` needs a model, and none is configured (`model` under [llm] in waypoint.toml)",
            call.tool.name
        ))
    })?;
    let task = if let Some(t) = template {
        fill_template(t, &call.args)?
    } else {
        let mut task = call.tool.description.clone();
        for (k, v) in &call.args {
            let _ = write!(task, "\n{k}: {}", crate::refs::text_of(v));
        }
        task
    };
    let prompt = prompt(&task, &call.inputs);
    let mut endpoint = model.endpoint.clone();
    endpoint.timeout = endpoint.timeout.min(timeout);
    let req = ChatRequest {
        messages: vec![Message::system(SYSTEM), Message::user(prompt)],
        schema: None,
        max_tokens: MAX_REPLY_TOKENS,
    };
    let reply = model
        .client
        .chat(&endpoint, &req, &CancellationToken::new())
        .await
        .map_err(|e| ToolError::Failed(e.to_string()))?;
    let cost = endpoint
        .info
        .cost(reply.prompt_tokens, reply.completion_tokens)
        .unwrap_or(0.0);
    Ok(Output {
        value: json!({ "text": reply.content.trim(), "model": endpoint.id, "truncated": reply.truncated() }),
        prompt_tokens: reply.prompt_tokens,
        completion_tokens: reply.completion_tokens,
        model_usd: cost,
    })
}

/// The user message: the task, then each input the step names, bounded.
fn prompt(task: &str, inputs: &[(String, serde_json::Value)]) -> String {
    let mut prompt = format!("Task: {task}");
    for (step, value) in inputs {
        let text: String = crate::refs::text_of(value)
            .chars()
            .take(MAX_INPUT_CHARS)
            .collect();
        let _ = write!(prompt, "\n\nInput from {step}:\n---\n{text}\n---");
    }
    prompt
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn the_prompt_holds_the_task_and_only_the_given_inputs_bounded() {
        let long = "x".repeat(super::MAX_INPUT_CHARS + 50);
        let p = super::prompt(
            "Summarise",
            &[
                ("s1".into(), json!({"stdout": "alpha"})),
                ("s2".into(), json!(long)),
            ],
        );
        assert!(p.starts_with("Task: Summarise"));
        assert!(p.contains("Input from s1:\n---\nalpha\n---"));
        assert_eq!(p.matches('x').count(), super::MAX_INPUT_CHARS);
    }
}
