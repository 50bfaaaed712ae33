//! Fitting the abstain threshold on held-out requests: the route score below which a
//! clause is a gap rather than a guess.
//!
//! Each held-out request is routed once; what its clauses' best candidates are and how
//! they scored is an [`Observation`]. A threshold `t` keeps the candidates scoring at
//! least `t`: the request is right at `t` when the kept entries are exactly the expected
//! ones (none, for a request the catalog cannot serve). [`fit_threshold`] sweeps `t` and
//! keeps the best balance of in-scope accuracy and out-of-scope recall; the same request
//! set then gives each entry's precision, recall and confusions at that threshold.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use waypoint_core::Engine;
use waypoint_protocol::EvalCase;

/// One held-out request: what it should route to and what its clauses' best candidates
/// were.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    /// Entries it asks for; empty when the catalog cannot serve it.
    pub expected: BTreeSet<String>,
    /// Each clause's best candidate and its score.
    pub routed: Vec<(String, f64)>,
}

impl Observation {
    /// What the planner keeps at threshold `t`.
    fn kept(&self, t: f64) -> BTreeSet<&str> {
        self.routed
            .iter()
            .filter(|(_, s)| *s >= t)
            .map(|(id, _)| id.as_str())
            .collect()
    }

    fn right_at(&self, t: f64) -> bool {
        let kept = self.kept(t);
        kept.len() == self.expected.len() && self.expected.iter().all(|e| kept.contains(e.as_str()))
    }
}

/// Routes every case with a label (tools, a tool set or `unknown`) and records what
/// each clause's best candidate scored; cases without labels are skipped.
pub fn observe(engine: &Engine, cases: &[EvalCase]) -> Vec<Observation> {
    cases
        .iter()
        .filter_map(|case| {
            let expected: BTreeSet<String> = if case.expect.unknown == Some(true) {
                BTreeSet::new()
            } else {
                let labels: BTreeSet<String> = case
                    .expect
                    .tools
                    .iter()
                    .chain(case.expect.tool_set.iter())
                    .flatten()
                    .filter(|t| *t != waypoint_protocol::UNKNOWN_TOOL)
                    .cloned()
                    .collect();
                if labels.is_empty() {
                    return None;
                }
                labels
            };
            let reports = engine.route(&case.request, case.context.as_ref()).ok()?;
            let routed = reports
                .iter()
                .filter_map(|r| {
                    let best = r.recommendation.as_ref().or(r.alternatives.first())?;
                    Some((best.id.clone(), best.score))
                })
                .collect();
            Some(Observation { expected, routed })
        })
        .collect()
}

/// Accuracy at one threshold.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Point {
    pub threshold: f64,
    /// Share of in-scope requests routed exactly right.
    pub in_scope_accuracy: Option<f64>,
    /// Share of out-of-scope requests left as gaps.
    pub oos_recall: Option<f64>,
}

impl Point {
    /// What the fit maximises: the mean of the two where both exist.
    fn objective(&self) -> f64 {
        match (self.in_scope_accuracy, self.oos_recall) {
            (Some(a), Some(r)) => f64::midpoint(a, r),
            (Some(a), None) => a,
            (None, Some(r)) => r,
            (None, None) => 0.0,
        }
    }
}

impl Point {
    /// Better balance; on a tie, more in-scope accuracy (a tie bought by giving up
    /// requests the catalog serves is no gain); then the higher threshold, which guesses
    /// least. Points come in ascending threshold order.
    fn beats(&self, other: &Point) -> bool {
        const EPS: f64 = 1e-12;
        let (a, b) = (self.objective(), other.objective());
        if (a - b).abs() > EPS {
            return a > b;
        }
        let (x, y) = (
            self.in_scope_accuracy.unwrap_or(0.0),
            other.in_scope_accuracy.unwrap_or(0.0),
        );
        x + EPS >= y
    }
}

