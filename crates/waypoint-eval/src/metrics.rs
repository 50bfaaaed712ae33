//! The metrics of docs/contracts.md, Evaluation cases and report, accumulated case by case.

use std::collections::HashMap;

use serde_json::{Value, json};
use waypoint_protocol::{
    EvalCase, EvalFailure, EvalReport, ExtractedKind, Latency, Plan, UNKNOWN_TOOL,
};

/// Hits over cases for one accuracy metric.
#[derive(Debug, Default, Clone, Copy)]
struct Ratio {
    hit: usize,
    of: usize,
}

impl Ratio {
    fn add(&mut self, ok: bool) {
        self.of += 1;
        self.hit += usize::from(ok);
    }
    fn value(self) -> Option<f64> {
        (self.of > 0).then(|| round4(self.hit as f64 / self.of as f64))
    }
}

/// Micro-averaged true positives, false positives and false negatives.
#[derive(Debug, Default, Clone, Copy)]
struct Micro {
    tp: usize,
    fp: usize,
    fn_: usize,
    cases: usize,
}

impl Micro {
    fn add<T: Eq + std::hash::Hash + Clone>(&mut self, expected: &[T], got: &[T]) {
        let mut want: HashMap<T, usize> = HashMap::new();
        for e in expected {
            *want.entry(e.clone()).or_default() += 1;
        }
        let mut tp = 0;
        for g in got {
            if let Some(n) = want.get_mut(g).filter(|n| **n > 0) {
                *n -= 1;
                tp += 1;
            }
        }
        self.tp += tp;
        self.fp += got.len() - tp;
        self.fn_ += expected.len() - tp;
        self.cases += 1;
    }
    fn f1(self) -> Option<f64> {
        if self.cases == 0 {
            return None;
        }
        let denom = 2 * self.tp + self.fp + self.fn_;
        Some(if denom == 0 {
            1.0
        } else {
            round4(2.0 * self.tp as f64 / denom as f64)
        })
    }
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// Accumulates scores over cases.
#[derive(Debug, Default)]
pub struct Scorer {
    cases: usize,
    goal: Ratio,
    sequence: Ratio,
    set: Ratio,
    complexity: Ratio,
    unknown: Ratio,
    in_scope: Ratio,
    oos: Ratio,
    ready: Ratio,
    nodes: Micro,
    edges: Micro,
    arg_values: Micro,
    order: Ratio,
    extracted_found: usize,
    extracted_expected: usize,
    latencies: Vec<u64>,
    failures: Vec<EvalFailure>,
}

impl Scorer {
    fn fail(&mut self, id: &str, field: &str, expected: Value, got: Value) {
        self.failures.push(EvalFailure {
            id: id.to_string(),
            field: field.to_string(),
            expected,
            got,
        });
    }

    /// Scores one case; a planning error fails every expectation the case carries.
    /// A case that says whether it expects a gap also counts, whole, towards in-scope
    /// accuracy or out-of-scope recall.
    /// Returns whether the case passed every check.
    pub fn score(&mut self, case: &EvalCase, plan: Result<&Plan, String>, micros: u64) -> bool {
        let before = self.failures.len();
        self.score_keys(case, plan, micros);
        let passed = self.failures.len() == before;
        match case.expect.unknown {
            Some(true) => self.oos.add(passed),
            Some(false) => self.in_scope.add(passed),
            None => {}
        }
        passed
    }

