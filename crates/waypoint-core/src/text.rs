//! Normalised tokens: the common ground on which requests, catalog text and vocabulary
//! phrases are compared.
//!
//! A token keeps its span in the original text, its lower-case form, and a `key` — the
//! stem of its canonical synonym — so that "pictures", "illustration" and "image" meet.

use std::sync::OnceLock;

use rust_stemmers::{Algorithm, Stemmer};

use crate::hash::{HashMap, HashSet};

/// One word of a text (or one extracted value standing in for several).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// Lower-case surface form, contractions expanded.
    pub form: String,
    /// Stem of the canonical synonym; what matching compares.
    pub key: String,
    /// Stem of the form itself (empty for a value), kept so that asking whether a
    /// token is a verb does not stem it again.
    pub stem: String,
    /// Byte range in the original text.
    pub start: usize,
    pub end: usize,
    /// Looks like a code identifier (`CommandRouter`, `token_manager`, `unwrap()`).
    pub identifier: bool,
    /// Capitalised mid-sentence: a name (`Lisbon`, `Agent`), maybe a symbol.
    pub proper: bool,
    /// Set when the token is an extracted value (URL, e-mail, path…), not a word.
    pub value: bool,
}

impl Token {
    /// A gerund or present participle ("failing", "crashing"): the stemmer took an
    /// "-ing" off, which it does not from "thing" or "string".
    pub fn is_ing_form(&self) -> bool {
        !self.value && self.form.ends_with("ing") && self.stem.len() + 3 <= self.form.len()
    }
}

fn stemmer() -> &'static Stemmer {
    static STEMMER: OnceLock<Stemmer> = OnceLock::new();
    STEMMER.get_or_init(|| Stemmer::create(Algorithm::English))
}

/// The stem of a lower-case word. Porter's stemmer leaves the verb of an "-ify" family
/// one letter longer than its noun ("classify" → `classifi`, "classification" →
/// `classif`); the verb loses that letter, so a request that says "classify" meets a
/// description that says "classification".
pub fn stem(word: &str) -> String {
    let mut s = stemmer().stem(word).into_owned();
    if s.len() > 4 && s.ends_with("ifi") {
        s.pop();
    }
    s
}

/// Maps word stems to the stem of their canonical synonym.
#[derive(Debug, Clone, Default)]
pub struct Synonyms {
    map: HashMap<String, String>,
    /// Forms whose stem and key were worked out when the vocabulary was built: the words
    /// most requests are made of, so planning stems only the rest.
    known: HashMap<String, (String, String)>,
    /// Stems that are their group's word only where a verb stands ("*cat* README.md",
    /// "please *store* it") or as a participle ("my *stored* keys"): after a determiner
    /// or a content word they are a noun with its own meaning ("feed *the cat*", "the
    /// grocery *store*").
    verb_only: HashSet<String>,
    /// Words after which a verb may stand: function words that are not determiners.
    before_verbs: HashSet<String>,
    /// Stems of verbs that, before a verb in -ing, only say the other goes on ("the build
    /// *keeps* failing"): there they are no synonym of anything.
    aspect_verbs: HashSet<String>,
    /// By particle, then the stem of the verb before it: the stem of the verb the two
    /// stand for together ("*pull up* the file": read); apart they mean something else.
    phrasal: HashMap<String, HashMap<String, String>>,
}

impl Synonyms {
    pub fn new(groups: &[(String, Vec<String>)]) -> Self {
        let mut synonyms = Self::default();
        synonyms.insert(groups);
        synonyms
    }

    /// Maps every variant's stem to its group's, and gives back the variants' stems.
    fn insert(&mut self, groups: &[(String, Vec<String>)]) -> Vec<String> {
        let mut variants = Vec::new();
        for (canonical, list) in groups {
            let target = stem(canonical);
            for v in list {
                let s = stem(&v.to_lowercase());
                self.map.insert(s.clone(), target.clone());
                variants.push(s);
            }
        }
        variants
    }

