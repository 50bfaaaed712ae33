//! The journal: run ids, a row before and after every call, answers and replayed
//! steps, interrupted calls, and the run report saved with the run.

use super::*;

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

pub(super) fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

pub(super) fn idempotency_key(run_id: &str, key: &str, args: &Map<String, Value>) -> String {
    let mut h = Sha256::new();
    h.update(run_id.as_bytes());
    h.update([0]);
    h.update(key.as_bytes());
    h.update([0]);
    h.update(waypoint_store::args_sha(args).as_bytes());
    hex(&h.finalize()[..12])
}

impl<S: RunStore + MemoryStore + 'static> Runner<'_, S> {
    /// Journals an answer as the finished call of its `ask_user` step.
    pub(super) async fn journal_answer(
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

    pub(super) fn record_replayed(
        &self,
        st: &State,
        step: &Step,
        row: &StepRow,
        output: Option<Value>,
    ) {
        let run = StepRun {
            output,
            ..step_run(row, &step.id)
        };
        lock(&st.inner).steps.push(run.clone());
        self.emit(&RunEvent::StepFinished {
            run_id: st.run_id.clone(),
            step: run,
        });
    }

    /// Marks calls cut off by the wall-time limit, so a resume knows their outcome is
    /// unknown rather than still running somewhere.
    pub(super) async fn interrupt_in_flight(&self, st: &State, why: &str) -> Result<(), RunError> {
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

    pub(super) fn report(st: &State, end: Ending) -> RunReport {
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

    pub(super) async fn save(&self, st: &State, report: &RunReport) -> Result<(), RunError> {
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

/// A journal row as a report's step, as an earlier process left it.
fn step_run(row: &StepRow, step_id: &str) -> StepRun {
    StepRun {
        key: row.key.clone(),
        step_id: step_id.to_string(),
        tool: row.tool.clone(),
        status: StepStatus::parse(&row.status).unwrap_or(StepStatus::Failed),
        output: serde_json::from_str(&row.output).ok(),
        error: row.error.clone(),
        latency_ms: u64::try_from(row.latency_ms).unwrap_or(0),
        prompt_tokens: u32::try_from(row.prompt_tokens).unwrap_or(0),
        completion_tokens: u32::try_from(row.completion_tokens).unwrap_or(0),
        cost_usd: row.cost_usd,
        replayed: true,
    }
}

/// The report of a run whose process stopped before it wrote one (a crash, a kill):
/// its journal so far, each call with the status the journal gives it.
pub fn report_from_journal(run: &RunRow, rows: &[StepRow]) -> RunReport {
    let plan_id = serde_json::from_str::<Plan>(&run.plan)
        .map(|p| p.plan_id().to_string())
        .unwrap_or_default();
    let steps: Vec<StepRun> = rows
        .iter()
        .map(|r| {
            // `g0/s2.1` is a call of plan step `s2`.
            let after = r.key.split_once('/').map_or(r.key.as_str(), |(_, k)| k);
            step_run(r, after.split('.').next().unwrap_or(after))
        })
        .collect();
    let distinct: HashSet<&str> = steps.iter().map(|s| s.step_id.as_str()).collect();
    let totals = RunTotals {
        steps: u32::try_from(distinct.len()).unwrap_or(u32::MAX),
        tool_calls: u32::try_from(steps.len()).unwrap_or(u32::MAX),
        cost_usd: steps.iter().map(|s| s.cost_usd).sum(),
        prompt_tokens: steps.iter().map(|s| s.prompt_tokens).sum(),
        completion_tokens: steps.iter().map(|s| s.completion_tokens).sum(),
        ..RunTotals::default()
    };
    RunReport {
        run_id: run.run_id.clone(),
        status: RunStatus::parse(&run.status).unwrap_or(RunStatus::Running),
        message: "the process running it stopped before it reported; this is its journal so far — resume it to go on".into(),
        plan_id,
        generation: run.generation,
        steps,
        limit: None,
        questions: Vec::new(),
        attempts: Vec::new(),
        verification: None,
        totals,
    }
}
