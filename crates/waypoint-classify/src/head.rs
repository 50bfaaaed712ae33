//! A small neural network over sentence vectors: one hidden layer of rectified units and
//! a softmax over the classes.
//!
//! The linear SVM draws one flat boundary per class through the n-grams and the vector
//! together; requests that mean the same thing in different words lie in curved regions
//! of the vector's space that a hidden layer can follow. Its softmax also makes the classes
//! compete, which the SVM's one-against-the-rest decisions do not. It is trained only
//! where every example asks for one class, since a softmax gives one class a text.
//!
//! Training is plain minibatch Adam from a seeded start with a seeded shuffle, summing in
//! a fixed order, so the same examples give the same weights bit for bit.

use crate::svm::XorShift;

/// Hidden units: enough for CLINC150's 150 intents, small enough to train in seconds.
const HIDDEN: usize = 256;
/// Passes over the examples.
const EPOCHS: usize = 40;
const BATCH: usize = 200;
const LEARNING_RATE: f32 = 1e-3;
/// L2 penalty on the weights, per example of a batch.
const L2: f32 = 1e-4;
const SEED: u64 = 0x5eed_11ea_d000_0001;
/// Scoring divides the logits by this. Trained to near certainty on its own examples, the
/// network is as sure of a request it has never seen the like of (one no entry handles)
/// as of one it has; halved logits keep such a request under the abstain threshold as
/// often as the linear model alone did (CLINC150 dev, docs/performance.md).
const TEMPERATURE: f32 = 2.0;

/// A trained network. Weights are stored input-major: `w1[k * hidden + j]` joins input
/// `k` to hidden unit `j`, `w2[j * classes + c]` hidden unit `j` to class `c`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Head {
    pub(crate) dims: usize,
    pub(crate) hidden: usize,
    pub(crate) classes: usize,
    pub(crate) w1: Vec<f32>,
    pub(crate) b1: Vec<f32>,
    pub(crate) w2: Vec<f32>,
    pub(crate) b2: Vec<f32>,
}

/// One labelled vector.
#[derive(Clone, Copy)]
pub(crate) struct Sample<'a> {
    pub x: &'a [f32],
    pub class: u32,
    pub weight: f32,
}

