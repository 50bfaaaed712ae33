//! Which sentence encoder routes by meaning: `--embed-model` / `WAYPOINT_EMBED_MODEL`,
//! else `[embed]` in waypoint.toml (docs/routing.md). A folder that does not load is a
//! warning, said once per process, and routing goes on without meaning.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use serde::{Deserialize, Serialize};
use waypoint_core::meaning::{MeaningSettings, Scale};
use waypoint_embed::Encoder;

use crate::cli::Global;

/// The `[embed]` section of `waypoint.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct EmbedSection {
    /// A sentence-transformers folder; relative paths are from the config file's folder.
    model: Option<PathBuf>,
    /// Share of the route score that is meaning (0–1).
    weight: Option<f64>,
    /// Cosines `[low, high]` mapped to 0 and 1 against an entry's own words; another
    /// model than `MiniLM` has other ranges.
    own_scale: Option<[f32; 2]>,
    /// The same against the requests an entry was taught.
    request_scale: Option<[f32; 2]>,
}

/// The `[embed]` section with `model` resolved: the flag, else the environment, else the
/// config file. Config errors are warnings here (the planner's own config reading reports
/// them as errors).
fn configured(global: &Global) -> EmbedSection {
    let section = crate::planning::config_path(global.planner.config.as_deref())
        .and_then(|path| {
            let text = std::fs::read_to_string(&path).ok()?;
            let table: toml::Table = text.parse().ok()?;
            let section: EmbedSection = match table.get("embed")?.clone().try_into() {
                Ok(s) => s,
                Err(e) => {
                    warn_once(&format!("config `{}`: [embed]: {e}", path.display()));
                    return None;
                }
            };
            let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
            Some(EmbedSection {
                model: section.model.as_ref().map(|m| base.join(m)),
                ..section
            })
        })
        .unwrap_or_default();
    // An empty value (an empty `WAYPOINT_EMBED_MODEL=`) turns meaning off for one command.
    let chosen = global
        .embed_model
        .clone()
        .or_else(|| std::env::var_os("WAYPOINT_EMBED_MODEL").map(PathBuf::from));
    let model = match chosen {
        Some(p) if p.as_os_str().is_empty() => None,
        Some(p) => Some(p),
        None => section.model,
    };
    EmbedSection { model, ..section }
}

/// Meaning settings for the engine, when an encoder is configured and loads.
pub fn settings(global: &Global) -> Option<MeaningSettings> {
    let section = configured(global);
    let encoder = load(section.model.as_deref()?)?;
    let mut s = MeaningSettings::new(encoder);
    if let Some(w) = section.weight.filter(|w| (0.0..=1.0).contains(w)) {
        s.weight = w;
    }
    let scale = |[low, high]: [f32; 2]| (low < high).then_some(Scale { low, high });
    if let Some(x) = section.own_scale.and_then(scale) {
        s.own = x;
    }
    if let Some(x) = section.request_scale.and_then(scale) {
        s.requests = x;
    }
    Some(s)
}

/// Loads an encoder once per folder per process (a reload reuses it).
fn load(dir: &Path) -> Option<Arc<Encoder>> {
    static LOADED: OnceLock<Mutex<HashMap<PathBuf, Arc<Encoder>>>> = OnceLock::new();
    let loaded = LOADED.get_or_init(Mutex::default);
    if let Some(e) = loaded.lock().ok()?.get(dir) {
        return Some(e.clone());
    }
    match Encoder::load(dir) {
        Ok(e) => {
            let e = Arc::new(e);
            loaded.lock().ok()?.insert(dir.to_path_buf(), e.clone());
            Some(e)
        }
        Err(e) => {
            warn_once(&e.to_string());
            None
        }
    }
}

fn warn_once(why: &str) {
    static SAID: AtomicBool = AtomicBool::new(false);
    if !SAID.swap(true, Ordering::Relaxed) {
        eprintln!(
            "warning: meaning-level matching is off: {why}\n  \
             routing goes on by words (and requests, when trained); point --embed-model or \
             WAYPOINT_EMBED_MODEL at a sentence-transformers folder (scripts/embed-model install)"
        );
    }
}

/// Whether an engine routes by meaning, for `train`'s report and `serve`'s start-up line.
#[derive(Debug, Serialize)]
pub struct Status {
    /// `off`, `on` or `failed`.
    pub state: &'static str,
    /// The encoder folder (on), what to set (off) or why it failed.
    pub detail: Option<String>,
    /// Texts encoded: every entry's own words and requests.
    pub rows: Option<usize>,
}

pub fn status(engine: &waypoint_core::Engine) -> Status {
    use waypoint_core::meaning::MeaningState;
    match engine.meaning() {
        MeaningState::Off => Status {
            state: "off",
            detail: Some(
                "no sentence encoder configured (--embed-model, WAYPOINT_EMBED_MODEL or \
                 [embed] model)"
                    .into(),
            ),
            rows: None,
        },
        MeaningState::On(m) => Status {
            state: "on",
            detail: engine
                .options()
                .meaning
                .as_ref()
                .map(|s| s.encoder.dir().display().to_string()),
            rows: Some(m.rows()),
        },
        MeaningState::Failed(why) => Status {
            state: "failed",
            detail: Some(why.clone()),
            rows: None,
        },
    }
}
