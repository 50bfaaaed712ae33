//! What `waypoint config` tells a person: where the file is looked for, which keys each
//! section takes, which of them a file sets and on which line, and the effective value
//! of each with its source (docs/configuration.md).
//!
//! The keys are not listed here a second time: each section's deserializer is asked
//! (an unknown key makes it name the ones it takes), so the list cannot drift from what
//! the parser accepts.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{Config, ConfigError, default_path};

/// The sections a file may have, in the order they are shown. `providers` and `models`
/// are tables of named entries (`[providers.NAME]`, `[models."PATTERN"]`).
pub const SECTIONS: [&str; 8] = [
    "llm",
    "providers",
    "models",
    "planner",
    "run",
    "serve",
    "embed",
    "telemetry",
];

/// The file a project keeps beside its code; read when no file is named.
pub const PROJECT_FILE: &str = "waypoint.toml";

/// One place the configuration is looked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Place {
    pub path: PathBuf,
    /// `--config`/`WAYPOINT_CONFIG`, `project` (the current directory) or `user`.
    pub origin: &'static str,
    pub exists: bool,
    /// The first existing place (or the named one) is the file in effect.
    pub in_effect: bool,
}

/// Where the configuration is looked for, in order: the named file (which must exist),
/// else `./waypoint.toml`, else the user's file. Only the first that exists is read.
pub fn places(explicit: Option<&Path>) -> Vec<Place> {
    let mut out = Vec::new();
    if let Some(p) = explicit {
        out.push(Place {
            path: p.to_path_buf(),
            origin: "--config",
            exists: p.is_file(),
            in_effect: true,
        });
        return out;
    }
    let project = std::env::current_dir()
        .map_or_else(|_| PathBuf::from(PROJECT_FILE), |d| d.join(PROJECT_FILE));
    out.push(Place {
        exists: project.is_file(),
        path: project,
        origin: "project",
        in_effect: false,
    });
    if let Some(user) = default_path() {
        out.push(Place {
            exists: user.is_file(),
            path: user,
            origin: "user",
            in_effect: false,
        });
    }
    if let Some(first) = out.iter_mut().find(|p| p.exists) {
        first.in_effect = true;
    }
    out
}

/// The keys `section` takes, as its deserializer names them.
pub fn keys(section: &str) -> Vec<String> {
    const PROBE: &str = "__waypoint_probe__";
    let text = match section {
        "providers" => format!("[providers.p]\n{PROBE} = 0\n"),
        "models" => format!("[models.m]\n{PROBE} = 0\n"),
        _ => format!("[{section}]\n{PROBE} = 0\n"),
    };
    match Config::parse(&text, Path::new("probe.toml")) {
        Err(e) => expected_in(&e.to_string()),
        Ok(_) => Vec::new(),
    }
}

/// The names an "unknown field `x`, expected one of `a`, `b`" message offers.
fn expected_in(message: &str) -> Vec<String> {
    let Some(at) = message.find("expected") else {
        return Vec::new();
    };
    let rest = &message[at..];
    let end = rest.find('\n').unwrap_or(rest.len());
    rest[..end]
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// The unknown name in a serde "unknown field"/"unknown variant" message.
fn unknown_in(message: &str) -> Option<&str> {
    let at = message.find("unknown field `")? + "unknown field `".len();
    let rest = &message[at..];
    Some(&rest[..rest.find('`')?])
}

/// `message` with a did-you-mean for the unknown key it names, when one is near.
pub fn with_suggestion(message: String) -> String {
    let Some(unknown) = unknown_in(&message) else {
        return message;
    };
    let expected = expected_in(&message);
    let pool: Vec<&str> = expected.iter().map(String::as_str).collect();
    match waypoint_catalog::closest(unknown, &pool) {
        Some(near) => {
            format!("{message}\ndid you mean `{near}`? (docs/configuration.md lists every key)")
        }
        None => format!("{message}\n(docs/configuration.md lists every key)"),
    }
}

/// Where a file sets each `section.key` (1-based lines). A line scan, enough for the
/// `key = value` lines and `[section]` headers configuration files are made of.
pub fn lines(text: &str) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    let mut section = String::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if let Some(header) = line.strip_prefix('[') {
            section = header
                .trim_start_matches('[')
                .split(']')
                .next()
                .unwrap_or_default()
                .trim()
                .to_string();
            out.entry(section.clone()).or_insert(i + 1);
        } else if let Some((key, _)) = line.split_once('=')
            && !line.starts_with('#')
        {
            let key = key.trim().trim_matches('"');
            let full = if section.is_empty() {
                key.to_string()
            } else {
                format!("{section}.{key}")
            };
            out.entry(full).or_insert(i + 1);
        }
    }
    out
}

