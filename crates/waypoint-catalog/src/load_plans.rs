//! Reading plan documents and checking how they reference each other.

use std::collections::{BTreeMap, HashMap};

use crate::diagnostic::Severity;
use crate::load::{Ctx, Parts, Reporter, push_refs};
use crate::plans::{
    Constraints, DocClarity, DocStep, DocStepAt, PlanDoc, PlanId, PlanRef, Safety, ScriptInput,
    resolve,
};
use crate::yaml::{self, Node, Value};

const PLAN_KEYS: &[&str] = &[
    "id",
    "intent",
    "keywords",
    "intent_clarity",
    "context",
    "constraints",
    "success_criteria",
    "produces",
    "steps",
];
const CLARITY_KEYS: &[&str] = &["ambiguity_score", "missing_criteria", "ready_to_formalize"];
const CONSTRAINT_KEYS: &[&str] = &["budget_usd", "max_runtime_seconds", "safety"];
const STEP_KINDS: &[&str] = &["tool", "script", "data", "guidance", "plan", "placeholder"];
const STEP_KEYS: &[&str] = &[
    "tool",
    "script",
    "data",
    "guidance",
    "plan",
    "placeholder",
    "args",
    "inputs",
    "type",
    "constraints",
    "schema",
];
const INPUT_KEYS: &[&str] = &["value", "description"];

/// Whether a file's top level is a plan document rather than catalog sections.
pub(crate) fn is_plan_doc(root: &Node) -> bool {
    let Value::Map(entries) = &root.value else {
        return false;
    };
    entries
        .iter()
        .any(|(k, _)| matches!(&k.value, Value::Str(s) if s == "id"))
}

fn number(ctx: &mut Ctx<'_>, node: &Node, field: &str) -> Option<f64> {
    match node.value {
        #[expect(clippy::cast_precision_loss, reason = "YAML integers here are small")]
        Value::Int(i) => Some(i as f64),
        Value::Float(f) => Some(f),
        _ => {
            ctx.error(
                node.pos,
                format!("`{field}` must be a number, found {}", node.value.kind()),
                None,
            );
            None
        }
    }
}

pub(crate) fn read_plan_doc(ctx: &mut Ctx<'_>, root: &Node, parts: &mut Parts) {
    let Some(f) = ctx.fields(root, "a plan document", PLAN_KEYS) else {
        return;
    };
    let id_pos = f.get("id").map_or(root.pos, |n| n.pos);
    // A bad id is reported and the rest is still read, so its other errors show in the
    // same pass; the document is only left out of the catalog.
    let id = f
        .required(ctx, "id", "a plan document")
        .ok_or(())
        .and_then(|raw| PlanId::parse(&raw).map_err(|e| ctx.error(id_pos, e, None)));
    let intent = f
        .required(ctx, "intent", "a plan document")
        .unwrap_or_default();
    let clarity = f
        .get("intent_clarity")
        .map(|n| read_clarity(ctx, n))
        .unwrap_or_default();
    let constraints = f
        .get("constraints")
        .map(|n| read_constraints(ctx, n))
        .unwrap_or_default();
    let steps = match f.get("steps") {
        Some(Node {
            value: Value::Seq(items),
            ..
        }) => items
            .iter()
            .filter_map(|item| read_step(ctx, item, parts))
            .collect(),
        Some(other) => {
            ctx.error(
                other.pos,
                format!("`steps` must be a list, found {}", other.value.kind()),
                None,
            );
            Vec::new()
        }
        None => {
            ctx.error(
                root.pos,
                "a plan document has no `steps`".into(),
                Some("add `steps:` with `- tool: NAME` and the like".into()),
            );
            Vec::new()
        }
    };
    let Ok(id) = id else {
        parts.orphan_steps.extend(steps);
        return;
    };
    let doc = PlanDoc {
        uri: id.to_string(),
        id,
        intent,
        keywords: f.list(ctx, "keywords"),
        intent_clarity: clarity,
        context: f.text(ctx, "context"),
        constraints,
        success_criteria: f.list(ctx, "success_criteria"),
        produces: f.list(ctx, "produces"),
        steps,
        at: ctx.loc(id_pos),
    };
    parts.plans.push(doc);
}

