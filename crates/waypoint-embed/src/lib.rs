//! Sentence embeddings in-process, for routing by meaning rather than by shared words.
//!
//! [`Encoder`] loads a sentence-transformers folder (all-MiniLM-L6-v2 is the one the
//! project installs: `scripts/embed-model`) and turns texts into vectors on the CPU with
//! candle, each pass giving a sentence vector and a longer [`Encoded::probe`] for
//! classifiers; `bert` is the encoder itself, and where the CPU has AVX-512 VNNI or AVX2
//! `bert_int8` runs its layers with `int8`'s 8-bit dense products; [`cache`] keeps the
//! vectors of a catalog's texts on disk. Nothing is downloaded: a folder that is missing or broken is
//! an [`EmbedError`] naming the file, and the caller routes without meaning.

mod bert;
mod bert_int8;
pub mod cache;
mod encoder;
mod int8;

pub use bert::Precision;
pub use encoder::{EmbedError, Encoded, Encoder, cosine, dot};
pub use int8::{QuantRows, dot_i8, quantise};
