//! clause → ranked candidates (tools and pipelines) with calibrated scores.
//!
//! The index is built once per catalog from everything the catalog says about an entry
//! (name, keywords, description, examples, produced and accepted kinds), each field with
//! its own weight. A clause's score is the idf-weighted overlap of its words with an
//! entry, plus a bonus for whole multi-word keywords, scaled by how much of the clause
//! the entry explains. IDF is normalised by the catalog's size and the raw score is
//! squashed into [0, 1], so one threshold means the same on 30 tools and on 10,000.

use std::collections::HashMap;

use waypoint_catalog::Catalog;
use waypoint_protocol::{Candidate, CandidateKind};

use waypoint_protocol::ExtractedKind;

use crate::lexicon::{Article, Lexicon, Phrase};
use crate::text::Token;

/// Field weights: how strongly a word in each part of an entry speaks for it.
const W_KEYWORD: f64 = 3.0;
/// Each word of a multi-word keyword; the whole phrase earns `W_PHRASE` on top.
const W_KEYWORD_PART: f64 = 1.5;
/// Bonus for producing the result a clause names after "into", "as a"…
const W_TARGET: f64 = 2.0;
/// Factor for an entry that consumes, rather than produces, the named result.
const CONSUMES_TARGET: f64 = 0.5;
const W_NAME: f64 = 2.0;
const W_EXAMPLE: f64 = 1.5;
const W_DESCRIPTION: f64 = 1.0;
const W_PRODUCES: f64 = 1.0;
const W_ACCEPTS: f64 = 0.5;
/// Bonus per word of a whole multi-word keyword found in the clause.
const W_PHRASE: f64 = 1.0;
/// Raw score at which a candidate reaches 1 − 1/e.
const SCALE: f64 = 3.0;
/// Bonus when the entry's own words express the clause's intent.
const W_INTENT: f64 = 1.5;
/// Bonus when "the X" meets an entry that changes things, or "a X" one that makes them.
const W_ARTICLE: f64 = 1.5;
/// Bonus per kind of value the clause supplies that the entry takes as an argument.
const W_ARG_FIT: f64 = 1.0;
/// Lexical raw score below which understanding bonuses are scaled down.
const MIN_SUPPORT: f64 = 1.0;
/// Weight of a light verb ("make", "create"): its object decides.
const LIGHT_VERB: f64 = 0.5;
/// Weights of clause words by role.
const HEAD_VERB: f64 = 1.5;
const DESCRIBING: f64 = 0.35;
const TOPIC: f64 = 0.3;

#[derive(Debug, Clone)]
struct Doc {
    id: String,
    kind: CandidateKind,
    /// Keys of the artifact kinds it produces and accepts.
    produces: Vec<String>,
    accepts: Vec<String>,
    /// Intents its own words express ("Create one agent…" → create).
    intents: Vec<String>,
    /// Kinds of extracted values its arguments take.
    takes: Vec<ExtractedKind>,
}

/// What the planner knows about a clause beyond its words.
#[derive(Debug, Clone, Default)]
pub struct Hints<'a> {
    pub head_verb: Option<usize>,
    /// The goal's intent, when the parser is reasonably sure of it.
    pub intent: Option<&'a str>,
    pub article: Option<Article>,
    /// Kinds of values the clause supplies (URL, e-mail, path…).
    pub supplied: Vec<ExtractedKind>,
}

/// The routing index of one catalog.
#[derive(Debug, Clone, Default)]
pub struct RouteIndex {
    docs: Vec<Doc>,
    /// key → (doc, field weight), one entry per doc holding the best field's weight.
    postings: HashMap<String, Vec<(u32, f64)>>,
    /// first key of a multi-word phrase → (doc, phrase)
    phrases: HashMap<String, Vec<(u32, Phrase)>>,
    /// key → idf normalised to (0, 1]
    idf: HashMap<String, f64>,
}

/// A weighted clause word.
struct Word<'a> {
    tok: &'a Token,
    weight: f64,
}

