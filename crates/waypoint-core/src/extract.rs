//! Finds the concrete values in a request: URLs, e-mail addresses, paths, ids, quoted
//! text, numbers, dates, times and schedules. Nothing the user gave is dropped: each
//! value lands in [`Extracted`], and its span is masked so that the words inside a URL
//! or a quotation never steer segmentation or routing.

use regex::{Regex, RegexBuilder};

use waypoint_protocol::{Extracted, ExtractedKind};

use crate::error::CoreError;
use crate::lexicon::Lexicon;

/// Phone numbers, matched before plain numbers so they keep the form they are written in
/// ("+1234567890", "555-123-4567", "(555) 123-4567", "+44 20 7946 0958", "555-0134"):
/// read as digits they would lose their sign or their tail.
const PHONE: &str = r"\+\d{7,15}|\+\d{1,3}(?:[-. ]\d{2,4}){2,4}|\(\d{3}\) ?\d{3}-\d{4}|\d{3}-\d{3}-\d{4}|\d{3}\.\d{3}\.\d{4}|\d{3}-\d{4}";

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
    /// Files known by a name alone (the lexicon's file types' `names`).
    file_names: Vec<String>,
    id: Regex,
    quoted: Regex,
    listed: Regex,
    number: Regex,
    number_word: Regex,
    date: Regex,
    time: Regex,
    schedule: Regex,
    number_words: Vec<(String, u32)>,
}

/// Longest quoted text taken as one value; longer quotes are material, not a value.
const MAX_QUOTED_CHARS: usize = 2_000;

/// Longest item of a bracketed list taken as a value; longer ones are prose in brackets.
const MAX_LISTED_ITEM: usize = 40;

/// The comma-separated items of a bracketed list, trimmed, with their byte offsets.
fn list_items(inner: &str) -> Vec<(usize, &str)> {
    let mut items = Vec::new();
    let mut at = 0;
    for part in inner.split(',') {
        let lead = part.len() - part.trim_start().len();
        items.push((at + lead, part.trim()));
        at += part.len() + 1;
    }
    items
}

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

/// A pattern that matches nothing: an alternative of no words.
const NOTHING: &str = r"[^\s\S]";

