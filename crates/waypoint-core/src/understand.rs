//! text → [`Understanding`]: clauses, a goal per clause, extracted values.
//!
//! Goals come from phrase evidence, not from a verdict per phrase: every intent and
//! entity phrase that matches adds weight, the clause's head verb counts extra, and the
//! catalog's evidence rules act as a prior over (intent, entity) pairs, so that "how is
//! this agent designed" reads as an architecture question in a catalog that can answer
//! one. The runner-up readings are kept as ambiguities.

use waypoint_catalog::EvidenceRule;
use waypoint_protocol::{Ambiguity, ClauseRole, Extracted, Goal, Understanding};

use crate::extract::{self, Extractor, Found};
use crate::lexicon::{Concept, Concepts, Lexicon, QuestionRule};
use crate::segment::{Segment, segment};
use crate::text::Token;

/// A clause with what the later stages need beyond the wire types.
#[derive(Debug, Clone)]
pub struct ClauseAnalysis {
    pub segment: Segment,
    /// Index in `segment.tokens` of the verb that heads the clause.
    pub head_verb: Option<usize>,
    /// The object is a bare pronoun or "the thing" with nothing it could refer to here.
    pub vague_object: Option<String>,
    /// The clause points at an earlier conversation ("from before").
    pub back_reference: Option<String>,
    /// Values found inside this clause.
    pub values: Vec<Found>,
    /// Byte offset where a relative clause starts ("an agent *that checks X*"): what
    /// follows describes the object rather than asking for a step of its own.
    pub describing_from: Option<usize>,
    /// The goal's entity is the intent's usual one, not named in the clause.
    pub entity_assumed: bool,
}

impl ClauseAnalysis {
    pub fn tokens(&self) -> &[Token] {
        &self.segment.tokens
    }

    pub fn is_action(&self) -> bool {
        self.segment.clause.role == ClauseRole::Action
    }

    /// Whether the clause says what not to do: it neither asks nor gives.
    pub fn is_declined(&self) -> bool {
        self.segment.clause.role == ClauseRole::Declined
    }

    /// Whether the clause presents material the other clauses' steps may take.
    pub fn is_context(&self) -> bool {
        self.segment.clause.role == ClauseRole::Context
    }

    /// The clause text after its head verb: what the verb acts on.
    pub fn object_text(&self, request: &str) -> Option<String> {
        let toks = self.tokens();
        let from = self.head_verb.map_or(0, |h| h + 1);
        let first = toks.get(from)?;
        let last = toks.last()?;
        let text = request.get(first.start..last.end)?.trim();
        (!text.is_empty()).then(|| text.to_string())
    }

    /// The clause's own text from token `lo` to the end of token `hi - 1`.
    pub fn text_of(&self, lo: usize, hi: usize) -> Option<&str> {
        let toks = self.tokens();
        let base = self.segment.clause.span.start;
        let (first, last) = (toks.get(lo)?, toks.get(hi.checked_sub(1)?)?);
        self.segment
            .clause
            .text
            .get(first.start.saturating_sub(base)..last.end.saturating_sub(base))
    }
}

/// The result of understanding one request.
#[derive(Debug, Clone)]
pub struct Analysis {
    pub understanding: Understanding,
    pub clauses: Vec<ClauseAnalysis>,
}

impl Analysis {
    /// The clause with this index.
    pub fn clause(&self, index: usize) -> Option<&ClauseAnalysis> {
        self.clauses
            .iter()
            .find(|c| c.segment.clause.index == index)
    }

    /// The clauses that ask for nothing right before `clause` (back to the action before
    /// it), with the clause after them, as one text; `None` where there are none. Read
    /// for its meaning beside the clause alone (docs/routing.md, item 2).
    pub fn setting_of(&self, clause: &ClauseAnalysis) -> Option<String> {
        let own = clause.segment.clause.index;
        let at = (self.clauses.iter()).position(|c| c.segment.clause.index >= own)?;
        let earlier = &self.clauses[..at];
        let from = earlier
            .iter()
            .rposition(ClauseAnalysis::is_action)
            .map_or(0, |i| i + 1);
        if from == at {
            return None;
        }
        let texts: Vec<&str> = (earlier[from..].iter().chain([clause]))
            .map(|c| c.segment.clause.text.as_str())
            .collect();
        Some(texts.join(". "))
    }
}

