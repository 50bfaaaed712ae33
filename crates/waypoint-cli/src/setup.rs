//! From flags to the application: the [`Setup`] a command's flags describe, the
//! application opened from it, and what opening it had to say, told to a person.

use anyhow::{Context as _, Result};
use waypoint_app::{
    App, LimitOverrides, LlmOverrides, Notice, PlannerOverrides, RunPolicy, Setup, Strategy,
};
use waypoint_core::Engine;

use crate::cli::{Global, LimitArgs, PlannerChoice};

/// The setup the global flags describe.
pub fn setup(global: &Global) -> Result<Setup> {
    let p = &global.planner;
    Ok(Setup {
        catalogs: global.catalog.clone(),
        train: global.train.clone(),
        config: p.config.clone(),
        store: global.store.clone(),
        history_ttl_secs: waypoint_app::limits::parse_age(&global.history_ttl)
            .context("--history-ttl")?,
        learn: waypoint_store::LearnRule {
            min_ok: usize::try_from(global.learn_after).unwrap_or(usize::MAX),
        },
        threshold: global.threshold,
        embed_model: global.embed_model.clone(),
        planner: PlannerOverrides {
            strategy: p.planner.map(|c| match c {
                PlannerChoice::Deterministic => Strategy::Deterministic,
                PlannerChoice::Llm => Strategy::Llm,
                PlannerChoice::Cascade => Strategy::Cascade,
            }),
            model: p.model.clone(),
            llm: LlmOverrides {
                base_url: p.llm_base_url.clone(),
                api_key_env: p.llm_api_key_env.clone(),
                timeout: p.llm_timeout.map(std::time::Duration::from_secs_f64),
            },
            cascade_threshold: p.cascade_threshold,
            assisted_floor: p.assisted_floor,
        },
    })
}

/// A current-thread runtime for the application's async calls.
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// The application the flags describe; runs (when `runs`) in the current directory
/// unless a command names another.
pub fn open(global: &Global, rt: &tokio::runtime::Runtime, runs: bool) -> Result<App> {
    let policy = if runs {
        Some(RunPolicy {
            workdir: std::env::current_dir().context("cannot read the current directory")?,
        })
    } else {
        None
    };
    let (app, notices) = rt.block_on(App::open(&setup(global)?, policy))?;
    say(&notices);
    Ok(app)
}

/// The engine alone (commands that neither plan with a model nor touch the store).
pub fn engine(global: &Global) -> Result<Engine> {
    let s = setup(global)?;
    let config = s.config()?;
    let built = s.engine(&config)?;
    say(&built.notices);
    Ok(built.engine)
}

/// Tells a person what opening had to say, on standard error.
pub fn say(notices: &[Notice]) {
    for n in notices {
        match n {
            Notice::Catalog(d) => crate::report::diagnostic(d),
            Notice::UnknownLabels(labels) => eprintln!(
                "warning: training labels that name nothing in the catalog were ignored: {}",
                labels.join(", ")
            ),
            Notice::MeaningOff(why) => eprintln!(
                "warning: meaning-level matching is off: {why}\n  \
                 routing goes on by words (and requests, when trained); point --embed-model or \
                 WAYPOINT_EMBED_MODEL at a sentence-transformers folder (scripts/embed-model install)"
            ),
            Notice::StoreOff(why) => eprintln!("warning: plan history is off: {why}"),
            Notice::Uncached(why) => eprintln!(
                "warning: the trained router could not be cached ({why}); the next command trains again"
            ),
        }
    }
}

/// The limit flags as overrides of `[run]`.
pub fn limit_overrides(flags: &LimitArgs) -> Result<LimitOverrides> {
    use waypoint_app::limits::parse_millis;
    Ok(LimitOverrides {
        max_steps: flags.max_steps,
        max_tool_calls: flags.max_tool_calls,
        max_wall_ms: flags
            .max_wall
            .as_deref()
            .map(|t| parse_millis(t, "--max-wall"))
            .transpose()?,
        max_usd: flags.max_usd,
        max_replans: flags.max_replans,
        tool_timeout_ms: flags
            .tool_timeout
            .as_deref()
            .map(|t| parse_millis(t, "--tool-timeout"))
            .transpose()?,
        concurrency: flags.concurrency,
        max_output_bytes: None,
    })
}
