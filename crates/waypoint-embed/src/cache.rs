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
    stored(encoder, texts, dir, Rows::Sentences)
}

/// The probes of `texts` ([`crate::Encoded::probe`]), one row of `encoder.probe_dims()`
/// values each, in order; cached as [`embed_all`] caches sentence vectors.
pub fn probe_all(
    encoder: &Encoder,
    texts: &[&str],
    dir: Option<&Path>,
) -> Result<(Vec<f32>, Source), EmbedError> {
    stored(encoder, texts, dir, Rows::Probes)
}

/// Which vector of each text a cache file holds.
#[derive(Clone, Copy)]
enum Rows {
    Sentences,
    Probes,
}

fn stored(
    encoder: &Encoder,
    texts: &[&str],
    dir: Option<&Path>,
    rows: Rows,
) -> Result<(Vec<f32>, Source), EmbedError> {
    let (dims, prefix) = match rows {
        Rows::Sentences => (encoder.dims(), "vectors"),
        Rows::Probes => (encoder.probe_dims(), "probes"),
    };
    let mut h = Sha256::new();
    h.update(encoder.digest());
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
        return Ok((flat, Source::Cached(p.clone())));
    }
    // A request taught to several entries appears once per entry: encode it once.
    let mut unique: Vec<&str> = texts.to_vec();
    unique.sort_unstable();
    unique.dedup();
    let encoded: Vec<Vec<f32>> = match rows {
        Rows::Sentences => encoder.embed_batch(&unique)?,
        Rows::Probes => encoder
            .encode_batch(&unique)?
            .into_iter()
            .map(|e| e.probe)
            .collect(),
    };
    let mut flat: Vec<f32> = Vec::with_capacity(texts.len() * dims);
    for t in texts {
        if let Ok(i) = unique.binary_search(t) {
            flat.extend_from_slice(&encoded[i]);
        }
    }
    let source = match (&path, dir) {
        (Some(p), Some(d)) => match write(d, p, &key, dims, &flat) {
            Ok(()) => Source::Encoded(p.clone()),
            Err(e) => Source::EncodedUncached(format!("{}: {e}", d.display())),
        },
        _ => Source::Uncached,
    };
    Ok((flat, source))
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
