//! Projects a validated plan onto the catalog's specialists.
//!
//! Each step goes to the first specialist that lists its tool, so one create intent has
//! exactly one creator; specialists whose steps share a group run in parallel; a
//! schedule brings the specialist whose tools take one; every extracted value is passed
//! on; and when the specialist that creates an agent can fetch credentials itself, the
//! general specialist is told not to ask for them.

use std::collections::BTreeMap;

use waypoint_catalog::{Catalog, Specialist};
use waypoint_protocol::{ExtractedKind, Plan, Priority, SpecialistPlan};

use crate::lexicon::Lexicon;

/// The id used when no specialist fits.
pub const FALLBACK: &str = "general";

/// A specialist with the group it starts in and the tools of its steps.
type Assigned<'c> = Vec<(u32, &'c Specialist, Vec<&'c str>)>;

pub fn project(plan: &Plan, request: &str, catalog: &Catalog, lex: &Lexicon) -> SpecialistPlan {
    let assigned = assign(plan, catalog, lex);
    let fallback = assigned.is_empty();
    let mut priority_order = priority_order(&assigned);
    if fallback {
        let specialists = catalog.specialists();
        let id = specialists
            .iter()
            .find(|s| s.id == FALLBACK)
            .or(specialists.first())
            .map_or(FALLBACK, |s| s.id.as_str());
        priority_order.push(Priority::One(id.to_string()));
    }
    let extracted = &plan.understanding().extracted;
    let mut extracted_context = BTreeMap::new();
    for kind in ExtractedKind::ALL {
        let values = extracted.get(kind);
        if !values.is_empty() {
            extracted_context.insert(kind.as_str().to_string(), values.to_vec());
        }
    }
    let instructions = instructions(plan, catalog, &assigned, &extracted_context, fallback);
    SpecialistPlan {
        priority_order,
        refined_task: refined_task(plan),
        extracted_context,
        instructions,
        user_message: request.to_string(),
        fallback,
    }
}

fn owner<'c>(catalog: &'c Catalog, tool: &str) -> Option<&'c Specialist> {
    catalog
        .specialists()
        .iter()
        .find(|s| s.tools.iter().any(|t| t == tool))
}

/// Each step to the first specialist listing its tool; a schedule brings the specialist
/// whose tools take one.
fn assign<'c>(plan: &'c Plan, catalog: &'c Catalog, lex: &Lexicon) -> Assigned<'c> {
    let mut assigned: Assigned<'c> = Vec::new();
    for step in plan.steps().iter().filter(|s| s.is_known()) {
        let Some(spec) = owner(catalog, &step.tool) else {
            continue;
        };
        if let Some(entry) = assigned.iter_mut().find(|(_, s, _)| s.id == spec.id) {
            entry.2.push(step.tool.as_str());
        } else {
            assigned.push((step.group, spec, vec![step.tool.as_str()]));
        }
    }
    if plan.understanding().extracted.schedules.is_empty() {
        return assigned;
    }
    let schedule_args: &[String] = lex
        .arg_names
        .iter()
        .find(|(k, _)| k == "schedules")
        .map_or(&[], |(_, names)| names);
    let takes_schedule = |s: &Specialist| {
        s.tools.iter().any(|t| {
            catalog.tool(t).is_some_and(|tool| {
                tool.properties()
                    .any(|(p, _)| schedule_args.iter().any(|n| n == p))
            })
        })
    };
    if !assigned.iter().any(|(_, s, _)| takes_schedule(s))
        && let Some(spec) = catalog.specialists().iter().find(|s| takes_schedule(s))
    {
        let group = assigned.iter().map(|(g, ..)| *g).max().unwrap_or(0) + 1;
        assigned.push((group, spec, Vec::new()));
    }
    assigned
}