/// One key's effective value and where it comes from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Setting {
    /// `section.key`.
    pub key: String,
    /// Absent when neither the file nor a default sets it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<serde_json::Value>,
    /// `FILE:LINE`, or `default`.
    pub source: String,
}

/// Every key of every section with its effective value: what `config show` prints.
pub fn settings(config: &Config, text: Option<&str>) -> Result<Vec<Setting>, ConfigError> {
    let mut values = effective(config)?;
    // Named entries (built-in ones are many): the ones the file defines.
    let file_table: toml::Table = text.and_then(|t| t.parse().ok()).unwrap_or_default();
    for section in ["providers", "models"] {
        if let Some(v) = file_table.get(section)
            && let Ok(json) = serde_json::to_value(v)
        {
            values.insert(section.into(), json);
        }
    }
    let set = text.map(lines).unwrap_or_default();
    let file = config
        .path
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let mut out = Vec::new();
    for section in SECTIONS {
        let table = values.get(section).and_then(|v| v.as_object());
        let mut names: Vec<String> = match section {
            // Named entries: show the ones the file defines.
            "providers" | "models" => table
                .map(|t| t.keys().cloned().collect())
                .unwrap_or_default(),
            _ => keys(section),
        };
        names.dedup();
        for name in names {
            let key = format!("{section}.{name}");
            let source = set
                .get(&key)
                .or_else(|| set.get(&format!("{section}.\"{name}\"")))
                .map_or_else(|| "default".to_string(), |line| format!("{file}:{line}"));
            let value = table
                .and_then(|t| t.get(&name))
                .filter(|v| !v.is_null())
                .cloned();
            out.push(Setting { key, value, source });
        }
    }
    Ok(out)
}

/// The effective sections as JSON (tokens never included).
fn effective(config: &Config) -> Result<serde_json::Map<String, serde_json::Value>, ConfigError> {
    let json = |v: Result<serde_json::Value, serde_json::Error>| {
        v.map_err(|e| ConfigError::Invalid {
            path: config.path.clone().unwrap_or_default(),
            message: e.to_string(),
        })
    };
    let mut out = serde_json::Map::new();
    out.insert(
        "llm".into(),
        json(serde_json::to_value(&config.llm.settings))?,
    );
    out.insert(
        "planner".into(),
        json(serde_json::to_value(&config.planner))?,
    );
    out.insert(
        "run".into(),
        run_in_effect(config, json(serde_json::to_value(&config.run))?),
    );
    out.insert("serve".into(), json(serde_json::to_value(&config.serve))?);
    out.insert("embed".into(), json(serde_json::to_value(&config.embed))?);
    out.insert(
        "telemetry".into(),
        json(serde_json::to_value(&config.telemetry))?,
    );
    Ok(out)
}

