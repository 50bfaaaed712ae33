//! Renders errors and diagnostics for people on standard error.

use std::io::Write as _;

use anstyle::{AnsiColor, Style};
use waypoint_app::AppError;
use waypoint_catalog::{CatalogError, Diagnostic, Severity};

const ERROR: Style = AnsiColor::Red.on_default().bold();
const WARNING: Style = AnsiColor::Yellow.on_default().bold();
const HINT: Style = AnsiColor::Cyan.on_default().bold();

/// Prints one diagnostic with its snippet.
pub fn diagnostic(d: &Diagnostic) {
    let style = if d.severity == Severity::Error {
        ERROR
    } else {
        WARNING
    };
    let rendered = d.render();
    let mut err = anstream::stderr();
    let (head, rest) = rendered.split_once(':').unwrap_or((&rendered, ""));
    let _ = writeln!(err, "{style}{head}{style:#}:{rest}\n");
}

/// Prints an error and its causes; catalog errors list every diagnostic.
pub fn error(err: &anyhow::Error) {
    let catalog = err
        .downcast_ref::<CatalogError>()
        .or(match err.downcast_ref::<AppError>() {
            Some(AppError::Catalog(c)) => Some(c),
            _ => None,
        });
    if let Some(CatalogError::Invalid { diagnostics }) = catalog {
        for d in diagnostics {
            diagnostic(d);
        }
    }
    let mut out = anstream::stderr();
    let _ = write!(out, "{ERROR}error{ERROR:#}: {err}");
    for cause in err.chain().skip(1) {
        let _ = write!(out, "\n  caused by: {cause}");
    }
    if let Some(h) = err.downcast_ref::<AppError>().and_then(hint) {
        let _ = write!(out, "\n  {HINT}hint{HINT:#}: {h}");
    }
    let _ = writeln!(out);
}

/// What to do about an application error, in the command line's terms.
fn hint(e: &AppError) -> Option<String> {
    Some(match e {
        AppError::NoStore { why: None } => "history, runs and memories live in the store, and `--store none` turns it off; name one with `--store sqlite:PATH` or `--store postgres://…`".into(),
        AppError::NoStore { why: Some(_) } => {
            "check `--store` (or WAYPOINT_STORE): `sqlite:PATH` or `postgres://…`".into()
        }
        AppError::NoModel(_) => "pass --model PROVIDER/MODEL (e.g. llamacpp/gemma3-270m) or set `model` under [llm] in waypoint.toml".into(),
        AppError::NoSuchRun { .. } | AppError::NoReport { .. } => {
            "`waypoint runs` lists the caller's runs (`--caller` picks the caller)".into()
        }
        AppError::NoServer { server, known } => format!(
            "declare it in the catalog{}, e.g.\n    servers:\n      - name: {server}\n        command: [npx, -y, \"@modelcontextprotocol/server-filesystem\", \".\"]",
            if known.is_empty() {
                String::new()
            } else {
                format!(" (it has: {})", known.join(", "))
            }
        ),
        AppError::Config(_) => "fix the file, or name another with --config FILE".into(),
        AppError::NothingToTrain => {
            "give labelled requests: `waypoint train FILE.jsonl` or --train FILE.jsonl".into()
        }
        AppError::NothingToCalibrate => {
            "give held-out requests (`waypoint calibrate HELD_OUT.jsonl`) or --train files to cross-validate on".into()
        }
        AppError::Llm(waypoint_llm::LlmError::NoModel) => {
            "pass --model PROVIDER/MODEL (e.g. llamacpp/gemma3-270m)".into()
        }
        AppError::Llm(waypoint_llm::LlmError::UnknownProvider { .. }) => {
            "or pass the server's address with --llm-base-url URL".into()
        }
        _ => return None,
    })
}
