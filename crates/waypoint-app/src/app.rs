//! The operations, for a caller, whichever face the call came in by: plan, route,
//! understand, history, forget, run, submit, resume, runs.
//!
//! Each answers typed values or an [`AppError`]; the faces render them (the CLI for a
//! person, MCP and HTTP as JSON) and say what to do about an error in their own terms.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Instant;

use tracing::Instrument as _;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use waypoint_catalog::plans::PlanRef;
use waypoint_core::Engine;
use waypoint_protocol::{Plan, RouteReport, RunReport, RunStatus, StepKind, Understanding};
use waypoint_run::{
    Approvals, Asking, Decisions, Destinations, EventSink, Limits, Origin, Recovery, Runner,
    Settings, Toolbox,
};
use waypoint_store::{
    Cursor, Forget, HistoryFilter, HistoryRow, HistoryStore as _, MyPlan, Outcome, RunStore as _,
    now_unix, project,
};
use waypoint_stores::Store;

use crate::contract::{History, HistoryPage, MyPlans, RunSummary, RunsPage};
use crate::error::AppError;
use crate::history::{Counts, LearnedCache, Recorder, WriteBehind};
use crate::limits::{LimitOverrides, layered};
use crate::live::{Live, Snapshot};
use crate::planner::Planner;
use crate::setup::{Notice, Setup};

/// How often expired history is deleted: reads already hide it; this keeps the store
/// from growing without bound.
const PURGE_EVERY_SECS: i64 = 3_600;

/// What runs may do in this application; absent, runs are refused.
#[derive(Debug, Clone)]
pub struct RunPolicy {
    /// The directory file tools are confined to and commands run in, unless a run
    /// names its own.
    pub workdir: PathBuf,
}

/// How one run goes: where, under which overrides, watched by whom.
#[derive(Clone, Default)]
pub struct RunOptions {
    /// Over the policy's working directory.
    pub workdir: Option<PathBuf>,
    /// Over `[run]` of the configuration.
    pub limits: LimitOverrides,
    pub events: Option<EventSink>,
    /// Whether a person at a terminal answers `ask_user` steps and approvals.
    pub asking: Option<Asking>,
    /// Calls the caller approved ahead (`--yes`, `--approve s1,s3`, the API's approve).
    pub approved: Approvals,
}

/// What a run would do (`run --dry-run`): nothing of it was called.
#[derive(Debug, Clone, Serialize)]
pub struct DryRun {
    /// The approval bar the run would use (`[run] approve`).
    pub bar: waypoint_run::ApproveBar,
    pub steps: Vec<DryStep>,
    pub plan: Plan,
}

/// One step of a dry run.
#[derive(Debug, Clone, Serialize)]
pub struct DryStep {
    pub step_id: String,
    pub tool: String,
    /// The strongest effects of its calls (a pipeline's strongest tool).
    pub effects: String,
    /// As planned: references to earlier outputs are not resolved yet.
    pub args: serde_json::Value,
    /// Whether it would stop at the approval gate, given the approvals passed.
    pub waits_for_approval: bool,
}

/// What a run starts from: a request to plan, or a plan already made.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SubmitInput {
    /// The request to plan and run.
    #[serde(default)]
    pub request: Option<String>,
    /// A plan (as `/v1/plan` answers it) to run as it is.
    #[serde(default)]
    pub plan: Option<Plan>,
    #[serde(default)]
    pub context: Option<serde_json::Value>,
}

/// The application: one configuration, one store, the planner and the engine, shared by
/// every call of every face.
pub struct App {
    live: Arc<Live>,
    store: Option<Arc<Store>>,
    /// Why the store is off when it could not be opened.
    store_error: Option<String>,
    runs: Option<RunPolicy>,
    /// History written behind the request (a server), with the learned-plan cache;
    /// `None`: every row is committed before its plan is answered (a command).
    behind: Option<Behind>,
    /// Unix seconds of the last purge of expired history.
    purged_at: AtomicI64,
    /// Where this application's own server listens: runs never call it.
    own_addresses: std::sync::RwLock<Vec<std::net::SocketAddr>>,
    /// What the application was opened with, to build a stopped run's own catalog
    /// again when it resumes elsewhere; `None` for parts built by hand.
    setup: Option<Setup>,
    /// The catalog files in service, absolute, as runs record them.
    catalog_paths: Vec<PathBuf>,
}

struct Behind {
    recorder: Recorder,
    learned: LearnedCache,
}

impl App {
    /// Opens what `setup` names: the configuration, the engine, the planner and the
    /// store. A store that cannot be opened turns history off with a notice; the rest
    /// must load.
    pub async fn open(
        setup: &Setup,
        runs: Option<RunPolicy>,
    ) -> Result<(Self, Vec<Notice>), AppError> {
        let (first, notices) = snapshot(setup)?;
        Self::open_with(setup, Live::fixed(first), notices, runs).await
    }

