//! Data flow between steps: `{"$ref": "s2/output/url"}` in a step's args is replaced by
//! what it points at in an earlier step's output, just before the call.
//!
//! A reference is `STEP/output` followed by an optional JSON pointer. When the argument's
//! schema wants a string and the target is not one, the target's principal text is used
//! (see [`text_of`]), so a tool that returns `{"content": "…"}` feeds a tool that takes
//! text without either knowing the other.

use std::collections::HashMap;
use std::hash::BuildHasher;

use serde_json::{Map, Value};

/// Why a step's args could not be made concrete.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RefError {
    #[error("`{arg}` refers to `{target}`, which is not `STEP/output[/pointer]`")]
    Malformed { arg: String, target: String },
    #[error("`{arg}` refers to step `{step}`, which has no output")]
    NoOutput { arg: String, step: String },
    #[error("`{arg}` refers to `{pointer}` in the output of `{step}`, which is not there")]
    Missing {
        arg: String,
        step: String,
        pointer: String,
    },
    #[error("`{arg}` is still a placeholder ({what}); answer it to run this step")]
    Placeholder { arg: String, what: String },
}

/// Replaces every `$ref` in `args` with the value it points at. `schema` is the tool's
/// input schema, used to coerce a referenced value to the declared type.
pub fn resolve<H: BuildHasher>(
    args: &Map<String, Value>,
    outputs: &HashMap<String, Value, H>,
    schema: Option<&Value>,
) -> Result<Map<String, Value>, RefError> {
    let mut out = Map::with_capacity(args.len());
    for (name, value) in args {
        let declared = schema
            .and_then(|s| s.pointer(&format!("/properties/{}/type", escape(name))))
            .and_then(Value::as_str);
        out.insert(name.clone(), resolve_value(name, value, outputs, declared)?);
    }
    Ok(out)
}

fn resolve_value<H: BuildHasher>(
    arg: &str,
    value: &Value,
    outputs: &HashMap<String, Value, H>,
    declared: Option<&str>,
) -> Result<Value, RefError> {
    match value {
        Value::Object(o) if o.len() == 1 && o.contains_key("$ref") => {
            let target = o.get("$ref").and_then(Value::as_str).unwrap_or_default();
            let found = lookup(arg, target, outputs)?;
            Ok(coerce(arg, found, declared))
        }
        Value::Object(o) if o.contains_key("$placeholder") => Err(RefError::Placeholder {
            arg: arg.to_string(),
            what: o
                .get("$placeholder")
                .and_then(Value::as_str)
                .unwrap_or(arg)
                .to_string(),
        }),
        Value::Object(o) => {
            let mut m = Map::with_capacity(o.len());
            for (k, v) in o {
                m.insert(k.clone(), resolve_value(arg, v, outputs, None)?);
            }
            Ok(Value::Object(m))
        }
        Value::Array(items) => items
            .iter()
            .map(|v| resolve_value(arg, v, outputs, None))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        other => Ok(other.clone()),
    }
}

fn lookup<'o, H: BuildHasher>(
    arg: &str,
    target: &str,
    outputs: &'o HashMap<String, Value, H>,
) -> Result<&'o Value, RefError> {
    let (step, rest) = target.split_once('/').ok_or_else(|| RefError::Malformed {
        arg: arg.to_string(),
        target: target.to_string(),
    })?;
    let pointer = rest
        .strip_prefix("output")
        .filter(|p| p.is_empty() || p.starts_with('/'))
        .ok_or_else(|| RefError::Malformed {
            arg: arg.to_string(),
            target: target.to_string(),
        })?;
    let output = outputs.get(step).ok_or_else(|| RefError::NoOutput {
        arg: arg.to_string(),
        step: step.to_string(),
    })?;
    output.pointer(pointer).ok_or_else(|| RefError::Missing {
        arg: arg.to_string(),
        step: step.to_string(),
        pointer: pointer.to_string(),
    })
}

/// Fits a referenced value to the declared type: a structured output given to a string
/// arg yields the field of the same name when it has one (a search's first `path` for
/// a `path` arg), else its principal text.
fn coerce(arg: &str, v: &Value, declared: Option<&str>) -> Value {
    match (declared, v) {
        (Some("string"), Value::String(_)) | (None, _) => v.clone(),
        (Some("string"), _) => Value::String(field(v, arg).unwrap_or_else(|| text_of(v))),
        _ => v.clone(),
    }
}

/// The first string field called `name`, breadth first through objects and arrays.
fn field(v: &Value, name: &str) -> Option<String> {
    let mut queue = std::collections::VecDeque::from([v]);
    let mut seen = 0;
    while let Some(v) = queue.pop_front() {
        seen += 1;
        if seen > 10_000 {
            return None;
        }
        match v {
            Value::Object(o) => {
                if let Some(Value::String(s)) = o.get(name) {
                    return Some(s.clone());
                }
                queue.extend(o.values());
            }
            Value::Array(a) => queue.extend(a.iter()),
            _ => {}
        }
    }
    None
}

/// Fields that carry a tool's principal text, tried in order.
const TEXT_FIELDS: [&str; 7] = [
    "text", "content", "stdout", "body", "answer", "value", "result",
];

/// The principal text of an output: itself when it is a string, else its first
/// text-like field, else compact JSON.
pub fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Object(o) => TEXT_FIELDS
            .iter()
            .find_map(|f| o.get(*f).and_then(Value::as_str))
            .map_or_else(|| v.to_string(), str::to_string),
        other => other.to_string(),
    }
}

