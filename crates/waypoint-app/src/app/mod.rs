//! The operations, for a caller, whichever face the call came in by: plan, route,
//! understand, history, forget, run, submit, resume, runs.
//!
//! Each answers typed values or an [`AppError`]; the faces render them (the CLI for a
//! person, MCP and HTTP as JSON) and say what to do about an error in their own terms.
//!
//! This module holds [`App`] itself: how it opens (store, write-behind history, reload),
//! planning with the history it records and learns from, route, understand, history and
//! forget. `runs` holds the other half: a request or a plan run under limits, submitted
//! to the queue, resumed, cancelled, listed and dry-run.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Instant;

use tracing::Instrument as _;

use waypoint_catalog::plans::PlanRef;
use waypoint_core::Engine;
use waypoint_protocol::{Plan, RouteReport, RunReport, RunStatus, StepKind, Understanding};
use waypoint_run::{Destinations, Settings};
use waypoint_store::{
    Forget, HistoryFilter, HistoryRow, HistoryStore as _, MyPlan, Outcome, RunStore as _, now_unix,
    project,
};
use waypoint_stores::Store;

use crate::contract::{History, HistoryPage, MyPlans};
use crate::error::AppError;
use crate::history::{Counts, LearnedCache, Recorder, WriteBehind};
use crate::live::{Live, Snapshot};
use crate::planner::Planner;
use crate::setup::{Notice, Setup};

mod runs;

pub use runs::{DryRun, DryStep, RunOptions, RunPolicy, SubmitInput};

/// How often expired history is deleted: reads already hide it; this keeps the store
/// from growing without bound.
const PURGE_EVERY_SECS: i64 = 3_600;

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

/// Reads `plan://ns/name@req`, `bullet://…` or `ns/name@req`.
pub fn plan_ref(id: &str) -> Result<PlanRef, AppError> {
    let full = if id.contains("://") {
        id.to_string()
    } else {
        format!("plan://{id}")
    };
    PlanRef::parse(&full).map_err(AppError::BadInput)
}
