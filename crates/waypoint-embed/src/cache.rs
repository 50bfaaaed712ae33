//! Vectors of a list of texts kept on disk by the digest of the encoder and the texts, so
//! a catalog with thousands of example requests is encoded once, not at every start.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::{EmbedError, Encoder};

const MAGIC: &[u8; 8] = b"WPVECS\x00\x01";

/// Where the vectors came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Cached(PathBuf),
    Encoded(PathBuf),
    /// Encoded now; the cache could not be used, for the reason given.
    EncodedUncached(String),
    /// Encoded now; no cache was asked for.
    Uncached,
}

/// The vectors of `texts`, one row of `encoder.dims()` values each, in order: read from
/// `dir` when an earlier call stored them, else encoded (and stored when `dir` is given).
pub fn embed_all(
    encoder: &Encoder,
    texts: &[&str],
    dir: Option<&Path>,
) -> Result<(Vec<f32>, Source), EmbedError> {
    let s = stored(
        encoder,
        texts,
        dir,
        Rows::Sentences { keep: false },
        &|_| None,
    )?;
    Ok((s.vectors, s.source))
}

/// [`embed_all`], and where the texts were encoded now rather than read, their probes as
/// well, `encoder.probe_dims()` values a text: the same pass gave them, and a caller that
/// will want them need not encode the texts again.
pub fn embed_all_keeping_probes(
    encoder: &Encoder,
    texts: &[&str],
    dir: Option<&Path>,
) -> Result<Stored, EmbedError> {
    stored(encoder, texts, dir, Rows::Sentences { keep: true }, &|_| {
        None
    })
}

/// Rows as [`embed_all_keeping_probes`] gives them.
#[derive(Debug, Clone, PartialEq)]
pub struct Stored {
    pub vectors: Vec<f32>,
    pub source: Source,
    /// The probes of the texts, in order, where they were encoded now.
    pub probes: Option<Vec<f32>>,
}

/// The probes of `texts` ([`crate::Encoded::probe`]), one row of `encoder.probe_dims()`
/// values each, in order; cached as [`embed_all`] caches sentence vectors. Texts whose
/// probe `known` gives are not encoded again.
pub fn probe_all(
    encoder: &Encoder,
    texts: &[&str],
    dir: Option<&Path>,
    known: &dyn Fn(&str) -> Option<Vec<f32>>,
) -> Result<(Vec<f32>, Source), EmbedError> {
    let s = stored(encoder, texts, dir, Rows::Probes, known)?;
    Ok((s.vectors, s.source))
}

/// Texts from which encoding takes long enough to report it: a few seconds.
const LONG_ENCODING: usize = 500;

/// `encoder.encode_batch(texts)`, saying on the progress log what is under way where it
/// takes seconds: silence that long looks like a hang.
fn encode_saying_so(encoder: &Encoder, texts: &[&str]) -> Result<Vec<crate::Encoded>, EmbedError> {
    let long = texts.len() >= LONG_ENCODING;
    let started = std::time::Instant::now();
    if long {
        tracing::info!(
            target: "waypoint::progress",
            "encoding {} texts with the sentence encoder",
            texts.len()
        );
    }
    let encoded = encoder.encode_batch(texts)?;
    if long {
        tracing::info!(
            target: "waypoint::progress",
            "encoded them in {:.1}s",
            started.elapsed().as_secs_f64()
        );
    }
    Ok(encoded)
}

/// Which vector of each text a cache file holds.
#[derive(Clone, Copy)]
enum Rows {
    /// Sentence vectors; `keep`: the probes of those encoded now are returned too.
    Sentences {
        keep: bool,
    },
    Probes,
}

