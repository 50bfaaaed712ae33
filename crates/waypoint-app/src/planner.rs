//! How requests become plans, for every face: the caller's learned plan when their
//! history has a stable one for the request, else the deterministic planner, else (when
//! a model is configured and the planner is unsure) the model.
//!
//! The model's planner compacts the catalog once and keeps it, so it is bound to one
//! engine; a catalog reload swaps the engine, and the next call binds a fresh planner
//! to the new one instead of planning over a catalog that is gone.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use tokio_util::sync::CancellationToken;
use waypoint_cascade::{
    Attempt, Cascade, DEFAULT_ASSISTED_FLOOR, DEFAULT_THRESHOLD, LlmPlanner, Strategy,
};
use waypoint_core::{CoreError, Engine};
use waypoint_llm::{Client, OutputMode};
use waypoint_protocol::Plan;
use waypoint_store::LearnRule;

use crate::config::{Config, ConfigError, cache_dir};
use crate::error::AppError;

/// A face's own choices over `[planner]` and `[llm]` of the configuration.
#[derive(Debug, Clone, Default)]
pub struct PlannerOverrides {
    pub strategy: Option<Strategy>,
    /// `PROVIDER/MODEL`.
    pub model: Option<String>,
    /// Base URL, API key variable and timeout of the model server.
    pub llm: waypoint_llm::Overrides,
    pub cascade_threshold: Option<f64>,
    pub assisted_floor: Option<f64>,
}

/// How requests become plans: the strategy, its thresholds and the model.
pub struct Planner {
    strategy: Strategy,
    threshold: f64,
    /// Route score a model's step needs to be adopted (`waypoint_cascade::guard`).
    assisted_floor: f64,
    learn: LearnRule,
    /// The configured model, whatever the strategy: `llm_subtask` steps call it.
    model: Option<waypoint_run::Model>,
    /// The model as a planner, bound to the engine it compacted.
    bound: Mutex<Option<(Weak<Engine>, Arc<LlmPlanner>)>>,
}

impl Default for Planner {
    /// Learned, else deterministic; no model.
    fn default() -> Self {
        Self::new(
            Strategy::Deterministic,
            DEFAULT_THRESHOLD,
            LearnRule::default(),
            None,
        )
    }
}

impl Planner {
    /// The planner the configuration and the overrides describe. The strategy defaults
    /// to `cascade` when a model is configured, else `deterministic`; a strategy that
    /// needs a model without one is an error.
    pub fn configure(
        config: &Config,
        o: &PlannerOverrides,
        learn: LearnRule,
    ) -> Result<Self, AppError> {
        let model = o
            .model
            .clone()
            .or_else(|| config.llm.settings.model.clone());
        let from_file = match config.planner.strategy.as_deref() {
            Some(s) => Some(Strategy::parse(s).ok_or_else(|| ConfigError::Invalid {
                path: config.path.clone().unwrap_or_default(),
                message: format!(
                    "[planner] strategy = \"{s}\" is not one of deterministic, llm, cascade"
                ),
            })?),
            None => None,
        };
        let strategy = o.strategy.or(from_file).unwrap_or(if model.is_some() {
            Strategy::Cascade
        } else {
            Strategy::Deterministic
        });
        let threshold = o
            .cascade_threshold
            .or(config.planner.cascade_threshold)
            .unwrap_or(DEFAULT_THRESHOLD);
        let floor = o
            .assisted_floor
            .or(config.planner.assisted_floor)
            .unwrap_or(DEFAULT_ASSISTED_FLOOR);
        let no_model = || Self::new(strategy, threshold, learn, None).with_assisted_floor(floor);
        if model.is_none() {
            if strategy == Strategy::Deterministic {
                return Ok(no_model());
            }
            return Err(AppError::NoModel(strategy));
        }
        let endpoint = match config.llm.endpoint(model.as_deref(), &o.llm) {
            Ok(e) => e,
            // A deterministic planner never calls the model; a model it cannot reach
            // only matters to `llm_subtask` steps, which say so when they run.
            Err(_) if strategy == Strategy::Deterministic => return Ok(no_model()),
            Err(e) => return Err(e.into()),
        };
        let client = Arc::new(Client::new()?);
        client.remember_modes(load_modes());
        let model = waypoint_run::Model { client, endpoint };
        Ok(Self::new(strategy, threshold, learn, Some(model)).with_assisted_floor(floor))
    }

    /// `model` plans only when `strategy` is not deterministic; runs use it either way.
    pub fn new(
        strategy: Strategy,
        threshold: f64,
        learn: LearnRule,
        model: Option<waypoint_run::Model>,
    ) -> Self {
        Self {
            strategy,
            threshold,
            assisted_floor: waypoint_cascade::DEFAULT_ASSISTED_FLOOR,
            learn,
            model,
            bound: Mutex::new(None),
        }
    }

