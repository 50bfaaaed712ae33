//! Static analysis of plan documents once the whole catalog is known (docs/plans.md,
//! "Checks"): what a run would otherwise find out one step at a time, reported at the
//! step's own line, every problem in one pass.
//!
//! - a tool step's args against the tool's input schema, defaults filled as the
//!   executor fills them, and its required args;
//! - a script step's inputs: names the tool does not take, required inputs it never
//!   gets, given values its schema refuses;
//! - template syntax (`{{s1}}`, `${x}`, `{"$ref": …}`) a document's literal args would
//!   pass through unsubstituted;
//! - a safety level against the effects of every tool the document reaches, through
//!   the plans it runs as well.

use std::collections::HashSet;

use serde_json::{Map, Value};

use crate::diagnostic::Severity;
use crate::load::{Reporter, closest};
use crate::model::{Location, Tool};
use crate::plans::{DocStep, DocStepAt, PlanDoc, ScriptInput, resolve};

/// Checks every document's steps against `tools` and the other documents.
pub(crate) fn analyse(r: &mut Reporter<'_>, plans: &[PlanDoc], tools: &[Tool]) {
    let find = |name: &str| tools.iter().find(|t| t.name == name);
    for doc in plans {
        steps(r, &doc.steps, tools);
        if doc.constraints.safety.is_some() {
            safety(r, doc, plans, &find);
        }
    }
}

/// Checks tool and script steps against the tools they name; unknown names are
/// reported where references are checked.
pub(crate) fn steps(r: &mut Reporter<'_>, steps: &[DocStepAt], tools: &[Tool]) {
    let find = |name: &str| tools.iter().find(|t| t.name == name);
    for s in steps {
        match &s.step {
            DocStep::Tool { tool, args } => {
                if let Some(tool) = find(tool) {
                    tool_args(r, &s.at, tool, args);
                }
            }
            DocStep::Script { tool, inputs } => {
                if let Some(tool) = find(tool) {
                    script_inputs(r, &s.at, tool, inputs);
                }
            }
            _ => {}
        }
    }
}

fn tool_args(r: &mut Reporter<'_>, at: &Location, tool: &Tool, args: &Map<String, Value>) {
    for (name, value) in args {
        templates(r, at, &format!("args.{name}"), value);
    }
    let mut filled = args.clone();
    tool.fill_defaults(&mut filled);
    let missing: Vec<&str> = tool
        .required()
        .filter(|n| !filled.contains_key(*n))
        .collect();
    for name in &missing {
        r.report(
            Severity::Error,
            at,
            format!("`{}` needs `{name}` and this step gives none", tool.name),
            Some(format!(
                "add `{name}` under `args:`, or make the step a `script:` whose input \
                 `{name}` has a `description` so the run asks for it"
            )),
            None,
        );
    }
    for why in schema_errors(tool.input_schema.as_ref(), &Value::Object(filled)) {
        r.report(
            Severity::Error,
            at,
            format!("args for `{}` break its input_schema: {why}", tool.name),
            Some("change the value to what the schema allows".into()),
            None,
        );
    }
}

fn script_inputs(
    r: &mut Reporter<'_>,
    at: &Location,
    tool: &Tool,
    inputs: &std::collections::BTreeMap<String, ScriptInput>,
) {
    let properties: Vec<&str> = tool.properties().map(|(n, _)| n).collect();
    let open = tool.input_schema.as_ref().is_none_or(|s| {
        s.get("properties").is_none() && s.get("additionalProperties") != Some(&Value::Bool(false))
    });
    for (name, input) in inputs {
        if !open && !properties.contains(&name.as_str()) {
            let hint = closest(name, &properties).map_or_else(
                || format!("`{}` takes {}", tool.name, list(&properties)),
                |c| format!("did you mean `{c}`?"),
            );
            r.report(
                Severity::Error,
                at,
                format!("`{}` has no input `{name}`", tool.name),
                Some(hint),
                None,
            );
            continue;
        }
        let ScriptInput::Value(value) = input else {
            continue;
        };
        templates(r, at, &format!("inputs.{name}"), value);
        let schema = tool
            .properties()
            .find(|(n, _)| n == name)
            .map(|(_, schema)| schema);
        for why in schema_errors(schema, value) {
            r.report(
                Severity::Error,
                at,
                format!("input `{name}` of `{}` breaks its schema: {why}", tool.name),
                None,
                None,
            );
        }
    }
    let mut defaults = Map::new();
    tool.fill_defaults(&mut defaults);
    for name in tool.required() {
        if !inputs.contains_key(name) && !defaults.contains_key(name) {
            r.report(
                Severity::Error,
                at,
                format!(
                    "`{}` needs input `{name}` and this step gives none",
                    tool.name
                ),
                Some(format!(
                    "add `{name}: {{value: …}}`, or `{name}: {{description: …}}` to take it \
                     from an answer, the context or the step before"
                )),
                None,
            );
        }
    }
}

