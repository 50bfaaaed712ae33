//! The approval gate (docs/security.md): a request is untrusted text and its plan may be
//! wrong, so a call that changes the world waits for a person before it is made.
//!
//! Which calls wait is the run's [`Bar`], kept in its journal so a resume applies the
//! same one. A person approves on a terminal when there is one; otherwise the run stops
//! `needs_approval` with the pending calls, and a resume with [`Approvals`] goes on.

use std::collections::HashSet;
use std::io::{BufRead as _, IsTerminal as _, Write as _};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use waypoint_catalog::{Catalog, Effects, Entry, Tool};
use waypoint_protocol::{PendingCall, Question};

/// Most pipelines nested inside one another that the strongest effects look through.
const MAX_DEPTH: usize = 8;

/// Most characters of args a terminal prompt shows; the question carries them all.
const PROMPT_ARGS_CHARS: usize = 600;

/// Which calls need approval (`[run] approve`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bar {
    /// Nothing waits (a sandbox, a test).
    Never,
    /// Only destructive calls wait.
    Destructive,
    /// Every call that is not a read waits: write, destructive and external.
    #[default]
    Write,
}

impl Bar {
    pub const NAMES: [&'static str; 3] = ["never", "destructive", "write"];

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "never" => Some(Self::Never),
            "destructive" => Some(Self::Destructive),
            "write" => Some(Self::Write),
            _ => None,
        }
    }

    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Never => "never",
            Self::Destructive => "destructive",
            Self::Write => "write",
        }
    }

    /// Whether a call with these effects waits for approval.
    pub fn needs(self, effects: Effects) -> bool {
        match self {
            Self::Never => false,
            Self::Destructive => effects == Effects::Destructive,
            Self::Write => effects != Effects::Read,
        }
    }
}

/// What a person approved: every call, or the calls of some plan steps. Approving a
/// step approves every call it makes (a pipeline's tools, a plan document's steps).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Approvals {
    pub all: bool,
    pub steps: HashSet<String>,
}

impl Approvals {
    pub fn all() -> Self {
        Self {
            all: true,
            steps: HashSet::new(),
        }
    }

    pub fn covers(&self, step_id: &str) -> bool {
        self.all || self.steps.contains(step_id)
    }
}

/// The strongest effects a catalog entry may have: a tool's own; for a pipeline,
/// destructive if any of its tools is, else the first that is not a read; a plan
/// document's steps are checked one by one as they run, so it counts as a write.
pub fn strongest(catalog: &Catalog, name: &str) -> Effects {
    fn walk(catalog: &Catalog, name: &str, depth: usize, out: &mut Vec<Effects>) {
        match catalog.entry(name) {
            Some(Entry::Tool(t)) => out.push(t.effects),
            Some(Entry::Pipeline(p)) if depth < MAX_DEPTH => {
                for s in &p.steps {
                    walk(catalog, s, depth + 1, out);
                }
            }
            Some(Entry::Plan(_) | Entry::Pipeline(_)) => out.push(Effects::Write),
            None => out.push(Effects::Read),
        }
    }
    let mut all = Vec::new();
    walk(catalog, name, 0, &mut all);
    if all.contains(&Effects::Destructive) {
        Effects::Destructive
    } else {
        all.into_iter()
            .find(|e| *e != Effects::Read)
            .unwrap_or(Effects::Read)
    }
}

/// The question a held call waits on.
pub(crate) fn question(step_id: &str, tool: &Tool, args: &Map<String, Value>) -> Question {
    Question {
        step_id: step_id.to_string(),
        text: format!(
            "{step_id} calls {} (effects {}) with {}; approve it to run",
            tool.name,
            tool.effects.as_str(),
            shown(args, usize::MAX),
        ),
        expects: "approve".into(),
        key: step_id.to_string(),
        call: Some(PendingCall {
            tool: tool.name.clone(),
            effects: tool.effects.as_str().into(),
            args: Value::Object(args.clone()),
        }),
    }
}

/// A person's answer at a terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// This step's calls.
    Step,
    /// Every call of the run from here on.
    All,
    /// Not now: the run stops `needs_approval`.
    No,
}

/// Asks on the terminal; `None` when stdin or stderr is not one.
pub(crate) fn ask_on_terminal(
    step_id: &str,
    tool: &Tool,
    args: &Map<String, Value>,
) -> Option<Verdict> {
    if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
        return None;
    }
    let mut err = std::io::stderr();
    let _ = write!(
        err,
        "{step_id}: {} (effects {})\n  args: {}\nrun it? [y]es / [a]ll / [N]o: ",
        tool.name,
        tool.effects.as_str(),
        shown(args, PROMPT_ARGS_CHARS),
    );
    let _ = err.flush();
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).ok()?;
    Some(match line.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => Verdict::Step,
        "a" | "all" => Verdict::All,
        _ => Verdict::No,
    })
}

/// Args as compact JSON, cut at `max` characters.
fn shown(args: &Map<String, Value>, max: usize) -> String {
    let text = Value::Object(args.clone()).to_string();
    if text.chars().count() <= max {
        return text;
    }
    let cut: String = text.chars().take(max).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bar_holds_what_it_names() {
        for e in [Effects::Write, Effects::Destructive, Effects::External] {
            assert!(Bar::Write.needs(e), "{e:?}");
            assert!(!Bar::Never.needs(e), "{e:?}");
        }
        assert!(!Bar::Write.needs(Effects::Read));
        assert!(Bar::Destructive.needs(Effects::Destructive));
        assert!(!Bar::Destructive.needs(Effects::Write));
        assert!(!Bar::Destructive.needs(Effects::External));
        for n in Bar::NAMES {
            assert_eq!(Bar::parse(n).map(Bar::as_str), Some(n));
        }
        assert_eq!(Bar::default(), Bar::Write);
    }

    #[test]
    fn approvals_cover_their_steps_or_everything() {
        let some = Approvals {
            all: false,
            steps: ["s1".to_string()].into(),
        };
        assert!(some.covers("s1"));
        assert!(!some.covers("s2"));
        assert!(Approvals::all().covers("s9"));
        assert!(!Approvals::default().covers("s1"));
    }

    #[test]
    fn shown_args_are_cut_on_a_char_boundary() {
        let mut m = Map::new();
        m.insert("t".into(), Value::String("é".repeat(50)));
        let s = shown(&m, 10);
        assert!(s.ends_with('…'));
        assert_eq!(s.chars().count(), 11);
    }
}
