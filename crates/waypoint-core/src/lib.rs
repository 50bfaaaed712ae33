//! The deterministic heart of Waypoint: understand → route → plan → validate → render.
//!
//! An [`Engine`] is built once per catalog: it compiles the vocabulary
//! ([`lexicon`]), the value extractor ([`extract`]) and the routing index ([`route`]).
//! Each request then flows through [`understand`] (clauses, goals, extracted values),
//! [`route`] (ranked candidates per clause), [`plan`] (steps, dependencies, args),
//! [`validate`] (guards) and [`render`] (text, Mermaid, DOT).

mod args;
mod engine;
mod error;
pub mod extract;
mod hash;
pub mod learned;
pub mod lexicon;
pub mod meaning;
mod network_neighbours;
mod parts;
pub mod plan;
pub mod render;
pub mod route;
pub mod segment;
pub mod specialists;
pub mod suggested;
pub mod synth;
pub mod text;
pub mod understand;
pub mod unsaid;
pub mod validate;
mod word_neighbours;

pub use engine::{ClauseEvidence, Engine, Options};
pub use error::CoreError;
