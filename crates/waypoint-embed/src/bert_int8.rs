//! One BERT layer for the 8-bit path, over plain row-major vectors.
//!
//! The arithmetic is the layer of `bert.rs`; what differs is that nothing here is a
//! tensor. For a dozen tokens candle's per-operation costs (a thread hand-off for each
//! small product, a fresh buffer for each step) were a third of the time once the dense
//! products ran in [`QuantDense`], so attention, the layer norms and GELU are loops.
//! Query, key and value share one product: their weights are stacked at load.

use candle_core::Result;
use candle_nn::{LayerNorm, VarBuilder, layer_norm, linear};

use crate::bert::Config;
use crate::encoder::dot_in_lanes;
use crate::int8::QuantDense;

/// `(x - mean) / sqrt(var + eps) · weight + bias` over each token's hidden vector.
struct Norm {
    weight: Vec<f32>,
    bias: Vec<f32>,
    eps: f32,
}

impl Norm {
    fn from(norm: &LayerNorm) -> Result<Self> {
        let bias = match norm.bias() {
            Some(b) => b.to_vec1::<f32>()?,
            None => vec![0.0; norm.weight().dim(0)?],
        };
        #[expect(clippy::cast_possible_truncation, reason = "a small epsilon")]
        let eps = norm.eps() as f32;
        Ok(Self {
            weight: norm.weight().to_vec1::<f32>()?,
            bias,
            eps,
        })
    }

    #[expect(clippy::inline_always, reason = "see `Int8Layer::forward_in_order`")]
    #[inline(always)]
    fn apply(&self, x: &mut [f32]) {
        let width = self.weight.len();
        #[expect(clippy::cast_precision_loss, reason = "hidden sizes are small")]
        let n = width as f32;
        for row in x.chunks_exact_mut(width) {
            let mean = row.iter().sum::<f32>() / n;
            let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n;
            let inv = (var + self.eps).sqrt().recip();
            for ((v, w), b) in row.iter_mut().zip(&self.weight).zip(&self.bias) {
                *v = (*v - mean) * inv * w + b;
            }
        }
    }
}

pub(crate) struct Int8Layer {
    /// Query, key and value: `3 × hidden` outputs, in that order.
    qkv: QuantDense,
    attn_out: QuantDense,
    attn_norm: Norm,
    up: QuantDense,
    down: QuantDense,
    out_norm: Norm,
    hidden: usize,
    heads: usize,
}

impl Int8Layer {
    pub(crate) fn load(vb: &VarBuilder, c: &Config) -> Result<Self> {
        let h = c.hidden_size;
        let att = vb.pp("attention");
        let dense = |inputs: usize, outputs: usize, vb: VarBuilder| -> Result<QuantDense> {
            let (weight, bias) = weights(inputs, outputs, vb)?;
            Ok(QuantDense::new(&weight, &bias, outputs, inputs))
        };
        let mut qkv_weight = Vec::with_capacity(3 * h * h);
        let mut qkv_bias = Vec::with_capacity(3 * h);
        for part in ["query", "key", "value"] {
            let (weight, bias) = weights(h, h, att.pp("self").pp(part))?;
            qkv_weight.extend(weight);
            qkv_bias.extend(bias);
        }
        let eps = c.layer_norm_eps;
        Ok(Self {
            qkv: QuantDense::new(&qkv_weight, &qkv_bias, 3 * h, h),
            attn_out: dense(h, h, att.pp("output").pp("dense"))?,
            attn_norm: Norm::from(&layer_norm(h, eps, att.pp("output").pp("LayerNorm"))?)?,
            up: dense(h, c.intermediate_size, vb.pp("intermediate").pp("dense"))?,
            down: dense(c.intermediate_size, h, vb.pp("output").pp("dense"))?,
            out_norm: Norm::from(&layer_norm(h, eps, vb.pp("output").pp("LayerNorm"))?)?,
            hidden: h,
            heads: c.num_attention_heads,
        })
    }

