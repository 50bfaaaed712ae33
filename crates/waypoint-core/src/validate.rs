//! Guards every plan passes, whoever wrote it (the deterministic planner or a model):
//! unknown names become `unknown` steps with a `gap:` rationale, a step may not call the
//! planner, args must be declared by and satisfy the tool's `input_schema`, only allowlisted tools may
//! appear, references point backwards only, and the step count is bounded.

use jsonschema::error::ValidationErrorKind;
use serde_json::Value;
use waypoint_catalog::{Catalog, Entry};
use waypoint_protocol::{Step, StepKind, UNKNOWN_TOOL};

use crate::args;
use crate::hash::{HashMap, HashSet};

/// Names under which the planner itself may appear in a catalog; a plan step may never
/// call the planner (a plan that plans again has no bottom).
pub const PLANNER_NAMES: [&str; 4] = ["waypoint.plan", "waypoint__plan", "waypoint_plan", "plan"];

/// Limits and lists the guards enforce.
pub struct Guards<'a> {
    pub catalog: &'a Catalog,
    pub allowlist: Option<&'a std::collections::HashSet<String>>,
    pub max_steps: usize,
}

/// What validation changed and what the caller should be told.
#[derive(Debug, Default)]
pub struct Verdict {
    pub warnings: Vec<String>,
    pub questions: Vec<String>,
}

/// Applies every guard in place, then renumbers orders and assigns parallel groups.
pub fn validate(steps: &mut Vec<Step>, guards: &Guards<'_>) -> Verdict {
    let mut verdict = Verdict::default();
    if steps.len() > guards.max_steps {
        verdict.warnings.push(format!(
            "the plan had {} steps; kept the first {} (`max_steps`)",
            steps.len(),
            guards.max_steps
        ));
        steps.truncate(guards.max_steps);
    }
    let mut seen: HashSet<String> = HashSet::default();
    for step in steps.iter_mut() {
        if step.kind != StepKind::Unknown {
            demote_if_invalid(step, guards, &mut verdict);
        }
        if step.kind != StepKind::Unknown && step.kind != StepKind::AskUser {
            drop_undeclared(step, guards, &mut verdict);
            check_args(step, guards, &mut verdict);
        }
        let before = step.input_refs.len() + step.after.len();
        step.input_refs.retain(|r| seen.contains(r));
        step.after.retain(|r| seen.contains(r));
        if step.input_refs.len() + step.after.len() != before {
            verdict.warnings.push(format!(
                "step `{}` referred to a step that does not come before it; the reference was dropped",
                step.id
            ));
        }
        seen.insert(step.id.clone());
    }
    for (i, step) in steps.iter_mut().enumerate() {
        step.order = u32::try_from(i + 1).unwrap_or(u32::MAX);
    }
    drop_implied_orders(steps);
    assign_groups(steps);
    verdict
}

/// Drops an `after` that another dependency of the step already implies: in "get a
/// joke, then send it by SMS" after an earlier phase, the SMS step takes the joke, which
/// follows that phase, so following the phase as well says nothing and would show the
/// plan's graph an edge the request never drew. References must point backwards (checked
/// before this runs).
fn drop_implied_orders(steps: &mut [Step]) {
    let index: HashMap<&str, usize> = steps
        .iter()
        .enumerate()
        .map(|(i, s)| (s.id.as_str(), i))
        .collect();
    // ancestors[i]: every step that step i follows, directly or through others.
    let mut ancestors: Vec<HashSet<usize>> = Vec::with_capacity(steps.len());
    let mut implied: Vec<Vec<String>> = vec![Vec::new(); steps.len()];
    for (i, step) in steps.iter().enumerate() {
        let deps: Vec<usize> = step
            .input_refs
            .iter()
            .chain(&step.after)
            .filter_map(|r| index.get(r.as_str()).copied())
            .filter(|&d| d < i)
            .collect();
        let mut mine = HashSet::default();
        for &d in &deps {
            mine.insert(d);
            mine.extend(ancestors[d].iter().copied());
        }
        for a in &step.after {
            let Some(&ai) = index.get(a.as_str()) else {
                continue;
            };
            if step.input_refs.contains(a)
                || deps.iter().any(|&d| d != ai && ancestors[d].contains(&ai))
            {
                implied[i].push(a.clone());
            }
        }
        ancestors.push(mine);
    }
    for (step, drop) in steps.iter_mut().zip(implied) {
        step.after.retain(|a| !drop.contains(a));
    }
}

fn demote(step: &mut Step, why: &str) {
    step.kind = StepKind::Unknown;
    step.rationale = format!("gap: {why}");
    step.tool = UNKNOWN_TOOL.to_string();
    step.args.clear();
}

