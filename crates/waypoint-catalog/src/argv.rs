//! Command templates that would run request text as code.
//!
//! A `run: {command: …}` element is one argument, so a filled value cannot split into
//! more — unless the program is an interpreter told to run that element as a script
//! (`sh -c`, `python -c`, `cmd /c`, an awk program). There the value is code. Such a
//! template is refused when the catalog loads, unless every placeholder in the script
//! is marked `shell_quoted: true` in the input schema, the interpreter is a POSIX shell
//! (whose single quotes we can write) and the placeholder stands outside quotes.

use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::Value;

/// Which programs run an argv element as code, and how they are told to; the table is
/// data (`data/interpreters.json`) so a new interpreter is a line, not a code change.
#[derive(Debug, Deserialize)]
struct Interpreters {
    posix_shells: Vec<String>,
    /// Programs that only start the next argv element as the real program.
    launchers: Vec<String>,
    /// Programs whose first operand is their program text.
    awks: Vec<String>,
    /// Interpreters that take code after one of `flags`.
    script_flags: Vec<ScriptFlags>,
}

#[derive(Debug, Deserialize)]
struct ScriptFlags {
    #[serde(default)]
    names: Vec<String>,
    #[serde(default)]
    prefixes: Vec<String>,
    flags: Vec<String>,
}

fn interpreters() -> &'static Interpreters {
    static TABLE: OnceLock<Interpreters> = OnceLock::new();
    TABLE.get_or_init(|| {
        serde_json::from_str(include_str!("../data/interpreters.json")).unwrap_or_else(|e| {
            unreachable!("data/interpreters.json is checked by a unit test: {e}")
        })
    })
}

/// Where an interpreter reads code from a template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Script {
    /// The argv element that is code.
    pub index: usize,
    /// Whether the interpreter is a POSIX shell, the only kind `shell_quoted` can quote for.
    pub posix: bool,
}

/// The element of `argv` an interpreter runs as code, if any.
pub fn script(argv: &[String]) -> Option<Script> {
    let table = interpreters();
    let mut at = 0;
    while let Some(word) = argv.get(at) {
        let name = program_name(word);
        if table.launchers.contains(&name) || word.contains('=') || word.starts_with('-') {
            at += 1;
            continue;
        }
        break;
    }
    let name = program_name(argv.get(at)?);
    let rest = argv.get(at + 1..)?;
    let posix = table.posix_shells.contains(&name);
    if posix {
        // `sh -c SCRIPT`, `bash -ec SCRIPT`: the first operand after a flag holding `c`.
        let flag = rest
            .iter()
            .position(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('c'))?;
        let script = rest[flag + 1..].iter().position(|a| !a.starts_with('-'))?;
        return Some(Script {
            index: at + 1 + flag + 1 + script,
            posix: true,
        });
    }
    if table.awks.contains(&name) {
        let program = rest.iter().position(|a| !a.starts_with('-'))?;
        return Some(Script {
            index: at + 1 + program,
            posix: false,
        });
    }
    let flags = &table
        .script_flags
        .iter()
        .find(|f| f.names.contains(&name) || f.prefixes.iter().any(|p| name.starts_with(p)))?
        .flags;
    let flag = rest
        .iter()
        .position(|a| flags.contains(&a.to_ascii_lowercase()))?;
    (flag + 1 < rest.len()).then_some(Script {
        index: at + 1 + flag + 1,
        posix: false,
    })
}

fn program_name(word: &str) -> String {
    let base = word.rsplit(['/', '\\']).next().unwrap_or(word);
    base.strip_suffix(".exe")
        .unwrap_or(base)
        .to_ascii_lowercase()
}