fn read_clarity(ctx: &mut Ctx<'_>, node: &Node) -> DocClarity {
    let mut clarity = DocClarity::default();
    if let Some(c) = ctx.fields(node, "intent_clarity", CLARITY_KEYS) {
        if let Some(n) = c.get("ambiguity_score") {
            match number(ctx, n, "ambiguity_score") {
                Some(s) if (0.0..=1.0).contains(&s) => clarity.ambiguity_score = s,
                Some(s) => ctx.error(
                    n.pos,
                    format!("ambiguity_score {s} is outside 0.0–1.0"),
                    None,
                ),
                None => {}
            }
        }
        clarity.missing_criteria = c.list(ctx, "missing_criteria");
    }
    clarity
}

fn read_constraints(ctx: &mut Ctx<'_>, node: &Node) -> Constraints {
    let mut constraints = Constraints::default();
    if let Some(c) = ctx.fields(node, "constraints", CONSTRAINT_KEYS) {
        if let Some(n) = c.get("budget_usd") {
            match number(ctx, n, "budget_usd") {
                Some(b) if b >= 0.0 => constraints.budget_usd = Some(b),
                Some(b) => ctx.error(n.pos, format!("budget_usd {b} is negative"), None),
                None => {}
            }
        }
        if let Some(n) = c.get("max_runtime_seconds") {
            match n.value {
                Value::Int(s) if s > 0 => constraints.max_runtime_seconds = u64::try_from(s).ok(),
                _ => ctx.error(
                    n.pos,
                    "max_runtime_seconds must be a whole number of seconds above 0".into(),
                    None,
                ),
            }
        }
        if let Some(n) = c.get("safety") {
            let text = ctx.string(n, "safety").unwrap_or_default();
            match Safety::parse(&text) {
                Some(s) => constraints.safety = Some(s),
                None => ctx.error(
                    n.pos,
                    format!("unknown safety level `{text}`"),
                    Some(format!("use one of {}", Safety::NAMES.join(", "))),
                ),
            }
        }
    }
    constraints
}

fn read_step(ctx: &mut Ctx<'_>, node: &Node, parts: &mut Parts) -> Option<DocStepAt> {
    let f = ctx.fields(node, "a plan step", STEP_KEYS)?;
    let kinds: Vec<&str> = STEP_KINDS
        .iter()
        .copied()
        .filter(|k| f.get(k).is_some())
        .collect();
    let [kind] = kinds.as_slice() else {
        ctx.error(
            node.pos,
            if kinds.is_empty() {
                "a plan step names none of tool, script, data, guidance, plan, placeholder".into()
            } else {
                format!("a plan step names more than one kind: {}", kinds.join(", "))
            },
            Some("write one step per item, e.g. `- tool: NAME`".into()),
        );
        return None;
    };
    let head = f.get(kind)?;
    let at = ctx.loc(head.pos);
    let step = match *kind {
        "tool" | "script" => {
            let tool = ctx.string(head, kind)?;
            push_refs(
                ctx,
                parts,
                &[(tool.clone(), head.pos)],
                "a plan step",
                false,
            );
            if *kind == "tool" {
                let args = match f.get("args").map(yaml::to_json) {
                    Some(serde_json::Value::Object(m)) => m,
                    Some(serde_json::Value::Null) | None => serde_json::Map::new(),
                    Some(_) => {
                        ctx.error(head.pos, "`args` must be a mapping".into(), None);
                        serde_json::Map::new()
                    }
                };
                DocStep::Tool { tool, args }
            } else {
                DocStep::Script {
                    tool,
                    inputs: read_inputs(ctx, f.get("inputs")),
                }
            }
        }
        "data" => DocStep::Data {
            value: yaml::to_json(head),
        },
        "guidance" => DocStep::Guidance {
            text: ctx.string(head, "guidance")?,
        },
        "plan" => {
            let raw = ctx.string(head, "plan")?;
            match PlanRef::parse(&raw) {
                Ok(target) => DocStep::Plan { target },
                Err(e) => {
                    ctx.error(head.pos, e, None);
                    return None;
                }
            }
        }
        _ => DocStep::Placeholder {
            description: ctx.string(head, "placeholder")?,
            of: f.get("type").and_then(|n| ctx.string(n, "type")),
            constraints: f.list(ctx, "constraints"),
            schema: f.get("schema").map(yaml::to_json),
        },
    };
    Some(DocStepAt { step, at })
}

