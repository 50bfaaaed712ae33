//! Static word vectors: a sentence's meaning as the mean of its word pieces' vectors,
//! with no model to load or run.
//!
//! The built-in table ([`builtin`]) holds one 128-value vector per token of
//! all-MiniLM-L6-v2's `WordPiece` vocabulary, each the model's output for that token alone,
//! reduced and weighted as `scripts/wordvec/distill.py` says (docs/routing.md, "Static
//! word vectors"). It is far weaker than the model on a whole sentence, but it knows
//! that "fare" and "flight" are near, which n-grams cannot: the trained router reads it
//! beside them. [`sentences`] holds the same pieces fitted so that a sentence's mean
//! comes near the model's vector for the whole sentence (`scripts/wordvec/learn.py`);
//! zero-shot routing compares descriptions with it. [`contexts`] holds each piece as the
//! model reads it inside requests (`scripts/wordvec/contexts.py`); the trained router's
//! network reads that one. [`wordpiece`] splits text the way the model's tokenizer does;
//! [`table`] reads the file format; [`centre`] takes what a set of texts shares out of
//! their vectors.

pub mod centre;
pub mod table;
pub mod wordpiece;

pub use centre::{Centre, unit};
pub use table::{TableError, WordVectors, builtin, contexts, sentences};