    /// `x` is `batch × tokens × hidden`; `mask` is `batch × tokens`, 0 for a real token
    /// and a large negative number for padding.
    ///
    /// Where the CPU has AVX2, the float work around the 8-bit products (attention, GELU,
    /// layer norms, quantising the activations) runs in a copy compiled for it: the same
    /// operations in the same order on wider vectors (no fused multiply-add), so the
    /// same vectors to the bit, about twice as many values a step.
    pub(crate) fn forward(&self, x: &[f32], tokens: usize, mask: &[f32]) -> Vec<f32> {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            #[expect(
                unsafe_code,
                reason = "calling a function compiled for AVX2 needs the CPU to have it"
            )]
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { self.forward_avx2(x, tokens, mask) };
        }
        self.forward_in_order(x, tokens, mask)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn forward_avx2(&self, x: &[f32], tokens: usize, mask: &[f32]) -> Vec<f32> {
        self.forward_in_order(x, tokens, mask)
    }

    #[expect(
        clippy::inline_always,
        reason = "compiled into each CPU's copy of `forward` only when inlined there"
    )]
    #[inline(always)]
    fn forward_in_order(&self, x: &[f32], tokens: usize, mask: &[f32]) -> Vec<f32> {
        let context = self.attention(&self.qkv.forward(x), tokens, mask);
        let mut x1 = self.attn_out.forward(&context);
        for (a, b) in x1.iter_mut().zip(x) {
            *a += b;
        }
        self.attn_norm.apply(&mut x1);
        let mut hidden = self.up.forward(&x1);
        gelu_erf(&mut hidden);
        let mut out = self.down.forward(&hidden);
        for (a, b) in out.iter_mut().zip(&x1) {
            *a += b;
        }
        self.out_norm.apply(&mut out);
        out
    }

    /// Scaled dot-product attention per head, from the stacked query, key and value rows.
    #[expect(clippy::inline_always, reason = "see `forward_in_order`")]
    #[inline(always)]
    fn attention(&self, qkv: &[f32], tokens: usize, mask: &[f32]) -> Vec<f32> {
        let h = self.hidden;
        let dim = h / self.heads.max(1);
        #[expect(clippy::cast_precision_loss, reason = "head sizes are small integers")]
        let scale = (dim as f32).sqrt().recip();
        let stride = 3 * h;
        let mut context = vec![0.0_f32; qkv.len() / 3];
        if tokens == 0 {
            return context;
        }
        let mut weights = vec![0.0_f32; tokens];
        for (seq, (rows, mask)) in qkv
            .chunks_exact(tokens * stride)
            .zip(mask.chunks_exact(tokens))
            .enumerate()
        {
            for head in 0..self.heads {
                let (q_at, k_at, v_at) = (head * dim, h + head * dim, 2 * h + head * dim);
                for i in 0..tokens {
                    let q = &rows[i * stride + q_at..][..dim];
                    let mut max = f32::NEG_INFINITY;
                    for (j, w) in weights.iter_mut().enumerate() {
                        let k = &rows[j * stride + k_at..][..dim];
                        *w = dot_in_lanes(q, k) * scale + mask[j];
                        max = max.max(*w);
                    }
                    let mut total = 0.0;
                    for w in &mut weights {
                        *w = (*w - max).exp();
                        total += *w;
                    }
                    let out = &mut context[(seq * tokens + i) * h + head * dim..][..dim];
                    for (j, w) in weights.iter().enumerate() {
                        let v = &rows[j * stride + v_at..][..dim];
                        let p = w / total;
                        for (o, x) in out.iter_mut().zip(v) {
                            *o += p * x;
                        }
                    }
                }
            }
        }
        context
    }
}

/// A linear layer's weight (`outputs × inputs`, row-major) and bias (zeros when it has
/// none), as plain vectors.
fn weights(inputs: usize, outputs: usize, vb: VarBuilder) -> Result<(Vec<f32>, Vec<f32>)> {
    let l = linear(inputs, outputs, vb)?;
    let bias = match l.bias() {
        Some(b) => b.to_vec1::<f32>()?,
        None => vec![0.0; outputs],
    };
    Ok((l.weight().flatten_all()?.to_vec1::<f32>()?, bias))
}