/// Understands `request`; `context` is the caller's optional payload; `declined_alone`
/// as [`segment`] takes it.
pub fn understand(
    request: &str,
    context: Option<&serde_json::Value>,
    lex: &Lexicon,
    extractor: &Extractor,
    evidence: &[EvidenceRule],
    declined_alone: bool,
) -> Analysis {
    let found = extractor.find(request);
    let mut extracted = Extracted::default();
    extract::collect(&found, &mut extracted);
    if let Some(ctx) = context {
        for text in strings_in(ctx) {
            extract::collect(&extractor.find(text), &mut extracted);
        }
        extracted.payload = Some(ctx.clone());
    }
    let masked: Vec<(usize, usize)> = found
        .iter()
        .filter(|f| extract::masks(f.kind))
        .map(|f| (f.start, f.end))
        .collect();
    let tokens = lex.tokenize(request, &masked);
    let segments = segment(request, &tokens, lex, declined_alone);

    let mut clauses = Vec::with_capacity(segments.len());
    let mut goals = Vec::new();
    let has_payload = context.is_some();
    for (n, seg) in segments.into_iter().enumerate() {
        let values: Vec<Found> = found
            .iter()
            .filter(|f| f.start >= seg.clause.span.start && f.end <= seg.clause.span.end)
            .cloned()
            .collect();
        let head_verb = head_verb(&seg.tokens, lex);
        let describing_from = head_verb.and_then(|h| {
            (h + 2..seg.tokens.len())
                .find(|&i| {
                    lex.relative_markers.contains(&seg.tokens[i].form)
                        && lex.is_content(&seg.tokens[i - 1])
                        && !lex.is_verb(&seg.tokens[i - 1])
                })
                .map(|i| seg.tokens[i].start)
        });
        let mut analysis = ClauseAnalysis {
            head_verb,
            describing_from,
            entity_assumed: false,
            vague_object: None,
            back_reference: None,
            values,
            segment: seg,
        };
        let has_antecedent = n > 0 || has_payload || !analysis.values.is_empty();
        if !has_antecedent {
            analysis.vague_object = vague_object(&analysis, lex);
        }
        let found = |list: &[crate::lexicon::Phrase]| {
            list.iter()
                .find(|p| p.find_all(analysis.tokens()).next().is_some())
                .map(|p| p.text.clone())
        };
        analysis.back_reference = found(&lex.back_references).or_else(|| {
            let concrete = analysis.vague_object.is_none() && names_something(&analysis, lex);
            if concrete {
                None
            } else {
                found(&lex.weak_back_references)
            }
        });
        if analysis.is_action() {
            let (goal, assumed) = goal_for(&analysis, lex, evidence);
            analysis.entity_assumed = assumed;
            goals.push(goal);
        }
        clauses.push(analysis);
    }
    Analysis {
        understanding: Understanding {
            clauses: clauses.iter().map(|c| c.segment.clause.clone()).collect(),
            goals,
            extracted,
        },
        clauses,
    }
}

/// The verb heading a clause: a known verb, or — in the imperative — whatever content
/// word opens the clause ("wipe all my notes"), even when the vocabulary lacks it.
fn head_verb(tokens: &[Token], lex: &Lexicon) -> Option<usize> {
    let known = tokens.iter().position(|t| lex.is_verb(t));
    let opener = tokens
        .iter()
        .position(|t| !lex.words.fillers.contains(&t.form));

    match (known, opener) {
        (Some(k), Some(o))
            if k != o
                && lex.is_content(&tokens[o])
                && !tokens[o].proper
                && !tokens[o].identifier
                && !lex.is_determiner(&tokens[o]) =>
        {
            Some(o)
        }
        (known, _) => known,
    }
}

