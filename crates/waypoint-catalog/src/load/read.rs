//! Reading one catalog file: its top-level sections, each tool, pipeline, specialist,
//! server, lexicon and evidence rule, with a diagnostic for every unknown key or bad value.

use std::collections::BTreeMap;

use crate::model::{
    BUILTINS, Effects, EvidenceRule, Lexicon, Pipeline, RunSpec, Server, Specialist, Tool,
};
use crate::yaml::{self, Node, Pos, Value};

use super::{Ctx, Parts, Reference, closest};

pub(super) const TOP_KEYS: &[&str] = &[
    "tools",
    "pipelines",
    "specialists",
    "servers",
    "lexicon",
    "evidence",
];

pub(super) const TOOL_KEYS: &[&str] = &[
    "name",
    "description",
    "keywords",
    "examples",
    "input_schema",
    "accepts",
    "produces",
    "effects",
    "cost_usd",
    "run",
];

pub(super) const PIPELINE_KEYS: &[&str] = &[
    "id",
    "description",
    "steps",
    "accepts",
    "produces",
    "supersedes",
    "intent_keywords",
    "examples",
];

pub(super) const SPECIALIST_KEYS: &[&str] = &["id", "description", "tools"];

pub(super) const SERVER_KEYS: &[&str] = &["name", "command", "url", "env"];

pub(super) const LEXICON_KEYS: &[&str] = &["intents", "entities"];

pub(super) const EVIDENCE_KEYS: &[&str] = &["intent", "entity", "needs"];

pub(super) const RUN_KEYS: &[&str] = &["builtin", "command", "http", "mcp", "llm"];

pub(super) fn read_file(ctx: &mut Ctx<'_>, root: &Node, parts: &mut Parts) {
    if root.value == Value::Null {
        return;
    }
    if crate::load_plans::is_plan_doc(root) {
        crate::load_plans::read_plan_doc(ctx, root, parts);
        return;
    }
    let Some(top) = ctx.fields(root, "a catalog file", TOP_KEYS) else {
        return;
    };
    for (key, section) in top.entries {
        let Value::Str(name) = &key.value else {
            continue;
        };
        if name == "lexicon" {
            read_lexicon(ctx, section, &mut parts.contents.lexicon);
            continue;
        }
        let items = match &section.value {
            Value::Seq(items) => items.as_slice(),
            Value::Null => &[],
            other => {
                ctx.error(
                    section.pos,
                    format!("`{name}` must be a list, found {}", other.kind()),
                    Some(format!("write `{name}:` followed by `- …` items")),
                );
                continue;
            }
        };
        for item in items {
            match name.as_str() {
                "tools" => {
                    if let Some(t) = read_tool(ctx, item, parts) {
                        parts.contents.tools.push(t);
                    }
                }
                "pipelines" => {
                    if let Some(p) = read_pipeline(ctx, item, parts) {
                        parts.contents.pipelines.push(p);
                    }
                }
                "specialists" => {
                    if let Some(s) = read_specialist(ctx, item, parts) {
                        parts.contents.specialists.push(s);
                    }
                }
                "servers" => {
                    if let Some(s) = read_server(ctx, item) {
                        parts.contents.servers.push(s);
                    }
                }
                "evidence" => {
                    if let Some(r) = read_evidence(ctx, item) {
                        parts.contents.evidence.push(r);
                    }
                }
                _ => {}
            }
        }
    }
}

pub(super) fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'_' | b'.' | b'-')
        })
}

pub(super) fn read_tool(ctx: &mut Ctx<'_>, node: &Node, parts: &mut Parts) -> Option<Tool> {
    let f = ctx.fields(node, "a tool", TOOL_KEYS)?;
    let name = f.required(ctx, "name", "a tool")?;
    if !valid_name(&name) {
        let pos = f.get("name").map_or(node.pos, |n| n.pos);
        ctx.error(
            pos,
            format!("tool name `{name}` has characters outside [a-z0-9_.-]"),
            Some("use lower-case letters, digits, `_`, `.` and `-`".into()),
        );
    }
    let input_schema = f.get("input_schema").map(|n| {
        let schema = yaml::to_json(n);
        check_schema(ctx, n.pos, &name, &schema);
        schema
    });
    let effects = match f.get("effects") {
        None => Effects::Read,
        Some(n) => {
            let text = ctx.string(n, "effects").unwrap_or_default();
            Effects::parse(&text).unwrap_or_else(|| {
                ctx.error(
                    n.pos,
                    format!("unknown effects `{text}` for tool `{name}`"),
                    Some(format!("use one of: {}", Effects::NAMES.join(", "))),
                );
                Effects::Read
            })
        }
    };
    let cost_usd = match f.get("cost_usd").map(|n| (n, &n.value)) {
        None => 0.0,
        Some((_, Value::Int(i))) if *i >= 0 => *i as f64,
        Some((_, Value::Float(x))) if *x >= 0.0 && x.is_finite() => *x,
        Some((n, _)) => {
            ctx.error(
                n.pos,
                format!("`cost_usd` of tool `{name}` must be a number ≥ 0"),
                None,
            );
            0.0
        }
    };
    let run = f.get("run").and_then(|n| read_run(ctx, n, &name, parts));
    if let (Some(RunSpec::Command(argv)), Some(node)) = (&run, f.get("run")) {
        for problem in crate::argv::problems(argv, input_schema.as_ref()) {
            ctx.error(
                node.pos,
                format!("`run.command` of tool `{name}`: {problem}"),
                Some("see docs/run.md, Commands and request text".into()),
            );
        }
    }
    if f.get("description").is_none() && f.get("keywords").is_none() {
        ctx.warn(
            f.pos,
            format!("tool `{name}` has neither `description` nor `keywords`"),
            Some("routing has only the name to go on; describe what the tool does".into()),
        );
    }
    Some(Tool {
        description: f.text(ctx, "description"),
        keywords: f.list(ctx, "keywords"),
        examples: f.list(ctx, "examples"),
        input_schema,
        accepts: f.list(ctx, "accepts"),
        produces: f.list(ctx, "produces"),
        effects,
        cost_usd,
        run,
        at: ctx.loc(node.pos),
        name,
    })
}

