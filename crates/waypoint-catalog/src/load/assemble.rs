//! After every file is read: the merged catalog, and the checks that need all of it
//! (references resolve, evidence names real tools, pipelines do not call themselves).

use std::collections::HashMap;

use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{EvidenceRule, Location, Pipeline, Tool};
use crate::{Catalog, Contents};

use super::{Parts, Reference, Source, closest, line_of};

/// Collects diagnostics found after parsing, with the source line of each.
pub(crate) struct Reporter<'a> {
    texts: HashMap<&'a str, &'a str>,
    diags: &'a mut Vec<Diagnostic>,
}

impl Reporter<'_> {
    pub(crate) fn report(
        &mut self,
        severity: Severity,
        at: &Location,
        message: String,
        hint: Option<String>,
        related: Option<Location>,
    ) {
        let source_line = self
            .texts
            .get(at.file.as_str())
            .and_then(|t| line_of(t, at.line));
        self.diags.push(Diagnostic {
            severity,
            at: at.clone(),
            message,
            hint,
            related,
            source_line,
        });
    }

    /// Keeps the first of each name; every later one is an error naming both places.
    pub(crate) fn dedupe<T>(
        &mut self,
        items: Vec<T>,
        seen: &mut HashMap<String, Location>,
        what: &str,
        key: impl Fn(&T) -> (&str, &Location),
    ) -> Vec<T> {
        let mut kept = Vec::with_capacity(items.len());
        for item in items {
            let (name, at) = key(&item);
            if let Some(first) = seen.get(name) {
                let (message, related) = (format!("duplicate {what} `{name}`"), first.clone());
                let at = at.clone();
                self.report(
                    Severity::Error,
                    &at,
                    message,
                    Some("rename or remove one of the two definitions".into()),
                    Some(related),
                );
                continue;
            }
            seen.insert(name.to_string(), at.clone());
            kept.push(item);
        }
        kept
    }
}

/// Merges the parts, reporting duplicates, dangling references and pipeline cycles.
pub(super) fn assemble(parts: Parts, diags: &mut Vec<Diagnostic>, sources: &[Source]) -> Catalog {
    let mut r = Reporter {
        texts: sources
            .iter()
            .map(|s| (s.name.as_str(), s.text.as_str()))
            .collect(),
        diags,
    };
    // Tools and pipelines share one namespace: a plan step names either.
    let mut names = HashMap::new();
    let tools = r.dedupe(parts.contents.tools, &mut names, "tool", |t| {
        (&t.name, &t.at)
    });
    let pipelines = r.dedupe(
        parts.contents.pipelines,
        &mut names,
        "tool or pipeline id",
        |p| (&p.id, &p.at),
    );
    let specialists = r.dedupe(
        parts.contents.specialists,
        &mut HashMap::new(),
        "specialist",
        |s| (&s.id, &s.at),
    );
    let mut server_names = HashMap::new();
    let servers = r.dedupe(parts.contents.servers, &mut server_names, "server", |s| {
        (&s.name, &s.at)
    });
    check_refs(&mut r, &parts.refs, &tools, &pipelines, &server_names);
    for cycle in pipeline_cycles(&pipelines) {
        let first = &pipelines[cycle[0]];
        let path: Vec<&str> = cycle
            .iter()
            .map(|&i| pipelines[i].id.as_str())
            .chain([first.id.as_str()])
            .collect();
        r.report(
            Severity::Error,
            &first.at,
            format!("pipeline cycle: {}", path.join(" → ")),
            Some("a pipeline may not run itself, directly or through others".into()),
            None,
        );
    }
    check_evidence(&mut r, &parts.contents.evidence, &tools);
    let plans = crate::load_plans::check_plans(&mut r, parts.plans, &tools);
    crate::plan_check::steps(&mut r, &parts.orphan_steps, &tools);
    Catalog::new(Contents {
        plans,
        tools,
        pipelines,
        specialists,
        servers,
        lexicon: parts.contents.lexicon,
        evidence: parts.contents.evidence,
    })
}

pub(super) fn check_refs(
    r: &mut Reporter<'_>,
    refs: &[Reference],
    tools: &[Tool],
    pipelines: &[Pipeline],
    servers: &HashMap<String, Location>,
) {
    let tool_names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    let pipeline_ids: Vec<&str> = pipelines.iter().map(|p| p.id.as_str()).collect();
    for reference in refs {
        if let Some(server) = reference.name.strip_prefix("server:") {
            if !servers.contains_key(server) {
                r.report(
                    Severity::Error,
                    &reference.at,
                    format!("unknown MCP server `{server}`"),
                    Some("declare it under `servers:`".into()),
                    None,
                );
            }
            continue;
        }
        let name = reference.name.as_str();
        let known = tool_names.contains(&name)
            || (reference.allow_pipeline && pipeline_ids.contains(&name));
        if known {
            continue;
        }
        let mut pool = tool_names.clone();
        if reference.allow_pipeline {
            pool.extend(&pipeline_ids);
        }
        let hint = closest(name, &pool).map_or_else(
            || "define the tool under `tools:` or fix the name".to_string(),
            |s| format!("did you mean `{s}`?"),
        );
        r.report(
            Severity::Error,
            &reference.at,
            format!("{} names unknown tool `{name}`", reference.what),
            Some(hint),
            None,
        );
    }
}

pub(super) fn check_evidence(r: &mut Reporter<'_>, rules: &[EvidenceRule], tools: &[Tool]) {
    for rule in rules {
        for need in &rule.needs {
            if !tools.iter().any(|t| t.produces.contains(need)) {
                r.report(
                    Severity::Warning,
                    &rule.at,
                    format!("no tool produces evidence `{need}`"),
                    Some("add it to some tool's `produces:` or the rule can never be met".into()),
                    None,
                );
            }
        }
    }
}

/// Every cycle among pipelines that name other pipelines as steps, each reported once.
pub(super) fn pipeline_cycles(pipelines: &[Pipeline]) -> Vec<Vec<usize>> {
    let index: HashMap<&str, usize> = pipelines
        .iter()
        .enumerate()
        .map(|(i, p)| (p.id.as_str(), i))
        .collect();
    let edges: Vec<Vec<usize>> = pipelines
        .iter()
        .map(|p| {
            p.steps
                .iter()
                .filter_map(|s| index.get(s.as_str()).copied())
                .collect()
        })
        .collect();
    // 0 = unvisited, 1 = on the stack, 2 = done
    let mut state = vec![0u8; pipelines.len()];
    let mut cycles = Vec::new();
    for start in 0..pipelines.len() {
        if state[start] != 0 {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
        state[start] = 1;
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            if let Some(&to) = edges[node].get(*next) {
                *next += 1;
                match state[to] {
                    0 => {
                        state[to] = 1;
                        stack.push((to, 0));
                    }
                    1 => {
                        let from = stack.iter().position(|&(n, _)| n == to).unwrap_or(0);
                        cycles.push(stack[from..].iter().map(|&(n, _)| n).collect());
                    }
                    _ => {}
                }
            } else {
                state[node] = 2;
                stack.pop();
            }
        }
    }
    cycles
}
