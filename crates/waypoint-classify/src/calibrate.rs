//! Decision values → probabilities (Platt scaling), and what cross-validation says about
//! each class: precision, recall and the classes it is confused with.
//!
//! A raw SVM margin means different things on different catalogs; a probability fitted on
//! held-out examples means the same everywhere, so one abstain threshold can serve every
//! catalog.

#![expect(
    clippy::many_single_char_names,
    reason = "the names follow Platt's notation (a, b, p, t)"
)]

/// `p = 1 / (1 + exp(a·d + b))` for a decision value `d`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibration {
    pub a: f64,
    pub b: f64,
}

impl Default for Calibration {
    /// Used when there are too few examples to hold any out: a margin of 0 is an even
    /// chance and a margin of 1 (an example's own side of the boundary) is near certain.
    fn default() -> Self {
        Self { a: -4.0, b: 0.0 }
    }
}

impl Calibration {
    pub fn probability(&self, decision: f32) -> f32 {
        let z = self.a * f64::from(decision) + self.b;
        (1.0 / (1.0 + z.exp())) as f32
    }

    /// Fits `a` and `b` to held-out `(decision, is_right)` pairs by Newton's method with
    /// the smoothed targets of Platt (1999), as corrected by Lin, Lin and Weng (2007).
    pub fn fit(pairs: &[(f32, bool)]) -> Self {
        let pos = pairs.iter().filter(|p| p.1).count() as f64;
        let neg = pairs.len() as f64 - pos;
        if pos == 0.0 || neg == 0.0 {
            return Self::default();
        }
        let hi = (pos + 1.0) / (pos + 2.0);
        let lo = 1.0 / (neg + 2.0);
        let target = |right: bool| if right { hi } else { lo };
        let (mut a, mut b) = (0.0_f64, ((neg + 1.0) / (pos + 1.0)).ln());
        let mut at = Newton::at(pairs, a, b, target);
        for _ in 0..100 {
            if at.g1.abs() < 1e-6 && at.g2.abs() < 1e-6 {
                break;
            }
            let det = at.h11 * at.h22 - at.h21 * at.h21;
            let da = -(at.h22 * at.g1 - at.h21 * at.g2) / det;
            let db = -(-at.h21 * at.g1 + at.h11 * at.g2) / det;
            let gd = at.g1 * da + at.g2 * db;
            let mut step = 1.0;
            let mut moved = false;
            while step >= 1e-10 {
                let (na, nb) = (a + step * da, b + step * db);
                let next = Newton::at(pairs, na, nb, target);
                if next.loss < at.loss + 1e-4 * step * gd {
                    (a, b, at) = (na, nb, next);
                    moved = true;
                    break;
                }
                step /= 2.0;
            }
            if !moved {
                break;
            }
        }
        Self { a, b }
    }
}

/// The loss of `(a, b)` with its gradient and Hessian, from one pass over the pairs:
/// each pair's exponential serves all three, and a step the line search takes arrives
/// with the derivatives the next step starts from.
struct Newton {
    loss: f64,
    g1: f64,
    g2: f64,
    h11: f64,
    h22: f64,
    h21: f64,
}

impl Newton {
    fn at(pairs: &[(f32, bool)], a: f64, b: f64, target: impl Fn(bool) -> f64) -> Self {
        let mut n = Self {
            loss: 0.0,
            g1: 0.0,
            g2: 0.0,
            h11: 1e-12,
            h22: 1e-12,
            h21: 0.0,
        };
        for &(d, right) in pairs {
            let t = target(right);
            let d = f64::from(d);
            let z = a * d + b;
            // Every term of the loss is positive, so summing from 0 gives the sum a
            // fold from either zero gives.
            let (p, q) = if z >= 0.0 {
                let e = (-z).exp();
                n.loss += t * z + e.ln_1p();
                (e / (1.0 + e), 1.0 / (1.0 + e))
            } else {
                let e = z.exp();
                n.loss += (t - 1.0) * z + e.ln_1p();
                (1.0 / (1.0 + e), e / (1.0 + e))
            };
            let pq = p * q;
            n.h11 += d * d * pq;
            n.h22 += pq;
            n.h21 += d * pq;
            n.g1 += d * (t - p);
            n.g2 += t - p;
        }
        n
    }
}

/// What cross-validation says about one class.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClassReport {
    /// Held-out examples of this class.
    pub support: u32,
    /// Held-out examples whose best class was this one, rightly and wrongly.
    pub true_positives: u32,
    pub false_positives: u32,
    /// The classes this one's examples went to instead, most often first (at most 3).
    pub confused_with: Vec<(u32, u32)>,
}

