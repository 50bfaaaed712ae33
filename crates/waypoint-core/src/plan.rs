//! The deterministic planner: clauses → steps.
//!
//! Per clause, in this order of trust:
//! 1. evidence: the goal's (intent, entity) rule names the evidence classes a
//!    complete answer needs; each becomes the best-ranked tool that produces it;
//! 2. routing: the best candidate at or above the threshold, preferring a pipeline whose
//!    `accepts` takes what the clause supplies and whose `produces` is what was asked;
//! 3. a gap: an `unknown` step that says what is missing.
//!
//! Then across clauses: a run of steps that a pipeline covers collapses into that
//! pipeline, later steps that refer back ("translate it") take the output
//! of the step that produced what they accept, and values the steps left unused look
//! for a consumer (a schedule asks for the tool that runs things on one).

use std::collections::{HashMap, HashSet};

use waypoint_catalog::{Catalog, Entry, Tool};
use waypoint_protocol::{Candidate, ExtractedKind, StepKind};

use crate::args::{self, Inputs};
use crate::lexicon::Lexicon;
use crate::route::{Hints, RouteIndex};
use crate::text::Token;
use crate::understand::{Analysis, ClauseAnalysis};

/// How far below the best candidate one that takes an earlier step's output may score
/// and still be chosen for a clause that points back ("fix it").
const LINK_MARGIN: f64 = 0.1;

/// A step before ids, groups and validation.
#[derive(Debug, Clone)]
pub struct Draft {
    pub tool: String,
    pub kind: StepKind,
    pub clause: usize,
    pub rationale: String,
    /// Indices of earlier drafts this one consumes.
    pub inputs: Vec<usize>,
    /// Indices of earlier drafts this one must follow: the request ordered them.
    pub after: Vec<usize>,
    pub args: serde_json::Map<String, serde_json::Value>,
    /// Route score of the choice, for clarity and reasoning.
    pub score: f64,
}

/// The planner's output before validation.
#[derive(Debug, Default)]
pub struct Drafted {
    pub drafts: Vec<Draft>,
    pub questions: Vec<String>,
    pub notes: Vec<String>,
    /// Best route score per clause (0 when nothing matched).
    pub clause_scores: Vec<f64>,
    /// Action clauses past [`Planner::max_clauses`], left unplanned.
    pub unplanned: usize,
    /// `(fact, host)`: a clause stating a fact and the clause whose request it gives
    /// values to, by clause index ([`Lexicon::states_a_fact`]).
    pub told: Vec<(usize, usize)>,
}

/// An entry with its probability from the trained router.
type Choice<'a> = (&'a str, f64);

/// A tool that at least this share of the taught plans using a step run before it is
/// added before the step when the request does not ask for it: just over half, so the
/// added step is more often right than not.
const PREREQUISITE_SHARE: f64 = 0.55;
/// Taught plans using a step needed before its prerequisites are trusted: fewer say more
/// about who wrote them than about the tools.
const PREREQUISITE_SUPPORT: u32 = 10;

/// A tool the taught plans run before another, as planning uses it: `first` is added
/// before `step` when a request asks for `step` and not `first`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TakenFirst {
    pub step: String,
    pub first: String,
    /// Taught plans that use `step` and run `first` before it.
    pub before: u32,
    /// Taught plans that use `step`.
    pub of: u32,
}

/// Every prerequisite the catalog's taught sequences give, by tool in catalog order
/// (docs/routing.md, "Prerequisites"): what `waypoint train` reports.
pub fn taken_first(catalog: &Catalog) -> Vec<TakenFirst> {
    let taught = catalog.precedence();
    catalog
        .tools()
        .iter()
        .flat_map(|t| {
            taught
                .prerequisites(&t.name, PREREQUISITE_SHARE, PREREQUISITE_SUPPORT)
                .into_iter()
                .map(|p| TakenFirst {
                    step: t.name.clone(),
                    first: p.tool.to_string(),
                    before: p.before,
                    of: p.of,
                })
        })
        .collect()
}

/// Joints past which a clause is not read as several requests: each way of splitting is
/// a model call, and a clause with this many "and"s and commas is a list, not requests.
const MAX_JOINTS: usize = 6;
/// Bytes between two clauses joined by one short word (" and ", " or ", ", ").
const JOINED_BY_A_WORD: usize = 5;

/// An action clause with its goal and ranked candidates.
struct Routed<'a> {
    clause: &'a ClauseAnalysis,
    goal: Option<&'a waypoint_protocol::Goal>,
    ranking: Vec<Candidate>,
}

