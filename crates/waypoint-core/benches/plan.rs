//! Plan latency on the built-in catalog and on synthetic catalogs of growing size.
//! Run with `cargo bench -p waypoint-core`; figures go to `docs/performance.md`.

#![allow(clippy::unwrap_used, reason = "benchmark set-up fails loudly")]

use divan::Bencher;
use waypoint_catalog::{Catalog, Source};
use waypoint_core::{Engine, Options, synth};

/// The allocator of the `waypoint` binaries (the CLI, the MCP and HTTP servers), so the
/// figures are what a plan costs there; a plan makes many small, short-lived strings,
/// which glibc's `malloc` serves more slowly (docs/performance.md, "The allocator").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    divan::main();
}

const REQUESTS: [&str; 4] = [
    "remember this launch, write a blog about it, then make an illustration",
    "translate this summary into French and email it to ana@example.com",
    "find CommandRouter",
    "create an agent that checks https://jobs.example.com/search?q=rust every morning and emails me",
];

fn builtin() -> Engine {
    Engine::new(
        waypoint_catalog::builtin().unwrap().catalog,
        Options::default(),
    )
    .unwrap()
}

fn synthetic(n: usize) -> Engine {
    let catalog: Catalog = waypoint_catalog::load(&[Source {
        name: "synth.yaml".into(),
        text: synth::catalog_yaml(n),
    }])
    .unwrap()
    .catalog;
    Engine::new(catalog, Options::default()).unwrap()
}

#[divan::bench(args = REQUESTS)]
fn plan_builtin(bencher: Bencher, request: &str) {
    let engine = builtin();
    bencher.bench(|| engine.plan(divan::black_box(request), None).unwrap());
}

#[divan::bench(args = [100, 1_000, 10_000])]
fn plan_synthetic(bencher: Bencher, tools: usize) {
    let engine = synthetic(tools);
    let request = "please summarize the weekly invoice and then email it to ops@example.com";
    bencher.bench(|| engine.plan(divan::black_box(request), None).unwrap());
}

#[divan::bench(args = [1_000, 10_000], sample_count = 5)]
fn build_engine(bencher: Bencher, tools: usize) {
    let text = synth::catalog_yaml(tools);
    bencher.bench(|| {
        let catalog = waypoint_catalog::load(&[Source {
            name: "s.yaml".into(),
            text: text.clone(),
        }])
        .unwrap()
        .catalog;
        Engine::new(catalog, Options::default()).unwrap()
    });
}