    /// Adds groups whose words stand for their group's word only where a verb stands:
    /// first in a clause or after one of `before_verbs` (lower-case forms).
    #[must_use]
    pub fn with_verb_only(
        mut self,
        groups: &[(String, Vec<String>)],
        before_verbs: impl IntoIterator<Item = String>,
    ) -> Self {
        let variants = self.insert(groups);
        self.verb_only.extend(variants);
        self.before_verbs.extend(before_verbs);
        self
    }

    /// Adds verbs that only say another goes on where a verb in -ing follows them.
    #[must_use]
    pub fn with_aspect_verbs(mut self, verbs: &[String]) -> Self {
        self.aspect_verbs
            .extend(verbs.iter().map(|v| stem(&v.to_lowercase())));
        self
    }

    /// Adds verbs that stand for another only with the particle after them (`groups`:
    /// the verb meant, then phrases of a verb and its particle).
    #[must_use]
    pub fn with_phrasal_verbs(mut self, groups: &[(String, Vec<String>)]) -> Self {
        for (canonical, phrases) in groups {
            let target = stem(&canonical.to_lowercase());
            for phrase in phrases {
                let lower = phrase.to_lowercase();
                if let Some((verb, particle)) = lower.split_once(' ') {
                    (self.phrasal.entry(particle.trim().to_string()))
                        .or_default()
                        .insert(stem(verb), target.clone());
                }
            }
        }
        self
    }

    /// Gives a verb before its particle the key of the verb the two stand for.
    fn read_phrasal(&self, tokens: &mut [Token]) {
        if self.phrasal.is_empty() {
            return;
        }
        rekey_by_next(tokens, |before, this| {
            (self.phrasal.get(&this.form))
                .and_then(|verbs| verbs.get(&before.stem))
                .cloned()
        });
    }

    /// Gives an aspect verb before a verb in -ing its own stem back as its key: "keeps
    /// failing" says nothing of keeping, so it meets no entry that keeps things.
    fn read_aspect(&self, tokens: &mut [Token]) {
        if self.aspect_verbs.is_empty() {
            return;
        }
        rekey_by_next(tokens, |before, this| {
            let goes_on = this.is_ing_form() && before.end < this.start;
            (goes_on && self.aspect_verbs.contains(&before.stem)).then(|| before.stem.clone())
        });
    }

    /// Gives a verb-only synonym where no verb stands its own stem back as its key.
    fn read_as_nouns(&self, text: &str, tokens: &mut [Token]) {
        if self.verb_only.is_empty() {
            return;
        }
        for i in 1..tokens.len() {
            let (before, this) = (&tokens[i - 1], &tokens[i]);
            // A participle keeps its verb's meaning where it describes a noun ("my
            // *stored* keys").
            if !self.verb_only.contains(&this.stem)
                || this.form.ends_with("ed")
                || self.before_verbs.contains(&before.form)
            {
                continue;
            }
            let clause_opens = text
                .get(before.end..this.start)
                .is_some_and(|gap| gap.contains([',', ';', ':', '.', '!', '?', '\n']));
            if !clause_opens {
                let t = &mut tokens[i];
                t.key.clone_from(&t.stem);
            }
        }
    }

    /// Works out the stem and key of these forms now, for [`Synonyms::stem_and_key`].
    pub fn remember<'a>(&mut self, forms: impl IntoIterator<Item = &'a str>) {
        for form in forms {
            let form = form.to_lowercase();
            if !self.known.contains_key(&form) {
                let pair = self.stem_and_key(&form);
                self.known.insert(form, pair);
            }
        }
    }

    pub fn key(&self, form: &str) -> String {
        self.stem_and_key(form).1
    }

    /// The form's own stem and its key (the stem of its canonical synonym).
    pub fn stem_and_key(&self, form: &str) -> (String, String) {
        if let Some(pair) = self.known.get(form) {
            return pair.clone();
        }
        let s = stem(form);
        let key = self.map.get(&s).cloned().unwrap_or_else(|| s.clone());
        (s, key)
    }
}

