//! Command templates that would let request text choose what runs.
//!
//! A `run: {command: …}` element is one argument, so a filled value cannot split into
//! more — but it can still be the program itself (`[{tool}, …]`), the program a
//! launcher starts (`env`, `xargs`, `timeout`, `find -exec`), an option's name
//! (`-{flags}`), or code: the script of an interpreter (`sh -c`, `python -c`,
//! `perl -ne`, `cmd /c`) or a program text that can run commands (awk, sed's `e`, a
//! script file). Such a template is refused when the catalog loads, unless the code is a
//! POSIX shell's script, every placeholder in it is marked `shell_quoted: true` in the
//! input schema and stands outside quotes, and no launcher rewrites the script's words.

use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::Value;

/// Which programs start others or run an argv element as code, and how they are told
/// to; the table is data (`data/interpreters.json`) so a new one is a line, not a code
/// change.
#[derive(Debug, Deserialize)]
struct Programs {
    posix_shells: Vec<String>,
    /// Options of a POSIX shell that take the next word (`-o pipefail`).
    posix_value_flags: Vec<String>,
    /// Programs that start the next program of the argv as the real one.
    launchers: Vec<Launcher>,
    /// Programs that run a command written out after one of their flags (`find -exec`).
    exec_flags: Vec<ExecFlags>,
    /// Programs that run code given after a flag or as an operand.
    interpreters: Vec<Interpreter>,
}

/// Which programs an entry is about: exact names, or name prefixes (`python3.12`).
#[derive(Debug, Deserialize)]
struct Names {
    #[serde(default)]
    names: Vec<String>,
    #[serde(default)]
    prefixes: Vec<String>,
}

impl Names {
    fn matches(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name) || self.prefixes.iter().any(|p| name.starts_with(p))
    }
}

#[derive(Debug, Deserialize)]
struct Launcher {
    #[serde(flatten)]
    names: Names,
    /// Options that take the next word as their value.
    #[serde(default)]
    value_flags: Vec<String>,
    /// Operands before the program (`timeout 5 PROGRAM`).
    #[serde(default)]
    operands: usize,
    /// Whether it rewrites the words of the command it starts (`xargs -I`), so no
    /// quoting of ours survives.
    #[serde(default)]
    rewrites: bool,
    /// Whether it takes `NAME=value` words before the program (`env`).
    #[serde(default)]
    assignments: bool,
}

#[derive(Debug, Deserialize)]
struct ExecFlags {
    #[serde(flatten)]
    names: Names,
    flags: Vec<String>,
    /// Words that end the command (`;`, `+`).
    ends: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct Interpreter {
    #[serde(flatten)]
    names: Names,
    /// Flags followed by code.
    #[serde(default)]
    flags: Vec<String>,
    #[serde(default)]
    value_flags: Vec<String>,
    /// Options followed by two values (`jq --arg NAME VALUE`).
    #[serde(default)]
    pair_flags: Vec<String>,
    /// The operand that is code when no flag gave code (a script file, awk's program).
    #[serde(default)]
    operand: Option<usize>,
    /// The first of the operands that are always code (`watch`, `ssh HOST COMMAND`).
    #[serde(default)]
    operands_from: Option<usize>,
}

fn programs() -> &'static Programs {
    static TABLE: OnceLock<Programs> = OnceLock::new();
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
    /// The argv element naming the program that runs it.
    pub program: usize,
    /// Whether the interpreter is a POSIX shell given the element as its `-c` script and
    /// nothing rewrites it on the way: the only code `shell_quoted` can quote for.
    pub posix: bool,
}

/// What a template runs: the words that choose the program (each program of the argv,
/// and the launchers, options and operands before it) and the words that are code.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Analysis {
    /// Indices of words that choose what runs.
    pub chooses: Vec<usize>,
    /// Those of them that are `NAME=value` for a launcher that takes assignments
    /// (`env`): only the name chooses.
    pub assignments: Vec<usize>,
    pub scripts: Vec<Script>,
}

/// The programs `argv` starts and the code it hands them.
pub fn analyse(argv: &[String]) -> Analysis {
    let mut out = Analysis::default();
    walk(argv, 0, argv.len(), true, &mut out);
    out.chooses.sort_unstable();
    out.chooses.dedup();
    out.scripts.sort_unstable_by_key(|s| s.index);
    out.scripts.dedup_by_key(|s| s.index);
    out
}

/// The elements of `argv` an interpreter runs as code.
pub fn scripts(argv: &[String]) -> Vec<Script> {
    analyse(argv).scripts
}

