//! Meaning-level matching: a clause and every entry's words and requests as sentence
//! vectors (waypoint-embed), so "show me what's in the folder" finds `list_directory`
//! though the two share no word.
//!
//! Each entry has two kinds of rows: its own words (name and description, what a tool
//! imported from an MCP server comes with; a long description's first sentence too) and
//! the requests it was taught. A clause is
//! compared with both; the closest row of each kind, mapped through its own [`Scale`]
//! (descriptions and requests are different genres: a good match with a description is
//! a lower cosine than with a request), gives the entry's meaning score in [0, 1].
//! Where a trained router leads, the few requests closest to the clause vote as well
//! ([`Meaning::neighbours`]).

use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use waypoint_catalog::Catalog;
use waypoint_embed::cache::{self, Source};
use waypoint_embed::{EmbedError, Encoder, QuantRows, dot};

use crate::hash::HashMap;
use crate::learned::entries;

/// Requests per entry a clause is compared with. Beyond a few dozen, the trained router
/// (which learns from every request's vector) speaks for them, and comparing with all of
/// them would cost more than the encoder pass.
const COMPARED_REQUESTS: usize = 16;

/// Requests per entry a clause's nearest neighbours are sought among, and how many of the
/// closest are averaged (`Meaning::neighbours`; the votes by static word vectors and by
/// the router's network count the same way).
pub(crate) const NEIGHBOUR_REQUESTS: usize = 100;
pub(crate) const NEIGHBOURS: usize = 3;

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
    pub(crate) fn map(self, cos: f32) -> f32 {
        ((cos - self.low) / (self.high - self.low)).clamp(0.0, 1.0)
    }
}

/// How meaning scores are made and how much they count; `Options::meaning`.
#[derive(Debug, Clone)]
pub struct MeaningSettings {
    pub encoder: Arc<Encoder>,
    /// Share of the route score that is meaning (the rest is words and, with requests,
    /// the trained router) where the words think at least as well of an entry.
    pub weight: f64,
    /// The share where meaning thinks better of an entry than the words do. A catalog
    /// whose words were chosen for routing (keywords, examples) keeps its word matches
    /// at `weight`; one described in prose, as tools imported from MCP servers are, is
    /// found by what its descriptions mean, which the prose's words match poorly.
    pub lead_weight: f64,
    /// Against an entry's own words.
    pub own: Scale,
    /// Against the requests it was taught.
    pub requests: Scale,
    /// The mean of the closest few requests, where the trained router leads.
    pub neighbours: Scale,
    /// Share of the score the nearest requests take after the trained router's, where
    /// the router leads and its requests ask for one entry at a time.
    pub neighbours_weight: f64,
    /// How entries stand out from the rest of the catalog, where no entry has keywords
    /// or requests ([`Relative`]).
    pub relative: Relative,
}

/// Where a catalog knows its entries by a name and a description alone, how far an entry's cosine
/// stands above the catalog's usual cosine for the clause (in standard deviations) says
/// more about which entry the clause means than the cosine itself: a prose description
/// and a short request are far apart in absolute terms even when they mean the same
/// thing ("what's in store for Scorpios today?" meets a horoscope app at 0.36, a
/// middling cosine, and no other app above 0.27, while a to-do app's words "store" and
/// "list" tie it). That standing, from `low` to `high`
/// deviations mapped to [0, 1], takes `share` of the meaning score. It decides the
/// order, not how sure the router is: the scores are scaled back so the best keeps the
/// score it had without it (`route::rank::blend_ordering`), and the abstain threshold
/// means what it meant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Relative {
    pub low: f32,
    pub high: f32,
    pub share: f32,
    /// Fewer entries than this give no usual cosine to stand out from.
    pub min_entries: usize,
}