    /// [`App::open`] for a long-lived application: the snapshot is built again from the
    /// same setup when a catalog file, a training file or the config changes, or on
    /// SIGHUP, once [`Live::watch`] runs.
    pub async fn open_reloading(
        setup: &Setup,
        runs: Option<RunPolicy>,
    ) -> Result<(Self, Vec<Notice>), AppError> {
        let (first, notices) = snapshot(setup)?;
        let again = setup.clone();
        let loader: crate::live::Loader =
            Box::new(move || snapshot(&again).map(|(s, _)| s).map_err(|e| describe(&e)));
        let mut watched = setup.catalogs.clone();
        // New labelled requests retrain the router (or find it cached) on reload.
        watched.extend(setup.train.iter().cloned());
        watched.extend(crate::config::path_in_effect(setup.config.as_deref()));
        let behind = WriteBehind {
            window: std::time::Duration::from_millis(first.config.serve.history_flush_ms.max(1)),
            ..WriteBehind::default()
        };
        let live = Live::new(first, Some(loader), watched);
        let (app, notices) = Self::open_with(setup, live, notices, runs).await?;
        Ok((app.write_behind(behind), notices))
    }

    /// The same application with history written behind the request (see
    /// [`crate::history`]); call [`App::flush_history`] before it stops. Needs a tokio
    /// runtime.
    #[must_use]
    pub fn write_behind(mut self, config: WriteBehind) -> Self {
        if let Some(store) = &self.store {
            self.behind = Some(Behind {
                recorder: Recorder::spawn(store.clone(), config),
                learned: LearnedCache::new(config.learned_refresh),
            });
        }
        self
    }

    /// Commits every history row recorded so far (at shutdown; a no-op when rows are
    /// written as they come).
    pub async fn flush_history(&self) {
        if let Some(b) = &self.behind {
            b.recorder.flush().await;
        }
    }

    /// What the write-behind recorder has done, when there is one.
    pub fn history_counts(&self) -> Option<&Counts> {
        self.behind.as_ref().map(|b| b.recorder.counts())
    }

