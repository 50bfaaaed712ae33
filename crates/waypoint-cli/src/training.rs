//! `waypoint train` and `waypoint calibrate`: teach the router labelled requests, report what
//! it learned, and fit the abstain threshold on held-out requests.

use std::io::{IsTerminal as _, Write as _};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context as _, Result, bail};
use serde::Serialize;
use waypoint_classify::cache::Source;
use waypoint_core::Engine;

use crate::cli::{CalibrateArgs, Global, TrainArgs};
use crate::setup::setup;

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
    /// Meaning-level matching: `off`, `on` or `failed`, with the encoder folder or why.
    meaning: waypoint_app::meaning::Status,
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
    let mut s = setup(global)?;
    s.train.extend(args.files.iter().cloned());
    let config = s.config()?;
    let (catalog, trained, notices) = s.catalog()?;
    crate::setup::say(&notices);
    let started = Instant::now();
    let built = s.engine_over(catalog, &config)?;
    crate::setup::say(&built.notices);
    let engine = built.engine;
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
        meaning: waypoint_app::meaning::status(&engine),
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
    match (s.meaning.state, &s.meaning.detail, s.meaning.rows) {
        ("on", dir, rows) => writeln!(
            out,
            "  meaning      on: {} texts encoded with {}",
            rows.unwrap_or(0),
            dir.as_deref().unwrap_or("the configured encoder")
        )?,
        (state, detail, _) => writeln!(
            out,
            "  meaning      {state}: {}",
            detail.as_deref().unwrap_or("-")
        )?,
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

/// What `waypoint calibrate` prints with `--json`.
#[derive(Serialize)]
struct CalibrateSummary {
    requests: usize,
    in_scope: usize,
    out_of_scope: usize,
    /// The threshold in use now, and its figures.
    current: waypoint_eval::calibrate::Point,
    fitted: waypoint_eval::calibrate::Point,
    entries: Vec<waypoint_eval::calibrate::EntryFigures>,
    curve: Vec<waypoint_eval::calibrate::Point>,
}

pub(crate) fn calibrate(global: &Global, args: &CalibrateArgs) -> Result<ExitCode> {
    use waypoint_eval::calibrate;
    let s = setup(global)?;
    let config = s.config()?;
    let (mut opts, notice) = s.options(&config);
    crate::setup::say(&Vec::from_iter(notice));
    // Route at threshold 0 so every clause reports its best candidate; the sweep decides.
    let current = opts.threshold;
    opts.threshold = 0.0;
    let (observations, from) = match &args.held_out {
        Some(path) => {
            let name = path.display().to_string();
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read held-out requests `{name}`"))?;
            let cases = waypoint_eval::read_cases(&text, &name)?;
            let (catalog, _, notices) = s.catalog()?;
            crate::setup::say(&notices);
            let engine = Engine::new(catalog, opts)?;
            (calibrate::observe(&engine, &cases), format!("`{name}`"))
        }
        None => cross_validated(global, &s, &opts)?,
    };
    if observations.is_empty() {
        bail!(
            "{from} has no labelled requests: give each `\"expect\": {{\"tools\": [...]}}` or \
             `{{\"unknown\": true}}` for one the catalog cannot serve"
        );
    }
    let fit = calibrate::fit_threshold(&observations, calibrate::grid());
    let summary = CalibrateSummary {
        requests: observations.len(),
        in_scope: fit.in_scope,
        out_of_scope: fit.out_of_scope,
        current: calibrate::point(&observations, current),
        fitted: fit.best,
        entries: calibrate::per_entry(&observations, fit.best.threshold),
        curve: fit.curve,
    };
    let mut out = anstream::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&summary)?)?;
    } else {
        render_calibration(&mut out, &summary, &from)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Folds of cross-validation when no held-out file is given.
const FOLDS: usize = 3;

/// Observations from the `--train` requests themselves: each fold is held out in turn
/// and routed by an engine taught by the other folds.
fn cross_validated(
    global: &Global,
    s: &waypoint_app::Setup,
    opts: &waypoint_core::Options,
) -> Result<(Vec<waypoint_eval::calibrate::Observation>, String)> {
    if global.train.is_empty() {
        bail!(
            "nothing to calibrate on: give held-out requests (waypoint calibrate HELD_OUT.jsonl) \
             or --train files to cross-validate on"
        );
    }
    let mut cases = Vec::new();
    for file in &global.train {
        let name = file.display().to_string();
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("cannot read training file `{name}`"))?;
        cases.extend(waypoint_eval::read_cases(&text, &name)?);
    }
    let mut observations = Vec::new();
    for fold in 0..FOLDS {
        let (held, taught): (Vec<_>, Vec<_>) = cases
            .iter()
            .enumerate()
            .partition(|(i, _)| i % FOLDS == fold);
        let taught: Vec<_> = taught.into_iter().map(|(_, c)| c.clone()).collect();
        let held: Vec<_> = held.into_iter().map(|(_, c)| c.clone()).collect();
        // The catalog alone, taught only by the other folds.
        let alone = waypoint_app::Setup {
            train: Vec::new(),
            ..s.clone()
        };
        let (mut catalog, _, _) = alone.catalog()?;
        waypoint_eval::train(&mut catalog, &taught);
        let engine = Engine::new(catalog, opts.clone())?;
        observations.extend(waypoint_eval::calibrate::observe(&engine, &held));
        if std::io::stderr().is_terminal() {
            eprint!("\rcross-validating: fold {}/{FOLDS}", fold + 1);
        }
    }
    if std::io::stderr().is_terminal() {
        eprintln!();
    }
    Ok((
        observations,
        format!(
            "{} --train requests, {FOLDS}-fold cross-validation",
            cases.len()
        ),
    ))
}