/// The names of the `{placeholders}` in a template, with whether each stands outside
/// shell quotes; `{{` and `}}` are literal braces.
pub fn placeholders(template: &str) -> Vec<(&str, bool)> {
    let mut out = Vec::new();
    let (mut single, mut double, mut escaped) = (false, false, false);
    let bytes = template.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if escaped {
            escaped = false;
        } else if b == b'\\' && !single {
            escaped = true;
        } else if b == b'\'' && !double {
            single = !single;
        } else if b == b'"' && !single {
            double = !double;
        } else if b == b'{' {
            if bytes.get(i + 1) == Some(&b'{') {
                i += 2;
                continue;
            }
            if let Some(end) = template[i..].find('}') {
                out.push((&template[i + 1..i + end], !single && !double));
                i += end + 1;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// Whether the input schema marks `arg` `shell_quoted: true`.
pub fn shell_quoted(schema: Option<&Value>, arg: &str) -> bool {
    schema
        .and_then(|s| s.get("properties"))
        .and_then(|p| p.get(arg))
        .and_then(|p| p.get("shell_quoted"))
        .and_then(Value::as_bool)
        == Some(true)
}

/// What is wrong with a command template that would run args as code; empty when
/// nothing is.
pub fn problems(argv: &[String], schema: Option<&Value>) -> Vec<String> {
    let Some(script) = script(argv) else {
        return Vec::new();
    };
    let Some(template) = argv.get(script.index) else {
        return Vec::new();
    };
    let program = argv.first().map_or("", String::as_str);
    placeholders(template)
        .into_iter()
        .filter_map(|(name, outside_quotes)| {
            if !script.posix {
                Some(format!(
                    "`{{{name}}}` is inside the code `{program}` runs, so a request could run its own code; pass it as a separate argument (`sys.argv`, `ARGV`, `$1`) instead"
                ))
            } else if !shell_quoted(schema, name) {
                Some(format!(
                    "`{{{name}}}` is inside the script `{program}` runs, so a request could run its own commands; pass it as a separate argument (`$1`) or mark the property `shell_quoted: true` in input_schema"
                ))
            } else if !outside_quotes {
                Some(format!(
                    "`{{{name}}}` is shell_quoted but stands inside quotes in the script, where its own quotes would end them; remove the quotes around it"
                ))
            } else {
                None
            }
        })
        .collect()
}

/// `value` as one POSIX shell word: single-quoted, with each `'` written `'\''`.
pub fn sh_quote(value: &str) -> String {
    format!("'{}'", value.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_interpreter_table_parses_and_names_the_common_ones() {
        let t: Interpreters =
            serde_json::from_str(include_str!("../data/interpreters.json")).unwrap();
        assert!(t.posix_shells.iter().any(|s| s == "sh"));
        assert!(t.launchers.iter().any(|s| s == "env"));
        assert!(
            t.script_flags
                .iter()
                .any(|f| f.prefixes.iter().any(|p| p == "python"))
        );
    }

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_string()).collect()
    }

    #[test]
    fn scripts_with_placeholders_are_found() {
        let quoted = json!({"properties": {"text": {"type": "string", "shell_quoted": true}}});
        assert_eq!(problems(&argv(&["sh", "-c", "echo {text}"]), None).len(), 1);
        assert_eq!(
            problems(&argv(&["/bin/bash", "-ec", "echo {text}"]), None).len(),
            1
        );
        assert_eq!(
            problems(&argv(&["env", "A=1", "sh", "-c", "x {t}"]), None).len(),
            1
        );
        assert_eq!(
            problems(&argv(&["python3", "-c", "print({t})"]), Some(&quoted)).len(),
            1
        );
        assert_eq!(problems(&argv(&["cmd", "/C", "dir {t}"]), None).len(), 1);
        assert_eq!(problems(&argv(&["awk", "{{print {t}}}"]), None).len(), 1);
        assert!(problems(&argv(&["sh", "-c", "echo {text}"]), Some(&quoted)).is_empty());
        assert_eq!(
            problems(&argv(&["sh", "-c", "echo '{text}'"]), Some(&quoted)).len(),
            1
        );
        assert!(problems(&argv(&["sh", "-c", "echo \"$1\"", "sh", "{text}"]), None).is_empty());
        assert!(problems(&argv(&["git", "log", "{text}"]), None).is_empty());
    }

    #[test]
    fn quoting_survives_the_shell() {
        assert_eq!(sh_quote("a'b"), r"'a'\''b'");
    }
}
