//! The executor loop (seed 001): run a plan's groups in order and the steps of a group
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

use crate::adapters::{Call, Output, ToolError, Toolbox};
use crate::limits::{Limit, Limits, Meter, Used};
use crate::refs::{self, RefError};
use crate::replan::{ReplanAsk, Replanner};
use crate::verify;

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
    /// (a specialist's instructions and the request's concrete values, seed 004).
    #[serde(default)]
    pub briefs: HashMap<String, String>,
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
}

/// How a step ended, as the loop needs to know it.
pub(crate) enum Outcome {
    Ok,
    Failed(String),
    Skipped,
    Limit(LimitHit),
    Ask(Vec<Question>),
}

/// How one plan's execution ended.
enum PlanEnd {
    Done,
    Failed { digest: String, tools: Vec<String> },
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

/// A new run id: time and process, hashed (`run_` and 16 hex digits).
pub fn new_run_id() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut h = Sha256::new();
    h.update(nanos.to_le_bytes());
    h.update(std::process::id().to_le_bytes());
    h.update(format!("{:p}", &nanos).as_bytes());
    let d = h.finalize();
    format!("run_{}", hex(&d[..8]))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn idempotency_key(run_id: &str, key: &str, args: &Map<String, Value>) -> String {
    let mut h = Sha256::new();
    h.update(run_id.as_bytes());
    h.update([0]);
    h.update(key.as_bytes());
    h.update([0]);
    h.update(waypoint_store::args_sha(args).as_bytes());
    hex(&h.finalize()[..12])
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
        check_plan(plan).map_err(RunError::InvalidPlan)?;
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
        if row.status == RunStatus::Ok.as_str() {
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
                PlanEnd::Ask(questions) => {
                    let message = format!(
                        "waiting for {} answer{}",
                        questions.len(),
                        if questions.len() == 1 { "" } else { "s" },
                    );
                    return Ok(Ending {
                        questions,
                        ..Ending::new(RunStatus::NeedsInput, message)
                    });
                }
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
            {
                let mut inner = lock(&st.inner);
                inner.outputs.clear();
                inner.failed.clear();
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
                        Outcome::Limit(hit) => limit = limit.or(Some(hit)),
                        Outcome::Ask(q) => questions.extend(q),
                    }
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

    /// The strongest effects a step may have: its tool's, or any tool of its pipeline.
    fn effects(&self, step: &Step) -> Effects {
        match self.catalog.entry(&step.tool) {
            Some(Entry::Tool(t)) => t.effects,
            Some(Entry::Pipeline(p)) => {
                let tools = self.flatten(&p.steps, 0);
                if tools.iter().all(|t| t.effects == Effects::Read) {
                    Effects::Read
                } else {
                    Effects::Write
                }
            }
            // A plan document's steps run in order inside its one step; other steps of
            // the group wait for it.
            Some(Entry::Plan(_)) => Effects::Write,
            None => Effects::Read,
        }
    }

    /// Runs one plan step: replayed from the journal, asked about, or called.
    pub(crate) async fn run_step(&self, st: &State, step: &Step) -> Result<Outcome, RunError> {
        let key = format!("g{}/{}", st.generation, step.id);
        // A step that depends on one that did not succeed is not called.
        let deps = dependencies(step);
        {
            let inner = lock(&st.inner);
            if let Some(dep) = deps.iter().find(|d| !inner.outputs.contains_key(*d)) {
                drop(inner);
                self.record_local(
                    st,
                    step,
                    &key,
                    StepStatus::Skipped,
                    None,
                    Some(format!("not run: it needs {dep}, which did not succeed")),
                );
                return Ok(Outcome::Skipped);
            }
        }
        if step.kind == StepKind::Unknown {
            let why = format!("no catalog tool can do this ({})", step.rationale);
            self.record_local(st, step, &key, StepStatus::Failed, None, Some(why.clone()));
            return Ok(Outcome::Failed(why));
        }
        if step.kind == StepKind::Plan || crate::documents::is_plan_id(&step.tool) {
            return self.run_document_step(st, step, &key).await;
        }
        if step.kind == StepKind::Pipeline
            && let Some(p) = self.catalog.pipeline(&step.tool)
        {
            let tools = self.flatten(&p.steps, 0);
            return self.run_pipeline(st, step, &key, &tools).await;
        }
        let subtask_tool;
        let tool = match self.tool_for(step) {
            Ok(t) => t,
            Err(_) if step.kind == StepKind::LlmSubtask => {
                subtask_tool = subtask(step);
                &subtask_tool
            }
            Err(why) => {
                self.record_local(st, step, &key, StepStatus::Failed, None, Some(why.clone()));
                return Ok(Outcome::Failed(why));
            }
        };
        let args = match self.prepare_args(st, step, tool) {
            Ok(a) => a,
            Err(Prep::Ask(q)) => return Ok(Outcome::Ask(vec![q])),
            Err(Prep::Fail(why)) => {
                self.record_local(st, step, &key, StepStatus::Failed, None, Some(why.clone()));
                return Ok(Outcome::Failed(why));
            }
        };
        if let Err(hit) = lock(&st.meter).admit_step() {
            return Ok(Outcome::Limit(hit));
        }
        match self.call_once(st, step, tool, &key, args).await? {
            Ok(v) => {
                lock(&st.inner).outputs.insert(step.id.clone(), v);
                Ok(Outcome::Ok)
            }
            Err(o) => Ok(o),
        }
    }

    /// A pipeline runs as one step: its tools in order, each given the step's args it
    /// declares and, for required text it still lacks, the previous tool's output.
    async fn run_pipeline(
        &self,
        st: &State,
        step: &Step,
        key: &str,
        tools: &[&Tool],
    ) -> Result<Outcome, RunError> {
        if let Err(hit) = lock(&st.meter).admit_step() {
            return Ok(Outcome::Limit(hit));
        }
        let base = {
            let inner = lock(&st.inner);
            match refs::resolve(&step.args, &inner.outputs, None) {
                Ok(a) => a,
                Err(e) => return Ok(Outcome::Failed(e.to_string())),
            }
        };
        let mut previous: Option<Value> = None;
        for (i, tool) in tools.iter().enumerate() {
            let inner_key = format!("{key}.{}", i + 1);
            let mut args = Map::new();
            for (name, _) in tool.properties() {
                if let Some(v) = base.get(name) {
                    args.insert(name.to_string(), v.clone());
                }
            }
            if let Some(prev) = &previous {
                for name in tool.required() {
                    if !args.contains_key(name) {
                        args.insert(name.to_string(), Value::String(refs::text_of(prev)));
                    }
                }
            }
            apply_defaults(tool, &mut args);
            if let Err(why) = check_args(self.catalog, tool, &args) {
                let why = format!("{} in pipeline {}: {why}", tool.name, step.tool);
                self.record_local(
                    st,
                    step,
                    &inner_key,
                    StepStatus::Failed,
                    None,
                    Some(why.clone()),
                );
                return Ok(Outcome::Failed(why));
            }
            match self.call_once(st, step, tool, &inner_key, args).await? {
                Ok(v) => previous = Some(v),
                Err(o) => return Ok(o),
            }
        }
        lock(&st.inner)
            .outputs
            .insert(step.id.clone(), previous.unwrap_or(Value::Null));
        Ok(Outcome::Ok)
    }

    /// One journaled call: replayed when the journal has its end, asked about when the
    /// journal says it started and never ended, made otherwise.
    #[expect(
        clippy::too_many_lines,
        reason = "the journal protocol of one call reads best in one place: replay, ask, admit, begin, call, finish"
    )]
    pub(crate) async fn call_once(
        &self,
        st: &State,
        step: &Step,
        tool: &Tool,
        key: &str,
        args: Map<String, Value>,
    ) -> Result<Result<Value, Outcome>, RunError> {
        // An answer given on resume is the ask_user step's output; nobody is asked twice.
        if is_ask(step, tool)
            && let Some(answer) = st.decisions.answers.get(&step.id)
        {
            let value = serde_json::json!({ "answer": answer });
            self.journal_answer(st, step, tool, key, &value).await?;
            return Ok(Ok(value));
        }
        if let Some(row) = st.journal.get(key) {
            match StepStatus::parse(&row.status) {
                Some(StepStatus::Ok) => {
                    let value: Value = serde_json::from_str(&row.output).unwrap_or(Value::Null);
                    self.record_replayed(st, step, row, Some(value.clone()));
                    return Ok(Ok(value));
                }
                Some(StepStatus::Skipped)
                    if st.decisions.done.contains(&step.id) || row.error.is_none() =>
                {
                    self.record_replayed(st, step, row, None);
                    return Ok(Ok(Value::Null));
                }
                Some(StepStatus::Running | StepStatus::Interrupted) => {
                    if st.decisions.done.contains(&step.id) {
                        let end = StepEnd {
                            status: StepStatus::Skipped.as_str().into(),
                            output: "null".into(),
                            error: None,
                            latency_ms: row.latency_ms,
                            prompt_tokens: 0,
                            completion_tokens: 0,
                            cost_usd: row.cost_usd,
                            finished_at: now_millis(),
                        };
                        self.store.finish_step(&st.run_id, key, &end).await?;
                        self.record_replayed(st, step, row, None);
                        return Ok(Ok(Value::Null));
                    }
                    let safe = tool.effects == Effects::Read;
                    if !safe && !st.decisions.retry.contains(&step.id) {
                        return Ok(Err(Outcome::Ask(vec![Question {
                            step_id: step.id.clone(),
                            text: format!(
                                "{} ({}, effects {}) was called but the run stopped before it answered, so whether it happened is unknown. Check, then say whether to call it again (retry) or take it as done.",
                                step.id,
                                tool.name,
                                tool.effects.as_str(),
                            ),
                            expects: "retry_or_done".into(),
                            key: step.id.clone(),
                        }])));
                    }
                }
                // A failed call is not repeated within the same plan.
                Some(StepStatus::Failed) => {
                    let why = row.error.clone().unwrap_or_else(|| "failed".into());
                    self.record_replayed(st, step, row, None);
                    return Ok(Err(Outcome::Failed(why)));
                }
                _ => {}
            }
        }
        if let Err(hit) = lock(&st.meter).admit_call(tool.cost_usd) {
            return Ok(Err(Outcome::Limit(hit)));
        }
        let inputs: Vec<(String, Value)> = {
            let inner = lock(&st.inner);
            step.input_refs
                .iter()
                .filter_map(|r| inner.outputs.get(r).map(|v| (r.clone(), v.clone())))
                .chain(
                    st.settings
                        .briefs
                        .get(&step.id)
                        .map(|b| ("the brief".to_string(), Value::String(b.clone()))),
                )
                .chain(
                    inner
                        .guidance
                        .iter()
                        .filter(|(prefix, _)| key.starts_with(prefix.as_str()))
                        .map(|(_, g)| ("guidance".to_string(), Value::String(g.clone()))),
                )
                .collect()
        };
        let idem = idempotency_key(&st.run_id, key, &args);
        let started_at = now_millis();
        self.store
            .begin_step(&StepRow {
                run_id: st.run_id.clone(),
                key: key.to_string(),
                tool: tool.name.clone(),
                status: StepStatus::Running.as_str().into(),
                idempotency_key: idem.clone(),
                output: String::new(),
                error: None,
                latency_ms: 0,
                prompt_tokens: 0,
                completion_tokens: 0,
                cost_usd: tool.cost_usd,
                started_at,
                finished_at: None,
            })
            .await?;
        lock(&st.inner).in_flight.insert(key.to_string());
        self.emit(&RunEvent::StepStarted {
            run_id: st.run_id.clone(),
            key: key.to_string(),
            step_id: step.id.clone(),
            tool: tool.name.clone(),
        });
        let call = Call {
            tool,
            step_id: &step.id,
            args,
            inputs,
            idempotency_key: idem,
            caller: &self.caller,
        };
        let timeout = lock(&st.meter).limits().tool_timeout();
        let t0 = Instant::now();
        let result = match tokio::time::timeout(timeout, self.dispatch(step, &call, timeout)).await
        {
            Ok(r) => r,
            Err(_) => Err(ToolError::Failed(format!(
                "`{}` ran longer than the tool timeout ({} ms)",
                tool.name,
                millis(timeout)
            ))),
        };
        let latency_ms = millis(t0.elapsed());
        let (status, output, error, usage) = match &result {
            Ok(o) => (StepStatus::Ok, Some(o.value.clone()), None, o.clone()),
            Err(ToolError::NeedsInput(_)) => {
                (StepStatus::Interrupted, None, None, Output::default())
            }
            Err(e) => (
                StepStatus::Failed,
                None,
                Some(e.to_string()),
                Output::default(),
            ),
        };
        let cost = tool.cost_usd + usage.model_usd;
        lock(&st.meter).charge(usage.model_usd);
        self.store
            .finish_step(
                &st.run_id,
                key,
                &StepEnd {
                    status: status.as_str().into(),
                    output: output.as_ref().map(Value::to_string).unwrap_or_default(),
                    error: error.clone(),
                    latency_ms: i64::try_from(latency_ms).unwrap_or(i64::MAX),
                    prompt_tokens: i64::from(usage.prompt_tokens),
                    completion_tokens: i64::from(usage.completion_tokens),
                    cost_usd: cost,
                    finished_at: now_millis(),
                },
            )
            .await?;
        let run = StepRun {
            key: key.to_string(),
            step_id: step.id.clone(),
            tool: tool.name.clone(),
            status,
            output: output.clone(),
            error: error.clone(),
            latency_ms,
            prompt_tokens: usage.prompt_tokens,
            completion_tokens: usage.completion_tokens,
            cost_usd: cost,
            replayed: false,
        };
        {
            let mut inner = lock(&st.inner);
            inner.in_flight.remove(key);
            inner.tokens.0 += usage.prompt_tokens;
            inner.tokens.1 += usage.completion_tokens;
            inner.steps.push(run.clone());
        }
        self.emit(&RunEvent::StepFinished {
            run_id: st.run_id.clone(),
            step: run,
        });
        match result {
            Ok(o) => {
                if let Some(hit) = lock(&st.meter).over_budget() {
                    lock(&st.inner)
                        .outputs
                        .insert(step.id.clone(), o.value.clone());
                    return Ok(Err(Outcome::Limit(hit)));
                }
                Ok(Ok(o.value))
            }
            Err(ToolError::NeedsInput(q)) => Ok(Err(Outcome::Ask(vec![Question {
                step_id: step.id.clone(),
                text: q,
                expects: "answer".into(),
                key: step.id.clone(),
            }]))),
            Err(e) => Ok(Err(Outcome::Failed(e.to_string()))),
        }
    }

