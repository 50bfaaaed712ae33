//! The planner a command uses: the engine, the strategy, and — when configured — a model
//! with its endpoint, read from flags, `waypoint.toml` and the built-in tables.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use serde::Deserialize;
use waypoint_cascade::{Cascade, DEFAULT_ASSISTED_FLOOR, DEFAULT_THRESHOLD, LlmPlanner, Strategy};
use waypoint_core::Engine;
use waypoint_llm::{Client, Config, OutputMode, Overrides};

use crate::cli::{PlannerArgs, PlannerChoice};

/// The `[planner]` section of `waypoint.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PlannerSection {
    strategy: Option<String>,
    cascade_threshold: Option<f64>,
    assisted_floor: Option<f64>,
}

/// The `[serve]` section of `waypoint.toml` (its fields: docs/server.md).
pub type ServeSection = waypoint_server::ServeConfig;

/// The `[run]` section of `waypoint.toml`: executor limits (flags override them).
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSection {
    pub max_steps: Option<u32>,
    pub max_tool_calls: Option<u32>,
    pub max_wall: Option<String>,
    pub max_usd: Option<f64>,
    pub max_replans: Option<u32>,
    pub tool_timeout: Option<String>,
    pub concurrency: Option<usize>,
    pub max_output_bytes: Option<usize>,
}

/// A catalog's engine and the planner choice over it.
pub struct Planning {
    pub engine: Engine,
    pub llm: Option<LlmPlanner>,
    pub strategy: Strategy,
    pub threshold: f64,
    /// Route score a model's step needs to be adopted (`waypoint_cascade::guard`).
    pub assisted_floor: f64,
    client: Option<Arc<Client>>,
    /// The configured model, whatever the strategy: `llm_subtask` steps call it.
    endpoint: Option<waypoint_llm::Endpoint>,
    /// `[run]` from the config file.
    pub run: RunSection,
    /// `[serve]` from the config file.
    pub serve: ServeSection,
}

impl Planning {
    pub fn new(engine: Engine, args: &PlannerArgs) -> Result<Self> {
        let (config, section, run, serve) = read_config(args.config.as_deref())?;
        let model = args.model.clone().or_else(|| config.settings.model.clone());
        let from_file = section
            .strategy
            .as_deref()
            .map(|s| {
                Strategy::parse(s).with_context(|| {
                    format!(
                        "[planner] strategy = \"{s}\" is not one of deterministic, llm, cascade"
                    )
                })
            })
            .transpose()?;
        let strategy = match args.planner {
            Some(PlannerChoice::Deterministic) => Strategy::Deterministic,
            Some(PlannerChoice::Llm) => Strategy::Llm,
            Some(PlannerChoice::Cascade) => Strategy::Cascade,
            None => from_file.unwrap_or(if model.is_some() {
                Strategy::Cascade
            } else {
                Strategy::Deterministic
            }),
        };
        let threshold = args
            .cascade_threshold
            .or(section.cascade_threshold)
            .unwrap_or(DEFAULT_THRESHOLD);
        let assisted_floor = args
            .assisted_floor
            .or(section.assisted_floor)
            .unwrap_or(DEFAULT_ASSISTED_FLOOR);
        let mut planning = Self {
            engine,
            llm: None,
            strategy,
            threshold,
            assisted_floor,
            client: None,
            endpoint: None,
            run,
            serve,
        };
        if model.is_none() {
            if strategy == Strategy::Deterministic {
                return Ok(planning);
            }
            bail!(
                "`--planner {}` needs a model: pass --model PROVIDER/MODEL (e.g. llamacpp/gemma3-270m) or set `model` under [llm] in waypoint.toml",
                if strategy == Strategy::Llm {
                    "llm"
                } else {
                    "cascade"
                }
            );
        }
        let overrides = Overrides {
            base_url: args.llm_base_url.clone(),
            api_key_env: args.llm_api_key_env.clone(),
            timeout: args.llm_timeout.map(Duration::from_secs_f64),
        };
        let endpoint = match config.endpoint(model.as_deref(), &overrides) {
            Ok(e) => e,
            // A deterministic planner never calls the model; a model it cannot reach
            // only matters to `llm_subtask` steps, which say so when they run.
            Err(_) if strategy == Strategy::Deterministic => return Ok(planning),
            Err(e) => return Err(e.into()),
        };
        let client = Arc::new(Client::new()?);
        client.remember_modes(load_modes());
        if strategy != Strategy::Deterministic {
            planning.llm = Some(
                LlmPlanner::new(client.clone(), endpoint.clone())
                    .with_assisted_floor(assisted_floor),
            );
        }
        planning.endpoint = Some(endpoint);
        planning.client = Some(client);
        Ok(planning)
    }

