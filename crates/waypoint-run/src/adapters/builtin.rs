//! Built-in tools: files under the working directory, search, HTTP GET, memories kept
//! in the store, and asking the user.
//!
//! File tools resolve every path against the working directory and refuse one that
//! leaves it (`..`, absolute paths elsewhere, symlinks pointing out).

use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use waypoint_store::{Memory, MemoryStore};

use super::{Asking, Call, Output, ToolError, Toolbox, check_size, texts};
use crate::policy::paths::{confine, read_regular};

/// Most files a search looks at, and most matches it reports.
const MAX_FILES: usize = 5_000;
const MAX_MATCHES: usize = 200;
/// Directories a search never enters.
const SKIP_DIRS: [&str; 5] = [".git", "target", "node_modules", ".venv", "__pycache__"];

#[expect(
    clippy::too_many_lines,
    reason = "the table of built-ins: one arm each"
)]
pub(super) async fn call<M: MemoryStore + 'static>(
    tb: &Toolbox<M>,
    name: &str,
    call: &Call<'_>,
    timeout: Duration,
) -> Result<Output, ToolError> {
    let args = texts(&call.args);
    let arg = |names: &[&str]| names.iter().find_map(|n| args.get(n).cloned());
    match name {
        "read_file" => {
            let path = confine(&tb.workdir, &arg(&["path", "file"]).unwrap_or_default())?;
            let limit = tb.max_output_bytes;
            let text = blocking(move || {
                let meta = std::fs::metadata(&path).map_err(|e| io_err(&path, &e))?;
                check_size(usize::try_from(meta.len()).unwrap_or(usize::MAX), limit)?;
                read_regular(&path, u64::try_from(limit).unwrap_or(u64::MAX))
                    .map_err(|e| io_err(&path, &e))
            })
            .await?;
            Ok(Output::of(json!({ "content": text })))
        }
        "list_dir" => {
            let dir = confine(
                &tb.workdir,
                &arg(&["path", "root", "dir"]).unwrap_or_default(),
            )?;
            let entries = blocking(move || list_dir(&dir)).await?;
            Ok(Output::of(json!({ "entries": entries })))
        }
        "grep" | "find_symbol" => {
            let pattern = if name == "grep" {
                arg(&["pattern", "query"]).unwrap_or_default()
            } else {
                // A symbol is found where it is defined or used as a whole word.
                format!(
                    r"\b{}\b",
                    regex::escape(&arg(&["name", "symbol"]).unwrap_or_default())
                )
            };
            if pattern.is_empty() || pattern == r"\b\b" {
                return Err(ToolError::Failed("nothing to search for".into()));
            }
            let re = regex::RegexBuilder::new(&pattern)
                .size_limit(1 << 20)
                .build()
                .map_err(|e| ToolError::Failed(format!("bad pattern `{pattern}`: {e}")))?;
            let root = confine(&tb.workdir, &arg(&["path"]).unwrap_or_default())?;
            let base = tb.workdir.clone();
            let matches = blocking(move || Ok(search(&base, &root, &re))).await?;
            Ok(Output::of(json!({ "matches": matches })))
        }
        "http_fetch" => {
            let url = arg(&["url"]).unwrap_or_default();
            super::http::get(tb, &url, call, timeout).await
        }
        "memory_store" => {
            let value = arg(&["value", "text"]).unwrap_or_default();
            let key = arg(&["key"]).unwrap_or_else(|| derived_key(&value));
            let memory = Memory {
                key: key.clone(),
                value,
                at_unix: waypoint_store::now_unix(),
            };
            tb.memory
                .remember(call.caller, &memory)
                .await
                .map_err(|e| ToolError::Failed(e.to_string()))?;
            Ok(Output::of(json!({ "key": key, "stored": true })))
        }
        "memory_recall" => {
            let query = arg(&["query", "key"]).unwrap_or_default();
            let found = tb
                .memory
                .recall(call.caller, &query, 20)
                .await
                .map_err(|e| ToolError::Failed(e.to_string()))?;
            let text = found
                .iter()
                .map(|m| m.value.as_str())
                .collect::<Vec<_>>()
                .join("\n");
            Ok(Output::of(json!({ "memories": found, "text": text })))
        }
        "memory_forget" => {
            let key = arg(&["key"])
                .ok_or_else(|| ToolError::Failed("memory_forget needs a `key`".into()))?;
            let gone = tb
                .memory
                .forget_memory(call.caller, &key)
                .await
                .map_err(|e| ToolError::Failed(e.to_string()))?;
            Ok(Output::of(json!({ "key": key, "forgotten": gone })))
        }
        "ask_user" => {
            let question = arg(&["question", "prompt"]).unwrap_or_else(|| "?".into());
            match tb.asking {
                Asking::Nobody => Err(ToolError::NeedsInput(question)),
                Asking::Terminal => {
                    let answer = blocking(move || ask_on_terminal(&question)).await?;
                    Ok(Output::of(json!({ "answer": answer })))
                }
            }
        }
        other => Err(ToolError::Unconfigured(format!(
            "no built-in tool is called `{other}`; built-ins are {}",
            waypoint_catalog::BUILTINS.join(", ")
        ))),
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ToolError::Failed(format!("worker stopped: {e}")))?
}

