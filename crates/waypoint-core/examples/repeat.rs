//! Plans one request many times, with the binaries' allocator, for a profiler to read
//! where a plan's time goes (docs/performance.md, "Plan latency"). The catalog is the
//! built-in one, or a YAML file given third (`examples/synth` writes large ones):
//! `valgrind --tool=callgrind --toggle-collect='*Engine::plan_with*' \
//!   target/release/examples/repeat "find CommandRouter" 200`.

use waypoint_catalog::Source;
use waypoint_core::{Engine, Options};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let request = args
        .next()
        .ok_or("usage: repeat REQUEST [TIMES] [CATALOG.yaml]")?;
    let times: usize = args.next().map_or(Ok(100), |n| n.parse())?;
    let catalog = match args.next() {
        Some(path) => {
            let text = std::fs::read_to_string(&path)?;
            waypoint_catalog::load(&[Source { name: path, text }])?.catalog
        }
        None => waypoint_catalog::builtin()?.catalog,
    };
    let engine = Engine::new(catalog, Options::default())?;
    for _ in 0..times {
        std::hint::black_box(engine.plan(std::hint::black_box(&request), None)?);
    }
    Ok(())
}
