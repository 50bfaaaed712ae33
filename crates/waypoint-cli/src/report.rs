//! Renders errors and diagnostics for people on standard error.

use std::io::Write as _;

use anstyle::{AnsiColor, Style};
use waypoint_catalog::{CatalogError, Diagnostic, Severity};

const ERROR: Style = AnsiColor::Red.on_default().bold();
const WARNING: Style = AnsiColor::Yellow.on_default().bold();

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
    if let Some(CatalogError::Invalid { diagnostics }) = err.downcast_ref::<CatalogError>() {
        for d in diagnostics {
            diagnostic(d);
        }
    }
    let mut out = anstream::stderr();
    let _ = write!(out, "{ERROR}error{ERROR:#}: {err}");
    for cause in err.chain().skip(1) {
        let _ = write!(out, "\n  caused by: {cause}");
    }
    let _ = writeln!(out);
}
