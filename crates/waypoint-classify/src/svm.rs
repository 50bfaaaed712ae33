//! One-vs-rest linear SVMs (L2-regularised, squared hinge loss) trained by dual
//! coordinate descent with shrinking — the method behind liblinear and scikit-learn's
//! `LinearSVC` (Hsieh et al., ICML 2008).
//!
//! Each class is an independent problem, so classes are trained on every core; each
//! problem shuffles with its own fixed seed, so the weights do not depend on how the
//! classes were spread over threads.
//!
//! Nearly all of training is reading rows in shuffled order to take their product with
//! the weights, and most rows are then left as they are. For CLINC150 the rows are
//! 18 MB, more than the caches hold, so the rows lie in one block (feature id and value
//! side by side) and the row a few steps ahead is fetched while this one is summed.

#![expect(
    clippy::many_single_char_names,
    reason = "the names follow the papers' notation (w, x, y, α as alpha, C)"
)]

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::features::Sparse;

/// The constant feature that stands for the bias (liblinear's `-B 1`).
const BIAS: f32 = 1.0;
/// Stop when the projected gradient's spread falls below this (liblinear's default).
const EPS: f64 = 0.1;
/// Weights smaller than this are dropped from the trained model: they move no score.
const PRUNE: f64 = 1e-4;

/// One training example, already vectorised.
pub(crate) struct Row<'a> {
    pub x: &'a Sparse,
    /// Classes the example belongs to, ascending (several for a multi-intent request).
    pub labels: &'a [u32],
    /// Scales the penalty for getting this example wrong.
    pub weight: f32,
}

/// The weights of one class: sparse over features, plus the bias.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ClassWeights {
    pub features: Vec<(u32, f32)>,
    pub bias: f32,
}

