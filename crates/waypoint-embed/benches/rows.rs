//! One vector against many in 8-bit integers: what the nearest-request vote pays per
//! clause over a catalog taught 15,000 requests (CLINC150's training split), through
//! [`QuantRows`] in one pass of the 8-bit kernel and one row at a time with [`dot_i8`].
//! Needs no model: the rows are pseudo-random unit vectors.

use std::sync::OnceLock;

use waypoint_embed::{QuantRows, dot_i8, quantise};

const ROWS: usize = 15_000;
const DIMS: usize = 384;

fn main() {
    divan::main();
}

/// Unit vectors with a deterministic spread of values.
fn rows(count: usize, seed: u64) -> Vec<f32> {
    let mut state = seed;
    let mut out = Vec::with_capacity(count * DIMS);
    for _ in 0..count {
        let row: Vec<f32> = (0..DIMS)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                #[expect(clippy::cast_precision_loss, reason = "pseudo-random numbers")]
                let v = (state >> 40) as f32 / (1_u64 << 24) as f32;
                v * 2.0 - 1.0
            })
            .collect();
        let norm = row.iter().map(|v| v * v).sum::<f32>().sqrt();
        out.extend(row.iter().map(|v| v / norm));
    }
    out
}

struct Fixture {
    quant: QuantRows,
    one_by_one: Vec<(Vec<i8>, f32)>,
    query: Vec<f32>,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let flat = rows(ROWS, 1);
        Fixture {
            quant: QuantRows::new(flat.chunks_exact(DIMS), DIMS),
            one_by_one: flat.chunks_exact(DIMS).map(quantise).collect(),
            query: rows(1, 2),
        }
    })
}

#[divan::bench]
fn all_rows_in_one_pass() {
    let f = fixture();
    divan::black_box(f.quant.dots(divan::black_box(&f.query)));
}

#[divan::bench]
fn one_row_at_a_time() {
    let f = fixture();
    let (q, scale) = quantise(divan::black_box(&f.query));
    let cosines: Vec<f32> = f
        .one_by_one
        .iter()
        .map(|(row, row_scale)| {
            #[expect(clippy::cast_precision_loss, reason = "sums of 8-bit products")]
            let exact = dot_i8(row, &q) as f32;
            exact * row_scale * scale
        })
        .collect();
    divan::black_box(cosines);
}
