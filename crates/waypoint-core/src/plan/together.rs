//! Which clauses ask for a step of their own, and which are part of a neighbour's
//! request ("can you tell me, …", a fact stated beside a request, a verb that shares
//! the next clause's object).

use waypoint_protocol::{Candidate, TextSpan};

use crate::text::Token;
use crate::understand::{Analysis, ClauseAnalysis};

use super::{Planner, Routed, joined};

/// Bytes between two clauses joined by one short word (" and ", " or ", ", ").
const JOINED_BY_A_WORD: usize = 5;

impl Planner<'_> {
    /// For each routed clause, the score of the neighbour that absorbs it: a clause that
    /// fits nothing on its own ("can you tell me,") but, read together with an adjacent
    /// clause, makes that clause's best entry fit at least as well, is part of that
    /// clause's request rather than a request of its own.
    pub(super) fn absorbed(
        &self,
        routed: &mut [Routed<'_>],
        told: &mut Vec<(usize, usize)>,
    ) -> Vec<Option<f64>> {
        let top = |r: &Routed<'_>| r.ranking.first().map_or(0.0, |c| c.score);
        let mut out: Vec<Option<f64>> = vec![None; routed.len()];
        if self.read_as_one(routed, &mut out) {
            return out;
        }
        self.absorbed_by_the_whole(routed, &mut out);
        self.verbs_sharing_an_object(routed, &mut out);
        self.facts_stated(routed, &mut out, told);
        for i in 0..routed.len() {
            if out[i].is_some() {
                continue;
            }
            if top(&routed[i]) >= self.threshold {
                // "download the page and read it to me": the entry that fits cannot take
                // what the step before makes, so "it" is not its input; the clause asks
                // to hear that step's answer.
                if self.cannot_take_what_came_before(routed, i)
                    && let Some(answered) = self.reported_back(routed, &out, i)
                {
                    out[i] = Some(answered);
                }
                continue;
            }
            if let Some(answered) = self.reported_back(routed, &out, i) {
                out[i] = Some(answered);
                continue;
            }
            if let Some(told) = self.situation_for(routed, &out, i) {
                out[i] = Some(told);
                continue;
            }
            let neighbours = [i.checked_sub(1), Some(i + 1)];
            for j in neighbours.into_iter().flatten() {
                let Some(other) = routed.get(j) else { continue };
                let Some(best) = other.ranking.first() else {
                    continue;
                };
                if best.score < self.threshold || out[j].is_some() {
                    continue;
                }
                let merged = if i < j {
                    self.rank_together(&routed[i..=j], 1)
                } else {
                    self.rank_together(&routed[j..=i], 0)
                };
                if merged
                    .first()
                    .is_some_and(|m| m.id == best.id && m.score >= best.score)
                {
                    out[i] = Some(best.score);
                    break;
                }
            }
        }
        out
    }

    /// The score of the step clause `i` asks to hear back from: the clause asks only to
    /// be told how the one before went ([`Lexicon::reports_back`]: "look over my diff and
    /// tell me what could be better") and that clause is planned. Only for a clause no
    /// entry fits; the caller checks that.
    fn reported_back(&self, routed: &[Routed<'_>], out: &[Option<f64>], i: usize) -> Option<f64> {
        let before = routed.get(i.checked_sub(1)?)?;
        if !self.lex.reports_back(routed[i].clause.tokens()) {
            return None;
        }
        out[i - 1].or_else(|| {
            before
                .ranking
                .first()
                .map(|c| c.score)
                .filter(|s| *s >= self.threshold)
        })
    }

    /// Whether the entry clause `i` fits best declares what it takes, and the entry the
    /// clause before fits best declares what it makes, and none of it is taken.
    fn cannot_take_what_came_before(&self, routed: &[Routed<'_>], i: usize) -> bool {
        let best = |j: usize| routed.get(j).and_then(|r| r.ranking.first());
        let (Some(before), Some(this)) = (i.checked_sub(1).and_then(best), best(i)) else {
            return false;
        };
        let (makes, takes) = (self.produces(&before.id), self.accepts(&this.id));
        !makes.is_empty() && !takes.is_empty() && !makes.iter().any(|k| takes.contains(k))
    }

    /// A clause that states a fact ([`Lexicon::states_a_fact`]: "my ID number is
    /// 1234567890") beside one that asks for something gives that request its values;
    /// it is part of the nearest such clause, even where its words fit an entry of their
    /// own ("ID" in `get_dish_id`). Only where no trained router reads the catalog.
    fn facts_stated(
        &self,
        routed: &[Routed<'_>],
        out: &mut [Option<f64>],
        told: &mut Vec<(usize, usize)>,
    ) {
        // A trained router has read such statements in the requests it was taught, and
        // knows the entries they speak for ("my contact number is …" in a support desk's
        // requests); the rule is for catalogs nobody taught.
        if self.index.learned().is_some() {
            return;
        }
        let facts: Vec<bool> = routed
            .iter()
            .map(|r| (self.lex).states_a_fact(r.clause.tokens(), r.clause.segment.asks))
            .collect();
        if !facts.contains(&true) {
            return;
        }
        let hosts: Vec<(usize, usize, f64)> = (0..routed.len())
            .filter(|&i| facts[i] && out[i].is_none())
            .filter_map(|i| {
                let (j, s) = self.nearest_planned(routed, out, i, |j| !facts[j])?;
                Some((i, j, s))
            })
            .collect();
        let index = |r: usize| routed[r].clause.segment.clause.index;
        for (i, j, s) in hosts {
            out[i] = Some(s);
            told.push((index(i), index(j)));
        }
    }

    /// The score of the planned clause nearest to clause `i`, where clause `i` tells of
    /// the speaker's situation ([`Lexicon::tells_a_situation`]: "I'm a nurse moving to
    /// Seattle, what positions are open there?"): it is context for that request. Only
    /// for a clause no entry fits; the caller checks that.
    fn situation_for(&self, routed: &[Routed<'_>], out: &[Option<f64>], i: usize) -> Option<f64> {
        let clause = &routed[i].clause;
        if !self
            .lex
            .tells_a_situation(clause.tokens(), clause.segment.asks)
        {
            return None;
        }
        self.nearest_planned(routed, out, i, |_| true)
            .map(|(_, s)| s)
    }

    /// The clause nearest to clause `i` (the earlier of two as near) that is planned:
    /// absorbed by nothing, its best entry over the threshold, and `may_host`; with that
    /// entry's score.
    fn nearest_planned(
        &self,
        routed: &[Routed<'_>],
        out: &[Option<f64>],
        i: usize,
        may_host: impl Fn(usize) -> bool,
    ) -> Option<(usize, f64)> {
        (0..routed.len())
            .filter(|&j| j != i && out[j].is_none() && may_host(j))
            .filter_map(|j| {
                let s = routed[j].ranking.first()?.score;
                (s >= self.threshold).then_some((j, s))
            })
            .min_by_key(|(j, _)| i.abs_diff(*j))
    }

    /// "find and play a concerto by X", "check and cancel my booking": a clause that is a
    /// verb alone, joined to the next by one short word ("and", "or", a comma), acts on
    /// the next clause's object. Read with that object, it either asks for what the next
    /// clause asks for ("find and play" plays), and is part of that request, or for an
    /// entry of its own, which the object it borrows finds better than the bare verb
    /// ("check the booking" is a lookup, "cancel the booking" a cancellation).
    fn verbs_sharing_an_object(&self, routed: &mut [Routed<'_>], out: &mut [Option<f64>]) {
        for i in 0..routed.len().saturating_sub(1) {
            if out[i].is_some() || out[i + 1].is_some() {
                continue;
            }
            let (verb, next) = (routed[i].clause, routed[i + 1].clause);
            let Some(object) = self.shared_object(verb, next) else {
                continue;
            };
            let from = object[0]
                .start
                .saturating_sub(next.segment.clause.span.start);
            let text = format!(
                "{} {}",
                verb.segment.clause.text,
                next.segment.clause.text.get(from..).unwrap_or_default()
            );
            let tokens: Vec<Token> = verb.tokens().iter().chain(object).cloned().collect();
            let mut hints = self.hints(verb, routed[i].goal);
            hints.text = &text;
            let ranking = self.index.rank(&tokens, &hints, self.lex);
            match (ranking.first(), routed[i + 1].ranking.first()) {
                (Some(mine), Some(theirs))
                    if mine.id == theirs.id && theirs.score >= self.threshold =>
                {
                    out[i] = Some(theirs.score);
                }
                _ => routed[i].ranking = ranking,
            }
        }
    }

    /// The object `verb` shares with `next` (the tokens after `next`'s head verb), when
    /// `verb` is a verb alone (a particle or "me" aside: "look up", "find me") joined to
    /// `next` by one short word, and `next` opens with a verb of its own.
    pub(super) fn shared_object<'c>(
        &self,
        verb: &ClauseAnalysis,
        next: &'c ClauseAnalysis,
    ) -> Option<&'c [Token]> {
        let w = &self.lex.words;
        let bare = verb.head_verb.is_some_and(|h| {
            verb.tokens()[h + 1..]
                .iter()
                .all(|t| w.verb_particles.contains(&t.form) || w.particles.contains(&t.form))
        }) && verb.values.is_empty();
        let gap = next
            .segment
            .clause
            .span
            .start
            .saturating_sub(verb.segment.clause.span.end);
        let object = &next.tokens()[next.head_verb? + 1..];
        (bare
            && !next.segment.follows
            && (1..=JOINED_BY_A_WORD).contains(&gap)
            && !object.is_empty())
        .then_some(object)
    }

    /// The clauses read as one text, with the hints (head verb, goal, values) of
    /// `parts[host]`.
    fn rank_together(&self, parts: &[Routed<'_>], host: usize) -> Vec<Candidate> {
        let text = joined(parts);
        let mut tokens = Vec::new();
        let mut head_verb = None;
        let mut hints = self.hints(parts[host].clause, parts[host].goal);
        for (k, part) in parts.iter().enumerate() {
            if k == host {
                head_verb = hints.head_verb.map(|h| h + tokens.len());
            }
            tokens.extend_from_slice(part.clause.tokens());
        }
        hints.head_verb = head_verb;
        hints.text = &text;
        self.index.rank(&tokens, &hints, self.lex)
    }

    /// Each action clause's ranking as a plan weighs it before choosing: with what the
    /// clauses before it make, and one ranking for the whole request where the plan reads
    /// it as one ([`Self::read_as_one`]). Each comes with the byte span of the request it
    /// ranks (its clause's, or from the first clause to the last). `waypoint route` and
    /// `waypoint calibrate` report these, so the scores they show and sweep are the ones
    /// the plan compares with the threshold.
    pub(crate) fn rankings<'g>(
        &self,
        analysis: &'g Analysis,
    ) -> Vec<(TextSpan, &'g ClauseAnalysis, Vec<Candidate>)> {
        let mut routed = self.route_actions(analysis);
        let mut part_of = vec![None; routed.len()];
        let span = |r: &Routed<'_>| r.clause.segment.clause.span;
        let ends = routed.first().map(span).zip(routed.last().map(span));
        let whole = ends
            .filter(|_| self.read_as_one(&mut routed, &mut part_of))
            .map(|(first, last)| TextSpan {
                start: first.start,
                end: last.end,
            });
        routed
            .into_iter()
            .zip(part_of)
            .filter(|(_, part)| part.is_none())
            .map(|(r, _)| (whole.unwrap_or(span(&r)), r.clause, r.ranking))
            .collect()
    }

    /// Where the labelled requests the trained router was taught ask for one entry at a
    /// time, a request of several clauses is one request: one step, routed as the whole
    /// ("in French, how do I say, see you later" is a translation, not a translation and
    /// a goodbye), or one gap when the whole fits nothing (reading each part on its own
    /// would give a request that fits nothing more chances to be forced onto an entry).
    /// The step stays with the clause that ranks the whole's choice highest on its own.
    /// A request that orders its parts ("then") is left as it is.
    fn read_as_one(&self, routed: &mut [Routed<'_>], out: &mut [Option<f64>]) -> bool {
        if routed.len() < 2
            || !self.index.one_at_a_time()
            || routed.iter().any(|r| r.clause.segment.follows)
        {
            return false;
        }
        let whole = self.rank_together(routed, 0);
        let Some(best) = whole.first() else {
            return false;
        };
        let rank_of = |r: &Routed<'_>| {
            r.ranking
                .iter()
                .position(|c| c.id == best.id)
                .unwrap_or(usize::MAX)
        };
        let host = (0..routed.len())
            .min_by_key(|&k| rank_of(&routed[k]))
            .unwrap_or(0);
        let ranking = if host == 0 {
            whole
        } else {
            self.rank_together(routed, host)
        };
        let score = ranking.first().map_or(0.0, |c| c.score);
        for (k, o) in out.iter_mut().enumerate() {
            if k != host {
                *o = Some(score);
            }
        }
        routed[host].ranking = ranking;
        true
    }

    /// Where the trained router leads the score (a catalog taught by requests), it also
    /// reads the request whole. When that reading is confidently one entry and a clause
    /// beside one asking for it adds nothing of its own, the clause is part of that
    /// request, not a second one: it asks for the same entry again without a value of its
    /// own ("can I travel to France or is it dangerous"), or, without being sure of it on
    /// its own (the model unsure, and the verb's object naming no entry), for an entry the
    /// whole request gives next to no chance ("from now on, my name is Tom"), or it is a
    /// fragment without a verb that routes nowhere ("when am I paid, or how often").
    fn absorbed_by_the_whole(&self, routed: &[Routed<'_>], out: &mut [Option<f64>]) {
        if routed.len() < 2 {
            return;
        }
        let whole = joined(routed);
        let Some((asked, _)) = self.index.confident(&whole) else {
            return;
        };
        let asks = |r: &Routed<'_>| {
            r.ranking
                .first()
                .filter(|c| c.score >= self.threshold && c.id == asked)
                .map(|c| c.score)
        };
        for i in 0..routed.len() {
            let mine = &routed[i];
            let own_values = !mine.clause.values.is_empty();
            let adds_nothing = match mine.ranking.first() {
                Some(c) if c.score >= self.threshold => {
                    c.id == asked
                        || (self.index.disowns(&whole, &c.id)
                            && self
                                .index
                                .confident(&mine.clause.segment.clause.text)
                                .is_none()
                            && self.index.named_by_object(
                                mine.clause.tokens(),
                                mine.clause.head_verb,
                                self.lex,
                            ) != Some(c.id.as_str()))
                }
                _ => mine.clause.head_verb.is_none(),
            };
            if own_values || mine.clause.segment.follows || !adds_nothing {
                continue;
            }
            let neighbours = [i.checked_sub(1), Some(i + 1)];
            let host = neighbours.into_iter().flatten().find_map(|j| {
                let score = asks(routed.get(j)?).filter(|_| out[j].is_none())?;
                Some((j, score))
            });
            let Some((j, score)) = host else { continue };
            // Of two clauses that ask for the same entry, the one with values of its own
            // keeps the step, else the first.
            if asks(mine).is_none() || !routed[j].clause.values.is_empty() || j < i {
                out[i] = Some(score);
            }
        }
    }
}
