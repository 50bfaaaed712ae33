//! Which planner answers a request.
//!
//! Cheapest first: a learned plan (the caller's own history, when it has a stable tool
//! sequence for this request), then the deterministic planner when it is confident, then
//! the model. The plan's `planner` and `model` fields say which one answered.

use waypoint_core::{CoreError, Engine};
use waypoint_llm::CancellationToken;
use waypoint_protocol::{Plan, StepKind};

use crate::guard::rescuable;
use crate::llm::{Attempt, LlmPlanner};

/// `--planner`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// Learned, else deterministic; never a model.
    Deterministic,
    /// Always the model (falling back to the deterministic plan when it fails).
    Llm,
    /// Learned → deterministic when confident → model.
    Cascade,
}

impl Strategy {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "deterministic" => Some(Self::Deterministic),
            "llm" => Some(Self::Llm),
            "cascade" => Some(Self::Cascade),
            _ => None,
        }
    }
}

/// Deterministic confidence at or above which the cascade does not ask the model.
pub const DEFAULT_THRESHOLD: f64 = 0.6;

/// How sure the deterministic planner is of its plan, 0–1: the request's clarity,
/// halved when a step is a gap (a model may know a tool the router could not match),
/// and zero for an empty plan.
pub fn confidence(plan: &Plan) -> f64 {
    let steps = plan.steps();
    if steps.is_empty() {
        return 0.0;
    }
    let clear = (1.0 - plan.clarity().ambiguity_score()).clamp(0.0, 1.0);
    if steps.iter().any(|s| s.kind == StepKind::Unknown) {
        clear * 0.5
    } else {
        clear
    }
}

/// A planner choice bound to an engine and, optionally, a model.
pub struct Cascade<'a> {
    pub engine: &'a Engine,
    pub llm: Option<&'a LlmPlanner>,
    pub strategy: Strategy,
    pub threshold: f64,
}

impl Cascade<'_> {
    /// Whether the plan is unsure only because of gaps the router is sure of: clauses in
    /// which no entry reaches the assisted floor. A model could only force-fit a tool
    /// there ([`crate::guard`] would refuse it), so it is not asked.
    fn sure_gaps_only(
        &self,
        plan: &Plan,
        request: &str,
        context: Option<&serde_json::Value>,
    ) -> bool {
        let Some(llm) = self.llm else { return false };
        if !plan.has_unknown() {
            return false;
        }
        let clear = (1.0 - plan.clarity().ambiguity_score()).clamp(0.0, 1.0);
        if clear < self.threshold {
            return false;
        }
        self.engine
            .clause_evidence(request, context)
            .is_ok_and(|evidence| !rescuable(plan.steps(), &evidence, llm.assisted_floor()))
    }

    /// Plans `request`. `learned` is the stable tool sequence from the caller's history,
    /// if any. Errors only for requests no planner accepts (empty, too large).
    pub async fn plan(
        &self,
        request: &str,
        context: Option<&serde_json::Value>,
        learned: Option<&[String]>,
        cancel: &CancellationToken,
    ) -> Result<(Plan, Option<Attempt>), CoreError> {
        if self.strategy != Strategy::Llm
            && let Some(tools) = learned
        {
            return Ok((self.engine.plan_learned(request, context, tools)?, None));
        }
        let deterministic = self.engine.plan(request, context)?;
        let ask_model = match self.strategy {
            Strategy::Deterministic => false,
            Strategy::Llm => true,
            Strategy::Cascade => {
                confidence(&deterministic) < self.threshold
                    && !self.sure_gaps_only(&deterministic, request, context)
            }
        };
        match (ask_model, self.llm) {
            (true, Some(llm)) => {
                let (plan, attempt) = llm
                    .plan(self.engine, request, context, deterministic, cancel)
                    .await;
                Ok((plan, Some(attempt)))
            }
            (true, None) if self.strategy == Strategy::Llm => Ok((
                deterministic
                    .with_warning("no model is configured; this is the deterministic plan"),
                None,
            )),
            _ => Ok((deterministic, None)),
        }
    }
}