/// `x · Φ(x)` with the exact (erf) normal CDF, as BERT was trained with, in place.
/// candle's `gelu_erf` calls the C library's `erf` per value; this form (Abramowitz and
/// Stegun 7.1.26, absolute error below 2·10⁻⁷) is a handful of multiplications.
#[expect(clippy::inline_always, reason = "see `Int8Layer::forward_in_order`")]
#[inline(always)]
fn gelu_erf(values: &mut [f32]) {
    for v in values {
        let z = (*v * std::f32::consts::FRAC_1_SQRT_2).abs();
        let t = 1.0 / (1.0 + 0.327_591_1 * z);
        let poly = t
            * (0.254_829_6
                + t * (-0.284_496_74 + t * (1.421_413_7 + t * (-1.453_152 + t * 1.061_405_4))));
        let erf = (1.0 - poly * exp_non_positive(-z * z)).copysign(*v);
        *v *= 0.5 * (1.0 + erf);
    }
}

/// `eˣ` for `x ≤ 0` (`x` below -87 gives 0), to about 2·10⁻⁷ relative: `2ⁿ · e^r` with
/// `r` in ±ln2/2 and a degree-6 polynomial for `e^r`.
#[expect(
    clippy::many_single_char_names,
    reason = "x, k, n, r and p are the range reduction's own names"
)]
#[expect(clippy::inline_always, reason = "see `Int8Layer::forward_in_order`")]
#[inline(always)]
fn exp_non_positive(x: f32) -> f32 {
    let x = x.max(-87.0);
    #[expect(
        clippy::cast_possible_truncation,
        reason = "truncates toward zero on purpose: -126..=0"
    )]
    let k = (x * std::f32::consts::LOG2_E - 0.5) as i32;
    #[expect(clippy::cast_precision_loss, reason = "a small integer")]
    let n = k as f32;
    // ln 2 in two parts, the first exact in a few bits, so `n · LN2_HI` is exact.
    let r = (x - n * 0.693_359_4) + n * 2.121_944_4e-4;
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (0.166_666_67
                    + r * (0.041_666_668 + r * (0.008_333_334 + r * 0.001_388_889)))));
    // k is in -126..=0, so k + 127 is a normal number's biased exponent.
    let scale = f32::from_bits((k + 127).cast_unsigned() << 23);
    p * scale
}

#[cfg(test)]
mod tests {
    use candle_core::{Device, Tensor};

    use super::*;

    #[test]
    fn gelu_matches_the_erf_form_within_float_error() {
        let xs: Vec<f32> = (-1200..=1200).map(|i| i as f32 / 100.0).collect();
        let mut ours = xs.clone();
        gelu_erf(&mut ours);
        let candle = Tensor::new(xs.as_slice(), &Device::Cpu)
            .and_then(|t| t.gelu_erf())
            .and_then(|t| t.to_vec1::<f32>())
            .unwrap();
        assert_eq!(candle.len(), xs.len());
        for ((x, a), b) in xs.iter().zip(&ours).zip(&candle) {
            assert!(
                (a - b).abs() <= 2e-6 * (1.0 + x.abs()),
                "gelu({x}): {a} vs {b}"
            );
        }
    }

    #[test]
    fn exp_is_close_over_its_range_and_zero_far_below() {
        for i in 0..=8700 {
            let x = -(i as f32) / 100.0;
            let want = x.exp();
            let got = exp_non_positive(x);
            assert!(
                (got - want).abs() <= 4e-7 * want,
                "exp({x}): {got} vs {want}"
            );
        }
        assert!(exp_non_positive(-1e9) < 1e-37);
        assert!((exp_non_positive(0.0) - 1.0).abs() < 1e-7);
    }

    #[test]
    fn layer_norm_matches_candles() {
        let weight = Tensor::new(&[1.0_f32, 2.0, 0.5, -1.0], &Device::Cpu).unwrap();
        let bias = Tensor::new(&[0.0_f32, 0.1, -0.2, 0.3], &Device::Cpu).unwrap();
        let norm = LayerNorm::new(weight, bias, 1e-12);
        let x = [0.3_f32, -1.2, 4.0, 0.7, 2.0, 2.0, 2.5, -3.0];
        let want = Tensor::new(&x, &Device::Cpu)
            .and_then(|t| t.reshape((2, 4)))
            .and_then(|t| candle_core::Module::forward(&norm, &t))
            .and_then(|t| t.flatten_all())
            .and_then(|t| t.to_vec1::<f32>())
            .unwrap();
        let mut got = x.to_vec();
        Norm::from(&norm).unwrap().apply(&mut got);
        assert_eq!(want.len(), got.len());
        for (a, b) in got.iter().zip(&want) {
            assert!((a - b).abs() < 1e-5, "{got:?} vs {want:?}");
        }
    }
}
