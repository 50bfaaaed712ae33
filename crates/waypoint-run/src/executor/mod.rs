//! The executor loop: run a plan's groups in order and the steps of a group
//! together, journal every call before and after it, verify the outcome, and replan
//! within the budget.
//!
//! Everything a run knows lives in the journal, so [`Runner::resume`] rebuilds a run
//! from it: steps that finished are not called again (their outputs are replayed); a
//! step that was called but never finished is called again only when its tool only
//! reads, and otherwise waits for a person to say whether to retry it or take it as done.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};
use tokio::sync::Semaphore;
use waypoint_catalog::{Catalog, Effects, Entry, Tool};
use waypoint_protocol::{
    Attempt, LimitHit, Plan, Question, RunEvent, RunReport, RunStatus, RunTotals, Step, StepKind,
    StepRun, StepStatus, Verification,
};
use waypoint_store::{MemoryStore, RunRow, RunStore, StepEnd, StepRow, StoreError, now_millis};

use crate::adapters::{Asking, Call, Output, ToolError, Toolbox};
use crate::approval::{self, Approvals, Bar};
use crate::limits::{Limit, Limits, Meter, Used};
use crate::refs::{self, RefError};
use crate::replan::{NoReplan, ReplanAsk, Replanner};
use crate::verify;

mod args;
mod journal;
mod step;

use args::Prep;
pub(crate) use args::check_args;
use journal::idempotency_key;
pub use journal::{new_run_id, report_from_journal};

/// Most pipelines nested inside one another that a step expands.
const MAX_PIPELINE_DEPTH: usize = 8;

/// Why a run could not be started or resumed at all.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("no run `{0}` in this store for this caller")]
    NoSuchRun(String),
    #[error("run `{run_id}` is {status}; only a run that stopped can be resumed")]
    NotResumable { run_id: String, status: String },
    #[error("the journal of run `{run_id}` does not decode: {message}")]
    Corrupt { run_id: String, message: String },
    #[error("bad limits: {0}")]
    Limits(String),
    #[error("the plan cannot run: {0}")]
    InvalidPlan(String),
}

/// What a run starts from, kept in the journal so a resume needs nothing else.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Settings {
    pub limits: Limits,
    /// The request in the user's words, when there is one; replans plan it again.
    pub request: Option<String>,
    pub context: Option<Value>,
    /// Extra instructions per step id, given to model-backed steps with their inputs
    /// (a specialist's instructions and the request's concrete values).
    #[serde(default)]
    pub briefs: HashMap<String, String>,
    /// Which calls wait for a person's approval (docs/security.md); a journal written
    /// before the gate existed reads as the default, `write`.
    #[serde(default)]
    pub approve: Bar,
    /// The catalog and working directory the run started with (a journal written
    /// before they were kept reads as unknown).
    #[serde(default)]
    pub origin: crate::Origin,
    /// Every answer given on a resume so far, so a later resume (an approval after an
    /// answer) still has them: a run stops once per question, not once per resume.
    #[serde(default)]
    pub answers: std::collections::BTreeMap<String, String>,
}

/// A person's answers to a stopped run's questions, given on resume.
#[derive(Debug, Clone, Default)]
pub struct Decisions {
    /// `STEP` → the answer of an `ask_user` step; `STEP.ARG` → a placeholder's value.
    pub answers: HashMap<String, String>,
    /// Steps with an unknown outcome to call again.
    pub retry: HashSet<String>,
    /// Steps with an unknown outcome that did happen: taken as done, without output.
    pub done: HashSet<String>,
    /// New limits for the rest of the run (a person raising a budget the run hit).
    pub limits: Option<Limits>,
}

/// Watches a run as it goes.
pub type EventSink = Arc<dyn Fn(&RunEvent) + Send + Sync>;

/// Runs plans over one catalog, toolbox and store.
pub struct Runner<'a, S> {
    pub catalog: &'a Catalog,
    pub store: Arc<S>,
    pub toolbox: &'a Toolbox<S>,
    pub replanner: &'a dyn Replanner,
    pub caller: String,
    pub events: Option<EventSink>,
    /// Calls held at the approval gate that may run: what the person or program driving
    /// this runner approved (`--yes`, `--approve s1,s3`, the API's approve operation).
    pub approved: Approvals,
}

