//! A sentence-transformers folder loaded for inference: tokenizer, BERT weights, pooling
//! and normalisation, as `modules.json` and `1_Pooling/config.json` describe them.

use std::fs;
use std::path::{Path, PathBuf};

use candle_core::{Device, Tensor};
use sha2::{Digest, Sha256};
use tokenizers::{Tokenizer, TruncationParams};

use crate::bert::{self, Bert, Config, Precision};

/// Texts encoded together in one forward pass when a batch is asked for. Batches are
/// formed from texts of similar length, so padding costs little.
const BATCH: usize = 32;
/// Tokens kept of a longer text (the sentence-transformers default for `MiniLM`).
const DEFAULT_MAX_TOKENS: usize = 256;

/// Why a model folder could not be used. Each names the file and what is wrong with it.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("{path}: cannot read ({source})")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: not a usable config ({reason})")]
    Config { path: PathBuf, reason: String },
    #[error("{path}: the tokenizer does not load ({reason})")]
    Tokenizer { path: PathBuf, reason: String },
    #[error("{path}: the weights do not load ({reason})")]
    Weights { path: PathBuf, reason: String },
    #[error("encoding failed: {0}")]
    Encode(String),
}

/// How token vectors become one sentence vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pooling {
    Mean,
    Cls,
}

/// A loaded sentence encoder. Cheap to share behind an `Arc`; encoding takes `&self`.
pub struct Encoder {
    bert: Bert,
    tokenizer: Tokenizer,
    pooling: Pooling,
    normalize: bool,
    dims: usize,
    digest: [u8; 32],
    precision: Precision,
    device: Device,
    dir: PathBuf,
}

impl std::fmt::Debug for Encoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Encoder")
            .field("dir", &self.dir)
            .field("dims", &self.dims)
            .field("pooling", &self.pooling)
            .field("normalize", &self.normalize)
            .finish_non_exhaustive()
    }
}

fn read(path: &Path) -> Result<Vec<u8>, EmbedError> {
    fs::read(path).map_err(|source| EmbedError::Read {
        path: path.to_path_buf(),
        source,
    })
}

