//! Sentence embeddings in-process, for routing by meaning rather than by shared words.
//!
//! [`Encoder`] loads a sentence-transformers folder (all-MiniLM-L6-v2 is the one the
//! project installs: `scripts/embed-model`) and turns texts into vectors on the CPU with
//! candle; `bert` is the encoder itself; [`cache`] keeps the vectors of a catalog's texts
//! on disk. Nothing is downloaded: a folder that is missing or broken is an
//! [`EmbedError`] naming the file, and the caller routes without meaning.

mod bert;
pub mod cache;
mod encoder;

pub use encoder::{EmbedError, Encoder, cosine};
