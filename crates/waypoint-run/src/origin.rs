//! How a run was started — the catalog it was planned on, the working directory, a
//! digest of each catalog entry its plan names — kept in the journal so a resume from
//! another shell, directory or instance runs the same tools in the same place
//! (docs/run.md, "Resume from anywhere").
//!
//! A resume on a catalog whose entries differ from the ones the run started with would
//! call other commands than the ones planned and approved; [`changes`] names the
//! differences so that the resume can be refused with them.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::{Map, json};
use waypoint_catalog::{Catalog, Entry};
use waypoint_protocol::{Plan, StepKind};

/// Where and on what a run was started.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Origin {
    /// The catalog files or folders, absolute; empty: the built-in catalog.
    #[serde(default)]
    pub catalog: Vec<PathBuf>,
    /// The working directory tools ran in.
    #[serde(default)]
    pub workdir: Option<PathBuf>,
    /// A digest of what each entry the plan names does when called (its schema,
    /// effects and `run`), by name.
    #[serde(default)]
    pub entries: BTreeMap<String, String>,
}

/// A digest of what calling `name` in `catalog` does, if the catalog has it: a
/// description or an example may change without changing it.
fn digest(catalog: &Catalog, name: &str) -> Option<String> {
    let what = match catalog.entry(name)? {
        Entry::Tool(t) => {
            json!({"input_schema": t.input_schema, "effects": t.effects, "run": t.run})
        }
        Entry::Pipeline(p) => serde_json::to_value(p).ok()?,
        Entry::Plan(d) => json!({"uri": d.uri, "steps": d.steps.len()}),
    };
    let mut map = Map::new();
    map.insert(name.to_string(), what);
    Some(waypoint_store::args_sha(&map))
}

/// The digests of the entries `plan` names.
pub fn entries(catalog: &Catalog, plan: &Plan) -> BTreeMap<String, String> {
    plan.steps()
        .iter()
        .filter(|s| matches!(s.kind, StepKind::Tool | StepKind::Pipeline | StepKind::Plan))
        .filter_map(|s| Some((s.tool.clone(), digest(catalog, &s.tool)?)))
        .collect()
}

/// What differs between `catalog` and the entries a run started with, one phrase each;
/// empty when the run can go on on it.
pub fn changes(catalog: &Catalog, started: &BTreeMap<String, String>) -> Vec<String> {
    started
        .iter()
        .filter_map(|(name, was)| match digest(catalog, name) {
            None => Some(format!("`{name}` is not in it")),
            Some(now) if now != *was => Some(format!("`{name}` changed")),
            Some(_) => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use waypoint_catalog::{Source, load};

    fn catalog(command: &str) -> Catalog {
        let text = format!(
            "tools:\n  - name: t\n    description: {command}\n    effects: write\n    run: {{command: [{command}]}}\n  - name: u\n    description: U.\n    effects: read\n    run: {{command: [true]}}\n"
        );
        load(&[Source {
            name: "c.yaml".into(),
            text,
        }])
        .unwrap()
        .catalog
    }

    fn plan() -> Plan {
        serde_json::from_value(json!({"plan_id": "pl_x", "steps": [
            {"id": "s1", "order": 1, "kind": "tool", "tool": "t", "group": 1}]}))
        .unwrap()
    }

    #[test]
    fn a_catalog_that_calls_the_same_way_has_no_changes_and_another_names_them() {
        let started = entries(&catalog("echo"), &plan());
        assert_eq!(started.len(), 1, "only the entries the plan names");
        assert!(changes(&catalog("echo"), &started).is_empty());
        assert_eq!(changes(&catalog("date"), &started), ["`t` changed"]);
        let builtin = waypoint_catalog::builtin().unwrap().catalog;
        assert_eq!(changes(&builtin, &started), ["`t` is not in it"]);
    }
}
