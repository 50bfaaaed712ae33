//! Scores plans against evaluation cases (docs/contracts.md, Evaluation cases and report).
//!
//! [`read_cases`] parses a JSONL file strictly (a bad line is an error naming it),
//! [`train`] teaches the catalog from labelled requests the way `waypoint learn` does,
//! and [`evaluate`] plans every case with an [`Engine`] and computes each metric over
//! the cases that carry its key.

pub mod calibrate;
mod metrics;

use std::collections::BTreeMap;
use std::time::Instant;

use waypoint_catalog::Catalog;
use waypoint_core::Engine;
use waypoint_protocol::{EvalCase, EvalReport, ModelCase, ModelEffect, Plan};

pub use metrics::Scorer;

/// Why a cases file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// A line is not a valid case; nothing is skipped silently.
    #[error("{source_name}:{line}: {message}")]
    Malformed {
        source_name: String,
        line: usize,
        message: String,
    },
    /// The file holds no case at all.
    #[error("{0}: no cases (one JSON object per line expected)")]
    Empty(String),
}

/// Parses one case per non-blank line.
pub fn read_cases(text: &str, source_name: &str) -> Result<Vec<EvalCase>, EvalError> {
    let mut cases = Vec::new();
    let mut ids = std::collections::HashMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let malformed = |message: String| EvalError::Malformed {
            source_name: source_name.to_string(),
            line: i + 1,
            message,
        };
        let case: EvalCase = serde_json::from_str(line).map_err(|e| malformed(e.to_string()))?;
        if let Some(first) = ids.insert(case.id.clone(), i + 1) {
            return Err(malformed(format!(
                "duplicate case id `{}` (first on line {first})",
                case.id
            )));
        }
        cases.push(case);
    }
    if cases.is_empty() {
        return Err(EvalError::Empty(source_name.to_string()));
    }
    Ok(cases)
}

/// What training added.
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TrainReport {
    /// Requests that taught at least one entry.
    pub requests: usize,
    /// (request, entry) pairs added.
    pub examples: usize,
    /// Labels that name nothing in the catalog (ignored).
    pub unknown_labels: Vec<String>,
}

/// Adds each training request as an example of the tools it is labelled with.
pub fn train(catalog: &mut Catalog, cases: &[EvalCase]) -> TrainReport {
    let mut report = TrainReport::default();
    for case in cases {
        let mut labels: Vec<&str> = Vec::new();
        for label in case
            .expect
            .tools
            .iter()
            .chain(case.expect.tool_set.iter())
            .flatten()
        {
            if label != waypoint_protocol::UNKNOWN_TOOL {
                labels.push(label);
            }
        }
        // A sequence teaches the order of its tools too; a set only which were asked for.
        let unknown = if case.expect.tools.is_some() {
            catalog.teach_sequence(&case.request, &labels)
        } else {
            catalog.teach(&case.request, &labels)
        };
        report.examples += labels.len() - unknown.len();
        if unknown.len() < labels.len() {
            report.requests += 1;
        }
        for label in unknown {
            if !report.unknown_labels.iter().any(|l| l == label) {
                report.unknown_labels.push(label.to_owned());
            }
        }
    }
    report
}

/// Plans every case and scores the plans.
pub fn evaluate(engine: &Engine, cases: &[EvalCase]) -> EvalReport {
    evaluate_with_progress(engine, cases, |_| {})
}

/// [`evaluate`], calling `progress` with the number of cases done.
pub fn evaluate_with_progress(
    engine: &Engine,
    cases: &[EvalCase],
    progress: impl FnMut(usize),
) -> EvalReport {
    evaluate_by(
        cases,
        |case| {
            engine
                .plan(&case.request, case.context.as_ref())
                .map(Planned::from)
                .map_err(|e| e.to_string())
        },
        progress,
    )
}

/// What a planner gave for one case.
pub struct Planned {
    /// The plan that is scored.
    pub plan: Plan,
    /// The deterministic plan, when a model was asked to do better than it.
    pub before_model: Option<Plan>,
}

impl From<Plan> for Planned {
    fn from(plan: Plan) -> Self {
        Self {
            plan,
            before_model: None,
        }
    }
}

/// Scores the plans `plan` makes for each case — any planner, e.g. a model through
/// the cascade. Latency is measured around each call. The metrics are also split by
/// the planner that answered, and every case a model was asked about says what that
/// changed.
pub fn evaluate_by(
    cases: &[EvalCase],
    mut plan: impl FnMut(&EvalCase) -> Result<Planned, String>,
    mut progress: impl FnMut(usize),
) -> EvalReport {
    let mut scorer = Scorer::default();
    let mut by_planner: BTreeMap<String, Scorer> = BTreeMap::new();
    let mut model_cases = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let started = Instant::now();
        let planned = plan(case);
        let micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        let scored = planned.as_ref().map(|p| &p.plan).map_err(Clone::clone);
        let passed = scorer.score(case, scored.clone(), micros);
        let planner = scored
            .as_ref()
            .map_or("error", |p| p.planner().as_str())
            .to_string();
        by_planner
            .entry(planner.clone())
            .or_default()
            .score(case, scored, micros);
        if let Ok(Planned {
            plan,
            before_model: Some(before),
        }) = &planned
        {
            let passed_before = Scorer::default().score(case, Ok(before), 0);
            let (was, now) = (tools(before), tools(plan));
            let effect = match (passed_before, passed) {
                (false, true) => ModelEffect::Fixed,
                (true, false) => ModelEffect::Broke,
                (false, false) if was != now => ModelEffect::Changed,
                _ => ModelEffect::Same,
            };
            model_cases.push(ModelCase {
                id: case.id.clone(),
                planner,
                deterministic: was,
                answered: now,
                effect,
            });
        }
        progress(i + 1);
    }
    let mut report = scorer.finish();
    if by_planner.len() > 1 || !model_cases.is_empty() {
        report.by_planner = by_planner
            .into_iter()
            .map(|(k, s)| {
                let mut r = s.finish();
                // Each failure is listed once, in the whole report.
                r.failures.clear();
                (k, r)
            })
            .collect();
    }
    report.model_cases = model_cases;
    report
}

fn tools(plan: &Plan) -> Vec<String> {
    plan.steps().iter().map(|s| s.tool.clone()).collect()
}
