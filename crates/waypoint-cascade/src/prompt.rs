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
    /// Characters per token at worst: JSON punctuation, whitespace the grammar allows
    /// between tokens, and non-ASCII text all tokenize densely.
    const CHARS_PER_TOKEN: usize = 2;
    /// Keys, quotes, brackets and a tool id around one step.
    const STEP_OVERHEAD_CHARS: usize = 110;
    /// Keys and quotes around one arg, plus its name.
    const ARG_OVERHEAD_CHARS: usize = 45;
    /// Steps a plan should be able to hold before field sizes are cut further.
    const WANTED_STEPS: usize = 4;

    /// From roomy to terse; the first that allows enough steps is used.
    const LADDER: [Self; 4] = [
        Self::preset(8, 300, 160, 300),
        Self::preset(6, 160, 100, 200),
        Self::preset(4, 80, 60, 120),
        Self::preset(2, 40, 40, 40),
    ];

    const fn preset(
        args: usize,
        value_chars: usize,
        why_chars: usize,
        reasoning_chars: usize,
    ) -> Self {
        Self {
            steps: 0,
            args,
            value_chars,
            why_chars,
            reasoning_chars,
        }
    }

    fn per_step(&self) -> usize {
        Self::STEP_OVERHEAD_CHARS
            + self.why_chars
            + self.args * (Self::ARG_OVERHEAD_CHARS + self.value_chars)
    }

    fn fixed(&self) -> usize {
        self.reasoning_chars + 60
    }

    /// The roomiest bounds whose worst case fits `max_output_tokens` with enough steps
    /// (at most `max_steps`); the tersest when none does.
    pub fn for_output(max_output_tokens: u32, max_steps: usize) -> Self {
        let budget =
            usize::try_from(max_output_tokens).unwrap_or(usize::MAX / 4) * Self::CHARS_PER_TOKEN;
        let cap = max_steps.clamp(1, 16);
        let wanted = Self::WANTED_STEPS.min(cap);
        let fit = |b: &Self| (budget.saturating_sub(b.fixed()) / b.per_step()).min(cap);
        let chosen = Self::LADDER
            .iter()
            .find(|b| fit(b) >= wanted)
            .unwrap_or(&Self::LADDER[Self::LADDER.len() - 1]);
        Self {
            steps: fit(chosen).max(1),
            ..*chosen
        }
    }

    /// Worst-case reply length in characters.
    pub fn worst_case_chars(&self) -> usize {
        self.fixed() + self.steps * self.per_step()
    }
}

/// The planner's instructions: wording, not mechanism, so it lives in a data file.
const SYSTEM: &str = include_str!("../data/system_prompt.txt");

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
    vec![Message::system(SYSTEM.trim_end()), Message::user(user)]
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
        for out in [256, 384, 512, 1024, 2048, 4096, 16384] {
            let b = Bounds::for_output(out, 32);
            let budget = usize::try_from(out).unwrap() * Bounds::CHARS_PER_TOKEN;
            assert!(b.steps >= 1);
            assert!(b.worst_case_chars() <= budget, "{out}: {b:?}");
        }
        // Roomy budgets keep roomy fields; small ones trade field size for steps.
        assert_eq!(Bounds::for_output(1 << 20, 32).steps, 16);
        assert_eq!(Bounds::for_output(1 << 20, 32).value_chars, 300);
        assert_eq!(Bounds::for_output(1 << 20, 3).steps, 3);
        assert!(Bounds::for_output(2048, 32).steps >= 4);
        assert!(Bounds::for_output(384, 32).steps >= 2);
    }
}