/// How a step ended, as the loop needs to know it.
pub(crate) enum Outcome {
    Ok,
    Failed(String),
    /// A plan document's safety constraint refused the call: the run stops, since a
    /// replan would only look for another way around the constraint.
    Refused(String),
    Skipped,
    Limit(LimitHit),
    Ask(Vec<Question>),
}

/// How one plan's execution ended.
enum PlanEnd {
    Done,
    Failed { digest: String, tools: Vec<String> },
    Refused(String),
    Limit(LimitHit),
    Ask(Vec<Question>),
}

/// The mutable state of a run, shared by the steps of a group.
pub(crate) struct State {
    run_id: String,
    generation: u32,
    pub(crate) plan: Plan,
    pub(crate) settings: Settings,
    pub(crate) decisions: Decisions,
    /// Journal rows from earlier processes, by key.
    journal: HashMap<String, StepRow>,
    pub(crate) meter: Mutex<Meter>,
    started: Instant,
    created_at: i64,
    pub(crate) inner: Mutex<Inner>,
}

#[derive(Default)]
pub(crate) struct Inner {
    pub(crate) outputs: HashMap<String, Value>,
    /// Verdicts on plan documents' success criteria.
    pub(crate) criteria: Vec<waypoint_protocol::Criterion>,
    /// Guidance of plan documents, by the key prefix of the calls it applies to.
    pub(crate) guidance: Vec<(String, String)>,
    failed: HashSet<String>,
    steps: Vec<StepRun>,
    attempts: Vec<Attempt>,
    failed_tools: HashSet<String>,
    in_flight: HashSet<String>,
    tokens: (u32, u32),
    /// What may pass the approval gate: the runner's approvals, then what a person
    /// approved at the terminal.
    pub(crate) approved: Approvals,
}

impl State {
    /// Counts a step against `max_steps` unless an earlier process of this run already
    /// did: a resume starts its meter from the journal, so a step replayed from it is
    /// not a new step.
    pub(crate) fn admit_step(&self, key: &str) -> Result<(), LimitHit> {
        if self.journaled(key) {
            return Ok(());
        }
        lock(&self.meter).admit_step()
    }