/// [`alt`] of `words`, or a pattern that matches nothing when there are none.
fn alt_or_nothing(words: &[String]) -> String {
    if words.is_empty() {
        NOTHING.to_string()
    } else {
        alt(words)
    }
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
        let extensions = alt_or_nothing(&extensions);
        let file_names: Vec<String> = (lex.file_types.iter())
            .flat_map(|f| f.names.iter().cloned())
            .collect();
        let names = alt_or_nothing(&file_names);
        // "7 PM." ends a sentence: the period is the time's only when written "p.m.".
        let time = r"(?:\d{1,2}:\d{2}(?:\s?(?:[ap]m\b|[ap]\.m\.))?|\d{1,2}\s?(?:[ap]m\b|[ap]\.m\.)|noon|midnight)";
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
        // A unit written onto a number ("70kg", "1.8m") ends the number.
        let attached = alt_or_nothing(&lex.attached_units);
        // A number after "at" followed by a unit ("at 15%", "at 7 percent") is a measure,
        // not an hour.
        let mut unit_names: Vec<String> = lex.units.keys().cloned().collect();
        unit_names.sort();
        let measured = if unit_names.is_empty() {
            NOTHING.to_string()
        } else {
            let bounded: Vec<String> = unit_names
                .iter()
                .map(|n| {
                    let word = n.ends_with(char::is_alphanumeric);
                    format!("{}{}", regex::escape(n), if word { r"\b" } else { "" })
                })
                .collect();
            bounded.join("|")
        };
        Ok(Self {
            url: build(r#"\b(?:https?|ftp)://[^\s<>"'`]+"#)?,
            bare_url: build(&format!(
                r#"\b(?:www\.)?(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+(?:{tlds})\b(?:/[^\s<>"'`]*)?"#
            ))?,
            email: build(r"\b[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}\b")?,
            file_names,
            path: build(&format!(
                // Segments with slashes between; one absolute segment ("/tmp"); a
                // file name with a known extension; a directory with a trailing slash;
                // a file known by its name alone, as written ("README").
                r"(?:~|\.{{1,2}})?/?(?:[\w.-]+/)+[\w.-]*[\w]|(?:~|\.{{1,2}})?/[\w.-]*\w|\b[\w-]+\.(?:{extensions})\b|\b[\w.-]{{2,}}/|(?-i:\b(?:{names})\b)"
            ))?,
            id: build(
                r"(?-i:\b[A-Z][A-Z0-9]+-\d+\b|\b\d+-[A-Z]{1,3}\b)|#\d+\b|\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|\b[a-z]{2,6}_[A-Za-z0-9]{6,}\b|\b(?:[0-9]+[a-f]|[a-f]+[0-9])[0-9a-f]{5,38}\b",
            )?,
            quoted: build(
                // Unbounded here, bounded below: a counted repetition of a Unicode class
                // compiles to an automaton whose search state costs ~10 MiB per thread.
                // Inside single quotes an apostrophe before a letter is a contraction's
                // ("'He don't like it'"), not the closing quote.
                r#""([^"\n]+)"|“([^”\n]+)”|‘([^’\n]+)’|`([^`\n]+)`|(?:^|[\s(\[:,])'((?:[^'\n]|'\pL)+)'(?:$|[\s)\].,;:!?])"#,
            )?,
            listed: build(r#"\[([^\[\]"'“”‘’`\n]+)\]"#)?,
            // A phone number ([`PHONE`]) keeps the form it is written in.
            number: build(&format!(
                r"(?:^|[^\w.:/#-])({PHONE}|\d+(?:[.,]\d+)*)(?:{attached})?\b"
            ))?,
            number_word: build(&format!(r"\b(?:{nwords})\b"))?,
            date: build(&format!(
                r"\b\d{{4}}-\d{{2}}-\d{{2}}\b|\b\d{{1,2}}/\d{{1,2}}/\d{{2,4}}\b|\b(?:{months})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?\b|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{months})\b(?:,?\s+\d{{4}})?|\b(?:{relative})\b|\b(?:{weekdays})s?\b"
            ))?,
            // The unit after a bare "at N" is captured to be refused.
            time: build(&format!(
                r"\b(?:at\s+)?({time})|\bat\s+(\d{{1,2}})\b(\s*(?:{measured}))?"
            ))?,
            schedule: build(&format!(
                r"\b(?:every|each)\s+(?:other\s+)?(?:\d+\s+)?(?:(?:{weekdays}|{parts})s?)(?:\s+and\s+(?:{weekdays})s?)*{at_time}|\b(?:{freqs})(?:\s+on\s+(?:{weekdays})s?)?{at_time}|\bon\s+(?:{weekdays})s\b{at_time}|\b(?:twice|once|three times)\s+a\s+(?:{parts})\b|\bon\s+weekdays\b"
            ))?,
            number_words,
        })
    }

    /// Whether the text is one date and nothing else: "from '2024-01-01'" quotes a date,
    /// which the date pass then reads as one.
    fn is_whole_date(&self, text: &str) -> bool {
        self.date
            .find(text)
            .is_some_and(|m| m.start() == 0 && m.end() == text.len())
    }

    /// A bracketed list of words is a list of values as much as a quoted one is:
    /// "grades [A, B, C]". A list of numbers stays numbers for the number pass.
    fn claim_listed(&self, c: &mut Claims<'_>) {
        for l in self.listed.captures_iter(c.text) {
            let Some(inner) = l.get(1) else { continue };
            let items = list_items(inner.as_str());
            if items.len() < 2
                || items
                    .iter()
                    .any(|(_, item)| item.is_empty() || item.len() > MAX_LISTED_ITEM)
                || items.iter().all(|(_, item)| item.parse::<f64>().is_ok())
            {
                continue;
            }
            for (at, item) in items {
                let start = inner.start() + at;
                c.claim_free(ExtractedKind::Quoted, start, start + item.len());
            }
        }
    }

    /// Whether `v`, matched by the path pattern at `start` of `text`, is a path. A lone
    /// "a/b" between words is usually "and/or": a path has a dot or 2+ slashes, starts
    /// at the root or home, ends in a slash or is a file known by its name. "01/15/2024"
    /// is a date, and "/tmp" after a word is part of it ("km/h" is matched whole, not here).
    fn is_path(&self, v: &str, text: &str, start: usize) -> bool {
        let numeric = v.bytes().all(|b| b.is_ascii_digit() || b == b'/');
        let glued = v.starts_with('/')
            && text[..start]
                .chars()
                .next_back()
                .is_some_and(char::is_alphanumeric);
        let named = || {
            let file = v.rsplit('/').next().unwrap_or(v);
            self.file_names.iter().any(|n| n == file)
        };
        !numeric
            && !glued
            && !abbreviation(v, text.get(start + v.len()..))
            && (v.contains('.')
                || v.matches('/').count() >= 2
                || v.starts_with('/')
                || v.starts_with('~')
                || v.ends_with('/')
                || named())
    }

    /// Finds every value in `text`. Later kinds never claim a span an earlier kind took,
    /// in this order: URLs, e-mails, paths, quoted text, ids; dates, times, schedules and
    /// numbers may overlap them only where they add meaning.
    pub fn find(&self, text: &str) -> Vec<Found> {
        // Every pattern but `quoted` (whose quotation marks may be typographic) runs over
        // the stand-in; values are cut from the text itself.
        let folded = ascii_stand_in(text);
        let stand_in: &str = &folded;
        let mut c = Claims {
            text,
            found: Vec::new(),
        };
        for m in self.url.find_iter(stand_in) {
            c.claim(
                ExtractedKind::Urls,
                m.start(),
                m.start() + trim_trailing(m.as_str()).len(),
            );
        }
        for m in self.email.find_iter(stand_in) {
            c.claim_free(ExtractedKind::Emails, m.start(), m.end());
        }
        for m in self.bare_url.find_iter(stand_in) {
            let before = stand_in[..m.start()].chars().next_back();
            if before != Some('@') && before != Some('/') {
                let end = m.start() + trim_trailing(m.as_str()).len();
                c.claim_free(ExtractedKind::Urls, m.start(), end);
            }
        }
        for m in self.path.find_iter(stand_in) {
            let v = trim_trailing(m.as_str());
            if self.is_path(v, stand_in, m.start()) {
                c.claim_free(ExtractedKind::Paths, m.start(), m.start() + v.len());
            }
        }
        for q in self.quoted.captures_iter(text) {
            if let Some(g) = (1..=5).find_map(|i| q.get(i))
                && g.as_str().chars().count() <= MAX_QUOTED_CHARS
                && !stand_in
                    .get(g.start()..g.end())
                    .is_some_and(|q| self.is_whole_date(q))
            {
                c.claim_free(ExtractedKind::Quoted, g.start(), g.end());
            }
        }
        self.claim_listed(&mut c);
        for m in self.id.find_iter(stand_in) {
            c.claim_free(ExtractedKind::Ids, m.start(), m.end());
        }
        for m in self.schedule.find_iter(stand_in) {
            c.claim_free(ExtractedKind::Schedules, m.start(), m.end());
        }
        for m in self.date.find_iter(stand_in) {
            c.claim_free(ExtractedKind::Dates, m.start(), m.end());
        }
        for t in self.time.captures_iter(stand_in) {
            if t.get(3).is_some() {
                continue;
            }
            if let Some(m) = t.get(1).or_else(|| t.get(2)) {
                c.claim_free(ExtractedKind::Times, m.start(), m.end());
            }
        }
        for n in self.number.captures_iter(stand_in) {
            if let Some(g) = n.get(1)
                && !c.overlaps(g.start(), g.end(), |k| {
                    matches!(
                        k,
                        ExtractedKind::Dates | ExtractedKind::Ids | ExtractedKind::Times
                    )
                })
            {
                c.claim_free(ExtractedKind::Numbers, g.start(), g.end());
            }
        }
        for m in self.number_word.find_iter(stand_in) {
            let word = m.as_str().to_lowercase();
            if let Some((_, n)) = self.number_words.iter().find(|(w, _)| *w == word)
                && !c.overlaps(m.start(), m.end(), masks)
            {
                c.found.push(Found {
                    kind: ExtractedKind::Numbers,
                    value: n.to_string(),
                    start: m.start(),
                    end: m.end(),
                });
            }
        }
        let mut found = c.found;
        found.sort_by_key(|f| (f.start, f.end));
        found
    }
}

/// The values found so far in a text.
struct Claims<'t> {
    text: &'t str,
    found: Vec<Found>,
}

