//! Finds the concrete values in a request: URLs, e-mail addresses, paths, ids, quoted
//! text, numbers, dates, times and schedules. Nothing the user gave is dropped: each
//! value lands in [`Extracted`], and its span is masked so that the words inside a URL
//! or a quotation never steer segmentation or routing.

use regex::{Regex, RegexBuilder};
use waypoint_protocol::{Extracted, ExtractedKind};

use crate::error::CoreError;
use crate::lexicon::Lexicon;

/// A value found in the text, with its byte span.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub kind: ExtractedKind,
    pub value: String,
    pub start: usize,
    pub end: usize,
}

/// Compiled patterns; built once per engine from the lexicon's calendar words.
#[derive(Debug, Clone)]
pub struct Extractor {
    url: Regex,
    bare_url: Regex,
    email: Regex,
    path: Regex,
    id: Regex,
    quoted: Regex,
    number: Regex,
    number_word: Regex,
    date: Regex,
    time: Regex,
    schedule: Regex,
    number_words: Vec<(String, u32)>,
}

/// Longest quoted text taken as one value; longer quotes are material, not a value.
const MAX_QUOTED_CHARS: usize = 2_000;

fn build(pattern: &str) -> Result<Regex, CoreError> {
    RegexBuilder::new(pattern)
        .case_insensitive(true)
        .size_limit(1 << 24)
        .build()
        .map_err(|e| CoreError::Lexicon(format!("extractor pattern: {e}")))
}

fn alt(words: &[String]) -> String {
    let mut sorted: Vec<String> = words.iter().map(|w| regex::escape(w)).collect();
    sorted.sort_by_key(|w| std::cmp::Reverse(w.len()));
    sorted.join("|")
}

