//! Catalogs: the tools, pipelines, specialists, servers, lexicon and evidence rules a
//! plan may use (docs/contracts.md, Catalog YAML).
//!
//! Flow: [`read_paths`] turns `--catalog` paths into [`Source`]s, [`load`] parses them
//! with a bounded YAML reader ([`yaml`]), converts every entry into the typed model
//! ([`model`]), merges the files and validates the whole (duplicates, dangling names,
//! schemas, cycles), collecting every [`Diagnostic`] before it answers. [`builtin`] is
//! the default catalog compiled into the binary. [`plans`] holds plan documents (seed
//! 003), read from a catalog's `plans/` folder.

pub mod argv;
mod builtin;
mod diagnostic;
pub mod limited;
mod load;
mod load_plans;
mod model;
mod plan_check;
pub mod plans;
mod precedence;
pub mod yaml;

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// Lookups by name and id happen many times per plan (every candidate, link and
/// check), so they hash with foldhash, seeded at random per map, instead of `SipHash`.
type ByName<V> = HashMap<String, V, foldhash::fast::RandomState>;

pub use builtin::{BUILTIN_SOURCES, builtin, builtin_sources};
pub use diagnostic::{CatalogError, Diagnostic, Severity};
pub use load::{Loaded, Source, closest, load, read_paths};
pub use model::{
    BUILTINS, Effects, EvidenceRule, Lexicon, Location, Pipeline, RunSpec, Server, Specialist, Tool,
};
pub use precedence::{Precedence, Prerequisite};

/// A catalog entry a plan step may name.
#[derive(Debug, Clone, Copy)]
pub enum Entry<'a> {
    Tool(&'a Tool),
    Pipeline(&'a Pipeline),
    /// A plan document, by its full id (`plan://ns/name@1.2.0`).
    Plan(&'a plans::PlanDoc),
}

/// Everything a catalog defines, as loaded and merged.
#[derive(Debug, Clone, Default)]
pub(crate) struct Contents {
    pub tools: Vec<Tool>,
    pub pipelines: Vec<Pipeline>,
    pub specialists: Vec<Specialist>,
    pub servers: Vec<Server>,
    pub lexicon: Lexicon,
    pub evidence: Vec<EvidenceRule>,
    pub plans: Vec<plans::PlanDoc>,
}

/// A validated catalog with name lookups built once.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    contents: Contents,
    by_name: ByName<Slot>,
    /// Each tool's compiled input schema, built on first use and shared by every clone,
    /// so planning and running compile a schema once per catalog, not once per call.
    validators: Arc<ByName<OnceLock<Option<jsonschema::Validator>>>>,
    taught: Taught,
    precedence: Arc<Precedence>,
}

/// Labelled requests training added ([`Catalog::teach`]), as opposed to the examples a
/// catalog's authors wrote under each entry: only these can show how often people ask
/// for several entries in one request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Taught {
    pub requests: usize,
    /// Of those, the requests labelled with two or more entries.
    pub asking_two: usize,
}

#[derive(Debug, Clone, Copy)]
enum Slot {
    Tool(usize),
    Pipeline(usize),
    Plan(usize),
}

impl Catalog {
    pub(crate) fn new(contents: Contents) -> Self {
        let mut by_name = ByName::with_capacity_and_hasher(
            contents.tools.len() + contents.pipelines.len(),
            foldhash::fast::RandomState::default(),
        );
        for (i, t) in contents.tools.iter().enumerate() {
            by_name.insert(t.name.clone(), Slot::Tool(i));
        }
        for (i, p) in contents.pipelines.iter().enumerate() {
            by_name.entry(p.id.clone()).or_insert(Slot::Pipeline(i));
        }
        for (i, p) in contents.plans.iter().enumerate() {
            by_name.entry(p.uri.clone()).or_insert(Slot::Plan(i));
        }
        let validators = contents
            .tools
            .iter()
            .filter(|t| t.input_schema.is_some())
            .map(|t| (t.name.clone(), OnceLock::new()))
            .collect();
        Self {
            contents,
            by_name,
            taught: Taught::default(),
            precedence: Arc::default(),
            validators: Arc::new(validators),
        }
    }

    /// The compiled input schema of tool `name`; `None` when it has none (or it does
    /// not compile, which loading reports).
    pub fn validator(&self, name: &str) -> Option<&jsonschema::Validator> {
        self.validators
            .get(name)?
            .get_or_init(|| {
                self.tool(name)
                    .and_then(|t| t.input_schema.as_ref())
                    .and_then(|s| jsonschema::validator_for(s).ok())
            })
            .as_ref()
    }

    /// Loads catalog paths, or the built-in catalog when `paths` is empty.
    pub fn from_paths(paths: &[impl AsRef<std::path::Path>]) -> Result<Loaded, CatalogError> {
        if paths.is_empty() {
            return builtin();
        }
        load(&read_paths(paths)?)
    }

    pub fn tools(&self) -> &[Tool] {
        &self.contents.tools
    }
    pub fn pipelines(&self) -> &[Pipeline] {
        &self.contents.pipelines
    }
    pub fn specialists(&self) -> &[Specialist] {
        &self.contents.specialists
    }
    pub fn servers(&self) -> &[Server] {
        &self.contents.servers
    }
    pub fn lexicon(&self) -> &Lexicon {
        &self.contents.lexicon
    }
    pub fn evidence(&self) -> &[EvidenceRule] {
        &self.contents.evidence
    }

