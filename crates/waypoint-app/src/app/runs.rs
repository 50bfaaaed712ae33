//! Runs: a request or a plan run under limits, queued, resumed, cancelled and listed,
//! and what a run would do without calling anything.

use std::path::PathBuf;
use std::sync::Arc;

use tracing::Instrument as _;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use waypoint_protocol::{Plan, RunReport, RunStatus};
use waypoint_run::{
    Approvals, Asking, Decisions, EventSink, Limits, Origin, Recovery, Runner, Settings, Toolbox,
};
use waypoint_store::{Cursor, RunStore as _};
use waypoint_stores::Store;

use crate::contract::{RunSummary, RunsPage};
use crate::error::AppError;
use crate::limits::{LimitOverrides, layered};
use crate::live::Snapshot;
use crate::setup::Setup;

use super::{App, plan_ref, snapshot};

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

impl App {
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