impl RouteIndex {
    pub fn build(catalog: &Catalog, lex: &Lexicon) -> Self {
        let mut index = Self::default();
        for tool in catalog.tools() {
            let mut fields: Vec<(f64, String)> =
                vec![(W_NAME, tool.name.replace(['_', '.', '-'], " "))];
            fields.push((W_DESCRIPTION, tool.description.clone()));
            fields.extend(tool.keywords.iter().map(|k| (keyword_weight(k), k.clone())));
            fields.extend(tool.examples.iter().map(|k| (W_EXAMPLE, k.clone())));
            fields.extend(
                tool.produces
                    .iter()
                    .map(|k| (W_PRODUCES, k.replace('_', " "))),
            );
            fields.extend(
                tool.accepts
                    .iter()
                    .map(|k| (W_ACCEPTS, k.replace('_', " "))),
            );
            let phrases: Vec<&String> = tool.keywords.iter().chain(&tool.examples).collect();
            index.add(&tool.name, CandidateKind::Tool, &fields, &phrases, lex);
            index.set_kinds(&tool.produces, &tool.accepts, lex);
            let own = format!(
                "{} . {} . {}",
                tool.name.replace(['_', '.', '-'], " "),
                tool.keywords.join(" . "),
                lead_verb(&tool.description)
            );
            let takes = tool
                .properties()
                .filter_map(|(name, _)| arg_kind(name, lex))
                .collect();
            index.set_profile(&own, takes, lex);
        }
        for p in catalog.pipelines() {
            let short =
                p.id.rsplit('.')
                    .next()
                    .unwrap_or(&p.id)
                    .replace(['_', '-'], " ");
            let mut fields: Vec<(f64, String)> =
                vec![(W_NAME, short), (W_DESCRIPTION, p.description.clone())];
            fields.extend(
                p.intent_keywords
                    .iter()
                    .map(|k| (keyword_weight(k), k.clone())),
            );
            fields.extend(p.examples.iter().map(|k| (W_EXAMPLE, k.clone())));
            fields.extend(p.produces.iter().map(|k| (W_PRODUCES, k.replace('_', " "))));
            let phrases: Vec<&String> = p.intent_keywords.iter().chain(&p.examples).collect();
            index.add(&p.id, CandidateKind::Pipeline, &fields, &phrases, lex);
            index.set_kinds(&p.produces, &p.accepts, lex);
            let own = format!(
                "{} . {}",
                p.intent_keywords.join(" . "),
                lead_verb(&p.description)
            );
            index.set_profile(&own, Vec::new(), lex);
        }
        let n = index.docs.len().max(1) as f64;
        let norm = (1.0 + n).ln();
        index.idf = index
            .postings
            .iter()
            .map(|(k, list)| {
                (
                    k.clone(),
                    ((1.0 + n / list.len() as f64).ln() / norm).min(1.0),
                )
            })
            .collect();
        index
    }

    fn add(
        &mut self,
        id: &str,
        kind: CandidateKind,
        fields: &[(f64, String)],
        phrases: &[&String],
        lex: &Lexicon,
    ) {
        let doc = u32::try_from(self.docs.len()).unwrap_or(u32::MAX);
        self.docs.push(Doc {
            id: id.to_string(),
            kind,
            produces: Vec::new(),
            accepts: Vec::new(),
            intents: Vec::new(),
            takes: Vec::new(),
        });
        let mut best: HashMap<String, f64> = HashMap::new();
        for (w, text) in fields {
            for tok in lex.tokenize(text, &[]) {
                if lex.is_content(&tok) {
                    let e = best.entry(tok.key).or_insert(0.0);
                    *e = e.max(*w);
                }
            }
        }
        for (key, w) in best {
            self.postings.entry(key).or_default().push((doc, w));
        }
        for text in phrases {
            let toks = lex.tokenize(text, &[]);
            if toks.iter().filter(|t| lex.is_content(t)).count() >= 1
                && toks.len() >= 2
                && let Some(p) = crate::lexicon::Phrase::from_tokens(&toks, text)
            {
                self.phrases
                    .entry(toks[0].key.clone())
                    .or_default()
                    .push((doc, p));
            }
        }
    }

    fn set_kinds(&mut self, produces: &[String], accepts: &[String], lex: &Lexicon) {
        let keys = |list: &[String]| -> Vec<String> {
            list.iter()
                .filter_map(|k| {
                    lex.tokenize(&k.replace('_', " "), &[])
                        .into_iter()
                        .last()
                        .map(|t| t.key)
                })
                .collect()
        };
        if let Some(doc) = self.docs.last_mut() {
            doc.produces = keys(produces);
            doc.accepts = keys(accepts);
        }
    }

