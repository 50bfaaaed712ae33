//! Text → a sparse TF-IDF vector over word 1–2-grams and character 3–5-grams.
//!
//! Words carry meaning when the request is phrased like the examples; character n-grams
//! carry it across inflections, typos and identifiers (`getTinyImage`), which is why a
//! linear model over both is the strong model-free baseline for short-text routing. The
//! two parts are normalised separately and weighted equally, so the many character grams
//! do not drown the few words.
//!
//! N-grams are hashed (64-bit FNV-1a of a tag and the bytes), so scoring a clause
//! allocates no string per n-gram; the vocabulary maps hashes seen in training to dense
//! feature ids.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Shortest and longest character n-gram, counted on the word padded with spaces.
const CHAR_MIN: usize = 3;
const CHAR_MAX: usize = 5;
/// Tags keep the n-gram families apart in hash space.
const TAG_WORD: u8 = b'w';
const TAG_BIGRAM: u8 = b'b';
const TAG_CHAR: u8 = b'c';

/// A sparse vector: feature ids with their values, ids ascending.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sparse {
    pub idx: Vec<u32>,
    pub val: Vec<f32>,
}

impl Sparse {
    pub fn len(&self) -> usize {
        self.idx.len()
    }

    pub fn is_empty(&self) -> bool {
        self.idx.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (u32, f32)> + '_ {
        self.idx.iter().copied().zip(self.val.iter().copied())
    }
}

