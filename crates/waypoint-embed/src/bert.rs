//! The BERT encoder (the architecture of all-MiniLM-L6-v2 and most sentence-transformers
//! models): token, position and segment embeddings, then `layers` blocks of multi-head
//! self-attention and a feed-forward network, each followed by a residual layer norm.
//!
//! Inference only; dropout is absent. Weights are read by their Hugging Face names, with
//! or without the `bert.` prefix a model saved from a task head carries.

use candle_core::{D, DType, Device, Module, Result, Tensor};
use candle_nn::{Embedding, LayerNorm, Linear, VarBuilder, embedding, layer_norm, linear};
use serde::Deserialize;

use crate::int8::{self, QuantDense};

/// The fields of `config.json` the encoder reads.
#[derive(Debug, Clone, Deserialize)]
pub struct Config {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    pub max_position_embeddings: usize,
    #[serde(default = "two")]
    pub type_vocab_size: usize,
    #[serde(default = "eps")]
    pub layer_norm_eps: f64,
    #[serde(default = "gelu")]
    pub hidden_act: String,
    #[serde(default)]
    pub model_type: Option<String>,
}

fn two() -> usize {
    2
}
fn eps() -> f64 {
    1e-12
}
fn gelu() -> String {
    "gelu".to_string()
}

struct Embeddings {
    words: Embedding,
    positions: Embedding,
    segments: Embedding,
    norm: LayerNorm,
}

impl Embeddings {
    fn load(vb: &VarBuilder, c: &Config) -> Result<Self> {
        Ok(Self {
            words: embedding(c.vocab_size, c.hidden_size, vb.pp("word_embeddings"))?,
            positions: embedding(
                c.max_position_embeddings,
                c.hidden_size,
                vb.pp("position_embeddings"),
            )?,
            segments: embedding(
                c.type_vocab_size,
                c.hidden_size,
                vb.pp("token_type_embeddings"),
            )?,
            norm: layer_norm(c.hidden_size, c.layer_norm_eps, vb.pp("LayerNorm"))?,
        })
    }

    fn forward(&self, ids: &Tensor) -> Result<Tensor> {
        let (_, len) = ids.dims2()?;
        let device = ids.device();
        let positions =
            Tensor::arange(0_u32, u32::try_from(len).unwrap_or(u32::MAX), device)?.unsqueeze(0)?;
        let segments = ids.zeros_like()?;
        let x = self
            .words
            .forward(ids)?
            .broadcast_add(&self.positions.forward(&positions)?)?
            .add(&self.segments.forward(&segments)?)?;
        self.norm.forward(&x)
    }
}

/// How the dense layers' weights are held and multiplied (`[embed] precision`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// 32-bit floats, exactly as the checkpoint stores them.
    F32,
    /// 8-bit integers with a scale per weight row and per token (`int8`), quantized
    /// once at load; about three times faster for a request. Only on CPUs with AVX-512
    /// VNNI: elsewhere it is [`Precision::F32`].
    Int8,
}

impl Precision {
    /// The fastest precision this CPU runs.
    pub fn best() -> Self {
        Self::Int8.on_this_cpu()
    }

    /// What this precision becomes on this CPU.
    #[must_use]
    pub fn on_this_cpu(self) -> Self {
        match self {
            Self::Int8 if int8::available() => Self::Int8,
            _ => Self::F32,
        }
    }
}

/// A dense layer: `x · Wᵀ + b`, with `W` in the chosen precision.
enum Dense {
    F32(Linear),
    Int8(QuantDense),
}

impl Dense {
    fn load(inputs: usize, outputs: usize, vb: VarBuilder, precision: Precision) -> Result<Self> {
        let linear = linear(inputs, outputs, vb)?;
        Ok(match (precision.on_this_cpu(), linear.bias()) {
            (Precision::Int8, Some(bias)) => {
                let weight = linear.weight().flatten_all()?.to_vec1::<f32>()?;
                let bias = bias.to_vec1::<f32>()?;
                Self::Int8(QuantDense::new(&weight, &bias, outputs, inputs))
            }
            _ => Self::F32(linear),
        })
    }
}

impl Dense {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        self.forward_then(x, |_| ())
    }

    /// `gelu(x · Wᵀ + b)`.
    fn forward_gelu(&self, x: &Tensor) -> Result<Tensor> {
        match self {
            Self::F32(linear) => linear.forward(x)?.gelu_erf(),
            Self::Int8(_) => self.forward_then(x, gelu_erf),
        }
    }

    fn forward_then(&self, x: &Tensor, then: impl FnOnce(&mut [f32])) -> Result<Tensor> {
        match self {
            Self::F32(linear) => linear.forward(x),
            Self::Int8(dense) => {
                let mut dims = x.dims().to_vec();
                let mut y = dense.forward(&x.flatten_all()?.to_vec1::<f32>()?);
                then(&mut y);
                if let Some(last) = dims.last_mut() {
                    *last = dense.outputs();
                }
                Tensor::from_vec(y, dims, x.device())
            }
        }
    }
}

/// `x · Φ(x)` with the exact (erf) normal CDF, as BERT was trained with, in place.
/// candle's `gelu_erf` calls the C library's `erf` per value; this form (Abramowitz and
/// Stegun 7.1.26, absolute error below 2·10⁻⁷) is a handful of multiplications.
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

