//! Running plan documents as one step each.
//!
//! A document runs only when it is clear (the clarity gate: ambiguity ≤ 0.3 and no
//! missing criteria; otherwise its questions come back with `needs_input`). Its steps
//! run in order, each inner call journaled under `g0/s1.N`: tools with their args,
//! scripts with inputs that are literals or resolved from context, data and guidance
//! as they are, nested plans recursively, and placeholders resolved at run time — from
//! an answer, from the run's context, from the request's extracted values, or by
//! discovering a catalog tool that produces what is needed; a placeholder's `schema`
//! is checked before its value is used. `safety` forbids tools by their effects, in the
//! document and every plan it runs; `budget_usd` and `max_runtime_seconds` tighten the
//! run's limits. Success criteria of the form "step N produced X" are checked; others
//! are reported.

use std::sync::OnceLock;

use regex::Regex;
use serde_json::{Map, Value, json};
use waypoint_catalog::Catalog;
use waypoint_catalog::Tool;
use waypoint_catalog::plans::{DocStep, PlanDoc, PlanRef, Safety, ScriptInput};
use waypoint_protocol::{Criterion, Plan, Question, Step, StepKind, StepStatus};
use waypoint_store::{MemoryStore, RunStore};

use crate::executor::{Outcome, RunError, Runner, State, check_args, lock};
use crate::limits::Limits;
use crate::refs;

/// Most plans nested inside one another.
const MAX_DEPTH: usize = 8;

pub use waypoint_catalog::plans::is_plan_uri as is_plan_id;

/// Tightens limits to the constraints of the plan documents a plan runs directly.
pub fn tighten(plan: &Plan, catalog: &Catalog, limits: &mut Limits) {
    for step in plan.steps() {
        if !(step.kind == StepKind::Plan || is_plan_id(&step.tool)) {
            continue;
        }
        let Some(doc) = PlanRef::parse(&step.tool)
            .ok()
            .and_then(|r| catalog.plan_doc(&r).ok())
        else {
            continue;
        };
        if let Some(b) = doc.constraints.budget_usd {
            limits.max_usd = limits.max_usd.min(b);
        }
        if let Some(s) = doc.constraints.max_runtime_seconds {
            limits.max_wall_ms = limits.max_wall_ms.min(s.saturating_mul(1000));
        }
    }
}

/// The stricter of two safety levels.
fn strictest(a: Option<Safety>, b: Option<Safety>) -> Option<Safety> {
    match (a, b) {
        (Some(Safety::ReadOnly), _) | (_, Some(Safety::ReadOnly)) => Some(Safety::ReadOnly),
        (Some(x), _) | (None, Some(x)) => Some(x),
        (None, None) => None,
    }
}

/// Why `safety` refuses `tool`, if it does. The catalog check already reports a
/// document that names such a tool; this holds for whatever reaches a run anyway.
fn refuses(safety: Option<Safety>, tool: &Tool) -> Option<String> {
    let safety = safety?;
    (!safety.allows(tool.effects)).then(|| {
        format!(
            "refused: `{}` has effects `{}` and the plan says {}",
            tool.name,
            tool.effects.as_str(),
            safety.as_str()
        )
    })
}

fn criterion_pattern() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?i)^\s*step\s+(\d+)\s+produced\s+(?:an?\s+|the\s+)?([\w .-]+?)\s*$")
            .unwrap_or_else(|_| Regex::new("$^").unwrap_or_else(|_| unreachable!()))
    })
}

/// What a document's run has so far: each inner step's output and tool.
struct Trail {
    outputs: Vec<Option<Value>>,
    tools: Vec<Option<String>>,
}

impl<S: RunStore + MemoryStore + 'static> Runner<'_, S> {
    pub(crate) async fn run_document_step(
        &self,
        st: &State,
        step: &Step,
        key: &str,
    ) -> Result<Outcome, RunError> {
        let doc = match PlanRef::parse(&step.tool).and_then(|r| self.catalog.plan_doc(&r)) {
            Ok(d) => d,
            Err(why) => {
                self.record_local(st, step, key, StepStatus::Failed, None, Some(why.clone()));
                return Ok(Outcome::Failed(why));
            }
        };
        if let Err(hit) = st.admit_step(key) {
            return Ok(Outcome::Limit(hit));
        }
        match Box::pin(self.run_document(st, step, key, doc, None, 0)).await? {
            Ok(value) => {
                self.record_local(st, step, key, StepStatus::Ok, Some(value.clone()), None);
                lock(&st.inner).outputs.insert(step.id.clone(), value);
                Ok(Outcome::Ok)
            }
            Err(Outcome::Failed(why)) => {
                self.record_local(st, step, key, StepStatus::Failed, None, Some(why.clone()));
                Ok(Outcome::Failed(why))
            }
            Err(Outcome::Refused(why)) => {
                self.record_local(st, step, key, StepStatus::Failed, None, Some(why.clone()));
                Ok(Outcome::Refused(why))
            }
            Err(outcome) => Ok(outcome),
        }
    }

