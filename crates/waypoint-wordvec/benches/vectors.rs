//! What the static word vectors cost: reading the built-in table, and one text's vector.
//! Run with `cargo bench -p waypoint-wordvec`; figures go to `docs/performance.md`.

use divan::Bencher;
use waypoint_wordvec::{WordVectors, builtin};

fn main() {
    divan::main();
}

const TABLE: &[u8] = include_bytes!("../data/minilm-l6-static.bin");

#[divan::bench(sample_count = 20)]
fn read_table() -> WordVectors {
    WordVectors::from_bytes(divan::black_box(TABLE)).unwrap_or_else(|_| WordVectors::empty())
}

#[divan::bench(args = [
    "what's in store for Scorpios today?",
    "Flight ticket inquiry for tickets that can be booked on the same day for business trips",
])]
fn sentence(bencher: Bencher, text: &str) {
    let table = builtin();
    bencher.bench(|| table.sentence(divan::black_box(text)));
}