struct Layer {
    query: Dense,
    key: Dense,
    value: Dense,
    attn_out: Dense,
    attn_norm: LayerNorm,
    up: Dense,
    down: Dense,
    out_norm: LayerNorm,
    heads: usize,
    head_dim: usize,
}

impl Layer {
    fn load(vb: &VarBuilder, c: &Config, p: Precision) -> Result<Self> {
        let h = c.hidden_size;
        let i = c.intermediate_size;
        let att = vb.pp("attention");
        Ok(Self {
            query: Dense::load(h, h, att.pp("self").pp("query"), p)?,
            key: Dense::load(h, h, att.pp("self").pp("key"), p)?,
            value: Dense::load(h, h, att.pp("self").pp("value"), p)?,
            attn_out: Dense::load(h, h, att.pp("output").pp("dense"), p)?,
            attn_norm: layer_norm(h, c.layer_norm_eps, att.pp("output").pp("LayerNorm"))?,
            up: Dense::load(h, i, vb.pp("intermediate").pp("dense"), p)?,
            down: Dense::load(i, h, vb.pp("output").pp("dense"), p)?,
            out_norm: layer_norm(h, c.layer_norm_eps, vb.pp("output").pp("LayerNorm"))?,
            heads: c.num_attention_heads,
            head_dim: h / c.num_attention_heads,
        })
    }

    /// `x` is (batch, tokens, hidden); `mask` is (batch, 1, 1, tokens), 0 where a token
    /// is real and a large negative number where it is padding.
    #[expect(
        clippy::many_single_char_names,
        reason = "b, n, h and q, k, v are the attention formula's own names"
    )]
    fn forward(&self, x: &Tensor, mask: &Tensor) -> Result<Tensor> {
        let (b, n, h) = x.dims3()?;
        let split = |t: Tensor| -> Result<Tensor> {
            t.reshape((b, n, self.heads, self.head_dim))?
                .transpose(1, 2)?
                .contiguous()
        };
        let q = split(self.query.forward(x)?)?;
        let k = split(self.key.forward(x)?)?;
        let v = split(self.value.forward(x)?)?;
        #[expect(clippy::cast_precision_loss, reason = "head sizes are small integers")]
        let scale = 1.0 / (self.head_dim as f64).sqrt();
        let scores = (q.matmul(&k.t()?)? * scale)?.broadcast_add(mask)?;
        let weights = candle_nn::ops::softmax_last_dim(&scores)?;
        let context = weights
            .matmul(&v)?
            .transpose(1, 2)?
            .contiguous()?
            .reshape((b, n, h))?;
        let x = self
            .attn_norm
            .forward(&(self.attn_out.forward(&context)? + x)?)?;
        let hidden = self.up.forward_gelu(&x)?;
        self.out_norm.forward(&(self.down.forward(&hidden)? + x)?)
    }
}

/// The encoder: token ids in, one hidden vector per token out.
pub struct Bert {
    embeddings: Embeddings,
    layers: Vec<Layer>,
}

impl Bert {
    pub fn load(
        weights: Vec<u8>,
        config: &Config,
        precision: Precision,
        device: &Device,
    ) -> Result<Self> {
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, device)?;
        let vb = if vb.contains_tensor("embeddings.word_embeddings.weight") {
            vb
        } else {
            vb.pp("bert")
        };
        let embeddings = Embeddings::load(&vb.pp("embeddings"), config)?;
        let layers = (0..config.num_hidden_layers)
            .map(|i| {
                let vb = vb.pp("encoder").pp("layer").pp(i.to_string());
                Layer::load(&vb, config, precision)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self { embeddings, layers })
    }

    /// `ids` and `mask` are (batch, tokens) u32; the result is (batch, tokens, hidden).
    pub fn forward(&self, ids: &Tensor, mask: &Tensor) -> Result<Tensor> {
        let additive = ((mask.to_dtype(DType::F32)? - 1.0)? * 10_000.0)?
            .unsqueeze(1)?
            .unsqueeze(1)?;
        let mut x = self.embeddings.forward(ids)?;
        for layer in &self.layers {
            x = layer.forward(&x, &additive)?;
        }
        Ok(x)
    }
}

/// Mean of the token vectors where `mask` is 1: (batch, tokens, hidden) → (batch, hidden).
pub fn mean_pool(hidden: &Tensor, mask: &Tensor) -> Result<Tensor> {
    let m = mask.to_dtype(DType::F32)?.unsqueeze(D::Minus1)?;
    let sum = hidden.broadcast_mul(&m)?.sum(1)?;
    let count = m.sum(1)?.clamp(1e-9, f64::MAX)?;
    sum.broadcast_div(&count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gelu_matches_the_erf_form_within_float_error() {
        let xs: Vec<f32> = (-1200..=1200).map(|i| i as f32 / 100.0).collect();
        let mut ours = xs.clone();
        gelu_erf(&mut ours);
        let candle = Tensor::new(xs.as_slice(), &Device::Cpu)
            .and_then(|t| t.gelu_erf())
            .and_then(|t| t.to_vec1::<f32>())
            .unwrap_or_default();
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
}