    /// Journals an answer as the finished call of its `ask_user` step.
    async fn journal_answer(
        &self,
        st: &State,
        step: &Step,
        tool: &Tool,
        key: &str,
        value: &Value,
    ) -> Result<(), RunError> {
        let now = now_millis();
        self.store
            .begin_step(&StepRow {
                run_id: st.run_id.clone(),
                key: key.to_string(),
                tool: tool.name.clone(),
                status: StepStatus::Ok.as_str().into(),
                idempotency_key: idempotency_key(&st.run_id, key, &step.args),
                output: value.to_string(),
                error: None,
                latency_ms: 0,
                prompt_tokens: 0,
                completion_tokens: 0,
                cost_usd: 0.0,
                started_at: now,
                finished_at: Some(now),
            })
            .await?;
        self.record_local(st, step, key, StepStatus::Ok, Some(value.clone()), None);
        Ok(())
    }

    async fn dispatch(
        &self,
        step: &Step,
        call: &Call<'_>,
        timeout: std::time::Duration,
    ) -> Result<Output, ToolError> {
        if step.kind == StepKind::LlmSubtask && call.tool.run.is_none() {
            return self.toolbox.subtask(call, timeout).await;
        }
        self.toolbox.call(call, timeout).await
    }

    /// The catalog tool a step calls; only catalog tools run (the allowlist).
    pub(crate) fn tool_for(&self, step: &Step) -> Result<&Tool, String> {
        match self.catalog.entry(&step.tool) {
            Some(Entry::Tool(t)) => Ok(t),
            Some(Entry::Pipeline(_)) => Err(format!("`{}` is a pipeline, not a tool", step.tool)),
            Some(Entry::Plan(_)) => Err(format!("`{}` is a plan document, not a tool", step.tool)),
            None if step.kind == StepKind::Plan => Err(format!(
                "`{}` is a plan document; this catalog has none by that id",
                step.tool
            )),
            None => Err(format!(
                "`{}` is not in the catalog, so it may not run",
                step.tool
            )),
        }
    }

