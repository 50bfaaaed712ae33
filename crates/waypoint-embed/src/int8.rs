//! Dense layers in 8-bit integers, for x86-64 CPUs with AVX-512 VNNI or AVX2.
//!
//! A request is a dozen tokens, so each of the encoder's 36 dense layers multiplies a
//! thin matrix by a large one. In 32 bits the weights (about 42 MB for `MiniLM`) do not
//! fit in the cache and candle repacks them for every product. Holding each weight row
//! as `i8` with one scale, and each token's activations as `u8` with a scale and a zero
//! point, cuts the bytes by four and lets one `vpdpbusd` do 64 multiply-adds. Without
//! AVX-512, AVX2 widens both to 16 bits and `vpmaddwd` does 16 (the 8-bit `vpmaddubsw`
//! would do 32, but its 16-bit pair sums saturate: 2 · 255 · 127 does not fit).
//!
//! The integer sums are exact, so the result is the same on every run; it differs from
//! the 32-bit product by the rounding of weights and activations (sentence vectors stay
//! within 0.4% in cosine of the 32-bit ones: `tests/encoder.rs`).
//!
//! Both kernels give the same integers, so a vector is the same bit for bit on either
//! kind of CPU. The encoder builds a [`QuantDense`] only when [`available`] says the CPU
//! has one of them; [`dots_portable`] computes the same integers without either, as the
//! reference the fast kernels are tested against.

/// A kernel: `sums[i][j] = Σₜ a[i][t] · w[j][t]` over rows of `width` bytes ([`dots`]).
type Dots = fn(&[u8], &[i8], usize, &mut [i32]);

/// Bytes of one 512-bit register: the unit the rows are padded to.
const LANES: usize = 64;

/// Whether this CPU can run an 8-bit kernel.
pub fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        vnni::available() || avx2::available()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// A dense layer `y = x · Wᵀ + b` with `W` quantized per output row.
#[derive(Debug, Clone)]
pub struct QuantDense {
    outputs: usize,
    inputs: usize,
    /// `inputs` rounded up to [`LANES`]; the padding holds zeros.
    padded: usize,
    weights: Vec<i8>,
    /// Per output row: the sum of its quantized weights (times a token's zero point, what
    /// that zero point added to the dot product) and the scale that turns integers back
    /// into weights.
    sums: Vec<i32>,
    scales: Vec<f32>,
    bias: Vec<f32>,
}

impl QuantDense {
    /// `weight` is `outputs × inputs`, row-major, as checkpoints store a linear layer.
    pub fn new(weight: &[f32], bias: &[f32], outputs: usize, inputs: usize) -> Self {
        let padded = inputs.div_ceil(LANES) * LANES;
        let mut weights = vec![0_i8; outputs * padded];
        let mut sums = Vec::with_capacity(outputs);
        let mut scales = Vec::with_capacity(outputs);
        for (row, out) in weight
            .chunks_exact(inputs)
            .zip(weights.chunks_exact_mut(padded))
        {
            let scale = scale_of(row);
            let inverse = scale.recip();
            let mut sum = 0_i32;
            for (w, q) in row.iter().zip(out.iter_mut()) {
                *q = to_i8(*w * inverse);
                sum += i32::from(*q);
            }
            sums.push(sum);
            scales.push(scale);
        }
        Self {
            outputs,
            inputs,
            padded,
            weights,
            sums,
            scales,
            bias: bias.to_vec(),
        }
    }

    /// `x` is `rows × inputs`, row-major; the result is `rows × outputs`.
    #[expect(clippy::inline_always, reason = "see `forward_with`")]
    #[inline(always)]
    pub fn forward(&self, x: &[f32]) -> Vec<f32> {
        self.forward_with(x, dots)
    }