/// String leaves of a JSON value, so URLs in a pasted context are extracted too.
fn strings_in(v: &serde_json::Value) -> Vec<&str> {
    match v {
        serde_json::Value::String(s) => vec![s.as_str()],
        serde_json::Value::Array(a) => a.iter().flat_map(strings_in).collect(),
        serde_json::Value::Object(o) => o.values().flat_map(strings_in).collect(),
        _ => Vec::new(),
    }
}

/// The object of the clause when it is only a pronoun or a placeholder noun.
fn vague_object(c: &ClauseAnalysis, lex: &Lexicon) -> Option<String> {
    let toks = c.tokens();
    let start = verb_slot(c, lex).map_or(0, |h| h + 1);
    let rest: Vec<&Token> = toks[start..]
        .iter()
        .filter(|t| !lex.words.articles.contains(&t.form))
        .collect();
    let first = rest.first()?;
    if !lex.vague_objects.contains(&first.form) {
        return None;
    }
    // "this PDF" names its object; "this" alone does not.
    let names_something = rest.get(1).is_some_and(|next| {
        lex.is_content(next)
            && !lex.vague_objects.contains(&next.form)
            && !lex.words.referring_pronouns.contains(&first.form)
    });
    (!names_something).then(|| first.form.clone())
}

/// The verb whose object clarity looks at: the head verb, or a general one ("do it").
fn verb_slot(c: &ClauseAnalysis, lex: &Lexicon) -> Option<usize> {
    c.head_verb.or_else(|| {
        c.tokens()
            .iter()
            .position(|t| lex.vague_verbs.contains(&t.key))
    })
}

/// Whether the clause names a concrete thing: a value, or a content word that is not
/// vague, not a general verb and not part of a weak back-reference ("again").
fn names_something(c: &ClauseAnalysis, lex: &Lexicon) -> bool {
    let slot = verb_slot(c, lex);
    let toks = c.tokens();
    let mut weak = vec![false; toks.len()];
    for p in &lex.weak_back_references {
        for at in p.find_all(toks) {
            weak[at..at + p.len()].iter_mut().for_each(|w| *w = true);
        }
    }
    toks.iter().enumerate().any(|(i, t)| {
        Some(i) != slot
            && !weak[i]
            && (t.value
                || (lex.is_content(t)
                    && !lex.vague_objects.contains(&t.form)
                    && !lex.vague_verbs.contains(&t.key)))
    })
}

/// What an entity phrase counts for after "since"/"until": it names a reference point
/// ("what did I touch since my last commit"), so even two of its words stay under the
/// intent's assumed entity (0.5).
const ANCHORED: f64 = 0.2;

/// What an intent phrase counts for inside a complement of the head verb.
const IN_COMPLEMENT: f64 = 0.35;

/// How a phrase match counts, by where it falls.
#[derive(Clone, Copy)]
enum Role {
    /// Intent phrases: a match right after "the"/"my" is a noun ("my changes"), not the
    /// action, and does not count; a match on the head verb counts extra.
    Intent,
    /// Entity phrases: a match after "since"/"until" names a reference point and counts little.
    Entity,
}

/// "my changes", "the changes": a verb's form after a possessive, or in the plural after
/// any determiner (with at most one describing word between), names a thing, not the
/// action; "the diff" may still be the action's name.
fn is_noun_use(toks: &[Token], at: usize, lex: &Lexicon) -> bool {
    let possessive = |t: &Token| lex.words.possessives.contains(&t.form);
    let plural = toks[at].form.ends_with('s') && toks[at].form.len() > 3;
    let before: Vec<&Token> = toks[at.saturating_sub(2)..at].iter().collect();
    let det_at = before.iter().rposition(|t| lex.is_determiner(t));
    match det_at {
        None => false,
        Some(i) => {
            let between_ok = before[i + 1..]
                .iter()
                .all(|t| lex.is_content(t) && !lex.is_verb(t));
            between_ok && (possessive(before[i]) || plural)
        }
    }
}