impl MeaningSettings {
    pub fn new(encoder: Arc<Encoder>) -> Self {
        Self {
            encoder,
            weight: 0.4,
            lead_weight: 0.7,
            own: Scale {
                low: 0.15,
                high: 0.6,
            },
            requests: Scale {
                low: 0.4,
                high: 0.85,
            },
            // A mean of three is lower than the best of them.
            neighbours: Scale {
                low: 0.35,
                high: 0.8,
            },
            neighbours_weight: 0.5,
            relative: Relative::DEFAULT,
        }
    }
}

impl Relative {
    /// One to four deviations, half the meaning score, eight entries or more; the static
    /// word vectors read standing on the same band (`route::gist`).
    pub const DEFAULT: Self = Self {
        low: 1.0,
        high: 4.0,
        share: 0.5,
        min_entries: 8,
    };

    /// Each entry's standing in [0, 1] from each entry's cosine in `cosines`: how far it
    /// stands above their mean, in standard deviations, from `low` to `high`. `None`
    /// where there are too few entries, or cosines too alike, to stand out from.
    pub(crate) fn standing(self, cosines: &[f32]) -> Option<Vec<f32>> {
        if cosines.len() < self.min_entries {
            return None;
        }
        let n = cosines.len() as f32;
        let mean = cosines.iter().sum::<f32>() / n;
        let sd = (cosines.iter().map(|c| (c - mean).powi(2)).sum::<f32>() / n).sqrt();
        if sd <= f32::EPSILON {
            return None;
        }
        let stands =
            |cos: f32| (((cos - mean) / sd - self.low) / (self.high - self.low)).clamp(0.0, 1.0);
        Some(cosines.iter().map(|&c| stands(c)).collect())
    }

    /// Each entry's meaning score with its standing mixed in, from each entry's
    /// own-words cosine in `owns`; `None` as [`Relative::standing`] is, or where the
    /// standing takes no share.
    fn mix(self, owns: &[f32], own: Scale) -> Option<Vec<f32>> {
        if self.share <= 0.0 {
            return None;
        }
        let standing = self.standing(owns)?;
        let mixed = owns
            .iter()
            .zip(standing)
            .map(|(&cos, stands)| (1.0 - self.share) * own.map(cos) + self.share * stands);
        Some(mixed.collect())
    }
}

/// One entry's rows that a clause is compared with: `owns` rows of its own words from
/// row `own`, then `requests` rows of the requests it was taught.
#[derive(Debug, Clone, Copy)]
struct Compared {
    doc: u32,
    own: usize,
    owns: usize,
    requests: usize,
}

impl Compared {
    fn own_rows(&self) -> std::ops::Range<usize> {
        self.own..self.own + self.owns
    }

    /// Its first `n` request rows.
    fn request_rows(&self, n: usize) -> std::ops::Range<usize> {
        let first = self.own + self.owns;
        first..first + self.requests.min(n)
    }
}

/// An entry's own words as the texts its meaning is read from: its name with its
/// description, and, where the description runs on for two sentences or more past its
/// first, the name with that sentence alone. A tool imported from an MCP server says
/// what it does first and then how to call it ("… Handles various text encodings …
/// Only works within allowed directories"); a short request is far in meaning from the
/// whole of that and close to its opening. A description of two sentences is no such
/// manual: its first is as often a slogan ("Your home away from home. Browse hotels …"),
/// and read alone it would meet requests the whole does not mean.
pub(crate) fn own_texts(name: &str, about: &str) -> Vec<String> {
    let about = about.trim();
    if about.is_empty() {
        return vec![name.to_string()];
    }
    let mut texts = vec![format!("{name}: {about}")];
    let first = about
        .match_indices(". ")
        .map(|(at, _)| &about[..at])
        .find(|s| s.split_whitespace().count() >= 3);
    if let Some(first) = first
        && about[first.len() + 2..]
            .trim_end_matches('.')
            .contains(". ")
    {
        texts.push(format!("{name}: {first}"));
    }
    texts
}

