//! Arguments: a step's args made concrete (answers, `$ref`s, defaults)
//! and checked against its tool's schema.

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
        tool.fill_defaults(&mut args);
        check_args(self.catalog, tool, &args).map_err(Prep::Fail)?;
        Ok(args)
    }
}

pub(super) enum Prep {
    Ask(Box<Question>),
    Fail(String),
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
    let errors = waypoint_catalog::violations(validator, &instance, true);
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