    /// Runs a document's steps in order; its output is its last step's.
    async fn run_document(
        &self,
        st: &State,
        step: &Step,
        key: &str,
        doc: &PlanDoc,
        safety: Option<Safety>,
        depth: usize,
    ) -> Result<Result<Value, Outcome>, RunError> {
        if depth > MAX_DEPTH {
            return Ok(Err(Outcome::Failed(format!(
                "{} nests plans more than {MAX_DEPTH} deep",
                doc.id
            ))));
        }
        if !doc.intent_clarity.ready() {
            // The gate opens once each of its questions has an answer under its key.
            let path = key.split_once('/').map_or(key, |(_, p)| p);
            let questions = gate_questions(step, path, doc);
            if !questions
                .iter()
                .all(|q| st.decisions.answers.contains_key(&q.key))
            {
                return Ok(Err(Outcome::Ask(questions)));
            }
        }
        let safety = strictest(safety, doc.constraints.safety);
        let mut trail = Trail {
            outputs: Vec::new(),
            tools: Vec::new(),
        };
        for (i, s) in doc.steps.iter().enumerate() {
            let inner = format!("{key}.{}", i + 1);
            // Answers name the step by its path: `s1.2.1` is step 1 of the plan run by
            // step 2 of the plan run by plan step s1.
            let answer_key = inner
                .split_once('/')
                .map_or(inner.as_str(), |(_, p)| p)
                .to_string();
            let previous = trail.outputs.iter().rev().flatten().next().cloned();
            let (output, tool) = match &s.step {
                DocStep::Data { value } => (value.clone(), None),
                DocStep::Guidance { text } => {
                    // Model-backed calls later in this plan (and the plans it runs) see it.
                    lock(&st.inner)
                        .guidance
                        .push((format!("{key}."), text.clone()));
                    (json!({ "text": text }), None)
                }
                DocStep::Plan { target } => {
                    let nested = match self.catalog.plan_doc(target) {
                        Ok(d) => d,
                        Err(e) => return Ok(Err(Outcome::Failed(e))),
                    };
                    match Box::pin(self.run_document(st, step, &inner, nested, safety, depth + 1))
                        .await?
                    {
                        Ok(v) => (v, Some(nested.uri.clone())),
                        Err(o) => return Ok(Err(o)),
                    }
                }
                DocStep::Tool { tool, args } => {
                    match self
                        .call_doc_tool(st, step, &inner, tool, args.clone(), safety)
                        .await?
                    {
                        Ok(v) => (v, Some(tool.clone())),
                        Err(o) => return Ok(Err(o)),
                    }
                }
                DocStep::Script { tool, inputs } => {
                    let target = self.catalog.tool(tool);
                    let args = match script_args(
                        st,
                        step,
                        (doc, i, &answer_key),
                        target,
                        inputs,
                        previous.as_ref(),
                    ) {
                        Ok(a) => a,
                        Err(o) => return Ok(Err(o)),
                    };
                    match self
                        .call_doc_tool(st, step, &inner, tool, args, safety)
                        .await?
                    {
                        Ok(v) => (v, Some(tool.clone())),
                        Err(o) => return Ok(Err(o)),
                    }
                }
                DocStep::Placeholder { .. } => {
                    match self
                        .placeholder(st, step, &inner, &answer_key, doc, i, (safety, depth))
                        .await?
                    {
                        Ok(v) => (v, None),
                        Err(o) => return Ok(Err(o)),
                    }
                }
            };
            trail.outputs.push(Some(output));
            trail.tools.push(tool);
        }
        let verdicts = self.criteria(doc, &trail);
        lock(&st.inner).criteria.extend(verdicts);
        let last = trail.outputs.into_iter().rev().flatten().next();
        Ok(Ok(last.unwrap_or(Value::Null)))
    }