    #[expect(
        clippy::inline_always,
        reason = "compiled into each CPU's copy of the encoder's layer only when inlined there"
    )]
    #[inline(always)]
    fn forward_with(&self, x: &[f32], dots: Dots) -> Vec<f32> {
        let rows = x.len() / self.inputs.max(1);
        // Padding meets zero weights, so its value never counts.
        let mut activations = vec![0_u8; rows * self.padded];
        let mut tokens = Vec::with_capacity(rows);
        for (row, out) in x
            .chunks_exact(self.inputs)
            .zip(activations.chunks_exact_mut(self.padded))
        {
            let token = Affine::of(row);
            let inverse = token.scale.recip();
            #[expect(clippy::cast_precision_loss, reason = "0..=255")]
            let zero = token.zero as f32;
            for (q, v) in out.iter_mut().zip(row) {
                *q = to_u8(*v * inverse + zero);
            }
            tokens.push(token);
        }
        let mut sums = vec![0_i32; rows * self.outputs];
        dots(&activations, &self.weights, self.padded, &mut sums);
        let mut y = vec![0.0_f32; sums.len()];
        for ((out, row), token) in y
            .chunks_exact_mut(self.outputs)
            .zip(sums.chunks_exact(self.outputs))
            .zip(&tokens)
        {
            let per_output = self.sums.iter().zip(&self.scales).zip(&self.bias);
            for ((out, s), ((w_sum, scale), bias)) in out.iter_mut().zip(row).zip(per_output) {
                #[expect(clippy::cast_precision_loss, reason = "sums stay below 2²⁴")]
                let exact = (s - token.zero * w_sum) as f32;
                *out = exact * token.scale * scale + bias;
            }
        }
        y
    }
}

/// Many vectors in 8-bit integers, one symmetric scale each, for scoring one vector
/// against all of them at once. The nearest-request vote reads every request of a
/// catalog for each clause; one pass of the 8-bit kernel over 15,000 rows takes a
/// twelfth of the time of one [`dot_i8`] per row (`cargo bench -p waypoint-embed
/// --bench rows`), for the same numbers.
#[derive(Debug, Clone, Default)]
pub struct QuantRows {
    dims: usize,
    /// `dims` rounded up to [`LANES`]; the padding holds zeros.
    padded: usize,
    values: Vec<i8>,
    /// Per row: the sum of its integers (the kernel's unsigned query adds 128 times it)
    /// and its scale.
    sums: Vec<i32>,
    scales: Vec<f32>,
}

impl QuantRows {
    /// Rows of `dims` values each, taken one at a time, so a caller holding them among
    /// other rows need not copy them out first. A row of another length is a row of
    /// zeros: the rows keep their places.
    pub fn new<'r>(rows: impl IntoIterator<Item = &'r [f32]>, dims: usize) -> Self {
        let padded = dims.div_ceil(LANES) * LANES;
        let mut values = Vec::new();
        let mut sums = Vec::new();
        let mut scales = Vec::new();
        for row in rows {
            let (q, scale) = if row.len() == dims {
                quantise(row)
            } else {
                (vec![0; dims], 1.0)
            };
            values.extend_from_slice(&q);
            values.resize(values.len() + padded - dims, 0);
            sums.push(q.iter().map(|v| i32::from(*v)).sum());
            scales.push(scale);
        }
        Self {
            dims,
            padded,
            values,
            sums,
            scales,
        }
    }

    /// How many rows there are.
    pub fn len(&self) -> usize {
        self.scales.len()
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.scales.is_empty()
    }

    /// Each row's dot product with `v` (`dims` values), both in 8-bit integers:
    /// `(Σ qᵢrᵢ as f32 · row scale) · v's scale`, the same number [`dot_i8`] gives. A
    /// vector of another length gives no rows' products.
    pub fn dots(&self, v: &[f32]) -> Vec<f32> {
        self.dots_with(v, dots)
    }

    fn dots_with(&self, v: &[f32], dots: Dots) -> Vec<f32> {
        if v.len() != self.dims || self.is_empty() {
            return Vec::new();
        }
        let (q, v_scale) = quantise(v);
        // The kernels multiply unsigned bytes by signed ones: the query is shifted by 128
        // into 1..=255, and 128 times each row's sum comes off again, exactly.
        let mut shifted = vec![0_u8; self.padded];
        for (s, x) in shifted.iter_mut().zip(&q) {
            *s = x.cast_unsigned() ^ 0x80;
        }
        let mut sums = vec![0_i32; self.len()];
        dots(&shifted, &self.values, self.padded, &mut sums);
        sums.iter()
            .zip(&self.sums)
            .zip(&self.scales)
            .map(|((s, row_sum), scale)| {
                #[expect(
                    clippy::cast_precision_loss,
                    reason = "sums of 8-bit products stay below 2²⁴"
                )]
                let exact = (s - 128 * row_sum) as f32;
                exact * scale * v_scale
            })
            .collect()
    }
}

