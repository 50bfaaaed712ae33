//! Training and scoring speed on a synthetic catalog (medians: `cargo bench -p waypoint-classify`).

use waypoint_classify::{Model, Settings, TrainingSet};

fn main() {
    divan::main();
}

const VERBS: [&str; 10] = [
    "book", "cancel", "play", "show", "find", "send", "check", "set", "add", "remove",
];
const THINGS: [&str; 15] = [
    "table", "flight", "song", "balance", "recipe", "email", "weather", "alarm", "playlist",
    "reminder", "order", "invoice", "meeting", "route", "photo",
];

/// Every verb–thing pair is a class with a few phrasings.
fn set(per_class: usize) -> TrainingSet {
    let mut set = TrainingSet::default();
    for v in VERBS {
        for t in THINGS {
            let class = format!("{v}_{t}");
            for i in 0..per_class {
                let text = match i % 4 {
                    0 => format!("{v} my {t}"),
                    1 => format!("please {v} the {t} for me"),
                    2 => format!("can you {v} a {t} now {i}"),
                    _ => format!("i want to {v} {t} number {i}"),
                };
                set.add(&text, &[&class], 1.0, true);
            }
        }
    }
    set
}

#[divan::bench(args = [10, 40])]
fn train(bencher: divan::Bencher<'_, '_>, per_class: usize) {
    let set = set(per_class);
    let settings = Settings::default();
    bencher.bench(|| Model::train(&set, &settings));
}

#[divan::bench]
fn score_one_clause(bencher: divan::Bencher<'_, '_>) {
    let model = Model::train(&set(20), &Settings::default());
    bencher
        .bench(|| model.probabilities(divan::black_box("could you please book a table for two")));
}

/// The same set with a sentence-sized vector per example (pseudo-random, unit length),
/// so the linear model learns from them too and the network over them is trained.
#[divan::bench(args = [10], sample_count = 3)]
fn train_with_vectors(bencher: divan::Bencher<'_, '_>, per_class: usize) {
    let mut set = set(per_class);
    let mut state = 0x2545_f491_u64;
    let vectors: Vec<Vec<f32>> = (0..set.examples().len())
        .map(|_| {
            let v: Vec<f32> = (0..384)
                .map(|_| {
                    state = state
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1);
                    (state >> 40) as f32 / (1_u64 << 24) as f32 - 0.5
                })
                .collect();
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.into_iter().map(|x| x / norm).collect()
        })
        .collect();
    assert!(set.set_dense(vectors));
    let settings = Settings::default();
    bencher.bench(|| Model::train(&set, &settings));
}