/// Specialists in step order; those starting in the same group run in parallel.
fn priority_order(assigned: &Assigned<'_>) -> Vec<Priority> {
    let mut order = Vec::new();
    let mut i = 0;
    while i < assigned.len() {
        let group = assigned[i].0;
        let mut same: Vec<String> = assigned[i..]
            .iter()
            .take_while(|(g, ..)| *g == group)
            .map(|(_, s, _)| s.id.clone())
            .collect();
        i += same.len();
        order.push(if same.len() == 1 {
            Priority::One(same.remove(0))
        } else {
            Priority::Parallel { parallel: same }
        });
    }
    order
}

fn instructions(
    plan: &Plan,
    catalog: &Catalog,
    assigned: &Assigned<'_>,
    context: &BTreeMap<String, Vec<String>>,
    fallback: bool,
) -> BTreeMap<String, String> {
    let context_note = if context.is_empty() {
        String::new()
    } else {
        let all: Vec<String> = context
            .iter()
            .map(|(k, v)| format!("{k}: {}", v.join(", ")))
            .collect();
        format!(" Use these exact values: {}.", all.join("; "))
    };
    let mut out = BTreeMap::new();
    for (_, spec, tools) in assigned {
        let mine: Vec<&waypoint_protocol::Step> = plan
            .steps()
            .iter()
            .filter(|s| tools.contains(&s.tool.as_str()))
            .collect();
        let mut what = if tools.is_empty() {
            format!(
                "Set up what runs on the schedule ({})",
                plan.understanding().extracted.schedules.join(", ")
            )
        } else {
            let mut clauses: Vec<&str> = Vec::new();
            for text in mine.iter().filter_map(|step| clause_of(plan, step)) {
                if !clauses.contains(&text) {
                    clauses.push(text);
                }
            }
            format!("Use {} to: {}", tools.join(", "), clauses.join("; "))
        };
        // Say whose output this specialist builds on.
        let mut feeders: Vec<String> = mine
            .iter()
            .flat_map(|s| s.input_refs.iter())
            .filter_map(|r| plan.steps().iter().find(|p| &p.id == r))
            .filter_map(|p| owner(catalog, &p.tool))
            .filter(|o| o.id != spec.id)
            .map(|o| o.id.clone())
            .collect();
        feeders.dedup();
        if !feeders.is_empty() {
            what.push_str(&format!(
                ". Attach what the {} specialist creates",
                feeders.join(", ")
            ));
        }
        out.insert(spec.id.clone(), format!("{what}.{context_note}"));
    }
    // The creator fetches credentials at run time: nobody asks for them in chat.
    let creator_has_vault = assigned.iter().any(|(_, s, _)| {
        s.tools.iter().any(|t| {
            catalog
                .tool(t)
                .is_some_and(|tool| tool.produces.iter().any(|p| p == "credential"))
        })
    });
    if let Some(general) = catalog.specialists().iter().find(|s| s.id == FALLBACK) {
        let mut text = if fallback {
            format!("Answer the user or ask for what is missing.{context_note}")
        } else {
            "Ask only what the plan cannot decide: output format, whether to run now.".to_string()
        };
        if creator_has_vault {
            text.push_str(
                " Do not ask for credentials in chat; the agent fetches them from the vault at run time.",
            );
        }
        out.insert(general.id.clone(), text);
    }
    out
}

/// The text of the clause a step came from.
fn clause_of<'p>(plan: &'p Plan, step: &waypoint_protocol::Step) -> Option<&'p str> {
    let index = step.clause?;
    plan.understanding()
        .clauses
        .iter()
        .find(|c| c.index == index)
        .map(|c| c.text.as_str())
}

fn refined_task(plan: &Plan) -> String {
    let clauses: Vec<&str> = plan
        .understanding()
        .clauses
        .iter()
        .filter(|c| c.role == waypoint_protocol::ClauseRole::Action)
        .map(|c| c.text.as_str())
        .collect();
    let mut s = clauses.join(", then ");
    if let Some(first) = s.get(..1) {
        s = first.to_uppercase() + &s[1..];
    }
    if !s.is_empty() {
        s.push('.');
    }
    s
}