pub(super) fn check_schema(ctx: &mut Ctx<'_>, pos: Pos, tool: &str, schema: &serde_json::Value) {
    if !schema.is_object() {
        ctx.error(
            pos,
            format!("`input_schema` of tool `{tool}` must be a JSON Schema object"),
            Some("write e.g. `{type: object, properties: {…}}`".into()),
        );
        return;
    }
    if let Err(e) = jsonschema::meta::validate(schema) {
        ctx.error(
            pos,
            format!(
                "`input_schema` of tool `{tool}` is not a valid JSON Schema: {e} (at `{}`)",
                e.instance_path()
            ),
            Some("fix the schema; see https://json-schema.org/understanding-json-schema".into()),
        );
        return;
    }
    if let Err(e) = jsonschema::validator_for(schema) {
        ctx.error(
            pos,
            format!("`input_schema` of tool `{tool}` cannot be compiled: {e}"),
            None,
        );
        return;
    }
    if schema
        .get("type")
        .is_some_and(|t| t != &serde_json::Value::String("object".into()))
    {
        ctx.error(
            pos,
            format!("`input_schema` of tool `{tool}` must describe an object"),
            Some("args are always a JSON object; set `type: object`".into()),
        );
    }
}

pub(super) fn read_run(
    ctx: &mut Ctx<'_>,
    node: &Node,
    tool: &str,
    parts: &mut Parts,
) -> Option<RunSpec> {
    let f = ctx.fields(node, "a `run` spec", RUN_KEYS)?;
    if f.entries.len() != 1 {
        ctx.error(
            node.pos,
            format!(
                "`run` of tool `{tool}` must have exactly one of {}",
                RUN_KEYS.join(", ")
            ),
            None,
        );
        return None;
    }
    let (key, value) = &f.entries[0];
    match yaml::key_text(key).as_str() {
        "builtin" => {
            let name = ctx.string(value, "builtin")?;
            if !BUILTINS.contains(&name.as_str()) {
                let hint = closest(&name, &BUILTINS).map_or_else(
                    || format!("built-ins: {}", BUILTINS.join(", ")),
                    |s| format!("did you mean `{s}`?"),
                );
                ctx.error(value.pos, format!("unknown built-in `{name}`"), Some(hint));
            }
            Some(RunSpec::Builtin(name))
        }
        "command" => {
            let argv: Vec<String> = ctx
                .strings(value, "command")
                .into_iter()
                .map(|(s, _)| s)
                .collect();
            if argv.is_empty() {
                ctx.error(
                    value.pos,
                    format!("`run.command` of tool `{tool}` is empty"),
                    None,
                );
                return None;
            }
            Some(RunSpec::Command(argv))
        }
        "http" => {
            let f = ctx.fields(value, "a `run.http` spec", &["url", "method"])?;
            let url = f.required(ctx, "url", "`run.http`")?;
            let method = f
                .get("method")
                .and_then(|n| ctx.string(n, "method"))
                .unwrap_or_else(|| "GET".into());
            Some(RunSpec::Http {
                url,
                method: method.to_ascii_uppercase(),
            })
        }
        "mcp" => {
            let f = ctx.fields(value, "a `run.mcp` spec", &["server", "tool"])?;
            let server = f.required(ctx, "server", "`run.mcp`")?;
            let name = f
                .get("tool")
                .and_then(|n| ctx.string(n, "tool"))
                .unwrap_or_else(|| tool.to_string());
            parts.refs.push(Reference {
                name: format!("server:{server}"),
                at: ctx.loc(value.pos),
                what: "MCP server",
                allow_pipeline: false,
            });
            Some(RunSpec::Mcp { server, tool: name })
        }
        "llm" => {
            let f = ctx.fields(value, "a `run.llm` spec", &["prompt"])?;
            let prompt = f.required(ctx, "prompt", "`run.llm`")?;
            Some(RunSpec::Llm { prompt })
        }
        _ => None,
    }
}