/// How one token's activations map to bytes: `x ≈ scale · (q - zero)`. The range always
/// holds 0, and spans the token's own minimum and maximum, so a one-sided row (what
/// GELU gives) uses all 256 steps instead of half of them.
struct Affine {
    scale: f32,
    zero: i32,
}

impl Affine {
    #[expect(clippy::inline_always, reason = "see `QuantDense::forward_with`")]
    #[inline(always)]
    fn of(row: &[f32]) -> Self {
        // Kept in 16 lanes so the loop vectorizes; NaN never compares beyond a bound.
        let mut lo = [0.0_f32; 16];
        let mut hi = [0.0_f32; 16];
        let chunks = row.chunks_exact(lo.len());
        let rest = chunks.remainder();
        for chunk in chunks {
            for ((l, h), v) in lo.iter_mut().zip(&mut hi).zip(chunk) {
                *l = if *v < *l { *v } else { *l };
                *h = if *v > *h { *v } else { *h };
            }
        }
        let low = lo
            .iter()
            .chain(rest)
            .fold(0.0_f32, |m, v| if *v < m { *v } else { m });
        let high = hi
            .iter()
            .chain(rest)
            .fold(0.0_f32, |m, v| if *v > m { *v } else { m });
        let span = high - low;
        if !(span > 0.0 && span.is_finite()) {
            return Self {
                scale: 1.0,
                zero: 0,
            };
        }
        let scale = span / 255.0;
        Self {
            scale,
            zero: i32::from(to_u8(-low / scale)),
        }
    }
}

/// A vector as 8-bit integers on one symmetric scale (its largest magnitude maps to
/// 127), and that scale: `v ≈ scale · q`.
pub fn quantise(v: &[f32]) -> (Vec<i8>, f32) {
    let scale = scale_of(v);
    (v.iter().map(|x| to_i8(x / scale)).collect(), scale)
}

/// `Σ aᵢbᵢ` of two 8-bit vectors, exact in 32 bits for any sentence-vector length.
pub fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| i32::from(*x) * i32::from(*y))
        .sum()
}

/// The step that maps a weight row's largest magnitude to 127 (1 for a row of zeros).
fn scale_of(row: &[f32]) -> f32 {
    let max = row
        .iter()
        .fold(0.0_f32, |m, v| if v.abs() > m { v.abs() } else { m });
    if max > 0.0 && max.is_finite() {
        max / 127.0
    } else {
        1.0
    }
}

/// Rounds half away from zero. `f32::round` is a library call on baseline x86-64; the
/// truncating cast is one instruction, and this runs once per weight and activation.
#[expect(
    clippy::cast_possible_truncation,
    reason = "clamped to the i8 range first; NaN becomes 0"
)]
fn to_i8(v: f32) -> i8 {
    (v + 0.5_f32.copysign(v)).clamp(-127.0, 127.0) as i8
}

/// Rounds half up, to 0..=255 (NaN becomes 0).
#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "clamped to the u8 range first"
)]
#[expect(clippy::inline_always, reason = "see `QuantDense::forward_with`")]
#[inline(always)]
fn to_u8(v: f32) -> u8 {
    (v + 0.5).clamp(0.0, 255.0) as u8
}

/// `sums[i][j] = Σₜ a[i][t] · w[j][t]` over rows of `width` bytes, with the fastest
/// kernel the CPU has.
fn dots(a: &[u8], w: &[i8], width: usize, sums: &mut [i32]) {
    #[cfg(target_arch = "x86_64")]
    if width > 0
        && width.is_multiple_of(LANES)
        && (vnni::dots_checked(a, w, width, sums) || avx2::dots_checked(a, w, width, sums))
    {
        return;
    }
    dots_portable(a, w, width, sums);
}