/// Clauses' texts as one text.
fn joined(parts: &[Routed<'_>]) -> String {
    parts
        .iter()
        .map(|r| r.clause.segment.clause.text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

pub struct Planner<'a> {
    pub catalog: &'a Catalog,
    pub lex: &'a Lexicon,
    pub index: &'a RouteIndex,
    pub threshold: f64,
    /// A stored plan wins when it scores at least this share of the best candidate.
    pub stored_plan_ratio: f64,
    /// Leads a writing or destructive tool needs over a less harmful runner-up.
    pub write_margin: f64,
    pub destructive_margin: f64,
    /// Most action clauses routed and drafted; the rest of a longer request is left
    /// unplanned (and said so), which bounds the work a plan costs whatever its length.
    pub max_clauses: usize,
}

impl<'a> Planner<'a> {
    pub fn draft(&self, analysis: &Analysis) -> Drafted {
        let mut out = Drafted {
            unplanned: (analysis.clauses.iter().filter(|c| c.is_action()).count())
                .saturating_sub(self.max_clauses),
            ..Drafted::default()
        };
        let mut routed = self.route_actions(analysis);
        let absorbed = self.absorbed(&mut routed, &mut out.told);
        // The entry each clause routes to first: a clause's second intent is not one that
        // another clause of the request already asks for.
        let tops: Vec<String> = routed
            .iter()
            .filter_map(|r| r.ranking.first().map(|c| c.id.clone()))
            .collect();
        let mut routed = routed.into_iter().zip(absorbed);
        for clause in &analysis.clauses {
            if !clause.is_action() {
                out.clause_scores.push(1.0);
                continue;
            }
            let Some((Routed { goal, ranking, .. }, absorbed)) = routed.next() else {
                break;
            };
            if let Some(score) = absorbed {
                out.clause_scores.push(score);
                continue;
            }
            out.clause_scores
                .push(ranking.first().map_or(0.0, |c| c.score));
            let first = out.drafts.len();
            if let Some(stored) = self.stored_plan(&ranking) {
                let why = format!(
                    "a stored plan fits ({:.2}: {})",
                    stored.score,
                    first_reasons(&stored.why)
                );
                out.drafts.push(self.new_draft(
                    &stored.id,
                    clause.segment.clause.index,
                    stored.score,
                    why,
                ));
            } else if let Some(chosen) =
                goal.and_then(|g| self.by_evidence(g, clause, &ranking, &out.drafts))
            {
                for (tool, score, why) in chosen {
                    out.drafts
                        .push(self.new_draft(&tool, clause.segment.clause.index, score, why));
                }
                // Within one clause, evidence flows in order: link producer → consumer.
                for j in first + 1..out.drafts.len() {
                    if let Some(i) = (first..j)
                        .rev()
                        .find(|&i| self.feeds(&out.drafts[i].tool, &out.drafts[j].tool))
                    {
                        out.drafts[j].inputs.push(i);
                    }
                }
            } else if let Some(top) = self.first_fitting(&ranking, clause, &out.drafts) {
                let pick = self
                    .prefer_pipeline(top, clause)
                    .or_else(|| self.covering_pipeline(top, &ranking, clause, &out.drafts))
                    .unwrap_or_else(|| top.clone());
                if let Some(why) = self.too_close_to_harm(&pick, &ranking, clause) {
                    let mut g = gap(clause, Some(&pick));
                    g.rationale = why;
                    out.drafts.push(g);
                    self.consume_leftovers(clause, first, &mut out);
                    continue;
                }
                let why = format!(
                    "best match ({:.2}: {})",
                    pick.score,
                    first_reasons(&pick.why)
                );
                out.drafts.push(self.new_draft(
                    &pick.id,
                    clause.segment.clause.index,
                    pick.score,
                    why,
                ));
                self.other_requests(clause, &pick.id, &tops, &mut out.drafts);
                self.make_what_it_takes(clause, &ranking, &mut out.drafts);
            } else {
                out.drafts.push(gap(clause, ranking.first()));
            }
            self.consume_leftovers(clause, first, &mut out);
        }
        self.collapse_pipelines(analysis, &mut out);
        self.link_references(analysis, &mut out);
        self.complete_restated(analysis, &mut out.drafts);
        drop_restatements(analysis, &mut out.drafts);
        order_phases(analysis, &mut out.drafts);
        self.merge_repeats(analysis, &mut out.drafts);
        self.add_prerequisites(&mut out.drafts);
        self.add_lookups(analysis, &mut out.drafts);
        out
    }

    /// A later step for a tool an earlier step already uses is the same request said
    /// again, dropped, with what followed it following the first (docs/routing.md,
    /// "Prerequisites"): anywhere in the request where the catalog's taught plans use each
    /// tool once per request (fewer than 2% repeat one: "change my hotel booking …, and
    /// change the check-in date to …"), and right after it where the tool declares no
    /// arguments and the two clauses say the need in other words ("what concerts are on
    /// next month? I'd like two tickets to something good", to a ticket tool described
    /// in prose). The same verb twice ("look up the rates of the euro, then look up the
    /// rates of the yen") asks for two calls, as do values a schema tells apart.
    fn merge_repeats(&self, analysis: &Analysis, drafts: &mut Vec<Draft>) {
        let once = self.catalog.precedence().once_per_request();
        let takes_nothing = |tool: &str| {
            self.catalog
                .tool(tool)
                .is_some_and(|t| t.properties().next().is_none())
        };
        let verb = |clause: usize| {
            let c = analysis.clause(clause)?;
            Some(c.tokens().get(c.head_verb?)?.stem.as_str())
        };
        let mut j = 1;
        while j < drafts.len() {
            let this = &drafts[j];
            let first = if this.kind != StepKind::Tool {
                None
            } else if once {
                (0..j).find(|&i| drafts[i].tool == this.tool)
            } else {
                let before = &drafts[j - 1];
                (before.tool == this.tool
                    && before.inputs == this.inputs
                    && before.clause != this.clause
                    && (verb(before.clause)).is_none_or(|v| verb(this.clause) != Some(v))
                    && takes_nothing(&this.tool))
                .then_some(j - 1)
            };
            match first {
                Some(i) => {
                    let said = drafts[j].clause;
                    remove_draft(drafts, j, i);
                    let kept = &mut drafts[i];
                    let why = if once {
                        "taught plans use each tool once per request"
                    } else {
                        "the tool declares no arguments to tell the calls apart"
                    };
                    kept.rationale = format!(
                        "{}; asked again in clause {}: {why}",
                        kept.rationale,
                        said + 1
                    );
                }
                None => j += 1,
            }
        }
    }

    /// Adds before each step the tools that taught plans almost always run before it
    /// (`account_login` before a balance query, a search before a booking) when the
    /// request asks for none of them: labelled requests know steps a request takes for
    /// granted (docs/routing.md, "Prerequisites"). The added step belongs to the same
    /// clause, so its arguments come from it, and the step follows it.
    fn add_prerequisites(&self, drafts: &mut Vec<Draft>) {
        let taught = self.catalog.precedence();
        if taught.is_empty() {
            return;
        }
        let mut j = 0;
        while j < drafts.len() {
            if drafts[j].kind != StepKind::Tool {
                j += 1;
                continue;
            }
            let missing = taught
                .prerequisites(&drafts[j].tool, PREREQUISITE_SHARE, PREREQUISITE_SUPPORT)
                .into_iter()
                .find(|p| !drafts.iter().any(|d| d.tool == p.tool));
            let Some(first) = missing else {
                j += 1;
                continue;
            };
            // One at a time: the added step is looked at next, for its own prerequisites.
            let why = format!(
                "taught plans take it first: {} of {} that use {} run {} before it",
                first.before, first.of, drafts[j].tool, first.tool
            );
            let mut added = self.new_draft(first.tool, drafts[j].clause, drafts[j].score, why);
            make_room(drafts, j, 1);
            added.after = std::mem::replace(&mut drafts[j].after, vec![j]);
            drafts.insert(j, added);
        }
    }

    /// "show me the logo of Walt Disney": a tool that takes a thing by its id
    /// (`get_company_logo`, "… based on its ID"), asked where the request names the thing
    /// instead, runs after the catalog's finder for that kind of thing (`search_company`),
    /// and takes its id from it — unless an earlier step already gives one of the kind
    /// ("the top-rated movie") or taught plans say what runs first (docs/routing.md,
    /// "Prerequisites").
    fn add_lookups(&self, analysis: &Analysis, drafts: &mut Vec<Draft>) {
        if !self.catalog.precedence().is_empty() {
            return;
        }
        let mut j = 0;
        while j < drafts.len() {
            let Some((finder, kind)) = self.finder_for(analysis, drafts, j) else {
                j += 1;
                continue;
            };
            let why = format!(
                "{} takes the {kind} by its id and the request names it: {finder} finds it",
                drafts[j].tool
            );
            let added = self.new_draft(&finder, drafts[j].clause, drafts[j].score, why);
            make_room(drafts, j, 1);
            let step = &mut drafts[j];
            let after = std::mem::replace(&mut step.after, vec![j]);
            step.inputs.push(j);
            drafts.insert(j, Draft { after, ..added });
            j += 2;
        }
    }

    /// The finder [`Self::add_lookups`] adds before draft `j`, with the word for the kind.
    fn finder_for(
        &self,
        analysis: &Analysis,
        drafts: &[Draft],
        j: usize,
    ) -> Option<(String, String)> {
        let d = &drafts[j];
        let tool = (d.kind == StepKind::Tool)
            .then(|| self.catalog.tool(&d.tool))
            .flatten()?;
        if !takes_by_id(tool) {
            return None;
        }
        // An id the clause gives, or speaks of ("transaction ID T12345"), is the one to use.
        let clause = analysis.clause(d.clause)?;
        if clause.values.iter().any(|v| v.kind == ExtractedKind::Ids)
            || clause
                .tokens()
                .iter()
                .any(|t| t.form.eq_ignore_ascii_case("id"))
        {
            return None;
        }
        let name_keys = |name: &str| args::name_keys(name, self.lex);
        let earlier: Vec<Vec<String>> = drafts[..j].iter().map(|e| name_keys(&e.tool)).collect();
        for kind in name_keys(&tool.name) {
            if self.lex.lookup_verbs.contains(&kind) || self.lex.stopwords.contains(&kind) {
                continue;
            }
            if earlier.iter().any(|keys| keys.contains(&kind)) {
                return None;
            }
            if let Some(f) = self.index.finder(&kind).filter(|f| f.tool != tool.name) {
                return Some((f.tool.clone(), f.word.clone()));
            }
        }
        None
    }

    /// "I need to make a voice call to my friend. Please call this number 555-0100 for
    /// me": a clause that names no value, followed (not ordered after with "then") by
    /// the next action clause, which gives exactly the typed values the first one's tool
    /// needs and routes to that tool too, is one request said twice. The first
    /// clause chose the tool; the second gives what it lacked. One step remains: the
    /// first clause's tool, filled from the second clause.
    fn complete_restated(&self, analysis: &Analysis, drafts: &mut Vec<Draft>) {
        let mut j = 1;
        while j < drafts.len() {
            if self.restated_with_values(analysis, &drafts[j - 1], &drafts[j], j - 1) {
                let e = drafts[j - 1].clone();
                let d = &mut drafts[j];
                d.rationale = format!(
                    "{} (the request before, “{}”, given the value it lacked)",
                    e.rationale,
                    analysis
                        .clause(e.clause)
                        .map_or("", |c| c.segment.clause.text.as_str())
                );
                d.tool = e.tool;
                d.kind = e.kind;
                d.score = e.score;
                d.inputs.retain(|&i| i != j - 1);
                d.after.retain(|&i| i != j - 1);
                d.inputs.extend(e.inputs);
                d.after.extend(e.after);
                remove_draft(drafts, j - 1, j - 1);
            } else {
                j += 1;
            }
        }
    }

    /// Whether draft `d` restates draft `e` (at index `at`) and gives the typed values
    /// it lacks (see [`Planner::complete_restated`]).
    fn restated_with_values(&self, analysis: &Analysis, e: &Draft, d: &Draft, at: usize) -> bool {
        let (Some(first), Some(second)) = (analysis.clause(e.clause), analysis.clause(d.clause))
        else {
            return false;
        };
        let next_action = analysis
            .clauses
            .iter()
            .find(|c| c.is_action() && c.segment.clause.index > e.clause)
            .map(|c| c.segment.clause.index);
        if e.kind != StepKind::Tool
            || e.clause == d.clause
            || next_action != Some(d.clause)
            || second.segment.follows
            // Taking the first one's output by type is a step of its own; a link by the
            // words alone ("call *this* number") may be a restatement.
            || d.inputs.contains(&at) && self.feeds(&e.tool, &d.tool)
            || !first.values.is_empty()
            || second.values.is_empty()
        {
            return false;
        }
        let Some(specs) = self.index.arg_specs(&e.tool) else {
            return false;
        };
        // Every value the second clause gives is one the tool takes, and one of them
        // fills an argument the tool cannot run without.
        let all_taken = second
            .values
            .iter()
            .all(|v| specs.iter().any(|s| s.takes_value(v.kind)));
        let needed = second
            .values
            .iter()
            .any(|v| specs.iter().any(|s| s.required() && s.takes_value(v.kind)));
        if !all_taken || !needed {
            return false;
        }
        // And the second clause's words fit the tool on their own.
        let hints = self.hints(second, None);
        self.index
            .rank(second.tokens(), &hints, self.lex)
            .iter()
            .any(|c| c.id == e.tool && c.score >= self.threshold)
    }

    /// For each routed clause, the score of the neighbour that absorbs it: a clause that
    /// fits nothing on its own ("can you tell me,") but, read together with an adjacent
    /// clause, makes that clause's best entry fit at least as well, is part of that
    /// clause's request rather than a request of its own.
    fn absorbed(
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
            if out[i].is_some() || top(&routed[i]) >= self.threshold {
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
    fn shared_object<'c>(
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

    /// Each action clause with its goal and ranking, in order.
    fn route_actions<'g>(&self, analysis: &'g Analysis) -> Vec<Routed<'g>> {
        let mut goal_iter = analysis.understanding.goals.iter();
        // What the clauses routed so far make, by the key of each product's last word.
        let mut products: Vec<String> = Vec::new();
        analysis
            .clauses
            .iter()
            .filter(|c| c.is_action())
            .take(self.max_clauses)
            .map(|clause| {
                let goal = goal_iter.next();
                let mut hints = self.hints(clause, goal);
                hints.earlier_products.clone_from(&products);
                hints.context = self.context_of(analysis, clause);
                let ranking = self.index.rank(clause.tokens(), &hints, self.lex);
                if let Some(top) = ranking.first() {
                    for kind in self.produces(&top.id) {
                        let key = self.lex.synonyms.key(&args::last_name_word(kind));
                        if !products.contains(&key) {
                            products.push(key);
                        }
                    }
                }
                Routed {
                    clause,
                    goal,
                    ranking,
                }
            })
            .collect()
    }

    /// What the clauses before `clause` talk about: their content words but their head
    /// verbs, each once. A later clause's words are not yet said, and a verb says what
    /// another step does, not what this one acts on ("find a house …, reserve the house"
    /// books it).
    pub(crate) fn context_of<'g>(
        &self,
        analysis: &'g Analysis,
        clause: &ClauseAnalysis,
    ) -> Vec<&'g Token> {
        let own = clause.segment.clause.index;
        let mut words: Vec<&Token> = Vec::new();
        for other in analysis
            .clauses
            .iter()
            .filter(|c| c.segment.clause.index < own)
        {
            for (i, tok) in other.tokens().iter().enumerate() {
                let said = |w: &&Token| w.key == tok.key;
                if Some(i) != other.head_verb && self.lex.is_content(tok) && !words.iter().any(said)
                {
                    words.push(tok);
                }
            }
        }
        words
    }

    /// Why `pick` may not be chosen: it writes or destroys, and a less harmful candidate
    /// fits almost as well, so the words do not say clearly enough that the harm is
    /// wanted.
    fn too_close_to_harm(
        &self,
        pick: &Candidate,
        ranking: &[Candidate],
        clause: &ClauseAnalysis,
    ) -> Option<String> {
        let harm = |id: &str| self.catalog.tool(id).map(|t| Harm::of(t.effects));
        let mine = harm(&pick.id)?;
        let margin = match mine {
            Harm::None => return None,
            Harm::Changes => self.write_margin,
            Harm::Destroys => self.destructive_margin,
        };
        // A rival just under the threshold counts too: a pick that barely clears it, with
        // a less harmful reading close behind, is no clear ask for the harm either —
        // unless the clause's verb is a word of the pick's name ("cancel booking BK-2231"
        // for `cancel_booking`), which asks for it by name.
        let by_name = clause
            .head_verb
            .and_then(|h| clause.tokens().get(h))
            .is_some_and(|verb| crate::route::names(verb, self.index.name_stems(&pick.id)));
        let rival = ranking
            .iter()
            .take_while(|c| !by_name || c.score >= self.threshold)
            .filter(|c| c.id != pick.id)
            .find(|c| harm(&c.id).is_some_and(|h| h < mine))?;
        (pick.score - rival.score < margin).then(|| {
            let effects = |id: &str| self.catalog.tool(id).map_or("read", |t| t.effects.as_str());
            format!(
                "gap: `{}` ({}, {:.2}) and `{}` ({}, {:.2}) fit almost equally; a step that {} \
                 needs a clearer lead — say which one is meant",
                pick.id,
                effects(&pick.id),
                pick.score,
                rival.id,
                effects(&rival.id),
                rival.score,
                if mine == Harm::Changes {
                    "changes things"
                } else {
                    "destroys things"
                }
            )
        })
    }

    /// Adds the other entries of a clause that asks for several (see [`Self::requests_in`])
    /// beside `pick`, in the order the clause names them — each unless another clause of
    /// the request routes to it or the plan has it already.
    fn other_requests(
        &self,
        clause: &ClauseAnalysis,
        pick: &str,
        tops: &[String],
        drafts: &mut Vec<Draft>,
    ) {
        // Requests taught one entry at a time give no reason to read two in one clause.
        if self.index.one_at_a_time() {
            return;
        }
        let Some(asked) = self.requests_in(clause) else {
            return;
        };
        let Some(at) = asked.iter().position(|(id, _)| *id == pick) else {
            return;
        };
        // The pick's draft is the last one; the others go before or after it, in the
        // order the clause asks for them.
        let mut before = drafts.len().saturating_sub(1);
        for (k, (id, p)) in asked.into_iter().enumerate() {
            if k == at || tops.iter().any(|t| t == id) || drafts.iter().any(|d| d.tool == id) {
                continue;
            }
            let why = format!("asked too, after “and” or a comma ({p:.2}, learned from requests)");
            let draft = self.new_draft(id, clause.segment.clause.index, p, why);
            if k < at {
                drafts.insert(before, draft);
                before += 1;
            } else {
                drafts.push(draft);
            }
        }
    }

    /// "create an agent that checks my inbox every morning": the clause's pick (a
    /// workflow, for "every morning") takes a kind of thing the clause asks to be made
    /// ("*an* agent") and nothing before makes; a candidate that makes that kind and
    /// clears the threshold too comes first, and feeds the pick.
    fn make_what_it_takes(
        &self,
        clause: &ClauseAnalysis,
        ranking: &[Candidate],
        drafts: &mut Vec<Draft>,
    ) {
        let Some(at) = drafts.len().checked_sub(1) else {
            return;
        };
        let accepts = self.accepts(&drafts[at].tool);
        let made_before = drafts[..at]
            .iter()
            .any(|d| self.produces(&d.tool).iter().any(|k| accepts.contains(k)));
        let toks = clause.tokens();
        let asks_new =
            self.lex.article_after(toks, clause.head_verb) == Some(crate::lexicon::Article::New);
        if made_before || !asks_new {
            return;
        }
        // The kind is what the verb acts on, not any word of the clause ("a restaurant in
        // New York *City*").
        let Some(object) = clause
            .head_verb
            .and_then(|h| crate::route::object_noun(toks, h, self.lex))
        else {
            return;
        };
        let Some(kind) = accepts
            .iter()
            .find(|k| k.as_str() != "text" && self.lex.synonyms.key(k) == toks[object].key)
        else {
            return;
        };
        // The maker comes first, so it must start from what the request gives: not from
        // one of the kind itself (an image stitcher), nor from a kind the clause does not
        // supply (audio to turn into an image).
        let supplied = supplied_kinds(clause);
        let starts_here = |id: &str| {
            self.accepts(id)
                .iter()
                .all(|k| k.as_str() == "text" || supplied.contains(k.as_str()))
        };
        let Some(maker) = ranking
            .iter()
            .take_while(|c| c.score >= self.threshold)
            .filter(|c| c.id != drafts[at].tool && starts_here(&c.id))
            .find(|c| self.produces(&c.id).contains(kind))
        else {
            return;
        };
        let why = format!(
            "makes the {kind} `{}` runs ({:.2}: {})",
            drafts[at].tool,
            maker.score,
            first_reasons(&maker.why)
        );
        let draft = self.new_draft(&maker.id, clause.segment.clause.index, maker.score, why);
        drafts.insert(at, draft);
        drafts[at + 1].inputs.push(at);
    }

    /// The entries a clause asks for, in its order, when the trained router, splitting it
    /// at its joints, routes every part confidently to a different entry ("a table for
    /// two, how humid is it here and put on some jazz"). Of the ways to split, the one
    /// whose least sure part is surest wins; the whole clause must speak for every entry.
    fn requests_in<'i>(&'i self, clause: &ClauseAnalysis) -> Option<Vec<Choice<'i>>> {
        let joints = &clause.segment.joints;
        if joints.is_empty() || joints.len() > MAX_JOINTS {
            return None;
        }
        let mut memo = HashMap::new();
        let asked = self
            .split_requests(clause, 0, clause.tokens().len(), &mut memo)
            .filter(|parts| parts.len() > 1)?;
        let ids: Vec<&str> = asked.iter().map(|(id, _)| *id).collect();
        self.index
            .supports_all(&clause.segment.clause.text, &ids)
            .then_some(asked)
    }

    /// The best way to read the clause's tokens `lo..hi` as confident requests for
    /// different entries: split at a joint when both sides can be so read, else the
    /// whole when the router is confident of it. Memoised by range.
    fn split_requests<'i>(
        &'i self,
        clause: &ClauseAnalysis,
        lo: usize,
        hi: usize,
        memo: &mut HashMap<(usize, usize), Option<Vec<Choice<'i>>>>,
    ) -> Option<Vec<Choice<'i>>> {
        if let Some(known) = memo.get(&(lo, hi)) {
            return known.clone();
        }
        let weakest = |parts: &[Choice<'_>]| parts.iter().map(|c| c.1).fold(f64::MAX, f64::min);
        let mut best: Option<Vec<Choice<'i>>> = None;
        for &(left_end, right_start) in &clause.segment.joints {
            if left_end <= lo || right_start >= hi {
                continue;
            }
            let Some(left) = self.split_requests(clause, lo, left_end, memo) else {
                continue;
            };
            let Some(right) = self.split_requests(clause, right_start, hi, memo) else {
                continue;
            };
            if right
                .iter()
                .any(|(id, _)| left.iter().any(|(l, _)| l == id))
            {
                continue;
            }
            if best
                .as_ref()
                .is_none_or(|b| weakest(&left).min(weakest(&right)) > weakest(b))
            {
                best = Some(left.into_iter().chain(right).collect());
            }
        }
        let found = best.or_else(|| {
            let part = clause.text_of(lo, hi)?;
            self.index.confident(part).map(|c| vec![c])
        });
        memo.insert((lo, hi), found.clone());
        found
    }

    /// What routing should know about a clause beyond its words.
    pub fn hints<'g>(
        &'g self,
        clause: &'g ClauseAnalysis,
        goal: Option<&'g waypoint_protocol::Goal>,
    ) -> Hints<'g> {
        // The evidence the goal's rule asks for, when the parser is sure enough.
        let needs = goal
            .filter(|g| g.confidence >= 0.3)
            .and_then(|g| {
                let rules = self.catalog.evidence();
                rules
                    .iter()
                    .find(|r| r.intent == g.intent && r.entity.is_some() && r.entity == g.entity)
                    .or_else(|| {
                        rules
                            .iter()
                            .find(|r| r.intent == g.intent && r.entity.is_none())
                    })
            })
            .map(|r| r.needs.iter().map(String::as_str).collect())
            .unwrap_or_default();
        // Values inside a relative clause describe the object; they are not this step's input.
        let mut supplied: Vec<ExtractedKind> = clause
            .values
            .iter()
            .filter(|v| clause.describing_from.is_none_or(|from| v.start < from))
            .map(|v| v.kind)
            .collect();
        supplied.dedup();
        let file_types = (clause.values.iter())
            .filter(|v| v.kind == ExtractedKind::Paths)
            .filter(|v| clause.describing_from.is_none_or(|from| v.start < from))
            .filter_map(|v| self.lex.file_types.iter().find(|t| t.holds(&v.value)))
            .map(|t| t.name.as_str())
            .collect();
        let intent = goal
            .filter(|g| g.confidence >= 0.3)
            .map(|g| g.intent.as_str());
        Hints {
            head_verb: clause.head_verb,
            intent,
            reread: intent.and_then(|i| self.lex.reread_as(clause.tokens(), i)),
            article: self.lex.article_after(clause.tokens(), clause.head_verb),
            destructive: clause
                .head_verb
                .and_then(|h| clause.tokens().get(h))
                .is_some_and(|t| self.lex.destroys(t)),
            supplied,
            file_types,
            needs,
            text: &clause.segment.clause.text,
            earlier_products: Vec::new(),
            context: Vec::new(),
        }
    }

    /// Drafts a known tool sequence (a learned plan) over this request's clauses: one tool
    /// per action clause when the counts match, otherwise all on the first; references
    /// are linked as for any plan, and args are filled afresh from this request.
    pub fn draft_sequence(&self, analysis: &Analysis, tools: &[String]) -> Drafted {
        let mut out = Drafted::default();
        let actions: Vec<usize> = analysis
            .clauses
            .iter()
            .filter(|c| c.is_action())
            .map(|c| c.segment.clause.index)
            .collect();
        let first = actions.first().copied().unwrap_or(0);
        for (i, tool) in tools.iter().enumerate() {
            let clause = if actions.len() == tools.len() {
                actions[i]
            } else {
                first
            };
            let mut d = self.new_draft(
                tool,
                clause,
                1.0,
                "learned: earlier runs of this request succeeded with this sequence, or it was accepted".into(),
            );
            if let Some(prev) = i.checked_sub(1).filter(|&p| {
                out.drafts[p].clause == clause && self.feeds(&out.drafts[p].tool, tool)
            }) {
                d.inputs.push(prev);
            }
            out.drafts.push(d);
        }
        out.clause_scores = analysis.clauses.iter().map(|_| 1.0).collect();
        self.link_references(analysis, &mut out);
        order_phases(analysis, &mut out.drafts);
        out
    }

    fn new_draft(&self, id: &str, clause: usize, score: f64, rationale: String) -> Draft {
        let kind = match self.catalog.entry(id) {
            Some(Entry::Pipeline(_)) => StepKind::Pipeline,
            Some(Entry::Plan(_)) => StepKind::Plan,
            _ => StepKind::Tool,
        };
        Draft {
            tool: id.to_string(),
            kind,
            clause,
            rationale,
            inputs: Vec::new(),
            after: Vec::new(),
            args: serde_json::Map::new(),
            score,
        }
    }

    /// A plan document whose intent fits the clause as well as the best tool does (seed
    /// 000's pipeline rule, applied to stored plans): the plan its authors proved wins.
    /// A document that is not clear enough to run still wins — running it asks its
    /// questions (the clarity gate).
    fn stored_plan<'r>(&self, ranking: &'r [Candidate]) -> Option<&'r Candidate> {
        let top = ranking.first()?;
        ranking
            .iter()
            .take_while(|c| c.score >= self.threshold)
            .find(|c| c.kind == waypoint_protocol::CandidateKind::Plan)
            .filter(|c| c.score >= top.score * self.stored_plan_ratio)
    }

    /// Tools for the evidence the goal needs, or `None` to fall back to routing.
    fn by_evidence(
        &self,
        goal: &waypoint_protocol::Goal,
        clause: &ClauseAnalysis,
        ranking: &[Candidate],
        earlier: &[Draft],
    ) -> Option<Vec<(String, f64, String)>> {
        if goal.confidence < 0.3 {
            return None;
        }
        let rules = self.catalog.evidence();
        let exact = rules
            .iter()
            .find(|r| r.intent == goal.intent && r.entity.is_some() && r.entity == goal.entity);
        // A rule for any entity applies only when the clause's own verb says the intent
        // ("review my changes"), not when the word is a noun ("look up reviews").
        let verb_says_it = || {
            clause
                .head_verb
                .is_some_and(|h| self.lex.intent_phrase_at(&goal.intent, clause.tokens(), h))
        };
        let rule = exact.or_else(|| {
            rules
                .iter()
                .find(|r| r.intent == goal.intent && r.entity.is_none())
                .filter(|_| verb_says_it())
        })?;
        let score_of = |id: &str| ranking.iter().find(|c| c.id == id).map_or(0.0, |c| c.score);
        let mut chosen: Vec<(String, f64, String)> = Vec::new();
        for need in &rule.needs {
            let producers = self
                .index
                .producers(need)
                .filter_map(|id| self.catalog.tool(id));
            // Deterministic tools before broad ones: the best-ranked producer, then one that runs
            // without a model, then catalog order.
            let best = producers
                .enumerate()
                .max_by(|(ia, a), (ib, b)| {
                    score_of(&a.name)
                        .total_cmp(&score_of(&b.name))
                        .then_with(|| deterministic(a).cmp(&deterministic(b)))
                        .then_with(|| ib.cmp(ia))
                })
                .map(|(_, t)| t)?;
            if !chosen.iter().any(|(n, ..)| *n == best.name) {
                let what = match &rule.entity {
                    Some(e) => format!("`{}` on `{e}` needs evidence `{need}`", rule.intent),
                    None => format!("`{}` needs evidence `{need}`", rule.intent),
                };
                chosen.push((best.name.clone(), score_of(&best.name), what));
            }
        }
        // Evidence the request already gathers: when the clause refers back ("review it")
        // and an earlier step makes what the last tool accepts, the earlier needs are met.
        if chosen.len() > 1
            && let Some((last, ..)) = chosen.last()
        {
            let accepts = self.accepts(last);
            let refers_back = clause
                .tokens()
                .iter()
                .any(|t| self.lex.anaphora.contains(&t.form));
            if refers_back
                && earlier
                    .iter()
                    .any(|d| self.produces(&d.tool).iter().any(|k| accepts.contains(k)))
            {
                chosen.drain(..chosen.len() - 1);
            }
        }
        let best_chosen = chosen.iter().map(|(_, s, _)| *s).fold(0.0, f64::max);
        // A rule matched on an assumed entity is as weak as a rule for any entity.
        if exact.is_none() || clause.entity_assumed {
            // A rule for any entity is a weak prior: a clearly better direct match wins,
            // and a rule whose tools share no word with the clause does not apply.
            let top = ranking.first();
            let beaten = top.is_some_and(|t| {
                t.score >= self.threshold
                    && t.score > best_chosen
                    && !chosen.iter().any(|(n, ..)| *n == t.id)
            });
            // A rule for any entity also needs its tools to share a word with the clause;
            // an assumed entity under a stated intent does not.
            if beaten || (exact.is_none() && best_chosen == 0.0) {
                return None;
            }
        }
        Some(chosen)
    }

    /// Whether the request can feed a candidate: a pipeline that accepts only specific
    /// kinds (a URL, slides) needs the clause to supply or name one, or an earlier step
    /// to make one.
    fn fits(&self, c: &Candidate, clause: &ClauseAnalysis, earlier: &[Draft]) -> bool {
        let Some(Entry::Pipeline(p)) = self.catalog.entry(&c.id) else {
            return true;
        };
        let supplied = supplied_kinds(clause);
        let named = |kind: &str| self.names_kind(clause, kind);
        // The clause names something the chain makes midway ("post this *draft*"): start
        // there with the member tool, not at the pipeline's beginning.
        let midway = p
            .steps
            .iter()
            .chain(&p.supersedes)
            .filter_map(|t| self.catalog.tool(t))
            .flat_map(|t| t.accepts.iter())
            .any(|k| k != "text" && !p.accepts.contains(k) && named(k));
        if midway {
            return false;
        }
        p.accepts.is_empty()
            || p.accepts
                .iter()
                .any(|a| a == "text" || supplied.contains(a.as_str()) || named(a))
            || earlier
                .iter()
                .any(|d| self.produces(&d.tool).iter().any(|k| p.accepts.contains(k)))
    }

    /// Whether the clause names an artifact kind before its target ("this *draft* to…"),
    /// other than with its verb ("*draft* a post").
    fn names_kind(&self, clause: &ClauseAnalysis, kind: &str) -> bool {
        let toks = clause.tokens();
        let before_target =
            Lexicon::after_marker(&self.lex.target_markers, toks).unwrap_or(toks.len());
        let key = self.lex.synonyms.key(kind);
        toks[..before_target.min(toks.len())]
            .iter()
            .enumerate()
            .any(|(i, t)| t.key == key && Some(i) != clause.head_verb)
    }

    /// The best candidate at or above the threshold that the request can feed.
    fn first_fitting<'r>(
        &self,
        ranking: &'r [Candidate],
        clause: &ClauseAnalysis,
        earlier: &[Draft],
    ) -> Option<&'r Candidate> {
        let mut fitting = ranking
            .iter()
            .take_while(|c| c.score >= self.threshold)
            .filter(|c| self.fits(c, clause, earlier));
        let top = fitting.next()?;
        // "fix it" after "read the file": the clause acts on something made earlier, so of
        // candidates the words support almost equally, the one that can take it is meant.
        let takes_earlier = |id: &str| earlier.iter().any(|d| self.feeds(&d.tool, id));
        let points_back = clause
            .tokens()
            .iter()
            .any(|t| self.lex.anaphora.contains(&t.form));
        if points_back && !takes_earlier(&top.id) {
            let linked = fitting
                .take_while(|c| top.score - c.score <= LINK_MARGIN)
                .find(|c| takes_earlier(&c.id));
            if linked.is_some() {
                return linked;
            }
        }
        Some(top)
    }

    /// Seed 000's first rule: when the chosen tool is one a fitting pipeline supersedes or
    /// runs, and the pipeline makes what the tool makes, the pipeline covers the request
    /// and wins — it is the chain maintainers proved works.
    fn covering_pipeline(
        &self,
        pick: &Candidate,
        ranking: &[Candidate],
        clause: &ClauseAnalysis,
        earlier: &[Draft],
    ) -> Option<Candidate> {
        let Some(Entry::Tool(tool)) = self.catalog.entry(&pick.id) else {
            return None;
        };
        ranking
            .iter()
            .take_while(|c| c.score >= self.threshold)
            .filter(|c| {
                c.kind == waypoint_protocol::CandidateKind::Pipeline
                    && self.fits(c, clause, earlier)
            })
            .find(|c| {
                self.catalog.pipeline(&c.id).is_some_and(|p| {
                    (p.supersedes.contains(&tool.name) || p.steps.contains(&tool.name))
                        && p.produces.iter().any(|k| tool.produces.contains(k))
                        // "post this draft": the tool takes the named input, the pipeline does not.
                        && !tool.accepts.iter().any(|k| self.names_kind(clause, k) && !p.accepts.contains(k))
                })
            })
            .map(|c| {
                let mut c = c.clone();
                c.why
                    .insert(0, format!("covers `{}` and the chain around it", tool.name));
                c
            })
    }

    /// A pipeline that takes what the clause supplies and makes what its top tool makes.
    fn prefer_pipeline(&self, top: &Candidate, clause: &ClauseAnalysis) -> Option<Candidate> {
        let Some(Entry::Tool(tool)) = self.catalog.entry(&top.id) else {
            return None;
        };
        let supplied = supplied_kinds(clause);
        if supplied.is_empty() || tool.accepts.iter().any(|a| supplied.contains(a.as_str())) {
            return None;
        }
        self.catalog
            .pipelines()
            .iter()
            .find(|p| {
                p.produces.iter().any(|k| tool.produces.contains(k))
                    && p.accepts.iter().any(|a| supplied.contains(a.as_str()))
            })
            .map(|p| Candidate {
                id: p.id.clone(),
                kind: waypoint_protocol::CandidateKind::Pipeline,
                score: top.score,
                why: vec![format!(
                    "takes the {} given and produces what `{}` would",
                    supplied.iter().copied().collect::<Vec<_>>().join(", "),
                    tool.name
                )],
            })
    }

    /// A schedule (or another value) no chosen step consumes asks for a tool that takes
    /// it and accepts what the clause's last step produces.
    fn consume_leftovers(&self, clause: &ClauseAnalysis, first: usize, out: &mut Drafted) {
        let Some(last) = out.drafts.len().checked_sub(1).filter(|&l| l >= first) else {
            return;
        };
        if out.drafts[last].kind == StepKind::Unknown {
            return;
        }
        for value_kind in [ExtractedKind::Schedules] {
            if !clause.values.iter().any(|v| v.kind == value_kind) {
                continue;
            }
            let takers: Vec<&str> = self.index.takers(value_kind).collect();
            let consumed = out.drafts[first..]
                .iter()
                .any(|d| takers.contains(&d.tool.as_str()));
            if consumed {
                continue;
            }
            let produced = self.produces(&out.drafts[last].tool);
            if let Some(tool) = takers
                .iter()
                .filter_map(|id| self.catalog.tool(id))
                .find(|t| t.accepts.iter().any(|a| produced.contains(a)))
            {
                let mut d = self.new_draft(
                    &tool.name,
                    clause.segment.clause.index,
                    out.drafts[last].score,
                    format!(
                        "the request gives a {} and `{}` runs what `{}` makes on it",
                        value_kind.as_str().trim_end_matches('s'),
                        tool.name,
                        out.drafts[last].tool
                    ),
                );
                d.inputs.push(last);
                out.drafts.push(d);
            }
        }
    }

    /// Replaces runs of steps that a pipeline covers with the pipeline.
    fn collapse_pipelines(&self, analysis: &Analysis, out: &mut Drafted) {
        let mut i = 0;
        while i < out.drafts.len() {
            let mut best: Option<(usize, &waypoint_catalog::Pipeline)> = None;
            for p in self.catalog.pipelines() {
                let member = |d: &Draft| {
                    d.tool == p.id || p.steps.contains(&d.tool) || p.supersedes.contains(&d.tool)
                };
                let len = out.drafts[i..]
                    .iter()
                    .take_while(|d| d.kind != StepKind::Unknown && member(d))
                    .count();
                if len < 2 {
                    continue;
                }
                let run = &out.drafts[i..i + len];
                let makes_it = run.iter().any(|d| d.tool == p.id)
                    || run.last().is_some_and(|d| {
                        self.produces(&d.tool)
                            .iter()
                            .any(|k| p.produces.contains(k))
                    });
                // The request must be able to feed the pipeline, as at its first step.
                let feedable = run.iter().any(|d| d.tool == p.id)
                    || analysis.clause(run[0].clause).is_some_and(|c| {
                        let as_candidate = Candidate {
                            id: p.id.clone(),
                            kind: waypoint_protocol::CandidateKind::Pipeline,
                            score: 0.0,
                            why: Vec::new(),
                        };
                        self.fits(&as_candidate, c, &out.drafts[..i])
                    });
                if makes_it && feedable && best.is_none_or(|(l, _)| len > l) {
                    best = Some((len, p));
                }
            }
            if let Some((len, p)) = best {
                let run: Vec<String> = out.drafts[i..i + len]
                    .iter()
                    .map(|d| d.tool.clone())
                    .collect();
                let score = out.drafts[i..i + len]
                    .iter()
                    .map(|d| d.score)
                    .fold(0.0, f64::max);
                let mut d = self.new_draft(
                    &p.id,
                    out.drafts[i].clause,
                    score,
                    format!("pipeline supersedes the chain {}", run.join(" → ")),
                );
                d.inputs.clone_from(&out.drafts[i].inputs);
                out.drafts.splice(i..i + len, [d]);
                for later in &mut out.drafts[i + 1..] {
                    for r in &mut later.inputs {
                        if *r >= i + len {
                            *r -= len - 1;
                        } else if *r >= i {
                            *r = i;
                        }
                    }
                    later.inputs.dedup();
                }
                out.notes
                    .push(format!("`{}` covers {}", p.id, run.join(", ")));
            }
            i += 1;
        }
    }

    /// A clause that refers back ("translate it", "email them the summary") takes the
    /// output of the latest earlier step that produces something it accepts.
    fn link_references(&self, analysis: &Analysis, out: &mut Drafted) {
        // The keys of what the steps before `j` make, grown as `j` moves on.
        let mut made_before: HashSet<String> = HashSet::new();
        for j in 0..out.drafts.len() {
            self.link_one(analysis, out, j, &made_before);
            made_before.extend(
                self.produces(&out.drafts[j].tool)
                    .iter()
                    .map(|k| self.lex.synonyms.key(k)),
            );
        }
    }

    /// Links draft `j` to the latest earlier step it can take from, when its clause
    /// points back: an anaphor after its verb, or a word naming what an earlier step made.
    fn link_one(
        &self,
        analysis: &Analysis,
        out: &mut Drafted,
        j: usize,
        made_before: &HashSet<String>,
    ) {
        let d = &out.drafts[j];
        if d.kind == StepKind::Unknown || !d.inputs.is_empty() {
            return;
        }
        let Some(clause) = analysis.clause(d.clause) else {
            return;
        };
        let accepts = self.accepts(&d.tool);
        // The latest step of an earlier clause, when neither it nor this one declares
        // what it makes or takes — as tools imported from MCP servers come: then only the
        // words can say that data flows.
        let untyped = (0..j)
            .rev()
            .find(|&i| out.drafts[i].clause != d.clause && out.drafts[i].kind != StepKind::Unknown)
            .filter(|&i| self.produces(&out.drafts[i].tool).is_empty() && accepts.is_empty());
        let untyped_name: Vec<String> = untyped
            .map(|i| {
                crate::learned::name_words(&out.drafts[i].tool)
                    .split(' ')
                    .map(crate::text::stem)
                    .collect()
            })
            .unwrap_or_default();
        let refers_back = clause
            .tokens()
            .iter()
            .skip(clause.head_verb.map_or(0, |h| h + 1))
            .any(|t| {
                self.lex.anaphora.contains(&t.form)
                    || made_before.contains(&t.key)
                    || untyped_name.iter().any(|w| echoes(&t.stem, w))
            });
        if !refers_back {
            return;
        }
        if let Some(i) = (0..j)
            .rev()
            .find(|&i| {
                let e = &out.drafts[i];
                e.clause != d.clause
                    && e.kind != StepKind::Unknown
                    && self.produces(&e.tool).iter().any(|k| accepts.contains(k))
            })
            .or(untyped)
        {
            out.drafts[j].inputs.push(i);
        }
    }

    fn feeds(&self, from: &str, to: &str) -> bool {
        let accepts = self.accepts(to);
        self.produces(from).iter().any(|k| accepts.contains(k))
    }

    pub fn produces(&self, id: &str) -> &'a [String] {
        match self.catalog.entry(id) {
            Some(Entry::Tool(t)) => &t.produces,
            Some(Entry::Pipeline(p)) => &p.produces,
            Some(Entry::Plan(d)) => &d.produces,
            None => &[],
        }
    }

    pub fn accepts(&self, id: &str) -> &'a [String] {
        match self.catalog.entry(id) {
            Some(Entry::Tool(t)) => &t.accepts,
            Some(Entry::Pipeline(p)) => &p.accepts,
            Some(Entry::Plan(_)) | None => &[],
        }
    }

    /// The tool whose input schema a step's args follow (a pipeline's first tool).
    pub fn schema_tool(&self, id: &str) -> Option<&Tool> {
        match self.catalog.entry(id)? {
            Entry::Tool(t) => Some(t),
            Entry::Pipeline(p) => p.steps.first().and_then(|s| self.schema_tool(s)),
            // A plan document takes no args: its placeholders are resolved when it runs.
            Entry::Plan(_) => None,
        }
    }

    /// Fills every draft's args; returns the questions raised by what is missing. A
    /// draft given several values where its schema takes one becomes one draft per value.
    pub fn fill_args(
        &self,
        request: &str,
        analysis: &Analysis,
        payload: Option<&serde_json::Value>,
        out: &mut Drafted,
    ) {
        let names_artifact = |key: &str| self.index.names_artifact(key);
        // What each earlier step produces, grown as the loop goes (copies included).
        let mut outputs: Vec<args::Made> = Vec::new();
        let mut j = 0;
        while j < out.drafts.len() {
            let next = self.fill_one(
                request,
                analysis,
                payload,
                out,
                j,
                &outputs,
                &names_artifact,
            );
            for k in j..next {
                if out.drafts[k].kind != StepKind::Unknown {
                    let tool = &out.drafts[k].tool;
                    outputs.push(self.index.made(tool, k).unwrap_or_else(|| {
                        args::Made::new(k, tool, self.produces(tool), self.lex)
                    }));
                }
            }
            j = next;
        }
    }

    /// Fills draft `j`; returns the index after it and the copies its values made.
    #[expect(
        clippy::too_many_arguments,
        reason = "one draft of the loop in fill_args"
    )]
    fn fill_one(
        &self,
        request: &str,
        analysis: &Analysis,
        payload: Option<&serde_json::Value>,
        out: &mut Drafted,
        j: usize,
        outputs: &[args::Made],
        names_artifact: &dyn Fn(&str) -> bool,
    ) -> usize {
        let d = &out.drafts[j];
        let (Some(tool), Some(clause)) = (
            self.schema_tool(&d.tool)
                .filter(|_| d.kind != StepKind::Unknown),
            analysis.clause(d.clause),
        ) else {
            return j + 1;
        };
        let from = d.inputs.last().map(|&i| args::step_id(i));
        let before = analysis
            .clauses
            .iter()
            .position(|c| c.segment.clause.index >= d.clause)
            .unwrap_or(analysis.clauses.len());
        let (earlier, from_here) = analysis.clauses.split_at(before);
        let later = from_here.get(1..).unwrap_or_default();
        // "look up and cancel booking BK-2231": the lookup takes the booking too.
        let sharing = later
            .first()
            .filter(|next| next.is_action() && self.shared_object(clause, next).is_some());
        // The object of the nearest earlier action clause, when it names something of its own.
        let antecedent = earlier.iter().rfind(|c| c.is_action()).and_then(|c| {
            let words = c.object_text(request)?;
            let own = c
                .tokens()
                .iter()
                .skip(c.head_verb.map_or(0, |h| h + 1))
                .any(|t| self.lex.is_content(t) && !self.lex.anaphora.contains(&t.form));
            (own && c.values.is_empty()).then_some(words)
        });
        let carried: Vec<(String, serde_json::Value)> = out.drafts[..j]
            .iter()
            .rev()
            .flat_map(|e| &e.args)
            .filter(|(_, v)| !args::is_symbolic(v))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let inputs = Inputs {
            request,
            clause,
            payload,
            from_step: from.as_deref(),
            vague: clause.vague_object.is_some(),
            names_artifact,
            earlier,
            later,
            antecedent: antecedent.as_deref(),
            own_words: self.index.own_words(&tool.name),
            own_name: self.index.name_stems(&tool.name),
            outputs,
            carried: &carried,
            sharing,
        };
        let mut filled = args::fill(tool, self.index.arg_specs(&tool.name), &inputs, self.lex);
        self.fill_from_facts(tool, &inputs, analysis, &out.told, d.clause, &mut filled);
        let lookups = self.lookups(tool, &inputs, &filled, &out.drafts[j]);
        let j = j + lookups.len();
        if !lookups.is_empty() {
            let answered = take_lookups(&mut out.drafts, j - lookups.len(), lookups, &mut filled);
            out.questions.extend(answered);
        }
        let args::Filled {
            args,
            open,
            fan_out: fan,
            linked,
        } = filled;
        if clause.vague_object.is_none() {
            out.questions.extend(open.into_iter().map(|o| o.question));
        }
        let draft = &mut out.drafts[j];
        draft.args = args;
        for i in linked {
            if !draft.inputs.contains(&i) {
                draft.inputs.push(i);
            }
            draft.after.retain(|a| *a != i);
        }
        let Some((name, values)) = fan else {
            return j + 1;
        };
        let draft = &mut out.drafts[j];
        if draft.tool == tool.name
            && draft.args.keys().all(|k| *k == name)
            && let Some((twin, list)) = self.batch_twin(tool, &name, &values)
        {
            let all = match values.len() {
                2 => "both".to_string(),
                n => format!("all {n}"),
            };
            draft
                .rationale
                .push_str(&format!("; `{twin}` takes {all} `{list}` in one call"));
            draft.tool = twin.to_string();
            draft.args =
                serde_json::Map::from_iter([(list.to_string(), serde_json::Value::Array(values))]);
            return j + 1;
        }
        fan_out(&mut out.drafts, j, &name, &values);
        let copies = values.len().saturating_sub(1);
        j + 1 + copies
    }

    /// Fills what the step's own clause leaves open from the facts stated beside it
    /// ("Add Sarah Lee as a contact. Her number is 123-456-7890"), each read as the step's
    /// clause would be.
    fn fill_from_facts(
        &self,
        tool: &Tool,
        inputs: &Inputs<'_>,
        analysis: &Analysis,
        told: &[(usize, usize)],
        host: usize,
        filled: &mut args::Filled,
    ) {
        let facts = told
            .iter()
            .filter(|(_, h)| *h == host)
            .filter_map(|(f, _)| analysis.clause(*f));
        for fact in facts {
            let stated = Inputs {
                clause: fact,
                vague: false,
                ..*inputs
            };
            let from_fact = args::fill(tool, self.index.arg_specs(&tool.name), &stated, self.lex);
            for (arg, value) in from_fact.args {
                if args::is_symbolic(&value) {
                    continue;
                }
                if filled.open.iter().any(|o| o.arg == arg) {
                    filled.answer(&arg, value);
                } else if !filled.args.contains_key(&arg) {
                    filled.args.insert(arg, value);
                }
            }
        }
    }

    /// The one tool that does what `tool` does to several values at once, where a clause
    /// gives several values for `tool`'s argument `name` ("read a.txt and b.txt" with
    /// `read_multiple_files` beside `read_text_file`): a tool whose name starts with the
    /// same verb, that does as much harm, and whose one required argument is a list of
    /// what `name` takes, every value fitting it. Returns it and that argument.
    fn batch_twin<'c>(
        &'c self,
        tool: &Tool,
        name: &str,
        values: &[serde_json::Value],
    ) -> Option<(&'c str, &'c str)> {
        // The stem of the first word past a server prefix: `fs.read_text_file` and
        // `fs.get_file_info` share their server, not what they do, and a synonym ("open"
        // for "read") is another tool's way of saying something else.
        let verb = |t: &Tool| {
            args::name_stems(crate::text::without_server(&t.name), self.lex)
                .into_iter()
                .next()
        };
        let item = tool.properties().find(|(n, _)| *n == name)?.1.get("type")?;
        let mine = verb(tool)?;
        let mut twins = self
            .catalog
            .tools()
            .iter()
            .filter(|t| {
                t.name != tool.name && t.effects == tool.effects && verb(t).as_ref() == Some(&mine)
            })
            .filter_map(|t| {
                let mut required = t.required();
                let list = required.next().filter(|_| required.next().is_none())?;
                let schema = t.properties().find(|(n, _)| *n == list)?.1;
                let items = schema.get("items")?;
                let takes_all = schema.get("type")?.as_str() == Some("array")
                    && items.get("type") == Some(item)
                    && values.iter().all(|v| args::fits(v, items));
                takes_all.then_some((t.name.as_str(), list))
            });
        let found = twins.next()?;
        // Two such tools: which one is meant is not the planner's to guess.
        twins.next().is_none().then_some(found)
    }
}