    /// Whether an earlier process of this run journaled a call of this step (or of a
    /// call inside it: `g0/s2.1` is inside `g0/s2`).
    pub(crate) fn journaled(&self, key: &str) -> bool {
        self.journal.keys().any(|k| {
            k == key
                || k.strip_prefix(key)
                    .is_some_and(|rest| rest.starts_with('.'))
        })
    }
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn millis(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// How a run (or one pass of it) ended: what its report says besides the steps.
struct Ending {
    status: RunStatus,
    message: String,
    /// The limit that stopped it, if one did.
    limit: Option<LimitHit>,
    /// What it waits on (`needs_input`).
    questions: Vec<Question>,
    /// The completion check, when the plan got that far.
    verification: Option<Verification>,
}

impl Ending {
    fn new(status: RunStatus, message: String) -> Self {
        Self {
            status,
            message,
            limit: None,
            questions: Vec::new(),
            verification: None,
        }
    }

    fn limit(mut self, hit: Option<LimitHit>) -> Self {
        self.limit = hit;
        self
    }

    fn verified(mut self, v: Option<Verification>) -> Self {
        self.verification = v;
        self
    }
}

impl<'a, S> Runner<'a, S> {
    /// A runner for `caller` that does not replan, tells no watcher and holds every
    /// call that needs approval; set what differs on the result.
    pub fn new(
        catalog: &'a Catalog,
        store: Arc<S>,
        toolbox: &'a Toolbox<S>,
        caller: impl Into<String>,
    ) -> Self {
        Self {
            catalog,
            store,
            toolbox,
            replanner: &NoReplan,
            caller: caller.into(),
            events: None,
            approved: Approvals::default(),
        }
    }

    /// The same runner with these calls approved ahead.
    #[must_use]
    pub fn approving(mut self, approved: Approvals) -> Self {
        self.approved = approved;
        self
    }
}

impl<S: RunStore + MemoryStore + 'static> Runner<'_, S> {
    /// Starts a new run of `plan` and drives it to a final status.
    pub async fn run(&self, plan: Plan, settings: Settings) -> Result<RunReport, RunError> {
        let (row, settings) = self.new_row(&plan, settings, RunStatus::Running)?;
        self.store.create_run(&row).await?;
        self.drive(Self::fresh(row, plan, settings), false).await
    }

    /// Journals a new run of `plan` as `queued`, for whichever instance claims it first
    /// ([`RunStore::claim_run`], then [`Runner::run_claimed`]); returns its id.
    pub async fn submit(&self, plan: Plan, settings: Settings) -> Result<String, RunError> {
        let (row, _) = self.new_row(&plan, settings, RunStatus::Queued)?;
        self.store.create_run(&row).await?;
        Ok(row.run_id)
    }

    /// Drives a run this instance claimed from the queue. The runner's caller must be
    /// the run's.
    pub async fn run_claimed(&self, row: RunRow) -> Result<RunReport, RunError> {
        let corrupt = |message: String| RunError::Corrupt {
            run_id: row.run_id.clone(),
            message,
        };
        let plan: Plan =
            serde_json::from_str(&row.plan).map_err(|e| corrupt(format!("plan: {e}")))?;
        let settings: Settings =
            serde_json::from_str(&row.settings).map_err(|e| corrupt(format!("settings: {e}")))?;
        self.drive(Self::fresh(row, plan, settings), false).await
    }

    /// Checks a plan and its limits and makes the journal row of a new run.
    fn new_row(
        &self,
        plan: &Plan,
        mut settings: Settings,
        status: RunStatus,
    ) -> Result<(RunRow, Settings), RunError> {
        settings.limits.check().map_err(RunError::Limits)?;
        plan.check_shape()
            .map_err(|e| RunError::InvalidPlan(e.to_string()))?;
        crate::documents::tighten(plan, self.catalog, &mut settings.limits);
        let now = now_millis();
        let row = RunRow {
            run_id: new_run_id(),
            caller: self.caller.clone(),
            status: status.as_str().into(),
            plan: serde_json::to_string(plan).unwrap_or_default(),
            generation: 0,
            report: String::new(),
            settings: serde_json::to_string(&settings).unwrap_or_default(),
            created_at: now,
            updated_at: now,
        };
        Ok((row, settings))
    }

    /// The state of a run no step of which has been called yet.
    fn fresh(row: RunRow, plan: Plan, settings: Settings) -> State {
        State {
            run_id: row.run_id,
            generation: 0,
            meter: Mutex::new(Meter::new(settings.limits.clone(), Used::default())),
            plan,
            settings,
            decisions: Decisions::default(),
            journal: HashMap::new(),
            started: Instant::now(),
            created_at: row.created_at,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// Picks a stopped run up where its journal says it stopped.
    pub async fn resume(&self, run_id: &str, decisions: Decisions) -> Result<RunReport, RunError> {
        let row = self
            .store
            .run(&self.caller, run_id)
            .await?
            .ok_or_else(|| RunError::NoSuchRun(run_id.to_string()))?;
        let corrupt = |message: String| RunError::Corrupt {
            run_id: run_id.to_string(),
            message,
        };
        if row.status == RunStatus::Ok.as_str() || row.status == RunStatus::Cancelled.as_str() {
            return Err(RunError::NotResumable {
                run_id: run_id.to_string(),
                status: row.status,
            });
        }
        let plan: Plan =
            serde_json::from_str(&row.plan).map_err(|e| corrupt(format!("plan: {e}")))?;
        let mut settings: Settings =
            serde_json::from_str(&row.settings).map_err(|e| corrupt(format!("settings: {e}")))?;
        if let Some(limits) = &decisions.limits {
            limits.check().map_err(RunError::Limits)?;
            settings.limits = limits.clone();
        }
        let mut decisions = decisions;
        for (key, value) in &settings.answers {
            decisions
                .answers
                .entry(key.clone())
                .or_insert_with(|| value.clone());
        }
        settings.answers.extend(decisions.answers.clone());
        let earlier: Option<RunReport> = serde_json::from_str(&row.report).ok();
        let rows = self.store.steps(run_id).await?;
        let mut used = Used {
            earlier_wall_ms: earlier.as_ref().map_or(0, |r| r.totals.wall_ms),
            ..Used::default()
        };
        let mut step_keys = HashSet::new();
        for r in &rows {
            used.tool_calls += 1;
            used.usd += r.cost_usd;
            // A pipeline's inner calls (`s2.1`) belong to one plan step.
            let step = r.key.split('.').next().unwrap_or(&r.key);
            step_keys.insert(step.to_string());
        }
        used.steps = u32::try_from(step_keys.len()).unwrap_or(u32::MAX);
        let mut inner = Inner::default();
        if let Some(r) = &earlier {
            inner.attempts.clone_from(&r.attempts);
            inner.failed_tools = r
                .steps
                .iter()
                .filter(|s| s.status == StepStatus::Failed)
                .map(|s| s.tool.clone())
                .collect();
        }
        let state = State {
            run_id: run_id.to_string(),
            generation: row.generation,
            meter: Mutex::new(Meter::new(settings.limits.clone(), used)),
            plan,
            settings,
            decisions,
            journal: rows.into_iter().map(|r| (r.key.clone(), r)).collect(),
            started: Instant::now(),
            created_at: row.created_at,
            inner: Mutex::new(inner),
        };
        self.drive(state, true).await
    }

    fn emit(&self, event: &RunEvent) {
        if let Some(sink) = &self.events {
            sink(event);
        }
    }

    async fn drive(&self, mut st: State, resumed: bool) -> Result<RunReport, RunError> {
        lock(&st.inner).approved = self.approved.clone();
        self.emit(&RunEvent::RunStarted {
            run_id: st.run_id.clone(),
            plan_id: st.plan.plan_id().to_string(),
            steps: st.plan.steps().len(),
            resumed,
        });
        let budget = {
            let meter = lock(&st.meter);
            meter
                .limits()
                .max_wall()
                .saturating_sub(std::time::Duration::from_millis(
                    meter.used().earlier_wall_ms,
                ))
        };
        let ending = if let Ok(end) = tokio::time::timeout(budget, self.attempts(&mut st)).await {
            end?
        } else {
            {
                self.interrupt_in_flight(&st, "stopped by max_wall_ms")
                    .await?;
                let limits = lock(&st.meter).limits().clone();
                let used = lock(&st.meter).used().earlier_wall_ms + millis(st.started.elapsed());
                let hit = Limit::Wall.hit(limits.max_wall_ms as f64, used as f64);
                Ending::new(
                    RunStatus::Limit,
                    format!(
                        "stopped: the run reached max_wall_ms ({} ms)",
                        limits.max_wall_ms
                    ),
                )
                .limit(Some(hit))
            }
        };
        let report = Self::report(&st, ending);
        self.save(&st, &report).await?;
        self.emit(&RunEvent::RunFinished {
            report: Box::new(report.clone()),
        });
        Ok(report)
    }

    /// Tries the plan, then replans after each failure while the budget lasts.
    #[expect(
        clippy::too_many_lines,
        reason = "one loop: each end of a plan and the replan that follows, in order"
    )]
    async fn attempts(&self, st: &mut State) -> Result<Ending, RunError> {
        loop {
            let end = self.run_plan(st).await?;
            let (digest, tools, verification) = match end {
                PlanEnd::Limit(hit) => {
                    let message = format!(
                        "stopped: the next call would exceed {} ({} > {})",
                        hit.name,
                        trim_num(hit.used),
                        trim_num(hit.limit)
                    );
                    return Ok(Ending::new(RunStatus::Limit, message).limit(Some(hit)));
                }
                PlanEnd::Ask(questions) => return Ok(waiting(questions)),
                PlanEnd::Done => {
                    let v = {
                        let inner = lock(&st.inner);
                        let ok: Vec<&str> = st
                            .plan
                            .steps()
                            .iter()
                            .filter(|s| inner.outputs.contains_key(&s.id))
                            .map(|s| s.tool.as_str())
                            .collect();
                        let mut v = verify::verify(&st.plan, self.catalog, ok);
                        v.criteria.clone_from(&inner.criteria);
                        v
                    };
                    if v.passed() {
                        let n = st.plan.steps().len();
                        let message = format!(
                            "done: {n} step{} succeeded{}",
                            if n == 1 { "" } else { "s" },
                            if v.satisfied.is_empty() {
                                String::new()
                            } else {
                                format!(" and produced {}", v.satisfied.join(", "))
                            }
                        );
                        return Ok(Ending::new(RunStatus::Ok, message).verified(Some(v)));
                    }
                    let failed: Vec<&str> = v
                        .criteria
                        .iter()
                        .filter(|c| c.held == Some(false))
                        .map(|c| c.text.as_str())
                        .collect();
                    let mut parts = Vec::new();
                    if !v.missing.is_empty() {
                        parts.push(format!("missing evidence: {}", v.missing.join(", ")));
                    }
                    if !failed.is_empty() {
                        parts.push(format!("success criteria not met: {}", failed.join("; ")));
                    }
                    let digest = parts.join("; ");
                    (digest, Vec::new(), Some(v))
                }
                PlanEnd::Failed { digest, tools } => (digest, tools, None),
                PlanEnd::Refused(why) => {
                    let message = format!(
                        "stopped: {why}; a safety constraint refused the call, so no replan looks for another way around it"
                    );
                    return Ok(Ending::new(RunStatus::Failed, message));
                }
            };
            // Replan, within the budget.
            let tried_tools: Vec<String> = st.plan.steps().iter().map(|s| s.tool.clone()).collect();
            let attempt = Attempt {
                generation: st.generation,
                plan_id: st.plan.plan_id().to_string(),
                tools: tried_tools,
                digest: digest.clone(),
            };
            let max_replans = lock(&st.meter).limits().max_replans;
            {
                let mut inner = lock(&st.inner);
                inner.failed_tools.extend(tools);
                inner.attempts.push(attempt.clone());
            }
            if st.generation >= max_replans {
                let hit = Limit::Replans.hit(f64::from(max_replans), f64::from(st.generation + 1));
                let message = format!(
                    "needs a human: {} plan{} tried and max_replans ({max_replans}) is used up; last failure: {digest}",
                    st.generation + 1,
                    if st.generation == 0 { "" } else { "s" }
                );
                return Ok(Ending::new(RunStatus::NeedsHuman, message)
                    .limit(Some(hit))
                    .verified(verification));
            }
            let next = {
                let inner = lock(&st.inner);
                let tried: Vec<Vec<String>> =
                    inner.attempts.iter().map(|a| a.tools.clone()).collect();
                let request = st.settings.request.clone().unwrap_or_default();
                self.replanner.replan(&ReplanAsk {
                    request: &request,
                    context: st.settings.context.as_ref(),
                    failed_tools: &inner.failed_tools,
                    digest: &digest,
                    tried: &tried,
                })
            };
            let Some(next) = next else {
                let message = format!(
                    "needs a human: no other plan avoids what failed; last failure: {digest}"
                );
                return Ok(Ending::new(RunStatus::NeedsHuman, message).verified(verification));
            };
            self.emit(&RunEvent::Replanned {
                run_id: st.run_id.clone(),
                attempt,
            });
            st.generation += 1;
            st.plan = next;
            // Approvals were of the old plan's steps; the new plan's `s1` is another call.
            // (A runner's own approvals of steps are its caller's to keep or not.)
            {
                let mut inner = lock(&st.inner);
                inner.outputs.clear();
                inner.failed.clear();
                inner.approved.steps.clear();
            }
            let report = Self::report(st, Ending::new(RunStatus::Running, "replanned".into()));
            self.save(st, &report).await?;
        }
    }

    /// Runs every group of the current plan.
    async fn run_plan(&self, st: &State) -> Result<PlanEnd, RunError> {
        let groups: BTreeSet<u32> = st.plan.steps().iter().map(|s| s.group).collect();
        let gate = Semaphore::new(lock(&st.meter).limits().concurrency);
        let mut failures = Vec::new();
        let mut failed_tools = Vec::new();
        let mut refusals = Vec::new();
        for g in groups {
            let group: Vec<&Step> = st.plan.steps().iter().filter(|s| s.group == g).collect();
            for wave in self.waves(&group) {
                let results = futures_util::future::join_all(wave.iter().map(|step| async {
                    let _permit = gate.acquire().await;
                    self.run_step(st, step).await
                }))
                .await;
                let mut questions = Vec::new();
                let mut limit = None;
                for (step, result) in wave.iter().zip(results) {
                    match result? {
                        Outcome::Ok | Outcome::Skipped => {}
                        Outcome::Failed(e) => {
                            failures.push(format!("{} ({}) failed: {e}", step.id, step.tool));
                            failed_tools.push(step.tool.clone());
                        }
                        Outcome::Refused(why) => refusals.push(format!("{}: {why}", step.id)),
                        Outcome::Limit(hit) => limit = limit.or(Some(hit)),
                        Outcome::Ask(q) => questions.extend(q),
                    }
                }
                if !refusals.is_empty() {
                    return Ok(PlanEnd::Refused(refusals.join("; ")));
                }
                if let Some(hit) = limit {
                    return Ok(PlanEnd::Limit(hit));
                }
                if !questions.is_empty() {
                    return Ok(PlanEnd::Ask(questions));
                }
            }
        }
        if failures.is_empty() {
            Ok(PlanEnd::Done)
        } else {
            Ok(PlanEnd::Failed {
                digest: failures.join("; "),
                tools: failed_tools,
            })
        }
    }

    /// Splits a group into waves that run one after another: steps that only read run
    /// together, and a step that changes the world runs alone, in plan order — two
    /// steps with no data dependency may still touch the same file or record.
    fn waves<'s>(&self, group: &[&'s Step]) -> Vec<Vec<&'s Step>> {
        let mut waves: Vec<Vec<&Step>> = Vec::new();
        let mut reads: Vec<&Step> = Vec::new();
        for step in group {
            if self.effects(step) == Effects::Read {
                reads.push(step);
            } else {
                if !reads.is_empty() {
                    waves.push(std::mem::take(&mut reads));
                }
                waves.push(vec![step]);
            }
        }
        if !reads.is_empty() {
            waves.push(reads);
        }
        waves
    }

    /// The strongest effects a step may have: its tool's, or any tool of its pipeline
    /// (a plan document's steps run in order inside its one step, so it counts as a
    /// write and other steps of the group wait for it).
    fn effects(&self, step: &Step) -> Effects {
        approval::strongest(self.catalog, &step.tool)
    }
}

/// The ending of a run that waits on people: `needs_approval` when every question is an
/// approval, `needs_input` otherwise (answers first; approvals come up again after).
fn waiting(questions: Vec<Question>) -> Ending {
    let approvals: Vec<String> = questions
        .iter()
        .filter(|q| q.expects == "approve")
        .map(|q| match &q.call {
            Some(c) => format!("{} ({}, {})", q.key, c.tool, c.effects),
            None => q.key.clone(),
        })
        .collect();
    if approvals.len() == questions.len() {
        return Ending {
            questions,
            ..Ending::new(
                RunStatus::NeedsApproval,
                format!("waiting for approval of {}", approvals.join(", ")),
            )
        };
    }
    let message = format!(
        "waiting for {} answer{}",
        questions.len(),
        if questions.len() == 1 { "" } else { "s" },
    );
    Ending {
        questions,
        ..Ending::new(RunStatus::NeedsInput, message)
    }
}

fn trim_num(x: f64) -> String {
    let s = format!("{x:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}