/// Defines method `$name`, which runs `$portable` (an `#[inline(always)]` method that
/// does the work) in a copy compiled for AVX-512 or for AVX2 where the CPU has it, else
/// as it is. The sums go element by element in a fixed order and no copy enables fused
/// multiply-add, so wider vectors give the same numbers to the bit, sooner.
macro_rules! per_cpu {
    (
        $(#[$meta:meta])*
        fn $name:ident, $avx512:ident, $avx2:ident =>
            $portable:ident(&mut self $(, $arg:ident: $ty:ty)*) -> $ret:ty
    ) => {
        per_cpu!(@copies [mut] $(#[$meta])* $name $avx512 $avx2 $portable ($($arg: $ty),*) $ret);
    };
    (
        $(#[$meta:meta])*
        fn $name:ident, $avx512:ident, $avx2:ident =>
            $portable:ident(&self $(, $arg:ident: $ty:ty)*) -> $ret:ty
    ) => {
        per_cpu!(@copies [] $(#[$meta])* $name $avx512 $avx2 $portable ($($arg: $ty),*) $ret);
    };
    (
        @copies [$($mutable:tt)?] $(#[$meta:meta])* $name:ident $avx512:ident $avx2:ident
            $portable:ident ($($arg:ident: $ty:ty),*) $ret:ty
    ) => {
        $(#[$meta])*
        fn $name(&$($mutable)? self, $($arg: $ty),*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            {
                #[expect(
                    unsafe_code,
                    reason = "calling a function compiled for AVX-512 or AVX2 needs the CPU to have it"
                )]
                // SAFETY: each copy is called only where the CPU has what it was compiled for.
                unsafe {
                    if std::is_x86_feature_detected!("avx512f") {
                        return self.$avx512($($arg),*);
                    }
                    if std::is_x86_feature_detected!("avx2") {
                        return self.$avx2($($arg),*);
                    }
                }
            }
            self.$portable($($arg),*)
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,avx512f")]
        fn $avx512(&$($mutable)? self, $($arg: $ty),*) -> $ret {
            self.$portable($($arg),*)
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2")]
        fn $avx2(&$($mutable)? self, $($arg: $ty),*) -> $ret {
            self.$portable($($arg),*)
        }
    };
}

/// Adam's running moments for one parameter block.
struct Moments {
    m: Vec<f32>,
    v: Vec<f32>,
}

impl Moments {
    fn new(n: usize) -> Self {
        Self {
            m: vec![0.0; n],
            v: vec![0.0; n],
        }
    }

    per_cpu! {
        /// One Adam step on `params` with gradient `grad`, at step `t` (from 1): run
        /// after every batch while the other core waits, so it takes the wider vectors
        /// too.
        fn step, step_avx512, step_avx2 =>
            step_in_order(&mut self, params: &mut [f32], grad: &[f32], t: i32) -> ()
    }

    #[inline(always)]
    fn step_in_order(&mut self, params: &mut [f32], grad: &[f32], t: i32) {
        const B1: f32 = 0.9;
        const B2: f32 = 0.999;
        const EPS: f32 = 1e-8;
        let rate = LEARNING_RATE * (1.0 - B2.powi(t)).sqrt() / (1.0 - B1.powi(t));
        for (((p, g), m), v) in params
            .iter_mut()
            .zip(grad)
            .zip(&mut self.m)
            .zip(&mut self.v)
        {
            *m = B1 * *m + (1.0 - B1) * g;
            *v = B2 * *v + (1.0 - B2) * g * g;
            *p -= rate * *m / (v.sqrt() + EPS);
        }
    }
}

/// `x` scaled to unit length (left as is when it is all zeros).
fn unit(x: &[f32]) -> Vec<f32> {
    let norm = x.iter().map(|v| v * v).sum::<f32>().sqrt();
    if norm > 0.0 {
        x.iter().map(|v| v / norm).collect()
    } else {
        x.to_vec()
    }
}

impl Head {
    /// Trains on the samples; `None` when there is nothing to learn from (no samples, no
    /// dimensions, fewer than two classes, or a class index out of range).
    pub(crate) fn train(samples: &[Sample<'_>], classes: usize) -> Option<Self> {
        let dims = samples.first()?.x.len();
        if dims == 0
            || classes < 2
            || samples
                .iter()
                .any(|s| s.x.len() != dims || s.class as usize >= classes)
        {
            return None;
        }
        let xs: Vec<Vec<f32>> = samples.iter().map(|s| unit(s.x)).collect();
        // The samples as the network learns them: each vector at unit length.
        let samples: Vec<Sample<'_>> = samples
            .iter()
            .zip(&xs)
            .map(|(s, x)| Sample { x, ..*s })
            .collect();
        let hidden = HIDDEN;
        let mut rng = XorShift::new(SEED);
        let mut glorot = |fan_in: usize, fan_out: usize, n: usize| -> Vec<f32> {
            let bound = (6.0 / (fan_in + fan_out) as f32).sqrt();
            (0..n)
                .map(|_| {
                    let r = rng.below(1 << 24) as f32 / (1 << 24) as f32;
                    (2.0 * r - 1.0) * bound
                })
                .collect()
        };
        let mut head = Self {
            dims,
            hidden,
            classes,
            w1: glorot(dims, hidden, dims * hidden),
            b1: vec![0.0; hidden],
            w2: glorot(hidden, classes, hidden * classes),
            b2: vec![0.0; classes],
        };
        let mut moments = [
            Moments::new(head.w1.len()),
            Moments::new(hidden),
            Moments::new(head.w2.len()),
            Moments::new(classes),
        ];
        // Each batch is summed in two fixed halves, the second on a thread of its own,
        // then added first half first: the same sums on one core or many. The output
        // weights are also kept transposed, for the hidden units' errors.
        let mut grads = Grads::new(dims, hidden, classes);
        let mut second = Grads::new(dims, hidden, classes);
        let mut order: Vec<usize> = (0..samples.len()).collect();
        let mut t = 0_i32;
        let mut w2t = vec![0.0; head.w2.len()];
        transpose(&head.w2, classes, &mut w2t);
        for _ in 0..EPOCHS {
            for i in (1..order.len()).rev() {
                order.swap(i, rng.below(i + 1));
            }
            for batch in order.chunks(BATCH) {
                let (first_half, second_half) = batch.split_at(batch.len() / 2);
                let sum = |part: &[usize], g: &mut Grads| {
                    g.clear();
                    let part: Vec<Sample<'_>> = part.iter().map(|&i| samples[i]).collect();
                    head.accumulate(&part, &w2t, g);
                };
                std::thread::scope(|scope| {
                    scope.spawn(|| sum(second_half, &mut second));
                    sum(first_half, &mut grads);
                });
                grads.add(&second);
                let n = batch.len() as f32;
                grads.finish(&head, n);
                t = t.saturating_add(1);
                moments[0].step(&mut head.w1, &grads.w1, t);
                moments[1].step(&mut head.b1, &grads.b1, t);
                moments[2].step(&mut head.w2, &grads.w2, t);
                transpose(&head.w2, classes, &mut w2t);
                moments[3].step(&mut head.b2, &grads.b2, t);
            }
        }
        Some(head)
    }

    /// The hidden layer's activations for a unit-length input.
    fn hidden_of(&self, x: &[f32]) -> Vec<f32> {
        self.layer(x, Layer::Hidden)
    }

    /// Softmax over the output layer, its logits divided by `temperature`.
    fn output_of(&self, h: &[f32], temperature: f32) -> Vec<f32> {
        let mut o = self.layer(h, Layer::Output);
        softmax(&mut o, temperature);
        o
    }

    per_cpu! {
        /// One layer for inputs side by side in `xs` (rows of the layer's input width):
        /// the hidden units' activations, or the output layer's logits, so a text reads
        /// the same to the bit on any CPU and alone or among many.
        fn layer, layer_avx512, layer_avx2 =>
            layer_in_order(&self, xs: &[f32], layer: Layer) -> Vec<f32>
    }

    #[expect(
        clippy::inline_always,
        reason = "compiled into each CPU's copy of `layer` and `accumulate` only when inlined there"
    )]
    #[inline(always)]
    fn layer_in_order(&self, xs: &[f32], layer: Layer) -> Vec<f32> {
        let (bias, weights, inputs) = match layer {
            Layer::Hidden => (&self.b1, &self.w1, self.dims),
            Layer::Output => (&self.b2, &self.w2, self.hidden),
        };
        let rows = xs.len() / inputs.max(1);
        let mut out: Vec<f32> = (0..rows).flat_map(|_| bias.iter().copied()).collect();
        add_products(&mut out, bias.len(), xs, inputs, 1, weights);
        if layer == Layer::Hidden {
            relu(&mut out);
        }
        out
    }

    per_cpu! {
        /// Adds the samples' gradients of the weighted cross-entropy to `g`; `w2t` is
        /// `w2` transposed (`w2t[c * hidden + j]`).
        fn accumulate, accumulate_avx512, accumulate_avx2 =>
            accumulate_in_order(&self, part: &[Sample<'_>], w2t: &[f32], g: &mut Grads) -> ()
    }

    /// The batch's layers as products of matrices, each element summed in the order
    /// sample after sample would sum it (the same numbers to the bit), a tile of the
    /// result held in registers while the inputs pass once. Each unit's error is read
    /// from the transposed output weights, so all units' sums advance side by side in
    /// class order.
    #[expect(
        clippy::inline_always,
        reason = "compiled into each CPU's copy of `accumulate` only when inlined there"
    )]
    #[inline(always)]
    fn accumulate_in_order(&self, part: &[Sample<'_>], w2t: &[f32], g: &mut Grads) {
        let (hidden, classes, dims) = (self.hidden, self.classes, self.dims);
        let xs: Vec<f32> = part.iter().flat_map(|p| p.x.iter().copied()).collect();
        let hs = self.layer_in_order(&xs, Layer::Hidden);
        let mut ds = self.layer_in_order(&hs, Layer::Output);
        for (d_out, sample) in ds.chunks_exact_mut(classes).zip(part) {
            softmax(d_out, 1.0);
            d_out[sample.class as usize] -= 1.0;
            for d in d_out.iter_mut() {
                *d *= sample.weight;
            }
            for (gb, d) in g.b2.iter_mut().zip(d_out.iter()) {
                *gb += d;
            }
        }
        let mut dhs = vec![0.0_f32; part.len() * hidden];
        add_products(&mut dhs, hidden, &ds, classes, 1, w2t);
        for (d_hidden, h) in dhs.chunks_exact_mut(hidden).zip(hs.chunks_exact(hidden)) {
            for (b, &hj) in d_hidden.iter_mut().zip(h) {
                if hj <= 0.0 {
                    *b = 0.0;
                }
            }
            for (gb, d) in g.b1.iter_mut().zip(d_hidden.iter()) {
                *gb += d;
            }
        }
        // The weights' gradients: sums over the samples.
        add_products(&mut g.w2, classes, &hs, 1, hidden, &ds);
        add_products(&mut g.w1, hidden, &xs, 1, dims, &dhs);
    }

    /// The hidden layer's activations for the vector `x` (made unit length, as in
    /// training); `None` when `x` is not as long as the vectors the network learned from.
    pub(crate) fn hidden(&self, x: &[f32]) -> Option<Vec<f32>> {
        (x.len() == self.dims).then(|| self.hidden_of(&unit(x)))
    }

    /// [`Self::hidden`] for many vectors at once, each as it would read alone: the
    /// weights pass once per four vectors instead of once per vector. `None` when any
    /// vector is not as long as those the network learned from.
    pub(crate) fn hidden_many(&self, xs: &[&[f32]]) -> Option<Vec<Vec<f32>>> {
        if xs.iter().any(|x| x.len() != self.dims) {
            return None;
        }
        let flat: Vec<f32> = xs.iter().flat_map(|x| unit(x)).collect();
        let hs = self.layer(&flat, Layer::Hidden);
        Some(hs.chunks_exact(self.hidden).map(<[f32]>::to_vec).collect())
    }

    /// Each class's probability for the vector `x`; `None` when `x` is not as long as the
    /// vectors the network learned from.
    pub(crate) fn probabilities(&self, x: &[f32]) -> Option<Vec<f32>> {
        self.hidden(x)
            .and_then(|h| self.probabilities_of_hidden(&h))
    }

    /// Each class's probability from the hidden layer's activations ([`Self::hidden`]),
    /// so a caller that needs both reads the hidden layer once; `None` for activations of
    /// another width.
    pub(crate) fn probabilities_of_hidden(&self, h: &[f32]) -> Option<Vec<f32>> {
        (h.len() == self.hidden).then(|| self.output_of(h, TEMPERATURE))
    }
}

/// The network's two layers, for [`Head::layer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layer {
    Hidden,
    Output,
}

/// Rows and columns of the tile [`add_products`] keeps in registers.
const TILE_ROWS: usize = 4;
const TILE_COLS: usize = 32;

/// `acc[r] += Σ_k a(r, k) · b[k]` for every row `r` of `acc` (rows of `width`), where
/// `a(r, k) = a[r * row_step + k * k_step]` and `b` holds `depth` rows of `width`: each
/// element's sum adds `k = 0, 1, …` in order, as a loop over `k` would. A tile of four
/// rows by 32 columns stays in registers while `k` runs, so each row of `b` is read
/// once per four rows of `acc` instead of once per row, and `acc` once in all.
///
/// A zero coefficient (an inactive unit, an absent input) adds its product too, where a
/// loop would skip it: branching on each one costs more than the product, and the sum
/// is the same to the bit. Adding `±0.0` leaves any sum but `-0.0` as it is, and no sum
/// here is ever `-0.0`: each starts at `+0.0` or at a weight, and round-to-nearest gives
/// `-0.0` only from `-0.0 + -0.0`. (A weight that is infinite or not a number would turn
/// a skipped product into one that is not a number; training that far gone has nothing
/// left to keep.)
#[expect(
    clippy::inline_always,
    reason = "compiled into each CPU's copy of `accumulate` and `layer` only when inlined there"
)]
#[inline(always)]
fn add_products(
    acc: &mut [f32],
    width: usize,
    a: &[f32],
    row_step: usize,
    k_step: usize,
    b: &[f32],
) {
    if width == 0 {
        return;
    }
    let depth = b.len() / width;
    let rows = acc.len() / width;
    let coef = |r: usize, k: usize| a[r * row_step + k * k_step];
    let mut r0 = 0;
    while r0 < rows {
        let tile_rows = (rows - r0).min(TILE_ROWS);
        let mut c0 = 0;
        while c0 < width {
            let tile_cols = (width - c0).min(TILE_COLS);
            if tile_rows == TILE_ROWS && tile_cols == TILE_COLS {
                let mut tile = [[0.0_f32; TILE_COLS]; TILE_ROWS];
                for (r, t) in tile.iter_mut().enumerate() {
                    let at = (r0 + r) * width + c0;
                    t.copy_from_slice(&acc[at..at + TILE_COLS]);
                }
                for k in 0..depth {
                    let bk = &b[k * width + c0..k * width + c0 + TILE_COLS];
                    for (r, t) in tile.iter_mut().enumerate() {
                        let c = coef(r0 + r, k);
                        for (v, w) in t.iter_mut().zip(bk) {
                            *v += c * w;
                        }
                    }
                }
                for (r, t) in tile.iter().enumerate() {
                    let at = (r0 + r) * width + c0;
                    acc[at..at + TILE_COLS].copy_from_slice(t);
                }
            } else if tile_cols == TILE_COLS {
                // Fewer rows than a tile (one text scored alone): each row's 32 columns
                // still stay in registers while `k` runs.
                for r in r0..r0 + tile_rows {
                    let at = r * width + c0;
                    let mut t = [0.0_f32; TILE_COLS];
                    t.copy_from_slice(&acc[at..at + TILE_COLS]);
                    for k in 0..depth {
                        let c = coef(r, k);
                        let bk = &b[k * width + c0..k * width + c0 + TILE_COLS];
                        for (v, w) in t.iter_mut().zip(bk) {
                            *v += c * w;
                        }
                    }
                    acc[at..at + TILE_COLS].copy_from_slice(&t);
                }
            } else {
                for r in r0..r0 + tile_rows {
                    let row = &mut acc[r * width + c0..r * width + c0 + tile_cols];
                    for k in 0..depth {
                        let c = coef(r, k);
                        let bk = &b[k * width + c0..k * width + c0 + tile_cols];
                        for (v, w) in row.iter_mut().zip(bk) {
                            *v += c * w;
                        }
                    }
                }
            }
            c0 += tile_cols;
        }
        r0 += tile_rows;
    }
}

/// Rectified units: negatives to zero.
#[expect(
    clippy::inline_always,
    reason = "inlined into each CPU's copy of `accumulate` and `layer`"
)]
#[inline(always)]
fn relu(h: &mut [f32]) {
    for v in h {
        *v = v.max(0.0);
    }
}

/// Logits to probabilities, divided by `temperature` first.
#[expect(
    clippy::inline_always,
    reason = "inlined into each CPU's copy of `accumulate`"
)]
#[inline(always)]
fn softmax(o: &mut [f32], temperature: f32) {
    let top = o.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for v in o.iter_mut() {
        *v = ((*v - top) / temperature).exp();
        sum += *v;
    }
    for v in o.iter_mut() {
        *v /= sum;
    }
}

/// `w` (rows of `classes` values) into `out`, column by column. It runs after every
/// step of training, so it goes in square blocks that stay in cache: element by element,
/// each of `out`'s writes landed a whole column away from the last.
fn transpose(w: &[f32], classes: usize, out: &mut [f32]) {
    const BLOCK: usize = 16;
    if classes == 0 {
        return;
    }
    let rows = w.len() / classes;
    for j0 in (0..rows).step_by(BLOCK) {
        let j1 = (j0 + BLOCK).min(rows);
        for c0 in (0..classes).step_by(BLOCK) {
            let c1 = (c0 + BLOCK).min(classes);
            for j in j0..j1 {
                let row = &w[j * classes..(j + 1) * classes];
                for c in c0..c1 {
                    out[c * rows + j] = row[c];
                }
            }
        }
    }
}

/// Gradients summed over a batch.
struct Grads {
    w1: Vec<f32>,
    b1: Vec<f32>,
    w2: Vec<f32>,
    b2: Vec<f32>,
}

impl Grads {
    fn new(dims: usize, hidden: usize, classes: usize) -> Self {
        Self {
            w1: vec![0.0; dims * hidden],
            b1: vec![0.0; hidden],
            w2: vec![0.0; hidden * classes],
            b2: vec![0.0; classes],
        }
    }

    fn clear(&mut self) {
        for v in [&mut self.w1, &mut self.b1, &mut self.w2, &mut self.b2] {
            v.fill(0.0);
        }
    }

    fn add(&mut self, other: &Self) {
        for (mine, theirs) in [
            (&mut self.w1, &other.w1),
            (&mut self.b1, &other.b1),
            (&mut self.w2, &other.w2),
            (&mut self.b2, &other.b2),
        ] {
            for (a, b) in mine.iter_mut().zip(theirs) {
                *a += b;
            }
        }
    }

    /// The batch's mean gradient, with the weights' L2 penalty.
    fn finish(&mut self, head: &Head, n: f32) {
        for (g, w) in self.w1.iter_mut().zip(&head.w1) {
            *g = (*g + L2 * w) / n;
        }
        for (g, w) in self.w2.iter_mut().zip(&head.w2) {
            *g = (*g + L2 * w) / n;
        }
        for g in self.b1.iter_mut().chain(self.b2.iter_mut()) {
            *g /= n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Points around a circle, the class by quadrant: opposite quadrants share a class,
    /// so no single line separates the two (exclusive or).
    fn ring() -> Vec<(Vec<f32>, u32)> {
        (0..200)
            .map(|i| {
                let a = i as f32 * 0.0314 + 0.1;
                let (x, y) = (a.cos(), a.sin());
                (vec![x, y], u32::from(x * y > 0.0))
            })
            .collect()
    }

    fn samples(data: &[(Vec<f32>, u32)]) -> Vec<Sample<'_>> {
        data.iter()
            .map(|(x, c)| Sample {
                x,
                class: *c,
                weight: 1.0,
            })
            .collect()
    }

    #[test]
    fn learns_what_one_line_cannot_and_the_same_inputs_give_the_same_weights() {
        let data = ring();
        let samples = samples(&data);
        let head = Head::train(&samples, 2).expect("trains");
        let right = data
            .iter()
            .filter(|(x, c)| {
                let p = head.probabilities(x).expect("same length");
                (p[1] > p[0]) == (*c == 1)
            })
            .count();
        assert!(right >= 190, "{right} of 200 right");
        assert_eq!(Head::train(&samples, 2), Some(head));
    }

    #[test]
    fn nothing_to_learn_from_is_no_network() {
        let x = [1.0_f32, 0.0];
        let one = [Sample {
            x: &x,
            class: 0,
            weight: 1.0,
        }];
        assert_eq!(Head::train(&one, 1), None);
        let out_of_range = [Sample {
            x: &x,
            class: 5,
            weight: 1.0,
        }];
        assert_eq!(Head::train(&out_of_range, 2), None);
        assert_eq!(Head::train(&[], 2), None);
    }

    #[test]
    fn probabilities_sum_to_one_and_a_wrong_length_is_refused() {
        let data = ring();
        let samples = samples(&data);
        let head = Head::train(&samples, 2).expect("trains");
        let p = head.probabilities(&[0.5, 0.5]).expect("same length");
        assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        assert_eq!(head.probabilities(&[0.5, 0.5, 1.0]), None);
    }

    /// Values along a sine wave, as weights and inputs whose sums round differently in
    /// any other order.
    fn wave(n: usize, k: f32) -> Vec<f32> {
        (0..n).map(|i| (i as f32 * k).sin() * 0.3).collect()
    }

    /// A network of [`HIDDEN`] units with waved weights, untrained.
    fn waved_head(dims: usize, classes: usize) -> Head {
        let hidden = HIDDEN;
        Head {
            dims,
            hidden,
            classes,
            w1: wave(dims * hidden, 0.37),
            b1: wave(hidden, 0.11),
            w2: wave(hidden * classes, 0.23),
            b2: wave(classes, 0.5),
        }
    }

    /// A text reads the same to the bit alone, among many, in whichever copy the CPU
    /// runs, and as a loop over the inputs one at a time would sum it.
    #[test]
    fn every_way_of_reading_a_text_gives_the_same_numbers() {
        let (dims, hidden) = (7, HIDDEN);
        let head = waved_head(dims, 37);
        let xs: Vec<Vec<f32>> = (0..6).map(|i| wave(dims, 1.3 + i as f32)).collect();
        let refs: Vec<&[f32]> = xs.iter().map(Vec::as_slice).collect();
        let many = head.hidden_many(&refs).expect("same length");
        let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        for (x, from_many) in xs.iter().zip(&many) {
            let alone = head.hidden(x).expect("same length");
            assert_eq!(bits(&alone), bits(from_many));
            let u = unit(x);
            let mut looped = head.b1.clone();
            for (k, xk) in u.iter().enumerate() {
                for (j, h) in looped.iter_mut().enumerate() {
                    *h += xk * head.w1[k * hidden + j];
                }
            }
            relu(&mut looped);
            assert_eq!(bits(&alone), bits(&looped));
            assert_eq!(bits(&head.layer_in_order(&u, Layer::Hidden)), bits(&alone));
            assert_eq!(
                head.probabilities_of_hidden(&alone),
                head.probabilities(x),
                "the output layer from the hidden layer read once"
            );
        }
        assert_eq!(head.hidden_many(&[&xs[0], &[1.0, 2.0]]), None);
        assert_eq!(head.probabilities_of_hidden(&[1.0; 3]), None);
    }

    /// A batch's gradient, in whichever copy the CPU runs, is to the bit the sum sample
    /// after sample gives, each unit's error summed one unit at a time.
    #[test]
    fn every_copy_of_a_gradient_step_gives_the_same_numbers() {
        let dims = 5;
        let (hidden, classes) = (HIDDEN, 37);
        let head = waved_head(dims, classes);
        let mut xs: Vec<Vec<f32>> = (0..9).map(|i| unit(&wave(dims, 1.3 + i as f32))).collect();
        xs[4][2] = 0.0;
        let part: Vec<Sample<'_>> = xs
            .iter()
            .enumerate()
            .map(|(i, x)| Sample {
                x,
                class: (i % classes) as u32,
                weight: 0.5 + i as f32 * 0.25,
            })
            .collect();
        let mut w2t = vec![0.0; head.w2.len()];
        transpose(&head.w2, classes, &mut w2t);
        let mut dispatched = Grads::new(dims, hidden, classes);
        head.accumulate(&part, &w2t, &mut dispatched);
        let mut in_order = Grads::new(dims, hidden, classes);
        head.accumulate_in_order(&part, &w2t, &mut in_order);
        // Sample after sample, each unit's error summed on its own, inactive units and
        // absent inputs skipped.
        let mut one_by_one = Grads::new(dims, hidden, classes);
        for &Sample { x, class, weight } in &part {
            let class = class as usize;
            let g = &mut one_by_one;
            let mut h = head.b1.clone();
            for (k, &xk) in x.iter().enumerate() {
                for (j, hj) in h.iter_mut().enumerate() {
                    *hj += xk * head.w1[k * hidden + j];
                }
            }
            for hj in &mut h {
                *hj = hj.max(0.0);
            }
            let mut d_out = head.b2.clone();
            for (j, &hj) in h.iter().enumerate() {
                if hj != 0.0 {
                    for (c, o) in d_out.iter_mut().enumerate() {
                        *o += hj * head.w2[j * classes + c];
                    }
                }
            }
            softmax(&mut d_out, 1.0);
            d_out[class] -= 1.0;
            for d in &mut d_out {
                *d *= weight;
            }
            for (gb, d) in g.b2.iter_mut().zip(&d_out) {
                *gb += d;
            }
            let mut d_hidden = vec![0.0_f32; hidden];
            for (j, &hj) in h.iter().enumerate() {
                if hj <= 0.0 {
                    continue;
                }
                let row = &head.w2[j * classes..(j + 1) * classes];
                for (w, d) in row.iter().zip(&d_out) {
                    d_hidden[j] += w * d;
                }
                for (c, d) in d_out.iter().enumerate() {
                    g.w2[j * classes + c] += hj * d;
                }
            }
            for (gb, d) in g.b1.iter_mut().zip(&d_hidden) {
                *gb += d;
            }
            for (k, &xk) in x.iter().enumerate() {
                if xk != 0.0 {
                    for (j, d) in d_hidden.iter().enumerate() {
                        g.w1[k * hidden + j] += xk * d;
                    }
                }
            }
        }
        let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        for (name, a, b, c) in [
            ("w1", &dispatched.w1, &in_order.w1, &one_by_one.w1),
            ("b1", &dispatched.b1, &in_order.b1, &one_by_one.b1),
            ("w2", &dispatched.w2, &in_order.w2, &one_by_one.w2),
            ("b2", &dispatched.b2, &in_order.b2, &one_by_one.b2),
        ] {
            assert_eq!(bits(a), bits(b), "{name}: dispatched against in order");
            assert_eq!(
                bits(b),
                bits(c),
                "{name}: batch against sample after sample"
            );
        }
        let h = head.hidden_of(part[0].x);
        assert!(h.iter().any(|&v| v > 0.0) && h.iter().any(|&v| v <= 0.0));
    }

    #[test]
    fn a_transposed_block_and_an_adam_step_are_the_same_on_every_cpu() {
        // Sizes that leave partial blocks on both sides.
        let (rows, classes) = (37, 23);
        let w = wave(rows * classes, 0.7);
        let mut blocked = vec![0.0; w.len()];
        transpose(&w, classes, &mut blocked);
        for j in 0..rows {
            for c in 0..classes {
                assert_eq!(
                    blocked[c * rows + j].to_bits(),
                    w[j * classes + c].to_bits()
                );
            }
        }

        let grad = wave(101, 2.1);
        let (mut dispatched, mut plain) = (Moments::new(101), Moments::new(101));
        let (mut p1, mut p2) = (wave(101, 0.3), wave(101, 0.3));
        for t in 1..=5 {
            dispatched.step(&mut p1, &grad, t);
            plain.step_in_order(&mut p2, &grad, t);
        }
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&p1), bits(&p2));
        assert_eq!(bits(&dispatched.v), bits(&plain.v));
        assert_ne!(
            bits(&p1),
            bits(&wave(101, 0.3)),
            "the steps moved the parameters"
        );
    }
}
