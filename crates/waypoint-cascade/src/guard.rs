//! Evidence before adoption: a model's step stands only where the router sees some sign
//! of its entry, and a gap the router is sure of stays a gap.
//!
//! Models force-fit tools: asked about "book a flight" over a catalog of code tools, a
//! model names some code tool rather than say none fits. The router's scores are the
//! check. A model may rescue a paraphrase the router under-scores (its entry scores
//! above the *assisted floor*, which is below the plain threshold), but it may not
//! invent a fit the router sees no sign of. See docs/llm.md, "The guard".

use waypoint_core::ClauseEvidence;
use waypoint_protocol::{Step, StepKind, UNKNOWN_TOOL};

/// Route score below which the router sees no sign of an entry in a clause: a model's
/// step for it is not adopted, and a gap whose clause has no entry this high is not
/// sent to the model.
pub const DEFAULT_ASSISTED_FLOOR: f64 = 0.2;

/// What the guard kept of a model's steps.
#[derive(Debug, Clone, PartialEq)]
pub struct Guarded {
    pub steps: Vec<Step>,
    /// One line per step the guard turned into a gap or put back, for the rationale.
    pub notes: Vec<String>,
}

/// Whether a deterministic gap could be rescued: its clause ranks some entry at or above
/// the floor. Gaps in clauses where nothing reaches it are the router's honest "no".
pub fn rescuable(deterministic: &[Step], evidence: &[ClauseEvidence], floor: f64) -> bool {
    deterministic
        .iter()
        .filter(|s| s.kind == StepKind::Unknown)
        .any(|s| {
            s.clause
                .and_then(|c| of_clause(evidence, c))
                .is_none_or(|e| e.best() >= floor)
        })
}

/// Checks the model's `steps` against the router's `evidence` for the request:
/// a step whose entry scores below `floor` in every clause becomes a gap that records the
/// suggestion; then every gap of the `deterministic` plan whose clause no kept step is
/// evidenced in comes back, so an honest "no tool fits" is never lost. Names
/// `in_catalog` does not know are left for validation, which says so.
pub fn guard(
    steps: Vec<Step>,
    evidence: &[ClauseEvidence],
    deterministic: &[Step],
    floor: f64,
    in_catalog: impl Fn(&str) -> bool,
) -> Guarded {
    let mut notes = Vec::new();
    let mut kept: Vec<Step> = steps
        .into_iter()
        .map(|mut step| {
            // A name outside the catalog is the validator's to report.
            if step.kind == StepKind::Unknown || !in_catalog(&step.tool) {
                return step;
            }
            let best = evidence
                .iter()
                .map(|e| e.score(&step.tool))
                .fold(0.0, f64::max);
            if best < floor {
                let note = format!(
                    "the model suggested `{}`, but the router sees too little sign of it \
                     here ({best:.2}, below the assisted floor {floor:.2})",
                    step.tool
                );
                notes.push(note.clone());
                step.kind = StepKind::Unknown;
                step.tool = UNKNOWN_TOOL.to_string();
                step.args.clear();
                step.input_refs.clear();
                step.rationale = format!("gap: {note}");
            }
            step
        })
        .collect();
    // A clause the router ranked nothing in (not an action, or no shared word) scores 0.
    let covered = |clause: usize, kept: &[Step]| {
        let e = of_clause(evidence, clause);
        kept.iter()
            .any(|s| s.kind != StepKind::Unknown && e.map_or(0.0, |e| e.score(&s.tool)) >= floor)
    };
    for gap in deterministic.iter().filter(|s| s.kind == StepKind::Unknown) {
        let Some(clause) = gap.clause else { continue };
        let known_gap = kept
            .iter()
            .any(|s| s.kind == StepKind::Unknown && s.clause == Some(clause));
        if known_gap || covered(clause, &kept) {
            continue;
        }
        let text = of_clause(evidence, clause).map_or("a part of the request", |e| e.text.as_str());
        notes.push(format!(
            "“{text}” stays a gap: no step of the model's plan is one the router sees in it"
        ));
        let mut step = gap.clone();
        step.id = format!("s{}", kept.len() + 1);
        step.input_refs.clear();
        step.after.clear();
        // Before the first step of a later clause, so the plan keeps the request's order.
        let at = kept
            .iter()
            .position(|s| evidence_clause(s, evidence, floor).is_some_and(|c| c > clause))
            .unwrap_or(kept.len());
        kept.insert(at, step);
    }
    Guarded {
        steps: renumber(kept),
        notes,
    }
}

fn of_clause(evidence: &[ClauseEvidence], clause: usize) -> Option<&ClauseEvidence> {
    evidence.iter().find(|e| e.clause == clause)
}

/// The clause a step belongs to: its own, else the first clause that evidences its entry.
fn evidence_clause(step: &Step, evidence: &[ClauseEvidence], floor: f64) -> Option<usize> {
    step.clause.or_else(|| {
        evidence
            .iter()
            .find(|e| e.score(&step.tool) >= floor)
            .map(|e| e.clause)
    })
}

