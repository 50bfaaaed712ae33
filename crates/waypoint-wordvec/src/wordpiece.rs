//! BERT's uncased `WordPiece` split: clean, lower-case, strip accents, cut at whitespace
//! and punctuation, then take each word as the longest pieces the vocabulary knows.

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// Longer words are one unknown piece, as the model's tokenizer has them.
const MAX_WORD_CHARS: usize = 100;

/// The words of `text` as BERT's basic tokenizer gives them: lower-cased, accents
/// stripped, every punctuation mark and CJK ideograph a word of its own.
pub fn basic_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let flush = |cur: &mut String, words: &mut Vec<String>| {
        if !cur.is_empty() {
            words.push(std::mem::take(cur));
        }
    };
    for ch in text.nfd() {
        if ch == '\0'
            || ch == '\u{fffd}'
            || is_combining_mark(ch)
            || ch.is_control() && !ch.is_whitespace()
        {
            continue;
        }
        if ch.is_whitespace() {
            flush(&mut cur, &mut words);
        } else if is_punctuation(ch) || is_cjk(ch) {
            flush(&mut cur, &mut words);
            words.push(ch.to_string());
        } else {
            cur.extend(ch.to_lowercase());
        }
    }
    flush(&mut cur, &mut words);
    words
}

/// ASCII's non-alphanumeric printable characters, as BERT counts them, and every other
/// character that is neither a letter, a digit, a mark nor a space.
fn is_punctuation(ch: char) -> bool {
    if ch.is_ascii() {
        return ch.is_ascii_punctuation();
    }
    !ch.is_alphanumeric() && !ch.is_whitespace()
}

/// The CJK Unified Ideographs blocks, which BERT splits into single characters.
fn is_cjk(ch: char) -> bool {
    matches!(ch as u32,
        0x4E00..=0x9FFF
        | 0x3400..=0x4DBF
        | 0x20000..=0x2A6DF
        | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F
        | 0x2B820..=0x2CEAF
        | 0xF900..=0xFAFF
        | 0x2F800..=0x2FA1F)
}

/// The pieces of one word: the longest prefix the vocabulary knows, then the longest
/// known `##`-continuation of the rest, and so on. `None` where some rest has no known
/// piece (the model reads the whole word as unknown).
pub fn pieces(word: &str, lookup: impl Fn(&str) -> Option<u32>) -> Option<Vec<u32>> {
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    if chars.is_empty() || chars.len() > MAX_WORD_CHARS {
        return None;
    }
    let mut out = Vec::new();
    let mut start = 0;
    let mut key = String::new();
    while start < chars.len() {
        let from = chars[start].0;
        let mut end = chars.len();
        let found = loop {
            if end == start {
                break None;
            }
            let to = chars.get(end).map_or(word.len(), |c| c.0);
            key.clear();
            if start > 0 {
                key.push_str("##");
            }
            key.push_str(&word[from..to]);
            if let Some(id) = lookup(&key) {
                break Some(id);
            }
            end -= 1;
        };
        out.push(found?);
        start = end;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_words_lower_case_strip_accents_and_cut_punctuation() {
        assert_eq!(
            basic_words("Café, Zürich's  BEST!\tok"),
            ["cafe", ",", "zurich", "'", "s", "best", "!", "ok"]
        );
        assert_eq!(basic_words("東京 tower"), ["東", "京", "tower"]);
        assert!(basic_words(" \n ").is_empty());
    }

    #[test]
    fn pieces_take_the_longest_known_prefix_then_continuations() {
        let vocab = ["un", "##aff", "##able", "una", "##ff", "##a"];
        let lookup = |s: &str| {
            vocab
                .iter()
                .position(|v| *v == s)
                .map(|i| u32::try_from(i).unwrap())
        };
        // Greedy, as the model's tokenizer: "una" beats "un" even where "un" would split better.
        assert_eq!(pieces("unaffable", lookup), Some(vec![3, 4, 2]));
        assert_eq!(pieces("xyz", lookup), None);
        assert_eq!(pieces("", lookup), None);
    }
}
