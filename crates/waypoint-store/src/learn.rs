//! The my-plans projection and the learned-plan rule, computed from history rows alone.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::model::{HistoryFilter, HistoryRow, Outcome, StoreError};
use crate::store::HistoryStore;

/// When a sequence becomes a learned plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LearnRule {
    /// Successful runs with the same sequence needed (one acceptance is enough).
    pub min_ok: usize,
}

impl Default for LearnRule {
    fn default() -> Self {
        Self { min_ok: 3 }
    }
}

/// How often a tool sequence was seen for one intent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SequenceCount {
    pub tools: Vec<String>,
    pub count: usize,
    pub ok: usize,
}

/// One intent hash in a caller's history (the my-plans resource).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct MyPlan {
    pub intent_sha: String,
    pub count: usize,
    pub outcomes: BTreeMap<String, usize>,
    pub sequences: Vec<SequenceCount>,
    /// The sequence served as a learned plan, if one is stable.
    pub stable: Option<Vec<String>>,
    /// The newest row's time, kept in Unix seconds, written as `last_at` (RFC 3339).
    #[serde(
        rename = "last_at",
        serialize_with = "waypoint_protocol::time::secs::serialize"
    )]
    #[schemars(rename = "last_at", schema_with = "waypoint_protocol::time::schema")]
    pub last_at_unix: i64,
}

/// How many of an intent's newest rows decide its learned plan: enough to see a stable
/// sequence and the failure that ends it, and few enough that a request asked
/// thousands of times costs no more to plan than one asked a few times.
pub const LEARN_WINDOW: u32 = 20;

/// The history query [`learned_for`] reads for a request: its intent's newest rows.
fn learn_filter(request: &str) -> HistoryFilter {
    HistoryFilter {
        intent_sha: Some(crate::intent_sha(request)),
        limit: Some(LEARN_WINDOW),
        ..HistoryFilter::default()
    }
}

/// The tool sequence `caller`'s history has learned for `request`, if any: [`learned`]
/// over the intent's newest rows. The CLI and the server both plan through this.
pub async fn learned_for(
    store: &impl HistoryStore,
    caller: &str,
    request: &str,
    rule: LearnRule,
    now: i64,
) -> Result<Option<Vec<String>>, StoreError> {
    let rows = store.history(caller, &learn_filter(request), now).await?;
    Ok(learned(&rows, rule))
}

/// The learned sequence for one intent's rows, from evidence only: of the rows since the
/// last failed run, the newest accepted sequence, else a sequence at least `min_ok`
/// successful runs share. Rows that only record planning count for nothing: a plan made
/// three times is not a plan that worked three times.
///
/// `rows` come newest first, as [`HistoryStore::history`] returns them. Times are whole
/// seconds, so that order is what tells a failed run from the successes recorded in the
/// same second before it.
pub fn learned(rows: &[HistoryRow], rule: LearnRule) -> Option<Vec<String>> {
    // Oldest first; the sort is stable, so rows of one second keep the store's order.
    let mut sorted: Vec<&HistoryRow> = rows.iter().rev().filter(|r| !r.steps.is_empty()).collect();
    sorted.sort_by_key(|r| r.at_unix);
    let since_failure = match sorted.iter().rposition(|r| r.outcome.is_failure()) {
        Some(i) => &sorted[i + 1..],
        None => &sorted[..],
    };
    if let Some(accepted) = since_failure
        .iter()
        .rev()
        .find(|r| r.outcome == Outcome::Accepted)
    {
        return Some(accepted.sequence());
    }
    let mut counts: BTreeMap<Vec<String>, usize> = BTreeMap::new();
    for r in since_failure.iter().filter(|r| r.outcome == Outcome::Ok) {
        *counts.entry(r.sequence()).or_default() += 1;
    }
    counts
        .into_iter()
        .filter(|(_, n)| *n >= rule.min_ok)
        .max_by_key(|(_, n)| *n)
        .map(|(seq, _)| seq)
}

