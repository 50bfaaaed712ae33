//! Plan documents: versioned plans that compose tools, data, guidance,
//! scripts, placeholders and other plans, with a clarity gate, constraints and success
//! criteria. They live in a catalog's `plans/` folder, one per file.
//!
//! Ids are `plan://NAMESPACE/NAME@SEMVER` (`bullet://` is read as the same thing). A
//! plan step names another plan by id and a version requirement (`@^1.0`, `@1.2.0` —
//! a bare version means exactly that version); [`resolve`] picks the highest version
//! that fits, and the loader reports a missing or ambiguous version and a cycle with
//! file and line.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;

use crate::model::{Effects, Location};

/// `plan://ns/name@1.2.0`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlanId {
    pub ns: String,
    pub name: String,
    #[serde(serialize_with = "as_text")]
    pub version: semver::Version,
}

fn as_text<S: serde::Serializer, T: fmt::Display>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

impl PlanId {
    /// `ns/name`, the part a reference matches before its version.
    pub fn key(&self) -> String {
        format!("{}/{}", self.ns, self.name)
    }
}

impl fmt::Display for PlanId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "plan://{}/{}@{}", self.ns, self.name, self.version)
    }
}

/// A reference to a plan: its `ns/name` and, optionally, which versions fit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanRef {
    pub key: String,
    #[serde(serialize_with = "opt_text")]
    pub req: Option<semver::VersionReq>,
    /// As written, for messages.
    pub raw: String,
}

#[expect(
    clippy::ref_option,
    reason = "serde's serialize_with passes a reference to the field"
)]
fn opt_text<S: serde::Serializer>(v: &Option<semver::VersionReq>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(r) => s.collect_str(r),
        None => s.serialize_none(),
    }
}

/// The schemes a plan id may use (`bullet://` is an older name for the same thing).
const SCHEMES: [&str; 2] = ["plan://", "bullet://"];

/// Whether a name is written as a plan id or reference (a plan step's `tool`).
pub fn is_plan_uri(text: &str) -> bool {
    SCHEMES.iter().any(|s| text.starts_with(s))
}

/// Splits `scheme://ns/name@version` into its parts; `None` when it is not one.
fn split(text: &str) -> Option<(&str, &str, Option<&str>)> {
    let rest = SCHEMES.iter().find_map(|s| text.strip_prefix(s))?;
    let (path, version) = match rest.split_once('@') {
        Some((p, v)) => (p, Some(v.trim())),
        None => (rest, None),
    };
    let (ns, name) = path.split_once('/')?;
    let ok = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
    };
    (ok(ns) && ok(name)).then_some((ns, name, version))
}

impl PlanId {
    /// Parses an id, which must carry an exact version.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (ns, name, version) = split(text.trim()).ok_or_else(|| {
            format!("`{text}` is not a plan id; write plan://NAMESPACE/NAME@1.0.0")
        })?;
        let version = version.ok_or_else(|| {
            format!("`{text}` has no version; a plan id ends in @MAJOR.MINOR.PATCH")
        })?;
        let version = semver::Version::parse(version)
            .map_err(|e| format!("`{version}` in `{text}` is not a version (1.2.0): {e}"))?;
        Ok(Self {
            ns: ns.to_string(),
            name: name.to_string(),
            version,
        })
    }
}

impl PlanRef {
    /// Parses a reference: `plan://ns/name`, `…@^1.0`, `…@1.2.0` (exactly that).
    pub fn parse(text: &str) -> Result<Self, String> {
        let (ns, name, version) = split(text.trim()).ok_or_else(|| {
            format!("`{text}` is not a plan reference; write plan://NAMESPACE/NAME@^1.0")
        })?;
        let req = version
            .map(|v| {
                // A bare version is exact; ranges keep their operator.
                let written = if v.starts_with(|c: char| c.is_ascii_digit()) {
                    format!("={v}")
                } else {
                    v.to_string()
                };
                semver::VersionReq::parse(&written)
                    .map_err(|e| format!("`{v}` in `{text}` is not a version requirement: {e}"))
            })
            .transpose()?;
        Ok(Self {
            key: format!("{ns}/{name}"),
            req,
            raw: text.trim().to_string(),
        })
    }
}

/// The clarity a plan's author declares (`intent_clarity`).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct DocClarity {
    pub ambiguity_score: f64,
    pub missing_criteria: Vec<String>,
}

/// Above this ambiguity a plan does not run.
pub const MAX_AMBIGUITY: f64 = 0.3;

impl DocClarity {
    /// Whether the plan may run.
    pub fn ready(&self) -> bool {
        self.ambiguity_score <= MAX_AMBIGUITY && self.missing_criteria.is_empty()
    }
}

/// A safety level a plan demands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Safety {
    /// No tool whose effects are `destructive` may run.
    NoDestructiveActions,
    /// Only tools whose effects are `read` may run.
    ReadOnly,
}

impl Safety {
    pub const NAMES: [&'static str; 2] = ["no_destructive_actions", "read_only"];

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "no_destructive_actions" => Some(Self::NoDestructiveActions),
            "read_only" => Some(Self::ReadOnly),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::NoDestructiveActions => "no_destructive_actions",
            Self::ReadOnly => "read_only",
        }
    }

    /// Whether a tool with these effects may run under this level. The one rule both
    /// the catalog check and the executor apply.
    pub fn allows(self, effects: Effects) -> bool {
        match self {
            Self::NoDestructiveActions => effects != Effects::Destructive,
            Self::ReadOnly => effects == Effects::Read,
        }
    }
}

