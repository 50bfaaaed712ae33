//! The vector table: its file format, and a text's vector from it.
//!
//! Little-endian: `WPWV`, format 1 (u32), pieces (u32), dims (u32); each piece as a
//! length byte and its UTF-8; one f32 scale per piece; then each piece's `dims` values
//! as i8, the piece's vector being the values times its scale.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::wordpiece;

const MAGIC: &[u8; 4] = b"WPWV";
const FORMAT: u32 = 1;

/// The table distilled from all-MiniLM-L6-v2 (Apache-2.0) by `scripts/wordvec/distill.py`.
static BUILTIN_BYTES: &[u8] = include_bytes!("../data/minilm-l6-static.bin");
/// The same pieces fitted to the model's sentence vectors by `scripts/wordvec/learn.py`.
static SENTENCES_BYTES: &[u8] = include_bytes!("../data/minilm-l6-sentences.bin");
/// The same pieces as the model reads them in requests, by `scripts/wordvec/contexts.py`.
static CONTEXTS_BYTES: &[u8] = include_bytes!("../data/minilm-l6-contexts.bin");

/// A table file that cannot be read, and where.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TableError {
    #[error("not a word-vector table (expected the magic bytes WPWV)")]
    Magic,
    #[error("word-vector table format {0}; this build reads format {FORMAT}")]
    Format(u32),
    #[error("word-vector table ends early, at byte {0}")]
    Truncated(usize),
    #[error("word-vector table piece {0} is not UTF-8")]
    Piece(usize),
    #[error("word-vector table has {0} bytes after its last vector")]
    Trailing(usize),
}

/// Static vectors for a `WordPiece` vocabulary.
#[derive(Debug, Clone)]
pub struct WordVectors {
    index: HashMap<String, u32>,
    scales: Vec<f32>,
    values: Vec<i8>,
    dims: usize,
}

/// The built-in table, read on first use (a few milliseconds): each piece as the model
/// reads it alone. Its rows keep the pieces apart, which suits comparing a clause with
/// taught requests that share or trade its words.
pub fn builtin() -> &'static WordVectors {
    static TABLE: OnceLock<WordVectors> = OnceLock::new();
    TABLE.get_or_init(|| read_builtin(BUILTIN_BYTES))
}

/// The built-in table fitted to whole sentences, read on first use: each piece's row
/// chosen so that a sentence's mean row comes near the model's vector for the sentence
/// (docs/routing.md, "Static word vectors"). Nearer the model's meaning, it suits
/// comparing a clause with descriptions written in other words than the clause's.
pub fn sentences() -> &'static WordVectors {
    static TABLE: OnceLock<WordVectors> = OnceLock::new();
    TABLE.get_or_init(|| read_builtin(SENTENCES_BYTES))
}

/// The built-in table of the pieces in context, read on first use: each piece's row the
/// mean of the model's outputs for it across a corpus of requests, so a piece that means
/// one thing in requests ("book" a table) is not the piece of every sense. Sentences
/// are told apart by it better than by the pieces alone, which is what the trained
/// router's network learns from (docs/routing.md, "Static word vectors").
pub fn contexts() -> &'static WordVectors {
    static TABLE: OnceLock<WordVectors> = OnceLock::new();
    TABLE.get_or_init(|| read_builtin(CONTEXTS_BYTES))
}

fn read_builtin(bytes: &'static [u8]) -> WordVectors {
    // The files are part of the build and checked by this crate's tests.
    WordVectors::from_bytes(bytes).unwrap_or_else(|_| WordVectors::empty())
}

struct Reader<'b> {
    bytes: &'b [u8],
    at: usize,
}

impl<'b> Reader<'b> {
    fn take(&mut self, n: usize) -> Result<&'b [u8], TableError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or(TableError::Truncated(self.bytes.len()))?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn u32(&mut self) -> Result<u32, TableError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
}

impl WordVectors {
    /// A table that knows no piece: every text is without a vector.
    pub fn empty() -> Self {
        Self {
            index: HashMap::new(),
            scales: Vec::new(),
            values: Vec::new(),
            dims: 0,
        }
    }