/// A step that looks up what another needs, before it is placed: the draft (args filled),
/// the consumer's arguments it answers, and the questions its own gaps raise.
struct Lookup {
    draft: Draft,
    answers: Vec<String>,
    questions: Vec<String>,
}

impl Planner<'_> {
    /// The lookups a step needs: a required id the request leaves open (`artistId`,
    /// `originSkyId`) that exactly one other catalog tool names among what it makes
    /// (`artist_id`, `skyId`) is that tool's output, looked up in a step of its own from
    /// the same clause. Arguments that differ only by the words before the product
    /// (`originSkyId` and `originEntityId` against `destinationSkyId`) share one lookup
    /// per prefix, and the prefix picks the words the lookup takes ("from New York");
    /// without one it takes the clause's first proper name ("restaurants in Rome"). A
    /// required name (`restaurant_name`: the lexicon's `looked_up_args`) the request
    /// leaves open is looked up the same way, by a tool that makes it under its whole
    /// name, and the lookup reads its own arguments from the clause ("a *Chinese*
    /// restaurant *in Boston*").
    fn lookups(
        &self,
        tool: &Tool,
        inputs: &Inputs<'_>,
        filled: &args::Filled,
        consumer: &Draft,
    ) -> Vec<Lookup> {
        // (maker, prefix, whether an id asked for it, the arguments it answers)
        let mut groups: Vec<(&Tool, String, bool, Vec<String>)> = Vec::new();
        for arg in filled.open.iter().map(|o| &o.arg) {
            let id = args::names_an_id(arg, self.lex);
            if !id && !self.lex.looked_up_args.contains(&args::last_name_word(arg)) {
                continue;
            }
            // A name is looked up only by a tool that makes it under its whole name.
            let Some((maker, prefix)) = self
                .maker_of(arg, &tool.name)
                .filter(|(_, prefix)| id || prefix.is_empty())
            else {
                continue;
            };
            match groups
                .iter_mut()
                .find(|(m, p, ..)| m.name == maker.name && *p == prefix)
            {
                Some((.., args)) => args.push(arg.clone()),
                None => groups.push((maker, prefix, id, vec![arg.clone()])),
            }
        }
        groups
            .into_iter()
            .map(|(maker, prefix, id, answers)| {
                let own = Inputs {
                    from_step: None,
                    own_words: self.index.own_words(&maker.name),
                    own_name: self.index.name_stems(&maker.name),
                    ..*inputs
                };
                let specs = self.index.arg_specs(&maker.name);
                let mut lf = args::fill(maker, specs, &own, self.lex);
                let focus = if prefix.is_empty() {
                    args::proper_run(inputs.clause, inputs.request)
                } else {
                    args::words_for(&prefix, tool, inputs, self.lex)
                };
                // An id is looked up by the name the clause gives; a name by what the
                // clause says of it, as the lookup's own arguments read it.
                let text_arg = specs
                    .and_then(|specs| args::free_text_arg(maker, specs))
                    .filter(|a| id || lf.open.iter().any(|o| o.arg == *a));
                if let (Some(focus), Some(name)) = (focus, text_arg) {
                    lf.answer(name, serde_json::Value::String(focus));
                }
                let mut draft = self.new_draft(
                    &maker.name,
                    consumer.clause,
                    consumer.score,
                    format!(
                        "looks up {} for {}: the request does not give it and only {} makes it",
                        answers.join(", "),
                        consumer.tool,
                        maker.name
                    ),
                );
                draft.args = std::mem::take(&mut lf.args);
                draft.after.clone_from(&consumer.after);
                Lookup {
                    draft,
                    answers,
                    questions: lf.questions().collect(),
                }
            })
            .collect()
    }

    /// The one tool (not `consumer`) that makes what `arg` is named after, by the closest
    /// naming any tool has (see [`args::made_for`]), with the words before the product.
    fn maker_of(&self, arg: &str, consumer: &str) -> Option<(&Tool, String)> {
        let mut best: Vec<(u8, &Tool, String)> = Vec::new();
        for t in self.catalog.tools().iter().filter(|t| t.name != consumer) {
            let Some((level, prefix)) = t
                .produces
                .iter()
                .filter_map(|k| args::made_for(arg, k))
                .max()
            else {
                continue;
            };
            if best.first().is_none_or(|b| level > b.0) {
                best.clear();
            }
            if best.first().is_none_or(|b| level == b.0) {
                best.push((level, t, prefix));
            }
        }
        match best.as_slice() {
            [(_, t, prefix)] => Some((t, prefix.clone())),
            _ => None,
        }
    }
}