/// The rows of `texts` from the cache or encoded, and, when encoded, their probes.
fn stored(
    encoder: &Encoder,
    texts: &[&str],
    dir: Option<&Path>,
    rows: Rows,
    known: &dyn Fn(&str) -> Option<Vec<f32>>,
) -> Result<Stored, EmbedError> {
    let (dims, prefix) = match rows {
        Rows::Sentences { .. } => (encoder.dims(), "vectors"),
        Rows::Probes => (encoder.probe_dims(), "probes"),
    };
    let mut h = Sha256::new();
    h.update(encoder.digest());
    // Only probes' keys say what they hold, so the vectors cached before probes existed
    // keep their keys.
    if let Rows::Probes = rows {
        h.update(prefix.as_bytes());
    }
    for t in texts {
        h.update((t.len() as u64).to_le_bytes());
        h.update(t.as_bytes());
    }
    let key: [u8; 32] = h.finalize().into();
    let path = dir.map(|d| {
        let hex: String = key[..16].iter().fold(String::new(), |mut s, b| {
            use std::fmt::Write as _;
            let _ = write!(s, "{b:02x}");
            s
        });
        d.join(format!("{prefix}-{hex}.bin"))
    });
    if let Some(p) = &path
        && let Ok(bytes) = std::fs::read(p)
        && let Some(flat) = parse(&bytes, &key, dims, texts.len())
    {
        return Ok(Stored {
            vectors: flat,
            source: Source::Cached(p.clone()),
            probes: None,
        });
    }
    // A request taught to several entries appears once per entry: encode it once.
    let mut unique: Vec<&str> = texts.to_vec();
    unique.sort_unstable();
    unique.dedup();
    let mut given: Vec<Option<Vec<f32>>> = unique
        .iter()
        .map(|t| known(t).filter(|v| v.len() == dims))
        .collect();
    let missing: Vec<&str> = unique
        .iter()
        .zip(&given)
        .filter(|(_, g)| g.is_none())
        .map(|(t, _)| *t)
        .collect();
    let mut encoded = encode_saying_so(encoder, &missing)?.into_iter();
    // Beside each sentence vector encoded now, its probe (same order as `unique`).
    let mut probes: Vec<Option<Vec<f32>>> = vec![None; unique.len()];
    for (g, p) in given.iter_mut().zip(&mut probes) {
        if g.is_none()
            && let Some(e) = encoded.next()
        {
            *g = Some(match rows {
                Rows::Sentences { keep } => {
                    if keep {
                        *p = Some(e.probe);
                    }
                    e.sentence
                }
                Rows::Probes => e.probe,
            });
        }
    }
    let mut flat: Vec<f32> = Vec::with_capacity(texts.len() * dims);
    let mut probes_flat = Vec::new();
    for t in texts {
        if let Ok(i) = unique.binary_search(t)
            && let Some(v) = &given[i]
        {
            flat.extend_from_slice(v);
            if let Some(p) = &probes[i] {
                probes_flat.extend_from_slice(p);
            }
        }
    }
    let source = match (&path, dir) {
        (Some(p), Some(d)) => match write(d, p, &key, dims, &flat) {
            Ok(()) => Source::Encoded(p.clone()),
            Err(e) => Source::EncodedUncached(format!("{}: {e}", d.display())),
        },
        _ => Source::Uncached,
    };
    Ok(Stored {
        vectors: flat,
        source,
        probes: (!probes_flat.is_empty()).then_some(probes_flat),
    })
}

fn parse(bytes: &[u8], key: &[u8; 32], dims: usize, rows: usize) -> Option<Vec<f32>> {
    let body = bytes
        .strip_prefix(MAGIC.as_slice())?
        .strip_prefix(key.as_slice())?;
    let (head, data) = body.split_at_checked(16)?;
    let d = u64::from_le_bytes(head[..8].try_into().ok()?);
    let r = u64::from_le_bytes(head[8..].try_into().ok()?);
    if usize::try_from(d).ok()? != dims || usize::try_from(r).ok()? != rows {
        return None;
    }
    if data.len() != dims * rows * 4 {
        return None;
    }
    Some(
        data.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}

fn write(
    dir: &Path,
    path: &Path,
    key: &[u8; 32],
    dims: usize,
    flat: &[f32],
) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut bytes = Vec::with_capacity(8 + 32 + 16 + flat.len() * 4);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(key);
    bytes.extend_from_slice(&(dims as u64).to_le_bytes());
    bytes.extend_from_slice(&((flat.len() / dims.max(1)) as u64).to_le_bytes());
    for v in flat {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, &bytes)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}