    /// A placeholder's value, checked against its schema; a question when nothing fits.
    #[expect(
        clippy::too_many_arguments,
        reason = "the step's place in the run and the plan"
    )]
    async fn placeholder(
        &self,
        st: &State,
        step: &Step,
        inner: &str,
        answer_key: &str,
        doc: &PlanDoc,
        i: usize,
        (safety, depth): (Option<Safety>, usize),
    ) -> Result<Result<Value, Outcome>, RunError> {
        let Some(DocStep::Placeholder {
            description,
            of,
            constraints,
            schema,
        }) = doc.steps.get(i).map(|s| &s.step)
        else {
            return Ok(Err(Outcome::Failed("not a placeholder".into())));
        };
        let found = self
            .fill_placeholder(
                st,
                step,
                inner,
                answer_key,
                of.as_deref(),
                (doc, safety, depth),
            )
            .await?;
        let value = match found {
            Ok(Some(v)) => v,
            Ok(None) => {
                let mut text = format!("{} needs a value: {description}", doc.id);
                if !constraints.is_empty() {
                    text.push_str(&format!(" ({})", constraints.join("; ")));
                }
                return Ok(Err(Outcome::Ask(vec![Question {
                    call: None,
                    step_id: step.id.clone(),
                    text,
                    expects: "answer".into(),
                    key: answer_key.to_string(),
                }])));
            }
            Err(o) => return Ok(Err(o)),
        };
        if let Some(schema) = schema
            && let Err(why) = check_value(schema, &value)
        {
            return Ok(Err(Outcome::Failed(format!(
                "{} step {}: the value for “{description}” breaks its constraints: {why}",
                doc.id,
                i + 1
            ))));
        }
        Ok(Ok(value))
    }

    async fn call_doc_tool(
        &self,
        st: &State,
        step: &Step,
        key: &str,
        name: &str,
        mut args: Map<String, Value>,
        safety: Option<Safety>,
    ) -> Result<Result<Value, Outcome>, RunError> {
        let Some(tool) = self.catalog.tool(name) else {
            return Ok(Err(Outcome::Failed(format!(
                "`{name}` is not in the catalog, so it may not run"
            ))));
        };
        if let Some(why) = refuses(safety, tool) {
            self.record_local(st, step, key, StepStatus::Failed, None, Some(why.clone()));
            return Ok(Err(Outcome::Refused(why)));
        }
        tool.fill_defaults(&mut args);
        if let Err(why) = check_args(self.catalog, tool, &args) {
            return Ok(Err(Outcome::Failed(why)));
        }
        self.call_once(st, step, tool, key, args).await
    }

    /// A placeholder's value: an answer, the run's context, the request's extracted
    /// values of that kind, or the output of a catalog tool that produces it and needs
    /// no args. `Ok(None)` when nothing fits: someone must answer.
    async fn fill_placeholder(
        &self,
        st: &State,
        step: &Step,
        key: &str,
        answer_key: &str,
        of: Option<&str>,
        (doc, safety, depth): (&PlanDoc, Option<Safety>, usize),
    ) -> Result<Result<Option<Value>, Outcome>, RunError> {
        if let Some(a) = st.decisions.answers.get(answer_key) {
            return Ok(Ok(Some(Value::String(a.clone()))));
        }
        let Some(kind) = of else { return Ok(Ok(None)) };
        if let Some(v) = st.settings.context.as_ref().and_then(|c| c.get(kind)) {
            return Ok(Ok(Some(v.clone())));
        }
        let extracted = serde_json::to_value(&st.plan.understanding().extracted)
            .ok()
            .and_then(|e| e.get(kind).or_else(|| e.get(format!("{kind}s"))).cloned());
        if let Some(Value::Array(values)) = extracted
            && let Some(first) = values.into_iter().next()
        {
            return Ok(Ok(Some(first)));
        }
        let producer = self.catalog.tools().iter().find(|t| {
            t.run.is_some()
                && t.produces.iter().any(|p| p == kind)
                && t.required().next().is_none()
                && refuses(safety, t).is_none()
        });
        let Some(tool) = producer else {
            // A plan document that makes it, run completely for its output.
            let maker = self.catalog.plans().iter().find(|d| {
                d.uri != doc.uri && d.produces.iter().any(|p| p == kind) && d.intent_clarity.ready()
            });
            let Some(maker) = maker else {
                return Ok(Ok(None));
            };
            return match Box::pin(self.run_document(st, step, key, maker, safety, depth + 1))
                .await?
            {
                Ok(v) => Ok(Ok(Some(v))),
                Err(o) => Ok(Err(o)),
            };
        };
        match self
            .call_doc_tool(st, step, key, &tool.name.clone(), Map::new(), safety)
            .await?
        {
            Ok(v) => Ok(Ok(Some(v))),
            Err(o) => Ok(Err(o)),
        }
    }

    /// Verdicts on a document's success criteria.
    fn criteria(&self, doc: &PlanDoc, trail: &Trail) -> Vec<Criterion> {
        doc.success_criteria
            .iter()
            .map(|text| {
                let held = criterion_pattern().captures(text).and_then(|c| {
                    let n: usize = c.get(1)?.as_str().parse().ok()?;
                    let what = c.get(2)?.as_str().trim().to_lowercase().replace(' ', "_");
                    let output = trail.outputs.get(n.checked_sub(1)?)?.as_ref();
                    let by_tool =
                        trail
                            .tools
                            .get(n - 1)
                            .and_then(Option::as_ref)
                            .is_some_and(|t| {
                                crate::verify::produced_by(t, self.catalog).contains(&what)
                            });
                    let by_field =
                        output.is_some_and(|o| o.get(&what).is_some_and(|v| !v.is_null()));
                    let any = what == "output" && output.is_some_and(|o| !o.is_null());
                    Some(by_tool || by_field || any)
                });
                Criterion {
                    text: text.clone(),
                    held,
                }
            })
            .collect()
    }
}

