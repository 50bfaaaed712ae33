//! The chat-completions wire format, read leniently.
//!
//! Servers differ: llama.cpp adds timing fields, OpenRouter adds provider names, some
//! omit `usage`, some send `content` as a list of parts, reasoning models add
//! `reasoning_content`. Every field here is optional and unknown ones are ignored, so a
//! new server's extra or missing field never turns a good answer into an error.

use serde::Deserialize;

#[derive(Debug, Default, Deserialize)]
pub struct Completion {
    #[serde(default)]
    pub choices: Vec<Choice>,
    #[serde(default)]
    pub usage: Option<WireUsage>,
}

#[derive(Debug, Default, Deserialize)]
pub struct Choice {
    #[serde(default)]
    pub message: Option<WireMessage>,
    /// A string, not an enum: `stop`, `length`, `tool_calls`, `content_filter`, or
    /// whatever a server invents next.
    #[serde(default)]
    pub finish_reason: Option<String>,
    /// Legacy completions put the text here.
    #[serde(default)]
    pub text: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub struct WireMessage {
    #[serde(default)]
    pub content: Option<Content>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum Content {
    Text(String),
    Parts(Vec<Part>),
    Other(serde::de::IgnoredAny),
}

#[derive(Debug, Deserialize)]
pub struct Part {
    #[serde(default)]
    pub text: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub struct WireUsage {
    #[serde(default)]
    pub prompt_tokens: Option<u64>,
    #[serde(default)]
    pub completion_tokens: Option<u64>,
}

impl Completion {
    /// The first choice's text and finish reason.
    pub fn first(&self) -> Option<(String, Option<String>)> {
        let choice = self.choices.first()?;
        let text = match choice.message.as_ref().and_then(|m| m.content.as_ref()) {
            Some(Content::Text(t)) => t.clone(),
            Some(Content::Parts(parts)) => parts.iter().filter_map(|p| p.text.as_deref()).collect(),
            Some(Content::Other(_)) | None => choice.text.clone().unwrap_or_default(),
        };
        Some((text, choice.finish_reason.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerates_missing_and_unknown_fields() {
        let c: Completion = serde_json::from_str(
            r#"{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":"{}","reasoning_content":"hm"},"finish_reason":"eos_token_weird"}],"timings":{"a":1}}"#,
        )
        .unwrap();
        assert_eq!(
            c.first(),
            Some(("{}".into(), Some("eos_token_weird".into())))
        );
        assert!(c.usage.is_none());
        let parts: Completion = serde_json::from_str(
            r#"{"choices":[{"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}]}"#,
        )
        .unwrap();
        assert_eq!(parts.first().unwrap().0, "ab");
        let empty: Completion = serde_json::from_str("{}").unwrap();
        assert!(empty.first().is_none());
        let null_content: Completion =
            serde_json::from_str(r#"{"choices":[{"message":{"content":null}}]}"#).unwrap();
        assert_eq!(null_content.first().unwrap().0, "");
    }
}
