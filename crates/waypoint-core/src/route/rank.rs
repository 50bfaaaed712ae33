//! Ranking a clause: the words' evidence per entry, the examples' similarity, the
//! blend with meaning and the trained router, and the order of the candidates.

use waypoint_protocol::{Candidate, ExtractedKind};

use crate::hash::{HashMap, HashSet};
use crate::learned::Learned;
use crate::lexicon::{Article, Lexicon, Phrase};
use crate::text::Token;

use super::doc::Doc;
use super::grammar::{complement_at, names_earlier_output, object_noun, target_words, with_unsaid};
use super::rules::ChangeAsked;
use super::{
    COMMON_MIN_DOCS, CONTEXT_NUDGE, DESCRIBING, EXAMPLE_FLOOR, Example, FILE_TYPE, HEAD_VERB,
    Hints, LIGHT_VERB, MAX_CANDIDATES, MIN_SUPPORT, MODEL_REASON, NEW_THING_UNKNOWN,
    OBJECT_UNKNOWN, RouteIndex, SCALE, TIE, TOPIC, W_ARG_FIT, W_ARTICLE, W_EVIDENCE, W_EXAMPLE_SIM,
    W_INTENT, W_OBJECT_KIND, W_PAIR, W_PHRASE, Word,
};

impl RouteIndex {
    /// The best example of each entry by cosine similarity with the clause's words.
    fn example_similarity(&self, words: &[Word<'_>]) -> Vec<(u32, f64, u32)> {
        if self.examples.is_empty() {
            return Vec::new();
        }
        let mut dot = vec![0.0_f64; self.examples.len()];
        let mut touched: Vec<u32> = Vec::new();
        let mut qnorm = 0.0;
        let mut seen: Vec<&str> = Vec::new();
        for word in words {
            let key = word.tok.key.as_str();
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            let Some(idf) = self.example_idf.get(key) else {
                continue;
            };
            let q = word.weight * idf;
            qnorm += q * q;
            for &e in self.example_postings.get(key).into_iter().flatten() {
                if dot[e as usize] == 0.0 {
                    touched.push(e);
                }
                dot[e as usize] += q * idf;
            }
        }
        let qnorm = qnorm.sqrt();
        let mut best: HashMap<u32, (f64, u32)> = HashMap::default();
        for e in touched {
            let ex = &self.examples[e as usize];
            let sim = dot[e as usize] / (qnorm * ex.norm).max(f64::EPSILON);
            let entry = best.entry(ex.doc).or_insert((0.0, e));
            if sim > entry.0 {
                *entry = (sim, e);
            }
        }
        best.into_iter()
            .map(|(doc, (sim, e))| (doc, sim.min(1.0), e))
            .collect()
    }

    /// Word and phrase overlap of the clause with every entry it touches.
    /// `own`: how many of `tokens` the clause says; the words after them are what it
    /// means without saying, which stand next to none of its words.
    fn lexical<'s>(&'s self, tokens: &[Token], words: &[Word<'_>], own: usize) -> Lexical<'s> {
        let n = self.docs.len();
        let mut raw = vec![0.0_f64; n];
        let mut explained = vec![0.0_f64; n];
        let mut touched: Vec<u32> = Vec::new();
        let mut reasons: Vec<(u32, f64, Reason<'_>)> = Vec::new();
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
            let Some(list) = self.postings.get(key) else {
                continue;
            };
            if self.is_noise(list.len()) {
                continue;
            }
            for &(doc, w) in list {
                let i = doc as usize;
                if raw[i] == 0.0 {
                    touched.push(doc);
                }
                let gain = word.weight * w * idf;
                raw[i] += gain;
                explained[i] += word.weight * idf;
                reasons.push((doc, gain, Reason::Word(wi)));
            }
        }
        for (i, tok) in tokens.iter().enumerate() {
            for (doc, phrase) in self.phrases.get(&tok.key).into_iter().flatten() {
                if phrase.matches_at(tokens, i) {
                    let d = *doc as usize;
                    if raw[d] == 0.0 {
                        touched.push(*doc);
                    }
                    let gain = W_PHRASE * phrase.len() as f64;
                    raw[d] += gain;
                    reasons.push((*doc, gain, Reason::Phrase(phrase)));
                }
            }
        }
        let said = words.len().saturating_sub(tokens.len().saturating_sub(own));
        for pair in words[..said].windows(2) {
            let (a, b) = (&pair[0], &pair[1]);
            let (first, second) = (a.tok.key.as_str(), b.tok.key.as_str());
            let Some(list) = self.pairs.get(first).and_then(|s| s.get(second)) else {
                continue;
            };
            if self.is_noise(list.len()) {
                continue;
            }
            let idf = |k: &str| self.idf.get(k).copied().unwrap_or(1.0);
            let gain = W_PAIR * a.weight.min(b.weight) * idf(first).min(idf(second));
            for &doc in list {
                let d = doc as usize;
                if raw[d] == 0.0 {
                    touched.push(doc);
                }
                raw[d] += gain;
            }
        }
        let mut example = vec![0.0_f64; n];
        for (doc, sim, which) in self.example_similarity(words) {
            // Sharing a word or two with some example is common; only a close example
            // speaks for its entry.
            let gain = W_EXAMPLE_SIM * ((sim - EXAMPLE_FLOOR) / (1.0 - EXAMPLE_FLOOR)).max(0.0);
            if gain <= 0.0 {
                continue;
            }
            let d = doc as usize;
            if raw[d] == 0.0 && example[d] == 0.0 {
                touched.push(doc);
            }
            example[d] = gain;
            reasons.push((doc, gain, Reason::Example(which)));
        }
        Lexical {
            raw,
            example,
            explained,
            touched,
            reasons,
            total,
        }
    }

    /// "open photo.png": the family of a file the clause names is a word of the clause
    /// of its own, weak, so a tool for images ("Image and audio files are returned as
    /// …") leads one for text where both read files.
    fn file_type_words<'s>(
        &'s self,
        tokens: &[Token],
        hints: &Hints<'_>,
        lex: &Lexicon,
        raw: &mut [f64],
        touched: &mut Vec<u32>,
        reasons: &mut Vec<(u32, f64, Reason<'s>)>,
    ) {
        let mut seen: Vec<&str> = Vec::new();
        for family in &hints.file_types {
            if seen.contains(family) {
                continue;
            }
            seen.push(family);
            for tok in lex.tokenize(family, &[]) {
                // "the provided image 'example.jpg'" says it already.
                if tokens.iter().any(|t| t.key == tok.key) {
                    continue;
                }
                let Some((key, list)) = self.postings.get_key_value(tok.key.as_str()) else {
                    continue;
                };
                // As for the clause's own words: one in most of a large catalog is noise.
                if self.is_noise(list.len()) {
                    continue;
                }
                let idf = self.idf.get(key).copied().unwrap_or(1.0);
                for &(doc, w) in list {
                    if raw[doc as usize] == 0.0 {
                        touched.push(doc);
                    }
                    let gain = FILE_TYPE * w * idf;
                    raw[doc as usize] += gain;
                    reasons.push((doc, gain, Reason::FileType(family.to_string())));
                }
            }
        }
    }

    /// Whether the verb says what to do, so whether the object exists already ("my",
    /// "the") adds nothing: some entry is named or described by it ("*cancel* my
    /// booking"; a light verb says too little), or it brings the object to the one asking
    /// ("show me the folder's contents" changes nothing).
    fn verb_decides(
        &self,
        tokens: &[Token],
        hints: &Hints<'_>,
        light: bool,
        lex: &Lexicon,
    ) -> bool {
        let known = hints
            .head_verb
            .is_some_and(|h| self.postings.contains_key(tokens[h].key.as_str()));
        !light && known || lex.brings_to_asker(tokens, hints.head_verb)
    }

    /// Whether a word that `entries` entries have is noise: it is in more than half of a
    /// catalog of at least [`COMMON_MIN_DOCS`].
    fn is_noise(&self, entries: usize) -> bool {
        let n = self.docs.len();
        n >= COMMON_MIN_DOCS && entries * 2 > n
    }

    /// Whether the entry's own fields use the word (postings are in entry order).
    fn has_word(&self, doc: u32, key: &str) -> bool {
        self.postings
            .get(key)
            .is_some_and(|list| list.binary_search_by_key(&doc, |(d, _)| *d).is_ok())
    }

    /// Ranks the entries that share a word with the clause, best first; at most
    /// [`MAX_CANDIDATES`] are returned.
    ///
    /// Work per clause is proportional to the postings of its words, not to the catalog:
    /// words in more than half of a large catalog's entries carry no signal and are
    /// skipped, and reasons are rendered only for the candidates returned.
    pub fn rank(&self, tokens: &[Token], hints: &Hints<'_>, lex: &Lexicon) -> Vec<Candidate> {
        let object = hints.head_verb.and_then(|h| object_noun(tokens, h, lex));
        // What a question means without saying it ("how big": size) follows the
        // clause's own words.
        let all = with_unsaid(tokens, hints, lex);
        let own = tokens.len();
        let tokens = &*all;
        let words = self.clause_words(tokens, own, hints, object, lex);
        let Lexical {
            mut raw,
            explained,
            example,
            mut touched,
            mut reasons,
            total,
        } = self.lexical(tokens, &words, own);
        self.file_type_words(tokens, hints, lex, &mut raw, &mut touched, &mut reasons);
        let target = target_words(tokens, lex);
        let needed: Vec<u32> = hints
            .needs
            .iter()
            .filter_map(|n| self.producers.get(*n))
            .flatten()
            .copied()
            .collect();
        let object_kind = object.and_then(|o| self.kind_of(&tokens[o], lex));
        let object_unknown = self.object_unknown(object.map(|o| &tokens[o]), object_kind, lex);
        // The object the catalog has a word for: an entry without that word is not what
        // the article ("a video") asks to find or make, and after a light verb ("generate
        // a response") not what the verb asks for either.
        let object_key = object
            .map(|o| tokens[o].key.as_str())
            .filter(|k| self.postings.contains_key(*k));
        let light_verb = hints
            .head_verb
            .is_some_and(|h| lex.is_light_verb(&tokens[h]));
        let verb_decides = self.verb_decides(tokens, hints, light_verb, lex);
        // "create a logo", "schedule a haircut": a new thing for the verb to act on, which
        // an entry making a kind of its own does not take unless it is that kind. A
        // lookup ("find a play") asks for something that exists, whatever it is.
        // A verb that changes something ("*add* a retry to the fetch loop") makes a part of
        // what it changes, whatever the article.
        let head_looks_up = head_looks_up(tokens, hints, lex);
        let asks_to_make = matches!(hints.article, Some(Article::New))
            && hints.intent != Some(lex.articles.existing_intent.as_str())
            && (hints.intent == Some(lex.articles.new_intent.as_str())
                || head_looks_up == Some(false));
        let change = ChangeAsked::of(tokens, hints, lex);
        let asked = self.asked_kind(tokens, hints, &touched, lex);
        let new_looked_up = new_looked_up(hints, head_looks_up, lex);
        let asked_age = (object_key.zip(hints.article))
            .filter(|(k, _)| self.aged_apart.contains(*k) && !new_looked_up);
        let mut scored: Vec<(f64, u32)> = Vec::with_capacity(touched.len());
        for &doc in &touched {
            let Some(d) = self.docs.get(doc as usize) else {
                continue;
            };
            let r = self.with_target(raw[doc as usize], d, doc, &target, &mut reasons);
            let coverage = if total > 0.0 {
                (explained[doc as usize] / total).min(1.0)
            } else {
                1.0
            };
            // Bonuses from understanding are not scaled by word coverage: they stand for
            // the words (the head verb, the article) that led to the understanding. They can
            // tip a choice between entries the words support, not lift one they barely touch.
            let lacks_object = object_key.is_some_and(|k| !self.has_word(doc, k));
            // A head verb that destroys ("delete the build directory") leaves no other
            // intent, nor the evidence that intent needs, to a tool that destroys nothing:
            // "build" is its object. Nor the intent of the article ("remove *the*
            // observation" changes no existing one by adding to it).
            let destroys_not = hints.destructive && !d.destructive();
            let fit = HintFit {
                intent: !(destroys_not || lacks_object && light_verb),
                article: !lacks_object && !verb_decides && !destroys_not && !new_looked_up,
                kind: object_kind.filter(|k| self.has_word(doc, k)),
            };
            let mut bonus = hint_bonus(d, doc, hints, lex, &mut reasons, fit);
            // Only an entry that takes free text can take an object it has no word for,
            // and asked to make a new one ("create a logo", not "find a play"), only if
            // it does not make a kind of its own (an agent).
            let makes_other = asks_to_make && !d.produces.is_empty();
            let foreign_object = object_unknown && (!d.takes_text || makes_other);
            if foreign_object {
                bonus = 0.0;
            }
            if needed.contains(&doc) && !destroys_not {
                bonus += W_EVIDENCE;
                reasons.push((doc, W_EVIDENCE, Reason::Evidence));
            }
            let mut words_part = r * (0.5 + 0.5 * coverage) + example[doc as usize];
            words_part *= d.name_factor(tokens);
            if foreign_object {
                words_part *= OBJECT_UNKNOWN;
            }
            if object_unknown
                && makes_other
                && !(d.produces.iter()).any(|k| tokens.iter().any(|t| t.key == *k))
            {
                words_part *= NEW_THING_UNKNOWN;
            }
            let age_factor = asked_age.map_or(1.0, |(key, age)| {
                Self::age_fit(d, doc, key, age, fit.article, &mut bonus, &mut reasons)
            });
            let support = (words_part / MIN_SUPPORT).min(1.0);
            let mut adjusted = (words_part + support * bonus) * age_factor;
            adjusted *= self.harm_factor(d, hints, &change, lacks_object) * d.reread_factor(hints);
            adjusted *= d.standing;
            scored.push((1.0 - (-adjusted / SCALE).exp(), doc));
        }
        self.second_opinions(hints, &mut scored, &mut reasons);
        self.given_what_it_cannot_take(&tokens[..own], hints, lex, &mut scored);
        self.makes_what_is_asked(asked, &mut scored);
        self.reads_where_change_is_asked(tokens, hints, lex, &mut scored);
        self.given_a_file(tokens, hints, lex, &mut scored);
        self.acts_on_a_file(&tokens[..own], hints, lex, &mut scored);
        self.asked_of_untaught(tokens, lex, &mut scored, &mut reasons);
        self.object_names_entry(object.map(|o| &tokens[o]), &mut scored, &mut reasons);
        self.break_tie_by_context(&hints.context, &mut scored, &mut reasons);
        self.keep_best(&mut scored);
        self.candidates(scored, reasons, &words)
    }

    /// The clause's words weighed by role; words it means without saying them (after
    /// `own`) weigh as its verb or object would.
    fn clause_words<'a>(
        &self,
        tokens: &'a [Token],
        own: usize,
        hints: &Hints<'_>,
        object: Option<usize>,
        lex: &Lexicon,
    ) -> Vec<Word<'a>> {
        let mut words = weigh(
            &tokens[..own],
            hints.head_verb,
            object,
            &hints.earlier_products,
            &self.name_words,
            lex,
        );
        let unsaid = tokens[own..].iter();
        words.extend(unsaid.map(|tok| Word {
            tok,
            weight: HEAD_VERB,
        }));
        words
    }