impl ClassReport {
    pub fn precision(&self) -> Option<f64> {
        let predicted = self.true_positives + self.false_positives;
        (predicted > 0).then(|| f64::from(self.true_positives) / f64::from(predicted))
    }

    pub fn recall(&self) -> Option<f64> {
        (self.support > 0).then(|| f64::from(self.true_positives) / f64::from(self.support))
    }
}

/// Cross-validation over the training examples.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    pub folds: u32,
    /// Held-out examples whose best class was one of their labels.
    pub accuracy: f64,
    pub held_out: u32,
    pub classes: Vec<ClassReport>,
}

/// Accumulates held-out predictions into a [`Report`].
pub(crate) struct Tally {
    classes: Vec<ClassReport>,
    confusions: Vec<std::collections::HashMap<u32, u32>>,
    right: u32,
    seen: u32,
}

impl Tally {
    pub fn new(classes: usize) -> Self {
        Self {
            classes: vec![ClassReport::default(); classes],
            confusions: vec![std::collections::HashMap::new(); classes],
            right: 0,
            seen: 0,
        }
    }

    /// One held-out example: its labels, the classes predicted for it (every class whose
    /// decision is positive, and always the best) and the best-scored class. Accuracy
    /// counts the best class; precision and recall count the predicted set, so a
    /// multi-intent request is right for each of its intents the model finds.
    pub fn add(&mut self, labels: &[u32], predicted: &[u32], best: u32) {
        self.seen += 1;
        if labels.contains(&best) {
            self.right += 1;
        }
        for &k in predicted {
            if let Some(c) = self.classes.get_mut(k as usize) {
                if labels.contains(&k) {
                    c.true_positives += 1;
                } else {
                    c.false_positives += 1;
                }
            }
        }
        for &l in labels {
            if let Some(c) = self.classes.get_mut(l as usize) {
                c.support += 1;
            }
            if !predicted.contains(&l)
                && best != l
                && let Some(m) = self.confusions.get_mut(l as usize)
            {
                *m.entry(best).or_insert(0) += 1;
            }
        }
    }

    pub fn finish(mut self, folds: u32) -> Report {
        for (c, m) in self.classes.iter_mut().zip(self.confusions) {
            let mut list: Vec<(u32, u32)> = m.into_iter().collect();
            list.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            list.truncate(3);
            c.confused_with = list;
        }
        Report {
            folds,
            accuracy: if self.seen == 0 {
                0.0
            } else {
                f64::from(self.right) / f64::from(self.seen)
            },
            held_out: self.seen,
            classes: self.classes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn platt_fit_orders_and_centres_the_scores() {
        let mut pairs = Vec::new();
        for i in 0..200 {
            let d = (i as f32 - 100.0) / 50.0;
            // Right exactly when the margin is positive, plus some noise near zero.
            pairs.push((d, d > 0.0 || (i % 7 == 0 && d > -0.3)));
        }
        let c = Calibration::fit(&pairs);
        assert!(c.a < 0.0, "{c:?}");
        assert!(c.probability(1.5) > 0.9);
        assert!(c.probability(-1.5) < 0.1);
        let mid = c.probability(0.0);
        assert!((0.2..0.8).contains(&mid), "{mid}");
    }

    #[test]
    fn one_sided_data_keeps_the_default() {
        assert_eq!(
            Calibration::fit(&[(1.0, true), (0.5, true)]),
            Calibration::default()
        );
    }

    #[test]
    fn tally_counts_precision_recall_and_confusions() {
        let mut t = Tally::new(3);
        t.add(&[0], &[0], 0);
        t.add(&[0], &[1], 1);
        t.add(&[0], &[1], 1);
        t.add(&[1], &[1], 1);
        let r = t.finish(2);
        assert_eq!(r.held_out, 4);
        assert!((r.accuracy - 0.5).abs() < 1e-9);
        assert_eq!(r.classes[0].recall(), Some(1.0 / 3.0));
        assert_eq!(r.classes[1].precision(), Some(1.0 / 3.0));
        assert_eq!(r.classes[0].confused_with, vec![(1, 2)]);
        assert_eq!(r.classes[2].precision(), None);
    }

    #[test]
    fn a_multi_intent_request_counts_for_each_intent_found() {
        let mut t = Tally::new(3);
        t.add(&[0, 1], &[0, 1], 0);
        t.add(&[0, 2], &[0], 0);
        let r = t.finish(2);
        assert!((r.accuracy - 1.0).abs() < 1e-9);
        assert_eq!(r.classes[1].recall(), Some(1.0));
        assert_eq!(r.classes[2].recall(), Some(0.0));
        assert_eq!(r.classes[2].confused_with, vec![(0, 1)]);
    }
}
