//! The planner-first specialist runner: a specialist plan's `priorityOrder`
//! becomes the order of execution, and each specialist's instructions travel with its
//! steps together with every concrete value of the request.
//!
//! The projection onto specialists is the core crate's; this module only schedules it.
//! Specialists run in priority order, the members of a `parallel` entry together; each
//! step goes to the first specialist that lists its tool, and its brief (instructions,
//! extractedContext, and the user's message when the plan fell back) is handed to
//! model-backed steps. A specialist with no planned step gets one `llm_subtask` step
//! carrying its brief, so the fallback specialist still sees the whole message.

use std::collections::HashMap;
use std::fmt::Write as _;

use serde_json::{Map, Value};
use waypoint_catalog::Catalog;
use waypoint_protocol::{Plan, PlanParts, Priority, SpecialistPlan, Step, StepKind};

/// Groups of one priority slot are numbered from `slot * SLOT`, so steps keep their own
/// group order inside the slot.
const SLOT: u32 = 1000;

/// The plan to execute and the brief of each of its steps.
pub fn schedule(
    spec: &SpecialistPlan,
    plan: &Plan,
    catalog: &Catalog,
) -> (Plan, HashMap<String, String>) {
    let owner = |tool: &str| {
        catalog
            .specialists()
            .iter()
            .find(|s| s.tools.iter().any(|t| t == tool))
            .map(|s| s.id.clone())
    };
    let mut steps: Vec<Step> = Vec::new();
    let mut briefs = HashMap::new();
    let mut next_id = plan.steps().len() + 1;
    for (slot, entry) in spec.priority_order.iter().enumerate() {
        let ids: Vec<&String> = match entry {
            Priority::One(id) => vec![id],
            Priority::Parallel { parallel } => parallel.iter().collect(),
        };
        let base = (u32::try_from(slot).unwrap_or(u32::MAX - 1) + 1).saturating_mul(SLOT);
        for id in ids {
            let brief = brief(spec, id);
            let mine: Vec<&Step> = plan
                .steps()
                .iter()
                .filter(|s| owner(&s.tool).as_deref() == Some(id.as_str()))
                .collect();
            if mine.is_empty() {
                let mut args = Map::new();
                args.insert("specialist".into(), Value::String(id.clone()));
                let step_id = format!("s{next_id}");
                next_id += 1;
                briefs.insert(step_id.clone(), brief);
                steps.push(Step {
                    id: step_id,
                    order: 0,
                    kind: StepKind::LlmSubtask,
                    tool: format!("specialist:{id}"),
                    args,
                    input_refs: Vec::new(),
                    after: Vec::new(),
                    group: base,
                    rationale: format!("the {id} specialist, from its instructions"),
                    clause: None,
                });
                continue;
            }
            for s in mine {
                let mut s = s.clone();
                s.group += base;
                briefs.insert(s.id.clone(), brief.clone());
                steps.push(s);
            }
        }
    }
    // Steps no specialist owns keep their place after the specialists'.
    let last = u32::try_from(spec.priority_order.len() + 1)
        .unwrap_or(u32::MAX)
        .saturating_mul(SLOT);
    for s in plan.steps() {
        if !steps.iter().any(|t| t.id == s.id) {
            let mut s = s.clone();
            s.group += last;
            steps.push(s);
        }
    }
    // A step never runs before what it consumes.
    let groups: HashMap<String, u32> = steps.iter().map(|s| (s.id.clone(), s.group)).collect();
    for s in &mut steps {
        let after = s
            .input_refs
            .iter()
            .filter_map(|r| groups.get(r))
            .max()
            .map_or(0, |g| g + 1);
        s.group = s.group.max(after);
    }
    steps.sort_by_key(|s| s.group);
    for (i, s) in steps.iter_mut().enumerate() {
        s.order = u32::try_from(i + 1).unwrap_or(u32::MAX);
    }
    let scheduled = Plan::new(PlanParts {
        plan_id: plan.plan_id().to_string(),
        request: spec.user_message.clone(),
        steps,
        reasoning: format!("{} Run as specialists in priority order.", plan.reasoning()),
        understanding: plan.understanding().clone(),
        clarity: plan.clarity().clone(),
        planner: plan.planner(),
        model: plan.model().map(str::to_string),
        compaction: plan.compaction().cloned(),
        usage: plan.usage().cloned(),
        warnings: plan.warnings().to_vec(),
    });
    (scheduled, briefs)
}

/// What one specialist is told: its instructions, the refined task, every extracted
/// value and — when the plan fell back — the user's own words.
pub fn brief(spec: &SpecialistPlan, id: &str) -> String {
    let mut out = format!("You are the {id} specialist. Task: {}", spec.refined_task);
    if let Some(i) = spec.instructions.get(id) {
        let _ = write!(out, "\nInstructions: {i}");
    }
    if !spec.extracted_context.is_empty() {
        out.push_str("\nExtracted context:");
        for (k, v) in &spec.extracted_context {
            let _ = write!(out, "\n- {k}: {}", v.join(", "));
        }
    }
    if spec.fallback || !spec.instructions.contains_key(id) {
        let _ = write!(
            out,
            "\nUser message (for URLs and exact values):\n---\n{}\n---",
            spec.user_message
        );
    }
    out
}
