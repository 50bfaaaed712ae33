//! From YAML sources to a validated [`Catalog`], reporting every problem in one pass.
//!
//! This module reads the files and runs the passes in order, and holds what every pass
//! reports through (the file being read, its fields, the source line of a problem):
//! - `read`: one file's sections, each entry with a diagnostic for every unknown key or
//!   bad value;
//! - `assemble`: the merged catalog, and the checks that need all of it.

use std::path::Path;

use crate::diagnostic::{CatalogError, Diagnostic, Severity};
use crate::limited;
use crate::model::Location;
use crate::yaml::{self, Limits, Node, Pos, Value};
use crate::{Catalog, Contents};

mod assemble;
mod read;

pub(crate) use assemble::Reporter;
use assemble::assemble;
pub(crate) use read::push_refs;
use read::read_file;

/// One catalog file's text and the name it is reported under.
#[derive(Debug, Clone)]
pub struct Source {
    pub name: String,
    pub text: String,
}

impl Source {
    /// One catalog file's bytes as [`read_paths`] reads a file: at most 16 MiB of UTF-8,
    /// else an error naming `name` (for text that arrives other than from a path, and
    /// for the fuzz targets, which feed the loader arbitrary bytes).
    pub fn from_bytes(name: &str, bytes: &[u8]) -> Result<Self, CatalogError> {
        let text =
            limited::read_stream(bytes, MAX_FILE_BYTES).map_err(|source| CatalogError::Io {
                path: name.to_string(),
                source,
            })?;
        Ok(Self {
            name: name.to_string(),
            text,
        })
    }
}

/// A loaded catalog and the warnings found on the way.
#[derive(Debug)]
pub struct Loaded {
    pub catalog: Catalog,
    pub warnings: Vec<Diagnostic>,
}

/// The most one catalog file may hold, enforced while reading (the YAML reader's
/// own `max_bytes` is the same 16 MiB, but only checks text already in memory).
const MAX_FILE_BYTES: u64 = limited::MAX_INPUT_BYTES;

/// Reads `--catalog` paths: a file, or every `*.yaml`/`*.yml` directly in a directory
/// (sorted, so that merge order and messages are stable).
pub fn read_paths(paths: &[impl AsRef<Path>]) -> Result<Vec<Source>, CatalogError> {
    let mut sources = Vec::new();
    for path in paths {
        let path = path.as_ref();
        let io = |source| CatalogError::Io {
            path: path.display().to_string(),
            source,
        };
        if path.is_dir() {
            let mut files: Vec<_> = std::fs::read_dir(path)
                .map_err(io)?
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
                .collect();
            // Plan documents live in a `plans/` folder beside the catalog files.
            let plans_dir = path.join("plans");
            if plans_dir.is_dir() {
                files.extend(
                    std::fs::read_dir(&plans_dir)
                        .map_err(io)?
                        .filter_map(Result::ok)
                        .map(|e| e.path())
                        .filter(|p| {
                            p.is_file() && p.extension().is_some_and(|e| e == "yaml" || e == "yml")
                        }),
                );
            }
            files.sort();
            if files.is_empty() {
                return Err(CatalogError::Empty {
                    path: path.display().to_string(),
                });
            }
            for file in files {
                let text = limited::read_file(&file, MAX_FILE_BYTES).map_err(|source| {
                    CatalogError::Io {
                        path: file.display().to_string(),
                        source,
                    }
                })?;
                sources.push(Source {
                    name: file.display().to_string(),
                    text,
                });
            }
        } else {
            let text = limited::read_file(path, MAX_FILE_BYTES).map_err(io)?;
            sources.push(Source {
                name: path.display().to_string(),
                text,
            });
        }
    }
    Ok(sources)
}

/// Parses, merges and validates the sources.
pub fn load(sources: &[Source]) -> Result<Loaded, CatalogError> {
    let mut diags = Vec::new();
    let mut parts = Parts::default();
    for source in sources {
        let mut ctx = Ctx {
            file: &source.name,
            text: &source.text,
            diags: &mut diags,
        };
        match yaml::parse(&source.text, Limits::default()) {
            Ok(root) => read_file(&mut ctx, &root, &mut parts),
            Err(e) => {
                let related = match e.kind {
                    yaml::YamlErrorKind::DuplicateKey { first } => Some(ctx.loc(first)),
                    yaml::YamlErrorKind::Syntax | yaml::YamlErrorKind::Limit => None,
                };
                ctx.error(e.pos, format!("invalid YAML: {}", e.message), None);
                if let Some(d) = ctx.diags.last_mut() {
                    d.related = related;
                }
            }
        }
    }
    let catalog = assemble(parts, &mut diags, sources);
    diags.sort_by(|a, b| (&a.at, a.severity).cmp(&(&b.at, b.severity)));
    if diags.iter().any(Diagnostic::is_error) {
        return Err(CatalogError::Invalid { diagnostics: diags });
    }
    Ok(Loaded {
        catalog,
        warnings: diags,
    })
}

#[derive(Default)]
pub(crate) struct Parts {
    pub(crate) contents: Contents,
    pub(crate) plans: Vec<crate::plans::PlanDoc>,
    /// Steps of documents whose id is bad: left out of the catalog, still checked, so
    /// fixing the id does not reveal a second round of errors.
    pub(crate) orphan_steps: Vec<crate::plans::DocStepAt>,
    /// Positions of reference lists, for messages about what they name.
    refs: Vec<Reference>,
}