impl Claims<'_> {
    /// Whether a value of a kind `of` accepts overlaps `start..end`.
    fn overlaps(&self, start: usize, end: usize, of: impl Fn(ExtractedKind) -> bool) -> bool {
        self.found
            .iter()
            .any(|f| of(f.kind) && start < f.end && f.start < end)
    }

    /// Takes `start..end` as a value of `kind` unless a masking value has it.
    fn claim_free(&mut self, kind: ExtractedKind, start: usize, end: usize) {
        if !self.overlaps(start, end, masks) {
            self.claim(kind, start, end);
        }
    }

    /// Takes `start..end` as a value of `kind`; a span that cuts a character (found over
    /// the stand-ins) is no value.
    fn claim(&mut self, kind: ExtractedKind, start: usize, end: usize) {
        if let Some(value) = self.text.get(start..end) {
            push(&mut self.found, kind, value, start);
        }
    }
}

/// The text with each non-ASCII character replaced, byte for byte, by an ASCII stand-in
/// of its class: a decimal digit by `0`, another word character by `q`, white space by a
/// space, anything else by `^`. The patterns' `\b` is Unicode-aware, and a search that
/// meets a non-ASCII character near one leaves the regex crate's DFA for an engine tens
/// of times slower; over the stand-ins the boundaries fall where they fell and the DFA
/// runs. Byte offsets are the original's.
fn ascii_stand_in(text: &str) -> std::borrow::Cow<'_, str> {
    if text.is_ascii() {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
            continue;
        }
        let word = regex_syntax::try_is_word_character(c).unwrap_or(c.is_alphanumeric());
        let stand_in = if word && c.is_numeric() && !c.is_alphabetic() {
            '0'
        } else if word {
            'q'
        } else if c.is_whitespace() {
            ' '
        } else {
            '^'
        };
        out.extend(std::iter::repeat_n(stand_in, c.len_utf8()));
    }
    std::borrow::Cow::Owned(out)
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