/// The fitted threshold with its figures and the whole curve.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThresholdFit {
    pub best: Point,
    pub curve: Vec<Point>,
    pub in_scope: usize,
    pub out_of_scope: usize,
}

/// Thresholds tried: 0.05 to 0.95 in steps of 0.01.
pub fn grid() -> impl Iterator<Item = f64> {
    (5..=95).map(|i| f64::from(i) / 100.0)
}

/// Accuracy and recall at `t`.
pub fn point(observations: &[Observation], t: f64) -> Point {
    let (mut ins, mut ins_right, mut oos, mut oos_right) = (0_usize, 0_usize, 0_usize, 0_usize);
    for o in observations {
        let right = o.right_at(t);
        if o.expected.is_empty() {
            oos += 1;
            oos_right += usize::from(right);
        } else {
            ins += 1;
            ins_right += usize::from(right);
        }
    }
    let share = |n: usize, d: usize| (d > 0).then(|| n as f64 / d as f64);
    Point {
        threshold: t,
        in_scope_accuracy: share(ins_right, ins),
        oos_recall: share(oos_right, oos),
    }
}

/// The threshold with the best balance; among equals, the one with the most in-scope
/// accuracy, then the highest (the one that guesses least). Without out-of-scope requests the balance is in-scope accuracy alone, which
/// only tells how low the threshold may go: add requests the catalog cannot serve
/// (`"expect": {"unknown": true}`) to fit abstention.
pub fn fit_threshold(
    observations: &[Observation],
    grid: impl Iterator<Item = f64>,
) -> ThresholdFit {
    let curve: Vec<Point> = grid.map(|t| point(observations, t)).collect();
    let best = curve
        .iter()
        .copied()
        .fold(None::<Point>, |best, p| match best {
            Some(b) if !p.beats(&b) => Some(b),
            _ => Some(p),
        })
        .unwrap_or(Point {
            threshold: 0.35,
            in_scope_accuracy: None,
            oos_recall: None,
        });
    let out_of_scope = observations
        .iter()
        .filter(|o| o.expected.is_empty())
        .count();
    ThresholdFit {
        best,
        curve,
        in_scope: observations.len() - out_of_scope,
        out_of_scope,
    }
}

/// One entry's figures at a threshold.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EntryFigures {
    pub entry: String,
    /// Held-out requests that ask for it.
    pub support: usize,
    pub precision: Option<f64>,
    pub recall: Option<f64>,
    /// Entries chosen instead of it, most often first.
    pub confused_with: Vec<(String, usize)>,
}