/// What meaning says of a clause: each entry's score on the absolute scales, and, where
/// the catalog's entries are known by their own words only, the scores with each
/// entry's standing among the others mixed in ([`Relative`]). Sorted by entry.
#[derive(Debug, Default, Clone)]
pub(crate) struct Said {
    pub absolute: Vec<(u32, f32)>,
    pub relative: Option<Vec<(u32, f32)>>,
}

impl Said {
    /// Each entry's higher score of the two.
    pub(crate) fn or_higher(self, other: Said) -> Said {
        let relative = match (self.relative, other.relative) {
            (Some(a), Some(b)) => Some(merge_max(a, b)),
            (a, b) => a.or(b),
        };
        Said {
            absolute: merge_max(self.absolute, other.absolute),
            relative,
        }
    }
}

/// Two opinions sorted by entry, merged keeping each entry's higher one.
pub(crate) fn merge_max(a: Vec<(u32, f32)>, b: Vec<(u32, f32)>) -> Vec<(u32, f32)> {
    let mut out: Vec<(u32, f32)> = a.into_iter().chain(b).collect();
    out.sort_by(|x, y| x.0.cmp(&y.0).then(y.1.total_cmp(&x.1)));
    out.dedup_by_key(|x| x.0);
    out
}

/// Two votes as one: per entry, the mean of its scores (an entry one vote leaves out
/// scores zero there); by entry.
pub(crate) fn mean_votes(a: &[(u32, f32)], b: &[(u32, f32)]) -> Vec<(u32, f32)> {
    let mut both: std::collections::BTreeMap<u32, [f32; 2]> = std::collections::BTreeMap::new();
    for (side, vote) in [a, b].into_iter().enumerate() {
        for &(doc, score) in vote {
            both.entry(doc).or_default()[side] = score;
        }
    }
    both.into_iter()
        .map(|(doc, [x, y])| (doc, f32::midpoint(x, y)))
        .filter(|(_, s)| *s > 0.0)
        .collect()
}

/// Per class of a training set, the examples that vote for it: requests that ask for it
/// alone (held out, one label), `usable` ones, the first [`NEIGHBOUR_REQUESTS`].
pub(crate) fn voting_requests(
    set: &waypoint_classify::TrainingSet,
    usable: impl Fn(usize) -> bool,
) -> Vec<Vec<usize>> {
    let mut per_class: Vec<Vec<usize>> = vec![Vec::new(); set.classes().len()];
    for (i, e) in set.examples().iter().enumerate() {
        let (true, [class]) = (e.held_out, e.labels.as_slice()) else {
            continue;
        };
        if let Some(kept) = per_class.get_mut(*class as usize)
            && kept.len() < NEIGHBOUR_REQUESTS
            && usable(i)
        {
            kept.push(i);
        }
    }
    per_class
}

/// The voting examples entry after entry (classes with a route-index entry in `docs`,
/// `u32::MAX` for none, and any voter), with each entry's span of them.
pub(crate) fn entry_spans(
    per_class: &[Vec<usize>],
    docs: &[u32],
) -> (Vec<(u32, std::ops::Range<usize>)>, Vec<usize>) {
    let mut spans = Vec::new();
    let mut voting = Vec::new();
    for (class, kept) in per_class.iter().enumerate() {
        let Some(&doc) = docs.get(class).filter(|&&d| d != u32::MAX) else {
            continue;
        };
        if !kept.is_empty() {
            spans.push((doc, voting.len()..voting.len() + kept.len()));
            voting.extend_from_slice(kept);
        }
    }
    (spans, voting)
}