/// Gives steps ids `s1…` in order, rewriting the references between them.
fn renumber(steps: Vec<Step>) -> Vec<Step> {
    let old: Vec<String> = steps.iter().map(|s| s.id.clone()).collect();
    let new_id = |id: &str| {
        old.iter()
            .position(|o| o == id)
            .map(|i| format!("s{}", i + 1))
    };
    steps
        .into_iter()
        .enumerate()
        .map(|(i, mut s)| {
            s.id = format!("s{}", i + 1);
            s.order = u32::try_from(i + 1).unwrap_or(u32::MAX);
            s.input_refs = s.input_refs.iter().filter_map(|r| new_id(r)).collect();
            s.after = s.after.iter().filter_map(|r| new_id(r)).collect();
            s
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(id: &str, tool: &str) -> Step {
        Step {
            id: id.into(),
            order: 1,
            kind: if tool == UNKNOWN_TOOL {
                StepKind::Unknown
            } else {
                StepKind::Tool
            },
            tool: tool.into(),
            args: serde_json::Map::new(),
            input_refs: Vec::new(),
            after: Vec::new(),
            group: 0,
            rationale: String::new(),
            clause: None,
        }
    }

    fn evidence(clause: usize, scores: &[(&str, f64)]) -> ClauseEvidence {
        ClauseEvidence {
            clause,
            text: format!("clause {clause}"),
            scores: scores.iter().map(|(i, s)| ((*i).to_string(), *s)).collect(),
        }
    }

    #[test]
    fn a_step_below_the_floor_becomes_a_gap_with_the_suggestion() {
        let ev = [evidence(0, &[("web_search", 0.12)])];
        let out = guard(vec![step("s1", "web_search")], &ev, &[], 0.2, |_| true);
        assert_eq!(out.steps[0].kind, StepKind::Unknown);
        assert!(
            out.steps[0].rationale.contains("`web_search`"),
            "{:?}",
            out.steps[0]
        );
        assert!(out.steps[0].rationale.contains("0.12"));
        assert_eq!(out.notes.len(), 1);
    }

    #[test]
    fn a_step_at_or_above_the_floor_is_adopted() {
        let ev = [evidence(0, &[("web_search", 0.25)])];
        let out = guard(vec![step("s1", "web_search")], &ev, &[], 0.2, |_| true);
        assert_eq!(out.steps[0].kind, StepKind::Tool);
        assert_eq!(out.steps[0].tool, "web_search");
        assert!(out.notes.is_empty());
    }

    #[test]
    fn a_gap_the_model_dropped_comes_back_in_its_place() {
        // "order a pizza and remember my address": the model kept only the memory step.
        let ev = [
            evidence(0, &[("memory_store", 0.05)]),
            evidence(1, &[("memory_store", 0.7)]),
        ];
        let mut gap = step("s1", UNKNOWN_TOOL);
        gap.clause = Some(0);
        let mut store = step("s2", "memory_store");
        store.clause = Some(1);
        let det = [gap, store];
        let out = guard(vec![step("s1", "memory_store")], &ev, &det, 0.2, |_| true);
        let tools: Vec<&str> = out.steps.iter().map(|s| s.tool.as_str()).collect();
        assert_eq!(tools, [UNKNOWN_TOOL, "memory_store"]);
        assert_eq!(out.steps[1].id, "s2");
    }

    #[test]
    fn a_zero_floor_adopts_everything_and_puts_no_gap_back() {
        let mut gap = step("s1", UNKNOWN_TOOL);
        gap.clause = Some(3);
        let out = guard(vec![step("s1", "a")], &[], &[gap], 0.0, |_| true);
        let tools: Vec<&str> = out.steps.iter().map(|s| s.tool.as_str()).collect();
        assert_eq!(tools, ["a"]);
        assert!(out.notes.is_empty());
    }

    #[test]
    fn references_follow_renumbering() {
        let ev = [evidence(0, &[("a", 0.9), ("b", 0.9)])];
        let mut b = step("s2", "b");
        b.input_refs = vec!["s1".into()];
        let mut gap = step("s1", UNKNOWN_TOOL);
        gap.clause = Some(0);
        // The deterministic gap is covered (clause 0 evidences `a`), so nothing is added.
        let out = guard(vec![step("s1", "a"), b], &ev, &[gap], 0.2, |_| true);
        assert_eq!(out.steps.len(), 2);
        assert_eq!(out.steps[1].input_refs, ["s1"]);
    }

    #[test]
    fn only_gaps_with_some_candidate_at_the_floor_are_rescuable() {
        let mut gap = step("s1", UNKNOWN_TOOL);
        gap.clause = Some(0);
        let det = [gap];
        assert!(!rescuable(&det, &[evidence(0, &[("a", 0.1)])], 0.2));
        assert!(rescuable(&det, &[evidence(0, &[("a", 0.3)])], 0.2));
    }
}