pub(crate) fn push_refs(
    ctx: &Ctx<'_>,
    parts: &mut Parts,
    names: &[(String, Pos)],
    what: &'static str,
    allow_pipeline: bool,
) {
    for (name, pos) in names {
        parts.refs.push(Reference {
            name: name.clone(),
            at: ctx.loc(*pos),
            what,
            allow_pipeline,
        });
    }
}

pub(super) fn read_pipeline(ctx: &mut Ctx<'_>, node: &Node, parts: &mut Parts) -> Option<Pipeline> {
    let f = ctx.fields(node, "a pipeline", PIPELINE_KEYS)?;
    let id = f.required(ctx, "id", "a pipeline")?;
    let steps = f
        .get("steps")
        .map(|n| ctx.strings(n, "steps"))
        .unwrap_or_default();
    if steps.is_empty() {
        ctx.error(
            f.pos,
            format!("pipeline `{id}` has no steps"),
            Some("list the tool names it runs under `steps:`".into()),
        );
    }
    let supersedes = f
        .get("supersedes")
        .map(|n| ctx.strings(n, "supersedes"))
        .unwrap_or_default();
    push_refs(ctx, parts, &steps, "pipeline step", true);
    push_refs(ctx, parts, &supersedes, "`supersedes` entry", false);
    Some(Pipeline {
        description: f.text(ctx, "description"),
        steps: steps.into_iter().map(|(s, _)| s).collect(),
        accepts: f.list(ctx, "accepts"),
        produces: f.list(ctx, "produces"),
        supersedes: supersedes.into_iter().map(|(s, _)| s).collect(),
        intent_keywords: f.list(ctx, "intent_keywords"),
        examples: f.list(ctx, "examples"),
        at: ctx.loc(node.pos),
        id,
    })
}

pub(super) fn read_specialist(
    ctx: &mut Ctx<'_>,
    node: &Node,
    parts: &mut Parts,
) -> Option<Specialist> {
    let f = ctx.fields(node, "a specialist", SPECIALIST_KEYS)?;
    let id = f.required(ctx, "id", "a specialist")?;
    let tools = f
        .get("tools")
        .map(|n| ctx.strings(n, "tools"))
        .unwrap_or_default();
    push_refs(ctx, parts, &tools, "specialist tool", false);
    Some(Specialist {
        description: f.text(ctx, "description"),
        tools: tools.into_iter().map(|(s, _)| s).collect(),
        at: ctx.loc(node.pos),
        id,
    })
}

pub(super) fn read_server(ctx: &mut Ctx<'_>, node: &Node) -> Option<Server> {
    let f = ctx.fields(node, "a server", SERVER_KEYS)?;
    let name = f.required(ctx, "name", "a server")?;
    let command = f.list(ctx, "command");
    let url = f.get("url").and_then(|n| ctx.string(n, "url"));
    if command.is_empty() == url.is_none() {
        ctx.error(
            f.pos,
            format!("server `{name}` needs exactly one of `command` (stdio) or `url` (HTTP)"),
            None,
        );
    }
    let mut env = BTreeMap::new();
    if let Some(n) = f.get("env") {
        if let Value::Map(entries) = &n.value {
            for (k, v) in entries {
                if let Some(v) = ctx.string(v, "env") {
                    env.insert(yaml::key_text(k), v);
                }
            }
        } else {
            ctx.error(
                n.pos,
                format!("`env` of server `{name}` must be a mapping"),
                None,
            );
        }
    }
    Some(Server {
        command,
        url,
        env,
        at: ctx.loc(node.pos),
        name,
    })
}

pub(super) fn read_lexicon(ctx: &mut Ctx<'_>, node: &Node, lexicon: &mut Lexicon) {
    let Some(f) = ctx.fields(node, "`lexicon`", LEXICON_KEYS) else {
        return;
    };
    for (key, value) in f.entries {
        let target = match yaml::key_text(key).as_str() {
            "intents" => &mut lexicon.intents,
            "entities" => &mut lexicon.entities,
            _ => continue,
        };
        let Value::Map(concepts) = &value.value else {
            ctx.error(
                value.pos,
                "lexicon sections map a concept name to its phrases".into(),
                None,
            );
            continue;
        };
        for (name, phrases) in concepts {
            let phrases = ctx.strings(phrases, "lexicon phrases");
            target
                .entry(yaml::key_text(name))
                .or_default()
                .extend(phrases.into_iter().map(|(s, _)| s));
        }
    }
}

pub(super) fn read_evidence(ctx: &mut Ctx<'_>, node: &Node) -> Option<EvidenceRule> {
    let f = ctx.fields(node, "an evidence rule", EVIDENCE_KEYS)?;
    let intent = f.required(ctx, "intent", "an evidence rule")?;
    let entity = f.get("entity").and_then(|n| ctx.string(n, "entity"));
    let needs = f.list(ctx, "needs");
    if needs.is_empty() {
        ctx.error(
            f.pos,
            format!("evidence rule for `{intent}` needs nothing"),
            Some("list the evidence classes under `needs:`".into()),
        );
    }
    Some(EvidenceRule {
        intent,
        entity,
        needs,
        at: ctx.loc(node.pos),
    })
}