/// `[run]` as a run gets it: the file's keys over the executor's defaults.
fn run_in_effect(config: &Config, file: serde_json::Value) -> serde_json::Value {
    let mut run = match file {
        serde_json::Value::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    run.retain(|_, v| !v.is_null());
    let Ok(limits) = crate::limits::layered(&config.run, &crate::limits::LimitOverrides::default())
    else {
        return serde_json::Value::Object(run);
    };
    let defaults = [
        ("max_steps", serde_json::json!(limits.max_steps)),
        ("max_tool_calls", serde_json::json!(limits.max_tool_calls)),
        (
            "max_wall",
            serde_json::json!(format!("{}ms", limits.max_wall_ms)),
        ),
        ("max_usd", serde_json::json!(limits.max_usd)),
        ("max_replans", serde_json::json!(limits.max_replans)),
        (
            "tool_timeout",
            serde_json::json!(format!("{}ms", limits.tool_timeout_ms)),
        ),
        ("concurrency", serde_json::json!(limits.concurrency)),
        (
            "max_output_bytes",
            serde_json::json!(limits.max_output_bytes),
        ),
        (
            "approve",
            serde_json::json!(waypoint_run::ApproveBar::default()),
        ),
    ];
    for (key, value) in defaults {
        run.entry(key).or_insert(value);
    }
    serde_json::Value::Object(run)
}

/// A commented starter file: every section, the common keys, safe values.
pub const STARTER: &str = include_str!("../../data/waypoint.toml");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sections_name_their_keys() {
        let run = keys("run");
        assert!(run.contains(&"max_steps".to_string()), "{run:?}");
        assert!(run.contains(&"approve".to_string()), "{run:?}");
        assert!(keys("serve").contains(&"max_rate_per_caller".to_string()));
        assert!(
            keys("llm").contains(&"model".to_string()),
            "{:?}",
            keys("llm")
        );
        assert!(keys("providers").contains(&"base_url".to_string()));
    }

    #[test]
    fn a_near_miss_gets_a_did_you_mean_and_a_far_one_does_not() {
        let e = Config::parse("[run]\nmax_step = 2\n", Path::new("w.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("did you mean `max_steps`?"), "{e}");
        assert!(e.contains("line 2"), "{e}");
        let e = Config::parse("[rn]\nmax_steps = 2\n", Path::new("w.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("did you mean `run`?"), "{e}");
        let e = Config::parse("[run]\nzzzzzz = 2\n", Path::new("w.toml"))
            .unwrap_err()
            .to_string();
        assert!(!e.contains("did you mean"), "{e}");
    }

    #[test]
    fn lines_are_found_per_section() {
        let l = lines("# c\n[run]\nmax_steps = 3\n\n[serve.callers]\nalice = { token = \"x\" }\n");
        assert_eq!(l["run.max_steps"], 3);
        assert_eq!(l["serve.callers.alice"], 6);
    }

    #[test]
    fn the_starter_file_is_valid_and_sets_safe_values() {
        let c = Config::parse(STARTER, Path::new("/etc/waypoint.toml")).unwrap();
        assert!(!c.serve.allow_run);
        assert_eq!(
            c.run.approve.unwrap_or_default(),
            waypoint_run::ApproveBar::Write
        );
    }

    #[test]
    fn docs_configuration_lists_every_key_the_parser_takes() {
        let docs = include_str!("../../../../docs/configuration.md");
        for section in SECTIONS {
            let heading = if matches!(section, "providers" | "models") {
                format!("### `[{section}.")
            } else {
                format!("### `[{section}]`")
            };
            let at = docs
                .find(&heading)
                .unwrap_or_else(|| panic!("no {heading} in docs/configuration.md"));
            let end = docs[at + 4..]
                .find("\n### ")
                .map_or(docs.len(), |e| at + 4 + e);
            for key in keys(section) {
                assert!(
                    docs[at..end].contains(&format!("| `{key}` |")),
                    "docs/configuration.md does not list `{section}.{key}`"
                );
            }
        }
    }

    #[test]
    fn show_never_prints_a_token() {
        let text = "[serve.callers]\nalice = { token = \"secret-token-0123456789\" }\n";
        let c = Config::parse(text, Path::new("w.toml")).unwrap();
        let all = serde_json::to_string(&settings(&c, Some(text)).unwrap()).unwrap();
        assert!(!all.contains("secret-token"), "{all}");
        assert!(all.contains("alice"), "{all}");
    }
}
