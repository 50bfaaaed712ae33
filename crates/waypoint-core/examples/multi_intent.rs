//! Clause segmentation against a multi-intent benchmark split (`MixATIS`, `MixSNIPS`):
//! the share of utterances split into exactly as many action clauses as they have
//! intents. Use train or dev splits to tune, test to report.
//! `cargo run --release -p waypoint-core --example multi_intent -- ../shared/benchmarks/multi-intent/MixSNIPS_clean/dev`

use waypoint_protocol::ClauseRole;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .ok_or("usage: multi_intent SPLIT_DIR")?;
    let utterances = std::fs::read_to_string(format!("{dir}/seq.in"))?;
    let labels = std::fs::read_to_string(format!("{dir}/label"))?;
    let engine = waypoint_core::Engine::new(
        waypoint_catalog::builtin()?.catalog,
        waypoint_core::Options::default(),
    )?;
    let (mut equal, mut over, mut under) = (0usize, 0usize, 0usize);
    for (text, label) in utterances.lines().zip(labels.lines()) {
        let want = label.split('#').count();
        let got = engine
            .understand(text, None)?
            .clauses
            .iter()
            .filter(|c| c.role == ClauseRole::Action)
            .count();
        match got.cmp(&want) {
            std::cmp::Ordering::Equal => equal += 1,
            std::cmp::Ordering::Greater => over += 1,
            std::cmp::Ordering::Less => under += 1,
        }
    }
    let total = equal + over + under;
    println!(
        "{dir}: {total} utterances; clause count = intent count {equal} ({:.1}%), more {over}, fewer {under}",
        100.0 * equal as f64 / total.max(1) as f64
    );
    Ok(())
}