/// The words of a text: runs of letters and digits, split where a lower-case letter meets
/// an upper-case one (`getTinyImage` → get, tiny, image), lower-cased, digits folded to
/// `0` so "7am" and "8am" look alike.
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for ch in text.chars() {
        if ch.is_alphanumeric() {
            if ch.is_uppercase() && prev_lower && !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = ch.is_lowercase() || ch.is_ascii_digit();
            if ch.is_ascii_digit() {
                cur.push('0');
            } else {
                cur.extend(ch.to_lowercase());
            }
        } else {
            prev_lower = false;
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// 64-bit FNV-1a, fed a tag byte and then the bytes of an n-gram.
struct Fnv(u64);

impl Fnv {
    fn new(tag: u8) -> Self {
        let mut h = Self(0xcbf2_9ce4_8422_2325);
        h.eat(&[tag]);
        h
    }

    fn eat(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// The hash of an n-gram made of `parts`, joined by single spaces.
fn fnv(tag: u8, parts: &[&[u8]]) -> u64 {
    let mut h = Fnv::new(tag);
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            h.eat(b" ");
        }
        h.eat(p);
    }
    h.0
}

/// Hashed n-grams of a text, split into the word family and the character family.
/// Repeats are kept: term frequency counts them.
pub(crate) fn grams(text: &str) -> (Vec<u64>, Vec<u64>) {
    let words = words(text);
    let mut word = Vec::with_capacity(words.len() * 2);
    let mut chars = Vec::with_capacity(words.len() * 12);
    let mut padded = String::new();
    let mut bounds: Vec<usize> = Vec::new();
    for (i, w) in words.iter().enumerate() {
        word.push(fnv(TAG_WORD, &[w.as_bytes()]));
        if let Some(next) = words.get(i + 1) {
            word.push(fnv(TAG_BIGRAM, &[w.as_bytes(), next.as_bytes()]));
        }
        padded.clear();
        padded.push(' ');
        padded.push_str(w);
        padded.push(' ');
        bounds.clear();
        bounds.extend(padded.char_indices().map(|(o, _)| o));
        bounds.push(padded.len());
        let n_chars = bounds.len() - 1;
        // The 3-, 4- and 5-grams starting at one character share their first bytes, and
        // FNV reads bytes in order, so one pass from each start gives all three.
        let bytes = padded.as_bytes();
        for start in 0..n_chars.saturating_sub(CHAR_MIN - 1) {
            let mut h = Fnv::new(TAG_CHAR);
            let mut at = bounds[start];
            for n in 1..=CHAR_MAX.min(n_chars - start) {
                h.eat(&bytes[at..bounds[start + n]]);
                at = bounds[start + n];
                if n >= CHAR_MIN {
                    chars.push(h.0);
                }
            }
        }
        // A word shorter than the smallest n-gram is still one gram of its own.
        if n_chars < CHAR_MIN {
            chars.push(fnv(TAG_CHAR, &[padded.as_bytes()]));
        }
    }
    (word, chars)
}

/// N-gram hash → feature id. The keys are FNV hashes already, so the map only mixes
/// their bits for its buckets instead of hashing them again with `SipHash`.
pub(crate) type GramIds = HashMap<u64, u32, BuildHasherDefault<GramHasher>>;

/// A [`Hasher`] for keys that are hashes: one multiply spreads a `u64` over all bits.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct GramHasher(u64);

impl Hasher for GramHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// Hashes seen in training → feature ids, with their inverse document frequencies.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Vocabulary {
    pub(crate) ids: GramIds,
    pub(crate) idf: Vec<f32>,
}

impl Vocabulary {
    /// Builds the vocabulary from training texts: an n-gram must occur in at least
    /// `min_df` of them. Ids follow hash order, so the same texts give the same ids.
    pub fn build<'a>(texts: impl Iterator<Item = &'a str>, min_df: u32) -> Self {
        let mut df: HashMap<u64, u32> = HashMap::new();
        let mut n = 0_u32;
        let mut seen: Vec<u64> = Vec::new();
        for text in texts {
            n += 1;
            let (w, c) = grams(text);
            seen.clear();
            seen.extend(w);
            seen.extend(c);
            seen.sort_unstable();
            seen.dedup();
            for h in &seen {
                *df.entry(*h).or_insert(0) += 1;
            }
        }
        let mut kept: Vec<(u64, u32)> = df.into_iter().filter(|(_, d)| *d >= min_df).collect();
        kept.sort_unstable_by_key(|(h, _)| *h);
        let total = f64::from(n);
        let idf = kept
            .iter()
            .map(|(_, d)| (((1.0 + total) / (1.0 + f64::from(*d))).ln() + 1.0) as f32)
            .collect();
        let ids = kept
            .iter()
            .enumerate()
            .map(|(i, (h, _))| (*h, u32::try_from(i).unwrap_or(u32::MAX)))
            .collect();
        Self { ids, idf }
    }

    pub fn len(&self) -> usize {
        self.idf.len()
    }

    pub fn is_empty(&self) -> bool {
        self.idf.is_empty()
    }

    /// The text's vector: sublinear term frequency × idf, each family normalised to
    /// length 1/√2. N-grams outside the vocabulary say nothing.
    pub fn vector(&self, text: &str) -> Sparse {
        let (word, chars) = grams(text);
        let mut pairs: Vec<(u32, f32)> = Vec::with_capacity(word.len() + chars.len());
        // Ids follow hash order, so sorting the known n-grams' ids walks them in the order
        // their hashes would: the same sums in the same order, for fewer n-grams.
        let mut ids: Vec<u32> = Vec::with_capacity(chars.len());
        for family in [word, chars] {
            ids.clear();
            ids.extend(family.iter().filter_map(|h| self.ids.get(h).copied()));
            ids.sort_unstable();
            let from = pairs.len();
            for run in ids.chunk_by(|a, b| a == b) {
                let id = run[0];
                // ln 1 = 0: most n-grams occur once in a clause.
                let tf = if run.len() == 1 {
                    1.0
                } else {
                    1.0 + (run.len() as f32).ln()
                };
                pairs.push((id, tf * self.idf[id as usize]));
            }
            let norm = pairs[from..].iter().map(|(_, v)| v * v).sum::<f32>().sqrt();
            if norm > 0.0 {
                let scale = std::f32::consts::FRAC_1_SQRT_2 / norm;
                for (_, v) in &mut pairs[from..] {
                    *v *= scale;
                }
            }
        }
        // Ids follow hash order, so the families interleave; the tags keep them distinct.
        pairs.sort_unstable_by_key(|(i, _)| *i);
        Sparse {
            idx: pairs.iter().map(|(i, _)| *i).collect(),
            val: pairs.iter().map(|(_, v)| *v).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_in_any_case_style_give_the_same_words() {
        for name in [
            "getTinyImage",
            "get-tiny-image",
            "get_tiny_image",
            "Get Tiny Image",
        ] {
            assert_eq!(words(name), ["get", "tiny", "image"], "{name}");
        }
    }

    #[test]
    fn digits_fold_so_times_look_alike() {
        assert_eq!(words("wake me at 7am"), words("wake me at 8am"));
    }

    #[test]
    fn vectors_have_unit_length_and_ignore_unseen_grams() {
        let v = Vocabulary::build(["book a table", "play some music"].into_iter(), 1);
        let x = v.vector("book a table please");
        let norm: f32 = x.val.iter().map(|v| v * v).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "{norm}");
        assert!(v.vector("zzzz qqqq").is_empty());
        assert!(x.idx.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn character_grams_are_every_slice_of_three_to_five_characters() {
        for word in [
            "a",
            "ab",
            "abc",
            "getTinyImage",
            "café",
            "naïve crème brûlée",
        ] {
            let mut expected = Vec::new();
            for w in words(word) {
                let padded: Vec<char> = format!(" {w} ").chars().collect();
                for n in CHAR_MIN..=CHAR_MAX.min(padded.len()) {
                    for slice in padded.windows(n) {
                        let text: String = slice.iter().collect();
                        expected.push(fnv(TAG_CHAR, &[text.as_bytes()]));
                    }
                }
                if padded.len() < CHAR_MIN {
                    let text: String = padded.iter().collect();
                    expected.push(fnv(TAG_CHAR, &[text.as_bytes()]));
                }
            }
            let (_, mut got) = grams(word);
            got.sort_unstable();
            expected.sort_unstable();
            assert_eq!(got, expected, "{word}");
        }
    }

    #[test]
    fn min_df_drops_rare_grams() {
        let all = Vocabulary::build(["alpha beta", "alpha gamma"].into_iter(), 1);
        let common = Vocabulary::build(["alpha beta", "alpha gamma"].into_iter(), 2);
        assert!(common.len() < all.len());
        assert!(!common.vector("alpha").is_empty());
        assert!(common.vector("beta").is_empty());
    }
}