/// Every entry's rows as vectors, ready to score clauses.
pub struct Meaning {
    settings: MeaningSettings,
    dims: usize,
    /// Per entry, its rows: its own words, then its requests (rows `own + 1 ..= own +
    /// requests`).
    compared: Vec<Compared>,
    /// No entry was given requests or keywords: the catalog is known by its entries'
    /// names and descriptions alone.
    untaught: bool,
    vectors: Vec<f32>,
    /// The request rows the nearest-request vote reads, in 8-bit integers, made when the
    /// vote first runs: it reads every one of them for each clause, so a quarter of the
    /// bytes and one pass of the 8-bit kernel are most of its cost. Catalogs that never
    /// vote never pay for them.
    voters: OnceLock<Voters>,
    /// Row of each encoded text.
    rows_of: HashMap<String, usize>,
    /// Lately encoded texts: their sentence vectors, and their probes for the trained
    /// router's network (one encoder pass gives both).
    memo: Mutex<HashMap<String, Remembered>>,
    /// The rows' probes, where `build` was asked to keep them and encoded the rows now
    /// (`rows × probe_dims`): the trained router's network learns from the requests'
    /// probes, and the pass that gave the rows gave these too. Read by the router's
    /// build and let go after it ([`Meaning::release_probes`]), never kept for the
    /// engine's life.
    fresh_probes: Mutex<Option<Vec<f32>>>,
    source: Source,
}

impl std::fmt::Debug for Meaning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Meaning")
            .field("rows", &self.rows())
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

impl Meaning {
    /// Encodes every entry's own words and requests (or reads them from `cache`).
    /// `doc_of` maps an entry id to its route-index entry.
    /// `keep_probes`: the trained router will want the requests' probes, so the rows'
    /// are kept when encoded now (see `fresh_probes`).
    pub(crate) fn build(
        catalog: &Catalog,
        settings: MeaningSettings,
        cache: Option<&Path>,
        doc_of: impl Fn(&str) -> Option<u32>,
        keep_probes: bool,
    ) -> Result<Self, EmbedError> {
        let mut texts: Vec<String> = Vec::new();
        let mut compared = Vec::new();
        let mut untaught = true;
        for e in entries(catalog) {
            let Some(doc) = doc_of(e.id) else { continue };
            untaught &= e.examples.is_empty() && e.keywords.is_empty();
            let own = own_texts(&e.name, e.about);
            compared.push(Compared {
                doc,
                own: texts.len(),
                owns: own.len(),
                requests: e.examples.len(),
            });
            texts.extend(own);
            texts.extend(e.examples.iter().cloned());
        }
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let (vectors, source, fresh_probes) = if keep_probes {
            let s = cache::embed_all_keeping_probes(&settings.encoder, &refs, cache)?;
            (s.vectors, s.source, s.probes)
        } else {
            let (vectors, source) = cache::embed_all(&settings.encoder, &refs, cache)?;
            (vectors, source, None)
        };
        let rows_of = texts.into_iter().enumerate().map(|(i, t)| (t, i)).collect();
        Ok(Self {
            dims: settings.encoder.dims(),
            settings,
            untaught,
            compared,
            voters: OnceLock::new(),
            vectors,
            rows_of,
            memo: Mutex::new(HashMap::default()),
            fresh_probes: Mutex::new(fresh_probes),
            source,
        })
    }

    pub fn source(&self) -> &Source {
        &self.source
    }

    pub fn weight(&self) -> f64 {
        self.settings.weight
    }

    pub fn lead_weight(&self) -> f64 {
        self.settings.lead_weight
    }

    pub fn neighbours_weight(&self) -> f64 {
        self.settings.neighbours_weight
    }

