//! A text classifier for routing requests to catalog entries, trained in-process
//! from what a catalog says about its entries and from labelled requests.
//!
//! [`features`] turns text into word and character n-gram TF-IDF vectors; `svm` trains
//! one linear SVM per class (dual coordinate descent, deterministic); `head` is a small
//! network over sentence vectors, where a catalog's requests ask for one entry each;
//! [`calibrate`] maps
//! decision values to probabilities fitted on held-out folds and reports precision,
//! recall and confusions per class; `artifact` and [`cache`] keep trained models on disk
//! keyed by the digest of their training data.

// Weights and feature values are stored as f32: half the memory, and far more precision
// than a route score (two decimals) needs; the shuffle's u64 → usize is taken modulo a
// usize bound.
#![expect(
    clippy::cast_possible_truncation,
    reason = "f64 → f32 for stored weights is intended; see above"
)]

mod artifact;
pub mod cache;
pub mod calibrate;
pub mod features;
mod head;
mod model;
mod svm;

pub use artifact::{ArtifactError, FORMAT};
pub use calibrate::{Calibration, ClassReport, Report};
pub use model::{Example, Model, Settings, TrainingSet};