/// The first words of the compounds the clause's entity phrases name ("*working* tree",
/// "*build* pipeline", "*test* suite"), by token.
fn compound_modifiers(toks: &[Token], lex: &Lexicon) -> Vec<bool> {
    let mut first = vec![false; toks.len()];
    for c in lex.entities.starting_in(toks) {
        for p in c.phrases.iter().filter(|p| p.len() > 1) {
            for at in p.find_all(toks) {
                first[at] = true;
            }
        }
    }
    first
}

/// What a clause says, read once, of where an intent's phrase asks for nothing:
/// docs/architecture.md, "Understand".
struct IntentCues<'t> {
    toks: &'t [Token],
    head: Option<usize>,
    /// The first words of the compounds its entity phrases name (`compound_modifiers`).
    modifier: Vec<bool>,
    /// The head verb, where a phrase of some intent starts there.
    head_says: Option<usize>,
    /// The noun of the act after a support verb ([`Lexicon::act_noun`]).
    act: Option<usize>,
    /// Where an opening that asks to be told ends ([`Lexicon::told_until`]).
    told: usize,
    /// Where the verbs of a question in the progressive start
    /// ([`Lexicon::progressive_from`]).
    progressive: usize,
}

impl<'t> IntentCues<'t> {
    fn read(toks: &'t [Token], head: Option<usize>, intents: &Concepts, lex: &Lexicon) -> Self {
        Self {
            toks,
            head,
            modifier: compound_modifiers(toks, lex),
            head_says: head.filter(|&h| intents.iter().any(|c| c.phrase_at(toks, h))),
            act: head.and_then(|h| lex.act_noun(toks, h)),
            told: lex.told_until(toks),
            progressive: lex.progressive_from(toks).unwrap_or(usize::MAX),
        }
    }

    /// Whether the phrase of `c` of `len` tokens at `at` counts for nothing:
    /// - "what backend is this session *running* on": in a progressive question the
    ///   verb says what goes on;
    /// - "*tell me* which model powers you": the opening asks the assistant and tells no
    ///   one else;
    /// - "is my *working* tree clean": the first word of a compound an entity names
    ///   modifies its noun;
    /// - "make a release build": after a support verb the noun of the act says the
    ///   intent, not the verb;
    /// - "compare *the last commit* with …": after a head verb that says an intent,
    ///   another intent's phrase opened by a determiner is what the verb acts on.
    fn void(&self, c: &Concept, len: usize, at: usize, lex: &Lexicon) -> bool {
        let toks = self.toks;
        let one_word = len == 1;
        let describes = at >= self.progressive
            && toks[at].is_ing_form()
            && lex.progressive_question.describes.contains(&c.name);
        let on_head = self.head.is_some_and(|h| at <= h && h < at + len);
        let in_object = self.head_says.is_some_and(|h| {
            at > h + 1 && lex.is_determiner(&toks[at - 1]) && !c.phrase_at(toks, h)
        });
        one_word && describes
            || at + len <= self.told
            || one_word && self.modifier.get(at) == Some(&true)
            || match self.act {
                Some(_) => on_head,
                None => in_object,
            }
    }
}