/// Places `lookups` before the draft at `at`, which becomes their consumer: its open
/// arguments they answer take their outputs and lose their questions. Returns the
/// lookups' own questions.
fn take_lookups(
    drafts: &mut Vec<Draft>,
    at: usize,
    lookups: Vec<Lookup>,
    filled: &mut args::Filled,
) -> Vec<String> {
    make_room(drafts, at, lookups.len());
    let mut questions = Vec::new();
    let mut placed = Vec::new();
    for (i, l) in lookups.into_iter().enumerate() {
        for arg in &l.answers {
            filled.answer(arg, args::reference(&args::step_id(at + i)));
        }
        filled.linked.push(at + i);
        questions.extend(l.questions);
        placed.push(l.draft);
    }
    drafts.splice(at..at, placed);
    questions
}

/// Drops a step that asks again for the step before it: "estimate the depth of objects
/// in my image. Please help me analyze this image to understand the depth" routes both
/// sentences to one tool, and the second, pointing back at "this image", would take the
/// first one's output. A clause that names no value of its own, is not ordered after the
/// one before ("then"), and whose only input is the same tool's step for the action
/// clause just before it restates that request; its step would run the tool on its own
/// result. Later steps that took from it take from the step it restated.
fn drop_restatements(analysis: &Analysis, drafts: &mut Vec<Draft>) {
    let mut j = 1;
    while j < drafts.len() {
        let d = &drafts[j];
        let restates = match d.inputs.as_slice() {
            [i] => {
                let e = &drafts[*i];
                let previous_action = analysis
                    .clauses
                    .iter()
                    .filter(|c| c.is_action() && c.segment.clause.index < d.clause)
                    .map(|c| c.segment.clause.index)
                    .next_back();
                (e.tool == d.tool
                    && e.kind == d.kind
                    && previous_action == Some(e.clause)
                    && analysis
                        .clause(d.clause)
                        .is_some_and(|c| !c.segment.follows && c.values.is_empty()))
                .then_some(*i)
            }
            _ => None,
        };
        let Some(i) = restates else {
            j += 1;
            continue;
        };
        remove_draft(drafts, j, i);
    }
}