    #[expect(
        clippy::too_many_lines,
        reason = "a checklist of the case keys, one block per key"
    )]
    fn score_keys(&mut self, case: &EvalCase, plan: Result<&Plan, String>, micros: u64) {
        self.cases += 1;
        self.latencies.push(micros);
        let id = case.id.as_str();
        let e = &case.expect;
        let plan = match plan {
            Ok(p) => p,
            Err(err) => {
                self.fail(id, "plan", Value::Null, json!(err));
                let fields = [
                    e.goal.is_some(),
                    e.tools.is_some(),
                    e.tool_set.is_some(),
                    e.complexity.is_some(),
                    e.unknown.is_some(),
                    e.ready_to_formalize.is_some(),
                ];
                let metrics = [
                    &mut self.goal,
                    &mut self.sequence,
                    &mut self.set,
                    &mut self.complexity,
                    &mut self.unknown,
                    &mut self.ready,
                ];
                for (has, m) in fields.into_iter().zip(metrics) {
                    if has {
                        m.add(false);
                    }
                }
                if let Some(expected) = e.tools.as_ref().or(e.tool_set.as_ref()) {
                    let known: Vec<&String> =
                        expected.iter().filter(|t| *t != UNKNOWN_TOOL).collect();
                    self.nodes.add(&known, &[]);
                }
                if let Some(links) = &e.links {
                    self.edges.add(links, &[]);
                }
                if let Some(ex) = &e.extracted {
                    self.extracted_expected += ex.values().map(Vec::len).sum::<usize>();
                }
                if let Some(args) = &e.args {
                    self.arg_values.add(&expected_args(args), &[]);
                }
                if e.order.is_some() {
                    self.order.add(false);
                }
                return;
            }
        };
        let tools: Vec<String> = plan.steps().iter().map(|s| s.tool.clone()).collect();
        let known: Vec<String> = plan
            .steps()
            .iter()
            .filter(|s| s.is_known())
            .map(|s| s.tool.clone())
            .collect();

        if let Some(g) = &e.goal {
            let first = plan.understanding().goals.first();
            let intent_ok = g
                .intent
                .as_ref()
                .is_none_or(|want| want.accepts(first.map(|f| f.intent.as_str())));
            let entity_ok = g
                .entity
                .as_ref()
                .is_none_or(|want| want.accepts(first.and_then(|f| f.entity.as_deref())));
            self.goal.add(intent_ok && entity_ok);
            if !(intent_ok && entity_ok) {
                let got = first.map_or(
                    Value::Null,
                    |f| json!({"intent": f.intent, "entity": f.entity}),
                );
                self.fail(id, "goal", serde_json::to_value(g).unwrap_or_default(), got);
            }
        }
        if let Some(want) = &e.tools {
            let ok = *want == tools;
            self.sequence.add(ok);
            if !ok {
                self.fail(id, "tools", json!(want), json!(tools));
            }
        }
        if let Some(want) = &e.tool_set {
            let mut a: Vec<&String> = want.iter().filter(|t| *t != UNKNOWN_TOOL).collect();
            let mut b: Vec<&String> = known.iter().collect();
            a.sort();
            a.dedup();
            b.sort();
            b.dedup();
            let ok = a == b;
            self.set.add(ok);
            if !ok {
                self.fail(id, "tool_set", json!(want), json!(known));
            }
        }
        if let Some(expected) = e.tools.as_ref().or(e.tool_set.as_ref()) {
            let want: Vec<String> = expected
                .iter()
                .filter(|t| *t != UNKNOWN_TOOL)
                .cloned()
                .collect();
            self.nodes.add(&want, &known);
        }
        if let Some(links) = &e.links {
            let got: Vec<(String, String)> = plan
                .steps()
                .iter()
                .flat_map(|s| {
                    // A dependency is an edge whether it carries data or only order, as
                    // in TaskBench's task graphs ("pay the bill, then call my friend").
                    s.input_refs.iter().chain(&s.after).filter_map(|r| {
                        plan.steps()
                            .iter()
                            .find(|p| &p.id == r)
                            .map(|from| (from.tool.clone(), s.tool.clone()))
                    })
                })
                .collect();
            self.edges.add(links, &got);
            let mut want_sorted = links.clone();
            let mut got_sorted = got.clone();
            want_sorted.sort();
            got_sorted.sort();
            if want_sorted != got_sorted {
                self.fail(id, "links", json!(links), json!(got));
            }
        }
        if let Some(want) = &e.complexity {
            let got = plan.complexity().as_str();
            self.complexity.add(want == got);
            if want != got {
                self.fail(id, "complexity", json!(want), json!(got));
            }
        }
        if let Some(want) = e.unknown {
            let got = plan.has_unknown();
            self.unknown.add(want == got);
            if want != got {
                self.fail(id, "unknown", json!(want), json!(got));
            }
        }
        if let Some(want) = e.ready_to_formalize {
            let got = plan.clarity().ready_to_formalize();
            self.ready.add(want == got);
            if want != got {
                self.fail(id, "ready_to_formalize", json!(want), json!(got));
            }
        }
        if let Some(want) = &e.args {
            self.score_args(id, want, plan);
        }
        if let Some(pairs) = &e.order {
            self.score_order(id, pairs, plan);
        }
        if let Some(ex) = &e.extracted {
            for (kind, values) in ex {
                let have = ExtractedKind::parse(kind)
                    .map(|k| plan.understanding().extracted.get(k))
                    .unwrap_or_default();
                for v in values {
                    self.extracted_expected += 1;
                    if have.contains(v) {
                        self.extracted_found += 1;
                    } else {
                        self.fail(id, &format!("extracted.{kind}"), json!(v), json!(have));
                    }
                }
            }
        }
    }

    /// Scores the (tool, argument) pairs the case names: each distinct value the plan
    /// gives one of them is right or wrong; one it does not give is missed.
    fn score_args(&mut self, id: &str, want: &ArgsExpect, plan: &Plan) {
        let expected = expected_args(want);
        let named = |tool: &str, arg: &str| want.get(tool).is_some_and(|a| a.contains_key(arg));
        let mut got: Vec<ArgTriple> = plan
            .steps()
            .iter()
            .flat_map(|s| {
                s.args
                    .iter()
                    .filter(|(name, _)| named(&s.tool, name))
                    .filter_map(|(name, v)| {
                        comparable(v, plan).map(|v| (s.tool.clone(), name.clone(), v.to_string()))
                    })
            })
            .collect();
        got.sort();
        got.dedup();
        let before = self.arg_values;
        self.arg_values.add(&expected, &got);
        let missed = self.arg_values.fn_ - before.fn_;
        let extra = self.arg_values.fp - before.fp;
        if missed + extra > 0 {
            let got_map: Vec<Value> = got
                .iter()
                .map(|(t, a, v)| {
                    json!([t, a, serde_json::from_str::<Value>(v).unwrap_or_default()])
                })
                .collect();
            self.fail(id, "args", json!(want), json!(got_map));
        }
    }

    fn score_order(&mut self, id: &str, pairs: &[(String, String)], plan: &Plan) {
        let group = |tool: &str| {
            plan.steps()
                .iter()
                .filter(|s| s.tool == tool)
                .map(|s| s.group)
                .collect::<Vec<_>>()
        };
        // Every step of the earlier tool sits in an earlier group than every step of the later.
        let ok = pairs.iter().all(|(a, b)| {
            let (ga, gb) = (group(a), group(b));
            !ga.is_empty() && !gb.is_empty() && ga.iter().max() < gb.iter().min()
        });
        self.order.add(ok);
        if !ok {
            let got: Vec<Value> = plan
                .steps()
                .iter()
                .map(|s| json!([s.tool, s.group]))
                .collect();
            self.fail(id, "order", json!(pairs), json!(got));
        }
    }

    pub fn finish(mut self) -> EvalReport {
        self.latencies.sort_unstable();
        let pct = |p: f64| -> u64 {
            if self.latencies.is_empty() {
                return 0;
            }
            let n = self.latencies.len();
            // Nearest rank: the smallest rank with at least a share p of samples at or below.
            let rank = (1..=n).find(|r| *r as f64 >= p * n as f64).unwrap_or(n);
            self.latencies[rank - 1]
        };
        EvalReport {
            cases: self.cases,
            goal_accuracy: self.goal.value(),
            sequence_accuracy: self.sequence.value(),
            set_accuracy: self.set.value(),
            node_f1: self.nodes.f1(),
            edge_f1: self.edges.f1(),
            complexity_accuracy: self.complexity.value(),
            unknown_accuracy: self.unknown.value(),
            in_scope_accuracy: self.in_scope.value(),
            oos_recall: self.oos.value(),
            ready_accuracy: self.ready.value(),
            extracted_recall: (self.extracted_expected > 0)
                .then(|| round4(self.extracted_found as f64 / self.extracted_expected as f64)),
            arg_value_f1: self.arg_values.f1(),
            order_accuracy: self.order.value(),
            latency_us: Latency {
                p50: pct(0.5),
                p99: pct(0.99),
            },
            failures: self.failures,
            by_planner: std::collections::BTreeMap::new(),
            model_cases: Vec::new(),
        }
    }
}

