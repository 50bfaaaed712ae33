//! `waypoint.toml`, read once into one typed value.
//!
//! Every face reads the same file the same way: the model tables (`[llm]`,
//! `[providers.*]`, `[models.*]`), the planner's choice (`[planner]`), run limits
//! (`[run]`), the server (`[serve]`), the sentence encoder (`[embed]`) and traces and
//! logs (`[telemetry]`). An unknown
//! section or key is an error with its line, so a typo is never silently ignored.
//! docs/configuration.md lists every key.

pub mod inspect;
pub mod serve;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use serve::ServeConfig;

/// The whole configuration: a file's sections over the built-in defaults.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// The file it was read from; `None` when no file was found (built-in defaults).
    pub path: Option<PathBuf>,
    /// Providers, model table and the default model.
    pub llm: waypoint_llm::Config,
    pub planner: PlannerSection,
    pub run: RunSection,
    pub serve: ServeConfig,
    pub embed: EmbedSection,
    pub telemetry: crate::telemetry::TelemetrySection,
}

/// The `[planner]` section: which planner answers and when the cascade asks the model.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PlannerSection {
    /// `deterministic`, `llm` or `cascade`.
    pub strategy: Option<String>,
    /// Deterministic confidence below which the cascade asks the model.
    pub cascade_threshold: Option<f64>,
    /// Route score a model's step needs to be adopted (docs/llm.md, "The guard").
    pub assisted_floor: Option<f64>,
}

/// The `[run]` section: executor limits (a face's own overrides go over them).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RunSection {
    pub max_steps: Option<u32>,
    pub max_tool_calls: Option<u32>,
    /// A duration: `30s`, `10m`, `500ms`.
    pub max_wall: Option<String>,
    pub max_usd: Option<f64>,
    pub max_replans: Option<u32>,
    /// A duration: `30s`, `10m`, `500ms`.
    pub tool_timeout: Option<String>,
    pub concurrency: Option<usize>,
    pub max_output_bytes: Option<usize>,
    /// Which calls wait for a person's approval: `write` (default: every call that is
    /// not a read), `destructive`, or `never` (docs/security.md).
    pub approve: Option<waypoint_run::ApproveBar>,
    /// Hostnames, IP addresses and CIDR ranges outbound calls may reach although they
    /// are loopback, private, link-local or metadata addresses (docs/run.md, Outbound
    /// calls).
    #[serde(default)]
    pub allow_hosts: Vec<String>,
}

/// The `[embed]` section: the sentence encoder that routes by meaning (docs/routing.md).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EmbedSection {
    /// A sentence-transformers folder; relative paths are from the config file's folder.
    pub model: Option<PathBuf>,
    /// `int8` (the default where the CPU has AVX-512 VNNI or AVX2: two and a half to six
    /// times faster) or
    /// `f32` (the checkpoint's own weights: vectors exactly as sentence-transformers
    /// gives them).
    pub precision: Option<waypoint_embed::Precision>,
    /// Share of the route score that is meaning (0–1) where the words think at least as
    /// well of an entry.
    pub weight: Option<f64>,
    /// The share where meaning thinks better of an entry than the words do (0–1).
    pub lead_weight: Option<f64>,
    /// Cosines `[low, high]` mapped to 0 and 1 against an entry's own words; another
    /// model than `MiniLM` has other ranges.
    pub own_scale: Option<[f32; 2]>,
    /// The same against the requests an entry was taught.
    pub request_scale: Option<[f32; 2]>,
    /// Without a model, whether the built-in static word vectors are read: they order a
    /// catalog known by names and descriptions alone, and the trained router reads them
    /// where requests ask for one entry each (default true).
    pub word_vectors: Option<bool>,
}

/// The file's shape: every section it may have, so serde reports an unknown section or
/// key with its line. The model tables are read by `waypoint_llm` from the same text.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileShape {
    #[serde(default)]
    #[expect(dead_code, reason = "read by waypoint_llm::Config::with_table")]
    llm: Option<toml::Value>,
    #[serde(default)]
    #[expect(dead_code, reason = "read by waypoint_llm::Config::with_table")]
    providers: Option<toml::Value>,
    #[serde(default)]
    #[expect(dead_code, reason = "read by waypoint_llm::Config::with_table")]
    models: Option<toml::Value>,
    #[serde(default)]
    planner: PlannerSection,
    #[serde(default)]
    run: RunSection,
    #[serde(default)]
    serve: ServeConfig,
    #[serde(default)]
    embed: EmbedSection,
    #[serde(default)]
    telemetry: crate::telemetry::TelemetrySection,
}

/// Why a configuration file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config `{path}`: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Not TOML, or a section or key that is unknown or of the wrong type; the message
    /// carries the line and column.
    #[error("config `{path}`: {message}")]
    Invalid { path: PathBuf, message: String },
    #[error(transparent)]
    Llm(#[from] waypoint_llm::LlmError),
}