    fn set_profile(&mut self, own_words: &str, takes: Vec<ExtractedKind>, lex: &Lexicon) {
        let toks = lex.tokenize(own_words, &[]);
        let intents = lex
            .intents
            .iter()
            .filter(|c| c.phrases.iter().any(|p| p.find_all(&toks).next().is_some()))
            .map(|c| c.name.clone())
            .collect();
        if let Some(doc) = self.docs.last_mut() {
            doc.intents = intents;
            doc.takes = takes;
        }
    }

    pub fn len(&self) -> usize {
        self.docs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// Ranks every entry that shares a word with the clause, best first.
    pub fn rank(&self, tokens: &[Token], hints: &Hints<'_>, lex: &Lexicon) -> Vec<Candidate> {
        let words = weigh(tokens, hints.head_verb, lex);
        let mut raw: HashMap<u32, f64> = HashMap::new();
        let mut why: HashMap<u32, Vec<(f64, String)>> = HashMap::new();
        // How much of the clause each doc explains, by idf-weighted clause words.
        let mut covered: HashMap<u32, Vec<usize>> = HashMap::new();
        let mut total = 0.0;
        let mut seen: Vec<&str> = Vec::new();
        for (wi, word) in words.iter().enumerate() {
            let key = word.tok.key.as_str();
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            let idf = self.idf.get(key).copied().unwrap_or(1.0);
            total += word.weight * idf;
            for &(doc, w) in self.postings.get(key).into_iter().flatten() {
                let gain = word.weight * w * idf;
                *raw.entry(doc).or_default() += gain;
                why.entry(doc)
                    .or_default()
                    .push((gain, word.tok.form.clone()));
                covered.entry(doc).or_default().push(wi);
            }
        }
        for (i, tok) in tokens.iter().enumerate() {
            for (doc, phrase) in self.phrases.get(&tok.key).into_iter().flatten() {
                if phrase.matches_at(tokens, i) {
                    let gain = W_PHRASE * phrase.len() as f64;
                    *raw.entry(*doc).or_default() += gain;
                    why.entry(*doc)
                        .or_default()
                        .push((gain, format!("“{}”", phrase.text)));
                }
            }
        }
        // Bonuses from understanding are not scaled by word coverage: they stand for the
        // words (the head verb, the article) that led to the understanding.
        let mut bonus: HashMap<u32, f64> = raw.keys().map(|d| (*d, 0.0)).collect();
        self.apply_hints(hints, lex, &mut bonus, &mut why);
        // Direction: the result named after "into" favours its producers over its consumers.
        let target_from = lex
            .target_markers
            .iter()
            .filter_map(|p| p.find_all(tokens).next().map(|at| at + p.len()))
            .min();
        if let Some(from) = target_from {
            let target: Vec<&str> = tokens[from..]
                .iter()
                .filter(|t| lex.is_content(t))
                .map(|t| t.key.as_str())
                .collect();
            for (doc, r) in &mut raw {
                let Some(d) = self.docs.get(*doc as usize) else {
                    continue;
                };
                if let Some(k) = d.produces.iter().find(|k| target.contains(&k.as_str())) {
                    *r += W_TARGET * self.idf.get(k).copied().unwrap_or(1.0);
                    why.entry(*doc)
                        .or_default()
                        .push((W_TARGET, format!("produces {k}")));
                } else if d.accepts.iter().any(|k| target.contains(&k.as_str())) {
                    *r *= CONSUMES_TARGET;
                }
            }
        }
        let mut out: Vec<Candidate> = raw
            .into_iter()
            .filter_map(|(doc, r)| {
                let d = self.docs.get(doc as usize)?;
                let explained: f64 = covered
                    .get(&doc)
                    .into_iter()
                    .flatten()
                    .map(|&wi| {
                        words[wi].weight * self.idf.get(&words[wi].tok.key).copied().unwrap_or(1.0)
                    })
                    .sum();
                let coverage = if total > 0.0 {
                    (explained / total).min(1.0)
                } else {
                    1.0
                };
                // Understanding can tip a choice between entries the words support, not lift
                // one they barely touch.
                let support = (r / MIN_SUPPORT).min(1.0);
                let adjusted =
                    r * (0.5 + 0.5 * coverage) + support * bonus.get(&doc).copied().unwrap_or(0.0);
                let score = crate::understand::round2(1.0 - (-adjusted / SCALE).exp());
                let mut reasons = why.remove(&doc).unwrap_or_default();
                reasons.sort_by(|a, b| b.0.total_cmp(&a.0));
                let mut words: Vec<String> = Vec::new();
                for (_, w) in reasons {
                    if !words.contains(&w) {
                        words.push(w);
                    }
                }
                Some(Candidate {
                    id: d.id.clone(),
                    kind: d.kind,
                    score,
                    why: words,
                })
            })
            .collect();
        out.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
        out
    }
}

fn keyword_weight(keyword: &str) -> f64 {
    if keyword.split_whitespace().count() > 1 {
        W_KEYWORD_PART
    } else {
        W_KEYWORD
    }
}

/// The first word of a description, which in a good one is the verb of what the entry
/// does ("Publish a draft…"); later words name inputs, not the action.
fn lead_verb(description: &str) -> &str {
    description.split_whitespace().next().unwrap_or_default()
}

/// The extracted kind an argument name takes (`url` → URLs), text excluded.
fn arg_kind(name: &str, lex: &Lexicon) -> Option<ExtractedKind> {
    let lower = name.to_ascii_lowercase();
    lex.arg_names
        .iter()
        .find(|(_, names)| names.contains(&lower))
        .and_then(|(kind, _)| ExtractedKind::parse(kind))
}

impl RouteIndex {
    /// Bonuses from what is known beyond the words: the goal's intent, whether the object
    /// exists already, and which supplied values an entry's arguments take.
    fn apply_hints(
        &self,
        hints: &Hints<'_>,
        lex: &Lexicon,
        raw: &mut HashMap<u32, f64>,
        why: &mut HashMap<u32, Vec<(f64, String)>>,
    ) {
        let article_intent = match hints.article {
            Some(Article::Existing) => Some((
                lex.articles.existing_intent.as_str(),
                "changes an existing one",
            )),
            Some(Article::New) => Some((lex.articles.new_intent.as_str(), "makes a new one")),
            None => None,
        };
        for (doc, r) in raw.iter_mut() {
            let Some(d) = self.docs.get(*doc as usize) else {
                continue;
            };
            let mut add = |gain: f64, reason: String| {
                *r += gain;
                why.entry(*doc).or_default().push((gain, reason));
            };
            if let Some(intent) = hints.intent
                && d.intents.iter().any(|i| i == intent)
            {
                add(W_INTENT, format!("does `{intent}`"));
            }
            if let Some((intent, reason)) = article_intent
                && d.intents.iter().any(|i| i == intent)
            {
                add(W_ARTICLE, reason.to_string());
            }
            for kind in &hints.supplied {
                if d.takes.contains(kind) {
                    add(W_ARG_FIT, format!("takes the {} given", kind.as_str()));
                }
            }
        }
    }
}

/// Content words of a clause with their role weights.
fn weigh<'a>(tokens: &'a [Token], head_verb: Option<usize>, lex: &Lexicon) -> Vec<Word<'a>> {
    let topic_from = lex
        .topic_markers
        .iter()
        .filter_map(|p| p.find_all(tokens).next())
        .min()
        .unwrap_or(usize::MAX);
    let mut describing = false;
    let mut out = Vec::new();
    // A light verb hands the head's weight to the first content word after it.
    let head = head_verb.map(|h| {
        if lex.is_light_verb(&tokens[h]) {
            tokens
                .iter()
                .enumerate()
                .skip(h + 1)
                .find(|(_, t)| lex.is_content(t) && !t.identifier)
                .map_or(h, |(i, _)| i)
        } else {
            h
        }
    });
    for (i, tok) in tokens.iter().enumerate() {
        if i > 0 && lex.relative_markers.contains(&tok.form) && head_verb.is_some_and(|h| h < i) {
            describing = true;
        }
        if !lex.is_content(tok) {
            continue;
        }
        let mut weight = if head == Some(i) { HEAD_VERB } else { 1.0 };
        if head_verb == Some(i) && head != Some(i) {
            weight = LIGHT_VERB;
        }
        if describing {
            weight *= DESCRIBING;
        }
        if i > topic_from || tok.identifier || tok.proper {
            weight *= TOPIC;
        }
        out.push(Word { tok, weight });
    }
    out
}
