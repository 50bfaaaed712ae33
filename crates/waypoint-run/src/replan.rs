//! Bounded replanning (docs/run.md): after a failure the run asks for a new plan with
//! an error digest, at most `max_replans` times, then hands over to a human.
//!
//! The built-in [`Recovery`] is goal-aware: it plans the same request over the catalog
//! less the tools that failed, so a goal whose evidence another tool can produce gets
//! that tool. It never offers a plan already tried, a tool nothing can run, or a step
//! stronger than the failed plan's (a read replaced by a write, docs/security.md).

use std::collections::HashSet;

use waypoint_catalog::{Catalog, Effects, Entry};
use waypoint_core::{Engine, Options};
use waypoint_protocol::{Plan, Step, StepKind};

use crate::approval::strongest;

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

/// How many times a replan drops tools it cannot call and plans again.
const MAX_REROUTES: usize = 3;

impl Replanner for Recovery<'_> {
    fn replan(&self, ask: &ReplanAsk<'_>) -> Option<Plan> {
        if ask.request.trim().is_empty() {
            return None;
        }
        // What the plan that failed could do to the world; the new one may do no more.
        let before: Vec<Effects> = ask
            .tried
            .last()
            .map(|tools| tools.iter().map(|t| strongest(self.catalog, t)).collect())
            .unwrap_or_default();
        let mut out = ask.failed_tools.clone();
        for _ in 0..MAX_REROUTES {
            let engine = Engine::new(self.catalog.without(&out), self.options.clone()).ok()?;
            let plan = engine.plan(ask.request, ask.context).ok()?;
            if plan.steps().is_empty() || !plan.steps().iter().all(Step::is_known) {
                return None;
            }
            // A tool no adapter runs would fail the same way, and one stronger than the
            // failed plan's is not a replacement: plan again without them.
            let unfit: Vec<String> = plan
                .steps()
                .iter()
                .filter(|s| {
                    !self.has_adapter(s) || !no_stronger(strongest(self.catalog, &s.tool), &before)
                })
                .map(|s| s.tool.clone())
                .collect();
            if !unfit.is_empty() {
                out.extend(unfit);
                continue;
            }
            let tools: Vec<String> = plan.steps().iter().map(|s| s.tool.clone()).collect();
            return (!ask.tried.contains(&tools)).then_some(plan);
        }
        None
    }
}

impl Recovery<'_> {
    /// Whether something can run the step: a tool with a `run:`, a pipeline all of whose
    /// tools have one, a plan document, or a model subtask.
    fn has_adapter(&self, step: &Step) -> bool {
        if step.kind == StepKind::LlmSubtask {
            return true;
        }
        match self.catalog.entry(&step.tool) {
            Some(Entry::Tool(t)) => t.run.is_some(),
            Some(Entry::Pipeline(p)) => p.steps.iter().all(|n| {
                matches!(self.catalog.entry(n), Some(Entry::Tool(t)) if t.run.is_some())
                    || matches!(self.catalog.entry(n), Some(Entry::Pipeline(_)))
            }),
            Some(Entry::Plan(_)) => true,
            None => false,
        }
    }
}

/// Whether a replacement step stays within what the failed plan could do: a read is
/// never replaced by a write, nor a write by something that reaches outside; a plan
/// that could destroy may be replaced by anything short of that.
fn no_stronger(new: Effects, before: &[Effects]) -> bool {
    new == Effects::Read
        || before.contains(&new)
        || (new != Effects::Destructive && before.contains(&Effects::Destructive))
}

/// Never replans: the first failure goes to a human.
pub struct NoReplan;

impl Replanner for NoReplan {
    fn replan(&self, _: &ReplanAsk<'_>) -> Option<Plan> {
        None
    }
}
