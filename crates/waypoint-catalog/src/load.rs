//! From YAML sources to a validated [`Catalog`], reporting every problem in one pass.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use crate::diagnostic::{CatalogError, Diagnostic, Severity};
use crate::limited;
use crate::model::{
    BUILTINS, Effects, EvidenceRule, Lexicon, Location, Pipeline, RunSpec, Server, Specialist, Tool,
};
use crate::yaml::{self, Limits, Node, Pos, Value};
use crate::{Catalog, Contents};

/// One catalog file's text and the name it is reported under.
#[derive(Debug, Clone)]
pub struct Source {
    pub name: String,
    pub text: String,
}

impl Source {
    /// One catalog file's bytes as [`read_paths`] reads a file: at most 16 MiB of UTF-8,
    /// else an error naming `name` (for text that arrives other than from a path, and
    /// for the fuzz targets, which feed the loader arbitrary bytes).
    pub fn from_bytes(name: &str, bytes: &[u8]) -> Result<Self, CatalogError> {
        let text =
            limited::read_stream(bytes, MAX_FILE_BYTES).map_err(|source| CatalogError::Io {
                path: name.to_string(),
                source,
            })?;
        Ok(Self {
            name: name.to_string(),
            text,
        })
    }
}

/// A loaded catalog and the warnings found on the way.
#[derive(Debug)]
pub struct Loaded {
    pub catalog: Catalog,
    pub warnings: Vec<Diagnostic>,
}

const TOP_KEYS: &[&str] = &[
    "tools",
    "pipelines",
    "specialists",
    "servers",
    "lexicon",
    "evidence",
];
const TOOL_KEYS: &[&str] = &[
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
const PIPELINE_KEYS: &[&str] = &[
    "id",
    "description",
    "steps",
    "accepts",
    "produces",
    "supersedes",
    "intent_keywords",
    "examples",
];
const SPECIALIST_KEYS: &[&str] = &["id", "description", "tools"];
const SERVER_KEYS: &[&str] = &["name", "command", "url", "env"];
const LEXICON_KEYS: &[&str] = &["intents", "entities"];
const EVIDENCE_KEYS: &[&str] = &["intent", "entity", "needs"];
const RUN_KEYS: &[&str] = &["builtin", "command", "http", "mcp", "llm"];

/// The most one catalog file may hold, enforced while reading (the YAML reader's
/// own `max_bytes` is the same 16 MiB, but only checks text already in memory).
const MAX_FILE_BYTES: u64 = limited::MAX_INPUT_BYTES;

/// Reads `--catalog` paths: a file, or every `*.yaml`/`*.yml` directly in a directory
/// (sorted, so that merge order and messages are stable).
pub fn read_paths(paths: &[impl AsRef<Path>]) -> Result<Vec<Source>, CatalogError> {
    let mut sources = Vec::new();
    for path in paths {
        let path = path.as_ref();
        let io = |source| CatalogError::Io {
            path: path.display().to_string(),
            source,
        };
        if path.is_dir() {
            let mut files: Vec<_> = std::fs::read_dir(path)
                .map_err(io)?
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
                .collect();
            // Plan documents live in a `plans/` folder beside the catalog files.
            let plans_dir = path.join("plans");
            if plans_dir.is_dir() {
                files.extend(
                    std::fs::read_dir(&plans_dir)
                        .map_err(io)?
                        .filter_map(Result::ok)
                        .map(|e| e.path())
                        .filter(|p| {
                            p.is_file() && p.extension().is_some_and(|e| e == "yaml" || e == "yml")
                        }),
                );
            }
            files.sort();
            if files.is_empty() {
                return Err(CatalogError::Empty {
                    path: path.display().to_string(),
                });
            }
            for file in files {
                let text = limited::read_file(&file, MAX_FILE_BYTES).map_err(|source| {
                    CatalogError::Io {
                        path: file.display().to_string(),
                        source,
                    }
                })?;
                sources.push(Source {
                    name: file.display().to_string(),
                    text,
                });
            }
        } else {
            let text = limited::read_file(path, MAX_FILE_BYTES).map_err(io)?;
            sources.push(Source {
                name: path.display().to_string(),
                text,
            });
        }
    }
    Ok(sources)
}

/// Parses, merges and validates the sources.
pub fn load(sources: &[Source]) -> Result<Loaded, CatalogError> {
    let mut diags = Vec::new();
    let mut parts = Parts::default();
    for source in sources {
        let mut ctx = Ctx {
            file: &source.name,
            text: &source.text,
            diags: &mut diags,
        };
        match yaml::parse(&source.text, Limits::default()) {
            Ok(root) => read_file(&mut ctx, &root, &mut parts),
            Err(e) => {
                let related = match e.kind {
                    yaml::YamlErrorKind::DuplicateKey { first } => Some(ctx.loc(first)),
                    yaml::YamlErrorKind::Syntax | yaml::YamlErrorKind::Limit => None,
                };
                ctx.error(e.pos, format!("invalid YAML: {}", e.message), None);
                if let Some(d) = ctx.diags.last_mut() {
                    d.related = related;
                }
            }
        }
    }
    let catalog = assemble(parts, &mut diags, sources);
    diags.sort_by(|a, b| (&a.at, a.severity).cmp(&(&b.at, b.severity)));
    if diags.iter().any(Diagnostic::is_error) {
        return Err(CatalogError::Invalid { diagnostics: diags });
    }
    Ok(Loaded {
        catalog,
        warnings: diags,
    })
}

#[derive(Default)]
pub(crate) struct Parts {
    pub(crate) contents: Contents,
    pub(crate) plans: Vec<crate::plans::PlanDoc>,
    /// Steps of documents whose id is bad: left out of the catalog, still checked, so
    /// fixing the id does not reveal a second round of errors.
    pub(crate) orphan_steps: Vec<crate::plans::DocStepAt>,
    /// Positions of reference lists, for messages about what they name.
    refs: Vec<Reference>,
}

/// A name used somewhere that must resolve to a catalog entry.
struct Reference {
    name: String,
    at: Location,
    what: &'static str,
    allow_pipeline: bool,
}

pub(crate) struct Ctx<'a> {
    file: &'a str,
    text: &'a str,
    diags: &'a mut Vec<Diagnostic>,
}

