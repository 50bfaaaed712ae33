//! What a face decided before asking for anything: which catalogs and training files,
//! which store, how history is kept, and its overrides of the configuration. From it the
//! application builds the engine (catalog, training, router, encoder) the same way for
//! every face, and a server builds it again the same way on reload.

use std::path::PathBuf;

use waypoint_catalog::{Catalog, Diagnostic, Loaded};
use waypoint_core::{Engine, Options};
use waypoint_eval::TrainReport;
use waypoint_store::LearnRule;

use crate::config::{Config, cache_dir};
use crate::error::AppError;
use crate::planner::PlannerOverrides;

/// Thirty days, the default time a history row is kept.
pub const DEFAULT_HISTORY_TTL_SECS: i64 = 30 * 86_400;

/// Where things are and the face's overrides of the configuration.
#[derive(Debug, Clone)]
pub struct Setup {
    /// Catalog files or directories, merged; empty: the built-in catalog.
    pub catalogs: Vec<PathBuf>,
    /// Labelled requests (JSONL) that teach the router.
    pub train: Vec<PathBuf>,
    /// The configuration file; `None`: the default one if it exists.
    pub config: Option<PathBuf>,
    /// `sqlite:PATH`, `postgres://…` or `none`; `None`: the default SQLite file.
    pub store: Option<String>,
    pub history_ttl_secs: i64,
    /// When a request's plan counts as learned.
    pub learn: LearnRule,
    /// Route score below which a clause is a gap; `None`: the engine's default.
    pub threshold: Option<f64>,
    /// A sentence-encoder folder over the configuration's; an empty path turns it off.
    pub embed_model: Option<PathBuf>,
    pub planner: PlannerOverrides,
}

impl Default for Setup {
    fn default() -> Self {
        Self {
            catalogs: Vec::new(),
            train: Vec::new(),
            config: None,
            store: None,
            history_ttl_secs: DEFAULT_HISTORY_TTL_SECS,
            learn: LearnRule::default(),
            threshold: None,
            embed_model: None,
            planner: PlannerOverrides::default(),
        }
    }
}

/// Something a face should tell the person, though nothing failed.
#[derive(Debug, Clone)]
pub enum Notice {
    /// A catalog warning, with its file and line.
    Catalog(Diagnostic),
    /// Training labels that name nothing in the catalog (ignored).
    UnknownLabels(Vec<String>),
    /// A sentence encoder was configured but did not load; routing goes on by words.
    MeaningOff(String),
    /// The store could not be opened; history is off (and runs cannot be journaled).
    StoreOff(String),
    /// The trained router could not be cached (why); the next start trains again.
    Uncached(String),
}

/// An engine and what building it had to say.
pub struct Built {
    pub engine: Engine,
    pub trained: TrainReport,
    pub notices: Vec<Notice>,
}

impl Setup {
    /// The configuration this setup names.
    pub fn config(&self) -> Result<Config, AppError> {
        Ok(Config::load(self.config.as_deref())?)
    }

    /// The catalog with the labelled requests of `train` added as examples of their
    /// entries.
    pub fn catalog(&self) -> Result<(Catalog, TrainReport, Vec<Notice>), AppError> {
        let Loaded {
            mut catalog,
            warnings,
        } = Catalog::from_paths(&self.catalogs)?;
        let mut notices: Vec<Notice> = warnings.into_iter().map(Notice::Catalog).collect();
        let mut trained = TrainReport::default();
        for file in &self.train {
            let text = waypoint_catalog::limited::read_file(
                file,
                waypoint_catalog::limited::MAX_INPUT_BYTES,
            )
            .map_err(|source| AppError::Read {
                path: file.clone(),
                what: "training file",
                source,
            })?;
            let cases = waypoint_eval::read_cases(&text, &file.display().to_string())?;
            let r = waypoint_eval::train(&mut catalog, &cases);
            trained.examples += r.examples;
            trained.requests += r.requests;
            for l in r.unknown_labels {
                if !trained.unknown_labels.contains(&l) {
                    trained.unknown_labels.push(l);
                }
            }
        }
        if !trained.unknown_labels.is_empty() {
            notices.push(Notice::UnknownLabels(trained.unknown_labels.clone()));
        }
        Ok((catalog, trained, notices))
    }

    /// Engine options: the threshold, the trained router's cache, the encoder.
    pub fn options(&self, config: &Config) -> (Options, Option<Notice>) {
        let mut o = Options::default();
        if let Some(t) = self.threshold {
            o.threshold = t;
        }
        // A trained router is kept by the digest of what trained it, so a catalog with
        // many labelled requests trains once, not on every start.
        if let Some(dir) = cache_dir() {
            o.router = waypoint_core::learned::RouterModel::Cached(dir.join("router"));
        }
        let (meaning, why) = crate::meaning::settings(&config.embed, self.embed_model.as_deref());
        o.meaning = meaning;
        o.word_vectors = config.embed.word_vectors.unwrap_or(true);
        (o, why.map(Notice::MeaningOff))
    }

    /// The engine over `catalog` with this setup's options.
    pub fn engine_over(&self, catalog: Catalog, config: &Config) -> Result<Built, AppError> {
        let (options, notice) = self.options(config);
        Ok(Built {
            engine: Engine::new(catalog, options)?,
            trained: TrainReport::default(),
            notices: notice.into_iter().collect(),
        })
    }

    /// The engine: the catalog, trained, with this setup's options.
    pub fn engine(&self, config: &Config) -> Result<Built, AppError> {
        let (catalog, trained, mut notices) = self.catalog()?;
        let mut built = self.engine_over(catalog, config)?;
        notices.append(&mut built.notices);
        built.notices = notices;
        built.trained = trained;
        Ok(built)
    }

    /// The store spec in effect.
    pub fn store_spec(&self) -> String {
        self.store
            .clone()
            .unwrap_or_else(waypoint_stores::default_location)
    }
}
