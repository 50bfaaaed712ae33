//! One entry as the index knows it.

use waypoint_protocol::{CandidateKind, ExtractedKind};

use crate::lexicon::Article;
use crate::text::Token;

use super::rules::Asked;
use super::{Hints, NAME_UNSAID, REREAD_ELSEWHERE};

/// What the index keeps of one entry beside its postings: the facts the rules read.
#[derive(Debug, Clone)]
pub(super) struct Doc {
    pub(super) id: String,
    pub(super) kind: CandidateKind,
    /// Keys of the artifact kinds it produces and accepts.
    pub(super) produces: Vec<String>,
    pub(super) accepts: Vec<String>,
    /// Intents its own words express ("Create one agent…" → create).
    pub(super) intents: Vec<String>,
    /// Kinds of extracted values its arguments take.
    pub(super) takes: Vec<ExtractedKind>,
    /// What calling it does, for a tool (`effects`, read by default); a pipeline or a
    /// specialist has none of its own.
    pub(super) effects: Option<waypoint_catalog::Effects>,
    /// Keys of its name's content words (without a server prefix).
    pub(super) name_keys: Vec<String>,
    /// A required argument takes free text (a note, a brief): any object can be its input.
    pub(super) takes_text: bool,
    /// Its input schema declares no arguments: it acts on nothing a clause can name.
    pub(super) takes_nothing: bool,
    /// The share of its score it keeps for what its description says of it: less when
    /// it calls itself deprecated ([`DEPRECATED`]), else 1.
    pub(super) standing: f64,
    /// Keys of the nouns its description says are new or existing, with which
    /// ("Add new observations to *existing entities*": `entiti`, existing).
    pub(super) aged: Vec<(String, Article)>,
}

impl Doc {
    /// Whether it acts on `key` things of `age` only (`Some(true)`) or of the other age
    /// only (`Some(false)`), as its description says; `None` where it says neither or
    /// both.
    pub(super) fn age_of(&self, key: &str, age: Article) -> Option<bool> {
        let says = |a: Article| self.aged.iter().any(|(k, x)| k == key && *x == a);
        let other = match age {
            Article::New => Article::Existing,
            Article::Existing => Article::New,
        };
        match (says(age), says(other)) {
            (true, false) => Some(true),
            (false, true) => Some(false),
            _ => None,
        }
    }

    pub(super) fn destructive(&self) -> bool {
        self.effects == Some(waypoint_catalog::Effects::Destructive)
    }

    /// A tool that stores, sends and deletes nothing (`effects: read`, the default).
    pub(super) fn reads_only(&self) -> bool {
        self.effects == Some(waypoint_catalog::Effects::Read)
    }

    /// "list the directory": of entries the words fit alike, the one whose name the
    /// clause says in full (`list_directory`, not `list_allowed_directories`) keeps
    /// most of its score.
    pub(super) fn name_factor(&self, tokens: &[Token]) -> f64 {
        if self.name_keys.is_empty() {
            return 1.0;
        }
        let unsaid = self
            .name_keys
            .iter()
            .filter(|k| !tokens.iter().any(|t| &t.key == *k))
            .count();
        1.0 - NAME_UNSAID * unsaid as f64 / self.name_keys.len() as f64
    }

    /// Whether its declared products are what the clause asks for: a new thing of the
    /// kind, or a changed one (it takes one and makes one).
    pub(super) fn declares(&self, asked: Asked<'_>) -> bool {
        let makes = |kind: &str| self.produces.iter().any(|p| p == kind);
        match asked {
            Asked::Make(kind) => makes(kind),
            Asked::Change(kind) => makes(kind) && self.accepts.iter().any(|a| a == kind),
        }
    }

    /// Whether it makes what the clause asks for: it declares so, or, for a new thing, is
    /// named for one (`generate_qr_code` may call its product `qr_code_data`).
    pub(super) fn answers(&self, asked: Asked<'_>) -> bool {
        self.declares(asked)
            || matches!(asked, Asked::Make(kind) if self.name_keys.iter().any(|k| k == kind))
    }

    /// [`REREAD_ELSEWHERE`] when it does what a question's verb says and not what the
    /// question asks for ("what do you *remember* …" to a tool that stores), else 1.
    pub(super) fn reread_factor(&self, hints: &Hints<'_>) -> f64 {
        let does = |intent: &str| self.intents.iter().any(|i| i == intent);
        match (hints.intent, hints.reread) {
            (Some(asked), Some(reread)) if does(reread) && !does(asked) => REREAD_ELSEWHERE,
            _ => 1.0,
        }
    }

    /// Whether it takes at least one of the kinds of value a clause supplies (or the
    /// clause supplies none): "delete notes.txt" names a file, and a tool that takes no
    /// file cannot be what deletes it.
    pub(super) fn can_take(&self, supplied: &[ExtractedKind]) -> bool {
        supplied.is_empty() || supplied.iter().any(|k| self.takes.contains(k))
    }
}
