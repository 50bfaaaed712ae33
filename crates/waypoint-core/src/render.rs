//! Renders a plan for people (text) and for diagrams (Mermaid, DOT).

use std::fmt::Write as _;

use waypoint_protocol::{Plan, StepKind};

/// Terminal styles; all empty when colour is off.
struct Paint {
    bold: &'static str,
    dim: &'static str,
    tool: &'static str,
    gap: &'static str,
    ask: &'static str,
    reset: &'static str,
}

impl Paint {
    fn new(color: bool) -> Self {
        if color {
            Self {
                bold: "\x1b[1m",
                dim: "\x1b[2m",
                tool: "\x1b[36m",
                gap: "\x1b[31m",
                ask: "\x1b[33m",
                reset: "\x1b[0m",
            }
        } else {
            Self {
                bold: "",
                dim: "",
                tool: "",
                gap: "",
                ask: "",
                reset: "",
            }
        }
    }
}

/// A readable rendering: numbered steps with tool, args and rationale; gaps, questions
/// and warnings set apart.
pub fn text(plan: &Plan, color: bool) -> String {
    let p = Paint::new(color);
    let steps = plan.steps();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}Plan{} {} · {} · {} step{} · planner: {}",
        p.bold,
        p.reset,
        plan.plan_id(),
        plan.complexity().as_str(),
        steps.len(),
        if steps.len() == 1 { "" } else { "s" },
        serde_json::to_value(plan.planner())
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    );
    if let Some(model) = plan.model() {
        let _ = write!(out, "  model {model}");
        if let Some(c) = plan.compaction() {
            let _ = write!(
                out,
                " · catalog {} → {} tokens, {} dropped",
                c.before_tokens,
                c.after_tokens,
                c.dropped.len()
            );
        }
        out.push('\n');
    }
    if let Some(u) = plan.usage() {
        let _ = write!(
            out,
            "  {} model call{} · {} + {} tokens · {} ms",
            u.calls,
            if u.calls == 1 { "" } else { "s" },
            u.prompt_tokens,
            u.completion_tokens,
            u.latency_ms
        );
        if let Some(cost) = u.cost_usd {
            let _ = write!(out, " · ${cost:.6}");
        }
        out.push('\n');
    }
    out.push('\n');
    for s in steps {
        step_lines(&mut out, s, &p);
    }
    if steps.is_empty() {
        let _ = writeln!(
            out,
            "  (no step: nothing in the request asks for an action)"
        );
    }
    let clarity = plan.clarity();
    out.push('\n');
    let _ = writeln!(
        out,
        "{}Clarity{} {} (ambiguity {:.2})",
        p.bold,
        p.reset,
        if clarity.ready_to_formalize() {
            "ready"
        } else {
            "needs answers before it runs"
        },
        clarity.ambiguity_score()
    );
    for q in clarity.missing_criteria() {
        let _ = writeln!(out, "  {}?{} {q}", p.ask, p.reset);
    }
    if !plan.warnings().is_empty() {
        let _ = writeln!(out, "{}Warnings{}", p.bold, p.reset);
        for w in plan.warnings() {
            let _ = writeln!(out, "  {}!{} {w}", p.ask, p.reset);
        }
    }
    out
}

/// One step: its line, then args, what it uses, what it follows and why.
fn step_lines(out: &mut String, s: &waypoint_protocol::Step, p: &Paint) {
    if s.kind == StepKind::Unknown {
        let _ = writeln!(out, "  {}{:>2}. ✗ unknown{}", p.gap, s.order, p.reset);
        let _ = writeln!(out, "      {}{}{}", p.gap, s.rationale, p.reset);
        return;
    }
    let kind = format!("{:?}", s.kind).to_lowercase();
    let _ = writeln!(
        out,
        "  {}{:>2}. {}{}{}  {}[{kind} · group {}]{}",
        p.bold, s.order, p.tool, s.tool, p.reset, p.dim, s.group, p.reset
    );
    if !s.args.is_empty() {
        let args = serde_json::Value::Object(s.args.clone()).to_string();
        let _ = writeln!(out, "      args  {}", truncate(&args, 160));
    }
    if !s.input_refs.is_empty() {
        let _ = writeln!(out, "      uses  {}", s.input_refs.join(", "));
    }
    if !s.after.is_empty() {
        let _ = writeln!(out, "      after {}", s.after.join(", "));
    }
    if !s.rationale.is_empty() {
        let _ = writeln!(out, "      why   {}{}{}", p.dim, s.rationale, p.reset);
    }
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        s.chars().take(max).collect::<String>() + "…"
    }
}

fn label(s: &waypoint_protocol::Step) -> String {
    format!("{}. {}", s.order, s.tool).replace('"', "'")
}

/// A Mermaid flowchart: one node per step, an edge per input reference.
pub fn mermaid(plan: &Plan) -> String {
    let mut out = String::from("flowchart TD\n");
    for s in plan.steps() {
        let node = match s.kind {
            StepKind::Unknown => format!("  {}{{{{\"{}\"}}}}:::gap\n", s.id, label(s)),
            StepKind::Pipeline | StepKind::Plan => format!("  {}[[\"{}\"]]\n", s.id, label(s)),
            _ => format!("  {}[\"{}\"]\n", s.id, label(s)),
        };
        out.push_str(&node);
    }
    for s in plan.steps() {
        for r in &s.input_refs {
            let _ = writeln!(out, "  {r} --> {}", s.id);
        }
        for r in &s.after {
            let _ = writeln!(out, "  {r} -. then .-> {}", s.id);
        }
    }
    let ids: Vec<&str> = plan.steps().iter().map(|s| s.id.as_str()).collect();
    for w in ids.windows(2) {
        let later = plan.steps().iter().find(|s| s.id == w[1]);
        if later.is_some_and(|s| s.input_refs.is_empty() && s.after.is_empty()) {
            let _ = writeln!(out, "  {} -.-> {}", w[0], w[1]);
        }
    }
    out.push_str("  classDef gap stroke:#c00,stroke-dasharray: 4 2\n");
    out
}

/// A Graphviz digraph with the same shape as [`mermaid`].
pub fn dot(plan: &Plan) -> String {
    let mut out = String::from(
        "digraph plan {\n  rankdir=TB;\n  node [shape=box, fontname=\"Helvetica\"];\n",
    );
    for s in plan.steps() {
        let style = match s.kind {
            StepKind::Unknown => ", color=red, style=dashed",
            StepKind::Pipeline | StepKind::Plan => ", peripheries=2",
            _ => "",
        };
        let _ = writeln!(out, "  {} [label=\"{}\"{style}];", s.id, label(s));
    }
    for s in plan.steps() {
        for r in &s.input_refs {
            let _ = writeln!(out, "  {r} -> {};", s.id);
        }
        for r in &s.after {
            let _ = writeln!(out, "  {r} -> {} [style=dashed, label=\"then\"];", s.id);
        }
    }
    out.push_str("}\n");
    out
}