    /// The [`MAX_CANDIDATES`] best, best first; equal scores in name order.
    fn keep_best(&self, scored: &mut Vec<(f64, u32)>) {
        let by_rank = |a: &(f64, u32), b: &(f64, u32)| {
            b.0.total_cmp(&a.0)
                .then_with(|| self.docs[a.1 as usize].id.cmp(&self.docs[b.1 as usize].id))
        };
        if scored.len() > MAX_CANDIDATES {
            scored.select_nth_unstable_by(MAX_CANDIDATES, by_rank);
            scored.truncate(MAX_CANDIDATES);
        }
        scored.sort_by(by_rank);
    }

    /// Where the clause's words leave several entries tied at the top ("*change* the
    /// release date" fits every tool that changes something), the ones the earlier
    /// clauses name most often lead by [`CONTEXT_NUDGE`]; a tie the request does not
    /// decide stays a tie. Where a trained model leads the score, entries it rates alike
    /// are no tie of words: near-certain probabilities meet at the top, and the model
    /// has read the clause already.
    fn break_tie_by_context(
        &self,
        context: &[&Token],
        scored: &mut [(f64, u32)],
        reasons: &mut Vec<(u32, f64, Reason<'_>)>,
    ) {
        if self.learned.as_ref().is_some_and(Learned::leads) {
            return;
        }
        let Some(top) = scored.iter().map(|s| s.0).max_by(f64::total_cmp) else {
            return;
        };
        let named: Vec<(usize, Vec<&Token>)> = (scored.iter().enumerate())
            .filter(|(_, s)| s.0 >= top - TIE)
            .map(|(i, &(_, doc))| {
                let words = (context.iter().copied())
                    .filter(|t| {
                        self.has_word(doc, &t.key)
                            && !self
                                .postings
                                .get(t.key.as_str())
                                .is_some_and(|l| self.is_noise(l.len()))
                    })
                    .collect();
                (i, words)
            })
            .collect();
        let most = named.iter().map(|(_, w)| w.len()).max().unwrap_or(0);
        if named.len() < 2 || most == 0 || named.iter().all(|(_, w)| w.len() == most) {
            return;
        }
        for (i, words) in named.into_iter().filter(|(_, w)| w.len() == most) {
            let doc = scored[i].1;
            scored[i].0 += CONTEXT_NUDGE;
            let said: Vec<String> = words.iter().map(|t| t.form.to_lowercase()).collect();
            reasons.push((doc, CONTEXT_NUDGE, Reason::Context(said.join(", "))));
        }
    }

    /// The ranked entries as candidates, each with its reasons rendered, strongest first.
    pub(super) fn candidates(
        &self,
        scored: Vec<(f64, u32)>,
        mut reasons: Vec<(u32, f64, Reason<'_>)>,
        words: &[Word<'_>],
    ) -> Vec<Candidate> {
        reasons.sort_by_key(|(doc, ..)| *doc);
        scored
            .into_iter()
            .filter_map(|(score, doc)| {
                let score = crate::understand::round2(score);
                let d = self.docs.get(doc as usize)?;
                let from = reasons.partition_point(|(r, ..)| *r < doc);
                let to = reasons.partition_point(|(r, ..)| *r <= doc);
                let mut mine: Vec<(f64, String)> = reasons[from..to]
                    .iter()
                    .map(|(_, gain, reason)| (*gain, reason.render(words, &self.examples)))
                    .collect();
                mine.sort_by(|a, b| b.0.total_cmp(&a.0));
                let mut why: Vec<String> = Vec::new();
                for (_, w) in mine {
                    if !why.contains(&w) {
                        why.push(w);
                    }
                }
                Some(Candidate {
                    id: d.id.clone(),
                    kind: d.kind,
                    score,
                    why,
                })
            })
            .collect()
    }
}

/// Per-entry sums of a clause's word overlap, indexed by entry.
struct Lexical<'s> {
    pub(super) raw: Vec<f64>,
    /// Calibrated similarity of each entry's closest example.
    pub(super) example: Vec<f64>,
    /// idf-weighted clause words each entry explains.
    pub(super) explained: Vec<f64>,
    pub(super) touched: Vec<u32>,
    pub(super) reasons: Vec<(u32, f64, Reason<'s>)>,
    /// idf-weighted weight of all clause words.
    pub(super) total: f64,
}

/// Why an entry scored, rendered only for the candidates returned.
pub(super) enum Reason<'a> {
    Word(usize),
    Phrase(&'a Phrase),
    Produces(&'a str),
    Intent(&'a str),
    Article(Article),
    Takes(ExtractedKind),
    Destroys,
    /// The kind of thing the clause's object is, which the entry's words name.
    Kind(&'a str),
    Evidence,
    Example(u32),
    Learned(f64),
    Meaning(f64),
    /// The taught requests nearest the clause by static word vectors.
    NearRequests(f64),
    /// The token the clause asks for, which only this (untaught) entry is named after.
    AskedFor(String),
    /// Words of the request's earlier clauses that decided a tie.
    Context(String),
    /// The family of a file the clause names.
    FileType(String),
    /// What the clause asks to be made ("as a relation"), which the entry's name says
    /// it makes.
    Makes(String),
}

impl Reason<'_> {
    fn render(&self, words: &[Word<'_>], examples: &[Example]) -> String {
        match self {
            Reason::Example(e) => examples
                .get(*e as usize)
                .map(|x| format!("like “{}”", x.text))
                .unwrap_or_default(),
            Reason::Word(i) => words
                .get(*i)
                .map(|w| w.tok.form.clone())
                .unwrap_or_default(),
            Reason::Phrase(p) => format!("“{}”", p.text),
            Reason::Produces(k) => format!("produces {k}"),
            Reason::Makes(w) => format!("makes a {w}"),
            Reason::Intent(i) => format!("does `{i}`"),
            Reason::Article(Article::Existing) => "changes an existing one".into(),
            Reason::Article(Article::New) => "makes a new one".into(),
            Reason::Takes(k) => format!("takes the {} given", k.as_str()),
            Reason::Destroys => "deletes, as asked".into(),
            Reason::Kind(k) => format!("acts on a {k}"),
            Reason::Evidence => "gives the evidence the goal needs".into(),
            Reason::Learned(p) => format!("learned from requests {p:.2}"),
            Reason::AskedFor(w) => format!("asks for the {w} it is named after"),
            Reason::FileType(w) => format!("a {w} file"),
            Reason::Context(w) => format!("the request is about {w}"),
            Reason::Meaning(p) => format!("close in meaning {p:.2}"),
            Reason::NearRequests(p) => format!("near taught requests {p:.2}"),
        }
    }
}

/// How much a second opinion counts in a blended score.
#[derive(Debug, Clone, Copy)]
pub(super) struct Share {
    /// Where the opinion thinks no more of an entry than the score so far.
    pub(super) weight: f64,
    /// Where it thinks more: the stronger of two opinions may lead.
    pub(super) lead: f64,
}

impl Share {
    /// The same share either way.
    pub(super) fn even(weight: f64) -> Self {
        Self {
            weight,
            lead: weight,
        }
    }

    pub(super) fn of(self, opinion: f64, score: f64) -> f64 {
        if opinion > score {
            self.lead
        } else {
            self.weight
        }
    }
}

/// Blends a second opinion (meaning, or the trained router's probability) into each
/// score, `w` parts opinion to `1 − w` parts the score so far, `w` from the [`Share`];
/// entries only the opinion finds join the candidates. Its part is named as a reason
/// when it is large enough to matter.
pub(super) fn blend(
    share: Share,
    opinion: Vec<(u32, f32)>,
    scored: &mut Vec<(f64, u32)>,
    reasons: &mut Vec<(u32, f64, Reason<'_>)>,
    reason: fn(f64) -> Reason<'static>,
) {
    if share.weight <= 0.0 && share.lead <= 0.0 {
        return;
    }
    let mut opinion: HashMap<u32, f32> = opinion.into_iter().collect();
    let mut note = |doc: u32, part: f64| {
        if part >= MODEL_REASON {
            reasons.push((doc, part * SCALE, reason(part)));
        }
    };
    for (score, doc) in scored.iter_mut() {
        let said = f64::from(opinion.remove(doc).unwrap_or(0.0));
        let weight = share.of(said, *score);
        let part = weight * said;
        *score = part + (1.0 - weight) * *score;
        note(*doc, part);
    }
    let mut rest: Vec<(u32, f32)> = opinion.into_iter().collect();
    rest.sort_by_key(|(d, _)| *d);
    for (doc, p) in rest {
        let part = share.of(f64::from(p), 0.0) * f64::from(p);
        if part >= MODEL_REASON {
            scored.push((part, doc));
            note(doc, part);
        }
    }
}

/// An opinion given twice: `order` says which entries lead, `level` how sure the best
/// of them may be (meaning with and without each entry's standing among the catalog's
/// entries, `meaning::Relative`).
pub(super) struct Ordering {
    pub(super) level: Vec<(u32, f32)>,
    pub(super) order: Vec<(u32, f32)>,
}

/// Blends `opinion.order` as [`blend`] does, then scales every score so the best is the
/// best that blending `opinion.level` would give: the order is the ordering opinion's,
/// and the abstain threshold compares the same level as without it.
pub(super) fn blend_ordering(
    share: Share,
    opinion: Ordering,
    scored: &mut Vec<(f64, u32)>,
    reasons: &mut Vec<(u32, f64, Reason<'_>)>,
    reason: fn(f64) -> Reason<'static>,
) {
    let mut level = scored.clone();
    blend(share, opinion.level, &mut level, &mut Vec::new(), reason);
    blend(share, opinion.order, scored, reasons, reason);
    scale_best_to(scored, best_score(&level));
}

/// Blends an opinion that may reorder the entries but not say how sure the best is
/// (static word vectors' standing, `gist`): every score is then scaled so the best is
/// the best before it, or `floor` where that is higher.
pub(super) fn reorder(
    share: Share,
    floor: f64,
    opinion: Vec<(u32, f32)>,
    scored: &mut Vec<(f64, u32)>,
    reasons: &mut Vec<(u32, f64, Reason<'_>)>,
) {
    let want = best_score(scored).max(floor);
    blend(share, opinion, scored, reasons, Reason::Meaning);
    scale_best_to(scored, want);
}

/// Blends an opinion that says how sure each entry is but not which entry is best (an
/// encoder's closest requests, beside a router that ranks better than they do) into
/// `sure`, the scores as sure as they were before it. The best of `scored` keeps its
/// place and takes its score in `sure`; every other entry takes its own, kept under the
/// best's, so a rival the opinion thinks as well of still narrows the best's lead (a
/// harmful pick needs a clear one: `write_margin`, `destructive_margin`).
pub(super) fn settle_level(
    share: Share,
    opinion: Vec<(u32, f32)>,
    mut sure: Vec<(f64, u32)>,
    scored: &mut Vec<(f64, u32)>,
    reasons: &mut Vec<(u32, f64, Reason<'_>)>,
    reason: fn(f64) -> Reason<'static>,
) {
    let Some(&(_, best)) = scored.iter().max_by(|a, b| a.0.total_cmp(&b.0)) else {
        return;
    };
    blend(share, opinion, &mut sure, reasons, reason);
    let want = sure.iter().find(|s| s.1 == best).map_or(0.0, |s| s.0);
    // The largest score below `want`: a rival as sure as the best stays behind it.
    let under = f64::from_bits(want.to_bits().saturating_sub(1)).max(0.0);
    scored.clear();
    scored.push((want, best));
    scored.extend(
        (sure.into_iter())
            .filter(|s| s.1 != best)
            .map(|(score, doc)| (score.min(under), doc)),
    );
}

/// The best of the scores (0 where there are none).
pub(super) fn best_score(scored: &[(f64, u32)]) -> f64 {
    scored.iter().map(|s| s.0).fold(0.0, f64::max)
}

/// Scales every score so the best is `want`; the order stays.
fn scale_best_to(scored: &mut [(f64, u32)], want: f64) {
    let got = best_score(scored);
    if got > 0.0 {
        for s in scored.iter_mut() {
            s.0 *= want / got;
        }
    }
}

/// Which of the understanding's bonuses an entry may take.
#[derive(Clone, Copy)]
struct HintFit<'l> {
    /// The head verb's intent.
    pub(super) intent: bool,
    /// The object's article ("a" makes or finds one, "the" changes one).
    pub(super) article: bool,
    /// The kind of thing the object is, when the entry's words name it and no entry
    /// names the object itself (`RouteIndex::kind_of`).
    pub(super) kind: Option<&'l str>,
}

/// Whether the clause's head verb looks something up (`lookup_verbs` in the
/// vocabulary); `None` without a head verb.
fn head_looks_up(tokens: &[Token], hints: &Hints<'_>, lex: &Lexicon) -> Option<bool> {
    (hints.head_verb)
        .and_then(|h| tokens.get(h))
        .map(|t| lex.lookup_verbs.contains(&t.key))
}

/// Whether the clause's article asks for a new one where the clause looks it up, by its
/// head verb or its goal's intent ("look for *any* .env files" locates): what is looked
/// for exists or is not found, never made, so the article speaks for no entry.
fn new_looked_up(hints: &Hints<'_>, head_looks_up: Option<bool>, lex: &Lexicon) -> bool {
    let looks_up = |intent: &str| lex.lookup_verbs.contains(&lex.synonyms.key(intent));
    matches!(hints.article, Some(Article::New))
        && (head_looks_up == Some(true) || hints.intent.is_some_and(looks_up))
}

/// The bonus from what is known beyond the words: the goal's intent, whether the
/// object exists already, what kind of thing it is, and which supplied values the
/// entry's arguments take.
fn hint_bonus<'s>(
    d: &'s Doc,
    doc: u32,
    hints: &Hints<'s>,
    lex: &'s Lexicon,
    reasons: &mut Vec<(u32, f64, Reason<'s>)>,
    fit: HintFit<'s>,
) -> f64 {
    let mut bonus = 0.0;
    if let Some(kind) = fit.kind {
        bonus += W_OBJECT_KIND;
        reasons.push((doc, W_OBJECT_KIND, Reason::Kind(kind)));
    }
    if let Some(intent) = hints.intent
        && fit.intent
        && d.intents.iter().any(|i| i == intent)
    {
        bonus += W_INTENT;
        reasons.push((doc, W_INTENT, Reason::Intent(intent)));
    }
    let article_intent = match hints.article {
        Some(Article::Existing) => Some(lex.articles.existing_intent.as_str()),
        Some(Article::New) => Some(lex.articles.new_intent.as_str()),
        None => None,
    };
    if let (Some(intent), Some(article)) = (article_intent, hints.article)
        && fit.article
        && d.intents.iter().any(|i| i == intent)
    {
        bonus += W_ARTICLE;
        reasons.push((doc, W_ARTICLE, Reason::Article(article)));
    }
    if hints.destructive && d.destructive() && d.can_take(&hints.supplied) {
        bonus += W_INTENT;
        reasons.push((doc, W_INTENT, Reason::Destroys));
    }
    for kind in &hints.supplied {
        if d.takes.contains(kind) {
            bonus += W_ARG_FIT;
            reasons.push((doc, W_ARG_FIT, Reason::Takes(*kind)));
        }
    }
    bonus
}

/// Content words of a clause with their role weights.
fn weigh<'a>(
    tokens: &'a [Token],
    head_verb: Option<usize>,
    object: Option<usize>,
    earlier_products: &[String],
    name_words: &HashSet<String>,
    lex: &Lexicon,
) -> Vec<Word<'a>> {
    let topic_from = lex
        .topic_markers
        .iter()
        .filter_map(|p| p.find_all(tokens).next())
        .min()
        .unwrap_or(usize::MAX);
    let mut describing = false;
    let mut out = Vec::new();
    // The verb's object — the last word of the noun phrase after it ("the weekly report
    // *workflow*") — names what to act on. A light verb hands its weight to it; any other
    // verb shares it, so an entry that does not know the object fits worse.
    let head = head_verb.map(|h| {
        if lex.is_light_verb(&tokens[h]) {
            object.unwrap_or(h)
        } else {
            h
        }
    });
    let complement = head_verb.and_then(|h| complement_at(tokens, h, object, lex));
    for (i, tok) in tokens.iter().enumerate() {
        if i > 0 && lex.relative_markers.contains(&tok.form) && head_verb.is_some_and(|h| h < i) {
            describing = true;
        }
        if complement == Some(i) {
            describing = true;
        }
        if !lex.is_content(tok) {
            continue;
        }
        let mut weight = if head == Some(i) || object == Some(i) {
            HEAD_VERB
        } else {
            1.0
        };
        if head_verb == Some(i) && head != Some(i) {
            weight = LIGHT_VERB;
        }
        if describing {
            weight *= DESCRIBING;
        }
        if i > topic_from
            || tok.identifier
            || (tok.proper && !name_words.contains(&tok.key))
            || names_earlier_output(tokens, i, earlier_products, lex)
        {
            weight *= TOPIC;
        }
        out.push(Word { tok, weight });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Meaning's default share: 0.4, and 0.7 where it thinks better of an entry.
    const MEANING: Share = Share {
        weight: 0.4,
        lead: 0.7,
    };

    #[test]
    fn an_ordering_opinion_orders_and_the_level_opinion_says_how_sure() {
        let share = MEANING;
        // The words like entry 0 a little; by level meaning likes neither much, by order
        // it puts entry 1 well ahead.
        let mut scored = vec![(0.2, 0), (0.0, 1)];
        let opinion = Ordering {
            level: vec![(0, 0.0), (1, 0.1)],
            order: vec![(0, 0.0), (1, 0.6)],
        };
        blend_ordering(
            share,
            opinion,
            &mut scored,
            &mut Vec::new(),
            Reason::Meaning,
        );
        let score = |d: u32| scored.iter().find(|s| s.1 == d).unwrap().0;
        assert!(score(1) > score(0), "{scored:?}");
        // The best is as sure as the level opinion alone makes the best: 0.6 × 0.2 for
        // entry 0 (meaning says 0, under the words), against 0.7 × 0.1 for entry 1.
        assert!((score(1) - 0.6 * 0.2).abs() < 1e-6, "{scored:?}");
        assert!(
            (score(0) - 0.6 * 0.2 * (0.6 * 0.2) / (0.7 * 0.6)).abs() < 1e-6,
            "{scored:?}"
        );
    }

    #[test]
    fn a_levelling_opinion_says_how_sure_the_best_is_and_keeps_the_order() {
        let share = Share::even(0.5);
        // Ranked, entry 0 leads; as sure as the scores were, entry 1 would, and entry 2
        // trails.
        let mut scored = vec![(0.8, 0), (0.4, 1), (0.1, 2)];
        let sure = vec![(0.5, 0), (0.6, 1), (0.1, 2)];
        // The opinion is far from entries 0 and 2 and close to entry 1.
        let opinion = vec![(0, 0.1), (1, 0.9), (2, 0.1)];
        let mut reasons = Vec::new();
        settle_level(
            share,
            opinion,
            sure,
            &mut scored,
            &mut reasons,
            Reason::Meaning,
        );
        let score = |d: u32| scored.iter().find(|s| s.1 == d).unwrap().0;
        // Entry 0 stays first, at half its sure score and half the opinion's: 0.25 + 0.05.
        assert!((score(0) - 0.3).abs() < 1e-9, "{scored:?}");
        // Entry 1 is as sure as entry 0 could be (0.75 by its own blend), kept behind it.
        assert!(score(1) < score(0) && score(1) > 0.3 - 1e-9, "{scored:?}");
        // Entry 2 takes its own blend: 0.05 + 0.05.
        assert!((score(2) - 0.1).abs() < 1e-9, "{scored:?}");
        assert!(!reasons.is_empty());
        // Nothing scored stays nothing.
        let mut nothing: Vec<(f64, u32)> = Vec::new();
        let opinion = vec![(1, 0.9)];
        settle_level(
            share,
            opinion,
            Vec::new(),
            &mut nothing,
            &mut Vec::new(),
            Reason::Meaning,
        );
        assert!(nothing.is_empty());
    }

    #[test]
    fn a_reordering_opinion_keeps_the_best_score_or_its_floor() {
        let share = Share::even(0.4);
        let mut scored = vec![(0.3, 0), (0.2, 1)];
        reorder(share, 0.0, vec![(1, 1.0)], &mut scored, &mut Vec::new());
        let score = |s: &[(f64, u32)], d: u32| s.iter().find(|x| x.1 == d).unwrap().0;
        // Entry 1 now leads (0.6 × 0.2 + 0.4 against 0.6 × 0.3), at the words' best.
        assert!((score(&scored, 1) - 0.3).abs() < 1e-9, "{scored:?}");
        assert!(score(&scored, 0) < score(&scored, 1));
        // Where the words found nothing, the floor is the best.
        let mut nothing = vec![(0.0, 0)];
        reorder(share, 0.1, vec![(1, 0.5)], &mut nothing, &mut Vec::new());
        assert!((score(&nothing, 1) - 0.1).abs() < 1e-9, "{nothing:?}");
    }

    #[test]
    fn the_stronger_opinion_leads_a_blend() {
        let share = MEANING;
        // Entry 0: the words like it (0.8), meaning less (0.2); entry 1: the words barely
        // (0.1), meaning much (0.9); entry 2: only meaning finds it.
        let mut scored = vec![(0.8, 0), (0.1, 1)];
        let mut reasons = Vec::new();
        let opinion = vec![(0, 0.2), (1, 0.9), (2, 0.5)];
        blend(share, opinion, &mut scored, &mut reasons, Reason::Meaning);
        let score = |doc: u32| scored.iter().find(|(_, d)| *d == doc).unwrap().0;
        assert!((score(0) - (0.4 * 0.2 + 0.6 * 0.8)).abs() < 1e-6);
        assert!((score(1) - (0.7 * 0.9 + 0.3 * 0.1)).abs() < 1e-6);
        assert!((score(2) - 0.7 * 0.5).abs() < 1e-6);
        // An even share is the plain weighted mean either way.
        let mut even = vec![(0.1, 1)];
        blend(
            Share::even(0.4),
            vec![(1, 0.9)],
            &mut even,
            &mut reasons,
            Reason::Meaning,
        );
        assert!((even[0].0 - (0.4 * 0.9 + 0.6 * 0.1)).abs() < 1e-6);
    }
}
