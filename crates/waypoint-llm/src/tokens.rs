//! Token counting with a real BPE tokenizer.
//!
//! Prompts are measured with OpenAI's `cl100k_base` encoding. Other model families
//! tokenize differently, but within a few percent for English and code, which is what a
//! context budget needs; budgets keep a margin for the difference.

use std::sync::OnceLock;

use tiktoken_rs::CoreBPE;

/// Counts tokens; cheap to clone, the encoding is built once per process.
#[derive(Clone, Copy, Default)]
pub struct TokenCounter;

fn encoding() -> Option<&'static CoreBPE> {
    static BPE: OnceLock<Option<CoreBPE>> = OnceLock::new();
    BPE.get_or_init(|| tiktoken_rs::cl100k_base().ok()).as_ref()
}

impl TokenCounter {
    /// Tokens in `text`. Falls back to one token per four bytes if the encoding could
    /// not be built (it is compiled in, so that would be a packaging bug).
    pub fn count(self, text: &str) -> u32 {
        let n = match encoding() {
            Some(bpe) => bpe.encode_ordinary(text).len(),
            None => text.len().div_ceil(4),
        };
        u32::try_from(n).unwrap_or(u32::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_like_cl100k() {
        // "hello world" is two tokens in cl100k_base.
        assert_eq!(TokenCounter.count("hello world"), 2);
        assert_eq!(TokenCounter.count(""), 0);
        assert!(TokenCounter.count("read_file: Read a file from the workspace.") > 5);
    }
}