impl Encoder {
    /// Loads a sentence-transformers folder: `config.json`, `tokenizer.json` and
    /// `model.safetensors`, with `modules.json` and `1_Pooling/config.json` when present
    /// (mean pooling and normalisation otherwise, as all-MiniLM-L6-v2 does).
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        Self::load_with(dir, Precision::best())
    }

    /// [`Encoder::load`] with the dense layers held in `precision` (as far as this CPU
    /// runs it: [`Precision::on_this_cpu`]).
    pub fn load_with(dir: &Path, precision: Precision) -> Result<Self, EmbedError> {
        let precision = precision.on_this_cpu();
        let config_path = dir.join("config.json");
        let config_bytes = read(&config_path)?;
        let config: Config =
            serde_json::from_slice(&config_bytes).map_err(|e| EmbedError::Config {
                path: config_path.clone(),
                reason: e.to_string(),
            })?;
        if let Some(kind) = config.model_type.as_deref()
            && !matches!(kind, "bert")
        {
            return Err(EmbedError::Config {
                path: config_path,
                reason: format!("model_type {kind:?}; only BERT-family encoders are supported"),
            });
        }
        if config.hidden_act != "gelu" || config.num_attention_heads == 0 {
            return Err(EmbedError::Config {
                path: config_path,
                reason: format!(
                    "hidden_act {:?} with {} heads; expected gelu and at least one head",
                    config.hidden_act, config.num_attention_heads
                ),
            });
        }
        if config.hidden_size == 0
            || config.intermediate_size == 0
            || !config
                .hidden_size
                .is_multiple_of(config.num_attention_heads)
        {
            return Err(EmbedError::Config {
                path: config_path,
                reason: format!(
                    "hidden_size {} and intermediate_size {} with {} heads; expected sizes \
                     above 0 and a hidden size the heads divide",
                    config.hidden_size, config.intermediate_size, config.num_attention_heads
                ),
            });
        }

        let tokenizer_path = dir.join("tokenizer.json");
        let tokenizer_bytes = read(&tokenizer_path)?;
        let mut tokenizer =
            Tokenizer::from_bytes(&tokenizer_bytes).map_err(|e| EmbedError::Tokenizer {
                path: tokenizer_path.clone(),
                reason: e.to_string(),
            })?;
        // One sentence is encoded at its own length; batches pad themselves.
        tokenizer.with_padding(None);
        let max_tokens = max_tokens(dir).min(config.max_position_embeddings);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_tokens,
                ..TruncationParams::default()
            }))
            .map_err(|e| EmbedError::Tokenizer {
                path: tokenizer_path,
                reason: e.to_string(),
            })?;

        let weights_path = dir.join("model.safetensors");
        let weights = read(&weights_path)?;
        let mut h = Sha256::new();
        h.update(&config_bytes);
        h.update(&tokenizer_bytes);
        h.update((weights.len() as u64).to_le_bytes());
        // Vectors from 8-bit weights differ a little from those of 32-bit ones; a cache
        // of one must not answer for the other.
        h.update(format!("{precision:?}").as_bytes());
        // A sample of the weights (every 64th KiB) tells one checkpoint from another
        // without hashing 90 MB at every start.
        for chunk in weights.chunks(64 * 1024) {
            h.update(&chunk[..chunk.len().min(256)]);
        }
        let digest: [u8; 32] = h.finalize().into();

        let device = Device::Cpu;
        let bert =
            Bert::load(weights, &config, precision, &device).map_err(|e| EmbedError::Weights {
                path: weights_path,
                reason: e.to_string(),
            })?;
        let (pooling, normalize) = pipeline(dir);
        Ok(Self {
            bert,
            tokenizer,
            pooling,
            normalize,
            dims: config.hidden_size,
            digest,
            precision,
            device,
            dir: dir.to_path_buf(),
        })
    }

    /// The precision the dense layers run in.
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// Length of a sentence vector.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// The folder it was loaded from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A digest of the model's config, tokenizer and a sample of its weights: what a cache
    /// of vectors this encoder made is keyed by.
    pub fn digest(&self) -> [u8; 32] {
        self.digest
    }

    /// One text's sentence vector (unit length when the model normalises).
    pub fn embed(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let mut out = self.embed_batch(&[text])?;
        out.pop()
            .ok_or_else(|| EmbedError::Encode("no vector came back".into()))
    }

    /// Sentence vectors for many texts, in their order.
    pub fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(self
            .encode_batch(texts)?
            .into_iter()
            .map(|e| e.sentence)
            .collect())
    }

    /// One text's sentence vector and probe, from one pass.
    pub fn encode(&self, text: &str) -> Result<Encoded, EmbedError> {
        let mut out = self.encode_batch(&[text])?;
        out.pop()
            .ok_or_else(|| EmbedError::Encode("no vector came back".into()))
    }

    /// Length of a probe ([`Encoded::probe`]).
    pub fn probe_dims(&self) -> usize {
        self.dims * (1 + self.bert.probes())
    }

    /// Sentence vectors and probes for many texts, in their order.
    pub fn encode_batch(&self, texts: &[&str]) -> Result<Vec<Encoded>, EmbedError> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| EmbedError::Encode(e.to_string()))?;
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| encodings[i].get_ids().len());
        let mut out = vec![Encoded::default(); texts.len()];
        for group in order.chunks(BATCH) {
            let longest = group
                .iter()
                .map(|&i| encodings[i].get_ids().len())
                .max()
                .unwrap_or(0)
                .max(1);
            let mut ids = Vec::with_capacity(group.len() * longest);
            let mut mask = Vec::with_capacity(group.len() * longest);
            for &i in group {
                let e = encodings[i].get_ids();
                ids.extend_from_slice(e);
                mask.extend(std::iter::repeat_n(1_u32, e.len()));
                ids.extend(std::iter::repeat_n(0_u32, longest - e.len()));
                mask.extend(std::iter::repeat_n(0_u32, longest - e.len()));
            }
            let encoded = self
                .forward(ids, mask, group.len(), longest)
                .map_err(|e| EmbedError::Encode(e.to_string()))?;
            for (&i, e) in group.iter().zip(encoded) {
                out[i] = e;
            }
        }
        Ok(out)
    }

    fn forward(
        &self,
        ids: Vec<u32>,
        mask: Vec<u32>,
        rows: usize,
        len: usize,
    ) -> candle_core::Result<Vec<Encoded>> {
        let ids = Tensor::from_vec(ids, (rows, len), &self.device)?;
        let mask = Tensor::from_vec(mask, (rows, len), &self.device)?;
        let hidden = self.bert.forward(&ids, &mask)?;
        let pooled = match self.pooling {
            Pooling::Mean => bert::mean_pool(&hidden.last, &mask)?,
            Pooling::Cls => hidden.last.narrow(1, 0, 1)?.squeeze(1)?,
        };
        let mut sentences: Vec<Vec<f32>> = pooled.to_vec2()?;
        if self.normalize {
            for v in &mut sentences {
                scale_to(v, 1.0);
            }
        }
        // A probe opens with the sentence vector at unit length, as the model normalises
        // it or, for a model that does not, as it is made to be here.
        let mut probes = sentences.clone();
        if !self.normalize {
            for p in &mut probes {
                scale_to(p, 1.0);
            }
        }
        for layer in &hidden.probes {
            let pooled: Vec<Vec<f32>> = bert::mean_pool(layer, &mask)?.to_vec2()?;
            for (probe, mut v) in probes.iter_mut().zip(pooled) {
                scale_to(&mut v, PROBE_LAYER_LENGTH);
                probe.extend(v);
            }
        }
        Ok(sentences
            .into_iter()
            .zip(probes)
            .map(|(sentence, probe)| Encoded { sentence, probe })
            .collect())
    }
}