    fn flatten<'c>(&'c self, names: &[String], depth: usize) -> Vec<&'c Tool> {
        if depth > MAX_PIPELINE_DEPTH {
            return Vec::new();
        }
        names
            .iter()
            .flat_map(|n| match self.catalog.entry(n) {
                Some(Entry::Tool(t)) => vec![t],
                Some(Entry::Pipeline(p)) => self.flatten(&p.steps, depth + 1),
                Some(Entry::Plan(_)) | None => Vec::new(),
            })
            .collect()
    }

    /// Makes a step's args concrete and checks them against the tool's schema.
    fn prepare_args(
        &self,
        st: &State,
        step: &Step,
        tool: &Tool,
    ) -> Result<Map<String, Value>, Prep> {
        let mut args = step.args.clone();
        // Answers given on resume fill placeholders (`STEP.ARG`) and ask_user steps.
        for (name, value) in &mut args {
            if value.get("$placeholder").is_some()
                && let Some(a) = st.decisions.answers.get(&format!("{}.{name}", step.id))
            {
                *value = Value::String(a.clone());
            }
        }
        let resolved = {
            let inner = lock(&st.inner);
            refs::resolve(&args, &inner.outputs, tool.input_schema.as_ref())
        };
        let mut args = match resolved {
            Ok(a) => a,
            Err(RefError::Placeholder { arg, what }) => {
                return Err(Prep::Ask(Question {
                    step_id: step.id.clone(),
                    text: format!(
                        "What should `{arg}` ({what}) be for {} ({})?",
                        step.id, tool.name
                    ),
                    expects: "answer".into(),
                    key: format!("{}.{arg}", step.id),
                }));
            }
            Err(e) => return Err(Prep::Fail(e.to_string())),
        };
        apply_defaults(tool, &mut args);
        check_args(self.catalog, tool, &args).map_err(Prep::Fail)?;
        Ok(args)
    }

    /// Records a step that ended without a call (skipped, refused before calling).
    pub(crate) fn record_local(
        &self,
        st: &State,
        step: &Step,
        key: &str,
        status: StepStatus,
        output: Option<Value>,
        error: Option<String>,
    ) {
        let run = StepRun {
            key: key.to_string(),
            step_id: step.id.clone(),
            tool: step.tool.clone(),
            status,
            output,
            error,
            latency_ms: 0,
            prompt_tokens: 0,
            completion_tokens: 0,
            cost_usd: 0.0,
            replayed: false,
        };
        lock(&st.inner).steps.push(run.clone());
        self.emit(&RunEvent::StepFinished {
            run_id: st.run_id.clone(),
            step: run,
        });
    }

    fn record_replayed(&self, st: &State, step: &Step, row: &StepRow, output: Option<Value>) {
        let run = StepRun {
            key: row.key.clone(),
            step_id: step.id.clone(),
            tool: row.tool.clone(),
            status: StepStatus::parse(&row.status).unwrap_or(StepStatus::Failed),
            output,
            error: row.error.clone(),
            latency_ms: u64::try_from(row.latency_ms).unwrap_or(0),
            prompt_tokens: u32::try_from(row.prompt_tokens).unwrap_or(0),
            completion_tokens: u32::try_from(row.completion_tokens).unwrap_or(0),
            cost_usd: row.cost_usd,
            replayed: true,
        };
        lock(&st.inner).steps.push(run.clone());
        self.emit(&RunEvent::StepFinished {
            run_id: st.run_id.clone(),
            step: run,
        });
    }

    /// Marks calls cut off by the wall-time limit, so a resume knows their outcome is
    /// unknown rather than still running somewhere.
    async fn interrupt_in_flight(&self, st: &State, why: &str) -> Result<(), RunError> {
        let keys: Vec<String> = lock(&st.inner).in_flight.drain().collect();
        for key in keys {
            let end = StepEnd {
                status: StepStatus::Interrupted.as_str().into(),
                output: String::new(),
                error: Some(why.to_string()),
                latency_ms: 0,
                prompt_tokens: 0,
                completion_tokens: 0,
                cost_usd: 0.0,
                finished_at: now_millis(),
            };
            self.store.finish_step(&st.run_id, &key, &end).await?;
        }
        Ok(())
    }

    fn report(st: &State, end: Ending) -> RunReport {
        let Ending {
            status,
            message,
            limit,
            questions,
            verification,
        } = end;
        let inner = lock(&st.inner);
        let used = lock(&st.meter).used();
        RunReport {
            run_id: st.run_id.clone(),
            status,
            message,
            plan_id: st.plan.plan_id().to_string(),
            generation: st.generation,
            steps: inner.steps.clone(),
            limit,
            questions,
            attempts: inner.attempts.clone(),
            verification,
            totals: RunTotals {
                steps: used.steps,
                tool_calls: used.tool_calls,
                cost_usd: used.usd,
                wall_ms: used.earlier_wall_ms + millis(st.started.elapsed()),
                prompt_tokens: inner.tokens.0,
                completion_tokens: inner.tokens.1,
                replans: st.generation,
            },
        }
    }

    async fn save(&self, st: &State, report: &RunReport) -> Result<(), RunError> {
        let row = RunRow {
            run_id: st.run_id.clone(),
            caller: self.caller.clone(),
            status: report.status.as_str().into(),
            plan: serde_json::to_string(&st.plan).unwrap_or_default(),
            generation: st.generation,
            report: serde_json::to_string(report).unwrap_or_default(),
            settings: serde_json::to_string(&st.settings).unwrap_or_default(),
            created_at: st.created_at,
            updated_at: now_millis(),
        };
        self.store.update_run(&row).await?;
        Ok(())
    }
}

