//! Fills a step's arguments from what the request gave: extracted values, the clause's
//! object, a pasted payload, or an earlier step's output. What cannot be filled and is
//! required becomes a placeholder and a question.

use serde_json::{Map, Value, json};
use waypoint_catalog::Tool;
use waypoint_protocol::ExtractedKind;

use crate::lexicon::Lexicon;
use crate::understand::ClauseAnalysis;

/// The arguments of one step and the questions its gaps raise.
#[derive(Debug, Default)]
pub struct Filled {
    pub args: Map<String, Value>,
    pub questions: Vec<String>,
}

/// Marks an argument the planner could not fill.
pub fn placeholder(what: &str) -> Value {
    json!({ "$placeholder": what })
}

/// Points an argument at an earlier step's output.
pub fn reference(step_id: &str) -> Value {
    json!({ "$ref": format!("{step_id}/output") })
}

/// Whether a value is a placeholder or a reference rather than a concrete argument.
pub fn is_symbolic(v: &Value) -> bool {
    v.as_object()
        .is_some_and(|o| o.contains_key("$placeholder") || o.contains_key("$ref"))
}

pub struct Inputs<'a> {
    pub request: &'a str,
    pub clause: &'a ClauseAnalysis,
    pub payload: Option<&'a Value>,
    /// Id of the step whose output feeds this one, if any.
    pub from_step: Option<&'a str>,
    /// Whether the clause's object is too vague to use as text.
    pub vague: bool,
}

pub fn fill(tool: &Tool, inputs: &Inputs<'_>, lex: &Lexicon) -> Filled {
    let mut out = Filled::default();
    let required: Vec<&str> = tool.required().collect();
    let mut used_values: Vec<usize> = Vec::new();
    let mut text_used = false;
    let props: Vec<(&str, &Value)> = tool.properties().collect();
    // Typed kinds first, so that text-like args only take what is left.
    let mut order: Vec<(&str, &Value, &str)> = props
        .iter()
        .map(|(name, schema)| (*name, *schema, kind_of(name, lex)))
        .collect();
    order.sort_by_key(|(_, _, k)| usize::from(*k == "text"));
    for (name, schema, kind) in order {
        let is_array = schema.get("type").and_then(Value::as_str) == Some("array");
        let is_required = required.contains(&name);
        let value = match kind {
            "text" => {
                if !is_required || text_used {
                    None
                } else {
                    text_used = true;
                    text_value(name, inputs, &mut used_values, lex)
                }
            }
            "languages" => lex.language_in(inputs.clause.tokens()).map(Value::String),
            "" => None,
            other => ExtractedKind::parse(other).and_then(|k| {
                let vals: Vec<(usize, &str)> = inputs
                    .clause
                    .values
                    .iter()
                    .enumerate()
                    .filter(|(i, f)| f.kind == k && !used_values.contains(i))
                    .map(|(i, f)| (i, f.value.as_str()))
                    .collect();
                if vals.is_empty() {
                    return None;
                }
                if is_array {
                    used_values.extend(vals.iter().map(|(i, _)| *i));
                    Some(Value::Array(
                        vals.iter()
                            .map(|(_, v)| Value::String((*v).to_string()))
                            .collect(),
                    ))
                } else {
                    used_values.push(vals[0].0);
                    Some(coerce(vals[0].1, schema))
                }
            }),
        };
        match value {
            Some(v) => {
                out.args.insert(name.to_string(), v);
            }
            // What the request does not give, an earlier step's output may.
            None if is_required && inputs.from_step.is_some() => {
                out.args.insert(
                    name.to_string(),
                    reference(inputs.from_step.unwrap_or_default()),
                );
            }
            None if is_required => {
                let what = schema
                    .get("description")
                    .and_then(Value::as_str)
                    .map_or_else(|| name.replace('_', " "), str::to_string);
                out.args.insert(name.to_string(), placeholder(&what));
                out.questions.push(format!(
                    "What should `{name}` ({what}) be for `{}`?",
                    tool.name
                ));
            }
            None => {}
        }
    }
    out
}

/// The value kind an argument name takes, from the lexicon's `arg_names`.
fn kind_of<'l>(name: &str, lex: &'l Lexicon) -> &'l str {
    let lower = name.to_ascii_lowercase();
    lex.arg_names
        .iter()
        .find(|(_, names)| names.contains(&lower))
        .map_or("", |(k, _)| k.as_str())
}

fn coerce(v: &str, schema: &Value) -> Value {
    match schema.get("type").and_then(Value::as_str) {
        Some("integer") => v
            .replace(',', "")
            .parse::<i64>()
            .map_or_else(|_| Value::String(v.into()), Value::from),
        Some("number") => v
            .replace(',', "")
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or_else(|| Value::String(v.into()), Value::Number),
        _ => Value::String(v.into()),
    }
}

/// Text for a text-like argument, most specific source first.
fn text_value(
    name: &str,
    inputs: &Inputs<'_>,
    used: &mut Vec<usize>,
    lex: &Lexicon,
) -> Option<Value> {
    if let Some(step) = inputs.from_step {
        return Some(reference(step));
    }
    let clause = inputs.clause;
    let identifier_like = lex.identifier_args.contains(name);
    if identifier_like && let Some(tok) = clause.tokens().iter().find(|t| t.identifier) {
        return inputs
            .request
            .get(tok.start..tok.end)
            .map(|s| Value::String(s.into()));
    }
    if let Some((i, f)) = clause.values.iter().enumerate().find(|(i, f)| {
        !used.contains(i)
            && matches!(
                f.kind,
                ExtractedKind::Quoted | ExtractedKind::Urls | ExtractedKind::Paths
            )
    }) {
        used.push(i);
        return Some(Value::String(f.value.clone()));
    }
    if let Some(text) = inputs.payload.and_then(first_string) {
        return Some(Value::String(text.to_string()));
    }
    if inputs.vague {
        return None;
    }
    clause.object_text(inputs.request).map(Value::String)
}

fn first_string(v: &Value) -> Option<&str> {
    match v {
        Value::String(s) => Some(s),
        Value::Object(o) => o.values().find_map(first_string),
        Value::Array(a) => a.iter().find_map(first_string),
        _ => None,
    }
}
