//! Arguments and plan shape: a step's args made concrete (answers, `$ref`s, defaults)
//! and checked against its tool's schema; a plan file checked before it runs.

use super::*;

impl<S: RunStore + MemoryStore + 'static> Runner<'_, S> {
    /// Makes a step's args concrete and checks them against the tool's schema.
    pub(super) fn prepare_args(
        &self,
        st: &State,
        step: &Step,
        tool: &Tool,
    ) -> Result<Map<String, Value>, Prep> {
        let mut args = step.args.clone();
        // Answers given on resume fill placeholders (`STEP.ARG`) and ask_user steps.
        for (name, value) in &mut args {
            if value.get("$placeholder").is_some()
                && let Some(a) = st.decisions.answers.get(&format!("{}.{name}", step.id))
            {
                let schema = tool.properties().find(|(n, _)| n == name).map(|(_, s)| s);
                *value = refs::typed_answer(a, schema);
            }
        }
        let resolved = {
            let inner = lock(&st.inner);
            refs::resolve(&args, &inner.outputs, tool.input_schema.as_ref())
        };
        let mut args = match resolved {
            Ok(a) => a,
            Err(RefError::Placeholder { arg, what }) => {
                return Err(Prep::Ask(Box::new(Question {
                    call: None,
                    step_id: step.id.clone(),
                    text: format!(
                        "What should `{arg}` ({what}) be for {} ({})?",
                        step.id, tool.name
                    ),
                    expects: "answer".into(),
                    key: format!("{}.{arg}", step.id),
                })));
            }
            Err(e) => return Err(Prep::Fail(e.to_string())),
        };
        apply_defaults(tool, &mut args);
        check_args(self.catalog, tool, &args).map_err(Prep::Fail)?;
        Ok(args)
    }
}

pub(super) enum Prep {
    Ask(Box<Question>),
    Fail(String),
}

/// A plan's shape must let it run: unique step ids, and every step after the steps it
/// consumes (in a later group). Plans from the planner always pass; plan files may not.
pub(super) fn check_plan(plan: &Plan) -> Result<(), String> {
    let mut groups: HashMap<&str, u32> = HashMap::new();
    for step in plan.steps() {
        if groups.insert(step.id.as_str(), step.group).is_some() {
            return Err(format!("step id `{}` is used twice", step.id));
        }
    }
    for step in plan.steps() {
        for dep in dependencies(step) {
            match groups.get(dep.as_str()) {
                None => {
                    return Err(format!(
                        "step `{}` needs `{dep}`, which is not a step of this plan",
                        step.id
                    ));
                }
                Some(g) if *g >= step.group => {
                    return Err(format!(
                        "step `{}` (group {}) needs `{dep}` (group {g}); a step must be in a later group than what it consumes or follows",
                        step.id, step.group
                    ));
                }
                Some(_) => {}
            }
        }
    }
    Ok(())
}

/// Steps that must succeed before this one: those whose output it consumes (its
/// `input_refs` and every `$ref` in its args) and those the request ordered it after
/// (`after`: "run the tests, then deploy" does not deploy when the tests fail).
pub(super) fn dependencies(step: &Step) -> BTreeSet<String> {
    pub(super) fn walk(v: &Value, out: &mut BTreeSet<String>) {
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
    let mut out: BTreeSet<String> = step.input_refs.iter().chain(&step.after).cloned().collect();
    for v in step.args.values() {
        walk(v, &mut out);
    }
    out
}

/// Fills args the schema gives a `default` for.
pub(crate) fn apply_defaults(tool: &Tool, args: &mut Map<String, Value>) {
    for (name, schema) in tool.properties() {
        if !args.contains_key(name)
            && let Some(d) = schema.get("default")
        {
            args.insert(name.to_string(), d.clone());
        }
    }
}

/// Checks args against the tool's input schema, naming each violation. A catalog
/// tool's schema is compiled once per catalog ([`Catalog::validator`]); a tool made for
/// one step (a model subtask) is compiled here.
pub(crate) fn check_args(
    catalog: &Catalog,
    tool: &Tool,
    args: &Map<String, Value>,
) -> Result<(), String> {
    let Some(schema) = &tool.input_schema else {
        return Ok(());
    };
    let compiled;
    let from_catalog = catalog
        .tool(&tool.name)
        .is_some_and(|t| std::ptr::eq(t, tool));
    let validator = match catalog.validator(&tool.name) {
        Some(v) if from_catalog => v,
        _ => {
            compiled = jsonschema::validator_for(schema).map_err(|e| {
                format!(
                    "`{}` has an input_schema that does not compile: {e}",
                    tool.name
                )
            })?;
            &compiled
        }
    };
    let instance = Value::Object(args.clone());
    let errors: Vec<String> = validator
        .iter_errors(&instance)
        .take(5)
        .map(|e| {
            let at = e.instance_path().to_string();
            if at.is_empty() {
                e.to_string()
            } else {
                format!("{at}: {e}")
            }
        })
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "args for `{}` do not match its input_schema: {}",
            tool.name,
            errors.join("; ")
        ))
    }
}
