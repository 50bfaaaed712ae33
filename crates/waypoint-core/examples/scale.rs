//! Plans one request on a synthetic catalog many times; for profiling
//! (`cargo run --release -p waypoint-core --example scale -- 10000`).

use waypoint_catalog::Source;
use waypoint_core::{Engine, Options, synth};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let tools: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000);
    let text = synth::catalog_yaml(tools);
    let catalog = waypoint_catalog::load(&[Source {
        name: "synth.yaml".into(),
        text,
    }])?
    .catalog;
    let engine = Engine::new(catalog, Options::default())?;
    let request = "please summarize the weekly invoice and then email it to ops@example.com";
    let first = std::time::Instant::now();
    std::hint::black_box(engine.plan(request, None)?);
    println!("first plan: {:.1} µs", first.elapsed().as_secs_f64() * 1e6);
    let started = std::time::Instant::now();
    let rounds = 2_000;
    for _ in 0..rounds {
        let plan = engine.plan(request, None)?;
        std::hint::black_box(plan);
    }
    println!(
        "{tools} tools: {:.1} µs per plan",
        started.elapsed().as_secs_f64() * 1e6 / f64::from(rounds)
    );
    Ok(())
}
