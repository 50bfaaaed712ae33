//! A plan handed back as JSON (`waypoint run --plan FILE`, a journaled run): parsed into
//! a [`Plan`], and its shape checked before anything runs. The text is untrusted
//! (docs/security.md): both return typed errors and never panic.

use std::collections::{BTreeSet, HashMap};

use serde_json::Value;

use crate::plan::{Plan, Step};

/// Why a plan's JSON could not be read.
#[derive(Debug, thiserror::Error)]
#[error("line {line} column {column}: {source}")]
pub struct PlanJsonError {
    /// 1-based line of the problem.
    pub line: usize,
    /// 1-based column of the problem.
    pub column: usize,
    #[source]
    pub source: serde_json::Error,
}

/// Parses the JSON `waypoint plan --json` prints (docs/contracts.md, Plan JSON); the
/// derived fields are derived again.
pub fn parse_plan(text: &str) -> Result<Plan, PlanJsonError> {
    serde_json::from_str(text).map_err(|source| PlanJsonError {
        line: source.line(),
        column: source.column(),
        source,
    })
}

/// Why a plan's steps cannot run in any order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanShapeError {
    #[error("step id `{id}` is used twice")]
    DuplicateStep { id: String },
    #[error("step `{step}` needs `{dep}`, which is not a step of this plan")]
    UnknownDependency { step: String, dep: String },
    #[error(
        "step `{step}` (group {group}) needs `{dep}` (group {dep_group}); a step must be in a later group than what it consumes or follows"
    )]
    NotLater {
        step: String,
        group: u32,
        dep: String,
        dep_group: u32,
    },
}

impl Plan {
    /// A plan's shape must let it run: unique step ids, and every step after the steps
    /// it consumes (in a later group). Plans from the planner always pass; plan files
    /// may not.
    pub fn check_shape(&self) -> Result<(), PlanShapeError> {
        let mut groups: HashMap<&str, u32> = HashMap::new();
        for step in self.steps() {
            if groups.insert(step.id.as_str(), step.group).is_some() {
                return Err(PlanShapeError::DuplicateStep {
                    id: step.id.clone(),
                });
            }
        }
        for step in self.steps() {
            for dep in step.dependencies() {
                match groups.get(dep.as_str()) {
                    None => {
                        return Err(PlanShapeError::UnknownDependency {
                            step: step.id.clone(),
                            dep,
                        });
                    }
                    Some(g) if *g >= step.group => {
                        return Err(PlanShapeError::NotLater {
                            step: step.id.clone(),
                            group: step.group,
                            dep,
                            dep_group: *g,
                        });
                    }
                    Some(_) => {}
                }
            }
        }
        Ok(())
    }
}

impl Step {
    /// Steps that must succeed before this one: those whose output it consumes (its
    /// `input_refs` and every `$ref` in its args) and those the request ordered it after
    /// (`after`: "run the tests, then deploy" does not deploy when the tests fail).
    pub fn dependencies(&self) -> BTreeSet<String> {
        fn walk(v: &Value, out: &mut BTreeSet<String>) {
            match v {
                Value::Object(o) => {
                    if let Some(Value::String(r)) = o.get("$ref")
                        && let Some((id, _)) = r.split_once('/')
                    {
                        out.insert(id.to_string());
                    }
                    o.values().for_each(|v| walk(v, out));
                }
                Value::Array(a) => a.iter().for_each(|v| walk(v, out)),
                _ => {}
            }
        }
        let mut out: BTreeSet<String> =
            self.input_refs.iter().chain(&self.after).cloned().collect();
        for v in self.args.values() {
            walk(v, &mut out);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(steps: &str) -> Plan {
        parse_plan(&format!(r#"{{"plan_id": "pl_0", "steps": {steps}}}"#)).unwrap()
    }

    #[test]
    fn a_bad_plan_json_names_its_line_and_column() {
        let e = parse_plan("{\n  \"plan_id\": 3\n}").unwrap_err();
        assert_eq!((e.line, e.column), (2, 14));
        assert!(
            e.to_string().starts_with("line 2 column 14: invalid type"),
            "{e}"
        );
        assert!(parse_plan("").is_err());
        assert!(parse_plan("[]").is_err());
    }

    #[test]
    fn the_shape_check_names_what_cannot_run() {
        let step = |id: &str, group: u32, refs: &str| {
            format!(
                r#"{{"id": "{id}", "order": 1, "kind": "tool", "tool": "t", "group": {group}, "input_refs": {refs}}}"#
            )
        };
        let ok = plan(&format!(
            "[{}, {}]",
            step("s1", 1, "[]"),
            step("s2", 2, r#"["s1"]"#)
        ));
        assert_eq!(ok.check_shape(), Ok(()));
        let twice = plan(&format!(
            "[{}, {}]",
            step("s1", 1, "[]"),
            step("s1", 2, "[]")
        ));
        assert_eq!(
            twice.check_shape().unwrap_err().to_string(),
            "step id `s1` is used twice"
        );
        let dangling = plan(&format!("[{}]", step("s1", 1, r#"["s9"]"#)));
        assert!(matches!(
            dangling.check_shape(),
            Err(PlanShapeError::UnknownDependency { .. })
        ));
        let same_group = plan(&format!(
            "[{}, {}]",
            step("s1", 1, "[]"),
            step("s2", 1, r#"["s1"]"#)
        ));
        assert!(matches!(
            same_group.check_shape(),
            Err(PlanShapeError::NotLater {
                group: 1,
                dep_group: 1,
                ..
            })
        ));
    }

    #[test]
    fn dependencies_include_refs_nested_in_args() {
        let p = plan(
            r#"[{"id": "s2", "order": 1, "kind": "tool", "tool": "t", "group": 2, "after": ["s0"],
                 "args": {"a": [{"b": {"$ref": "s1/output"}}], "c": {"$ref": "no-slash"}}}]"#,
        );
        let deps: Vec<_> = p.steps()[0].dependencies().into_iter().collect();
        assert_eq!(deps, ["s0", "s1"]);
    }
}