fn read_inputs(ctx: &mut Ctx<'_>, node: Option<&Node>) -> BTreeMap<String, ScriptInput> {
    let mut out = BTreeMap::new();
    let Some(node) = node else { return out };
    let Value::Map(entries) = &node.value else {
        ctx.error(node.pos, "`inputs` must be a mapping".into(), None);
        return out;
    };
    for (key, value) in entries {
        let name = yaml::key_text(key);
        let Some(f) = ctx.fields(value, "a script input", INPUT_KEYS) else {
            continue;
        };
        let input = match (f.get("value"), f.get("description")) {
            (Some(v), None) => ScriptInput::Value(yaml::to_json(v)),
            (None, Some(d)) => match ctx.string(d, "description") {
                Some(text) => ScriptInput::Description(text),
                None => continue,
            },
            _ => {
                ctx.error(
                    value.pos,
                    format!("input `{name}` needs exactly one of `value` or `description`"),
                    None,
                );
                continue;
            }
        };
        out.insert(name, input);
    }
    out
}

/// Drops repeated ids, reports references that do not resolve and cycles, then checks
/// each document's steps against the tools ([`crate::plan_check`]).
pub(crate) fn check_plans(
    r: &mut Reporter<'_>,
    plans: Vec<PlanDoc>,
    tools: &[crate::model::Tool],
) -> Vec<PlanDoc> {
    let mut seen = HashMap::new();
    let plans = r.dedupe(plans, &mut seen, "plan", |p| (&p.uri, &p.at));
    for p in &plans {
        for s in &p.steps {
            if let DocStep::Plan { target } = &s.step
                && let Err(e) = resolve(&plans, target)
            {
                r.report(
                    Severity::Error,
                    &s.at,
                    format!("`{}` does not resolve: {e}", target.raw),
                    Some("load the plan it names, or change the version requirement".into()),
                    Some(p.at.clone()),
                );
            }
        }
    }
    for cycle in cycles(&plans) {
        let first = &plans[cycle[0]];
        let names: Vec<String> = cycle
            .iter()
            .map(|&i| plans[i].id.to_string())
            .chain([first.id.to_string()])
            .collect();
        // The step that goes on to the next plan of the cycle, not just any `plan:`.
        let next = &plans[cycle.get(1).copied().unwrap_or(cycle[0])];
        let at = first
            .steps
            .iter()
            .find(|s| match &s.step {
                DocStep::Plan { target } => {
                    resolve(&plans, target).is_ok_and(|t| std::ptr::eq(t, next))
                }
                _ => false,
            })
            .map_or_else(|| first.at.clone(), |s| s.at.clone());
        r.report(
            Severity::Error,
            &at,
            format!("plan cycle: {}", names.join(" → ")),
            Some("a plan may not run itself, directly or through others".into()),
            None,
        );
    }
    crate::plan_check::analyse(r, &plans, tools);
    plans
}

/// Every cycle among plans that run other plans, each reported once.
fn cycles(plans: &[PlanDoc]) -> Vec<Vec<usize>> {
    let edges: Vec<Vec<usize>> = plans
        .iter()
        .map(|p| {
            p.steps
                .iter()
                .filter_map(|s| match &s.step {
                    DocStep::Plan { target } => resolve(plans, target).ok(),
                    _ => None,
                })
                .filter_map(|t| plans.iter().position(|q| std::ptr::eq(q, t)))
                .collect()
        })
        .collect();
    let mut found: Vec<Vec<usize>> = Vec::new();
    // 0 unseen, 1 on the path, 2 done.
    let mut state = vec![0u8; plans.len()];
    for start in 0..plans.len() {
        let mut path = Vec::new();
        visit(start, &edges, &mut state, &mut path, &mut found);
    }
    found
}

fn visit(
    at: usize,
    edges: &[Vec<usize>],
    state: &mut [u8],
    path: &mut Vec<usize>,
    found: &mut Vec<Vec<usize>>,
) {
    match state[at] {
        2 => return,
        1 => {
            if let Some(i) = path.iter().position(|&p| p == at) {
                found.push(path[i..].to_vec());
            }
            return;
        }
        _ => {}
    }
    state[at] = 1;
    path.push(at);
    for &next in &edges[at] {
        visit(next, edges, state, path, found);
    }
    path.pop();
    state[at] = 2;
}