    /// Rows encoded: every entry's own words plus its requests.
    pub fn rows(&self) -> usize {
        self.vectors.len() / self.dims.max(1)
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

    /// Probes ([`waypoint_embed::Encoded::probe`]) for many texts, cached in `cache`
    /// like the rows' vectors: what the trained router's network learns from.
    pub(crate) fn probes_for(
        &self,
        texts: &[&str],
        cache: Option<&Path>,
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let dims = self.settings.encoder.probe_dims().max(1);
        let fresh = self.fresh_probes.lock().ok();
        let known = |t: &str| {
            let fresh = fresh.as_ref()?.as_ref()?;
            let row = *self.rows_of.get(t)?;
            fresh.get(row * dims..(row + 1) * dims).map(<[f32]>::to_vec)
        };
        let (flat, _) = cache::probe_all(&self.settings.encoder, texts, cache, &known)?;
        Ok(flat.chunks_exact(dims).map(<[f32]>::to_vec).collect())
    }

    /// Lets go of the rows' probes kept at build, once the trained router is built.
    pub(crate) fn release_probes(&self) {
        if let Ok(mut fresh) = self.fresh_probes.lock() {
            *fresh = None;
        }
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
        if let Ok(encoded) = self.settings.encoder.encode_batch(&missing) {
            self.remember(
                missing
                    .into_iter()
                    .zip(encoded.into_iter().map(Remembered::from)),
            );
        }
    }

    /// The clause's sentence vector, from the memo when this text was seen lately.
    pub(crate) fn vector(&self, text: &str) -> Option<Arc<[f32]>> {
        self.encoded(text).map(|r| r.sentence)
    }

    /// The clause's probe, from the memo when this text was seen lately.
    pub(crate) fn probe(&self, text: &str) -> Option<Arc<[f32]>> {
        self.encoded(text).map(|r| r.probe)
    }

    fn encoded(&self, text: &str) -> Option<Remembered> {
        if let Ok(memo) = self.memo.lock()
            && let Some(r) = memo.get(text)
        {
            return Some(r.clone());
        }
        let r = Remembered::from(self.settings.encoder.encode(text).ok()?);
        self.remember([(text, r.clone())]);
        Some(r)
    }

    /// Keeps vectors in the memo, starting it afresh when it would grow past `MEMO`.
    fn remember<'t>(&self, encoded: impl IntoIterator<Item = (&'t str, Remembered)>) {
        let Ok(mut memo) = self.memo.lock() else {
            return;
        };
        for (text, r) in encoded {
            if memo.len() >= MEMO {
                memo.clear();
            }
            memo.insert(text.to_string(), r);
        }
    }

    /// `(entry, score)` for every entry with a score above zero: the better of its
    /// closest own-words row and its closest request row, each on its own scale.
    pub(crate) fn scores(&self, text: &str) -> Said {
        let mut said = Said::default();
        if text.trim().is_empty() || self.dims == 0 {
            return said;
        }
        let Some(q) = self.vector(text) else {
            return said;
        };
        let row = |r: usize| &self.vectors[r * self.dims..(r + 1) * self.dims];
        let mut owns = Vec::with_capacity(self.compared.len());
        for c in &self.compared {
            let own = c
                .own_rows()
                .map(|r| dot(&q, row(r)))
                .fold(f32::NEG_INFINITY, f32::max);
            owns.push(own);
            let closest = c
                .request_rows(COMPARED_REQUESTS)
                .map(|r| dot(&q, row(r)))
                .fold(f32::NEG_INFINITY, f32::max);
            let s = self
                .settings
                .own
                .map(own)
                .max(self.settings.requests.map(closest));
            if s > 0.0 {
                said.absolute.push((c.doc, s));
            }
        }
        said.absolute.sort_by_key(|(d, _)| *d);
        said.relative = self.standing(&owns);
        said
    }

    /// The meaning scores with each entry's standing among the catalog's entries mixed
    /// in ([`Relative`]), where no entry was taught requests and there are entries
    /// enough to have a usual cosine. `owns`: each compared entry's own-words cosine.
    fn standing(&self, owns: &[f32]) -> Option<Vec<(u32, f32)>> {
        if !self.untaught {
            return None;
        }
        let mixed = self.settings.relative.mix(owns, self.settings.own)?;
        let mut out: Vec<(u32, f32)> = (self.compared.iter().zip(mixed))
            .filter(|(_, s)| *s > 0.0)
            .map(|(c, s)| (c.doc, s))
            .collect();
        out.sort_by_key(|(d, _)| *d);
        Some(out)
    }

    /// `(entry, score)` for every entry with a score above zero: the mean cosine of the
    /// [`NEIGHBOURS`] requests closest to the clause among its first
    /// [`NEIGHBOUR_REQUESTS`], on the `neighbours` scale. Where many requests teach each
    /// entry, this nearest-neighbour vote knows what the linear router's one boundary per
    /// entry blurs, and a clause close to no request (out of scope) is far from all.
    pub(crate) fn neighbours(&self, text: &str) -> Vec<(u32, f32)> {
        if text.trim().is_empty() || self.dims == 0 {
            return Vec::new();
        }
        let Some(q) = self.vector(text) else {
            return Vec::new();
        };
        let voters = self
            .voters
            .get_or_init(|| Voters::new(&self.compared, &self.vectors, self.dims));
        let cosines = voters.rows.dots(&q);
        vote::<NEIGHBOURS>(&cosines, &voters.spans, self.settings.neighbours)
    }
}