/// Expansions of contracted forms; the apostrophe has been normalised to `'`.
fn expand(word: &str) -> Option<&'static [&'static str]> {
    Some(match word {
        "what's" => &["what", "is"],
        "that's" => &["that", "is"],
        "it's" => &["it", "is"],
        "here's" => &["here", "is"],
        "there's" => &["there", "is"],
        "who's" => &["who", "is"],
        "where's" => &["where", "is"],
        "how's" => &["how", "is"],
        "let's" => &["let", "us"],
        "i'm" => &["i", "am"],
        "can't" => &["can", "not"],
        "won't" => &["will", "not"],
        "don't" => &["do", "not"],
        "doesn't" => &["does", "not"],
        "didn't" => &["did", "not"],
        "isn't" => &["is", "not"],
        "aren't" => &["are", "not"],
        "wasn't" => &["was", "not"],
        "haven't" => &["have", "not"],
        "hasn't" => &["has", "not"],
        _ => return None,
    })
}

fn suffix_expansion(word: &str) -> Option<(&str, &'static str)> {
    for (suffix, full) in [
        ("'ll", "will"),
        ("'ve", "have"),
        ("'re", "are"),
        ("'d", "would"),
        ("n't", "not"),
        ("'s", ""),
    ] {
        if let Some(base) = word.strip_suffix(suffix)
            && !base.is_empty()
        {
            return Some((base, full));
        }
    }
    None
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The words of a compound joined by hyphens ("fact-check", "line-by-line"), which
/// people write as often with spaces: a catalog that says "fact check" meets a request
/// that says "fact-check", and one whose description says "line-by-line" meets "line by
/// line". Compounds with digits ("covid-19", "555-1234") are codes and stay whole.
fn hyphenated(word: &str) -> Option<impl Iterator<Item = &str>> {
    (word.contains('-') && word.split('-').all(|p| p.chars().all(char::is_alphabetic)))
        .then(|| word.split('-'))
}

/// A tool's name past its server prefix (`fs.read_text_file` → `read_text_file`): what
/// the tool does, not where it runs.
pub fn without_server(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

/// Splits `text` into tokens. Byte ranges in `values` (extracted URLs, paths…) become
/// single tokens flagged `value`, so their dots and slashes never split a clause.
pub fn tokenize(text: &str, values: &[(usize, usize)], synonyms: &Synonyms) -> Vec<Token> {
    let mut tokens = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < text.len() {
        if let Some(&(s, e)) = values.iter().find(|(s, e)| *s <= i && i < *e) {
            let raw = &text[s..e];
            tokens.push(Token {
                form: raw.to_lowercase(),
                key: String::new(),
                stem: String::new(),
                start: s,
                end: e,
                identifier: false,
                proper: false,
                value: true,
            });
            i = e;
            continue;
        }
        let Some(c) = text[i..].chars().next() else {
            break;
        };
        if !is_word_char(c) {
            i += c.len_utf8();
            continue;
        }
        // A word: word characters, joined by inner apostrophes or hyphens.
        let start = i;
        let mut end = i;
        let mut chars = text[i..].char_indices().peekable();
        while let Some((off, ch)) = chars.next() {
            let at = i + off;
            if values.iter().any(|(s, _)| *s == at) && at > start {
                break;
            }
            if is_word_char(ch) {
                end = at + ch.len_utf8();
            } else if matches!(ch, '\'' | '’' | '-')
                && chars.peek().is_some_and(|(_, n)| is_word_char(*n))
                && end == at
                // A count joined to its noun is two words ("a 4-bedroom flat": 4, bedroom),
                // so the noun can name the argument the count fills.
                && !(ch == '-'
                    && text[start..at].bytes().all(|b| b.is_ascii_digit())
                    && chars.peek().is_some_and(|(_, n)| n.is_lowercase()))
            {
                // an inner apostrophe or hyphen: the word goes on
            } else {
                break;
            }
        }
        if end <= start {
            i = start + c.len_utf8();
            continue;
        }
        let raw = &text[start..end];
        let lower = raw.to_lowercase().replace('’', "'");
        let at_start = start == 0 || sentence_start(bytes, start);
        // A word written as a call ("unwrap()", "parse_args()") names code: the function,
        // without its parentheses, which a symbol's definition does not write that way.
        let call = text[end..].starts_with("()") && raw.chars().any(char::is_alphabetic);
        let identifier = call || looks_like_identifier(raw);
        let proper = !identifier
            && !at_start
            && raw.chars().count() >= 2
            && raw.chars().next().is_some_and(char::is_uppercase);
        let mut push = |form: &str| {
            if form.is_empty() {
                return;
            }
            let (stem, key) = synonyms.stem_and_key(form);
            tokens.push(Token {
                key,
                stem,
                form: form.to_string(),
                start,
                end,
                identifier,
                proper,
                value: false,
            });
        };
        if let Some(parts) = expand(&lower) {
            for p in parts {
                push(p);
            }
        } else if let Some(parts) = hyphenated(&lower) {
            for p in parts {
                push(p);
            }
        } else if let Some((base, full)) = suffix_expansion(&lower) {
            push(base);
            push(full);
        } else {
            push(&lower);
        }
        i = end;
    }
    synonyms.read_as_nouns(text, &mut tokens);
    synonyms.read_aspect(&mut tokens);
    synonyms.read_phrasal(&mut tokens);
    tokens
}

/// Gives each token the key `rule` makes of it and the token after it, where it makes
/// one.
fn rekey_by_next(tokens: &mut [Token], rule: impl Fn(&Token, &Token) -> Option<String>) {
    for i in 1..tokens.len() {
        if let Some(key) = rule(&tokens[i - 1], &tokens[i]) {
            tokens[i - 1].key = key;
        }
    }
}

fn sentence_start(bytes: &[u8], at: usize) -> bool {
    let before = bytes[..at].iter().rev().find(|b| !b.is_ascii_whitespace());
    matches!(
        before,
        None | Some(b'.' | b'!' | b'?' | b'\n' | b':' | b';')
    )
}

/// `CamelCase` or `snake_case`.
fn looks_like_identifier(raw: &str) -> bool {
    let mut chars = raw.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    let rest: Vec<char> = chars.collect();
    let inner_upper =
        rest.iter().any(|c| c.is_uppercase()) && rest.iter().any(|c| c.is_lowercase());
    (raw.contains('_') && raw.chars().any(char::is_alphabetic))
        || (first.is_uppercase() && inner_upper)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn forms(text: &str) -> Vec<String> {
        tokenize(text, &[], &Synonyms::default())
            .into_iter()
            .map(|t| t.form)
            .collect()
    }

    #[test]
    fn a_verb_and_its_noun_share_a_stem() {
        for (verb, noun) in [
            ("classify", "classification"),
            ("verify", "verification"),
            ("notify", "notifications"),
            ("identifies", "identification"),
        ] {
            assert_eq!(stem(verb), stem(noun), "{verb} / {noun}");
        }
    }

    #[test]
    fn expands_contractions() {
        assert_eq!(forms("what's unstaged"), ["what", "is", "unstaged"]);
        assert_eq!(forms("Here’s a brief"), ["here", "is", "a", "brief"]);
        assert_eq!(forms("we'll see"), ["we", "will", "see"]);
    }

    #[test]
    fn a_count_joined_to_its_noun_is_two_words() {
        assert_eq!(forms("a 4-bedroom flat"), ["a", "4", "bedroom", "flat"]);
        // Numbers joined to numbers stay one word.
        assert_eq!(forms("call 555-1234"), ["call", "555-1234"]);
        assert_eq!(forms("covid-19"), ["covid-19"]);
        // A number joined to capitals is a code ("form 10-K").
        assert_eq!(forms("form 10-K"), ["form", "10-k"]);
    }

    #[test]
    fn a_compound_of_words_is_its_words() {
        assert_eq!(forms("fact-check it"), ["fact", "check", "it"]);
        assert_eq!(forms("line-by-line"), ["line", "by", "line"]);
        let toks = tokenize("a well-known fact", &[], &Synonyms::default());
        // Both words keep the compound's span, so a value cut from the text keeps it whole.
        assert_eq!((toks[1].start, toks[1].end), (2, 12));
        assert_eq!((toks[2].start, toks[2].end), (2, 12));
    }

    #[test]
    fn a_verb_that_only_says_another_goes_on_is_no_synonym() {
        let syn = Synonyms::new(&[("remember".into(), vec!["keep".into()])])
            .with_aspect_verbs(&["keep".into()]);
        let key = |text: &str, i: usize| tokenize(text, &[], &syn)[i].key.clone();
        assert_eq!(key("the build keeps failing", 2), "keep");
        assert_eq!(key("it kept crashing", 1), "kept");
        assert_eq!(key("keep this note", 0), "rememb");
        assert_eq!(key("keep notes.txt", 0), "rememb");
    }

    #[test]
    fn a_verb_and_its_particle_stand_for_another_verb() {
        let syn = Synonyms::default()
            .with_phrasal_verbs(&[("read".into(), vec!["pull up".into(), "bring up".into()])]);
        let key = |text: &str, i: usize| tokenize(text, &[], &syn)[i].key.clone();
        assert_eq!(key("pull up src/main.rs", 0), "read");
        assert_eq!(key("please bring up the config", 1), "read");
        assert_eq!(key("pulled up the notes", 0), "read");
        // Apart, each word keeps its own meaning.
        assert_eq!(key("pull the latest changes", 0), "pull");
        assert_eq!(key("bring it up", 0), "bring");
    }

    #[test]
    fn values_stay_whole() {
        let text = "fetch https://x.io/a.b and go";
        let toks = tokenize(text, &[(6, 22)], &Synonyms::default());
        assert_eq!(toks[1].form, "https://x.io/a.b");
        assert!(toks[1].value);
        assert_eq!(toks.len(), 4);
    }

    #[test]
    fn stems_and_synonyms_meet() {
        let syn = Synonyms::new(&[("image".into(), vec!["picture".into()])]);
        let toks = tokenize("Pictures of images", &[], &syn);
        assert_eq!(toks[0].key, toks[2].key);
    }

    #[test]
    fn a_verb_only_synonym_where_no_verb_stands_is_its_own_noun() {
        let before_verbs = ["please", "to"].map(String::from);
        let syn = Synonyms::default()
            .with_verb_only(&[("read".into(), vec!["cat".into()])], before_verbs);
        let key = |text: &str, i: usize| tokenize(text, &[], &syn)[i].key.clone();
        assert_eq!(key("cat notes", 0), "read");
        assert_eq!(key("please cat it", 1), "read");
        assert_eq!(key("I want to cat it", 3), "read");
        assert_eq!(key("first this, cat that", 2), "read");
        assert_eq!(key("feed the cat", 2), "cat");
        assert_eq!(key("a big cat", 2), "cat");
        assert_eq!(key("the catted file", 1), "read");
    }

    #[test]
    fn spots_identifiers() {
        let toks = tokenize(
            "Find CommandRouter and token_manager",
            &[],
            &Synonyms::default(),
        );
        let ids: Vec<_> = toks
            .iter()
            .filter(|t| t.identifier)
            .map(|t| t.form.as_str())
            .collect();
        assert_eq!(ids, ["commandrouter", "token_manager"]);
    }

    #[test]
    fn a_word_written_as_a_call_is_an_identifier() {
        let text = "grep the codebase for unwrap() and (maybe) 42()";
        let toks = tokenize(text, &[], &Synonyms::default());
        let ids: Vec<_> = toks
            .iter()
            .filter(|t| t.identifier)
            .map(|t| &text[t.start..t.end])
            .collect();
        assert_eq!(
            ids,
            ["unwrap"],
            "a number is no call, a parenthesis alone no code"
        );
        assert!(toks.iter().any(|t| t.form == "maybe" && !t.identifier));
    }
}
