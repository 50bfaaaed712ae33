//! Writes a synthetic catalog and cases for scale checks:
//! `cargo run --release -p waypoint-core --example synth -- DIR TOOLS CASES`, then
//! `waypoint eval DIR/cases.jsonl --catalog DIR/catalog.yaml`.

use waypoint_core::synth;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = args.next().ok_or("usage: synth DIR TOOLS CASES")?;
    let tools: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let cases: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(20_000);
    std::fs::create_dir_all(&dir)?;
    std::fs::write(format!("{dir}/catalog.yaml"), synth::catalog_yaml(tools))?;
    std::fs::write(
        format!("{dir}/cases.jsonl"),
        synth::cases_jsonl(cases, tools),
    )?;
    println!("wrote {tools} tools and {cases} cases to {dir}");
    Ok(())
}