/// A name used somewhere that must resolve to a catalog entry.
struct Reference {
    name: String,
    at: Location,
    what: &'static str,
    allow_pipeline: bool,
}

pub(crate) struct Ctx<'a> {
    file: &'a str,
    text: &'a str,
    diags: &'a mut Vec<Diagnostic>,
}

impl Ctx<'_> {
    pub(crate) fn loc(&self, pos: Pos) -> Location {
        Location {
            file: self.file.to_string(),
            line: pos.line,
            col: pos.col,
        }
    }

    fn push(&mut self, severity: Severity, pos: Pos, message: String, hint: Option<String>) {
        let source_line = line_of(self.text, pos.line);
        self.diags.push(Diagnostic {
            severity,
            at: self.loc(pos),
            message,
            hint,
            related: None,
            source_line,
        });
    }

    pub(crate) fn error(&mut self, pos: Pos, message: String, hint: Option<String>) {
        self.push(Severity::Error, pos, message, hint);
    }

    fn warn(&mut self, pos: Pos, message: String, hint: Option<String>) {
        self.push(Severity::Warning, pos, message, hint);
    }

    /// The entries of a mapping, reporting keys outside `allowed`.
    pub(crate) fn fields<'n>(
        &mut self,
        node: &'n Node,
        what: &str,
        allowed: &[&str],
    ) -> Option<Fields<'n>> {
        let Value::Map(entries) = &node.value else {
            self.error(
                node.pos,
                format!("{what} must be a mapping, found {}", node.value.kind()),
                None,
            );
            return None;
        };
        for (key, _) in entries {
            let name = yaml::key_text(key);
            if !allowed.contains(&name.as_str()) {
                let hint = match closest(&name, allowed) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => format!("allowed keys: {}", allowed.join(", ")),
                };
                self.error(
                    key.pos,
                    format!("unknown key `{name}` in {what}"),
                    Some(hint),
                );
            }
        }
        Some(Fields {
            entries,
            pos: node.pos,
        })
    }

    pub(crate) fn string(&mut self, node: &Node, field: &str) -> Option<String> {
        match &node.value {
            Value::Str(s) => Some(s.clone()),
            Value::Int(_) | Value::Float(_) | Value::Bool(_) => Some(yaml::key_text(node)),
            other => {
                self.error(
                    node.pos,
                    format!("`{field}` must be a string, found {}", other.kind()),
                    None,
                );
                None
            }
        }
    }

    /// A list of strings; a single string is taken as a list of one.
    fn strings(&mut self, node: &Node, field: &str) -> Vec<(String, Pos)> {
        match &node.value {
            Value::Null => Vec::new(),
            Value::Str(s) => vec![(s.clone(), node.pos)],
            Value::Seq(items) => items
                .iter()
                .filter_map(|item| self.string(item, field).map(|s| (s, item.pos)))
                .collect(),
            other => {
                self.error(
                    node.pos,
                    format!(
                        "`{field}` must be a list of strings, found {}",
                        other.kind()
                    ),
                    None,
                );
                Vec::new()
            }
        }
    }
}

pub(crate) struct Fields<'n> {
    entries: &'n [(Node, Node)],
    pos: Pos,
}

impl<'n> Fields<'n> {
    pub(crate) fn get(&self, key: &str) -> Option<&'n Node> {
        self.entries
            .iter()
            .find(|(k, _)| matches!(&k.value, Value::Str(s) if s == key))
            .map(|(_, v)| v)
    }

    pub(crate) fn required(&self, ctx: &mut Ctx<'_>, key: &str, what: &str) -> Option<String> {
        if let Some(node) = self.get(key) {
            ctx.string(node, key)
        } else {
            ctx.error(
                self.pos,
                format!("{what} has no `{key}`"),
                Some(format!("add `{key}: …` to this entry")),
            );
            None
        }
    }

    pub(crate) fn text(&self, ctx: &mut Ctx<'_>, key: &str) -> String {
        self.get(key)
            .and_then(|n| ctx.string(n, key))
            .unwrap_or_default()
    }

    pub(crate) fn list(&self, ctx: &mut Ctx<'_>, key: &str) -> Vec<String> {
        self.get(key)
            .map(|n| ctx.strings(n, key).into_iter().map(|(s, _)| s).collect())
            .unwrap_or_default()
    }
}

fn line_of(text: &str, line: usize) -> Option<String> {
    text.lines()
        .nth(line.checked_sub(1)?)
        .map(|l| l.chars().take(200).collect())
}

/// The allowed word nearest to a misspelling, if it is near enough to suggest: the one
/// did-you-mean every strict reader of Waypoint's files uses (catalogs, configuration).
pub fn closest<'a>(word: &str, pool: &[&'a str]) -> Option<&'a str> {
    pool.iter()
        .map(|c| (edit_distance(word, c), *c))
        .filter(|(d, c)| *d <= 2.max(c.len() / 4) && *d < c.len())
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::read::TOOL_KEYS;
    use super::*;

    #[test]
    fn suggests_near_misses_only() {
        assert_eq!(closest("produce", TOOL_KEYS), Some("produces"));
        assert_eq!(closest("xyzzy", TOOL_KEYS), None);
    }
}