    /// The configured model for `llm_subtask` steps, if any.
    pub fn model(&self) -> Option<waypoint_run::Model> {
        Some(waypoint_run::Model {
            client: self.client.clone()?,
            endpoint: self.endpoint.clone()?,
        })
    }

    pub fn cascade(&self) -> Cascade<'_> {
        Cascade {
            engine: &self.engine,
            llm: self.llm.as_ref(),
            strategy: self.strategy,
            threshold: self.threshold,
        }
    }

    /// Remembers, for the next process, which output mode each endpoint accepted (the
    /// client was seeded from the same file, so its view is the whole file's).
    pub fn save_modes(&self) {
        let Some(client) = &self.client else { return };
        let Some(path) = modes_file() else { return };
        let modes = client.known_modes();
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if let Ok(text) = serde_json::to_string_pretty(&modes) {
            let _ = std::fs::write(path, text);
        }
    }
}

fn config_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
}

/// Waypoint's cache folder: `$XDG_CACHE_HOME/waypoint`, else `~/.cache/waypoint`.
pub fn cache_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .map(|d| d.join("waypoint"))
}

fn modes_file() -> Option<PathBuf> {
    cache_dir().map(|d| d.join("endpoints.json"))
}

fn load_modes() -> HashMap<String, OutputMode> {
    modes_file()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// Reads `--config FILE` (which must exist) or the default file (if it exists).
type FileConfig = (Config, PlannerSection, RunSection, ServeSection);

/// The config file in effect: `--config FILE`, else the default one if it exists.
pub fn config_path(explicit: Option<&Path>) -> Option<PathBuf> {
    match explicit {
        Some(p) => Some(p.to_path_buf()),
        None => config_dir()
            .map(|d| d.join("waypoint/waypoint.toml"))
            .filter(|p| p.is_file()),
    }
}

fn read_config(explicit: Option<&Path>) -> Result<FileConfig> {
    let Some(path) = config_path(explicit) else {
        return Ok((
            Config::builtin(),
            PlannerSection::default(),
            RunSection::default(),
            ServeSection::default(),
        ));
    };
    let name = path.display().to_string();
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("cannot read config `{name}`"))?;
    let table: toml::Table = text
        .parse()
        .with_context(|| format!("config `{name}` is not valid TOML"))?;
    let config = Config::with_table(&table, &name)?;
    let section = match table.get("planner") {
        Some(v) => v
            .clone()
            .try_into()
            .with_context(|| format!("config `{name}`: [planner]"))?,
        None => PlannerSection::default(),
    };
    let run = match table.get("run") {
        Some(v) => v
            .clone()
            .try_into()
            .with_context(|| format!("config `{name}`: [run]"))?,
        None => RunSection::default(),
    };
    let serve = match table.get("serve") {
        Some(v) => v
            .clone()
            .try_into()
            .with_context(|| format!("config `{name}`: [serve]"))?,
        None => ServeSection::default(),
    };
    Ok((config, section, run, serve))
}

/// The model table (built-in, then the config file's), for the server's resources.
pub fn model_table(explicit: Option<&Path>) -> Result<serde_json::Value> {
    let (config, ..) = read_config(explicit)?;
    Ok(serde_json::Value::Array(
        config
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
    ))
}