/// `(entry, score)` for every entry with a score above zero: the mean of the `K` highest
/// cosines in the entry's span of `cosines`, on `scale` (the k best, not the best: one
/// close request may be a stray). The nearest-request votes by an encoder's vectors and
/// by the static word vectors (`crate::word_neighbours`) both count this way.
pub(crate) fn vote<const K: usize>(
    cosines: &[f32],
    spans: &[(u32, std::ops::Range<usize>)],
    scale: Scale,
) -> Vec<(u32, f32)> {
    let mut out = Vec::new();
    for (doc, span) in spans {
        let Some(cosines) = cosines.get(span.clone()).filter(|c| !c.is_empty()) else {
            continue;
        };
        let mut top = [f32::NEG_INFINITY; K];
        for &cos in cosines {
            if let Some(at) = top.iter().position(|t| cos > *t) {
                top.copy_within(at..K - 1, at + 1);
                top[at] = cos;
            }
        }
        let taken = &top[..cosines.len().min(K)];
        let s = scale.map(taken.iter().sum::<f32>() / taken.len() as f32);
        if s > 0.0 {
            out.push((*doc, s));
        }
    }
    out
}

/// A text's vectors as the memo keeps them, shared without copying.
#[derive(Clone)]
struct Remembered {
    sentence: Arc<[f32]>,
    probe: Arc<[f32]>,
}