fn score_concepts<'l>(
    concepts: &'l Concepts,
    toks: &[Token],
    head: Option<usize>,
    role: Role,
    lex: &Lexicon,
) -> Vec<(&'l Concept, f64, Vec<String>)> {
    let anchor = Lexicon::after_marker(&lex.anchor_markers, toks).unwrap_or(usize::MAX);
    // "teach the agent *to also send* a welcome email", "save *what you find*": the
    // verbs of a complement say what the object does or where it comes from, not what
    // the clause asks for.
    let complement = head
        .and_then(|h| {
            let object = crate::route::object_noun(toks, h, lex);
            crate::route::complement_at(toks, h, object, lex)
        })
        .unwrap_or(usize::MAX);
    // "apply *this diff*", "fix *the build*": after a head verb that changes something,
    // an intent's word after a determiner is the thing changed, not a second action.
    let changed_after = head
        .filter(|&h| {
            matches!(role, Role::Intent)
                && (lex.changing_intents.iter()).any(|i| lex.intent_phrase_at(i, toks, h))
        })
        .unwrap_or(usize::MAX);
    let cues = matches!(role, Role::Intent).then(|| IntentCues::read(toks, head, concepts, lex));
    let changed_noun = |at: usize| {
        at > changed_after
            && at
                .checked_sub(1)
                .is_some_and(|b| lex.is_determiner(&toks[b]))
    };
    // One coverage buffer for every concept: most concepts match nothing, and a fresh
    // vector for each was a measurable share of a plan's time.
    let mut covered = vec![false; toks.len()];
    let mut scored = Vec::new();
    for c in concepts.starting_in(toks) {
        let mut score = 0.0;
        let mut words = Vec::new();
        covered.fill(false);
        for p in &c.phrases {
            // A token speaks for a concept once, however many of its phrases cover it.
            let Some(at) = p
                .find_all(toks)
                .find(|&at| covered[at..at + p.len()].iter().any(|c| !c))
            else {
                continue;
            };
            // Only the words no other phrase of the concept covered count: "last commit"
            // after "commit" adds "last", not the commit again.
            let mut w = covered[at..at + p.len()].iter().filter(|c| !**c).count() as f64;
            match role {
                Role::Intent if cues.as_ref().is_some_and(|q| q.void(c, p.len(), at, lex)) => {
                    continue;
                }
                Role::Intent
                    if cues.as_ref().and_then(|q| q.act) == Some(at) || head == Some(at) =>
                {
                    w += 0.5;
                }
                Role::Intent
                    if p.len() == 1
                        && lex.is_verb(&toks[at])
                        && (is_noun_use(toks, at, lex) || changed_noun(at)) =>
                {
                    continue;
                }
                Role::Entity if at >= anchor => w *= ANCHORED,
                Role::Intent if at >= complement => w *= IN_COMPLEMENT,
                _ => {}
            }
            covered[at..at + p.len()].iter_mut().for_each(|c| *c = true);
            score += w;
            words.push(p.text.clone());
        }
        if score > 0.0 {
            scored.push((c, score, words));
        }
    }
    scored
}

