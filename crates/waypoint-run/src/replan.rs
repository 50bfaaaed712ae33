//! Bounded replanning (seed 001): after a failure the run asks for a new plan with an
//! error digest, at most `max_replans` times, then hands over to a human.
//!
//! The built-in [`Recovery`] is goal-aware (seed 002): it plans the same request over
//! the catalog less the tools that failed, so a goal whose evidence another tool can
//! produce gets that tool; a plan already tried is not offered again.

use std::collections::HashSet;

use waypoint_catalog::Catalog;
use waypoint_core::{Engine, Options};
use waypoint_protocol::{Plan, Step};

/// What a replanner is told.
#[derive(Debug, Clone)]
pub struct ReplanAsk<'a> {
    pub request: &'a str,
    pub context: Option<&'a serde_json::Value>,
    /// Tools whose calls failed, over every plan tried.
    pub failed_tools: &'a HashSet<String>,
    /// What went wrong, a few lines.
    pub digest: &'a str,
    /// Tool sequences already tried.
    pub tried: &'a [Vec<String>],
}

/// Something that can propose a new plan after a failure.
pub trait Replanner: Send + Sync {
    /// A different plan, or `None` when there is nothing new to try.
    fn replan(&self, ask: &ReplanAsk<'_>) -> Option<Plan>;
}

/// Plans again, deterministically, without the tools that failed.
pub struct Recovery<'c> {
    pub catalog: &'c Catalog,
    pub options: Options,
}

impl Replanner for Recovery<'_> {
    fn replan(&self, ask: &ReplanAsk<'_>) -> Option<Plan> {
        if ask.request.trim().is_empty() {
            return None;
        }
        let catalog = self.catalog.without(ask.failed_tools);
        let engine = Engine::new(catalog, self.options.clone()).ok()?;
        let plan = engine.plan(ask.request, ask.context).ok()?;
        let tools: Vec<String> = plan.steps().iter().map(|s| s.tool.clone()).collect();
        let runnable = plan.steps().iter().all(Step::is_known);
        (runnable && !plan.steps().is_empty() && !ask.tried.contains(&tools)).then_some(plan)
    }
}

/// Never replans: the first failure goes to a human.
pub struct NoReplan;

impl Replanner for NoReplan {
    fn replan(&self, _: &ReplanAsk<'_>) -> Option<Plan> {
        None
    }
}