fn io_err(path: &Path, e: &std::io::Error) -> ToolError {
    ToolError::Failed(format!("{}: {e}", path.display()))
}

fn list_dir(dir: &Path) -> Result<Vec<Value>, ToolError> {
    let mut entries: Vec<Value> = std::fs::read_dir(dir)
        .map_err(|e| io_err(dir, &e))?
        .filter_map(Result::ok)
        .take(MAX_FILES)
        .map(|e| {
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            json!({ "name": e.file_name().to_string_lossy(), "dir": is_dir })
        })
        .collect();
    entries.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    Ok(entries)
}

fn search(base: &Path, root: &Path, re: &regex::Regex) -> Vec<Value> {
    let mut matches = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    let mut files = 0;
    while let Some(p) = stack.pop() {
        if matches.len() >= MAX_MATCHES || files >= MAX_FILES {
            break;
        }
        if p.is_dir() {
            let Ok(rd) = std::fs::read_dir(&p) else {
                continue;
            };
            let mut children: Vec<PathBuf> = rd
                .filter_map(Result::ok)
                .filter(|e| !e.file_type().is_ok_and(|t| t.is_symlink()))
                .filter(|e| !SKIP_DIRS.contains(&e.file_name().to_string_lossy().as_ref()))
                .map(|e| e.path())
                .collect();
            children.sort();
            stack.extend(children.into_iter().rev());
            continue;
        }
        files += 1;
        let Ok(text) = read_regular(&p, waypoint_catalog::limited::MAX_INPUT_BYTES) else {
            continue;
        };
        let rel = p.strip_prefix(base).unwrap_or(&p).display().to_string();
        for (i, line) in text.lines().enumerate() {
            if re.is_match(line) {
                matches.push(json!({ "path": rel, "line": i + 1, "text": line.trim() }));
                if matches.len() >= MAX_MATCHES {
                    break;
                }
            }
        }
    }
    matches
}

fn ask_on_terminal(question: &str) -> Result<String, ToolError> {
    if !std::io::stdin().is_terminal() {
        return Err(ToolError::NeedsInput(question.to_string()));
    }
    let mut err = std::io::stderr();
    let _ = write!(err, "{question}\n> ");
    let _ = err.flush();
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| ToolError::Failed(format!("reading the answer: {e}")))?;
    Ok(line.trim_end().to_string())
}

fn derived_key(value: &str) -> String {
    let words: Vec<&str> = value.split_whitespace().take(4).collect();
    let key = words.join("-").to_lowercase();
    if key.is_empty() {
        format!("note-{}", waypoint_store::now_unix())
    } else {
        key.chars().take(48).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_reports_path_line_and_text() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        std::fs::create_dir(base.join("src")).unwrap();
        std::fs::write(base.join("src/lib.rs"), "fn a() {}\nstruct Router;\n").unwrap();
        let re = regex::Regex::new(r"\bRouter\b").unwrap();
        let m = search(&base, &base, &re);
        assert_eq!(m.len(), 1);
        assert_eq!(m[0]["path"], "src/lib.rs");
        assert_eq!(m[0]["line"], 2);
    }
}
