//! What the model is told, and the JSON Schema its reply must follow.
//!
//! The schema bounds everything — string lengths, array sizes, step numbers — because
//! small models given an unbounded string field loop until `max_tokens` and the JSON is
//! cut off. The `tool` field is an enum of the ids the model was shown plus `unknown`.

use serde_json::{Value, json};
use waypoint_catalog::Catalog;
use waypoint_llm::Message;
use waypoint_protocol::{ExtractedKind, UNKNOWN_TOOL, Understanding};

/// Size limits of a reply, chosen so that even a reply that fills every field to its
/// limit fits the model's output budget: a small model given room fills it, and a
/// reply cut off at `max_tokens` is no reply at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    pub steps: usize,
    pub args: usize,
    pub value_chars: usize,
    pub why_chars: usize,
    pub reasoning_chars: usize,
}

impl Bounds {
    /// JSON runs about three characters per token at worst (punctuation, quotes).
    const CHARS_PER_TOKEN: usize = 3;
    /// Keys, quotes, brackets and a tool id around one step.
    const STEP_OVERHEAD_CHARS: usize = 110;
    /// Keys and quotes around one arg, plus its name.
    const ARG_OVERHEAD_CHARS: usize = 45;

    /// The largest bounds whose worst case fits `max_output_tokens`, at most `max_steps`.
    pub fn for_output(max_output_tokens: u32, max_steps: usize) -> Self {
        let generous = max_output_tokens >= 2048;
        let mut b = if generous {
            Self {
                steps: 16,
                args: 8,
                value_chars: 300,
                why_chars: 160,
                reasoning_chars: 300,
            }
        } else {
            Self {
                steps: 16,
                args: 4,
                value_chars: 80,
                why_chars: 60,
                reasoning_chars: 120,
            }
        };
        let budget =
            usize::try_from(max_output_tokens).unwrap_or(usize::MAX) * Self::CHARS_PER_TOKEN;
        let fixed = b.reasoning_chars + 60;
        let per_step = Self::STEP_OVERHEAD_CHARS
            + b.why_chars
            + b.args * (Self::ARG_OVERHEAD_CHARS + b.value_chars);
        b.steps = (budget.saturating_sub(fixed) / per_step).clamp(1, max_steps.clamp(1, 16));
        b
    }

    /// Worst-case reply length in characters.
    pub fn worst_case_chars(&self) -> usize {
        self.reasoning_chars
            + 60
            + self.steps
                * (Self::STEP_OVERHEAD_CHARS
                    + self.why_chars
                    + self.args * (Self::ARG_OVERHEAD_CHARS + self.value_chars))
    }
}

const SYSTEM: &str = "You are the planner of an AI agent. Turn the user's request into an \
ordered plan over the catalog of tools and pipelines you are given.
Rules:
- Use only ids from the catalog. When nothing in the catalog can do a part of the request, \
add a step with tool \"unknown\" and say in `why` what capability is missing.
- Prefer a pipeline when it covers several parts of the request at once.
- One step per action, in the order they must happen.
- `uses` lists the numbers of earlier steps whose output this step needs.
- Fill `args` from the request. To pass an earlier step's output, write \"$s1\" \
(for step 1) as the value. Leave out args you cannot fill.
- Keep `why` and `reasoning` short.";

/// The messages for one planning call.
pub fn messages(catalog_text: &str, request: &str, understanding: &Understanding) -> Vec<Message> {
    let mut user = format!("Catalog:\n{catalog_text}\n\n");
    let found: Vec<String> = ExtractedKind::ALL
        .into_iter()
        .filter(|k| !understanding.extracted.get(*k).is_empty())
        .map(|k| {
            format!(
                "{}: {}",
                k.as_str(),
                understanding.extracted.get(k).join(", ")
            )
        })
        .collect();
    if !found.is_empty() {
        user.push_str(&format!(
            "Values found in the request: {}\n\n",
            found.join("; ")
        ));
    }
    user.push_str(&format!("Request: {}", request.trim()));
    vec![Message::system(SYSTEM), Message::user(user)]
}

/// The message that asks for a second try, with what was wrong.
pub fn repair(digest: &str) -> Message {
    Message::user(format!(
        "Your reply could not be used: {digest}. Reply again with only the corrected JSON object."
    ))
}

/// The reply's JSON Schema for the ids the model was shown.
pub fn reply_schema(kept: &[String], catalog: &Catalog, b: Bounds) -> Value {
    let mut tools: Vec<&str> = kept.iter().map(String::as_str).collect();
    tools.push(UNKNOWN_TOOL);
    let mut arg_names: Vec<&str> = kept
        .iter()
        .filter_map(|id| catalog.tool(id))
        .flat_map(|t| t.properties().map(|(n, _)| n))
        .collect();
    arg_names.sort_unstable();
    arg_names.dedup();
    let name = if arg_names.is_empty() {
        json!({"type": "string", "maxLength": 40})
    } else {
        json!({"type": "string", "enum": arg_names})
    };
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["reasoning", "steps"],
        "properties": {
            "reasoning": {"type": "string", "maxLength": b.reasoning_chars},
            "steps": {
                "type": "array",
                "maxItems": b.steps,
                "items": {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["tool", "args", "uses", "why"],
                    "properties": {
                        "tool": {"type": "string", "enum": tools},
                        "args": {
                            "type": "array",
                            "maxItems": b.args,
                            "items": {
                                "type": "object",
                                "additionalProperties": false,
                                "required": ["name", "value"],
                                "properties": {
                                    "name": name,
                                    "value": {"type": "string", "maxLength": b.value_chars}
                                }
                            }
                        },
                        "uses": {
                            "type": "array",
                            "maxItems": 4,
                            "items": {"type": "integer", "minimum": 1, "maximum": b.steps}
                        },
                        "why": {"type": "string", "maxLength": b.why_chars}
                    }
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worst_case_reply_fits_the_output_budget() {
        for out in [64, 256, 512, 1024, 2048, 4096, 16384] {
            let b = Bounds::for_output(out, 32);
            let budget = usize::try_from(out).unwrap() * Bounds::CHARS_PER_TOKEN;
            assert!(b.steps >= 1);
            if b.steps > 1 {
                assert!(b.worst_case_chars() <= budget, "{out}: {b:?}");
            }
        }
        assert_eq!(Bounds::for_output(1 << 20, 32).steps, 16);
        assert_eq!(Bounds::for_output(1 << 20, 3).steps, 3);
    }
}
