//! `waypoint train` and `waypoint calibrate`: teach the router labelled requests, report what
//! it learned, and fit the abstain threshold on held-out requests.

use std::io::{IsTerminal as _, Write as _};
use std::process::ExitCode;

use anyhow::Result;
use waypoint_app::train::{CalibrateSummary, NetworkReads, TrainSummary};

use crate::cli::{CalibrateArgs, Global, TrainArgs};
use crate::setup::{say, setup};

pub(crate) fn train(global: &Global, args: &TrainArgs) -> Result<ExitCode> {
    let (summary, notices) = waypoint_app::train::train(&setup(global)?, &args.files)?;
    say(&notices);
    let mut out = anstream::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&summary)?)?;
    } else {
        render(&mut out, &summary)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn render(out: &mut impl std::io::Write, s: &TrainSummary) -> std::io::Result<()> {
    render_model(out, s)?;
    writeln!(out)?;
    render_entries(out, s)
}

/// What was trained, from what, and how it did on held-out texts.
fn render_model(out: &mut impl std::io::Write, s: &TrainSummary) -> std::io::Result<()> {
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
        "  requests     {} added ({} labels, {} asking for two or more entries); the model makes {:.0}% of each route score",
        s.requests_added,
        s.labels_added,
        s.requests_asking_two,
        s.model_weight * 100.0
    )?;
    if s.one_entry_per_request {
        writeln!(
            out,
            "  asked        one entry per request, so a request is planned as one (docs/architecture.md, \"Route\")"
        )?;
    }
    if s.examples_vote {
        writeln!(
            out,
            "  examples     the closest examples vote on how sure the router is: a request near none is a gap (docs/routing.md, \"Requests\")"
        )?;
    }
    if let Some(share) = s.network_share {
        let inputs = s
            .network_inputs
            .map(|n| format!(" ({n} values a request)"))
            .unwrap_or_default();
        let reads = match s.network_reads {
            Some(NetworkReads::WordVectors) => "the static word vectors",
            _ => "the encoder's readings",
        };
        let part = match s
            .network_sure_share
            .filter(|sure| (sure - share).abs() > f32::EPSILON)
        {
            Some(sure) => format!(
                "{:.0}% of the router's probability in ranking the entries and {:.0}% in how sure it is",
                share * 100.0,
                sure * 100.0
            ),
            None => format!("{:.0}% of the router's probability", share * 100.0),
        };
        writeln!(
            out,
            "  network      a network over {reads}{inputs} gives {part} (docs/routing.md, item 2)"
        )?;
    }
    if s.one_step_per_tool {
        writeln!(
            out,
            "  steps        each tool once per request in the taught sequences: a tool asked for again is one step"
        )?;
    }
    for t in &s.taken_first {
        writeln!(
            out,
            "  taken first  {} before {} ({} of {} taught sequences; docs/routing.md, \"Prerequisites\")",
            t.first, t.entry, t.before, t.of
        )?;
    }
    match &s.cross_validation {
        Some(cv) => writeln!(
            out,
            "  held out     {} distinct texts over {} folds: {:.1}% routed right",
            cv.held_out,
            cv.folds,
            cv.accuracy * 100.0
        )?,
        None => writeln!(
            out,
            "  held out     none: too few requests to cross-validate (calibration is the default)"
        )?,
    }
    Ok(())
}

/// Per entry: examples, held-out precision and recall, and what it was confused with.
fn render_entries(out: &mut impl std::io::Write, s: &TrainSummary) -> std::io::Result<()> {
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

pub(crate) fn calibrate(global: &Global, args: &CalibrateArgs) -> Result<ExitCode> {
    let terminal = std::io::stderr().is_terminal();
    let progress = |fold: usize, folds: usize| {
        if terminal {
            eprint!("\rcross-validating: fold {fold}/{folds}");
            if fold == folds {
                eprintln!();
            }
        }
    };
    let (summary, from, notices) =
        waypoint_app::train::calibrate(&setup(global)?, args.held_out.as_deref(), progress)?;
    say(&notices);
    let mut out = anstream::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&summary)?)?;
    } else {
        render_calibration(&mut out, &summary, &from)?;
    }
    Ok(ExitCode::SUCCESS)
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