fn render_calibration(
    out: &mut impl std::io::Write,
    summary: &CalibrateSummary,
    from: &str,
) -> std::io::Result<()> {
    use waypoint_eval::calibrate;
    let pct = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{:.1}%", v * 100.0));
    writeln!(
        out,
        "Held out: {} requests ({} in scope, {} out of scope) from {from}",
        summary.requests, summary.in_scope, summary.out_of_scope
    )?;
    for (label, p) in [("current", &summary.current), ("fitted ", &summary.fitted)] {
        writeln!(
            out,
            "  {label} threshold {:.2}: in-scope accuracy {}, out-of-scope recall {}",
            p.threshold,
            pct(p.in_scope_accuracy),
            pct(p.oos_recall)
        )?;
    }
    if summary.out_of_scope == 0 {
        writeln!(
            out,
            "  no out-of-scope requests: the sweep only shows how low the threshold may go, \
             so keep the current one; add requests the catalog cannot serve with \
             \"expect\": {{\"unknown\": true}} to fit it"
        )?;
    } else {
        writeln!(
            out,
            "  use it with: --threshold {:.2}",
            summary.fitted.threshold
        )?;
    }
    writeln!(
        out,
        "\nPer entry at {:.2} (weakest recall first):",
        summary.fitted.threshold
    )?;
    let mut rows: Vec<&calibrate::EntryFigures> =
        summary.entries.iter().filter(|e| e.support > 0).collect();
    rows.sort_by(|a, b| {
        a.recall
            .unwrap_or(0.0)
            .total_cmp(&b.recall.unwrap_or(0.0))
            .then_with(|| a.entry.cmp(&b.entry))
    });
    for e in rows.iter().take(20) {
        let confused: Vec<String> = e
            .confused_with
            .iter()
            .map(|(x, n)| format!("{x} ×{n}"))
            .collect();
        writeln!(
            out,
            "  {:<32} {:>4} held out · precision {:>6} · recall {:>6}{}",
            e.entry,
            e.support,
            pct(e.precision),
            pct(e.recall),
            if confused.is_empty() {
                String::new()
            } else {
                format!(" · instead: {}", confused.join(", "))
            }
        )?;
    }
    if rows.len() > 20 {
        writeln!(
            out,
            "  … {} more entries (--json has them all)",
            rows.len() - 20
        )?;
    }
    Ok(())
}
