//! How steps feed each other: values no step consumed, pipelines that cover a run of
//! steps, and clauses that point back at an earlier step's output.

use waypoint_catalog::Entry;
use waypoint_protocol::{Candidate, ExtractedKind, StepKind};

use crate::hash::HashSet;
use crate::understand::{Analysis, ClauseAnalysis};

use super::{Draft, Drafted, Planner, echoes};

impl<'a> Planner<'a> {
    /// A schedule (or another value) no chosen step consumes asks for a tool that takes
    /// it and accepts what the clause's last step produces.
    pub(super) fn consume_leftovers(
        &self,
        clause: &ClauseAnalysis,
        first: usize,
        out: &mut Drafted,
    ) {
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
    pub(super) fn collapse_pipelines(&self, analysis: &Analysis, out: &mut Drafted) {
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
    pub(super) fn link_references(&self, analysis: &Analysis, out: &mut Drafted) {
        // The keys of what the steps before `j` make, grown as `j` moves on.
        let mut made_before: HashSet<String> = HashSet::default();
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
    /// points back: an anaphor or a possessive of a thing ("add *its* main points") after
    /// its verb, or a word naming what an earlier step made.
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
        // The latest earlier step that makes what this one takes.
        let feeder = |out: &Drafted| {
            (0..j).rev().find(|&i| {
                let e = &out.drafts[i];
                e.clause != d.clause
                    && e.kind != StepKind::Unknown
                    && self.produces(&e.tool).iter().any(|k| accepts.contains(k))
            })
        };
        // A word that echoes the name of the step it would take from points back to it:
        // "email *the translation*" after `translate_text`.
        let echoed_name: Vec<String> = untyped
            .or_else(|| feeder(out))
            .map(|i| {
                crate::learned::name_words(&out.drafts[i].tool)
                    .split(' ')
                    .map(crate::text::stem)
                    .collect()
            })
            .unwrap_or_default();
        let toks = clause.tokens();
        // "save *the best* link": one picked from several things found before.
        let selects = |i: usize| {
            self.lex.words.selecting.contains(&toks[i].form)
                && i.checked_sub(1)
                    .is_some_and(|b| self.lex.articles.existing.contains(&toks[b].form))
        };
        let refers_back = (clause.head_verb.map_or(0, |h| h + 1)..toks.len()).any(|i| {
            let t = &toks[i];
            self.lex.anaphora.contains(&t.form)
                || self.lex.words.thing_possessives.contains(&t.form)
                || made_before.contains(&t.key)
                || echoed_name.iter().any(|w| echoes(&t.stem, w))
                || selects(i)
        });
        if !refers_back {
            return;
        }
        if let Some(i) = feeder(out).or(untyped) {
            out.drafts[j].inputs.push(i);
        }
    }

    pub(super) fn feeds(&self, from: &str, to: &str) -> bool {
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
}