/// The ways other template languages write a reference; a document's args are literal,
/// so each would reach the tool as written.
fn templates(r: &mut Reporter<'_>, at: &Location, path: &str, value: &Value) {
    let found = match value {
        Value::String(s) => {
            let t = s.trim();
            let braces = t.find("{{").is_some_and(|i| t[i..].contains("}}"));
            let dollar = t.find("${").is_some_and(|i| t[i..].contains('}'));
            (braces || dollar).then(|| t.to_string())
        }
        Value::Object(m) if m.contains_key("$ref") => Some("{\"$ref\": …}".to_string()),
        Value::Object(m) => {
            for (k, v) in m {
                templates(r, at, &format!("{path}.{k}"), v);
            }
            None
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                templates(r, at, &format!("{path}[{i}]"), v);
            }
            None
        }
        _ => None,
    };
    if let Some(text) = found {
        r.report(
            Severity::Error,
            at,
            format!(
                "`{path}` is `{text}`, but a plan document's values are literal: \
                 nothing would replace it"
            ),
            Some(
                "to use an earlier step's output, make this a `script:` step with \
                 `inputs: {NAME: {description: …}}`; it takes the previous step's field"
                    .into(),
            ),
            None,
        );
    }
}

/// The schema's complaints about `value`, `required` left to the callers (they say it
/// in the document's words). `None` accepts anything.
fn schema_errors(schema: Option<&Value>, value: &Value) -> Vec<String> {
    let Some(schema) = schema else {
        return Vec::new();
    };
    // A schema that does not compile is reported where the tool is defined.
    let Ok(validator) = jsonschema::validator_for(schema) else {
        return Vec::new();
    };
    crate::violations(&validator, value, false)
}

/// Every tool `doc` reaches, through the plans it runs, against its safety level: a
/// step the level refuses can only ever fail the run.
fn safety<'a>(
    r: &mut Reporter<'_>,
    doc: &'a PlanDoc,
    plans: &'a [PlanDoc],
    find: &dyn Fn(&str) -> Option<&'a Tool>,
) {
    let Some(level) = doc.constraints.safety else {
        return;
    };
    let mut seen = HashSet::new();
    let mut stack: Vec<(&PlanDoc, Vec<String>)> = vec![(doc, Vec::new())];
    while let Some((at_doc, via)) = stack.pop() {
        if !seen.insert(at_doc.uri.as_str()) {
            continue;
        }
        for s in &at_doc.steps {
            let name = match &s.step {
                DocStep::Tool { tool, .. } | DocStep::Script { tool, .. } => tool,
                DocStep::Plan { target } => {
                    if let Ok(next) = resolve(plans, target) {
                        let mut path = via.clone();
                        path.push(next.uri.clone());
                        stack.push((next, path));
                    }
                    continue;
                }
                _ => continue,
            };
            let Some(tool) = find(name) else { continue };
            if level.allows(tool.effects) {
                continue;
            }
            let through = if via.is_empty() {
                String::new()
            } else {
                format!(", which it runs through {}", via.join(" → "))
            };
            r.report(
                Severity::Warning,
                &s.at,
                format!(
                    "`{}` has effects `{}`, and {} says {}{through}: the run always \
                     refuses this step",
                    tool.name,
                    tool.effects.as_str(),
                    doc.uri,
                    level.as_str()
                ),
                Some(format!(
                    "drop the step, use a tool {} allows, or loosen the plan's `safety`",
                    level.as_str()
                )),
                Some(doc.at.clone()),
            );
        }
    }
}

fn list(names: &[&str]) -> String {
    if names.is_empty() {
        "no inputs".into()
    } else {
        names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}