/// How long each earlier layer's part of a probe is, beside a sentence vector of length
/// one: chosen on CLINC150 dev (docs/performance.md, "Routing by meaning").
const PROBE_LAYER_LENGTH: f32 = 0.7;

/// `v` scaled to length `length` (left as is when it is all zeros). Divided first, so a
/// unit vector is the very one the model's own normalisation gives.
fn scale_to(v: &mut [f32], length: f32) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        for x in v.iter_mut() {
            *x = *x / norm * length;
        }
    }
}

/// A text as one pass of the encoder gives it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Encoded {
    /// The sentence vector (unit length when the model normalises): what meaning compares
    /// across texts.
    pub sentence: Vec<f32>,
    /// The sentence vector followed by the mean token vector of each earlier layer the
    /// encoder reads out (the embeddings, the middle layer), each of length
    /// [`PROBE_LAYER_LENGTH`]: what a classifier over a catalog's requests learns from.
    /// [`Encoder::probe_dims`] long.
    pub probe: Vec<f32>,
}

/// `max_seq_length` from `sentence_bert_config.json`, else the default.
fn max_tokens(dir: &Path) -> usize {
    fs::read(dir.join("sentence_bert_config.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| v.get("max_seq_length")?.as_u64())
        .and_then(|n| usize::try_from(n).ok())
        .filter(|&n| n > 0)
        .unwrap_or(DEFAULT_MAX_TOKENS)
}

/// Pooling and normalisation as the folder's modules say; mean pooling with
/// normalisation when it says nothing.
fn pipeline(dir: &Path) -> (Pooling, bool) {
    let modules: Option<serde_json::Value> = fs::read(dir.join("modules.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    let Some(modules) = modules.as_ref().and_then(|m| m.as_array()) else {
        return (Pooling::Mean, true);
    };
    let kinds: Vec<&str> = modules
        .iter()
        .filter_map(|m| m.get("type")?.as_str())
        .collect();
    let normalize = kinds.iter().any(|k| k.ends_with(".Normalize"));
    let pooling_dir = modules
        .iter()
        .find(|m| {
            m.get("type")
                .and_then(|t| t.as_str())
                .is_some_and(|t| t.ends_with(".Pooling"))
        })
        .and_then(|m| m.get("path")?.as_str())
        .unwrap_or("1_Pooling");
    let cls = fs::read(dir.join(pooling_dir).join("config.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| v.get("pooling_mode_cls_token")?.as_bool())
        .unwrap_or(false);
    (if cls { Pooling::Cls } else { Pooling::Mean }, normalize)
}

/// `Σ aᵢbᵢ`, kept in eight lanes so the loop vectorizes (a float sum in one accumulator
/// cannot be reordered, so it would not). Where the CPU has AVX2 the eight lanes are one
/// register: the same sums to the bit, in half the steps.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        #[expect(
            unsafe_code,
            reason = "calling a function compiled for AVX2 needs the CPU to have it"
        )]
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { dot_avx2(a, b) };
    }
    dot_in_lanes(a, b)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dot_avx2(a: &[f32], b: &[f32]) -> f32 {
    dot_in_lanes(a, b)
}

/// [`dot`] as compiled for the caller's CPU: for code that is itself compiled for AVX2.
#[expect(
    clippy::inline_always,
    reason = "compiled into each CPU's copy of its callers only when inlined there"
)]
#[inline(always)]
pub(crate) fn dot_in_lanes(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0.0_f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let rest: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for ((l, x), y) in lanes.iter_mut().zip(x).zip(y) {
            *l += x * y;
        }
    }
    lanes.iter().sum::<f32>() + rest
}

/// Cosine similarity of two vectors (their dot product when both are unit length).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na * nb)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lane_dot_product_is_the_plain_one() {
        for dims in [1, 7, 8, 9, 384] {
            let a: Vec<f32> = (0..dims).map(|i| (i as f32 * 0.7).sin()).collect();
            let b: Vec<f32> = (0..dims).map(|i| (i as f32 * 1.3).cos()).collect();
            let plain: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!((dot(&a, &b) - plain).abs() < 1e-4, "{dims}");
        }
    }
}