/// Whether any arg is still a `$placeholder`.
pub fn placeholders(args: &Map<String, Value>) -> Vec<(String, String)> {
    args.iter()
        .filter_map(|(k, v)| {
            v.get("$placeholder")
                .and_then(Value::as_str)
                .map(|what| (k.clone(), what.to_string()))
        })
        .collect()
}

/// Escapes a property name for a JSON pointer (RFC 6901).
fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// A person's answer (always text on a command line) as the value its argument's schema
/// wants: `2` for a number, `true` for a boolean, JSON for an array or object. Text that
/// does not parse as that type stays text, so the schema check names what is wrong.
pub fn typed_answer(text: &str, schema: Option<&Value>) -> Value {
    let types: Vec<&str> = match schema.and_then(|s| s.get("type")) {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if types.is_empty() || types.contains(&"string") {
        return Value::String(text.to_string());
    }
    match serde_json::from_str::<Value>(text.trim()) {
        Ok(v) if types.iter().any(|t| is_of_type(&v, t)) => v,
        _ => Value::String(text.to_string()),
    }
}

fn is_of_type(v: &Value, ty: &str) -> bool {
    match ty {
        "integer" => v.as_i64().is_some() || v.as_u64().is_some(),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        "null" => v.is_null(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn outputs() -> HashMap<String, Value> {
        HashMap::from([
            (
                "s1".to_string(),
                json!({"url": "https://example.com", "content": "hello"}),
            ),
            ("s2".to_string(), json!(["a", "b"])),
        ])
    }

    #[expect(clippy::needless_pass_by_value, reason = "called with json! literals")]
    fn map(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn a_pointer_picks_a_field_of_an_earlier_output() {
        let got = resolve(
            &map(json!({"u": {"$ref": "s1/output/url"}, "n": 3})),
            &outputs(),
            None,
        )
        .unwrap();
        assert_eq!(got, map(json!({"u": "https://example.com", "n": 3})));
    }

    #[test]
    fn a_whole_output_becomes_text_when_the_schema_wants_a_string() {
        let schema = json!({"properties": {"text": {"type": "string"}}});
        let got = resolve(
            &map(json!({"text": {"$ref": "s1/output"}})),
            &outputs(),
            Some(&schema),
        )
        .unwrap();
        assert_eq!(got["text"], "hello");
    }

    #[test]
    fn a_string_arg_takes_the_same_named_field_of_a_structured_output() {
        let schema = json!({"properties": {"path": {"type": "string"}}});
        let outputs = HashMap::from([(
            "s1".to_string(),
            json!({"matches": [{"path": "src/a.rs", "line": 3}, {"path": "b.rs"}]}),
        )]);
        let got = resolve(
            &map(json!({"path": {"$ref": "s1/output"}})),
            &outputs,
            Some(&schema),
        )
        .unwrap();
        assert_eq!(got["path"], "src/a.rs");
    }

    #[test]
    fn references_inside_arrays_and_objects_resolve() {
        let got = resolve(
            &map(json!({"xs": [{"$ref": "s2/output/1"}], "o": {"k": {"$ref": "s1/output/url"}}})),
            &outputs(),
            None,
        )
        .unwrap();
        assert_eq!(got["xs"], json!(["b"]));
        assert_eq!(got["o"]["k"], "https://example.com");
    }

    #[test]
    fn bad_references_say_what_is_wrong() {
        let o = outputs();
        let e = resolve(&map(json!({"a": {"$ref": "s9/output"}})), &o, None).unwrap_err();
        assert!(matches!(e, RefError::NoOutput { .. }), "{e}");
        let e = resolve(&map(json!({"a": {"$ref": "s1/output/nope"}})), &o, None).unwrap_err();
        assert!(e.to_string().contains("/nope"), "{e}");
        let e = resolve(&map(json!({"a": {"$ref": "s1"}})), &o, None).unwrap_err();
        assert!(matches!(e, RefError::Malformed { .. }), "{e}");
        let e = resolve(&map(json!({"a": {"$placeholder": "a city"}})), &o, None).unwrap_err();
        assert!(e.to_string().contains("a city"), "{e}");
    }

    #[test]
    fn text_of_prefers_text_fields_over_json() {
        assert_eq!(text_of(&json!({"stdout": "x", "code": 0})), "x");
        assert_eq!(text_of(&json!({"n": 1})), r#"{"n":1}"#);
        assert_eq!(text_of(&json!(4)), "4");
    }

    #[test]
    fn answers_take_the_type_their_schema_asks_for() {
        let number = serde_json::json!({"type": "number"});
        assert_eq!(typed_answer("2", Some(&number)), serde_json::json!(2));
        assert_eq!(typed_answer("two", Some(&number)), serde_json::json!("two"));
        let integer = serde_json::json!({"type": "integer"});
        assert_eq!(
            typed_answer("2.5", Some(&integer)),
            serde_json::json!("2.5")
        );
        let flag = serde_json::json!({"type": ["boolean", "null"]});
        assert_eq!(typed_answer(" true ", Some(&flag)), serde_json::json!(true));
        let list = serde_json::json!({"type": "array"});
        assert_eq!(
            typed_answer("[1, 2]", Some(&list)),
            serde_json::json!([1, 2])
        );
        let text = serde_json::json!({"type": "string"});
        assert_eq!(typed_answer("2", Some(&text)), serde_json::json!("2"));
        assert_eq!(typed_answer("2", None), serde_json::json!("2"));
    }
}