/// Whether a step asks the user: by kind, or by its tool's built-in.
fn is_ask(step: &Step, tool: &Tool) -> bool {
    step.kind == StepKind::AskUser
        || matches!(&tool.run, Some(waypoint_catalog::RunSpec::Builtin(b)) if b == "ask_user")
}

/// The ad-hoc tool an `llm_subtask` step that names no catalog tool runs as: it reads
/// nothing but its inputs and writes nothing.
fn subtask(step: &Step) -> Tool {
    Tool {
        name: step.tool.clone(),
        description: step.rationale.clone(),
        keywords: Vec::new(),
        examples: Vec::new(),
        input_schema: None,
        accepts: Vec::new(),
        produces: Vec::new(),
        effects: Effects::Read,
        cost_usd: 0.0,
        run: None,
        at: waypoint_catalog::Location {
            file: String::new(),
            line: 0,
            col: 0,
        },
    }
}

enum Prep {
    Ask(Question),
    Fail(String),
}

/// A plan's shape must let it run: unique step ids, and every step after the steps it
/// consumes (in a later group). Plans from the planner always pass; plan files may not.
fn check_plan(plan: &Plan) -> Result<(), String> {
    let mut groups: HashMap<&str, u32> = HashMap::new();
    for step in plan.steps() {
        if groups.insert(step.id.as_str(), step.group).is_some() {
            return Err(format!("step id `{}` is used twice", step.id));
        }
    }
    for step in plan.steps() {
        for dep in dependencies(step) {
            match groups.get(dep.as_str()) {
                None => {
                    return Err(format!(
                        "step `{}` needs `{dep}`, which is not a step of this plan",
                        step.id
                    ));
                }
                Some(g) if *g >= step.group => {
                    return Err(format!(
                        "step `{}` (group {}) needs `{dep}` (group {g}); a step must be in a later group than what it consumes or follows",
                        step.id, step.group
                    ));
                }
                Some(_) => {}
            }
        }
    }
    Ok(())
}