/// Reads the command in `argv[start..end]`: launchers, then the program, then what the
/// program runs as code or as a further command.
fn walk(argv: &[String], start: usize, end: usize, quotable: bool, out: &mut Analysis) {
    let table = programs();
    let mut at = start;
    let mut quotable = quotable;
    while at < end {
        let name = program_name(&argv[at]);
        out.chooses.push(at);
        let Some(launcher) = table.launchers.iter().find(|l| l.names.matches(&name)) else {
            break;
        };
        quotable &= !launcher.rewrites;
        at = launched(argv, at + 1, end, launcher, out);
    }
    if at >= end {
        return;
    }
    let name = program_name(&argv[at]);
    if table.posix_shells.contains(&name) {
        shell(argv, at, end, quotable, &table.posix_value_flags, out);
    } else if let Some(i) = table.interpreters.iter().find(|i| i.names.matches(&name)) {
        interpreter(argv, at, end, i, out);
    } else if let Some(e) = table.exec_flags.iter().find(|e| e.names.matches(&name)) {
        let mut i = at + 1;
        while i < end {
            if e.flags.contains(&argv[i]) {
                let stop = (i + 1..end)
                    .find(|&j| e.ends.contains(&argv[j]))
                    .unwrap_or(end);
                // `find` writes file names into the command's words, quoted or not.
                walk(argv, i + 1, stop, false, out);
                i = stop;
            }
            i += 1;
        }
    }
}

/// Skips a launcher's options, values and operands from `at`, marking them as words
/// that choose what runs; returns where its program stands.
fn launched(
    argv: &[String],
    mut at: usize,
    end: usize,
    launcher: &Launcher,
    out: &mut Analysis,
) -> usize {
    let mut operands = launcher.operands;
    while at < end {
        let word = &argv[at];
        if word == "--" {
            out.chooses.push(at);
            return at + 1;
        }
        if word.starts_with('-') && word.len() > 1 {
            out.chooses.push(at);
            if launcher.value_flags.contains(word) && at + 1 < end {
                out.chooses.push(at + 1);
                at += 1;
            }
        } else if launcher.assignments && word.contains('=') && !word.starts_with('=') {
            // `NAME=value` for `env`: the name chooses, the value is data (see `problems`).
            out.chooses.push(at);
            out.assignments.push(at);
        } else if operands > 0 {
            operands -= 1;
            out.chooses.push(at);
        } else {
            return at;
        }
        at += 1;
    }
    at
}

/// `sh -c SCRIPT [NAME ARGS…]`, `bash -ec SCRIPT`, or `sh SCRIPT_FILE`.
fn shell(
    argv: &[String],
    program: usize,
    end: usize,
    quotable: bool,
    value_flags: &[String],
    out: &mut Analysis,
) {
    let mut i = program + 1;
    let mut command = false;
    while i < end {
        let word = &argv[i];
        if value_flags.contains(word) {
            i += 2;
            continue;
        }
        if word.starts_with('-') && !word.starts_with("--") && word.contains('c') {
            command = true;
        } else if !word.starts_with(['-', '+']) {
            // The first operand: the `-c` script, or else a script file.
            out.scripts.push(Script {
                index: i,
                program,
                posix: command && quotable,
            });
            return;
        }
        i += 1;
    }
}

/// Code after an interpreter's flags, or as its operand.
fn interpreter(
    argv: &[String],
    program: usize,
    end: usize,
    table: &Interpreter,
    out: &mut Analysis,
) {
    let code = |out: &mut Analysis, index: usize| {
        if index < end {
            out.scripts.push(Script {
                index,
                program,
                posix: false,
            });
        }
    };
    let mut flagged = false;
    let mut operand = 0;
    let mut i = program + 1;
    while i < end {
        let word = argv[i].as_str();
        if table.value_flags.iter().any(|f| f == word) {
            i += 2;
            continue;
        }
        if table.pair_flags.iter().any(|f| f == word) {
            i += 3;
            continue;
        }
        match code_flag(word, &table.flags) {
            Some(Attached::Next) => {
                flagged = true;
                code(out, i + 1);
                i += 2;
                continue;
            }
            Some(Attached::Here) => {
                flagged = true;
                code(out, i);
                code(out, i + 1);
            }
            None if word.starts_with('-') && word.len() > 1 => {}
            None => {
                let always = table.operands_from.is_some_and(|from| operand >= from);
                if always || (!flagged && table.operand == Some(operand)) {
                    code(out, i);
                }
                operand += 1;
            }
        }
        i += 1;
    }
}

/// Where the code of a flag is: in the next word, or in this one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Attached {
    Next,
    Here,
}