/// `expect.args`: per tool, per argument, the value.
type ArgsExpect = std::collections::BTreeMap<String, std::collections::BTreeMap<String, Value>>;

/// A (tool, argument, normalised value as JSON text) triple.
type ArgTriple = (String, String, String);

fn expected_args(want: &ArgsExpect) -> Vec<ArgTriple> {
    want.iter()
        .flat_map(|(tool, args)| {
            args.iter()
                .map(|(name, v)| (tool.clone(), name.clone(), normalise(v).to_string()))
        })
        .collect()
}

/// A step's argument as the cases write it: a placeholder is no value, a reference names
/// the tool of the step it points at, strings fold case and white space.
fn comparable(v: &Value, plan: &Plan) -> Option<Value> {
    if let Some(o) = v.as_object() {
        if o.contains_key("$placeholder") {
            return None;
        }
        if let Some(r) = o.get("$ref").and_then(Value::as_str) {
            let id = r.split('/').next().unwrap_or(r);
            let tool = plan.steps().iter().find(|s| s.id == id)?;
            return Some(json!({ "$ref": tool.tool }));
        }
    }
    Some(normalise(v))
}

fn normalise(v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(
            s.split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .to_lowercase(),
        ),
        Value::Number(n) => Value::String(n.to_string()),
        Value::Array(a) => Value::Array(a.iter().map(normalise).collect()),
        Value::Object(o) => {
            Value::Object(o.iter().map(|(k, v)| (k.clone(), normalise(v))).collect())
        }
        other => other.clone(),
    }
}
