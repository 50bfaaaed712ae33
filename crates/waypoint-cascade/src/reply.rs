//! Reading a model's reply into plan steps, or saying precisely why it cannot be read.
//!
//! Replies are read leniently where meaning is unambiguous (reasoning tags or code fences
//! around the JSON, `args` as an object instead of a list, `"s2"` instead of `2`) and
//! strictly where guessing would change the plan (no `steps`, a step without a tool).
//! The strict failures become the digest of the repair round.
//! Names outside the catalog are not failures here: the validate stage demotes them to
//! `unknown` steps, the same guard the deterministic planner's output passes.

use serde_json::{Map, Value, json};
use waypoint_catalog::Catalog;
use waypoint_protocol::{Step, StepKind, UNKNOWN_TOOL};

/// A reply turned into steps, before validation.
#[derive(Debug)]
pub struct Read {
    pub steps: Vec<Step>,
    pub reasoning: String,
}

/// Reads the reply text; `Err` holds a short digest of every problem found.
pub fn read(content: &str, catalog: &Catalog, max_steps: usize) -> Result<Read, String> {
    let json = extract_json(content).ok_or_else(|| {
        if content.trim().is_empty() {
            "the reply was empty".to_string()
        } else {
            format!(
                "the reply is not a JSON object (it starts `{}`)",
                content.trim().chars().take(60).collect::<String>()
            )
        }
    })?;
    let value: Value =
        serde_json::from_str(json).map_err(|e| format!("the JSON is invalid: {e}"))?;
    let Some(obj) = value.as_object() else {
        return Err("the reply must be a JSON object with `steps`".into());
    };
    let Some(raw_steps) = obj.get("steps").and_then(Value::as_array) else {
        return Err("the object has no `steps` array".into());
    };
    let mut problems = Vec::new();
    if raw_steps.len() > max_steps {
        problems.push(format!(
            "{} steps is more than the {max_steps} allowed",
            raw_steps.len()
        ));
    }
    let steps: Vec<Step> = raw_steps
        .iter()
        .enumerate()
        .filter_map(|(i, raw)| read_step(i + 1, raw, catalog, &mut problems))
        .collect();
    if !problems.is_empty() {
        return Err(problems.join("; "));
    }
    let reasoning = obj
        .get("reasoning")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .trim()
        .to_string();
    Ok(Read { steps, reasoning })
}

