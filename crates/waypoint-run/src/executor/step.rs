//! One step: its args made concrete, the call (a tool, a pipeline's tools in order, a
//! model subtask, a question for a person), journaled before and after.

use super::*;

use tracing::Instrument as _;

impl<S: RunStore + MemoryStore + 'static> Runner<'_, S> {
    /// Runs one plan step: replayed from the journal, asked about, or called.
    pub(crate) async fn run_step(&self, st: &State, step: &Step) -> Result<Outcome, RunError> {
        let key = format!("g{}/{}", st.generation, step.id);
        // A step that depends on one that did not succeed is not called.
        let deps = step.dependencies();
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
            Err(Prep::Ask(q)) => return Ok(Outcome::Ask(vec![*q])),
            Err(Prep::Fail(why)) => {
                self.record_local(st, step, &key, StepStatus::Failed, None, Some(why.clone()));
                return Ok(Outcome::Failed(why));
            }
        };
        // Held before it counts as a step; a call the journal has is replayed, not held.
        if !st.journaled(&key)
            && let Some(held) = self.gate(st, step, tool, &args).await
        {
            return Ok(Outcome::Ask(vec![held]));
        }
        if let Err(hit) = st.admit_step(&key) {
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
    pub(super) async fn run_pipeline(
        &self,
        st: &State,
        step: &Step,
        key: &str,
        tools: &[&Tool],
    ) -> Result<Outcome, RunError> {
        if let Err(hit) = st.admit_step(key) {
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
            tool.fill_defaults(&mut args);
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
    pub(crate) async fn call_once(
        &self,
        st: &State,
        step: &Step,
        tool: &Tool,
        key: &str,
        args: Map<String, Value>,
    ) -> Result<Result<Value, Outcome>, RunError> {
        if let Some(decided) = self.decided_before(st, step, tool, key).await? {
            return Ok(decided);
        }
        if let Some(held) = self.gate(st, step, tool, &args).await {
            return Ok(Err(Outcome::Ask(vec![held])));
        }
        if let Err(hit) = lock(&st.meter).admit_call(tool.cost_usd) {
            return Ok(Err(Outcome::Limit(hit)));
        }
        let inputs = Self::inputs(st, step, key);
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
        // The OpenTelemetry GenAI conventions' tool span (docs/telemetry.md).
        let span = tracing::info_span!(
            "execute_tool",
            otel.name = format!("execute_tool {}", tool.name),
            gen_ai.operation.name = "execute_tool",
            gen_ai.tool.name = tool.name.as_str(),
            gen_ai.tool.call.id = key,
            gen_ai.usage.input_tokens = tracing::field::Empty,
            gen_ai.usage.output_tokens = tracing::field::Empty,
            error.type = tracing::field::Empty,
        );
        let t0 = Instant::now();
        let dispatched = tokio::time::timeout(timeout, self.dispatch(step, &call, timeout))
            .instrument(span.clone())
            .await;
        let result = match dispatched {
            Ok(r) => r,
            Err(_) => Err(ToolError::Failed(format!(
                "`{}` ran longer than the tool timeout ({} ms)",
                tool.name,
                millis(timeout)
            ))),
        };
        match &result {
            Ok(o) => {
                span.record("gen_ai.usage.input_tokens", o.prompt_tokens);
                span.record("gen_ai.usage.output_tokens", o.completion_tokens);
            }
            Err(ToolError::NeedsInput(_)) => {}
            Err(_) => {
                span.record("error.type", "tool_error");
            }
        }
        drop(span);
        self.journal_end(st, step, tool, key, millis(t0.elapsed()), &result)
            .await?;
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
            Err(ToolError::NeedsInput(q)) => Ok(Err(Outcome::Ask(vec![answer_for(step, q)]))),
            Err(e) => Ok(Err(Outcome::Failed(e.to_string()))),
        }
    }

    /// What the journal or a person already decided for this call: a resume's answer
    /// to an `ask_user` step, a call that finished or failed before, one marked done, or
    /// a question when a call with side effects was cut off. `None`: call it.
    async fn decided_before(
        &self,
        st: &State,
        step: &Step,
        tool: &Tool,
        key: &str,
    ) -> Result<Option<Result<Value, Outcome>>, RunError> {
        // An answer given on resume is the ask_user step's output; nobody is asked twice.
        if is_ask(step, tool)
            && let Some(answer) = st.decisions.answers.get(&step.id)
        {
            let value = serde_json::json!({ "answer": answer });
            self.journal_answer(st, step, tool, key, &value).await?;
            return Ok(Some(Ok(value)));
        }
        if let Some(row) = st.journal.get(key) {
            match StepStatus::parse(&row.status) {
                Some(StepStatus::Ok) => {
                    let value: Value = serde_json::from_str(&row.output).unwrap_or(Value::Null);
                    self.record_replayed(st, step, row, Some(value.clone()));
                    return Ok(Some(Ok(value)));
                }
                Some(StepStatus::Skipped)
                    if st.decisions.done.contains(&step.id) || row.error.is_none() =>
                {
                    self.record_replayed(st, step, row, None);
                    return Ok(Some(Ok(Value::Null)));
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
                        return Ok(Some(Ok(Value::Null)));
                    }
                    let safe = tool.effects == Effects::Read;
                    if !safe && !st.decisions.retry.contains(&step.id) {
                        return Ok(Some(Err(Outcome::Ask(vec![Question {
                            call: None,
                            step_id: step.id.clone(),
                            text: format!(
                                "{} ({}, effects {}) was called but the run stopped before it answered, so whether it happened is unknown. Check, then say whether to call it again (retry) or take it as done.",
                                step.id,
                                tool.name,
                                tool.effects.as_str(),
                            ),
                            expects: "retry_or_done".into(),
                            key: step.id.clone(),
                        }]))));
                    }
                }
                // A failed call is not repeated within the same plan.
                Some(StepStatus::Failed) => {
                    let why = row.error.clone().unwrap_or_else(|| "failed".into());
                    self.record_replayed(st, step, row, None);
                    return Ok(Some(Err(Outcome::Failed(why))));
                }
                _ => {}
            }
        }
        Ok(None)
    }

    /// The approval gate: `None` when the call may go ahead (its effects are under the
    /// run's bar, or its step was approved by the runner's caller or at the terminal;
    /// a replan drops approvals of steps, which named the old plan's), else the question
    /// the run stops on. Only calls that change the world reach a prompt, and such a
    /// call runs alone in its wave, so two prompts never interleave.
    async fn gate(
        &self,
        st: &State,
        step: &Step,
        tool: &Tool,
        args: &Map<String, Value>,
    ) -> Option<Question> {
        if !st.settings.approve.needs(tool.effects) || lock(&st.inner).approved.covers(&step.id) {
            return None;
        }
        if self.toolbox.asking() == Asking::Terminal {
            let (id, t, a) = (step.id.clone(), tool.clone(), args.clone());
            let verdict =
                tokio::task::spawn_blocking(move || approval::ask_on_terminal(&id, &t, &a))
                    .await
                    .ok()
                    .flatten();
            match verdict {
                Some(approval::Verdict::Step) => {
                    lock(&st.inner).approved.steps.insert(step.id.clone());
                    return None;
                }
                Some(approval::Verdict::All) => {
                    lock(&st.inner).approved.all = true;
                    return None;
                }
                Some(approval::Verdict::No) | None => {}
            }
        }
        Some(approval::question(&step.id, tool, args))
    }

    /// What a model-backed call reads besides its args: the outputs it takes, the
    /// step's brief and any guidance for its key.
    fn inputs(st: &State, step: &Step, key: &str) -> Vec<(String, Value)> {
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
    }

    /// Journals the end of a call: its status, output, error, latency and spend; the
    /// step's report and the `step_finished` event.
    async fn journal_end(
        &self,
        st: &State,
        step: &Step,
        tool: &Tool,
        key: &str,
        latency_ms: u64,
        result: &Result<Output, ToolError>,
    ) -> Result<(), RunError> {
        let (status, output, error, usage) = match result {
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
        Ok(())
    }

    pub(super) async fn dispatch(
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

    pub(super) fn flatten<'c>(&'c self, names: &[String], depth: usize) -> Vec<&'c Tool> {
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
}

/// The question an `ask_user` call that found nobody to ask stops the run on.
fn answer_for(step: &Step, text: String) -> Question {
    Question {
        call: None,
        step_id: step.id.clone(),
        text,
        expects: "answer".into(),
        key: step.id.clone(),
    }
}

/// Whether a step asks the user: by kind, or by its tool's built-in.
pub(super) fn is_ask(step: &Step, tool: &Tool) -> bool {
    step.kind == StepKind::AskUser
        || matches!(&tool.run, Some(waypoint_catalog::RunSpec::Builtin(b)) if b == "ask_user")
}

/// The ad-hoc tool an `llm_subtask` step that names no catalog tool runs as: it reads
/// nothing but its inputs and writes nothing.
pub(super) fn subtask(step: &Step) -> Tool {
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
