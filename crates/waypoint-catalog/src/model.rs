//! The catalog's entries as typed values (docs/contracts.md, Catalog YAML).

use std::collections::BTreeMap;

use serde::Serialize;

/// Where an entry was defined: a file and a 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Location {
    pub file: String,
    pub line: usize,
    pub col: usize,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.col)
    }
}

/// What calling a tool does to the world; the executor and the guards key on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Effects {
    #[default]
    Read,
    Write,
    Destructive,
    External,
}

impl Effects {
    pub const NAMES: [&'static str; 4] = ["read", "write", "destructive", "external"];

    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
            Self::Destructive => "destructive",
            Self::External => "external",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "read" => Some(Self::Read),
            "write" => Some(Self::Write),
            "destructive" => Some(Self::Destructive),
            "external" => Some(Self::External),
            _ => None,
        }
    }
}

/// How the executor calls a tool. Absent: the tool can be planned but not run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunSpec {
    Builtin(String),
    /// An argv template; never passed to a shell.
    Command(Vec<String>),
    Http {
        url: String,
        method: String,
    },
    Mcp {
        server: String,
        tool: String,
    },
    Llm {
        prompt: String,
    },
}

impl RunSpec {
    /// Whether the tool gives the same answer for the same input without a model.
    pub fn is_deterministic(&self) -> bool {
        !matches!(self, RunSpec::Llm { .. })
    }
}

/// Built-in adapters the executor provides.
pub const BUILTINS: [&str; 9] = [
    "read_file",
    "list_dir",
    "grep",
    "find_symbol",
    "http_fetch",
    "memory_store",
    "memory_recall",
    "memory_forget",
    "ask_user",
];

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tool {
    pub name: String,
    pub description: String,
    pub keywords: Vec<String>,
    pub examples: Vec<String>,
    /// JSON Schema for the args; `None` accepts any object.
    pub input_schema: Option<serde_json::Value>,
    pub accepts: Vec<String>,
    pub produces: Vec<String>,
    pub effects: Effects,
    pub cost_usd: f64,
    pub run: Option<RunSpec>,
    #[serde(skip)]
    pub at: Location,
}

impl Tool {
    /// Property names of the input schema, in schema order.
    pub fn properties(&self) -> impl Iterator<Item = (&str, &serde_json::Value)> {
        self.input_schema
            .as_ref()
            .and_then(|s| s.get("properties"))
            .and_then(serde_json::Value::as_object)
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.as_str(), v))
    }

    /// Fills the args the schema gives a `default` for and the caller left out.
    pub fn fill_defaults(&self, args: &mut serde_json::Map<String, serde_json::Value>) {
        for (name, schema) in self.properties() {
            if !args.contains_key(name)
                && let Some(d) = schema.get("default")
            {
                args.insert(name.to_string(), d.clone());
            }
        }
    }

    /// Names of required args.
    pub fn required(&self) -> impl Iterator<Item = &str> {
        self.input_schema
            .as_ref()
            .and_then(|s| s.get("required"))
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(serde_json::Value::as_str)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pipeline {
    pub id: String,
    pub description: String,
    /// Tool names (or other pipeline ids), in order.
    pub steps: Vec<String>,
    pub accepts: Vec<String>,
    pub produces: Vec<String>,
    pub supersedes: Vec<String>,
    pub intent_keywords: Vec<String>,
    pub examples: Vec<String>,
    #[serde(skip)]
    pub at: Location,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Specialist {
    pub id: String,
    pub description: String,
    pub tools: Vec<String>,
    #[serde(skip)]
    pub at: Location,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Server {
    pub name: String,
    /// argv of a stdio server.
    pub command: Vec<String>,
    /// URL of a streamable-HTTP server.
    pub url: Option<String>,
    pub env: BTreeMap<String, String>,
    #[serde(skip)]
    pub at: Location,
}

/// Extra understanding vocabulary: concept name → phrases.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Lexicon {
    pub intents: BTreeMap<String, Vec<String>>,
    pub entities: BTreeMap<String, Vec<String>>,
}

/// `(intent, entity)` → the evidence classes a complete answer needs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvidenceRule {
    pub intent: String,
    /// `None` matches any entity.
    pub entity: Option<String>,
    pub needs: Vec<String>,
    #[serde(skip)]
    pub at: Location,
}