    async fn open_with(
        setup: &Setup,
        live: Live,
        mut notices: Vec<Notice>,
        runs: Option<RunPolicy>,
    ) -> Result<(Self, Vec<Notice>), AppError> {
        let (store, store_error) =
            match Store::open(&setup.store_spec(), setup.history_ttl_secs).await {
                Ok(s) => (s.map(Arc::new), None),
                Err(e) => {
                    notices.push(Notice::StoreOff(e.to_string()));
                    (None, Some(e.to_string()))
                }
            };
        let app = Self {
            store_error,
            setup: Some(setup.clone()),
            catalog_paths: setup
                .catalogs
                .iter()
                .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone()))
                .collect(),
            ..Self::with(live, store, runs)
        };
        Ok((app, notices))
    }

    /// An application over parts already built (a server with a reloading snapshot,
    /// tests).
    pub fn with(live: Live, store: Option<Arc<Store>>, runs: Option<RunPolicy>) -> Self {
        Self {
            live: Arc::new(live),
            store,
            store_error: None,
            runs,
            behind: None,
            purged_at: AtomicI64::new(0),
            own_addresses: std::sync::RwLock::default(),
            setup: None,
            catalog_paths: Vec::new(),
        }
    }

    /// Closes the store's connections; a one-shot command's last call.
    pub async fn close(&self) {
        if let Some(store) = &self.store {
            store.close().await;
        }
    }

    /// The snapshot in service: engine, planner, configuration.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.live.get()
    }

    /// The reloading state, for a server's watcher and health report.
    pub fn live(&self) -> &Arc<Live> {
        &self.live
    }

    pub fn engine(&self) -> Arc<Engine> {
        self.live.get().engine.clone()
    }

    pub fn store(&self) -> Option<&Arc<Store>> {
        self.store.as_ref()
    }

    /// Records an address this application's server listens on; outbound calls of
    /// runs refuse it whatever `[run] allow_hosts` says (docs/run.md, Outbound calls).
    pub fn refuse_own_address(&self, addr: std::net::SocketAddr) {
        self.own_addresses
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(addr);
    }

    /// The destination policy of runs: `[run] allow_hosts`, less the server itself.
    fn destinations(&self, config: &crate::config::Config) -> Result<Destinations, AppError> {
        let own = self
            .own_addresses
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        Ok(Destinations::allowing(&config.run.allow_hosts)?.refusing_always(own))
    }

    pub fn runs_allowed(&self) -> bool {
        self.runs.is_some()
    }

    fn need_store(&self) -> Result<&Arc<Store>, AppError> {
        self.store.as_ref().ok_or_else(|| AppError::NoStore {
            why: self.store_error.clone(),
        })
    }

    fn need_runs(&self) -> Result<&RunPolicy, AppError> {
        self.runs.as_ref().ok_or(AppError::RunsOff)
    }

    /// Plans a request the way every face does (learned, deterministic, the model) and
    /// leaves the audit row, committed before this returns. History is best effort: a
    /// store that fails is logged and the plan is still answered.
    pub async fn plan(
        &self,
        caller: &str,
        request: &str,
        context: Option<&serde_json::Value>,
    ) -> Result<Plan, AppError> {
        let snap = self.live.get();
        self.plan_with(&snap, caller, request, context).await
    }

    /// Plans in a `plan` span (docs/telemetry.md): its children are the stages.
    async fn plan_with(
        &self,
        snap: &Snapshot,
        caller: &str,
        request: &str,
        context: Option<&serde_json::Value>,
    ) -> Result<Plan, AppError> {
        let span = tracing::info_span!(
            "plan",
            gen_ai.operation.name = "plan",
            waypoint.caller = caller,
            waypoint.planner = tracing::field::Empty,
            waypoint.steps = tracing::field::Empty,
            gen_ai.request.model = tracing::field::Empty,
            gen_ai.usage.input_tokens = tracing::field::Empty,
            gen_ai.usage.output_tokens = tracing::field::Empty,
        );
        let plan = self
            .plan_inner(snap, caller, request, context)
            .instrument(span.clone())
            .await?;
        span.record("waypoint.planner", plan.planner().as_str());
        span.record("waypoint.steps", plan.steps().len());
        Ok(plan)
    }

    async fn plan_inner(
        &self,
        snap: &Snapshot,
        caller: &str,
        request: &str,
        context: Option<&serde_json::Value>,
    ) -> Result<Plan, AppError> {
        let started = Instant::now();
        let store = self.store.as_deref();
        if let Some(store) = store {
            self.purge_if_due(store).await;
        }
        let learned = match store {
            Some(store) if snap.planner.learns() => {
                self.learned(store, caller, request, snap.planner.learn_rule())
                    .await
            }
            _ => None,
        };
        let (plan, attempt) = snap
            .planner
            .plan_learned(&snap.engine, request, context, learned.as_deref())
            .await?;
        if let Some(a) = &attempt {
            // The model was asked: what it cost, on the `plan` span.
            let span = tracing::Span::current();
            if let Some(m) = snap.planner.model() {
                span.record("gen_ai.request.model", m.endpoint.model.as_str());
            }
            span.record("gen_ai.usage.input_tokens", a.usage.prompt_tokens);
            span.record("gen_ai.usage.output_tokens", a.usage.completion_tokens);
            // Only a model call can teach the client an endpoint's output mode; a plan the
            // model was not asked about writes nothing to disk.
            snap.planner.save_modes();
        }
        if let Some(store) = store {
            let ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
            let row = waypoint_stores::history_row(&plan, request, caller, Outcome::Planned, ms);
            self.record(store, row).await;
        }
        Ok(plan)
    }

    /// Leaves one history row, behind the request when this application writes behind.
    /// History is best effort: a store that fails is logged.
    async fn record(&self, store: &Store, row: HistoryRow) {
        let span = tracing::info_span!("record", waypoint.behind = self.behind.is_some());
        async {
            match &self.behind {
                Some(b) => {
                    b.learned.note(&row);
                    b.recorder.record(row).await;
                }
                None => {
                    if let Err(e) = store.record(&row).await {
                        tracing::warn!(error = %e, "cannot record plan history");
                    }
                }
            }
        }
        .instrument(span)
        .await;
    }

    /// A run that ended is evidence about its plan, so its outcome joins the request's
    /// history; that, and not planning, is what learned plans come from (docs/store.md).
    /// Runs without a request (`--plan FILE`) and runs that stopped to ask teach nothing.
    async fn learn_from(&self, caller: &str, report: &RunReport) {
        let outcome = match report.status {
            RunStatus::Ok => Outcome::Ok,
            RunStatus::Failed | RunStatus::NeedsHuman => Outcome::Failed,
            RunStatus::Limit => Outcome::Limit,
            RunStatus::Queued
            | RunStatus::Cancelled
            | RunStatus::Running
            | RunStatus::NeedsInput
            | RunStatus::NeedsApproval => return,
        };
        let Some(store) = self.store.as_deref() else {
            return;
        };
        let run = match store.run(caller, &report.run_id).await {
            Ok(Some(run)) => run,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the run to record its outcome");
                return;
            }
        };
        let request = serde_json::from_str::<Settings>(&run.settings)
            .ok()
            .and_then(|s| s.request);
        let (Some(request), Ok(plan)) = (request, serde_json::from_str::<Plan>(&run.plan)) else {
            return;
        };
        let ms = run.updated_at.saturating_sub(run.created_at);
        let row = waypoint_stores::history_row(&plan, &request, caller, outcome, ms);
        self.record(store, row).await;
    }

    /// Takes `plan` — without one, the plan `request` gets now — as right for `request`:
    /// it is the request's learned plan from now on, until a run of it fails. The
    /// explicit way to teach, beside successful runs (docs/store.md).
    pub async fn accept(
        &self,
        caller: &str,
        request: &str,
        plan: Option<Plan>,
    ) -> Result<Plan, AppError> {
        let store = self.need_store()?;
        if request.trim().is_empty() {
            return Err(AppError::BadInput(
                "the request to accept a plan for is empty".into(),
            ));
        }
        let plan = match plan {
            Some(plan) => plan,
            None => self.plan(caller, request, None).await?,
        };
        if plan.steps().is_empty() {
            return Err(AppError::BadInput(
                "the plan has no steps; there is nothing to accept".into(),
            ));
        }
        let snap = self.live.get();
        let catalog = snap.engine.catalog();
        for step in plan.steps() {
            let known = match step.kind {
                StepKind::Unknown => false,
                StepKind::Tool | StepKind::Pipeline => catalog.entry(&step.tool).is_some(),
                StepKind::Plan | StepKind::LlmSubtask | StepKind::AskUser => true,
            };
            if !known {
                return Err(AppError::BadInput(format!(
                    "step {} (`{}`) is not in the catalog; a plan with a gap cannot be accepted",
                    step.id, step.tool
                )));
            }
        }
        let row = waypoint_stores::history_row(&plan, request, caller, Outcome::Accepted, 0);
        store.record(&row).await?;
        if let Some(b) = &self.behind {
            b.learned.note(&row);
        }
        Ok(plan)
    }

    /// The tool sequence `caller`'s history has learned for `request`, if any. History
    /// is best effort: a store that fails is logged and planning goes on without it.
    async fn learned(
        &self,
        store: &Store,
        caller: &str,
        request: &str,
        rule: waypoint_store::LearnRule,
    ) -> Option<Vec<String>> {
        let now = now_unix();
        let found = match &self.behind {
            Some(b) => {
                b.learned
                    .learned(store, &b.recorder, caller, request, rule, now)
                    .await
            }
            None => waypoint_store::learned_for(store, caller, request, rule, now).await,
        };
        found.unwrap_or_else(|e| {
            tracing::warn!(error = %e, "cannot read plan history");
            None
        })
    }

    /// Deletes expired history at most once per [`PURGE_EVERY_SECS`], the first time
    /// at the first plan.
    async fn purge_if_due(&self, store: &Store) {
        let now = now_unix();
        let last = self.purged_at.load(Ordering::Relaxed);
        if now - last < PURGE_EVERY_SECS
            || self
                .purged_at
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        if let Err(e) = store.purge_expired(now).await {
            tracing::warn!(error = %e, "cannot purge expired history");
        }
    }

    pub fn route(
        &self,
        request: &str,
        context: Option<&serde_json::Value>,
    ) -> Result<Vec<RouteReport>, AppError> {
        Ok(self.engine().route(request, context)?)
    }

    pub fn understand(
        &self,
        request: &str,
        context: Option<&serde_json::Value>,
    ) -> Result<Understanding, AppError> {
        Ok(self.engine().understand(request, context)?)
    }

    /// The caller's history: a page of rows (`filter.limit` of them after
    /// `filter.after`), or with `grouped` every row grouped per request: counts,
    /// outcomes, tool sequences and the learned one.
    pub async fn history(
        &self,
        caller: &str,
        filter: &HistoryFilter,
        grouped: bool,
    ) -> Result<History, AppError> {
        // The caller sees every plan they made, committed or still queued.
        self.flush_history().await;
        let store = self.need_store()?;
        if grouped {
            let all = HistoryFilter {
                limit: None,
                after: None,
                ..filter.clone()
            };
            let rows = store.history(caller, &all, now_unix()).await?;
            let plans = project(&rows, self.live.get().planner.learn_rule());
            return Ok(History::Plans(MyPlans { plans }));
        }
        let page = store.history_page(caller, filter, now_unix()).await?;
        Ok(History::Rows(HistoryPage {
            rows: page.items,
            next_cursor: page.next.map(|c| c.encode()),
        }))
    }

    /// Removes history rows of the caller; answers how many.
    pub async fn forget(&self, caller: &str, what: &Forget) -> Result<u64, AppError> {
        let store = self.need_store()?;
        self.flush_history().await;
        let n = store.forget(caller, what).await?;
        if let Some(b) = &self.behind {
            b.learned.forget(caller);
        }
        Ok(n)
    }

    /// Plans `request` (recorded like [`App::plan`]) and runs it here, now.
    pub async fn run_request(
        &self,
        caller: &str,
        request: &str,
        context: Option<serde_json::Value>,
        options: &RunOptions,
    ) -> Result<RunReport, AppError> {
        // Refused before planning, so a refused run leaves no history row.
        self.need_runs()?;
        self.need_store()?;
        async {
            let snap = self.live.get();
            let plan = self
                .plan_with(&snap, caller, request, context.as_ref())
                .await?;
            self.execute(caller, plan, Some(request.to_string()), context, options)
                .await
        }
        .instrument(run_span(caller))
        .await
    }

    /// Runs a plan already made. `request` is what replans plan again, if anything.
    pub async fn run_plan(
        &self,
        caller: &str,
        plan: Plan,
        request: Option<String>,
        context: Option<serde_json::Value>,
        options: &RunOptions,
    ) -> Result<RunReport, AppError> {
        self.execute(caller, plan, request, context, options)
            .instrument(run_span(caller))
            .await
    }

    async fn execute(
        &self,
        caller: &str,
        plan: Plan,
        request: Option<String>,
        context: Option<serde_json::Value>,
        options: &RunOptions,
    ) -> Result<RunReport, AppError> {
        let snap = self.live.get();
        let settings = Settings {
            request: request.filter(|r| !r.trim().is_empty()),
            context,
            ..self.settings(&snap, &plan, &options.limits, options.workdir.as_ref())?
        };
        self.drive(&snap, caller, options, async |runner| {
            runner.run(plan, settings).await
        })
        .await
    }

    /// What a run starts from: the configuration's limits under the face's overrides,
    /// its approval bar, and where the run started, so that a resume from anywhere
    /// finds the same catalog and working directory (docs/run.md).
    fn settings(
        &self,
        snap: &Snapshot,
        plan: &Plan,
        overrides: &LimitOverrides,
        workdir: Option<&PathBuf>,
    ) -> Result<Settings, AppError> {
        let workdir = workdir
            .or(self.runs.as_ref().map(|p| &p.workdir))
            .map(|w| std::path::absolute(w).unwrap_or_else(|_| w.clone()));
        Ok(Settings {
            limits: layered(&snap.config.run, overrides)?,
            approve: snap.config.run.approve.unwrap_or_default(),
            origin: Origin {
                catalog: self.catalog_paths.clone(),
                workdir,
                entries: waypoint_run::origin::entries(snap.engine.catalog(), plan),
            },
            ..Settings::default()
        })
    }

    /// Plans `request` and runs it the planner-first specialist way: the specialists'
    /// schedule, each model-backed step with its brief.
    pub async fn run_specialists(
        &self,
        caller: &str,
        request: &str,
        context: Option<serde_json::Value>,
        options: &RunOptions,
    ) -> Result<RunReport, AppError> {
        self.need_runs()?;
        async {
            let snap = self.live.get();
            let plan = self
                .plan_with(&snap, caller, request, context.as_ref())
                .await?;
            let view = snap.engine.specialist_plan(request, &plan);
            let (scheduled, briefs) =
                waypoint_run::specialists::schedule(&view, &plan, snap.engine.catalog());
            let settings = Settings {
                request: Some(request.to_string()),
                context,
                briefs,
                ..self.settings(&snap, &scheduled, &options.limits, options.workdir.as_ref())?
            };
            self.drive(&snap, caller, options, async |runner| {
                runner.run(scheduled, settings).await
            })
            .await
        }
        .instrument(run_span(caller))
        .await
    }

    /// Runs one of the catalog's plan documents (`ns/name@req` or `plan://…`).
    pub async fn run_document(
        &self,
        caller: &str,
        id: &str,
        context: Option<serde_json::Value>,
        options: &RunOptions,
    ) -> Result<RunReport, AppError> {
        let snap = self.live.get();
        let doc = snap
            .engine
            .catalog()
            .plan_doc(&plan_ref(id)?)
            .map_err(|e| AppError::BadInput(e.clone()))?;
        let plan: Plan = serde_json::from_value(serde_json::json!({
            // `pl_` and 16 hex digits like every plan id (docs/contracts.md): the
            // document's full id and the context, so the same run gets the same id.
            "plan_id": format!("pl_{}", waypoint_store::args_sha(&serde_json::Map::from_iter([
                ("plan".to_string(), serde_json::Value::String(doc.uri.clone())),
                ("context".to_string(), context.clone().unwrap_or_default()),
            ]))),
            "steps": [{"id": "s1", "order": 1, "kind": "plan", "tool": doc.uri, "group": 1,
                       "rationale": doc.intent}],
        }))
        .map_err(|e| AppError::Internal(e.to_string()))?;
        let request = Some(doc.intent.clone());
        self.run_plan(caller, plan, request, context, options).await
    }

    /// Queues a run for whichever instance claims it first; answers its id.
    pub async fn submit(&self, caller: &str, input: SubmitInput) -> Result<String, AppError> {
        self.need_runs()?;
        self.need_store()?;
        let snap = self.live.get();
        let plan = match (input.plan, &input.request) {
            (Some(plan), None) => plan,
            (None, Some(request)) => {
                self.plan_with(&snap, caller, request, input.context.as_ref())
                    .await?
            }
            _ => {
                return Err(AppError::BadInput(
                    "give exactly one of `request` (to plan) or `plan` (to run as it is)".into(),
                ));
            }
        };
        let settings = Settings {
            request: input.request,
            context: input.context,
            ..self.settings(&snap, &plan, &LimitOverrides::default(), None)?
        };
        self.with_runner(&snap, caller, &RunOptions::default(), async |runner| {
            runner.submit(plan, settings).await
        })
        .await
    }

    /// Continues a stopped run with a person's answers; `raise` lifts the limits it was
    /// started with (a budget it hit).
    pub async fn resume(
        &self,
        caller: &str,
        run_id: &str,
        mut answers: Decisions,
        raise: &LimitOverrides,
        options: &RunOptions,
    ) -> Result<RunReport, AppError> {
        let store = self.need_store()?;
        let row = store.run(caller, run_id).await?;
        if let Some(row) = &row {
            approvals_name_steps_of(row, &options.approved)?;
            answers_answer_questions_of(row, &answers)?;
        }
        let started = row
            .and_then(|row| serde_json::from_str::<Settings>(&row.settings).ok())
            .unwrap_or_default();
        if !raise.is_empty() {
            answers.limits = Some(raise.over(&started.limits)?);
        }
        let snap = self.snapshot_of(run_id, &started.origin)?;
        let mut options = options.clone();
        if options.workdir.is_none() {
            options.workdir = started.origin.workdir.filter(|w| w.is_dir());
        }
        self.drive(&snap, caller, &options, async |runner| {
            runner.resume(run_id, answers).await
        })
        .instrument(run_span(caller))
        .await
    }

    /// The snapshot a stopped run goes on with: the one in service when its catalog
    /// calls the run's entries the way they were when it started, else one built from
    /// the catalog files the run started with; refused, naming what changed, when
    /// neither does — going on would call tools other than the ones planned and
    /// approved.
    fn snapshot_of(&self, run_id: &str, origin: &Origin) -> Result<Arc<Snapshot>, AppError> {
        let current = self.live.get();
        let mut changes = waypoint_run::origin::changes(current.engine.catalog(), &origin.entries);
        if changes.is_empty() {
            return Ok(current);
        }
        if let Some(setup) = self
            .setup
            .as_ref()
            .filter(|_| origin.catalog != self.catalog_paths)
        {
            let theirs = Setup {
                catalogs: origin.catalog.clone(),
                ..setup.clone()
            };
            if let Ok((snap, _)) = snapshot(&theirs) {
                changes = waypoint_run::origin::changes(snap.engine.catalog(), &origin.entries);
                if changes.is_empty() {
                    return Ok(Arc::new(snap));
                }
            }
        }
        Err(AppError::CatalogChanged {
            run_id: run_id.to_string(),
            catalog: origin.catalog.clone(),
            changes,
        })
    }

    /// Claims the next queued run, if any, and drives it here (a server's worker).
    pub async fn run_next_queued(&self, instance: &str) -> Result<Option<RunReport>, AppError> {
        self.need_runs()?;
        let store = self.need_store()?;
        let Some(row) = store
            .claim_run(instance, waypoint_store::now_millis())
            .await?
        else {
            return Ok(None);
        };
        let snap = self.live.get();
        let caller = row.caller.clone();
        self.drive(&snap, &caller, &RunOptions::default(), async |runner| {
            runner.run_claimed(row).await
        })
        .instrument(run_span(&caller))
        .await
        .map(Some)
    }

    /// The caller's runs, newest first.
    pub async fn runs(
        &self,
        caller: &str,
        after: Option<&Cursor>,
        limit: u32,
    ) -> Result<RunsPage, AppError> {
        let page = self.need_store()?.runs(caller, after, limit).await?;
        Ok(RunsPage {
            runs: page.items.into_iter().map(|r| summary(r, None)).collect(),
            next_cursor: page.next.map(|c| c.encode()),
        })
    }

    /// One of the caller's runs; another caller's is "not found", never "forbidden", so
    /// run ids do not leak across callers.
    pub async fn run_status(&self, caller: &str, run_id: &str) -> Result<RunSummary, AppError> {
        let (store, row) = self.own_run(caller, run_id).await?;
        let claimed = store.claimed_by(run_id).await?;
        let mut status = summary(row.clone(), claimed);
        // A run killed before it wrote a report still has its journal: report that.
        if status.report.is_none() && row.status != "queued" {
            let steps = store.steps(run_id).await?;
            status.report = Some(waypoint_run::executor::report_from_journal(&row, &steps));
        }
        Ok(status)
    }

    /// The store and one of the caller's run rows; another caller's is not found.
    async fn own_run(
        &self,
        caller: &str,
        run_id: &str,
    ) -> Result<(&Arc<Store>, waypoint_store::RunRow), AppError> {
        let store = self.need_store()?;
        let row = store
            .run(caller, run_id)
            .await?
            .ok_or_else(|| AppError::NoSuchRun {
                run_id: run_id.to_string(),
                caller: caller.to_string(),
            })?;
        Ok((store, row))
    }

    /// Cancels one of the caller's runs that is queued or stopped (waiting for input,
    /// approval or a person, or over a limit): it will not be claimed or resumed. A run
    /// that is running or has ended is refused, saying which.
    pub async fn cancel(&self, caller: &str, run_id: &str) -> Result<RunSummary, AppError> {
        let (store, mut row) = self.own_run(caller, run_id).await?;
        let status = RunStatus::parse(&row.status);
        match status {
            Some(
                RunStatus::Queued
                | RunStatus::NeedsInput
                | RunStatus::NeedsApproval
                | RunStatus::NeedsHuman
                | RunStatus::Limit,
            ) => {}
            Some(RunStatus::Running) => {
                return Err(AppError::Conflict(format!(
                    "run `{run_id}` is running; it can be cancelled once it stops (a limit, a question or its end)"
                )));
            }
            _ => {
                return Err(AppError::Conflict(format!(
                    "run `{run_id}` is {}; only a queued or stopped run can be cancelled",
                    row.status
                )));
            }
        }
        row.status = RunStatus::Cancelled.as_str().to_string();
        if let Ok(mut report) = serde_json::from_str::<RunReport>(&row.report) {
            report.status = RunStatus::Cancelled;
            report.message = "cancelled by its caller".into();
            report.questions.clear();
            row.report = serde_json::to_string(&report).unwrap_or_default();
        }
        row.updated_at = waypoint_store::now_millis();
        store.update_run(&row).await?;
        let claimed = store.claimed_by(run_id).await?;
        Ok(summary(row, claimed))
    }

    /// The report of one of the caller's runs.
    /// A run's report; for a run whose process stopped before it wrote one, its journal
    /// so far.
    pub async fn run_report(&self, caller: &str, run_id: &str) -> Result<RunReport, AppError> {
        let s = self.run_status(caller, run_id).await?;
        s.report.ok_or(AppError::NoReport {
            run_id: s.run_id,
            status: s.status,
        })
    }

    /// The caller's plans grouped by request (the MCP `my-plans` resource).
    pub async fn my_plans(&self, caller: &str) -> Result<Vec<MyPlan>, AppError> {
        match self
            .history(caller, &HistoryFilter::default(), true)
            .await?
        {
            History::Plans(p) => Ok(p.plans),
            History::Rows(_) => Ok(Vec::new()),
        }
    }

    /// What running `plan` would do under this configuration and these approvals,
    /// calling nothing.
    pub fn dry_run(&self, plan: Plan, approved: &Approvals) -> DryRun {
        let snap = self.live.get();
        let catalog = snap.engine.catalog();
        let bar = snap.config.run.approve.unwrap_or_default();
        let steps = plan
            .steps()
            .iter()
            .map(|s| {
                let effects = waypoint_run::approval::strongest(catalog, &s.tool);
                DryStep {
                    step_id: s.id.clone(),
                    tool: s.tool.clone(),
                    effects: effects.as_str().into(),
                    args: serde_json::Value::Object(s.args.clone()),
                    waits_for_approval: bar.needs(effects) && !approved.covers(&s.id),
                }
            })
            .collect();
        DryRun { bar, steps, plan }
    }

    /// The tools an MCP server of the catalog lists, and a catalog of them as YAML.
    pub async fn import_mcp(
        &self,
        server: &str,
        workdir: &std::path::Path,
    ) -> Result<(usize, String), AppError> {
        let engine = self.engine();
        let catalog = engine.catalog();
        if !catalog.servers().iter().any(|s| s.name == server) {
            return Err(AppError::NoServer {
                server: server.to_string(),
                known: catalog.servers().iter().map(|s| s.name.clone()).collect(),
            });
        }
        let mut pool = waypoint_run::adapters::McpPool::new(catalog.servers(), workdir);
        pool.set_destinations(self.destinations(&self.snapshot().config)?);
        let tools = pool.list_tools(server).await;
        pool.close().await;
        let tools = tools.map_err(|e| AppError::Internal(e.to_string()))?;
        Ok((
            tools.len(),
            waypoint_run::adapters::mcp::catalog_yaml(server, &tools),
        ))
    }

    /// The model table, as `[{pattern, context_tokens, max_output_tokens, …}]`.
    pub fn models(&self) -> serde_json::Value {
        self.live.get().config.model_table()
    }

    /// Builds a runner for `caller` over `snap`, hands it to `work`, and closes the
    /// tool connections after. Model-backed steps call the configured model.
    /// [`Self::with_runner`] for work that ends a run, whose outcome then joins the
    /// request's history.
    async fn drive(
        &self,
        snap: &Snapshot,
        caller: &str,
        options: &RunOptions,
        work: impl AsyncFnOnce(&Runner<'_, Store>) -> Result<RunReport, waypoint_run::RunError>,
    ) -> Result<RunReport, AppError> {
        let report = self.with_runner(snap, caller, options, work).await?;
        self.learn_from(caller, &report).await;
        Ok(report)
    }

    async fn with_runner<T>(
        &self,
        snap: &Snapshot,
        caller: &str,
        options: &RunOptions,
        work: impl AsyncFnOnce(&Runner<'_, Store>) -> Result<T, waypoint_run::RunError>,
    ) -> Result<T, AppError> {
        let (store, policy) = (self.need_store()?, self.need_runs()?);
        let catalog = snap.engine.catalog();
        let workdir = options.workdir.as_ref().unwrap_or(&policy.workdir);
        let limits: Limits = layered(&snap.config.run, &options.limits)?;
        let toolbox = Toolbox::new(
            workdir,
            catalog.servers(),
            store.clone(),
            limits.max_output_bytes,
        )
        .map_err(|e| AppError::Tools {
            workdir: workdir.clone(),
            message: e.to_string(),
        })?
        .with_destinations(self.destinations(&snap.config)?)
        .with_model(snap.planner.model())
        .with_asking(options.asking.unwrap_or(Asking::Nobody));
        let recovery = Recovery {
            catalog,
            options: snap.engine.options().clone(),
        };
        let runner = Runner {
            replanner: &recovery,
            events: options.events.clone(),
            ..Runner::new(catalog, store.clone(), &toolbox, caller)
                .approving(options.approved.clone())
        };
        let out = work(&runner).await;
        toolbox.close().await;
        Ok(out?)
    }
}

/// The engine, planner and configuration `setup` names, and what building them said.
pub fn snapshot(setup: &Setup) -> Result<(Snapshot, Vec<Notice>), AppError> {
    let config = setup.config()?;
    let built = setup.engine(&config)?;
    let planner = Planner::configure(&config, &setup.planner, setup.learn)?;
    Ok((
        Snapshot {
            engine: Arc::new(built.engine),
            planner,
            config,
        },
        built.notices,
    ))
}

/// An error with every catalog problem in it (file, line, field), since a server's log
/// and `/healthz` are all the person reloading will see.
pub fn describe(e: &AppError) -> String {
    let mut text = e.to_string();
    if let AppError::Catalog(waypoint_catalog::CatalogError::Invalid { diagnostics }) = e {
        for d in diagnostics.iter().filter(|d| d.is_error()) {
            text.push('\n');
            text.push_str(&d.render());
        }
    }
    text
}

/// Approvals on resume name steps of the run's current plan: a mistyped `s9` is an
/// error that leaves the run waiting as it was, not an approval that silently does
/// nothing.
fn approvals_name_steps_of(
    row: &waypoint_store::RunRow,
    approved: &Approvals,
) -> Result<(), AppError> {
    if approved.steps.is_empty() {
        return Ok(());
    }
    let Ok(plan) = serde_json::from_str::<Plan>(&row.plan) else {
        return Ok(());
    };
    let ids: Vec<&str> = plan.steps().iter().map(|s| s.id.as_str()).collect();
    let mut unknown: Vec<&str> = approved
        .steps
        .iter()
        .map(String::as_str)
        .filter(|s| !ids.contains(s))
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    unknown.sort_unstable();
    Err(AppError::BadInput(format!(
        "run `{}` has no step {}; its steps are {}",
        row.run_id,
        unknown.join(", "),
        ids.join(", ")
    )))
}

/// Every answer, retry and done must answer a question the stopped run asks, under the
/// key it gives: a misspelt key or a step the run does not have would otherwise be
/// ignored and the run would stop again with the same question. A run that recorded no
/// questions (killed before its report) is not checked here; resuming it asks them.
fn answers_answer_questions_of(
    row: &waypoint_store::RunRow,
    decisions: &Decisions,
) -> Result<(), AppError> {
    let Ok(report) = serde_json::from_str::<RunReport>(&row.report) else {
        return Ok(());
    };
    if report.questions.is_empty() {
        return Ok(());
    }
    let asked = |expects: &[&str]| -> Vec<&str> {
        report
            .questions
            .iter()
            .filter(|q| expects.contains(&q.expects.as_str()))
            .map(|q| q.key.as_str())
            .collect()
    };
    let (answers, outcomes) = (asked(&["answer", "clarify"]), asked(&["retry_or_done"]));
    let given = decisions
        .answers
        .keys()
        .map(|k| (k.as_str(), &answers, "--answer"))
        .chain(
            decisions
                .retry
                .iter()
                .map(|k| (k.as_str(), &outcomes, "--retry")),
        )
        .chain(
            decisions
                .done
                .iter()
                .map(|k| (k.as_str(), &outcomes, "--done")),
        );
    for (key, keys, flag) in given {
        if !keys.contains(&key) {
            let open: Vec<String> = report
                .questions
                .iter()
                .map(|q| format!("{} ({}: {})", q.key, q.expects, q.text))
                .collect();
            return Err(AppError::BadInput(format!(
                "run `{}` does not ask `{key}` ({flag}); it waits for: {}",
                row.run_id,
                open.join("; ")
            )));
        }
    }
    Ok(())
}

/// The span every run operation runs in; planning and each tool call are its children.
fn run_span(caller: &str) -> tracing::Span {
    tracing::info_span!(
        "run",
        gen_ai.operation.name = "invoke_agent",
        waypoint.caller = caller
    )
}

/// Reads `plan://ns/name@req`, `bullet://…` or `ns/name@req`.
pub fn plan_ref(id: &str) -> Result<PlanRef, AppError> {
    let full = if id.contains("://") {
        id.to_string()
    } else {
        format!("plan://{id}")
    };
    PlanRef::parse(&full).map_err(AppError::BadInput)
}

fn summary(r: waypoint_store::RunRow, claimed_by: Option<String>) -> RunSummary {
    RunSummary {
        report: serde_json::from_str(&r.report).ok(),
        run_id: r.run_id,
        status: r.status,
        claimed_by,
        created_at: r.created_at,
        updated_at: r.updated_at,
        generation: r.generation,
    }
}