impl From<waypoint_embed::Encoded> for Remembered {
    fn from(e: waypoint_embed::Encoded) -> Self {
        Self {
            sentence: e.sentence.into(),
            probe: e.probe.into(),
        }
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

impl MeaningState {
    pub fn is_on(&self) -> bool {
        matches!(self, Self::On(_))
    }
}

/// The rows the nearest-request vote reads: each entry's first [`NEIGHBOUR_REQUESTS`]
/// requests, entry after entry, in 8-bit integers.
struct Voters {
    rows: QuantRows,
    /// Per entry with requests: its index in the route index and its rows in `rows`.
    spans: Vec<(u32, std::ops::Range<usize>)>,
}

impl Voters {
    fn new(compared: &[Compared], vectors: &[f32], dims: usize) -> Self {
        let voting = || compared.iter().filter(|c| c.requests > 0);
        let mut spans = Vec::new();
        let mut first = 0;
        for c in voting() {
            let rows = c.request_rows(NEIGHBOUR_REQUESTS).len();
            spans.push((c.doc, first..first + rows));
            first += rows;
        }
        let row = |r: usize| vectors.get(r * dims..(r + 1) * dims).unwrap_or(&[]);
        let rows = voting().flat_map(|c| c.request_rows(NEIGHBOUR_REQUESTS).map(row));
        Self {
            rows: QuantRows::new(rows, dims),
            spans,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Unit vectors of `dims` with a deterministic spread of values.
    fn unit(seed: u32, dims: usize) -> Vec<f32> {
        let v: Vec<f32> = (0..dims)
            .map(|i| ((seed as f32 + 1.0) * (i as f32 + 0.5)).sin())
            .collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / n).collect()
    }

    #[test]
    fn the_vote_reads_each_entrys_requests_in_eight_bits_within_a_hundredth() {
        let dims = 384;
        // Entry 0: one own row, three requests; entry 1: own words only; entry 2: two own
        // rows, five requests.
        let compared = [
            Compared {
                doc: 0,
                own: 0,
                owns: 1,
                requests: 3,
            },
            Compared {
                doc: 1,
                own: 4,
                owns: 1,
                requests: 0,
            },
            Compared {
                doc: 2,
                own: 5,
                owns: 2,
                requests: 5,
            },
        ];
        let rows: Vec<f32> = (0..12).flat_map(|s| unit(s, dims)).collect();
        let voters = Voters::new(&compared, &rows, dims);
        assert_eq!(voters.spans, [(0, 0..3), (2, 3..8)]);
        let q = unit(99, dims);
        let cosines = voters.rows.dots(&q);
        let read = [1, 2, 3, 7, 8, 9, 10, 11];
        assert_eq!(cosines.len(), read.len());
        for (cos, r) in cosines.iter().zip(read) {
            let exact = dot(&q, &rows[r * dims..(r + 1) * dims]);
            assert!((exact - cos).abs() < 0.01, "row {r}: {exact} vs {cos}");
        }
        // A zero vector has no scale to lose and scores zero.
        let zeros = Voters::new(&compared[..1], &[0.0; 16], 4);
        assert!(zeros.rows.dots(&[1.0; 4]).iter().all(|c| c.abs() < 1e-9));
    }

    #[test]
    fn an_entry_that_stands_out_from_the_catalog_gains_though_its_cosine_is_low() {
        let rel = Relative {
            low: 1.0,
            high: 4.0,
            share: 0.5,
            min_entries: 8,
        };
        let own = Scale {
            low: 0.15,
            high: 0.6,
        };
        // One entry at 0.2, nine at 0.1: mean 0.11, deviation 0.03, the first three
        // deviations above the mean, two thirds of the way from `low` to `high`.
        let mut owns = vec![0.1_f32; 10];
        owns[0] = 0.2;
        let mixed = rel.mix(&owns, own).unwrap();
        let expected = 0.5 * own.map(0.2) + 0.5 * (2.0 / 3.0);
        assert!((mixed[0] - expected).abs() < 1e-4, "{}", mixed[0]);
        // The rest sit below the mean and below the absolute scale's floor.
        assert!(mixed[1..].iter().all(|s| *s == 0.0));
        // Too few entries, or all alike, give no standing.
        assert_eq!(rel.mix(&owns[..7], own), None);
        assert_eq!(rel.mix(&[0.3; 10], own), None);
    }

    #[test]
    fn a_description_past_its_first_sentence_gives_that_sentence_a_row_of_its_own() {
        assert_eq!(
            own_texts(
                "edit file",
                "Make line-based edits to a text file. Each edit replaces lines. Only works within allowed directories."
            ),
            [
                "edit file: Make line-based edits to a text file. Each edit replaces lines. Only works within allowed directories.",
                "edit file: Make line-based edits to a text file",
            ]
        );
        // Two sentences are a blurb, not a manual: the first may be a slogan.
        assert_eq!(
            own_texts(
                "staybird",
                "Your home away from home. Browse hotels and lock in a room."
            ),
            ["staybird: Your home away from home. Browse hotels and lock in a room."]
        );
        // One sentence, a closing period, or an opening too short to say what it does
        // ("Deprecated. …") add nothing.
        assert_eq!(
            own_texts("get weather", "The forecast for a city."),
            ["get weather: The forecast for a city."]
        );
        assert_eq!(
            own_texts("old read", "Deprecated. Use read_text_file instead."),
            ["old read: Deprecated. Use read_text_file instead."]
        );
        assert_eq!(own_texts("ping", "  "), ["ping"]);
    }
}