    /// The same planner with another assisted floor (0–1).
    #[must_use]
    pub fn with_assisted_floor(mut self, floor: f64) -> Self {
        self.assisted_floor = floor;
        self
    }

    /// The model `llm_subtask` steps call, if one is configured.
    pub fn model(&self) -> Option<waypoint_run::Model> {
        self.model.clone()
    }

    /// When a request's plan counts as learned.
    pub fn learn_rule(&self) -> LearnRule {
        self.learn
    }

    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// Whether a model may be asked for plans.
    pub fn asks_model(&self) -> bool {
        self.strategy != Strategy::Deterministic && self.model.is_some()
    }

    /// Remembers, for the next process, which output mode each endpoint accepted (the
    /// client was seeded from the same file, so its view is the whole file's).
    pub fn save_modes(&self) {
        let Some(model) = &self.model else { return };
        let Some(path) = modes_file() else { return };
        let modes = model.client.known_modes();
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if let Ok(text) = serde_json::to_string_pretty(&modes) {
            let _ = std::fs::write(path, text);
        }
    }

    /// The model's planner for `engine`: the one already bound to it, or a new one.
    fn llm_for(&self, engine: &Arc<Engine>) -> Option<Arc<LlmPlanner>> {
        if self.strategy == Strategy::Deterministic {
            return None;
        }
        let model = self.model.as_ref()?;
        let mut bound = self.bound.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((e, llm)) = bound.as_ref()
            && Weak::ptr_eq(e, &Arc::downgrade(engine))
        {
            return Some(llm.clone());
        }
        let llm = Arc::new(
            LlmPlanner::new(model.client.clone(), model.endpoint.clone())
                .with_assisted_floor(self.assisted_floor),
        );
        *bound = Some((Arc::downgrade(engine), llm.clone()));
        Some(llm)
    }

    /// Whether a learned plan may answer: not when the model is to answer every time.
    pub fn learns(&self) -> bool {
        self.strategy != Strategy::Llm
    }

    /// Plans `request` with `engine`, given what history learned (if anything), and
    /// says what the model did when it was asked.
    pub async fn plan_learned(
        &self,
        engine: &Arc<Engine>,
        request: &str,
        context: Option<&serde_json::Value>,
        learned: Option<&[String]>,
    ) -> Result<(Plan, Option<Attempt>), CoreError> {
        let llm = self.llm_for(engine);
        let cascade = Cascade {
            engine,
            llm: llm.as_deref(),
            strategy: self.strategy,
            threshold: self.threshold,
        };
        // Dropping this future (a client gone, the request timed out) drops the model
        // call with it; the token is for the cascade's own cancellation points.
        let cancel = CancellationToken::new();
        cascade.plan(request, context, learned, &cancel).await
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn engine() -> Arc<Engine> {
        let loaded = waypoint_catalog::builtin().unwrap();
        Arc::new(Engine::new(loaded.catalog, waypoint_core::Options::default()).unwrap())
    }

    fn model() -> waypoint_run::Model {
        let overrides = waypoint_llm::Overrides {
            base_url: Some("http://127.0.0.1:9/v1".into()),
            api_key_env: None,
            timeout: None,
        };
        waypoint_run::Model {
            client: Arc::new(waypoint_llm::Client::new().unwrap()),
            endpoint: waypoint_llm::Config::builtin()
                .endpoint(Some("llamacpp/test"), &overrides)
                .unwrap(),
        }
    }

    #[test]
    fn the_models_planner_is_rebound_when_the_engine_is_swapped() {
        let planner = Planner::new(Strategy::Cascade, 0.6, LearnRule::default(), Some(model()));
        let first = engine();
        let a = planner.llm_for(&first).unwrap();
        let again = planner.llm_for(&first).unwrap();
        assert!(Arc::ptr_eq(&a, &again), "one engine, one compacted catalog");
        let reloaded = engine();
        let b = planner.llm_for(&reloaded).unwrap();
        assert!(
            !Arc::ptr_eq(&a, &b),
            "a new engine gets a planner of its own"
        );
    }

    #[test]
    fn a_deterministic_server_never_asks_the_model_but_runs_keep_it() {
        let planner = Planner::new(
            Strategy::Deterministic,
            0.6,
            LearnRule::default(),
            Some(model()),
        );
        assert!(planner.llm_for(&engine()).is_none());
        assert!(planner.model().is_some(), "llm_subtask steps still call it");
    }
}
