//! Plans every file under the given folders as a request on the built-in catalog and
//! lists the slowest, with their length; for finding what makes an odd or long request
//! expensive (a fuzz corpus is a good source:
//! `cargo run --release -p waypoint-core --example slowest -- fuzz/corpus/request_path`).

use std::io::Write;
use std::time::Instant;

use waypoint_core::{Engine, Options};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let loaded = waypoint_catalog::builtin()?;
    let engine = Engine::new(loaded.catalog, Options::default())?;
    let mut timed = Vec::new();
    for dir in std::env::args().skip(1) {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            let bytes = std::fs::read(&path)?;
            let text = String::from_utf8_lossy(&bytes);
            let started = Instant::now();
            let _ = std::hint::black_box(engine.plan(&text, None));
            timed.push((started.elapsed().as_secs_f64() * 1e6, bytes.len(), path));
        }
    }
    timed.sort_by(|a, b| b.0.total_cmp(&a.0));
    let total: f64 = timed.iter().map(|t| t.0).sum();
    let bytes: usize = timed.iter().map(|t| t.1).sum();
    // A reader that stops early (`| head`) ends the listing, not the program.
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{} requests, {bytes} bytes: {:.0} µs in all, {:.1} µs a request, {:.2} µs a byte",
        timed.len(),
        total,
        total / timed.len().max(1) as f64,
        total / bytes.max(1) as f64
    )?;
    for (us, len, path) in timed.iter().take(15) {
        if writeln!(out, "{us:>10.0} µs {len:>6} bytes  {}", path.display()).is_err() {
            break;
        }
    }
    Ok(())
}