/// The clause's goal, and whether its entity was assumed rather than named.
fn goal_for(c: &ClauseAnalysis, lex: &Lexicon, evidence: &[EvidenceRule]) -> (Goal, bool) {
    let toks = c.tokens();
    let mut intents = score_concepts(&lex.intents, toks, c.head_verb, Role::Intent, lex);
    let mut entities = score_concepts(&lex.entities, toks, None, Role::Entity, lex);

    reinterpret_question(&mut intents, toks, &lex.past_question, lex);
    reinterpret_question(&mut intents, toks, &lex.present_question, lex);
    add_identifier_entity(&mut entities, toks, !intents.is_empty(), lex);

    // Every (intent, entity) reading with its weight; the catalog's rules are a prior.
    // A thing the clause names that no entity phrase covers ("the scheduler"): the same
    // word for every intent that names such a thing, so looked for once, and only when
    // one does.
    let names_unmatched = intents.iter().any(|(intent, ..)| {
        intent
            .named_entity
            .as_ref()
            .is_some_and(|n| !entities.iter().any(|(e, ..)| &e.name == n))
    });
    let unnamed = names_unmatched
        .then(|| uncovered_noun(toks, c.head_verb, &intents, &entities, lex))
        .flatten()
        .map(|w| [w]);
    let mut readings = word_readings(&intents, &entities, unnamed.as_ref(), evidence);
    readings.extend(entity_implied_readings(&entities, lex, evidence));
    readings.sort_by(|a, b| b.weight.total_cmp(&a.weight));
    let scope = lex
        .scopes
        .iter()
        .find(|(_, ps)| ps.iter().any(|p| p.find_all(toks).next().is_some()))
        .map(|(name, _)| name.clone());

    let Some(first) = readings.first() else {
        let goal = Goal {
            clause: c.segment.clause.index,
            intent: "unknown".into(),
            confidence: 0.0,
            explanation: "no intent phrase matched".into(),
            scope,
            ..Goal::default()
        };
        return (goal, false);
    };
    let (best, why, assumed) = (first.weight, first.explain(), first.assumed());
    let (intent, entity) = (first.intent, first.entity);
    let second = readings
        .iter()
        .find(|r| r.intent != intent || r.entity != entity)
        .map_or(0.0, |r| r.weight);
    let strength = (best / 2.0).min(1.0);
    let margin = if best > 0.0 {
        (best - second) / best
    } else {
        0.0
    };
    let confidence = round2(strength * (0.6 + 0.4 * margin));
    let total: f64 = readings.iter().take(4).map(|r| r.weight).sum();
    let ambiguities = readings
        .iter()
        .skip(1)
        .filter(|r| r.intent != intent || r.entity != entity)
        .take(3)
        .map(|r| Ambiguity {
            intent: r.intent.to_owned(),
            entity: r.entity.map(str::to_owned),
            confidence: round2(if total > 0.0 { r.weight / total } else { 0.0 }),
        })
        .collect();
    let (intent, entity) = (intent.to_owned(), entity.map(str::to_owned));
    let artifact = lex.intent(&intent).and_then(|c| c.artifact.clone());
    let goal = Goal {
        clause: c.segment.clause.index,
        intent,
        entity,
        artifact,
        scope,
        confidence,
        ambiguities,
        explanation: why,
    };
    (goal, assumed)
}

/// The readings the clause's words give: each intent with each entity named, the
/// thing it names by the clause's uncovered noun (`unnamed`) when no entity phrase
/// matched it, its usual entity assumed, and none; the catalog's rules are a prior.
fn word_readings<'a>(
    intents: &'a Scored<'_>,
    entities: &'a Scored<'_>,
    unnamed: Option<&'a [String; 1]>,
    evidence: &[EvidenceRule],
) -> Vec<Reading<'a>> {
    let mut readings = Vec::new();
    for (intent, is, iwords) in intents {
        let mut options: Vec<(Option<&str>, f64, &[String])> = entities
            .iter()
            .map(|(e, s, w)| (Some(e.name.as_str()), *s, w.as_slice()))
            .collect();
        if let (Some(named), Some(word)) = (&intent.named_entity, unnamed)
            && !options.iter().any(|(e, ..)| *e == Some(named.as_str()))
        {
            options.push((Some(named), 0.9, word));
        }
        // The intent's usual entity, assumed: weaker than any named one.
        if let Some(d) = &intent.default_entity
            && !options.iter().any(|(e, ..)| *e == Some(d.as_str()))
        {
            options.push((Some(d), 0.5, &[]));
        }
        options.push((None, 0.0, &[]));
        for (entity, es, ewords) in options {
            let prior = evidence
                .iter()
                .map(|r| match (&r.entity, entity) {
                    (Some(re), Some(e)) if r.intent == intent.name && re == e => 1.0,
                    (None, _) if r.intent == intent.name => 0.3,
                    _ => 0.0,
                })
                .fold(0.0, f64::max);
            readings.push(Reading {
                intent: &intent.name,
                entity,
                weight: is + es + prior,
                because: Because::Words { iwords, ewords },
            });
        }
    }
    readings
}

