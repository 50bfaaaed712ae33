//! Phrases — short patterns over normalised tokens — and the concepts (intents,
//! entities) a clause is scored against, each a set of phrases.

use crate::hash::HashMap;
use crate::text::{Synonyms, Token, tokenize};

/// One word of a phrase: a stem key, an exact form (written `=word`), or the stem of the
/// word itself, not its synonym group's ([`compile_intent_phrases`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Term {
    Key(String),
    Form(String),
    Stem(String),
}

/// A short multi-word pattern matched on consecutive tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phrase {
    pub(super) terms: Vec<Term>,
    pub text: String,
}

impl Phrase {
    pub(super) fn compile(text: &str, synonyms: &Synonyms) -> Option<Self> {
        Self::compile_within(text, synonyms, |_| true)
    }

    /// [`Phrase::compile`], where a word that is not its synonym group's own word stands
    /// for the group only where `for_group` says so of the group's key.
    fn compile_within(
        text: &str,
        synonyms: &Synonyms,
        for_group: impl Fn(&str) -> bool,
    ) -> Option<Self> {
        let terms: Vec<Term> = text
            .split_whitespace()
            .flat_map(|w| {
                if let Some(form) = w.strip_prefix('=') {
                    vec![Term::Form(form.to_lowercase())]
                } else {
                    tokenize(w, &[], synonyms)
                        .into_iter()
                        .map(|t| {
                            if t.key == t.stem || for_group(&t.key) {
                                Term::Key(t.key)
                            } else {
                                Term::Stem(t.stem)
                            }
                        })
                        .collect()
                }
            })
            .collect();
        (!terms.is_empty()).then(|| Self {
            terms,
            text: text.trim_start_matches('=').to_string(),
        })
    }

    /// A phrase that matches exact word forms only (sequencers: "lastly" is not "last").
    pub(super) fn compile_exact(text: &str) -> Option<Self> {
        let terms: Vec<Term> = text
            .split_whitespace()
            .map(|w| Term::Form(w.to_lowercase()))
            .collect();
        (!terms.is_empty()).then(|| Self {
            terms,
            text: text.to_string(),
        })
    }

    pub fn len(&self) -> usize {
        self.terms.len()
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// The key of a one-word phrase that matches by key ("file"), not by exact form.
    pub fn single_key(&self) -> Option<&str> {
        match self.terms.as_slice() {
            [Term::Key(k)] => Some(k),
            _ => None,
        }
    }

    /// Whether the phrase matches the tokens starting at `at`.
    pub fn matches_at(&self, tokens: &[Token], at: usize) -> bool {
        at + self.terms.len() <= tokens.len()
            && self
                .terms
                .iter()
                .zip(&tokens[at..])
                .all(|(term, tok)| !tok.value && term_matches(term, tok))
    }

    /// Every start position where the phrase matches.
    pub fn find_all<'a>(&'a self, tokens: &'a [Token]) -> impl Iterator<Item = usize> + 'a {
        (0..tokens.len()).filter(move |&i| self.matches_at(tokens, i))
    }
}

pub(super) fn term_matches(term: &Term, tok: &Token) -> bool {
    match term {
        Term::Key(k) => *k == tok.key,
        Term::Form(f) => *f == tok.form,
        Term::Stem(s) => *s == tok.stem,
    }
}

/// An intent or entity with the phrases that signal it.
#[derive(Debug, Clone)]
pub struct Concept {
    pub name: String,
    pub phrases: Vec<Phrase>,
    pub artifact: Option<String>,
    pub default_entity: Option<String>,
    /// The entity of a clause that names a thing no entity phrase covers.
    pub named_entity: Option<String>,
}

impl Concept {
    /// Whether one of its phrases starts at token `at`.
    pub fn phrase_at(&self, tokens: &[Token], at: usize) -> bool {
        self.phrases.iter().any(|p| p.matches_at(tokens, at))
    }
}

/// The length of the longest of `phrases` that starts at token `at`.
pub fn longest_at(phrases: &[Phrase], tokens: &[Token], at: usize) -> Option<usize> {
    (phrases.iter())
        .filter(|p| p.matches_at(tokens, at))
        .map(Phrase::len)
        .max()
}

/// Intents or entities, with where each may start: most of a long list matches none
/// of a clause's words, and trying every phrase at every token was a large share of a
/// plan's time.
#[derive(Debug, Clone, Default)]
pub struct Concepts {
    pub(super) list: Vec<Concept>,
    /// First term of a phrase (a key, an exact form or a stem) → the concepts it starts.
    pub(super) by_key: HashMap<String, Vec<usize>>,
    pub(super) by_form: HashMap<String, Vec<usize>>,
    pub(super) by_stem: HashMap<String, Vec<usize>>,
}

impl Concepts {
    pub fn new(list: Vec<Concept>) -> Self {
        let mut by_key: HashMap<String, Vec<usize>> = HashMap::default();
        let mut by_form: HashMap<String, Vec<usize>> = HashMap::default();
        let mut by_stem: HashMap<String, Vec<usize>> = HashMap::default();
        for (i, c) in list.iter().enumerate() {
            for p in &c.phrases {
                let (map, word) = match p.terms.first() {
                    Some(Term::Key(k)) => (&mut by_key, k),
                    Some(Term::Form(f)) => (&mut by_form, f),
                    Some(Term::Stem(s)) => (&mut by_stem, s),
                    None => continue,
                };
                let starts = map.entry(word.clone()).or_default();
                if starts.last() != Some(&i) {
                    starts.push(i);
                }
            }
        }
        Self {
            list,
            by_key,
            by_form,
            by_stem,
        }
    }