/// Trains one linear SVM per class over `dims` features.
pub(crate) fn train(
    rows: &[Row<'_>],
    classes: usize,
    dims: usize,
    c: f64,
    max_epochs: usize,
) -> Vec<ClassWeights> {
    let packed = Packed::new(rows);
    let next = AtomicUsize::new(0);
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .min(classes.max(1));
    let mut out = vec![ClassWeights::default(); classes];
    let trained: Vec<(usize, ClassWeights)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    let mut w = vec![0.0_f64; dims + 1];
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        if k >= classes {
                            break mine;
                        }
                        mine.push((k, one_class(rows, &packed, k, &mut w, c, max_epochs)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    });
    // Placed by class, so a class whose worker died stays all-zero rather than shifting
    // every later class's weights onto the wrong class.
    for (k, w) in trained {
        out[k] = w;
    }
    out
}

/// Dual coordinate descent for class `k`; `w` is scratch space of `dims + 1` zeros.
fn one_class(
    rows: &[Row<'_>],
    packed: &Packed,
    k: usize,
    w: &mut [f64],
    c: f64,
    max_epochs: usize,
) -> ClassWeights {
    let n = rows.len();
    let bias_at = w.len() - 1;
    let class = u32::try_from(k).unwrap_or(u32::MAX);
    let y: Vec<f64> = rows
        .iter()
        .map(|r| {
            if r.labels.binary_search(&class).is_ok() {
                1.0
            } else {
                -1.0
            }
        })
        .collect();
    // Squared hinge: the dual has no upper bound, and a diagonal of 1/(2C) per example.
    let diag: Vec<f64> = rows
        .iter()
        .map(|r| 0.5 / (c * f64::from(r.weight)))
        .collect();
    let qd: Vec<f64> = rows
        .iter()
        .zip(&diag)
        .map(|(r, d)| {
            r.x.val.iter().map(|v| f64::from(*v).powi(2)).sum::<f64>() + f64::from(BIAS * BIAS) + d
        })
        .collect();
    let mut alpha = vec![0.0_f64; n];
    let mut index: Vec<usize> = (0..n).collect();
    let mut active = n;
    let mut pg_max_old = f64::INFINITY;
    let mut rng = XorShift::new(0x9e37_79b9_7f4a_7c15 ^ (k as u64).wrapping_mul(0x2545_f491));
    let mut epoch = 0;
    while epoch < max_epochs {
        epoch += 1;
        let mut pg_max = f64::NEG_INFINITY;
        let mut pg_min = f64::INFINITY;
        for i in 0..active {
            let j = i + rng.below(active - i);
            index.swap(i, j);
        }
        let mut s = 0;
        while s < active {
            if let Some(&ahead) = index[..active].get(s + AHEAD) {
                packed.prefetch(ahead);
            }
            let i = index[s];
            let row = packed.row(i);
            let dot = w[bias_at] * f64::from(BIAS) + sparse_dot(w, row);
            let g = y[i] * dot - 1.0 + alpha[i] * diag[i];
            let mut pg = 0.0;
            if alpha[i] == 0.0 {
                if g > pg_max_old {
                    active -= 1;
                    index.swap(s, active);
                    continue;
                }
                if g < 0.0 {
                    pg = g;
                }
            } else {
                pg = g;
            }
            pg_max = pg_max.max(pg);
            pg_min = pg_min.min(pg);
            if pg.abs() > 1e-12 {
                let old = alpha[i];
                alpha[i] = (old - g / qd[i]).max(0.0);
                let step = (alpha[i] - old) * y[i];
                for &(f, v) in row {
                    w[f as usize] += step * f64::from(v);
                }
                w[bias_at] += step * f64::from(BIAS);
            }
            s += 1;
        }
        if pg_max - pg_min <= EPS {
            if active == n {
                break;
            }
            // Converged on the shrunk set: check every example once more.
            active = n;
            pg_max_old = f64::INFINITY;
            continue;
        }
        pg_max_old = if pg_max <= 0.0 { f64::INFINITY } else { pg_max };
    }
    let features = w[..bias_at]
        .iter()
        .enumerate()
        .filter(|(_, v)| v.abs() >= PRUNE)
        .map(|(f, v)| (u32::try_from(f).unwrap_or(u32::MAX), *v as f32))
        .collect();
    let bias = (w[bias_at] * f64::from(BIAS)) as f32;
    w.fill(0.0);
    ClassWeights { features, bias }
}

/// Rows ahead of the one being summed whose features are fetched into the cache. Four
/// covers the memory's latency for rows of a hundred or so n-grams; a row the shrinking
/// then skips costs a fetch and nothing else.
const AHEAD: usize = 4;

/// Every row's `(feature, value)` pairs in one block, in the rows' own order.
struct Packed {
    pairs: Vec<(u32, f32)>,
    /// Row `i` is `pairs[start[i]..start[i + 1]]`.
    start: Vec<usize>,
}

impl Packed {
    fn new(rows: &[Row<'_>]) -> Self {
        let mut pairs = Vec::with_capacity(rows.iter().map(|r| r.x.len()).sum());
        let mut start = Vec::with_capacity(rows.len() + 1);
        start.push(0);
        for r in rows {
            pairs.extend(r.x.iter());
            start.push(pairs.len());
        }
        Self { pairs, start }
    }

    fn row(&self, i: usize) -> &[(u32, f32)] {
        &self.pairs[self.start[i]..self.start[i + 1]]
    }

    /// Asks the CPU to bring row `i` into the cache; it goes on without waiting.
    #[cfg(target_arch = "x86_64")]
    #[expect(
        unsafe_code,
        reason = "the prefetch instruction is SSE's, which every x86-64 CPU has"
    )]
    fn prefetch(&self, i: usize) {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        const LINE: usize = 64;
        for line in self.row(i).chunks(LINE / size_of::<(u32, f32)>()) {
            // SAFETY: SSE is part of x86-64, and a prefetch reads nothing the program
            // sees (the address is inside `pairs` anyway).
            unsafe { _mm_prefetch::<_MM_HINT_T0>(line.as_ptr().cast()) };
        }
    }

    #[cfg(not(target_arch = "x86_64"))]
    fn prefetch(&self, _: usize) {}
}

/// `w · x` over the row's features. Four running sums instead of one: each addition
/// waits for the one before it, and a row has a hundred or more n-grams, so one sum
/// spends most of the row waiting. The order is fixed, so the result is the same on
/// every run.
fn sparse_dot(w: &[f64], x: &[(u32, f32)]) -> f64 {
    const LANES: usize = 4;
    let mut sums = [0.0_f64; LANES];
    let chunks = x.chunks_exact(LANES);
    let mut rest = 0.0;
    for &(f, v) in chunks.remainder() {
        rest += w[f as usize] * f64::from(v);
    }
    for chunk in chunks {
        for (s, &(f, v)) in sums.iter_mut().zip(chunk) {
            *s += w[f as usize] * f64::from(v);
        }
    }
    (sums[0] + sums[1]) + (sums[2] + sums[3]) + rest
}

/// A small deterministic generator for the shuffles (xorshift64*).
pub(crate) struct XorShift(u64);

impl XorShift {
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed.max(1))
    }

    pub(crate) fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let r = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d);
        (r % n as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sparse(pairs: &[(u32, f32)]) -> Sparse {
        Sparse {
            idx: pairs.iter().map(|p| p.0).collect(),
            val: pairs.iter().map(|p| p.1).collect(),
        }
    }

    #[test]
    fn a_rows_products_in_four_sums_are_the_plain_sum() {
        let w: Vec<f64> = (0..20).map(|i| f64::from(i) * 0.37 - 3.0).collect();
        // Shorter than the four sums, a whole number of them, and one with a remainder.
        for n in [0_u32, 3, 4, 9, 17] {
            let pairs: Vec<(u32, f32)> = (0..n).map(|f| (f, 0.5 - f as f32 * 0.125)).collect();
            let plain: f64 = pairs
                .iter()
                .map(|(f, v)| w[*f as usize] * f64::from(*v))
                .sum();
            assert!(
                (sparse_dot(&w, &pairs) - plain).abs() < 1e-12,
                "{n} features"
            );
        }
    }

    #[test]
    fn packed_rows_are_the_rows_pairs_in_order() {
        let xs = [
            sparse(&[(3, 0.5), (1, 0.25)]),
            sparse(&[]),
            sparse(&[(7, 1.0)]),
        ];
        let rows: Vec<Row<'_>> = xs
            .iter()
            .map(|x| Row {
                x,
                labels: &[0],
                weight: 1.0,
            })
            .collect();
        let packed = Packed::new(&rows);
        for (i, x) in xs.iter().enumerate() {
            assert_eq!(
                packed.row(i),
                x.iter().collect::<Vec<_>>().as_slice(),
                "row {i}"
            );
            // Fetching ahead reads nothing the program sees, an empty row included.
            packed.prefetch(i);
        }
    }

    #[test]
    fn separable_classes_are_learned_and_training_is_deterministic() {
        let xs = [
            sparse(&[(0, 1.0)]),
            sparse(&[(0, 0.9), (2, 0.1)]),
            sparse(&[(1, 1.0)]),
            sparse(&[(1, 0.8), (2, 0.2)]),
        ];
        let labels = [[0_u32], [0], [1], [1]];
        let rows: Vec<Row<'_>> = xs
            .iter()
            .zip(&labels)
            .map(|(x, l)| Row {
                x,
                labels: l,
                weight: 1.0,
            })
            .collect();
        let a = train(&rows, 2, 3, 1.0, 100);
        let b = train(&rows, 2, 3, 1.0, 100);
        assert_eq!(a, b);
        let score = |k: usize, x: &Sparse| {
            a[k].bias
                + x.iter()
                    .map(|(f, v)| {
                        a[k].features
                            .iter()
                            .find(|(g, _)| *g == f)
                            .map_or(0.0, |(_, w)| w * v)
                    })
                    .sum::<f32>()
        };
        for (x, l) in xs.iter().zip(&labels) {
            let k = l[0] as usize;
            assert!(score(k, x) > 0.0 && score(1 - k, x) < 0.0);
        }
    }
}