impl Extractor {
    pub fn new(lex: &Lexicon) -> Result<Self, CoreError> {
        let cal = &lex.calendar;
        let weekdays = alt(&cal.weekdays);
        let months = alt(&cal.months);
        let parts = alt(&cal.day_parts);
        let freqs = alt(&cal.frequencies);
        let relative = alt(&cal.relative_days);
        let tlds = alt(&lex.url_tlds);
        let extensions: Vec<String> = lex
            .file_types
            .iter()
            .flat_map(|f| f.extensions.iter().cloned())
            .collect();
        // No extensions: the alternative matches nothing rather than every "word.".
        let extensions = if extensions.is_empty() {
            r"[^\s\S]".to_string()
        } else {
            alt(&extensions)
        };
        let time = r"(?:\d{1,2}:\d{2}(?:\s?[ap]\.?m\.?)?|\d{1,2}\s?[ap]\.?m\.?|noon|midnight)";
        let at_time = format!(r"(?:\s+(?:at|@)\s+(?:{time}|\d{{1,2}}\b))?");
        let number_words: Vec<(String, u32)> = cal
            .number_words
            .iter()
            .map(|(w, n)| (w.clone(), *n))
            .collect();
        let nwords = alt(&number_words
            .iter()
            .map(|(w, _)| w.clone())
            .collect::<Vec<_>>());
        Ok(Self {
            url: build(r#"\b(?:https?|ftp)://[^\s<>"'`]+"#)?,
            bare_url: build(&format!(
                r#"\b(?:www\.)?(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+(?:{tlds})\b(?:/[^\s<>"'`]*)?"#
            ))?,
            email: build(r"\b[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}\b")?,
            path: build(&format!(
                r"(?:~|\.{{1,2}})?/?(?:[\w.-]+/)+[\w.-]*[\w]|\b[\w-]+\.(?:{extensions})\b"
            ))?,
            id: build(
                r"(?-i:\b[A-Z][A-Z0-9]+-\d+\b)|#\d+\b|\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|\b[a-z]{2,6}_[A-Za-z0-9]{6,}\b|\b(?:[0-9]+[a-f]|[a-f]+[0-9])[0-9a-f]{5,38}\b",
            )?,
            quoted: build(
                // Unbounded here, bounded below: a counted repetition of a Unicode class
                // compiles to an automaton whose search state costs ~10 MiB per thread.
                r#""([^"\n]+)"|“([^”\n]+)”|‘([^’\n]+)’|`([^`\n]+)`|(?:^|[\s(:,])'([^'\n]+)'(?:$|[\s).,;:!?])"#,
            )?,
            // A phone number keeps the form it is written in ("+1234567890",
            // "555-123-4567"): read as digits it would lose its sign or its tail.
            number: build(r"(?:^|[^\w.:/#-])(\+\d{7,15}|\d{3}-\d{3}-\d{4}|\d+(?:[.,]\d+)*)\b")?,
            number_word: build(&format!(r"\b(?:{nwords})\b"))?,
            date: build(&format!(
                r"\b\d{{4}}-\d{{2}}-\d{{2}}\b|\b\d{{1,2}}/\d{{1,2}}/\d{{2,4}}\b|\b(?:{months})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?\b|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{months})\b(?:\s+\d{{4}})?|\b(?:{relative})\b|\b(?:{weekdays})s?\b"
            ))?,
            time: build(&format!(r"\b(?:at\s+)?({time})|\bat\s+(\d{{1,2}})\b"))?,
            schedule: build(&format!(
                r"\b(?:every|each)\s+(?:other\s+)?(?:\d+\s+)?(?:(?:{weekdays}|{parts})s?)(?:\s+and\s+(?:{weekdays})s?)*{at_time}|\b(?:{freqs})(?:\s+on\s+(?:{weekdays})s?)?{at_time}|\bon\s+(?:{weekdays})s\b{at_time}|\b(?:twice|once|three times)\s+a\s+(?:{parts})\b|\bon\s+weekdays\b"
            ))?,
            number_words,
        })
    }

    /// Finds every value in `text`. Later kinds never claim a span an earlier kind took,
    /// in this order: URLs, e-mails, paths, quoted text, ids; dates, times, schedules and
    /// numbers may overlap them only where they add meaning.
    pub fn find(&self, text: &str) -> Vec<Found> {
        let mut found: Vec<Found> = Vec::new();
        let taken = |found: &[Found], s: usize, e: usize| {
            found
                .iter()
                .any(|f| masks(f.kind) && s < f.end && f.start < e)
        };
        for m in self.url.find_iter(text) {
            let v = trim_trailing(m.as_str());
            push(&mut found, ExtractedKind::Urls, v, m.start());
        }
        for m in self.email.find_iter(text) {
            if !taken(&found, m.start(), m.end()) {
                push(&mut found, ExtractedKind::Emails, m.as_str(), m.start());
            }
        }
        for m in self.bare_url.find_iter(text) {
            let v = trim_trailing(m.as_str());
            let before = text[..m.start()].chars().next_back();
            if !taken(&found, m.start(), m.start() + v.len())
                && before != Some('@')
                && before != Some('/')
            {
                push(&mut found, ExtractedKind::Urls, v, m.start());
            }
        }
        for m in self.path.find_iter(text) {
            let v = trim_trailing(m.as_str());
            // A lone "a/b" between words is usually "and/or"; a path has a dot or 2+ slashes.
            // "01/15/2024" is a date.
            let numeric = v.bytes().all(|b| b.is_ascii_digit() || b == b'/');
            let real = !numeric
                && (v.contains('.')
                    || v.matches('/').count() >= 2
                    || v.starts_with('/')
                    || v.starts_with('~'));
            if real && !v.is_empty() && !taken(&found, m.start(), m.start() + v.len()) {
                push(&mut found, ExtractedKind::Paths, v, m.start());
            }
        }
        for c in self.quoted.captures_iter(text) {
            if let Some(g) = (1..=5).find_map(|i| c.get(i))
                && g.as_str().chars().count() <= MAX_QUOTED_CHARS
                && !taken(&found, g.start(), g.end())
            {
                push(&mut found, ExtractedKind::Quoted, g.as_str(), g.start());
            }
        }
        for m in self.id.find_iter(text) {
            if !taken(&found, m.start(), m.end()) {
                push(&mut found, ExtractedKind::Ids, m.as_str(), m.start());
            }
        }
        for m in self.schedule.find_iter(text) {
            if !taken(&found, m.start(), m.end()) {
                push(&mut found, ExtractedKind::Schedules, m.as_str(), m.start());
            }
        }
        for m in self.date.find_iter(text) {
            if !taken(&found, m.start(), m.end()) {
                push(&mut found, ExtractedKind::Dates, m.as_str(), m.start());
            }
        }
        for c in self.time.captures_iter(text) {
            if let Some(m) = c.get(1).or_else(|| c.get(2))
                && !taken(&found, m.start(), m.end())
            {
                push(&mut found, ExtractedKind::Times, m.as_str(), m.start());
            }
        }
        let in_date_or_id = |found: &[Found], s: usize, e: usize| {
            found.iter().any(|f| {
                matches!(
                    f.kind,
                    ExtractedKind::Dates | ExtractedKind::Ids | ExtractedKind::Times
                ) && s < f.end
                    && f.start < e
            })
        };
        for c in self.number.captures_iter(text) {
            if let Some(g) = c.get(1)
                && !taken(&found, g.start(), g.end())
                && !in_date_or_id(&found, g.start(), g.end())
            {
                push(&mut found, ExtractedKind::Numbers, g.as_str(), g.start());
            }
        }
        for m in self.number_word.find_iter(text) {
            let word = m.as_str().to_lowercase();
            if let Some((_, n)) = self.number_words.iter().find(|(w, _)| *w == word)
                && !taken(&found, m.start(), m.end())
            {
                found.push(Found {
                    kind: ExtractedKind::Numbers,
                    value: n.to_string(),
                    start: m.start(),
                    end: m.end(),
                });
            }
        }
        found.sort_by_key(|f| (f.start, f.end));
        found
    }
}

/// Kinds whose spans are masked from word matching.
pub fn masks(kind: ExtractedKind) -> bool {
    matches!(
        kind,
        ExtractedKind::Urls | ExtractedKind::Emails | ExtractedKind::Paths | ExtractedKind::Quoted
    )
}

fn push(found: &mut Vec<Found>, kind: ExtractedKind, value: &str, start: usize) {
    if value.is_empty() {
        return;
    }
    found.push(Found {
        kind,
        value: value.to_string(),
        start,
        end: start + value.len(),
    });
}

/// Sentence punctuation after a URL or path belongs to the sentence.
fn trim_trailing(s: &str) -> &str {
    let mut v = s.trim_end_matches(['.', ',', ';', ':', '!', '?', '\'', '"']);
    // Keep a closing parenthesis only when the value opened one.
    while v.ends_with(')') && v.matches('(').count() < v.matches(')').count() {
        v = &v[..v.len() - 1];
        v = v.trim_end_matches(['.', ',', ';', ':', '!', '?']);
    }
    v
}

/// Collects found values into [`Extracted`], first-seen order, no duplicates.
pub fn collect(found: &[Found], extracted: &mut Extracted) {
    for f in found {
        extracted.push(f.kind, f.value.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use waypoint_catalog::Catalog;

    fn ex() -> Extractor {
        Extractor::new(&Lexicon::for_catalog(&Catalog::default()).unwrap()).unwrap()
    }

    fn of(text: &str, kind: ExtractedKind) -> Vec<String> {
        ex().find(text)
            .into_iter()
            .filter(|f| f.kind == kind)
            .map(|f| f.value)
            .collect()
    }

    #[test]
    fn urls_with_and_without_scheme() {
        assert_eq!(
            of(
                "summarize https://example.com/report.pdf.",
                ExtractedKind::Urls
            ),
            ["https://example.com/report.pdf"]
        );
        assert_eq!(
            of("check example.com/pricing please", ExtractedKind::Urls),
            ["example.com/pricing"]
        );
        assert_eq!(
            of("see (https://a.io/x)", ExtractedKind::Urls),
            ["https://a.io/x"]
        );
        assert_eq!(
            of(
                "search https://jobs.example.com/search?q=rust every morning",
                ExtractedKind::Urls
            ),
            ["https://jobs.example.com/search?q=rust"]
        );
    }

    #[test]
    fn a_quote_is_a_value_up_to_its_bound() {
        let at_bound = "é".repeat(MAX_QUOTED_CHARS);
        let text = format!("say \"{at_bound}\" and ‘hi there’");
        assert_eq!(
            of(&text, ExtractedKind::Quoted),
            [at_bound.as_str(), "hi there"]
        );
        let over = format!("say \"{}\"", "x".repeat(MAX_QUOTED_CHARS + 1));
        assert!(of(&over, ExtractedKind::Quoted).is_empty());
    }

    #[test]
    fn a_phone_number_keeps_its_written_form() {
        assert_eq!(
            of("text +1234567890 and 555-123-4567", ExtractedKind::Numbers),
            ["+1234567890", "555-123-4567"]
        );
        // Dates and plain numbers are read as before.
        assert_eq!(
            of("from 2023-01-01, 42 items", ExtractedKind::Numbers),
            ["42"]
        );
    }

    #[test]
    fn emails_are_not_urls() {
        let found = ex().find("email it to ana@example.com");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].kind, ExtractedKind::Emails);
    }

    #[test]
    fn paths_ids_quotes_numbers() {
        assert_eq!(
            of("read file src/main.rs", ExtractedKind::Paths),
            ["src/main.rs"]
        );
        assert_eq!(of("open README.md", ExtractedKind::Paths), ["README.md"]);
        assert_eq!(
            of("close JIRA-123 and #42", ExtractedKind::Ids),
            ["JIRA-123", "#42"]
        );
        assert_eq!(
            of(r#"post "hello world" now"#, ExtractedKind::Quoted),
            ["hello world"]
        );
        assert_eq!(
            of("don't split it's", ExtractedKind::Quoted),
            Vec::<String>::new()
        );
        assert_eq!(
            of("the last 3 commits and 2.5 hours", ExtractedKind::Numbers),
            ["3", "2.5"]
        );
        assert_eq!(of("the last two commits", ExtractedKind::Numbers), ["2"]);
    }

    #[test]
    fn dates_times_schedules() {
        assert_eq!(
            of("every morning at 7 send it", ExtractedKind::Schedules),
            ["every morning at 7"]
        );
        assert_eq!(
            of("run it weekly on Mondays", ExtractedKind::Schedules),
            ["weekly on Mondays"]
        );
        assert_eq!(
            of("to every Friday", ExtractedKind::Schedules),
            ["every Friday"]
        );
        assert_eq!(
            of("due 2026-03-01 or March 3", ExtractedKind::Dates),
            ["2026-03-01", "March 3"]
        );
        assert_eq!(
            of("meet at 10:30am tomorrow", ExtractedKind::Times),
            ["10:30am"]
        );
        assert_eq!(
            of("meet at 10:30am tomorrow", ExtractedKind::Dates),
            ["tomorrow"]
        );
    }
}