/// A content word of the clause that no matched intent or entity phrase explains: the
/// name of the thing the clause is about.
fn uncovered_noun(
    toks: &[Token],
    head: Option<usize>,
    intents: &Scored<'_>,
    entities: &Scored<'_>,
    lex: &Lexicon,
) -> Option<String> {
    let covered = |t: &Token| {
        intents.iter().chain(entities.iter()).any(|(c, ..)| {
            c.phrases.iter().any(|p| {
                p.find_all(toks).any(|at| {
                    toks[at..at + p.len()]
                        .iter()
                        .any(|x| x.start == t.start && x.form == t.form)
                })
            })
        })
    };
    // Words that say how far a goal reaches or how many ("the *last* *two* commits")
    // name nothing.
    let mut scoped = vec![false; toks.len()];
    for p in lex.scopes.iter().flat_map(|(_, ps)| ps) {
        for at in p.find_all(toks) {
            scoped[at..at + p.len()].iter_mut().for_each(|s| *s = true);
        }
    }
    toks.iter()
        .enumerate()
        .find(|(i, t)| {
            Some(*i) != head
                && !scoped[*i]
                && !lex.calendar.number_words.contains_key(&t.form)
                && lex.is_content(t)
                && !lex.is_verb(t)
                && !t.value
                && !covered(t)
        })
        .map(|(_, t)| t.form.clone())
}

/// An entity that implies an intent ("which model…" → chat) gives a reading of its own,
/// which wins when no intent phrase speaks louder.
fn entity_implied_readings<'a>(
    entities: &'a Scored<'_>,
    lex: &'a Lexicon,
    evidence: &[EvidenceRule],
) -> impl Iterator<Item = Reading<'a>> {
    entities.iter().filter_map(move |(e, score, words)| {
        let intent = lex.entity_intents.get(&e.name)?;
        let prior = if evidence
            .iter()
            .any(|r| &r.intent == intent && r.entity.as_ref() == Some(&e.name))
        {
            1.0
        } else {
            0.0
        };
        Some(Reading {
            intent,
            entity: Some(&e.name),
            weight: *score * 0.75 + prior,
            because: Because::Implied(words),
        })
    })
}

/// One way to read a clause: an intent, perhaps an entity, and how strongly its words
/// say so. Only the winning reading's explanation is ever shown, so the words it came
/// from are kept and the sentence is written for that one alone.
struct Reading<'a> {
    intent: &'a str,
    entity: Option<&'a str>,
    weight: f64,
    because: Because<'a>,
}

enum Because<'a> {
    /// Intent words, and entity words (none when the entity is assumed for the intent).
    Words {
        iwords: &'a [String],
        ewords: &'a [String],
    },
    /// The entity's words imply the intent.
    Implied(&'a [String]),
}

impl Reading<'_> {
    /// An entity the clause does not name but the intent usually acts on.
    fn assumed(&self) -> bool {
        matches!(self.because, Because::Words { ewords: [], .. }) && self.entity.is_some()
    }

    fn explain(&self) -> String {
        let (intent, entity) = (self.intent, self.entity);
        match self.because {
            Because::Words { iwords, ewords } => {
                let mut s = format!("intent `{intent}` from {}", quote(iwords));
                match (entity, ewords.is_empty()) {
                    (Some(e), false) => {
                        s.push_str(&format!("; entity `{e}` from {}", quote(ewords)));
                    }
                    (Some(e), true) => {
                        s.push_str(&format!("; entity `{e}` assumed for this intent"));
                    }
                    (None, _) => {}
                }
                s
            }
            Because::Implied(words) => format!(
                "intent `{intent}` implied by entity `{}` from {}",
                entity.unwrap_or_default(),
                quote(words)
            ),
        }
    }
}

type Scored<'l> = Vec<(&'l Concept, f64, Vec<String>)>;

/// "did I edit …", "what do you remember …": after such a question the verbs of one
/// intent count for another.
fn reinterpret_question<'l>(
    intents: &mut Scored<'l>,
    toks: &[Token],
    pq: &QuestionRule,
    lex: &'l Lexicon,
) {
    if !pq.asked(toks) {
        return;
    }
    for (from, to) in &pq.reinterpret {
        let moved: f64 = intents
            .iter()
            .filter(|(c, ..)| &c.name == from)
            .map(|(_, s, _)| *s)
            .sum();
        if moved <= 0.0 {
            continue;
        }
        intents.retain(|(c, ..)| &c.name != from);
        if let Some(entry) = intents.iter_mut().find(|(c, ..)| &c.name == to) {
            entry.1 += moved;
        } else if let Some(concept) = lex.intent(to) {
            intents.push((concept, moved, vec![format!("a question ({from})")]));
        }
    }
}