/// Precision, recall and confusions per expected or chosen entry at threshold `t`
/// (`unknown` stands for a gap where an entry was expected).
pub fn per_entry(observations: &[Observation], t: f64) -> Vec<EntryFigures> {
    #[derive(Default)]
    struct Tally {
        tp: usize,
        fp: usize,
        fn_: usize,
        confused: BTreeMap<String, usize>,
    }
    let mut tally: BTreeMap<String, Tally> = BTreeMap::new();
    for o in observations {
        let kept = o.kept(t);
        for e in &o.expected {
            let row = tally.entry(e.clone()).or_default();
            if kept.contains(e.as_str()) {
                row.tp += 1;
            } else {
                row.fn_ += 1;
                let instead: Vec<&&str> =
                    kept.iter().filter(|k| !o.expected.contains(**k)).collect();
                if instead.is_empty() {
                    *row.confused
                        .entry(waypoint_protocol::UNKNOWN_TOOL.into())
                        .or_default() += 1;
                }
                for k in instead {
                    *row.confused.entry((*k).to_string()).or_default() += 1;
                }
            }
        }
        for k in kept {
            if !o.expected.contains(k) {
                tally.entry(k.to_string()).or_default().fp += 1;
            }
        }
    }
    let ratio = |n: usize, d: usize| (d > 0).then(|| n as f64 / d as f64);
    tally
        .into_iter()
        .map(|(entry, t)| {
            let mut confused_with: Vec<(String, usize)> = t.confused.into_iter().collect();
            confused_with.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            confused_with.truncate(3);
            EntryFigures {
                entry,
                support: t.tp + t.fn_,
                precision: ratio(t.tp, t.tp + t.fp),
                recall: ratio(t.tp, t.tp + t.fn_),
                confused_with,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(expected: &[&str], routed: &[(&str, f64)]) -> Observation {
        Observation {
            expected: expected.iter().map(|s| (*s).to_string()).collect(),
            routed: routed.iter().map(|(i, s)| ((*i).to_string(), *s)).collect(),
        }
    }

    /// Four in-scope requests and two out of scope, worked by hand:
    ///
    /// | t        | in-scope right | oos right | mean  |
    /// |----------|----------------|-----------|-------|
    /// | ≤ 0.40   | a, b, c (3/4)  | 0/2       | 0.375 |
    /// | 0.41–0.50| a, b, c (3/4)  | x (1/2)   | 0.625 |
    /// | 0.51–0.60| a, b (2/4)     | x, y (2/2)| 0.75  |
    /// | 0.61–0.80| a (1/4)        | 2/2       | 0.625 |
    ///
    /// The best mean is 0.75, first reached at 0.51 and held to 0.60: the fit takes the
    /// highest, 0.60.
    ///
    /// A tie between different balances goes to in-scope accuracy: one in-scope request
    /// at 0.5 and one out of scope at 0.6 give 1/1 with 0/1 up to 0.50 (mean 0.5) and
    /// 0/1 with 1/1 above 0.60 (also 0.5); the fit keeps 0.50.
    #[test]
    fn the_fit_is_the_threshold_a_hand_computation_gives() {
        let o = vec![
            obs(&["weather"], &[("weather", 0.8)]),
            obs(&["music"], &[("music", 0.6)]),
            obs(&["book"], &[("book", 0.5)]),
            obs(&["book"], &[("music", 0.3)]),
            obs(&[], &[("music", 0.4)]),
            obs(&[], &[("weather", 0.5)]),
        ];
        let fit = fit_threshold(&o, grid());
        assert!((fit.best.threshold - 0.60).abs() < 1e-9, "{:?}", fit.best);
        assert_eq!(fit.best.in_scope_accuracy, Some(0.5));
        assert_eq!(fit.best.oos_recall, Some(1.0));
        assert_eq!((fit.in_scope, fit.out_of_scope), (4, 2));

        let tie = vec![obs(&["a"], &[("a", 0.5)]), obs(&[], &[("x", 0.6)])];
        let fit = fit_threshold(&tie, grid());
        assert_eq!(fit.best.in_scope_accuracy, Some(1.0));
        assert!((fit.best.threshold - 0.50).abs() < 1e-9, "{:?}", fit.best);
    }

    #[test]
    fn per_entry_counts_wrong_picks_and_gaps_as_confusions() {
        let o = vec![
            obs(&["book"], &[("book", 0.9)]),
            obs(&["book"], &[("music", 0.7)]),
            obs(&["book"], &[("music", 0.2)]),
            obs(&["music"], &[("music", 0.9)]),
        ];
        let rows = per_entry(&o, 0.5);
        let book = rows.iter().find(|r| r.entry == "book").unwrap();
        assert_eq!(book.support, 3);
        assert_eq!(book.recall, Some(1.0 / 3.0));
        assert_eq!(book.precision, Some(1.0));
        assert_eq!(
            book.confused_with,
            vec![("music".to_string(), 1), ("unknown".to_string(), 1)]
        );
        let music = rows.iter().find(|r| r.entry == "music").unwrap();
        assert_eq!(music.precision, Some(0.5));
    }

    #[test]
    fn a_request_with_two_entries_needs_both_kept() {
        let o = obs(&["a", "b"], &[("a", 0.9), ("b", 0.4)]);
        assert!(!o.right_at(0.5));
        assert!(o.right_at(0.4));
    }
}