/// The same integers as the fast kernels, one multiply-add at a time.
pub fn dots_portable(a: &[u8], w: &[i8], width: usize, sums: &mut [i32]) {
    let outputs = w.len() / width.max(1);
    for (row, out) in a.chunks_exact(width).zip(sums.chunks_exact_mut(outputs)) {
        for (wrow, s) in w.chunks_exact(width).zip(out.iter_mut()) {
            *s = row
                .iter()
                .zip(wrow)
                .map(|(x, y)| i32::from(*x) * i32::from(*y))
                .sum();
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(
    unsafe_code,
    reason = "AVX-512 loads take raw pointers; each is of a 64-byte slice just taken"
)]
mod vnni {
    use std::arch::x86_64::{
        __m512i, _mm512_dpbusd_epi32, _mm512_loadu_si512, _mm512_reduce_add_epi32,
        _mm512_setzero_si512,
    };

    use super::LANES;

    /// Weight rows per block: four rows' accumulators for each of three activation rows
    /// fill 12 of the 32 registers and reuse each load three or four times.
    const W_ROWS: usize = 4;
    const A_ROWS: usize = 3;

    pub(super) fn available() -> bool {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vnni")
    }

    /// Computes the sums and says so, where the CPU has the instructions; `width` is a
    /// positive multiple of [`LANES`].
    pub(super) fn dots_checked(a: &[u8], w: &[i8], width: usize, sums: &mut [i32]) -> bool {
        if !available() {
            return false;
        }
        // SAFETY: the CPU has avx512f, avx512bw and avx512vnni (checked just above).
        unsafe { dots(a, w, width, sums) };
        true
    }

    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    fn dots(a: &[u8], w: &[i8], width: usize, sums: &mut [i32]) {
        let rows = a.len() / width;
        let outputs = w.len() / width;
        let mut i = 0;
        while i < rows {
            let take = (rows - i).min(A_ROWS);
            let mut j = 0;
            while j < outputs {
                let wtake = (outputs - j).min(W_ROWS);
                match (wtake, take) {
                    (W_ROWS, A_ROWS) => block::<W_ROWS, A_ROWS>(a, w, width, i, j, outputs, sums),
                    (W_ROWS, 2) => block::<W_ROWS, 2>(a, w, width, i, j, outputs, sums),
                    (W_ROWS, _) => block::<W_ROWS, 1>(a, w, width, i, j, outputs, sums),
                    _ => {
                        for ii in i..i + take {
                            for jj in j..j + wtake {
                                block::<1, 1>(a, w, width, ii, jj, outputs, sums);
                            }
                        }
                    }
                }
                j += wtake;
            }
            i += take;
        }
    }

    /// Dot products of weight rows `j..j+R` with activation rows `i..i+C`.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    #[inline]
    #[expect(
        clippy::many_single_char_names,
        reason = "a, w, i, j and t name the matrices and indices of the product"
    )]
    fn block<const R: usize, const C: usize>(
        a: &[u8],
        w: &[i8],
        width: usize,
        i: usize,
        j: usize,
        outputs: usize,
        sums: &mut [i32],
    ) {
        let mut acc = [[_mm512_setzero_si512(); C]; R];
        let mut t = 0;
        while t < width {
            let mut xs = [_mm512_setzero_si512(); C];
            for (c, x) in xs.iter_mut().enumerate() {
                let at = (i + c) * width + t;
                *x = load(&a[at..at + LANES]);
            }
            for (r, row_acc) in acc.iter_mut().enumerate() {
                let at = (j + r) * width + t;
                let ws = load(&w[at..at + LANES]);
                for (c, s) in row_acc.iter_mut().enumerate() {
                    *s = _mm512_dpbusd_epi32(*s, xs[c], ws);
                }
            }
            t += LANES;
        }
        for (r, row_acc) in acc.iter().enumerate() {
            for (c, s) in row_acc.iter().enumerate() {
                sums[(i + c) * outputs + j + r] = _mm512_reduce_add_epi32(*s);
            }
        }
    }

    #[target_feature(enable = "avx512f")]
    #[inline]
    fn load<T>(bytes: &[T]) -> __m512i {
        assert_eq!(std::mem::size_of_val(bytes), LANES);
        // SAFETY: `bytes` is 64 bytes long (asserted); the load is unaligned.
        unsafe { _mm512_loadu_si512(bytes.as_ptr().cast()) }
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(
    unsafe_code,
    reason = "AVX2 loads take raw pointers; each is 16 bytes inside a row sliced once"
)]
mod avx2 {
    use std::arch::x86_64::{
        __m128i, __m256i, _mm_add_epi32, _mm_cvtsi128_si32, _mm_loadu_si128, _mm_shuffle_epi32,
        _mm256_add_epi32, _mm256_castsi256_si128, _mm256_cvtepi8_epi16, _mm256_cvtepu8_epi16,
        _mm256_extracti128_si256, _mm256_madd_epi16, _mm256_setzero_si256,
    };

    /// Bytes widened per step: sixteen 16-bit lanes of a 256-bit register.
    const STEP: usize = 16;
    /// Weight rows and activation rows per block: 8 accumulators, 2 activations and a
    /// weight fill 11 of the 16 registers.
    const W_ROWS: usize = 4;
    const A_ROWS: usize = 2;

    pub(super) fn available() -> bool {
        std::arch::is_x86_feature_detected!("avx2")
    }

    /// Computes the sums and says so, where the CPU has AVX2; `width` is a positive
    /// multiple of 16.
    pub(super) fn dots_checked(a: &[u8], w: &[i8], width: usize, sums: &mut [i32]) -> bool {
        if !available() {
            return false;
        }
        // SAFETY: the CPU has avx2 (checked just above).
        unsafe { dots(a, w, width, sums) };
        true
    }

    /// Weight rows outside, activation rows inside: a request's dozen tokens stay in the
    /// cache while the weights (megabytes) stream past once, instead of once per block
    /// of tokens.
    #[target_feature(enable = "avx2")]
    fn dots(a: &[u8], w: &[i8], width: usize, sums: &mut [i32]) {
        let rows = a.len() / width;
        let outputs = w.len() / width;
        let mut j = 0;
        while j < outputs {
            let wtake = (outputs - j).min(W_ROWS);
            let mut i = 0;
            while i < rows {
                let take = (rows - i).min(A_ROWS);
                match (wtake, take) {
                    (W_ROWS, A_ROWS) => block::<W_ROWS, A_ROWS>(a, w, width, i, j, outputs, sums),
                    (W_ROWS, _) => block::<W_ROWS, 1>(a, w, width, i, j, outputs, sums),
                    _ => {
                        for ii in i..i + take {
                            for jj in j..j + wtake {
                                block::<1, 1>(a, w, width, ii, jj, outputs, sums);
                            }
                        }
                    }
                }
                i += take;
            }
            j += wtake;
        }
    }

    /// Dot products of weight rows `j..j+R` with activation rows `i..i+C`: each step
    /// widens 16 bytes of every row to 16 bits and multiplies them in pairs into 32-bit
    /// lanes, exactly. The rows are sliced (and bounds-checked) once, so the loop keeps
    /// its pointers in registers.
    #[target_feature(enable = "avx2")]
    #[inline]
    #[expect(
        clippy::many_single_char_names,
        reason = "a, w, i, j and t name the matrices and indices of the product"
    )]
    fn block<const R: usize, const C: usize>(
        a: &[u8],
        w: &[i8],
        width: usize,
        i: usize,
        j: usize,
        outputs: usize,
        sums: &mut [i32],
    ) {
        let mut xs_rows: [&[u8]; C] = [&[]; C];
        for (c, row) in xs_rows.iter_mut().enumerate() {
            *row = &a[(i + c) * width..][..width];
        }
        let mut ws_rows: [&[i8]; R] = [&[]; R];
        for (r, row) in ws_rows.iter_mut().enumerate() {
            *row = &w[(j + r) * width..][..width];
        }
        let mut acc = [[_mm256_setzero_si256(); C]; R];
        let mut t = 0;
        while t + STEP <= width {
            // A loop, not `array::from_fn`: `from_fn` is compiled without AVX2, so it
            // cannot inline a closure that uses it, and every widening would be a call.
            let mut xs = [_mm256_setzero_si256(); C];
            for (x, row) in xs.iter_mut().zip(&xs_rows) {
                // SAFETY: every row is `width` bytes long and `t + STEP <= width`.
                *x = _mm256_cvtepu8_epi16(unsafe { load(row, t) });
            }
            for (row_acc, ws_row) in acc.iter_mut().zip(&ws_rows) {
                // SAFETY: as above.
                let ws = _mm256_cvtepi8_epi16(unsafe { load(ws_row, t) });
                for (s, x) in row_acc.iter_mut().zip(&xs) {
                    *s = _mm256_add_epi32(*s, _mm256_madd_epi16(*x, ws));
                }
            }
            t += STEP;
        }
        for (r, row_acc) in acc.iter().enumerate() {
            for (c, s) in row_acc.iter().enumerate() {
                sums[(i + c) * outputs + j + r] = sum(*s);
            }
        }
    }

    /// The sum of a register's eight 32-bit lanes.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn sum(v: __m256i) -> i32 {
        let s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v));
        let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b01_00_11_10>(s));
        let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b10_11_00_01>(s));
        _mm_cvtsi128_si32(s)
    }

    /// The 16 bytes of `row` from `at`.
    ///
    /// # Safety
    /// `at + 16 <= row.len()`.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn load<T: Copy>(row: &[T], at: usize) -> __m128i {
        debug_assert!(size_of::<T>() == 1 && at + STEP <= row.len());
        // SAFETY: the caller keeps the 16 bytes inside `row`; the load is unaligned.
        unsafe { _mm_loadu_si128(row.as_ptr().add(at).cast()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(seed: &mut u64) -> f32 {
        *seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        #[expect(clippy::cast_precision_loss, reason = "a test's pseudo-random numbers")]
        let v = (*seed >> 40) as f32 / (1_u64 << 24) as f32;
        v * 2.0 - 1.0
    }

    fn random(n: usize, seed: &mut u64) -> Vec<f32> {
        (0..n).map(|_| lcg(seed)).collect()
    }

    /// Each fast kernel this CPU runs, by name, as `dots` would call it.
    #[cfg(target_arch = "x86_64")]
    fn fast_kernels() -> Vec<(&'static str, Dots)> {
        fn with_vnni(a: &[u8], w: &[i8], width: usize, sums: &mut [i32]) {
            assert!(vnni::dots_checked(a, w, width, sums));
        }
        fn with_avx2(a: &[u8], w: &[i8], width: usize, sums: &mut [i32]) {
            assert!(avx2::dots_checked(a, w, width, sums));
        }
        let mut out: Vec<(&'static str, Dots)> = Vec::new();
        if vnni::available() {
            out.push(("avx512-vnni", with_vnni));
        }
        if avx2::available() {
            out.push(("avx2", with_avx2));
        }
        out
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn each_fast_kernel_gives_the_portable_integers_for_every_shape() {
        let kernels = fast_kernels();
        if kernels.is_empty() {
            eprintln!("skipped: this CPU has neither AVX-512 VNNI nor AVX2");
        }
        let mut seed = 7;
        // Rows and outputs that fill whole blocks, leave remainders, or are fewer than one
        // block; inputs padded from 1, 100 and 64 bytes, and the encoder's own widths.
        let shapes = [
            (1, 1, 1),
            (12, 384, 384),
            (5, 7, 100),
            (4, 9, 64),
            (3, 1536, 384),
            (7, 384, 1536),
        ];
        for (rows, outputs, inputs) in shapes {
            let dense = QuantDense::new(
                &random(outputs * inputs, &mut seed),
                &random(outputs, &mut seed),
                outputs,
                inputs,
            );
            let x = random(rows * inputs, &mut seed);
            let portable = dense.forward_with(&x, dots_portable);
            assert_eq!(
                dense.forward(&x),
                portable,
                "dots, {rows}×{inputs} · {outputs}×{inputs}"
            );
            for (name, kernel) in &kernels {
                let fast = dense.forward_with(&x, *kernel);
                assert_eq!(
                    fast, portable,
                    "{name}, {rows}×{inputs} · {outputs}×{inputs}"
                );
            }
        }
    }

    #[test]
    fn rows_give_one_dot_product_at_a_time_exactly_with_every_kernel() {
        let mut seed = 5;
        // The sentence vectors' width, one past a register, less than one, and one.
        for (count, dims) in [(300, 384), (9, 65), (4, 10), (3, 1)] {
            let rows = random(count * dims, &mut seed);
            let v = random(dims, &mut seed);
            let quant = QuantRows::new(rows.chunks_exact(dims), dims);
            assert_eq!(quant.len(), count);
            let (q, v_scale) = quantise(&v);
            let want: Vec<f32> = rows
                .chunks_exact(dims)
                .map(|row| {
                    let (r, scale) = quantise(row);
                    #[expect(clippy::cast_precision_loss, reason = "small sums")]
                    let exact = dot_i8(&r, &q) as f32;
                    exact * scale * v_scale
                })
                .collect();
            assert_eq!(quant.dots(&v), want, "dots, {count} rows of {dims}");
            assert_eq!(quant.dots_with(&v, dots_portable), want, "portable, {dims}");
            #[cfg(target_arch = "x86_64")]
            for (name, kernel) in fast_kernels() {
                assert_eq!(quant.dots_with(&v, kernel), want, "{name}, {dims}");
            }
        }
        // A vector of another length, and no rows, give nothing.
        assert!(
            QuantRows::new([&[0.5; 4][..]], 4)
                .dots(&[1.0; 3])
                .is_empty()
        );
        assert!(QuantRows::new([], 4).dots(&[1.0; 4]).is_empty());
        assert!(QuantRows::new([], 0).is_empty());
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_largest_products_do_not_overflow_either_kernel() {
        // Every activation at 255 and every weight at ±127: the 16-bit pair sums of the
        // 8-bit multiply-add would saturate here; the kernels must stay exact.
        let (rows, outputs, padded) = (2, 4, 128);
        let a = vec![255_u8; rows * padded];
        let mut w = vec![127_i8; outputs * padded];
        w[padded..2 * padded].fill(-127);
        let mut want = vec![0_i32; rows * outputs];
        dots_portable(&a, &w, padded, &mut want);
        assert_eq!(want[0], 255 * 127 * 128);
        for (name, kernel) in fast_kernels() {
            let mut got = vec![0_i32; rows * outputs];
            kernel(&a, &w, padded, &mut got);
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn the_product_is_close_to_the_float_one() {
        let mut seed = 11;
        let (rows, outputs, inputs) = (6, 32, 384);
        let weight = random(outputs * inputs, &mut seed);
        let bias = random(outputs, &mut seed);
        let x = random(rows * inputs, &mut seed);
        let y = QuantDense::new(&weight, &bias, outputs, inputs).forward(&x);
        for i in 0..rows {
            for j in 0..outputs {
                let exact: f32 = (0..inputs)
                    .map(|t| x[i * inputs + t] * weight[j * inputs + t])
                    .sum::<f32>()
                    + bias[j];
                // Sums of 384 products of magnitude ≤ 1: rounding each factor to 1/127
                // of its row's maximum keeps the error near 0.1.
                assert!((y[i * outputs + j] - exact).abs() < 0.15, "{i},{j}");
            }
        }
    }

    #[test]
    fn rows_of_zeros_and_non_finite_values_give_finite_outputs() {
        let dense = QuantDense::new(&[0.0; 64], &[0.5], 1, 64);
        assert_eq!(dense.forward(&[0.0; 64]), vec![0.5]);
        let mut x = vec![1.0; 64];
        x[3] = f32::NAN;
        assert!(dense.forward(&x)[0].is_finite());
    }
}