/// Whether `word` gives code through one of `flags`: the flag itself (compared without
/// case, as `pwsh -Command`), `--flag=CODE`, or a single-letter flag inside a bundle of
/// letters (`perl -ne`, `python -Ic`, `python -cCODE`).
fn code_flag(word: &str, flags: &[String]) -> Option<Attached> {
    let lower = word.to_ascii_lowercase();
    if flags.iter().any(|f| f.to_ascii_lowercase() == lower) {
        return Some(Attached::Next);
    }
    if flags.iter().any(|f| {
        f.starts_with("--") && word.starts_with(f.as_str()) && word[f.len()..].starts_with('=')
    }) {
        return Some(Attached::Here);
    }
    let letters = word.strip_prefix('-').filter(|w| !w.starts_with('-'))?;
    let singles: Vec<char> = flags
        .iter()
        .filter_map(|f| {
            let mut chars = f.strip_prefix('-')?.chars();
            let c = chars.next()?;
            chars.next().is_none().then_some(c.to_ascii_lowercase())
        })
        .collect();
    let bundle: Vec<char> = letters
        .chars()
        .take_while(char::is_ascii_alphanumeric)
        .collect();
    let at = bundle
        .iter()
        .position(|c| singles.contains(&c.to_ascii_lowercase()))?;
    Some(if at + 1 == letters.chars().count() {
        Attached::Next
    } else {
        Attached::Here
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

/// What is wrong with a command template that would let args choose the program, name
/// an option or run as code; empty when nothing is.
pub fn problems(argv: &[String], schema: Option<&Value>) -> Vec<String> {
    let analysis = analyse(argv);
    let mut out = Vec::new();
    for &i in &analysis.chooses {
        let word = &argv[i];
        // `NAME=value` after `env`: the value is data, the name is not.
        let chooser = if analysis.assignments.contains(&i) {
            word.split_once('=').map_or(word.as_str(), |(name, _)| name)
        } else {
            word.as_str()
        };
        for (name, _) in placeholders(chooser) {
            out.push(format!(
                "`{{{name}}}` is in `{word}`, which chooses the program that runs, so a request could run any program; name the program in the catalog and pass the value as one of its arguments"
            ));
        }
    }
    for (i, word) in argv.iter().enumerate() {
        let bare = word.trim_start_matches('-');
        let names_option =
            bare.len() < word.len() && bare.starts_with('{') && !bare.starts_with("{{");
        if names_option && !analysis.chooses.contains(&i) {
            for (name, _) in placeholders(word).into_iter().take(1) {
                out.push(format!(
                    "`{{{name}}}` stands where `{word}` names its option, so a request could pass any option; write the option in the catalog and let the value follow it (`--format={{{name}}}`)"
                ));
            }
        }
    }
    for script in &analysis.scripts {
        let Some(template) = argv.get(script.index) else {
            continue;
        };
        let program = argv.get(script.program).map_or("", String::as_str);
        out.extend(placeholders(template).into_iter().filter_map(|(name, outside_quotes)| {
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
        }));
    }
    out
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
        let t: Programs = serde_json::from_str(include_str!("../data/interpreters.json")).unwrap();
        assert!(t.posix_shells.iter().any(|s| s == "sh"));
        assert!(t.launchers.iter().any(|l| l.names.matches("env")));
        assert!(
            t.launchers
                .iter()
                .any(|l| l.names.matches("xargs") && l.rewrites)
        );
        assert!(t.exec_flags.iter().any(|e| e.names.matches("find")));
        for name in ["python3.12", "perl", "awk", "sed", "jq"] {
            assert!(
                t.interpreters.iter().any(|i| i.names.matches(name)),
                "{name}"
            );
        }
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
    fn a_placeholder_as_the_program_is_refused() {
        for words in [
            &["{tool}", "--version"][..],
            &["/usr/bin/{tool}"],
            &["env", "{tool}"],
            &["env", "{name}=1", "ls"],
            &["nice", "-n", "10", "{tool}"],
            &["timeout", "{secs}", "ls"],
            &["sudo", "-u", "{user}", "ls"],
            &["xargs", "{tool}"],
            &["find", ".", "-exec", "{tool}", "{{}}", ";"],
        ] {
            let p = problems(&argv(words), None);
            assert!(
                p.iter().any(|p| p.contains("chooses the program")),
                "{words:?}: {p:?}"
            );
        }
        // The value of an assignment `env` passes on is data.
        assert!(
            problems(
                &argv(&["env", "GREETING={text}", "printenv", "GREETING"]),
                None
            )
            .is_empty()
        );
    }

    #[test]
    fn find_exec_xargs_and_sed_scripts_with_placeholders_are_refused() {
        let quoted = json!({"properties": {"t": {"type": "string", "shell_quoted": true}}});
        for words in [
            &[
                "find", ".", "-name", "*.txt", "-exec", "sh", "-c", "echo {t}", ";",
            ][..],
            &[
                "find",
                ".",
                "-execdir",
                "bash",
                "-c",
                "grep {t} \"$1\"",
                "sh",
                "{{}}",
                "+",
            ],
            &["xargs", "sh", "-c", "echo {t}"],
            &[
                "xargs",
                "-I",
                "{{}}",
                "-n",
                "1",
                "python3",
                "-c",
                "print({t})",
            ],
            &["sed", "s/x/{t}/e", "notes.txt"],
            &["sed", "-n", "-e", "p", "-e", "{t}", "notes.txt"],
            &["sed", "--expression={t}", "notes.txt"],
            &["gawk", "-v", "x=1", "{{print {t}}}"],
            &["watch", "-n", "1", "ls {t}"],
            &["ssh", "-p", "22", "host", "ls {t}"],
            &["sqlite3", "notes.db", "select {t}"],
        ] {
            assert!(
                !problems(&argv(words), Some(&quoted)).is_empty(),
                "{words:?}"
            );
        }
        // Values as data next to such programs still pass.
        for words in [
            &["find", "notes", "-name", "{t}"][..],
            &[
                "find",
                ".",
                "-exec",
                "sh",
                "-c",
                "echo \"$1\"",
                "sh",
                "{{}}",
                ";",
            ],
            &["xargs", "-n", "1", "echo", "{t}"],
            &["sed", "s/a/b/", "{t}"],
            &["sed", "-e", "s/a/b/", "{t}"],
            &["jq", "--arg", "q", "{t}", ".name == $q", "data.json"],
            &["timeout", "5", "grep", "-r", "{t}", "."],
        ] {
            assert_eq!(
                problems(&argv(words), None),
                Vec::<String>::new(),
                "{words:?}"
            );
        }
    }

    #[test]
    fn launcher_options_do_not_hide_the_interpreter() {
        for words in [
            &["nice", "-n", "10", "sh", "-c", "echo {t}"][..],
            &["timeout", "5", "bash", "-c", "echo {t}"],
            &["timeout", "-s", "KILL", "5", "python3", "-c", "print({t})"],
            &["stdbuf", "-o", "0", "sh", "-c", "echo {t}"],
            &["sudo", "-u", "nobody", "perl", "-e", "print {t}"],
            &["env", "-u", "HOME", "A=1", "sh", "-c", "echo {t}"],
        ] {
            assert!(!problems(&argv(words), None).is_empty(), "{words:?}");
        }
    }

    #[test]
    fn bundled_and_attached_script_flags_are_found() {
        for words in [
            &["perl", "-ne", "print if /{t}/", "notes.txt"][..],
            &["perl", "-lane", "print $F[{t}]"],
            &["ruby", "-ne", "puts {t}"],
            &["python3", "-Ic", "print({t})"],
            &["python3", "-cprint({t})"],
            &["node", "--eval={t}"],
            &["node", "-pe", "{t}"],
        ] {
            assert!(!problems(&argv(words), None).is_empty(), "{words:?}");
        }
    }

    #[test]
    fn interpreter_script_files_from_placeholders_are_refused() {
        for words in [
            &["sh", "{script}"][..],
            &["bash", "-e", "{script}"],
            &["python3", "{script}"],
            &["python3", "-W", "ignore", "{script}"],
            &["node", "{script}", "x"],
            &["python3", "-m", "{module}"],
        ] {
            assert!(!problems(&argv(words), None).is_empty(), "{words:?}");
        }
        assert!(problems(&argv(&["python3", "tool.py", "{text}"]), None).is_empty());
        assert!(problems(&argv(&["bash", "tool.sh", "{text}"]), None).is_empty());
    }

    #[test]
    fn a_placeholder_naming_an_option_is_refused() {
        for words in [&["ls", "-{flags}"][..], &["grep", "--{option}=x", "y"]] {
            assert!(
                problems(&argv(words), None)
                    .iter()
                    .any(|p| p.contains("names its option")),
                "{words:?}"
            );
        }
        assert!(problems(&argv(&["head", "-n{count}", "notes.txt"]), None).is_empty());
        assert!(problems(&argv(&["git", "log", "--format={format}"]), None).is_empty());
    }

    #[test]
    fn quoting_survives_the_shell() {
        assert_eq!(sh_quote("a'b"), r"'a'\''b'");
    }
}
