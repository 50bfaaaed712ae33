//! Evaluating a case file with the planner in service: the deterministic engine alone
//! when no model may be asked, else the whole cascade with what the model did tallied.

use waypoint_eval::Planned;
use waypoint_protocol::{EvalCase as Case, EvalReport, Plan, PlannerKind};

use crate::app::App;
use crate::error::AppError;

/// What the model did over an evaluation.
#[derive(Debug, Default, Clone)]
pub struct ModelTally {
    /// Cases the model was asked about.
    pub asked: u32,
    /// Cases whose final plan is the model's.
    pub answered: u32,
    pub calls: u32,
    pub repairs: u32,
    /// Cases where the model's answer was unusable and the deterministic plan stood.
    pub fallbacks: u32,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// One per case asked, sorted.
    pub latencies_ms: Vec<u64>,
    pub cost_usd: Option<f64>,
}

impl ModelTally {
    fn add(&mut self, plan: &Plan, attempt: &waypoint_cascade::Attempt) {
        self.asked += 1;
        self.calls += attempt.usage.calls;
        self.repairs += attempt.repairs;
        self.prompt_tokens += u64::from(attempt.usage.prompt_tokens);
        self.completion_tokens += u64::from(attempt.usage.completion_tokens);
        self.latencies_ms.push(attempt.usage.latency_ms);
        if let Some(c) = attempt.usage.cost_usd {
            *self.cost_usd.get_or_insert(0.0) += c;
        }
        if attempt.fell_back.is_some() {
            self.fallbacks += 1;
        }
        if plan.planner() == PlannerKind::Llm {
            self.answered += 1;
        }
    }

    /// The latency at `num/den` of the way through the sorted list (1/2: the median).
    pub fn latency_at(&self, num: usize, den: usize) -> u64 {
        let i = (self.latencies_ms.len().saturating_sub(1) * num).div_ceil(den);
        self.latencies_ms.get(i).copied().unwrap_or(0)
    }
}

/// An evaluation's report and, when a model could be asked, what it did.
pub struct Evaluation {
    pub report: EvalReport,
    pub model: Option<ModelTally>,
}

impl App {
    /// Plans every case (never recorded in history) and scores the plans; `progress` is
    /// told how many are done. Blocking: call it outside an async runtime (a model's
    /// calls get a runtime of their own).
    pub fn evaluate(
        &self,
        cases: &[Case],
        progress: impl FnMut(usize),
    ) -> Result<Evaluation, AppError> {
        let snap = self.snapshot();
        if !snap.planner.asks_model() {
            let report = waypoint_eval::evaluate_with_progress(&snap.engine, cases, progress);
            return Ok(Evaluation {
                report,
                model: None,
            });
        }
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| AppError::Internal(format!("cannot start the async runtime: {e}")))?;
        let mut tally = ModelTally::default();
        let report = waypoint_eval::evaluate_by(
            cases,
            |case| {
                let (plan, attempt) = rt
                    .block_on(snap.planner.plan_learned(
                        &snap.engine,
                        &case.request,
                        case.context.as_ref(),
                        None,
                    ))
                    .map_err(|e| e.to_string())?;
                // What the model changed is judged against the plan it was asked to beat.
                let before_model = match &attempt {
                    Some(a) => {
                        tally.add(&plan, a);
                        Some(
                            snap.engine
                                .plan(&case.request, case.context.as_ref())
                                .map_err(|e| e.to_string())?,
                        )
                    }
                    None => None,
                };
                Ok(Planned { plan, before_model })
            },
            progress,
        );
        snap.planner.save_modes();
        tally.latencies_ms.sort_unstable();
        Ok(Evaluation {
            report,
            model: Some(tally),
        })
    }
}