/// Where the configuration file is looked for when none is named:
/// `$XDG_CONFIG_HOME/waypoint/waypoint.toml`, else `~/.config/waypoint/waypoint.toml`.
pub fn default_path() -> Option<PathBuf> {
    std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
        .map(|d| d.join("waypoint/waypoint.toml"))
}

/// The file in effect: `explicit` (which must exist), else `./waypoint.toml`, else the
/// user's file, whichever exists first ([`inspect::places`]).
pub fn path_in_effect(explicit: Option<&Path>) -> Option<PathBuf> {
    inspect::places(explicit)
        .into_iter()
        .find(|p| p.in_effect)
        .map(|p| p.path)
}

/// Waypoint's cache folder: `$XDG_CACHE_HOME/waypoint`, else `~/.cache/waypoint`.
pub fn cache_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .map(|d| d.join("waypoint"))
}

impl Config {
    /// Reads `explicit`, else the default file if there is one, else the built-in
    /// defaults.
    pub fn load(explicit: Option<&Path>) -> Result<Self, ConfigError> {
        let Some(path) = path_in_effect(explicit) else {
            return Ok(Self::default());
        };
        let text =
            waypoint_catalog::limited::read_file(&path, waypoint_catalog::limited::MAX_INPUT_BYTES)
                .map_err(|source| ConfigError::Read {
                    path: path.clone(),
                    source,
                })?;
        Self::parse(&text, &path)
    }

    /// Parses a file's text; `path` names it in errors and anchors relative paths.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ConfigError> {
        let invalid = |e: toml::de::Error| ConfigError::Invalid {
            path: path.to_path_buf(),
            message: inspect::with_suggestion(e.to_string().trim_end().to_string()),
        };
        let shape: FileShape = toml::from_str(text).map_err(invalid)?;
        let table: toml::Table = text.parse().map_err(invalid)?;
        let llm =
            waypoint_llm::Config::with_table(&table, &path.display().to_string()).map_err(|e| {
                match e {
                    waypoint_llm::LlmError::Config { path, message } => ConfigError::Invalid {
                        path: path.into(),
                        message: inspect::with_suggestion(message),
                    },
                    other => other.into(),
                }
            })?;
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut embed = shape.embed;
        embed.model = embed.model.map(|m| base.join(m));
        Ok(Self {
            path: Some(path.to_path_buf()),
            llm,
            planner: shape.planner,
            run: shape.run,
            serve: shape.serve,
            embed,
            telemetry: shape.telemetry,
        })
    }

    /// The model table as `[{pattern, context_tokens, max_output_tokens, …}]`.
    pub fn model_table(&self) -> serde_json::Value {
        serde_json::Value::Array(
            self.llm
                .models()
                .iter()
                .map(|(pattern, m)| {
                    serde_json::json!({
                        "pattern": pattern,
                        "context_tokens": m.context_tokens,
                        "max_output_tokens": m.max_output_tokens,
                        "usd_per_mtok_in": m.usd_per_mtok_in,
                        "usd_per_mtok_out": m.usd_per_mtok_out,
                    })
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(text, Path::new("/etc/w/waypoint.toml"))
    }

    #[test]
    fn every_section_is_read_from_one_file() {
        let c = parse(
            "[llm]\nmodel = \"llamacpp/x\"\n[planner]\nstrategy = \"cascade\"\n[run]\nmax_steps = 3\n[serve]\nallow_run = true\n[embed]\nmodel = \"minilm\"\n",
        )
        .unwrap();
        assert_eq!(c.planner.strategy.as_deref(), Some("cascade"));
        assert_eq!(c.run.max_steps, Some(3));
        assert!(c.serve.allow_run);
        assert_eq!(c.llm.settings.model.as_deref(), Some("llamacpp/x"));
        assert_eq!(c.embed.model, Some(PathBuf::from("/etc/w/minilm")));
        assert_eq!(c.embed.word_vectors, None);
        let off = parse("[embed]\nword_vectors = false\n").unwrap();
        assert_eq!(off.embed.word_vectors, Some(false));
    }

    #[test]
    fn an_unknown_section_or_key_is_an_error_with_its_line() {
        let e = parse("[planner]\nstrategy = \"llm\"\n\n[rn]\nmax_steps = 2\n").unwrap_err();
        let text = e.to_string();
        assert!(text.contains("line 4"), "{text}");
        assert!(text.contains("rn"), "{text}");
        let e = parse("[run]\nmax_step = 2\n").unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("max_step"), "{e}");
        let e = parse("store = \"none\"\n").unwrap_err().to_string();
        assert!(e.contains("store"), "{e}");
    }

    #[test]
    fn no_file_means_the_built_in_defaults() {
        let c = Config::load(None);
        // The default file may exist on a developer's machine; a missing one is Ok.
        if default_path().is_none_or(|p| !p.is_file()) {
            assert!(c.unwrap().path.is_none());
        }
    }
}