    /// Reads a table in the format above.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, TableError> {
        let mut r = Reader { bytes, at: 0 };
        if r.take(4).map_err(|_| TableError::Magic)? != MAGIC {
            return Err(TableError::Magic);
        }
        let format = r.u32()?;
        if format != FORMAT {
            return Err(TableError::Format(format));
        }
        let count = r.u32()?;
        let pieces = count as usize;
        let dims = r.u32()? as usize;
        let mut index = HashMap::with_capacity(pieces.min(bytes.len()));
        for i in 0..count {
            let len = usize::from(r.take(1)?[0]);
            let piece =
                std::str::from_utf8(r.take(len)?).map_err(|_| TableError::Piece(i as usize))?;
            // A repeated piece keeps its first row, as the tokenizer's lookup would.
            index.entry(piece.to_string()).or_insert(i);
        }
        let scales = r
            .take(
                pieces
                    .checked_mul(4)
                    .ok_or(TableError::Truncated(bytes.len()))?,
            )?
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let size = pieces
            .checked_mul(dims)
            .ok_or(TableError::Truncated(bytes.len()))?;
        let values = r.take(size)?.iter().map(|&b| b.cast_signed()).collect();
        if r.at != bytes.len() {
            return Err(TableError::Trailing(bytes.len() - r.at));
        }
        Ok(Self {
            index,
            scales,
            values,
            dims,
        })
    }

    /// Length of every vector.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// How many pieces the table knows.
    pub fn len(&self) -> usize {
        self.scales.len()
    }

    pub fn is_empty(&self) -> bool {
        self.scales.is_empty()
    }

    /// The ids of the text's pieces the table knows. A word it cannot piece together is
    /// left out, as the model would read it as one unknown token; so is a word without a
    /// letter (a number, a mark), whose vector alone says next to nothing of what the
    /// text is about and, averaged in, pulls every text with times and dates together.
    pub fn piece_ids(&self, text: &str) -> Vec<u32> {
        let lookup = |p: &str| self.index.get(p).copied();
        wordpiece::basic_words(text)
            .iter()
            .filter(|w| w.chars().any(char::is_alphabetic))
            .filter_map(|w| wordpiece::pieces(w, lookup))
            .flatten()
            .collect()
    }

    /// The text's vector: the mean of its pieces' rows, scaled to length one. `None`
    /// where the table knows none of its pieces.
    pub fn sentence(&self, text: &str) -> Option<Vec<f32>> {
        let ids = self.piece_ids(text);
        if ids.is_empty() || self.dims == 0 {
            return None;
        }
        let mut sum = vec![0.0_f32; self.dims];
        for id in ids {
            let i = id as usize;
            let scale = self.scales[i];
            let row = &self.values[i * self.dims..(i + 1) * self.dims];
            for (s, &v) in sum.iter_mut().zip(row) {
                *s += f32::from(v) * scale;
            }
        }
        let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm == 0.0 || !norm.is_finite() {
            return None;
        }
        for x in &mut sum {
            *x /= norm;
        }
        Some(sum)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(pieces: &[&str], dims: u32, rows: &[(f32, &[i8])]) -> Vec<u8> {
        let mut b = MAGIC.to_vec();
        b.extend(FORMAT.to_le_bytes());
        b.extend(u32::try_from(pieces.len()).unwrap().to_le_bytes());
        b.extend(dims.to_le_bytes());
        for p in pieces {
            b.push(u8::try_from(p.len()).unwrap());
            b.extend(p.as_bytes());
        }
        for (s, _) in rows {
            b.extend(s.to_le_bytes());
        }
        for (_, v) in rows {
            b.extend(v.iter().map(|&x| x.cast_unsigned()));
        }
        b
    }

    #[test]
    fn a_sentence_is_the_unit_mean_of_its_pieces() {
        let bytes = table(
            &["fly", "##ing", "home"],
            2,
            &[(1.0, &[3, 0]), (0.5, &[0, 2]), (1.0, &[0, 5])],
        );
        let t = WordVectors::from_bytes(&bytes).unwrap();
        assert_eq!(t.piece_ids("Flying home"), [0, 1, 2]);
        let v = t.sentence("flying").unwrap();
        let n = 10_f32.sqrt();
        assert!((v[0] - 3.0 / n).abs() < 1e-6 && (v[1] - 1.0 / n).abs() < 1e-6);
        assert_eq!(t.sentence("zzz"), None);
    }

    #[test]
    fn broken_tables_are_errors_not_panics() {
        let good = table(&["a"], 1, &[(1.0, &[1])]);
        assert!(WordVectors::from_bytes(&good).is_ok());
        assert_eq!(
            WordVectors::from_bytes(b"nope").unwrap_err(),
            TableError::Magic
        );
        assert!(matches!(
            WordVectors::from_bytes(&good[..good.len() - 1]),
            Err(TableError::Truncated(_))
        ));
        let mut longer = good.clone();
        longer.push(0);
        assert_eq!(
            WordVectors::from_bytes(&longer).unwrap_err(),
            TableError::Trailing(1)
        );
        let mut future = good;
        future[4] = 9;
        assert_eq!(
            WordVectors::from_bytes(&future).unwrap_err(),
            TableError::Format(9)
        );
    }
}