/// Removes draft `at`; the drafts after it that took from or followed it take from or
/// follow draft `to` (an index after the removal) instead.
fn remove_draft(drafts: &mut Vec<Draft>, at: usize, to: usize) {
    drafts.remove(at);
    for later in drafts.iter_mut().skip(at) {
        for list in [&mut later.inputs, &mut later.after] {
            for r in list.iter_mut() {
                if *r == at {
                    *r = to;
                } else if *r > at {
                    *r -= 1;
                }
            }
            list.sort_unstable();
            list.dedup();
        }
    }
}

/// Points the `inputs` and `after` of `drafts` that name a draft at `from` or later `n`
/// further on, for `n` drafts about to be inserted at `from`.
/// Whether a tool takes what it acts on by id: a required argument named so (`id`,
/// `movie_id`), or, without a schema, a description that says "ID" — and a name that
/// does not (`get_dish_id` gives ids).
fn takes_by_id(tool: &Tool) -> bool {
    let is_id = |w: &str| w.eq_ignore_ascii_case("id");
    if args::name_parts(&tool.name).iter().any(|w| is_id(w)) {
        return false;
    }
    if tool.properties().next().is_some() {
        return tool
            .required()
            .any(|r| args::name_parts(r).last().is_some_and(|w| is_id(w)));
    }
    tool.description
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| w == "ID" || w == "id")
}