/// A code identifier in the clause (`CommandRouter`) speaks for the identifier entity;
/// a capitalised name (`Agent`) does too, more softly, when the clause has an intent and
/// the name is not part of its topic ("news about Rust"). A name that only qualifies
/// another thing speaks for neither (`qualifies`).
fn add_identifier_entity<'l>(
    entities: &mut Scored<'l>,
    toks: &[Token],
    has_intent: bool,
    lex: &'l Lexicon,
) {
    let Some(name) = &lex.identifier_entity else {
        return;
    };
    let kinds = lex.entities.iter().find(|c| &c.name == name);
    let topic = Lexicon::after_marker(&lex.topic_markers, toks).unwrap_or(usize::MAX);
    let found = toks.iter().enumerate().find_map(|(i, t)| {
        if qualifies(toks, i, kinds, lex) {
            None
        } else if t.identifier {
            Some((t.form.clone(), 1.0))
        } else if t.proper && has_intent && i < topic {
            Some((t.form.clone(), 0.6))
        } else {
            None
        }
    });
    let Some((raw, weight)) = found else {
        return;
    };
    if let Some(entry) = entities.iter_mut().find(|(c, ..)| &c.name == name) {
        entry.1 += weight;
        entry.2.push(raw);
    } else if let Some(concept) = lex.entities.iter().find(|c| &c.name == name) {
        entities.push((concept, weight, vec![raw]));
    }
}

/// Whether the name at `i` is part of a longer name or only qualifies the noun after
/// it, so that it is no symbol to look for: a run of names with a plain capitalised one
/// in it ("reviews of the *Steam Deck OLED*", "the *GitHub Actions* run") names a thing
/// of the world; after a determiner, a name before a common noun says which one ("the
/// *GitHub* token"), unless that noun is a kind of the identifier entity ("the
/// `TokenCache` *struct*").
fn qualifies(toks: &[Token], i: usize, kinds: Option<&Concept>, lex: &Lexicon) -> bool {
    let is_name = |t: &Token| t.identifier || t.proper;
    let t = &toks[i];
    if !is_name(t) {
        return false;
    }
    // A word read as two tokens ("can't") shares its start; the neighbours are words.
    let next = (i + 1..toks.len()).find(|&j| toks[j].start != t.start);
    let prev = toks[..i].iter().rev().find(|n| n.start != t.start);
    let in_run = [prev, next.map(|j| &toks[j])]
        .into_iter()
        .flatten()
        .any(|n| is_name(n) && (n.proper || t.proper));
    if in_run {
        return true;
    }
    // Inflected, a verb says what the name does ("the CommandRouter *handles*"); bare,
    // a stem shared with a verb is the noun ("the GitHub *token*", though "tokenize" is
    // a verb).
    let inflected_verb = |n: &Token| lex.is_verb(n) && n.form != n.stem;
    let a_kind = |j: usize| kinds.is_some_and(|k| k.phrase_at(toks, j));
    let common_noun = |j: usize| {
        let n = &toks[j];
        !is_name(n)
            && !n.value
            && n.form.chars().all(char::is_alphabetic)
            && !lex.stopwords.contains(&n.form)
            && !inflected_verb(n)
            && !a_kind(j)
    };
    prev.is_some_and(|p| lex.opens_noun_phrase(p)) && next.is_some_and(common_noun)
}

/// “a”, “b”: the words a reading came from, as an explanation shows them.
fn quote(words: &[String]) -> String {
    words
        .iter()
        .map(|x| format!("“{x}”"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(crate) fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}