fn read_step(n: usize, raw: &Value, catalog: &Catalog, problems: &mut Vec<String>) -> Option<Step> {
    let Some(s) = raw.as_object() else {
        problems.push(format!("step {n} is not an object"));
        return None;
    };
    let tool = s
        .get("tool")
        .or_else(|| s.get("name"))
        .and_then(Value::as_str)
        .map(str::trim)
        .unwrap_or_default();
    if tool.is_empty() {
        problems.push(format!("step {n} has no `tool`"));
        return None;
    }
    let why = s
        .get("why")
        .or_else(|| s.get("rationale"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .trim()
        .to_string();
    let mut input_refs = Vec::new();
    for u in s
        .get("uses")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        // A reference to a step that does not come before is kept here and dropped,
        // with a warning, by the validate stage — the same rule for every planner.
        match step_number(u) {
            Some(k) => input_refs.push(format!("s{k}")),
            None => problems.push(format!(
                "step {n} has a `uses` entry that is not a step number: {u}"
            )),
        }
    }
    input_refs.dedup();
    let unknown = tool == UNKNOWN_TOOL;
    let args = if unknown {
        Map::new()
    } else {
        read_args(s.get("args"), catalog.tool(tool), n, &mut input_refs)
    };
    Some(Step {
        id: format!("s{n}"),
        order: u32::try_from(n).unwrap_or(u32::MAX),
        kind: if unknown {
            StepKind::Unknown
        } else {
            StepKind::Tool
        },
        tool: tool.to_string(),
        args,
        input_refs,
        after: Vec::new(),
        group: 0,
        rationale: if unknown {
            format!(
                "gap: {}",
                if why.is_empty() {
                    "no catalog tool fits"
                } else {
                    &why
                }
            )
        } else {
            why
        },
        clause: None,
    })
}

/// `2`, `"2"`, `"s2"` and `"$s2"` all name step 2.
fn step_number(v: &Value) -> Option<usize> {
    match v {
        Value::Number(n) => n.as_u64().and_then(|n| usize::try_from(n).ok()),
        Value::String(s) => s
            .trim()
            .trim_start_matches('$')
            .trim_start_matches('s')
            .parse()
            .ok(),
        _ => None,
    }
}

/// Args arrive as `[{"name", "value"}]` (the schema's form) or as an object. String
/// values are coerced to the type the tool's schema wants; `"$sN"` becomes a reference
/// to step N's output (and an input ref).
fn read_args(
    raw: Option<&Value>,
    tool: Option<&waypoint_catalog::Tool>,
    n: usize,
    input_refs: &mut Vec<String>,
) -> Map<String, Value> {
    let mut pairs: Vec<(String, Value)> = Vec::new();
    match raw {
        Some(Value::Array(items)) => {
            for item in items {
                let name = item.get("name").and_then(Value::as_str).unwrap_or_default();
                if let Some(value) = item.get("value")
                    && !name.trim().is_empty()
                {
                    pairs.push((name.trim().to_string(), value.clone()));
                }
            }
        }
        Some(Value::Object(map)) => {
            pairs.extend(map.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        _ => {}
    }
    let mut args = Map::new();
    for (name, value) in pairs {
        if let Some(text) = value.as_str()
            && let Some(k) = reference(text)
            && k >= 1
            && k < n
        {
            let id = format!("s{k}");
            if !input_refs.contains(&id) {
                input_refs.push(id.clone());
            }
            args.insert(name, json!({ "$ref": format!("{id}/output") }));
            continue;
        }
        let wanted = tool
            .and_then(|t| t.properties().find(|(p, _)| *p == name).map(|(_, s)| s))
            .and_then(|s| s.get("type"))
            .and_then(Value::as_str);
        args.insert(name, coerce(value, wanted));
    }
    args
}

/// `$s2`, `$s2.output`, `{{s2}}` → 2.
fn reference(text: &str) -> Option<usize> {
    let t = text.trim();
    let t = t
        .strip_prefix("{{")
        .and_then(|t| t.strip_suffix("}}"))
        .unwrap_or(t)
        .trim();
    let t = t.strip_prefix('$')?;
    let t = t.strip_prefix('s')?;
    let digits: String = t.chars().take_while(char::is_ascii_digit).collect();
    let rest = &t[digits.len()..];
    if !(rest.is_empty() || rest.starts_with(".output") || rest.starts_with("/output")) {
        return None;
    }
    digits.parse().ok()
}

fn coerce(value: Value, wanted: Option<&str>) -> Value {
    let Value::String(s) = &value else {
        return value;
    };
    let t = s.trim();
    match wanted {
        Some("integer") => t.parse::<i64>().map_or(value.clone(), Value::from),
        Some("number") => t.parse::<f64>().map_or(value.clone(), Value::from),
        Some("boolean") => match t.to_ascii_lowercase().as_str() {
            "true" | "yes" => Value::Bool(true),
            "false" | "no" => Value::Bool(false),
            _ => value,
        },
        Some("array") => match serde_json::from_str::<Value>(t) {
            Ok(v @ Value::Array(_)) => v,
            _ => Value::Array(
                t.split(',')
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                    .map(|p| Value::String(p.to_string()))
                    .collect(),
            ),
        },
        Some("object") => match serde_json::from_str::<Value>(t) {
            Ok(v @ Value::Object(_)) => v,
            _ => value,
        },
        _ => value,
    }
}

/// The JSON object inside a reply: after any `<think>…</think>` block, inside any code
/// fence, from the first `{` to its balanced `}`.
fn extract_json(content: &str) -> Option<&str> {
    let mut text = content;
    if let Some(end) = text.rfind("</think>") {
        text = &text[end + "</think>".len()..];
    }
    let start = text.find('{')?;
    let bytes = text.as_bytes();
    let (mut depth, mut in_str, mut escaped) = (0usize, false, false);
    for (i, &b) in bytes.iter().enumerate().skip(start) {
        if in_str {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&text[start..=i]);
                }
            }
            _ => {}
        }
    }
    // Unbalanced: hand back the rest so the JSON error names where it was cut.
    Some(&text[start..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog() -> Catalog {
        waypoint_catalog::builtin().unwrap().catalog
    }

    #[test]
    fn reads_the_schema_form() {
        let r = read(
            r#"{"reasoning":"two parts","steps":[
                {"tool":"fetch_url","args":[{"name":"url","value":"https://a.example"}],"uses":[],"why":"get it"},
                {"tool":"summarize","args":[{"name":"text","value":"$s1"}],"uses":[1],"why":"sum"}]}"#,
            &catalog(),
            8,
        )
        .unwrap();
        assert_eq!(r.steps.len(), 2);
        assert_eq!(r.steps[1].input_refs, vec!["s1"]);
        assert_eq!(r.steps[1].args["text"], json!({"$ref": "s1/output"}));
        assert_eq!(r.reasoning, "two parts");
    }

    #[test]
    fn tolerates_wrappers_and_object_args() {
        let r = read(
            "<think>hmm {not json}</think>\n```json\n{\"steps\":[{\"tool\":\"x\",\"args\":{\"n\":\"3\"},\"uses\":[\"s1\"]}]}\n```",
            &catalog(),
            8,
        )
        .unwrap();
        assert_eq!(r.steps[0].tool, "x");
        assert_eq!(r.steps[0].args["n"], json!("3"));
        // Kept for the validate stage to drop with a warning.
        assert_eq!(r.steps[0].input_refs, vec!["s1"]);
        assert!(
            read(
                "{\"steps\":[{\"tool\":\"x\",\"uses\":[\"banana\"]}]}",
                &catalog(),
                8
            )
            .unwrap_err()
            .contains("not a step number")
        );
        let r = read(
            "Sure! {\"steps\":[{\"tool\":\"unknown\",\"why\":\"no pizza tool\"}]} hope that helps",
            &catalog(),
            8,
        )
        .unwrap();
        assert_eq!(r.steps[0].kind, StepKind::Unknown);
        assert_eq!(r.steps[0].rationale, "gap: no pizza tool");
    }

    #[test]
    fn digests_name_the_problem() {
        let c = catalog();
        assert!(read("", &c, 8).unwrap_err().contains("empty"));
        assert!(
            read("I cannot do that", &c, 8)
                .unwrap_err()
                .contains("not a JSON object")
        );
        assert!(
            read("{\"steps\": [", &c, 8)
                .unwrap_err()
                .contains("invalid")
        );
        assert!(
            read("{\"plan\": []}", &c, 8)
                .unwrap_err()
                .contains("no `steps`")
        );
        assert!(
            read("{\"steps\": [{}]}", &c, 8)
                .unwrap_err()
                .contains("no `tool`")
        );
        let many = format!("{{\"steps\": [{}]}}", ["{\"tool\":\"a\"}"; 5].join(","));
        assert!(read(&many, &c, 3).unwrap_err().contains("more than"));
    }

    #[test]
    fn coerces_to_the_schema_type() {
        assert_eq!(coerce(json!("3"), Some("integer")), json!(3));
        assert_eq!(coerce(json!("x"), Some("integer")), json!("x"));
        assert_eq!(coerce(json!("a, b"), Some("array")), json!(["a", "b"]));
        assert_eq!(coerce(json!("yes"), Some("boolean")), json!(true));
        assert_eq!(reference("$s2"), Some(2));
        assert_eq!(reference("{{$s3.output}}"), Some(3));
        assert_eq!(reference("$settings"), None);
    }
}