fn make_room(drafts: &mut [Draft], from: usize, n: usize) {
    for d in drafts {
        for list in [&mut d.inputs, &mut d.after] {
            list.iter_mut()
                .filter(|r| **r >= from)
                .for_each(|r| *r += n);
        }
    }
}

/// Makes draft `j` one draft per value of `name`; later drafts that consumed or
/// followed it consume or follow every copy.
fn fan_out(drafts: &mut Vec<Draft>, j: usize, name: &str, values: &[serde_json::Value]) {
    let extra = values.len().saturating_sub(1);
    if extra == 0 {
        return;
    }
    make_room(&mut drafts[j + 1..], j + 1, extra);
    for later in drafts.iter_mut().skip(j + 1) {
        for list in [&mut later.inputs, &mut later.after] {
            if list.contains(&j) {
                list.extend(j + 1..=j + extra);
            }
        }
    }
    let base = drafts[j].clone();
    let copies = values.iter().map(|v| {
        let mut d = base.clone();
        d.args.insert(name.to_string(), v.clone());
        d
    });
    drafts.splice(j..=j, copies);
}

/// Orders the steps the request orders: a clause a sequencer opened ("then build")
/// starts a phase, and each step of a phase follows the steps of the phase before it
/// that it does not already consume. Steps within a phase ("… and …") stay unordered.
fn order_phases(analysis: &Analysis, drafts: &mut [Draft]) {
    let mut phase_of_clause = std::collections::HashMap::new();
    let mut phase = 0usize;
    for c in &analysis.clauses {
        if c.segment.follows {
            phase += 1;
        }
        phase_of_clause.insert(c.segment.clause.index, phase);
    }
    let phase = |d: &Draft| phase_of_clause.get(&d.clause).copied().unwrap_or(0);
    // The steps that run, by phase, among the drafts before this one.
    let mut running: std::collections::BTreeMap<usize, Vec<usize>> =
        std::collections::BTreeMap::new();
    for (j, draft) in drafts.iter_mut().enumerate() {
        let mine = phase(draft);
        // The latest earlier phase that has a step that runs.
        if let Some((_, steps)) = running.range(..mine).next_back() {
            draft.after = steps
                .iter()
                .copied()
                .filter(|i| !draft.inputs.contains(i))
                .collect();
        }
        if draft.kind != StepKind::Unknown {
            running.entry(mine).or_default().push(j);
        }
    }
}