/// Groups a caller's rows by intent, newest intent first.
pub fn project(rows: &[HistoryRow], rule: LearnRule) -> Vec<MyPlan> {
    let mut by_intent: BTreeMap<&str, Vec<HistoryRow>> = BTreeMap::new();
    for r in rows {
        by_intent.entry(&r.intent_sha).or_default().push(r.clone());
    }
    let mut out: Vec<MyPlan> = by_intent
        .into_iter()
        .map(|(sha, rows)| {
            let mut outcomes = BTreeMap::new();
            let mut seqs: BTreeMap<Vec<String>, (usize, usize)> = BTreeMap::new();
            for r in &rows {
                *outcomes.entry(r.outcome.as_str().to_string()).or_default() += 1;
                let e = seqs.entry(r.sequence()).or_default();
                e.0 += 1;
                e.1 += usize::from(r.outcome.is_success());
            }
            let mut sequences: Vec<SequenceCount> = seqs
                .into_iter()
                .map(|(tools, (count, ok))| SequenceCount { tools, count, ok })
                .collect();
            sequences.sort_by_key(|s| std::cmp::Reverse(s.count));
            MyPlan {
                intent_sha: sha.to_string(),
                count: rows.len(),
                outcomes,
                stable: learned(&rows, rule),
                last_at_unix: rows.iter().map(|r| r.at_unix).max().unwrap_or(0),
                sequences,
            }
        })
        .collect();
    out.sort_by_key(|p| std::cmp::Reverse(p.last_at_unix));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::StepRecord;

    fn row(at: i64, tools: &[&str], outcome: Outcome) -> HistoryRow {
        HistoryRow {
            caller: "c".into(),
            intent_sha: "i".into(),
            complexity: "pack-chain".into(),
            steps: tools
                .iter()
                .enumerate()
                .map(|(i, t)| StepRecord {
                    order: u32::try_from(i + 1).unwrap(),
                    tool: (*t).into(),
                    args_sha: "x".into(),
                })
                .collect(),
            outcome,
            at_unix: at,
            duration_ms: 1,
            model: None,
            planner: "deterministic".into(),
        }
    }

    #[test]
    fn three_equal_successes_make_a_learned_plan() {
        let rows = [
            row(1, &["a", "b"], Outcome::Ok),
            row(2, &["a", "b"], Outcome::Ok),
        ];
        assert_eq!(learned(&rows, LearnRule::default()), None);
        let rows = [
            row(1, &["a", "b"], Outcome::Ok),
            row(2, &["a", "b"], Outcome::Ok),
            row(3, &["a", "b"], Outcome::Ok),
        ];
        assert_eq!(
            learned(&rows, LearnRule::default()),
            Some(vec!["a".into(), "b".into()])
        );
    }

    #[test]
    fn finding_10_plans_that_never_ran_teach_nothing() {
        let planned: Vec<HistoryRow> = (1..=10)
            .map(|t| row(t, &["a", "b"], Outcome::Planned))
            .collect();
        assert_eq!(learned(&planned, LearnRule::default()), None);
        // Planning rows between successful runs neither count nor break the streak.
        let mixed = [
            row(1, &["a"], Outcome::Planned),
            row(2, &["a"], Outcome::Ok),
            row(3, &["a"], Outcome::Planned),
            row(4, &["a"], Outcome::Ok),
            row(5, &["a"], Outcome::Planned),
        ];
        assert_eq!(learned(&mixed, LearnRule::default()), None);
        let mut three = mixed.to_vec();
        three.push(row(6, &["a"], Outcome::Ok));
        assert_eq!(
            learned(&three, LearnRule::default()),
            Some(vec!["a".into()])
        );
    }

    #[test]
    fn one_acceptance_teaches_at_once_and_a_failed_run_takes_it_back() {
        let mut rows = vec![
            row(1, &["a"], Outcome::Ok),
            row(2, &["a"], Outcome::Ok),
            row(3, &["b"], Outcome::Accepted),
        ];
        assert_eq!(learned(&rows, LearnRule::default()), Some(vec!["b".into()]));
        rows.push(row(4, &["b"], Outcome::Limit));
        assert_eq!(learned(&rows, LearnRule::default()), None);
        rows.push(row(5, &["c"], Outcome::Accepted));
        assert_eq!(learned(&rows, LearnRule::default()), Some(vec!["c".into()]));
    }

    #[test]
    fn every_outcome_reads_back_as_itself() {
        for o in Outcome::ALL {
            assert_eq!(Outcome::parse(o.as_str()), Some(o));
        }
        assert_eq!(Outcome::parse("ran"), None);
    }

    #[test]
    fn a_failure_in_the_same_second_as_the_successes_still_demotes() {
        // Newest first, as the store returns them: the failure came last.
        let rows = [
            row(9, &["a"], Outcome::Failed),
            row(9, &["a"], Outcome::Ok),
            row(9, &["a"], Outcome::Ok),
            row(9, &["a"], Outcome::Ok),
        ];
        assert_eq!(learned(&rows, LearnRule::default()), None);
        let mut healed = rows.to_vec();
        for _ in 0..3 {
            healed.insert(0, row(9, &["a"], Outcome::Ok));
        }
        assert_eq!(
            learned(&healed, LearnRule::default()),
            Some(vec!["a".into()])
        );
    }

    #[test]
    fn a_failure_demotes_until_successes_come_back() {
        let mut rows = vec![
            row(1, &["a"], Outcome::Ok),
            row(2, &["a"], Outcome::Ok),
            row(3, &["a"], Outcome::Ok),
            row(4, &["a"], Outcome::Failed),
        ];
        assert_eq!(learned(&rows, LearnRule::default()), None);
        rows.extend([
            row(5, &["a"], Outcome::Ok),
            row(6, &["a"], Outcome::Ok),
            row(7, &["a"], Outcome::Ok),
        ]);
        assert_eq!(learned(&rows, LearnRule::default()), Some(vec!["a".into()]));
    }

    #[test]
    fn the_learned_plan_is_read_from_a_bounded_window_of_one_intent() {
        let f = learn_filter("find CommandRouter");
        assert_eq!(f.intent_sha, Some(crate::intent_sha("find CommandRouter")));
        assert_eq!(f.limit, Some(LEARN_WINDOW));
        assert!(f.tool.is_none() && f.outcome.is_none() && f.since.is_none());
    }

    #[test]
    fn the_projection_counts_outcomes_and_sequences() {
        let rows = [row(1, &["a"], Outcome::Ok), row(2, &["b"], Outcome::Failed)];
        let p = project(&rows, LearnRule::default());
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].count, 2);
        assert_eq!(p[0].outcomes["failed"], 1);
        assert_eq!(p[0].sequences.len(), 2);
        assert_eq!(p[0].last_at_unix, 2);
    }
}
