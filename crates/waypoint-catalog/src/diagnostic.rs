//! Problems found while loading a catalog, each with a place and a next step.

use std::fmt;

use crate::model::Location;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// One problem in a catalog. Loading collects every one it finds before giving up.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Diagnostic {
    pub severity: Severity,
    pub at: Location,
    pub message: String,
    /// What to do about it.
    pub hint: Option<String>,
    /// The other place involved (the first definition of a duplicate, say).
    pub related: Option<Location>,
    /// The source line at `at`, for rendering a snippet.
    #[serde(skip)]
    pub source_line: Option<String>,
}

impl Diagnostic {
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// A multi-line rendering with the offending line and a caret under the column.
    pub fn render(&self) -> String {
        let mut out = self.to_string();
        if let Some(line) = &self.source_line {
            let number = self.at.line.to_string();
            let pad = " ".repeat(number.len());
            let caret_pad: String = line
                .chars()
                .take(self.at.col.saturating_sub(1))
                .map(|c| if c == '\t' { '\t' } else { ' ' })
                .collect();
            // Underline the word at the column (a key, a name), at least one caret.
            let width = line
                .chars()
                .skip(self.at.col.saturating_sub(1))
                .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '-'))
                .count()
                .max(1);
            let carets = "^".repeat(width);
            out = format!(
                "{}: {}\n{pad}--> {}\n{pad} |\n{number} | {line}\n{pad} | {caret_pad}{carets}",
                severity_word(self.severity),
                self.message,
                self.at
            );
            if let Some(related) = &self.related {
                out.push_str(&format!("\n{pad} = note: see also {related}"));
            }
            if let Some(hint) = &self.hint {
                out.push_str(&format!("\n{pad} = help: {hint}"));
            }
        }
        out
    }
}

fn severity_word(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}: {}",
            self.at,
            severity_word(self.severity),
            self.message
        )?;
        if let Some(related) = &self.related {
            write!(f, " (see {related})")?;
        }
        if let Some(hint) = &self.hint {
            write!(f, "; {hint}")?;
        }
        Ok(())
    }
}

/// Why a catalog could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// A path given with `--catalog` could not be read.
    #[error("cannot read catalog `{path}`: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// A catalog directory holds no `*.yaml` or `*.yml` file.
    #[error("catalog directory `{path}` holds no `*.yaml` or `*.yml` file")]
    Empty { path: String },
    /// The files were read but hold errors; every problem found is listed, warnings too.
    #[error("{} in the catalog", count_errors(.diagnostics))]
    Invalid { diagnostics: Vec<Diagnostic> },
}

fn count_errors(d: &[Diagnostic]) -> String {
    let n = d.iter().filter(|d| d.is_error()).count();
    if n == 1 {
        "1 error".into()
    } else {
        format!("{n} errors")
    }
}