/// The first reasons a candidate was ranked for, as a rationale says them.
fn first_reasons(why: &[String]) -> String {
    why.iter().take(4).cloned().collect::<Vec<_>>().join(", ")
}

fn deterministic(t: &Tool) -> bool {
    t.run
        .as_ref()
        .is_some_and(waypoint_catalog::RunSpec::is_deterministic)
}

/// Artifact kinds the clause itself supplies (a URL, a PDF path, quoted text…).
fn supplied_kinds(clause: &ClauseAnalysis) -> HashSet<&'static str> {
    let mut kinds = HashSet::new();
    for v in &clause.values {
        match v.kind {
            ExtractedKind::Urls => {
                kinds.insert("url");
                if v.value.to_ascii_lowercase().ends_with(".pdf") {
                    kinds.insert("pdf");
                }
            }
            ExtractedKind::Paths => {
                kinds.insert("file");
                if v.value.to_ascii_lowercase().ends_with(".pdf") {
                    kinds.insert("pdf");
                }
            }
            ExtractedKind::Quoted => {
                kinds.insert("text");
            }
            _ => {}
        }
    }
    kinds
}

/// How much a wrong choice of a tool can change: reading (here or on the web) nothing,
/// writing some, destroying most. Ordered from least to most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Harm {
    None,
    Changes,
    Destroys,
}

