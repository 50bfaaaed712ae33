//! Encoder speed: one short request (what a clause costs at plan time) and a batch of 32
//! (what indexing a catalog costs per text). Needs `WAYPOINT_EMBED_MODEL` (see
//! `scripts/embed-model`); without it the benchmarks measure nothing and say so.

use std::path::PathBuf;
use std::sync::OnceLock;

use waypoint_embed::{Encoder, Precision};

fn main() {
    if encoder().is_none() {
        eprintln!("WAYPOINT_EMBED_MODEL is not set to a model folder; nothing to measure");
    }
    divan::main();
}

fn load(precision: Precision) -> Option<Encoder> {
    let dir = PathBuf::from(std::env::var_os("WAYPOINT_EMBED_MODEL")?);
    Encoder::load_with(&dir, precision).ok()
}

fn encoder() -> Option<&'static Encoder> {
    static ENCODER: OnceLock<Option<Encoder>> = OnceLock::new();
    ENCODER.get_or_init(|| load(Precision::Int8)).as_ref()
}

fn encoder_f32() -> Option<&'static Encoder> {
    static ENCODER: OnceLock<Option<Encoder>> = OnceLock::new();
    ENCODER.get_or_init(|| load(Precision::F32)).as_ref()
}

const REQUEST: &str = "what's the weather going to be like in Denver tomorrow morning";

#[divan::bench]
fn one_request() {
    if let Some(e) = encoder() {
        divan::black_box(e.embed(divan::black_box(REQUEST)).ok());
    }
}

/// The same request through the checkpoint's 32-bit weights.
#[divan::bench]
fn one_request_f32() {
    if let Some(e) = encoder_f32() {
        divan::black_box(e.embed(divan::black_box(REQUEST)).ok());
    }
}

#[divan::bench(sample_count = 20)]
fn batch_of_32() {
    if let Some(e) = encoder() {
        let texts: Vec<String> = (0..32).map(|i| format!("{REQUEST} number {i}")).collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        divan::black_box(e.embed_batch(&refs).ok());
    }
}