/// Steps that must succeed before this one: those whose output it consumes (its
/// `input_refs` and every `$ref` in its args) and those the request ordered it after
/// (`after`: "run the tests, then deploy" does not deploy when the tests fail).
fn dependencies(step: &Step) -> BTreeSet<String> {
    fn walk(v: &Value, out: &mut BTreeSet<String>) {
        match v {
            Value::Object(o) => {
                if let Some(Value::String(r)) = o.get("$ref")
                    && let Some((id, _)) = r.split_once('/')
                {
                    out.insert(id.to_string());
                }
                o.values().for_each(|v| walk(v, out));
            }
            Value::Array(a) => a.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out: BTreeSet<String> = step.input_refs.iter().chain(&step.after).cloned().collect();
    for v in step.args.values() {
        walk(v, &mut out);
    }
    out
}

/// Fills args the schema gives a `default` for.
pub(crate) fn apply_defaults(tool: &Tool, args: &mut Map<String, Value>) {
    for (name, schema) in tool.properties() {
        if !args.contains_key(name)
            && let Some(d) = schema.get("default")
        {
            args.insert(name.to_string(), d.clone());
        }
    }
}

/// Checks args against the tool's input schema, naming each violation. A catalog
/// tool's schema is compiled once per catalog ([`Catalog::validator`]); a tool made for
/// one step (a model subtask) is compiled here.
pub(crate) fn check_args(
    catalog: &Catalog,
    tool: &Tool,
    args: &Map<String, Value>,
) -> Result<(), String> {
    let Some(schema) = &tool.input_schema else {
        return Ok(());
    };
    let compiled;
    let from_catalog = catalog
        .tool(&tool.name)
        .is_some_and(|t| std::ptr::eq(t, tool));
    let validator = match catalog.validator(&tool.name) {
        Some(v) if from_catalog => v,
        _ => {
            compiled = jsonschema::validator_for(schema).map_err(|e| {
                format!(
                    "`{}` has an input_schema that does not compile: {e}",
                    tool.name
                )
            })?;
            &compiled
        }
    };
    let instance = Value::Object(args.clone());
    let errors: Vec<String> = validator
        .iter_errors(&instance)
        .take(5)
        .map(|e| {
            let at = e.instance_path().to_string();
            if at.is_empty() {
                e.to_string()
            } else {
                format!("{at}: {e}")
            }
        })
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "args for `{}` do not match its input_schema: {}",
            tool.name,
            errors.join("; ")
        ))
    }
}

fn trim_num(x: f64) -> String {
    let s = format!("{x:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}