impl Ctx<'_> {
    pub(crate) fn loc(&self, pos: Pos) -> Location {
        Location {
            file: self.file.to_string(),
            line: pos.line,
            col: pos.col,
        }
    }

    fn push(&mut self, severity: Severity, pos: Pos, message: String, hint: Option<String>) {
        let source_line = line_of(self.text, pos.line);
        self.diags.push(Diagnostic {
            severity,
            at: self.loc(pos),
            message,
            hint,
            related: None,
            source_line,
        });
    }

    pub(crate) fn error(&mut self, pos: Pos, message: String, hint: Option<String>) {
        self.push(Severity::Error, pos, message, hint);
    }

    fn warn(&mut self, pos: Pos, message: String, hint: Option<String>) {
        self.push(Severity::Warning, pos, message, hint);
    }

    /// The entries of a mapping, reporting keys outside `allowed`.
    pub(crate) fn fields<'n>(
        &mut self,
        node: &'n Node,
        what: &str,
        allowed: &[&str],
    ) -> Option<Fields<'n>> {
        let Value::Map(entries) = &node.value else {
            self.error(
                node.pos,
                format!("{what} must be a mapping, found {}", node.value.kind()),
                None,
            );
            return None;
        };
        for (key, _) in entries {
            let name = yaml::key_text(key);
            if !allowed.contains(&name.as_str()) {
                let hint = match closest(&name, allowed) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => format!("allowed keys: {}", allowed.join(", ")),
                };
                self.error(
                    key.pos,
                    format!("unknown key `{name}` in {what}"),
                    Some(hint),
                );
            }
        }
        Some(Fields {
            entries,
            pos: node.pos,
        })
    }

    pub(crate) fn string(&mut self, node: &Node, field: &str) -> Option<String> {
        match &node.value {
            Value::Str(s) => Some(s.clone()),
            Value::Int(_) | Value::Float(_) | Value::Bool(_) => Some(yaml::key_text(node)),
            other => {
                self.error(
                    node.pos,
                    format!("`{field}` must be a string, found {}", other.kind()),
                    None,
                );
                None
            }
        }
    }

    /// A list of strings; a single string is taken as a list of one.
    fn strings(&mut self, node: &Node, field: &str) -> Vec<(String, Pos)> {
        match &node.value {
            Value::Null => Vec::new(),
            Value::Str(s) => vec![(s.clone(), node.pos)],
            Value::Seq(items) => items
                .iter()
                .filter_map(|item| self.string(item, field).map(|s| (s, item.pos)))
                .collect(),
            other => {
                self.error(
                    node.pos,
                    format!(
                        "`{field}` must be a list of strings, found {}",
                        other.kind()
                    ),
                    None,
                );
                Vec::new()
            }
        }
    }
}

