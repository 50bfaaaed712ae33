//! The BERT encoder (the architecture of all-MiniLM-L6-v2 and most sentence-transformers
//! models): token, position and segment embeddings, then `layers` blocks of multi-head
//! self-attention and a feed-forward network, each followed by a residual layer norm.
//!
//! Inference only; dropout is absent. Weights are read by their Hugging Face names, with
//! or without the `bert.` prefix a model saved from a task head carries.

use candle_core::{D, DType, Device, Module, Result, Tensor};
use candle_nn::{Embedding, LayerNorm, Linear, VarBuilder, embedding, layer_norm, linear};
use serde::Deserialize;

use crate::bert_int8::Int8Layer;
use crate::int8;

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
    /// once at load; for a request five to six times faster with AVX-512 VNNI, two and
    /// a half with AVX2. Only on x86-64 CPUs with one of the two: elsewhere it is
    /// [`Precision::F32`].
    Int8,
}

impl Precision {
    /// The fastest precision this CPU runs.
    pub fn best() -> Self {
        Self::Int8.on_this_cpu()
    }

    /// Its name in `[embed] precision`.
    pub fn name(self) -> &'static str {
        match self {
            Self::F32 => "f32",
            Self::Int8 => "int8",
        }
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

struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attn_out: Linear,
    attn_norm: LayerNorm,
    up: Linear,
    down: Linear,
    out_norm: LayerNorm,
    heads: usize,
    head_dim: usize,
}

impl Layer {
    fn load(vb: &VarBuilder, c: &Config) -> Result<Self> {
        let h = c.hidden_size;
        let i = c.intermediate_size;
        let att = vb.pp("attention");
        Ok(Self {
            query: linear(h, h, att.pp("self").pp("query"))?,
            key: linear(h, h, att.pp("self").pp("key"))?,
            value: linear(h, h, att.pp("self").pp("value"))?,
            attn_out: linear(h, h, att.pp("output").pp("dense"))?,
            attn_norm: layer_norm(h, c.layer_norm_eps, att.pp("output").pp("LayerNorm"))?,
            up: linear(h, i, vb.pp("intermediate").pp("dense"))?,
            down: linear(i, h, vb.pp("output").pp("dense"))?,
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
        let hidden = self.up.forward(&x)?.gelu_erf()?;
        self.out_norm.forward(&(self.down.forward(&hidden)? + x)?)
    }
}

/// The encoder: token ids in, one hidden vector per token out.
pub struct Bert {
    embeddings: Embeddings,
    layers: Layers,
}

/// The layers in the precision chosen at load.
enum Layers {
    F32(Vec<Layer>),
    Int8(Vec<Int8Layer>),
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
        let at = |i: usize| vb.pp("encoder").pp("layer").pp(i.to_string());
        // `precision` is what this CPU runs (the encoder resolved it).
        let layers = match precision {
            Precision::Int8 => Layers::Int8(
                (0..config.num_hidden_layers)
                    .map(|i| Int8Layer::load(&at(i), config))
                    .collect::<Result<_>>()?,
            ),
            Precision::F32 => Layers::F32(
                (0..config.num_hidden_layers)
                    .map(|i| Layer::load(&at(i), config))
                    .collect::<Result<_>>()?,
            ),
        };
        Ok(Self { embeddings, layers })
    }

    /// `ids` and `mask` are (batch, tokens) u32; every tensor of the result is (batch,
    /// tokens, hidden): the last layer's token vectors, and those [`Hidden::probes`]
    /// names.
    pub fn forward(&self, ids: &Tensor, mask: &Tensor) -> Result<Hidden> {
        let additive = ((mask.to_dtype(DType::F32)? - 1.0)? * 10_000.0)?;
        let mut x = self.embeddings.forward(ids)?;
        let mut probes = vec![x.clone()];
        let middle = self.depth() / 2;
        match &self.layers {
            Layers::F32(layers) => {
                let additive = additive.unsqueeze(1)?.unsqueeze(1)?;
                for (i, layer) in layers.iter().enumerate() {
                    x = layer.forward(&x, &additive)?;
                    if i + 1 == middle {
                        probes.push(x.clone());
                    }
                }
            }
            Layers::Int8(layers) => {
                let (batch, tokens, hidden) = x.dims3()?;
                let additive = additive.flatten_all()?.to_vec1::<f32>()?;
                let mut h = x.flatten_all()?.to_vec1::<f32>()?;
                for (i, layer) in layers.iter().enumerate() {
                    h = layer.forward(&h, tokens, &additive);
                    if i + 1 == middle {
                        probes.push(Tensor::from_vec(
                            h.clone(),
                            (batch, tokens, hidden),
                            x.device(),
                        )?);
                    }
                }
                x = Tensor::from_vec(h, (batch, tokens, hidden), x.device())?;
            }
        }
        Ok(Hidden { last: x, probes })
    }

    fn depth(&self) -> usize {
        match &self.layers {
            Layers::F32(l) => l.len(),
            Layers::Int8(l) => l.len(),
        }
    }

    /// How many layers [`Bert::forward`] gives beside the last: the embeddings, and the
    /// middle layer where there are two layers or more.
    pub fn probes(&self) -> usize {
        1 + usize::from(self.depth() / 2 > 0)
    }
}

/// What one pass of the encoder leaves: the last layer's token vectors, which the
/// sentence vector is pooled from, and earlier layers' that a classifier may read too.
pub struct Hidden {
    pub last: Tensor,
    /// The token embeddings as they enter the first layer (what the words are), then the
    /// middle layer's output (the words in their nearest context). A sentence model's last
    /// layer is trained to place paraphrases together; these keep some of what it
    /// smooths away, which tells apart requests that mean nearly the same.
    pub probes: Vec<Tensor>,
}

/// Mean of the token vectors where `mask` is 1: (batch, tokens, hidden) → (batch, hidden).
pub fn mean_pool(hidden: &Tensor, mask: &Tensor) -> Result<Tensor> {
    let m = mask.to_dtype(DType::F32)?.unsqueeze(D::Minus1)?;
    let sum = hidden.broadcast_mul(&m)?.sum(1)?;
    let count = m.sum(1)?.clamp(1e-9, f64::MAX)?;
    sum.broadcast_div(&count)
}