/// Whether a dotted run is an abbreviation written with its dots ("Washington D.C.",
/// "U.S.", "e.g."): single letters between dots and a dot after the last. "a.c" with
/// no dot after it stays a file name.
fn abbreviation(v: &str, rest: Option<&str>) -> bool {
    rest.is_some_and(|r| r.starts_with('.'))
        && v.split('.').all(|part| {
            let mut chars = part.chars();
            chars.next().is_some_and(char::is_alphabetic) && chars.next().is_none()
        })
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
    fn values_next_to_non_ascii_text_are_found_whole() {
        assert_eq!(
            of("lis résumé.pdf, merci", ExtractedKind::Paths),
            ["résumé.pdf"]
        );
        assert_eq!(
            of("écris à ana@example.com — vite", ExtractedKind::Emails),
            ["ana@example.com"]
        );
        assert_eq!(
            of(
                "voir https://exemple.fr/été?x=ü « ici »",
                ExtractedKind::Urls
            ),
            ["https://exemple.fr/été?x=ü"]
        );
        assert_eq!(
            of("le 2026-01-05 à 10:00 ✓", ExtractedKind::Dates),
            ["2026-01-05"]
        );
        assert_eq!(of("“quoted” text", ExtractedKind::Quoted), ["quoted"]);
        // Items of a list written in brackets are quoted one by one.
        assert_eq!(
            of("with ['John', 'Jane', 'Jim']", ExtractedKind::Quoted),
            ["John", "Jane", "Jim"]
        );
        assert_eq!(
            of("grades [A, B+, C] and hours [3, 2]", ExtractedKind::Quoted),
            ["A", "B+", "C"]
        );
        assert_eq!(of("hours [3, 2]", ExtractedKind::Numbers), ["3", "2"]);
        assert_eq!(
            of(
                "check 'He don't like it' and 'Bob's car'",
                ExtractedKind::Quoted
            ),
            ["He don't like it", "Bob's car"]
        );
        assert_eq!(
            of(
                "participants 'Alice', 'Bob' and 'Charlie'",
                ExtractedKind::Quoted
            ),
            ["Alice", "Bob", "Charlie"]
        );
        // A word that runs on in letters outside ASCII is not a number or a weekday.
        assert!(of("mondayé", ExtractedKind::Dates).is_empty());
        assert!(of("2é", ExtractedKind::Numbers).is_empty());
        // Digits outside ASCII stay digits; a span never cuts a character.
        for text in [
            "٣٣:٣٣٣ ٣",
            "\u{FFFD}1\u{FFFD}:2\u{FFFD}",
            "1.\u{10FFFF}a@b.cd",
        ] {
            for f in ex().find(text) {
                assert_eq!(&text[f.start..f.end], f.value, "{text:?}");
            }
        }
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
    fn a_quoted_date_is_a_date() {
        assert_eq!(
            of("from '2024-01-01' to '2024-06-30'", ExtractedKind::Dates),
            ["2024-01-01", "2024-06-30"]
        );
        assert!(of("from '2024-01-01' to '2024-06-30'", ExtractedKind::Quoted).is_empty());
        // A quotation with more than a date in it stays one quotation.
        assert_eq!(
            of("titled 'Report 2024-01-01'", ExtractedKind::Quoted),
            ["Report 2024-01-01"]
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
    fn a_unit_written_onto_a_number_ends_it() {
        assert_eq!(
            of(
                "a weight of 70kg and a height of 1.8m",
                ExtractedKind::Numbers
            ),
            ["70", "1.8"]
        );
        // A lone "s" is a plural, not seconds; other letters keep the word whole.
        assert_eq!(
            of("the 1990s, the 3rd of 4x4", ExtractedKind::Numbers),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_phone_number_keeps_its_written_form() {
        assert_eq!(
            of("text +1234567890 and 555-123-4567", ExtractedKind::Numbers),
            ["+1234567890", "555-123-4567"]
        );
        assert_eq!(
            of(
                "call (555) 123-4567, +44 20 7946 0958, 555.123.4567 or 555-0134",
                ExtractedKind::Numbers
            ),
            [
                "(555) 123-4567",
                "+44 20 7946 0958",
                "555.123.4567",
                "555-0134"
            ]
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
        assert_eq!(of("compile a.c now", ExtractedKind::Paths), ["a.c"]);
        // One absolute segment, or a directory with its trailing slash, is a path too.
        assert_eq!(of("list the files in /tmp", ExtractedKind::Paths), ["/tmp"]);
        assert_eq!(of("list src/ please", ExtractedKind::Paths), ["src/"]);
        // A file known by its name alone is one as written, not as a common noun.
        assert_eq!(
            of("translate the README into Japanese", ExtractedKind::Paths),
            ["README"]
        );
        assert_eq!(
            of("fix docs/Makefile", ExtractedKind::Paths),
            ["docs/Makefile"]
        );
        assert!(of("what license does the readme give", ExtractedKind::Paths).is_empty());
        // A slash between words or numbers is not one.
        for text in [
            "either and/or both",
            "60 km/h",
            "coffee w/ milk",
            "1/2 cup",
            "TCP/IP",
        ] {
            assert!(of(text, ExtractedKind::Paths).is_empty(), "{text}");
        }
        // Abbreviations written with their dots are no file names.
        assert!(of("fly to Washington D.C. today", ExtractedKind::Paths).is_empty());
        assert_eq!(
            of(
                "route 'Boston' and 'Washington D.C.' by car",
                ExtractedKind::Quoted
            ),
            ["Boston", "Washington D.C."]
        );
        assert_eq!(
            of("close JIRA-123 and #42", ExtractedKind::Ids),
            ["JIRA-123", "#42"]
        );
        // A number joined to capitals is a code ("form 10-K"), not a count; joined to a
        // word it still counts ("a 4-bedroom apartment").
        assert_eq!(of("file the form 10-K", ExtractedKind::Ids), ["10-K"]);
        assert!(of("file the form 10-K", ExtractedKind::Numbers).is_empty());
        assert_eq!(of("a 4-bedroom flat", ExtractedKind::Numbers), ["4"]);
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
        // A comma may stand before the year of a day written first.
        assert_eq!(
            of("on the 1st of January, 2023 at noon", ExtractedKind::Dates),
            ["1st of January, 2023"]
        );
        assert_eq!(
            of("meet at 10:30am tomorrow", ExtractedKind::Times),
            ["10:30am"]
        );
        assert_eq!(
            of("meet at 10:30am tomorrow", ExtractedKind::Dates),
            ["tomorrow"]
        );
        // A bare hour is read after "at", a rate is not.
        assert_eq!(of("call me at 5", ExtractedKind::Times), ["5"]);
        assert_eq!(
            of(
                "a table at 7 PM. Then call at 6 p.m. sharp",
                ExtractedKind::Times
            ),
            ["7 PM", "6 p.m."]
        );
        assert!(of("tip at 15% on $80", ExtractedKind::Times).is_empty());
        assert!(of("tax at 7 percent", ExtractedKind::Times).is_empty());
        assert_eq!(
            of("tip at 15% on $80", ExtractedKind::Numbers),
            ["15", "80"]
        );
    }
}
