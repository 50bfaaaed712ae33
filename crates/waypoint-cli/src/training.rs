//! `waypoint train`: teach the router labelled requests and report what it learned.

use std::io::Write as _;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Result, bail};
use serde::Serialize;
use waypoint_classify::cache::Source;
use waypoint_core::Engine;

use crate::cli::{Global, TrainArgs};
use crate::commands::{load_trained, options};

#[derive(Serialize)]
struct TrainSummary {
    /// Labelled requests added from the files.
    requests_added: usize,
    /// (request, entry) labels they carried.
    labels_added: usize,
    classes: usize,
    features: usize,
    weights: usize,
    /// Share of the route score that is the trained model's (the rest is lexical).
    model_weight: f64,
    calibration: Calibration,
    cross_validation: Option<CrossValidation>,
    /// `cached` (read), `trained` (and written), or `uncached` (trained; not written).
    source: &'static str,
    cache_file: Option<String>,
    seconds: f64,
    entries: Vec<EntrySummary>,
}

#[derive(Serialize)]
struct Calibration {
    a: f64,
    b: f64,
}

#[derive(Serialize)]
struct CrossValidation {
    folds: u32,
    held_out: u32,
    accuracy: f64,
}

#[derive(Serialize)]
struct EntrySummary {
    entry: String,
    /// Texts it learned from: its own words and its requests.
    examples: u32,
    precision: Option<f64>,
    recall: Option<f64>,
    confused_with: Vec<Confusion>,
}

#[derive(Serialize)]
struct Confusion {
    entry: String,
    count: u32,
}

pub(crate) fn train(global: &Global, args: &TrainArgs) -> Result<ExitCode> {
    let mut files = global.train.clone();
    files.extend(args.files.iter().cloned());
    let (catalog, trained) = load_trained(global, &files)?;
    let started = Instant::now();
    let engine = Engine::new(catalog, options(global))?;
    let seconds = started.elapsed().as_secs_f64();
    let Some(learned) = engine.learned() else {
        bail!(
            "nothing to train: the router learns from requests (entries' `examples:` or --train \
             files) and needs at least two entries to tell apart; without them routing is lexical"
        )
    };
    let model = learned.model();
    let classes = model.classes();
    let report = model.report();
    let entries = classes
        .iter()
        .enumerate()
        .map(|(k, name)| {
            let cv = report.and_then(|r| r.classes.get(k));
            EntrySummary {
                entry: name.clone(),
                examples: model.support(k),
                precision: cv.and_then(waypoint_classify::ClassReport::precision),
                recall: cv.and_then(waypoint_classify::ClassReport::recall),
                confused_with: cv
                    .map(|c| {
                        c.confused_with
                            .iter()
                            .map(|(other, count)| Confusion {
                                entry: classes.get(*other as usize).cloned().unwrap_or_default(),
                                count: *count,
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
            }
        })
        .collect();
    let (source, cache_file) = match learned.source() {
        Some(Source::Cached(p)) => ("cached", Some(p.display().to_string())),
        Some(Source::Trained(p)) => ("trained", Some(p.display().to_string())),
        Some(Source::TrainedUncached(why)) => {
            eprintln!(
                "warning: the trained router could not be cached ({why}); the next command trains again"
            );
            ("uncached", None)
        }
        None => ("uncached", None),
    };
    let c = model.calibration();
    let summary = TrainSummary {
        requests_added: trained.requests,
        labels_added: trained.examples,
        classes: classes.len(),
        features: model.features(),
        weights: model.weights(),
        model_weight: (learned.weight() * 1000.0).round() / 1000.0,
        calibration: Calibration { a: c.a, b: c.b },
        cross_validation: report.map(|r| CrossValidation {
            folds: r.folds,
            held_out: r.held_out,
            accuracy: (r.accuracy * 10_000.0).round() / 10_000.0,
        }),
        source,
        cache_file,
        seconds: (seconds * 1000.0).round() / 1000.0,
        entries,
    };
    let mut out = anstream::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&summary)?)?;
    } else {
        render(&mut out, &summary)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn render(out: &mut impl std::io::Write, s: &TrainSummary) -> std::io::Result<()> {
    let how = match s.source {
        "cached" => "read from the cache",
        "trained" => "trained and cached",
        _ => "trained (not cached)",
    };
    writeln!(
        out,
        "Router: {} entries, {} features, {} weights · {how} in {:.2}s",
        s.classes, s.features, s.weights, s.seconds
    )?;
    if let Some(f) = &s.cache_file {
        writeln!(out, "  model file   {f}")?;
    }
    writeln!(
        out,
        "  requests     {} added ({} labels); the model makes {:.0}% of each route score",
        s.requests_added,
        s.labels_added,
        s.model_weight * 100.0
    )?;
    match &s.cross_validation {
        Some(cv) => writeln!(
            out,
            "  held out     {} requests over {} folds: {:.1}% routed right",
            cv.held_out,
            cv.folds,
            cv.accuracy * 100.0
        )?,
        None => writeln!(
            out,
            "  held out     none: too few requests to cross-validate (calibration is the default)"
        )?,
    }
    writeln!(out)?;
    let width = s
        .entries
        .iter()
        .map(|e| e.entry.len())
        .max()
        .unwrap_or(5)
        .max(5);
    writeln!(
        out,
        "{:width$}  {:>8}  {:>9}  {:>6}  confused with",
        "entry", "examples", "precision", "recall"
    )?;
    let pct = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{:.0}%", v * 100.0));
    for e in &s.entries {
        let confused: Vec<String> = e
            .confused_with
            .iter()
            .map(|c| format!("{} ×{}", c.entry, c.count))
            .collect();
        writeln!(
            out,
            "{:width$}  {:>8}  {:>9}  {:>6}  {}",
            e.entry,
            e.examples,
            pct(e.precision),
            pct(e.recall),
            confused.join(", ")
        )?;
    }
    Ok(())
}
