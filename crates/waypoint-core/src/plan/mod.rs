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
//!
//! Each stage lives in a module of its own:
//! - `choose`: which entry each clause asks for (evidence, routing, pipelines,
//!   harm margins, several requests in one clause);
//! - `together`: which clauses are part of a neighbour's request rather than one of
//!   their own;
//! - `link`: leftover values, pipelines that cover a run of steps, references back;
//! - `revise`: edits to the list of drafts (a need said twice, prerequisites,
//!   lookups, restatements, phases);
//! - `fill`: arguments from the request, facts and lookups.

use waypoint_catalog::{Catalog, Entry, Tool};
use waypoint_protocol::{Candidate, ExtractedKind, StepKind};

use crate::hash::HashSet;
use crate::lexicon::Lexicon;
use crate::route::RouteIndex;
use crate::understand::{Analysis, ClauseAnalysis};

mod choose;
mod fill;
mod link;
mod revise;
mod together;

pub use revise::{TakenFirst, taken_first};

use revise::{drop_restatements, order_phases};

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

impl Planner<'_> {
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
                out.drafts.push(self.candidate_draft(
                    stored,
                    clause.segment.clause.index,
                    "a stored plan fits",
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
                    .or_else(|| self.last_step_only(top, &ranking, clause))
                    .unwrap_or_else(|| top.clone());
                if let Some(why) = self.too_close_to_harm(&pick, &ranking, clause) {
                    let mut g = gap(clause, Some(&pick));
                    g.rationale = why;
                    out.drafts.push(g);
                    self.consume_leftovers(clause, first, &mut out);
                    continue;
                }
                out.drafts.push(self.candidate_draft(
                    &pick,
                    clause.segment.clause.index,
                    "best match",
                ));
                self.other_requests(clause, &pick.id, &tops, &mut out.drafts);
                self.make_what_it_takes(clause, &ranking, &mut out.drafts);
                self.read_what_it_names(clause, &mut out.drafts);
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

    /// A draft for the candidate `c`: its rationale `why`, then the score and the first
    /// reasons it was ranked for ("best match (0.82: summarize, text)").
    fn candidate_draft(&self, c: &Candidate, clause: usize, why: &str) -> Draft {
        let rationale = format!("{why} ({:.2}: {})", c.score, first_reasons(&c.why));
        self.new_draft(&c.id, clause, c.score, rationale)
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
    let mut kinds = HashSet::default();
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
