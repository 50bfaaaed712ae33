//! Meaning-level matching: a clause and every entry's words and requests as sentence
//! vectors (waypoint-embed), so "show me what's in the folder" finds `list_directory`
//! though the two share no word.
//!
//! Each entry has two kinds of rows: its own words (name and description, what a tool
//! imported from an MCP server comes with) and the requests it was taught. A clause is
//! compared with both; the closest row of each kind, mapped through its own [`Scale`]
//! (descriptions and requests are different genres: a good match with a description is
//! a lower cosine than with a request), gives the entry's meaning score in [0, 1].

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use waypoint_catalog::Catalog;
use waypoint_embed::cache::{self, Source};
use waypoint_embed::{EmbedError, Encoder};

use crate::learned::entries;

/// Requests per entry a clause is compared with. Beyond a few dozen, the trained router
/// (which learns from every request's vector) speaks for them, and comparing with all of
/// them would cost more than the encoder pass.
const COMPARED_REQUESTS: usize = 16;

/// Texts whose vectors are remembered between clauses; a request re-ranks the same
/// clause several times (segmentation, joints, absorbed gaps).
const MEMO: usize = 1024;

/// Cosine below `low` means nothing, above `high` a match; linear in between.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    pub low: f32,
    pub high: f32,
}

impl Scale {
    fn map(self, cos: f32) -> f32 {
        ((cos - self.low) / (self.high - self.low)).clamp(0.0, 1.0)
    }
}

/// How meaning scores are made and how much they count; `Options::meaning`.
#[derive(Debug, Clone)]
pub struct MeaningSettings {
    pub encoder: Arc<Encoder>,
    /// Share of the route score that is meaning (the rest is words and, with requests,
    /// the trained router).
    pub weight: f64,
    /// Against an entry's own words.
    pub own: Scale,
    /// Against the requests it was taught.
    pub requests: Scale,
}

impl MeaningSettings {
    pub fn new(encoder: Arc<Encoder>) -> Self {
        Self {
            encoder,
            weight: 0.4,
            own: Scale {
                low: 0.15,
                high: 0.6,
            },
            requests: Scale {
                low: 0.4,
                high: 0.85,
            },
        }
    }
}

/// Every entry's rows as vectors, ready to score clauses.
pub struct Meaning {
    settings: MeaningSettings,
    dims: usize,
    /// Route-index entry of each row.
    docs: Vec<u32>,
    /// Whether a row is an entry's own words rather than a request.
    own: Vec<bool>,
    /// Rows a clause is compared with: own words, and up to `COMPARED_REQUESTS` requests
    /// per entry.
    compared: Vec<usize>,
    vectors: Vec<f32>,
    /// Row of each encoded text.
    rows_of: HashMap<String, usize>,
    memo: Mutex<HashMap<String, Arc<[f32]>>>,
    source: Source,
}

impl std::fmt::Debug for Meaning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Meaning")
            .field("rows", &self.docs.len())
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

impl Meaning {
    /// Encodes every entry's own words and requests (or reads them from `cache`).
    /// `doc_of` maps an entry id to its route-index entry.
    pub(crate) fn build(
        catalog: &Catalog,
        settings: MeaningSettings,
        cache: Option<&Path>,
        doc_of: impl Fn(&str) -> Option<u32>,
    ) -> Result<Self, EmbedError> {
        let mut texts: Vec<String> = Vec::new();
        let mut docs = Vec::new();
        let mut own = Vec::new();
        let mut compared = Vec::new();
        for e in entries(catalog) {
            let Some(doc) = doc_of(e.id) else { continue };
            let about = if e.about.trim().is_empty() {
                e.name.clone()
            } else {
                format!("{}: {}", e.name, e.about)
            };
            compared.push(texts.len());
            texts.push(about);
            docs.push(doc);
            own.push(true);
            for (i, x) in e.examples.iter().enumerate() {
                if i < COMPARED_REQUESTS {
                    compared.push(texts.len());
                }
                texts.push(x.clone());
                docs.push(doc);
                own.push(false);
            }
        }
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let (vectors, source) = cache::embed_all(&settings.encoder, &refs, cache)?;
        let rows_of = texts.into_iter().enumerate().map(|(i, t)| (t, i)).collect();
        Ok(Self {
            dims: settings.encoder.dims(),
            settings,
            docs,
            own,
            compared,
            vectors,
            rows_of,
            memo: Mutex::new(HashMap::new()),
            source,
        })
    }

