//! A command's argv filled from request text without handing it options, code or
//! paths outside the working directory (docs/run.md, Commands and request text).
//!
//! - A value that would start an argument with `-` is refused, unless a literal `--`
//!   earlier in the template ends option parsing: `git log {text}` with
//!   `--output=FILE` would otherwise write a file.
//! - A placeholder that chooses the program, names an option or stands inside an
//!   interpreter's code is refused (the catalog loader says so too, with file and line);
//!   one marked `shell_quoted: true` in a POSIX shell script is single-quoted first.
//! - An arg the schema calls a path (`path`, `file`, `dir`…, or `format: path`) is
//!   resolved inside the working directory and passed as that resolved path.

use std::path::Path;

use serde_json::{Map, Value};
use waypoint_catalog::Tool;
use waypoint_catalog::argv::{problems, scripts, sh_quote, shell_quoted};

use super::paths::confine;
use crate::adapters::{ToolError, fill_template};

/// Argument names that name a file or directory (`data/path_args.json`).
#[derive(Debug, serde::Deserialize)]
struct PathArgs {
    names: Vec<String>,
    suffixes: Vec<String>,
}

fn path_args() -> &'static PathArgs {
    static TABLE: std::sync::OnceLock<PathArgs> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        serde_json::from_str(include_str!("../../data/path_args.json"))
            .unwrap_or_else(|e| unreachable!("data/path_args.json is checked by a unit test: {e}"))
    })
}

/// Whether the tool's schema says `arg` names a file or directory.
pub(crate) fn is_path(tool: &Tool, arg: &str) -> bool {
    let table = path_args();
    let named = table.names.iter().any(|n| n == arg)
        || table.suffixes.iter().any(|s| arg.ends_with(s.as_str()));
    let format = tool
        .properties()
        .find(|(name, _)| *name == arg)
        .and_then(|(_, schema)| schema.get("format"))
        .and_then(Value::as_str)
        == Some("path");
    named || format
}

/// The argv to start, or why request text may not reach it.
pub(crate) fn fill(
    tool: &Tool,
    argv: &[String],
    args: &Map<String, Value>,
    workdir: &Path,
) -> Result<Vec<String>, ToolError> {
    let schema = tool.input_schema.as_ref();
    if let Some(problem) = problems(argv, schema).into_iter().next() {
        return Err(ToolError::Denied(format!(
            "`{}` cannot run: {problem} (docs/run.md, Commands and request text)",
            tool.name
        )));
    }
    let mut values = Map::new();
    for (name, value) in args {
        let text = crate::refs::text_of(value);
        let text = if is_path(tool, name) {
            confine(workdir, &text)?.to_string_lossy().into_owned()
        } else {
            text
        };
        values.insert(name.clone(), Value::String(text));
    }
    let quoted_scripts: Vec<usize> = scripts(argv)
        .into_iter()
        .filter(|s| s.posix)
        .map(|s| s.index)
        .collect();
    let mut options_end = false;
    let mut filled = Vec::with_capacity(argv.len());
    for (i, template) in argv.iter().enumerate() {
        let names = waypoint_catalog::argv::placeholders(template);
        if names.is_empty() {
            options_end |= template == "--";
            filled.push(fill_template(template, &values)?);
            continue;
        }
        let element = if quoted_scripts.contains(&i) {
            let mut quoted = values.clone();
            for (name, _) in &names {
                if shell_quoted(schema, name)
                    && let Some(Value::String(v)) = values.get(*name)
                {
                    quoted.insert((*name).to_string(), Value::String(sh_quote(v)));
                }
            }
            fill_template(template, &quoted)?
        } else {
            fill_template(template, &values)?
        };
        if !options_end && element.starts_with('-') && !template.starts_with('-') {
            let (name, _) = names[0];
            return Err(ToolError::Denied(format!(
                "the value of `{name}` starts with `-`, so `{}` would read it as an option; a request cannot pass options (docs/run.md, Commands and request text)",
                argv.first().map_or("", String::as_str)
            )));
        }
        filled.push(element);
    }
    Ok(filled)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_argument_table_parses() {
        let t: PathArgs = serde_json::from_str(include_str!("../../data/path_args.json")).unwrap();
        assert!(t.names.iter().any(|n| n == "path"));
        assert!(t.suffixes.iter().any(|s| s == "_dir"));
    }
}