    /// The concepts, in their order, that have a phrase starting with one of the tokens:
    /// the only ones a phrase of theirs can match.
    pub fn starting_in<'a>(&'a self, tokens: &[Token]) -> impl Iterator<Item = &'a Concept> + 'a {
        let mut hit = vec![false; self.list.len()];
        for t in tokens.iter().filter(|t| !t.value) {
            let starts = [
                self.by_key.get(&t.key),
                self.by_form.get(&t.form),
                self.by_stem.get(&t.stem),
            ];
            for &i in starts.into_iter().flatten().flatten() {
                hit[i] = true;
            }
        }
        self.list
            .iter()
            .zip(hit)
            .filter_map(|(c, hit)| hit.then_some(c))
    }
}

impl std::ops::Deref for Concepts {
    type Target = [Concept];

    fn deref(&self) -> &[Concept] {
        &self.list
    }
}

/// The phrases of a list matched as written ([`Phrase::compile_exact`]), in its order.
pub(super) fn exact_phrases(list: &[String]) -> Vec<Phrase> {
    list.iter()
        .filter_map(|p| Phrase::compile_exact(p))
        .collect()
}

/// Phrases compiled against the synonyms, each once: synonyms can make two phrases one.
pub(super) fn compile_phrases(list: &[String], synonyms: &Synonyms) -> Vec<Phrase> {
    unique(list.iter().filter_map(|p| Phrase::compile(p, synonyms)))
}

/// The phrases, each once (by what they match).
fn unique(phrases: impl Iterator<Item = Phrase>) -> Vec<Phrase> {
    let mut out: Vec<Phrase> = Vec::new();
    for p in phrases {
        if !out.iter().any(|q| q.terms == p.terms) {
            out.push(p);
        }
    }
    out
}

/// An intent's phrases, each once. A word of a synonym group stands for the whole group
/// only where one of the intent's phrases says the group's own word: `remember` says
/// "remember", so its "save" finds "stash" too; `create` says "draw" but never "image",
/// so there "draw" is "draw" alone, and the nouns of its group ("a high level *picture*
/// of how this repo is organized") ask to make nothing.
pub(super) fn compile_intent_phrases(list: &[String], synonyms: &Synonyms) -> Vec<Phrase> {
    let said: Vec<String> = list
        .iter()
        .flat_map(|p| p.split_whitespace())
        .filter(|w| !w.starts_with('='))
        .flat_map(|w| tokenize(w, &[], synonyms))
        .filter(|t| t.key == t.stem)
        .map(|t| t.key)
        .collect();
    unique(
        list.iter()
            .filter_map(|p| Phrase::compile_within(p, synonyms, |k| said.iter().any(|s| s == k))),
    )
}

impl Phrase {
    /// A phrase from already-normalised tokens (catalog keywords and examples).
    pub fn from_tokens(tokens: &[Token], text: &str) -> Option<Self> {
        let terms: Vec<Term> = tokens
            .iter()
            .filter(|t| !t.value)
            .map(|t| Term::Key(t.key.clone()))
            .collect();
        (!terms.is_empty()).then(|| Self {
            terms,
            text: text.to_string(),
        })
    }
}