/// A script's args: literals as given, descriptions resolved from context.
fn script_args(
    st: &State,
    step: &Step,
    (doc, i, answer_key): (&PlanDoc, usize, &str),
    tool: Option<&waypoint_catalog::Tool>,
    inputs: &std::collections::BTreeMap<String, ScriptInput>,
    previous: Option<&Value>,
) -> Result<Map<String, Value>, Outcome> {
    let mut args = Map::new();
    for (name, input) in inputs {
        let value = match input {
            ScriptInput::Value(v) => v.clone(),
            ScriptInput::Description(d) => {
                let free_text = tool.is_some_and(|t| takes_free_text(t, name));
                from_context(st, answer_key, name, previous, free_text).ok_or_else(|| {
                    Outcome::Ask(vec![Question {
                        call: None,
                        step_id: step.id.clone(),
                        text: format!("`{name}` for {} step {}: {d}", doc.id, i + 1),
                        expects: "answer".into(),
                        key: format!("{answer_key}.{name}"),
                    }])
                })?
            }
        };
        args.insert(name.clone(), value);
    }
    Ok(args)
}

/// Whether `arg` of `tool` is free text — a string with no format, pattern or enum,
/// not a path — the only kind an earlier step's text may fill unasked.
fn takes_free_text(tool: &waypoint_catalog::Tool, arg: &str) -> bool {
    if crate::policy::argv::is_path(tool, arg) {
        return false;
    }
    let Some((_, schema)) = tool.properties().find(|(n, _)| *n == arg) else {
        return false;
    };
    let string = schema.get("type").is_none_or(|t| t == "string");
    string
        && ["format", "pattern", "enum", "const"]
            .iter()
            .all(|k| schema.get(k).is_none())
}

/// A script input described rather than given: an answer, the run's context under the
/// input's name, the previous step's same-named field, or — for a free-text input
/// only — the previous step's principal text. A typed or path input never takes that
/// text: a `write` step once took a note's body as its file name and the run reported
/// `ok`. Without a source the input is a question.
fn from_context(
    st: &State,
    answer_key: &str,
    name: &str,
    previous: Option<&Value>,
    free_text: bool,
) -> Option<Value> {
    if let Some(a) = st.decisions.answers.get(&format!("{answer_key}.{name}")) {
        return Some(Value::String(a.clone()));
    }
    if let Some(v) = st.settings.context.as_ref().and_then(|c| c.get(name)) {
        return Some(v.clone());
    }
    let prev = previous?;
    if let Some(v) = prev.get(name).filter(|v| !v.is_null()) {
        return Some(v.clone());
    }
    free_text.then(|| Value::String(refs::text_of(prev)))
}

/// The questions an unclear document asks before it runs, one per missing criterion,
/// each under its own key (`s1.clarify.1`, `s1.clarify.2`, …; `s1.clarify` when the
/// document is only too ambiguous), so that `--answer` can release the gate.
fn gate_questions(step: &Step, key: &str, doc: &PlanDoc) -> Vec<Question> {
    let mut qs: Vec<Question> = doc
        .intent_clarity
        .missing_criteria
        .iter()
        .enumerate()
        .map(|(i, c)| Question {
            call: None,
            step_id: step.id.clone(),
            text: c.clone(),
            expects: "clarify".into(),
            key: format!("{key}.clarify.{}", i + 1),
        })
        .collect();
    if qs.is_empty() {
        qs.push(Question {
            call: None,
            step_id: step.id.clone(),
            text: format!(
                "{} is too ambiguous to run (ambiguity {:.2} > {:.2}): say more precisely what “{}” should do",
                doc.id,
                doc.intent_clarity.ambiguity_score,
                waypoint_catalog::plans::MAX_AMBIGUITY,
                doc.intent
            ),
            expects: "clarify".into(),
            key: format!("{key}.clarify"),
        });
    }
    qs
}

fn check_value(schema: &Value, value: &Value) -> Result<(), String> {
    let v = jsonschema::validator_for(schema).map_err(|e| format!("bad schema: {e}"))?;
    let errors: Vec<String> = v
        .iter_errors(value)
        .take(3)
        .map(|e| e.to_string())
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}