/// Hard limits a plan carries; the executor takes the tighter of these and its own.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Constraints {
    pub budget_usd: Option<f64>,
    pub max_runtime_seconds: Option<u64>,
    pub safety: Option<Safety>,
}

/// A script input: a literal, or a description resolved from context at run time.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ScriptInput {
    Value(serde_json::Value),
    Description(String),
}

/// One step of a plan document, in the order it runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DocStep {
    /// A catalog tool with literal args.
    Tool {
        tool: String,
        args: serde_json::Map<String, serde_json::Value>,
    },
    /// A catalog tool whose inputs are literals or resolved from context.
    Script {
        tool: String,
        inputs: BTreeMap<String, ScriptInput>,
    },
    /// A piece of data the later steps can use.
    Data { value: serde_json::Value },
    /// Advice for the model-backed steps that follow.
    Guidance { text: String },
    /// Another plan, run completely as this one step.
    Plan { target: PlanRef },
    /// Something the run must find: by discovery over the catalog, from the request's
    /// context, or by asking.
    Placeholder {
        description: String,
        /// The artifact kind it must be (matched against tools' `produces`).
        of: Option<String>,
        /// Conditions in words, shown to whoever answers.
        constraints: Vec<String>,
        /// A JSON Schema the value must satisfy before it is used.
        schema: Option<serde_json::Value>,
    },
}

/// A step with where it was written.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DocStepAt {
    #[serde(flatten)]
    pub step: DocStep,
    #[serde(skip)]
    pub at: Location,
}

/// A plan document.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanDoc {
    #[serde(serialize_with = "as_text")]
    pub id: PlanId,
    /// The id as text (`plan://ns/name@1.2.0`).
    #[serde(skip)]
    pub uri: String,
    pub intent: String,
    /// Phrases that say the same intent, for routing (optional).
    pub keywords: Vec<String>,
    pub intent_clarity: DocClarity,
    pub context: String,
    pub constraints: Constraints,
    pub success_criteria: Vec<String>,
    /// Artifact kinds the plan yields (optional; for placeholders and routing).
    pub produces: Vec<String>,
    pub steps: Vec<DocStepAt>,
    #[serde(skip)]
    pub at: Location,
}

/// The highest version of `r` among `plans`, or why there is none.
pub fn resolve<'p>(plans: &'p [PlanDoc], r: &PlanRef) -> Result<&'p PlanDoc, String> {
    let same: Vec<&PlanDoc> = plans.iter().filter(|p| p.id.key() == r.key).collect();
    if same.is_empty() {
        return Err(format!("no plan `{}` is loaded", r.key));
    }
    let versions = || {
        same.iter()
            .map(|p| p.id.version.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match &r.req {
        None if same.len() > 1 => Err(format!(
            "`{}` is ambiguous: versions {} are loaded; add @VERSION or @^MAJOR",
            r.raw,
            versions()
        )),
        None => Ok(same[0]),
        Some(req) => same
            .iter()
            .filter(|p| req.matches(&p.id.version))
            .max_by(|a, b| a.id.version.cmp(&b.id.version))
            .copied()
            .ok_or_else(|| {
                format!(
                    "no version of `{}` fits `{req}`; loaded: {}",
                    r.key,
                    versions()
                )
            }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_references_parse_with_both_schemes() {
        let id = PlanId::parse("bullet://team/report@1.2.0").unwrap();
        assert_eq!(id.to_string(), "plan://team/report@1.2.0");
        assert!(PlanId::parse("plan://team/report").is_err());
        assert!(PlanId::parse("plan://report@1.0.0").is_err());
        let r = PlanRef::parse("plan://team/report@^1.0").unwrap();
        assert!(r.req.unwrap().matches(&semver::Version::new(1, 4, 0)));
        let exact = PlanRef::parse("plan://team/report@1.2.0").unwrap();
        assert!(!exact.req.unwrap().matches(&semver::Version::new(1, 3, 0)));
    }

    fn doc(id: &str) -> PlanDoc {
        PlanDoc {
            id: PlanId::parse(id).unwrap(),
            uri: id.to_string(),
            intent: String::new(),
            keywords: Vec::new(),
            intent_clarity: DocClarity::default(),
            context: String::new(),
            constraints: Constraints::default(),
            success_criteria: Vec::new(),
            produces: Vec::new(),
            steps: Vec::new(),
            at: Location {
                file: String::new(),
                line: 1,
                col: 1,
            },
        }
    }

    #[test]
    fn resolution_takes_the_highest_fitting_version_and_names_what_is_loaded() {
        let plans = [
            doc("plan://a/b@1.0.0"),
            doc("plan://a/b@1.4.2"),
            doc("plan://a/b@2.0.0"),
        ];
        let pick = |r: &str| resolve(&plans, &PlanRef::parse(r).unwrap()).map(|p| p.id.to_string());
        assert_eq!(pick("plan://a/b@^1.0").unwrap(), "plan://a/b@1.4.2");
        assert_eq!(pick("plan://a/b@1.0.0").unwrap(), "plan://a/b@1.0.0");
        let e = pick("plan://a/b@^3").unwrap_err();
        assert!(e.contains("1.0.0, 1.4.2, 2.0.0"), "{e}");
        assert!(pick("plan://a/b").unwrap_err().contains("ambiguous"));
        assert!(pick("plan://a/c@1").unwrap_err().contains("no plan"));
    }

    #[test]
    fn the_clarity_gate_needs_a_low_score_and_no_open_question() {
        let mut c = DocClarity::default();
        assert!(c.ready());
        c.ambiguity_score = 0.31;
        assert!(!c.ready());
        c.ambiguity_score = 0.1;
        c.missing_criteria.push("Which data source?".into());
        assert!(!c.ready());
    }
}