pub(crate) struct Fields<'n> {
    entries: &'n [(Node, Node)],
    pos: Pos,
}

impl<'n> Fields<'n> {
    pub(crate) fn get(&self, key: &str) -> Option<&'n Node> {
        self.entries
            .iter()
            .find(|(k, _)| matches!(&k.value, Value::Str(s) if s == key))
            .map(|(_, v)| v)
    }

    pub(crate) fn required(&self, ctx: &mut Ctx<'_>, key: &str, what: &str) -> Option<String> {
        if let Some(node) = self.get(key) {
            ctx.string(node, key)
        } else {
            ctx.error(
                self.pos,
                format!("{what} has no `{key}`"),
                Some(format!("add `{key}: …` to this entry")),
            );
            None
        }
    }

    pub(crate) fn text(&self, ctx: &mut Ctx<'_>, key: &str) -> String {
        self.get(key)
            .and_then(|n| ctx.string(n, key))
            .unwrap_or_default()
    }

    pub(crate) fn list(&self, ctx: &mut Ctx<'_>, key: &str) -> Vec<String> {
        self.get(key)
            .map(|n| ctx.strings(n, key).into_iter().map(|(s, _)| s).collect())
            .unwrap_or_default()
    }
}

fn line_of(text: &str, line: usize) -> Option<String> {
    text.lines()
        .nth(line.checked_sub(1)?)
        .map(|l| l.chars().take(200).collect())
}

fn read_file(ctx: &mut Ctx<'_>, root: &Node, parts: &mut Parts) {
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

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'_' | b'.' | b'-')
        })
}

fn read_tool(ctx: &mut Ctx<'_>, node: &Node, parts: &mut Parts) -> Option<Tool> {
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

fn check_schema(ctx: &mut Ctx<'_>, pos: Pos, tool: &str, schema: &serde_json::Value) {
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

fn read_run(ctx: &mut Ctx<'_>, node: &Node, tool: &str, parts: &mut Parts) -> Option<RunSpec> {
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

fn read_pipeline(ctx: &mut Ctx<'_>, node: &Node, parts: &mut Parts) -> Option<Pipeline> {
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

fn read_specialist(ctx: &mut Ctx<'_>, node: &Node, parts: &mut Parts) -> Option<Specialist> {
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

fn read_server(ctx: &mut Ctx<'_>, node: &Node) -> Option<Server> {
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

fn read_lexicon(ctx: &mut Ctx<'_>, node: &Node, lexicon: &mut Lexicon) {
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

fn read_evidence(ctx: &mut Ctx<'_>, node: &Node) -> Option<EvidenceRule> {
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
fn assemble(parts: Parts, diags: &mut Vec<Diagnostic>, sources: &[Source]) -> Catalog {
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

fn check_refs(
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

fn check_evidence(r: &mut Reporter<'_>, rules: &[EvidenceRule], tools: &[Tool]) {
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
fn pipeline_cycles(pipelines: &[Pipeline]) -> Vec<Vec<usize>> {
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

/// The allowed word nearest to a misspelling, if it is near enough to suggest: the one
/// did-you-mean every strict reader of Waypoint's files uses (catalogs, configuration).
pub fn closest<'a>(word: &str, pool: &[&'a str]) -> Option<&'a str> {
    pool.iter()
        .map(|c| (edit_distance(word, c), *c))
        .filter(|(d, c)| *d <= 2.max(c.len() / 4) && *d < c.len())
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_near_misses_only() {
        assert_eq!(closest("produce", TOOL_KEYS), Some("produces"));
        assert_eq!(closest("xyzzy", TOOL_KEYS), None);
    }
}