fn demote_if_invalid(step: &mut Step, guards: &Guards<'_>, verdict: &mut Verdict) {
    if PLANNER_NAMES.contains(&step.tool.as_str()) {
        let why = format!(
            "`{}` would call the planner from inside a plan (recursion guard)",
            step.tool
        );
        verdict.warnings.push(why.clone());
        demote(step, &why);
        return;
    }
    if matches!(step.kind, StepKind::AskUser | StepKind::LlmSubtask) {
        return;
    }
    match guards.catalog.entry(&step.tool) {
        None => {
            let why = format!("`{}` is not in the catalog", step.tool);
            verdict.warnings.push(why.clone());
            demote(step, &why);
            return;
        }
        Some(Entry::Pipeline(_)) => step.kind = StepKind::Pipeline,
        Some(Entry::Tool(_)) => step.kind = StepKind::Tool,
        Some(Entry::Plan(_)) => step.kind = StepKind::Plan,
    }
    if let Some(allow) = guards.allowlist
        && !allow.contains(&step.tool)
    {
        let why = format!("`{}` is not on the allowlist", step.tool);
        verdict.warnings.push(why.clone());
        demote(step, &why);
    }
}

/// Drops args the tool does not declare (a model's invention), unless its schema allows
/// additional properties explicitly.
fn drop_undeclared(step: &mut Step, guards: &Guards<'_>, verdict: &mut Verdict) {
    let Some(Entry::Tool(tool)) = guards.catalog.entry(&step.tool) else {
        return;
    };
    let Some(schema) = tool.input_schema.as_ref() else {
        return;
    };
    if schema.get("properties").is_none()
        || schema.get("additionalProperties") == Some(&Value::Bool(true))
    {
        return;
    }
    let undeclared: Vec<String> = step
        .args
        .keys()
        .filter(|k| tool.properties().all(|(p, _)| p != k.as_str()))
        .cloned()
        .collect();
    for name in undeclared {
        step.args.remove(&name);
        verdict.warnings.push(format!(
            "step `{}` (`{}`): dropped arg `{name}`, which the tool does not declare",
            step.id, step.tool
        ));
    }
}

/// Checks concrete args against the input schema. Placeholders and references are
/// judged later, when they hold values; a concrete arg that breaks the schema is
/// replaced by a placeholder and a question.
fn check_args(step: &mut Step, guards: &Guards<'_>, verdict: &mut Verdict) {
    let name = match guards.catalog.entry(&step.tool) {
        Some(Entry::Tool(t)) => t.name.clone(),
        _ => return,
    };
    let Some(validator) = guards.catalog.validator(&name) else {
        return;
    };
    let symbolic: HashSet<String> = step
        .args
        .iter()
        .filter(|(_, v)| args::is_symbolic(v))
        .map(|(k, _)| k.clone())
        .collect();
    let concrete: serde_json::Map<String, Value> = step
        .args
        .iter()
        .filter(|(k, _)| !symbolic.contains(*k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let instance = Value::Object(concrete);
    let mut broken: Vec<(String, String)> = Vec::new();
    for err in validator.iter_errors(&instance) {
        if let ValidationErrorKind::Required { property } = err.kind() {
            let prop = property.as_str().unwrap_or_default().to_string();
            if !symbolic.contains(&prop) {
                broken.push((prop.clone(), format!("required arg `{prop}` is missing")));
            }
            continue;
        }
        let path = err.instance_path().to_string();
        let prop = path
            .trim_start_matches('/')
            .split('/')
            .next()
            .unwrap_or_default()
            .to_string();
        broken.push((prop, err.to_string()));
    }
    for (prop, message) in broken {
        verdict
            .warnings
            .push(format!("step `{}` (`{}`): {message}", step.id, step.tool));
        if !prop.is_empty() {
            step.args
                .insert(prop.clone(), args::placeholder(&prop.replace('_', " ")));
            verdict
                .questions
                .push(format!("What should `{prop}` be for `{}`?", step.tool));
        }
    }
}

/// Steps with no dependency between them share a group: a step's group is one more
/// than the latest group it depends on, through its inputs or the order it follows.
pub fn assign_groups(steps: &mut [Step]) {
    let mut group_of: HashMap<String, u32> = HashMap::default();
    for step in steps.iter_mut() {
        let g = step
            .input_refs
            .iter()
            .chain(&step.after)
            .filter_map(|r| group_of.get(r))
            .max()
            .map_or(1, |g| g + 1);
        step.group = g;
        group_of.insert(step.id.clone(), g);
    }
}