    pub fn source(&self) -> &Source {
        &self.source
    }

    pub fn weight(&self) -> f64 {
        self.settings.weight
    }

    /// Rows encoded: every entry's own words plus its requests.
    pub fn rows(&self) -> usize {
        self.docs.len()
    }

    /// Vectors for many texts: those already encoded as rows are reused, the rest
    /// encoded (and cached in `cache`) together.
    pub(crate) fn vectors_for(
        &self,
        texts: &[&str],
        cache: Option<&Path>,
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let missing: Vec<&str> = texts
            .iter()
            .copied()
            .filter(|t| !self.rows_of.contains_key(*t))
            .collect();
        let (fresh, _) = cache::embed_all(&self.settings.encoder, &missing, cache)?;
        let fresh: HashMap<&str, &[f32]> = missing
            .iter()
            .copied()
            .zip(fresh.chunks_exact(self.dims.max(1)))
            .collect();
        Ok(texts
            .iter()
            .map(|t| match self.rows_of.get(*t) {
                Some(&row) => self.vectors[row * self.dims..(row + 1) * self.dims].to_vec(),
                None => fresh.get(t).map(|v| v.to_vec()).unwrap_or_default(),
            })
            .collect())
    }

    /// Encodes the texts not yet remembered in one batch and remembers them.
    pub(crate) fn prefetch(&self, texts: &[&str]) {
        let mut missing: Vec<&str> = match self.memo.lock() {
            Ok(memo) => texts
                .iter()
                .copied()
                .filter(|t| !t.trim().is_empty() && !memo.contains_key(*t))
                .collect(),
            Err(_) => return,
        };
        missing.sort_unstable();
        missing.dedup();
        if missing.len() < 2 {
            return;
        }
        if let Ok(vectors) = self.settings.encoder.embed_batch(&missing) {
            self.remember(missing.into_iter().zip(vectors.into_iter().map(Arc::from)));
        }
    }

    /// The clause's vector, from the memo when this text was seen lately.
    pub(crate) fn vector(&self, text: &str) -> Option<Arc<[f32]>> {
        if let Ok(memo) = self.memo.lock()
            && let Some(v) = memo.get(text)
        {
            return Some(v.clone());
        }
        let v: Arc<[f32]> = self.settings.encoder.embed(text).ok()?.into();
        self.remember([(text, v.clone())]);
        Some(v)
    }

    /// Keeps vectors in the memo, starting it afresh when it would grow past `MEMO`.
    fn remember<'t>(&self, vectors: impl IntoIterator<Item = (&'t str, Arc<[f32]>)>) {
        let Ok(mut memo) = self.memo.lock() else {
            return;
        };
        for (text, v) in vectors {
            if memo.len() >= MEMO {
                memo.clear();
            }
            memo.insert(text.to_string(), v);
        }
    }

    /// `(entry, score)` for every entry with a score above zero: the better of its
    /// closest own-words row and its closest request row, each on its own scale.
    pub(crate) fn scores(&self, text: &str) -> Vec<(u32, f32)> {
        if text.trim().is_empty() || self.dims == 0 {
            return Vec::new();
        }
        let Some(q) = self.vector(text) else {
            return Vec::new();
        };
        let mut best: HashMap<u32, f32> = HashMap::new();
        for &row in &self.compared {
            let v = &self.vectors[row * self.dims..(row + 1) * self.dims];
            let cos: f32 = q.iter().zip(v).map(|(a, b)| a * b).sum();
            let scale = if self.own[row] {
                self.settings.own
            } else {
                self.settings.requests
            };
            let s = scale.map(cos);
            if s > 0.0 {
                let slot = best.entry(self.docs[row]).or_insert(0.0);
                *slot = slot.max(s);
            }
        }
        let mut out: Vec<(u32, f32)> = best.into_iter().collect();
        out.sort_by_key(|(d, _)| *d);
        out
    }
}

/// Meaning-level matching as the engine has it.
#[derive(Debug, Clone, Default)]
pub enum MeaningState {
    /// No encoder was configured.
    #[default]
    Off,
    On(Arc<Meaning>),
    /// An encoder was configured but the catalog's texts could not be encoded.
    Failed(String),
}
