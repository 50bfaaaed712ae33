//! Which sentence encoder routes by meaning: the face's own setting, else
//! `WAYPOINT_EMBED_MODEL`, else `[embed]` in waypoint.toml (docs/routing.md). A folder
//! that does not load is reported to the face, and routing goes on without meaning.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use serde::Serialize;
use waypoint_core::meaning::{MeaningSettings, Scale};
use waypoint_embed::{Encoder, Precision};

use crate::config::EmbedSection;

/// The encoder folder in effect: `chosen` (a face's own setting), else
/// `WAYPOINT_EMBED_MODEL`, else `[embed] model`. An empty value turns meaning off.
fn folder(section: &EmbedSection, chosen: Option<&Path>) -> Option<PathBuf> {
    let chosen = chosen
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os("WAYPOINT_EMBED_MODEL").map(PathBuf::from));
    match chosen {
        Some(p) if p.as_os_str().is_empty() => None,
        Some(p) => Some(p),
        None => section.model.clone(),
    }
}

/// Meaning settings for the engine when an encoder is configured and loads; else
/// `None`, with why when one was configured but did not load.
pub fn settings(
    section: &EmbedSection,
    chosen: Option<&Path>,
) -> (Option<MeaningSettings>, Option<String>) {
    let Some(dir) = folder(section, chosen) else {
        return (None, None);
    };
    let precision = section
        .precision
        .map_or_else(Precision::best, Precision::on_this_cpu);
    let encoder = match load(&dir, precision) {
        Ok(e) => e,
        Err(why) => return (None, Some(why)),
    };
    let mut s = MeaningSettings::new(encoder);
    if let Some(w) = section.weight.filter(|w| (0.0..=1.0).contains(w)) {
        s.weight = w;
    }
    if let Some(w) = section.lead_weight.filter(|w| (0.0..=1.0).contains(w)) {
        s.lead_weight = w;
    }
    let scale = |[low, high]: [f32; 2]| (low < high).then_some(Scale { low, high });
    if let Some(x) = section.own_scale.and_then(scale) {
        s.own = x;
    }
    if let Some(x) = section.request_scale.and_then(scale) {
        s.requests = x;
    }
    (Some(s), None)
}

type Loaded = Mutex<HashMap<(PathBuf, Precision), Arc<Encoder>>>;

/// Loads an encoder once per folder and precision (one this CPU runs) per process (a
/// reload reuses it).
fn load(dir: &Path, precision: Precision) -> Result<Arc<Encoder>, String> {
    static LOADED: OnceLock<Loaded> = OnceLock::new();
    let loaded = LOADED.get_or_init(Mutex::default);
    let key = (dir.to_path_buf(), precision);
    let cached = |l: &Loaded| {
        l.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&key)
            .cloned()
    };
    if let Some(e) = cached(loaded) {
        return Ok(e);
    }
    let e = Arc::new(Encoder::load_with(dir, precision).map_err(|e| e.to_string())?);
    loaded
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .insert(key, e.clone());
    Ok(e)
}

/// Whether an engine routes by meaning, for reports and a server's start-up line.
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
                "no sentence encoder configured (WAYPOINT_EMBED_MODEL or [embed] model)".into(),
            ),
            rows: None,
        },
        MeaningState::On(m) => Status {
            state: "on",
            detail: engine.options().meaning.as_ref().map(|s| {
                let e = &s.encoder;
                format!("{} ({})", e.dir().display(), e.precision().name())
            }),
            rows: Some(m.rows()),
        },
        MeaningState::Failed(why) => Status {
            state: "failed",
            detail: Some(why.clone()),
            rows: None,
        },
    }
}