    /// Plan documents, as loaded from `plans/` folders.
    pub fn plans(&self) -> &[plans::PlanDoc] {
        &self.contents.plans
    }

    /// The plan document a reference names: the highest version that fits.
    pub fn plan_doc(&self, reference: &plans::PlanRef) -> Result<&plans::PlanDoc, String> {
        plans::resolve(&self.contents.plans, reference)
    }

    /// Looks up a tool or pipeline by name.
    pub fn entry(&self, name: &str) -> Option<Entry<'_>> {
        match self.by_name.get(name)? {
            Slot::Tool(i) => self.contents.tools.get(*i).map(Entry::Tool),
            Slot::Pipeline(i) => self.contents.pipelines.get(*i).map(Entry::Pipeline),
            Slot::Plan(i) => self.contents.plans.get(*i).map(Entry::Plan),
        }
    }

    pub fn tool(&self, name: &str) -> Option<&Tool> {
        match self.entry(name)? {
            Entry::Tool(t) => Some(t),
            Entry::Pipeline(_) | Entry::Plan(_) => None,
        }
    }

    pub fn pipeline(&self, id: &str) -> Option<&Pipeline> {
        match self.entry(id)? {
            Entry::Pipeline(p) => Some(p),
            Entry::Tool(_) | Entry::Plan(_) => None,
        }
    }

    /// The catalog less some tools and the pipelines that use them: what a replan
    /// chooses from after those tools failed.
    #[must_use]
    pub fn without(&self, names: &std::collections::HashSet<String>) -> Catalog {
        let mut contents = self.contents.clone();
        contents.tools.retain(|t| !names.contains(&t.name));
        contents
            .pipelines
            .retain(|p| !names.contains(&p.id) && !p.steps.iter().any(|s| names.contains(s)));
        for s in &mut contents.specialists {
            s.tools.retain(|t| !names.contains(t));
        }
        Catalog {
            taught: self.taught,
            precedence: Arc::clone(&self.precedence),
            ..Catalog::new(contents)
        }
    }

    /// Adds a labelled request as an example of each entry it names (how `--train`
    /// teaches the router) and counts it in [`Catalog::taught`] when at least one label
    /// names an entry (a label given twice, as a sequence may, is added twice). Returns
    /// the labels that name no tool or pipeline.
    pub fn teach<'l>(&mut self, request: &str, labels: &[&'l str]) -> Vec<&'l str> {
        let mut unknown = Vec::new();
        let mut known: Vec<&str> = Vec::new();
        for label in labels {
            if self.add_examples(label, [request.to_owned()]) {
                known.push(label);
            } else {
                unknown.push(*label);
            }
        }
        known.sort_unstable();
        known.dedup();
        if !known.is_empty() {
            self.taught.requests += 1;
        }
        if known.len() > 1 {
            self.taught.asking_two += 1;
        }
        unknown
    }

    /// [`Catalog::teach`] for a request labelled with a sequence of tools, which also
    /// teaches their order ([`Catalog::precedence`]); labels that name no tool are left
    /// out of the order.
    pub fn teach_sequence<'l>(&mut self, request: &str, tools: &[&'l str]) -> Vec<&'l str> {
        let unknown = self.teach(request, tools);
        let known: Vec<&str> = tools
            .iter()
            .copied()
            .filter(|t| matches!(self.by_name.get(*t), Some(Slot::Tool(_))))
            .collect();
        if !known.is_empty() {
            Arc::make_mut(&mut self.precedence).add(&known);
        }
        unknown
    }

    /// What training added so far.
    pub fn taught(&self) -> Taught {
        self.taught
    }

    /// Which tools taught sequences run before which.
    pub fn precedence(&self) -> &Precedence {
        &self.precedence
    }

    /// Adds example requests to a tool or pipeline; false when the name is not in the
    /// catalog. Private: training goes through [`Catalog::teach`], which counts it.
    fn add_examples(&mut self, name: &str, examples: impl IntoIterator<Item = String>) -> bool {
        match self.by_name.get(name) {
            Some(Slot::Tool(i)) => self.contents.tools[*i].examples.extend(examples),
            Some(Slot::Pipeline(i)) => self.contents.pipelines[*i].examples.extend(examples),
            Some(Slot::Plan(_)) | None => return false,
        }
        true
    }
}

/// What `validator` finds wrong with `value`, each with the path it is at, at most five
/// (the first say enough); `required` complaints are left out unless `with_required`
/// (the catalog check says those in a document's words).
pub fn violations(
    validator: &jsonschema::Validator,
    value: &serde_json::Value,
    with_required: bool,
) -> Vec<String> {
    validator
        .iter_errors(value)
        .filter(|e| {
            with_required
                || !matches!(
                    e.kind(),
                    jsonschema::error::ValidationErrorKind::Required { .. }
                )
        })
        .take(5)
        .map(|e| {
            let at = e.instance_path().to_string();
            if at.is_empty() {
                e.to_string()
            } else {
                format!("{at}: {e}")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schema_is_compiled_once_per_catalog_and_shared_by_its_clones() {
        let catalog = builtin().unwrap().catalog;
        let tool = catalog
            .tools()
            .iter()
            .find(|t| t.input_schema.is_some())
            .unwrap();
        let first = catalog.validator(&tool.name).unwrap();
        let again = catalog.validator(&tool.name).unwrap();
        assert!(std::ptr::eq(first, again), "compiled once");
        let clone = catalog.clone();
        assert!(std::ptr::eq(first, clone.validator(&tool.name).unwrap()));
        assert!(catalog.validator("no_such_tool").is_none());
    }
}
