//! Trains on one eval-contract JSONL file and scores another: top-1 accuracy on in-scope
//! cases and out-of-scope recall at several abstain thresholds.
//!
//! `cargo run --release -p waypoint-classify --example jsonl_check -- TRAIN.jsonl DEV.jsonl`

use waypoint_classify::{Model, Settings, TrainingSet};

fn cases(path: &str) -> Vec<(String, Vec<String>, bool)> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .map(|v| {
            let e = &v["expect"];
            let labels: Vec<String> = e["tools"]
                .as_array()
                .or(e["tool_set"].as_array())
                .into_iter()
                .flatten()
                .filter_map(|x| x.as_str().map(String::from))
                .collect();
            let unknown = e["unknown"].as_bool().unwrap_or(false);
            (
                v["request"].as_str().unwrap_or_default().to_string(),
                labels,
                unknown,
            )
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(train), Some(dev)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: jsonl_check TRAIN.jsonl DEV.jsonl [C]");
        return;
    };
    let c = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let mut set = TrainingSet::default();
    for (text, labels, _) in cases(train) {
        let refs: Vec<&str> = labels.iter().map(String::as_str).collect();
        set.add(&text, &refs, 1.0, true);
    }
    let started = std::time::Instant::now();
    let max_epochs = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(100);
    let folds = args.get(5).and_then(|s| s.parse().ok()).unwrap_or(3);
    let settings = Settings {
        c,
        max_epochs,
        folds,
        ..Settings::default()
    };
    let model = Model::train(&set, &settings);
    println!(
        "trained {} examples, {} classes, {} features, {} weights in {:.2?}; cv accuracy {:?}; calibration {:?}",
        set.examples().len(),
        set.classes().len(),
        model.features(),
        model.weights(),
        started.elapsed(),
        model.report().map(|r| r.accuracy),
        model.calibration()
    );
    let dev = cases(dev);
    let started = std::time::Instant::now();
    let scored: Vec<(f32, bool, bool)> =
        dev.iter()
            .map(|(text, labels, unknown)| {
                let p = model.probabilities(text);
                let (best, top) = p.iter().enumerate().fold((0, f32::MIN), |acc, (k, v)| {
                    if *v > acc.1 { (k, *v) } else { acc }
                });
                let right = labels.contains(&model.classes()[best]);
                (top, right, *unknown)
            })
            .collect();
    println!("scored {} in {:.2?}", dev.len(), started.elapsed());
    for t in [0.0, 0.1, 0.2, 0.3, 0.35, 0.4, 0.5, 0.6] {
        let ins: Vec<_> = scored.iter().filter(|s| !s.2).collect();
        let oos: Vec<_> = scored.iter().filter(|s| s.2).collect();
        let acc = ins.iter().filter(|s| s.1 && s.0 >= t).count() as f64 / ins.len().max(1) as f64;
        let rec = oos.iter().filter(|s| s.0 < t).count() as f64 / oos.len().max(1) as f64;
        println!("threshold {t:.2}: in-scope {acc:.3}  oos recall {rec:.3}");
    }
}
