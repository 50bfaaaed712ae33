//! The completion check: a run is done when every successful step together
//! produced the evidence its goals need — not merely when no step failed.

use std::collections::BTreeSet;

use waypoint_catalog::{Catalog, Entry};
use waypoint_protocol::{Plan, Verification};

/// Evidence classes the plan's goals need, from the catalog's `evidence:` rules.
pub fn needs(plan: &Plan, catalog: &Catalog) -> BTreeSet<String> {
    let mut needs = BTreeSet::new();
    for goal in &plan.understanding().goals {
        for rule in catalog.evidence() {
            let entity_fits = rule
                .entity
                .as_deref()
                .is_none_or(|e| goal.entity.as_deref() == Some(e));
            if rule.intent == goal.intent && entity_fits {
                needs.extend(rule.needs.iter().cloned());
            }
        }
    }
    needs
}

/// What a catalog entry yields: its `produces`, and for a pipeline its tools' too.
pub fn produced_by(name: &str, catalog: &Catalog) -> Vec<String> {
    match catalog.entry(name) {
        Some(Entry::Tool(t)) => t.produces.clone(),
        Some(Entry::Pipeline(p)) => {
            let mut out = p.produces.clone();
            for s in &p.steps {
                if let Some(t) = catalog.tool(s) {
                    out.extend(t.produces.iter().cloned());
                }
            }
            out
        }
        Some(Entry::Plan(d)) => d.produces.clone(),
        None => Vec::new(),
    }
}

/// Checks the evidence the goals need against what the succeeded entries produce.
pub fn verify<'a>(
    plan: &Plan,
    catalog: &Catalog,
    succeeded: impl IntoIterator<Item = &'a str>,
) -> Verification {
    let have: BTreeSet<String> = succeeded
        .into_iter()
        .flat_map(|name| produced_by(name, catalog))
        .collect();
    let (satisfied, missing): (Vec<String>, Vec<String>) = needs(plan, catalog)
        .into_iter()
        .partition(|n| have.contains(n));
    Verification {
        satisfied,
        missing,
        criteria: Vec::new(),
    }
}