impl Harm {
    fn of(effects: waypoint_catalog::Effects) -> Self {
        match effects {
            waypoint_catalog::Effects::Read | waypoint_catalog::Effects::External => Self::None,
            waypoint_catalog::Effects::Write => Self::Changes,
            waypoint_catalog::Effects::Destructive => Self::Destroys,
        }
    }
}

/// Whether a word of the request names what a step whose name has `name_stem` makes:
/// the same stem to five letters ("the *summary*" after `summarize_text`, "the
/// *translation*" after `translate`).
fn echoes(word_stem: &str, name_stem: &str) -> bool {
    const SHARED: usize = 5;
    word_stem.len() >= SHARED
        && name_stem.len() >= SHARED
        && word_stem.as_bytes()[..SHARED] == name_stem.as_bytes()[..SHARED]
}

fn gap(clause: &ClauseAnalysis, closest: Option<&Candidate>) -> Draft {
    let text = &clause.segment.clause.text;
    let rationale = match closest {
        Some(c) => format!(
            "gap: no catalog tool can “{text}” (closest: `{}` at {:.2}, below the threshold)",
            c.id, c.score
        ),
        None => format!("gap: no catalog tool can “{text}”"),
    };
    Draft {
        tool: waypoint_protocol::UNKNOWN_TOOL.to_string(),
        kind: StepKind::Unknown,
        clause: clause.segment.clause.index,
        rationale,
        inputs: Vec::new(),
        after: Vec::new(),
        args: serde_json::Map::new(),
        score: closest.map_or(0.0, |c| c.score),
    }
}
