//! What the understand stage makes of a request: clauses, goals, extracted values, clarity.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A byte range in the original request text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct TextSpan {
    pub start: usize,
    pub end: usize,
}

/// Whether a clause asks for something, only supplies material for other clauses, or
/// says what not to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ClauseRole {
    /// Asks for an action or an answer: it gets steps.
    #[default]
    Action,
    /// Presents material ("here's the announcement"): it feeds args, gets no step.
    Context,
    /// Says what not to do ("… but don't commit", "commit nothing"): it gets no step and
    /// feeds nothing.
    Declined,
}

/// One intent-bearing part of a request.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Clause {
    pub index: usize,
    pub text: String,
    pub span: TextSpan,
    #[serde(default)]
    pub role: ClauseRole,
}

/// Another reading of a clause that the parser considered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Ambiguity {
    pub intent: String,
    pub entity: Option<String>,
    pub confidence: f64,
}

/// What one clause is after.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Goal {
    /// Index of the clause this goal belongs to.
    pub clause: usize,
    pub intent: String,
    pub entity: Option<String>,
    /// The kind of thing the user expects back (a status, an explanation, a file…).
    pub artifact: Option<String>,
    /// How far the goal reaches (`recent`, `repository`, `file`…).
    pub scope: Option<String>,
    /// How sure the parser is of this reading, in [0, 1].
    pub confidence: f64,
    #[serde(default)]
    pub ambiguities: Vec<Ambiguity>,
    /// The words that led to this reading.
    #[serde(default)]
    pub explanation: String,
}

/// The kinds of values the extractor recognises; the names are the JSON keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ExtractedKind {
    Urls,
    Emails,
    Paths,
    Ids,
    Quoted,
    Numbers,
    Dates,
    Times,
    Schedules,
}

impl ExtractedKind {
    pub const ALL: [Self; 9] = [
        Self::Urls,
        Self::Emails,
        Self::Paths,
        Self::Ids,
        Self::Quoted,
        Self::Numbers,
        Self::Dates,
        Self::Times,
        Self::Schedules,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Urls => "urls",
            Self::Emails => "emails",
            Self::Paths => "paths",
            Self::Ids => "ids",
            Self::Quoted => "quoted",
            Self::Numbers => "numbers",
            Self::Dates => "dates",
            Self::Times => "times",
            Self::Schedules => "schedules",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

/// Concrete values found in the request (and its context); nothing the user gave is dropped.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Extracted {
    #[serde(default)]
    pub urls: Vec<String>,
    #[serde(default)]
    pub emails: Vec<String>,
    #[serde(default)]
    pub paths: Vec<String>,
    #[serde(default)]
    pub ids: Vec<String>,
    #[serde(default)]
    pub quoted: Vec<String>,
    #[serde(default)]
    pub numbers: Vec<String>,
    #[serde(default)]
    pub dates: Vec<String>,
    #[serde(default)]
    pub times: Vec<String>,
    #[serde(default)]
    pub schedules: Vec<String>,
    /// The caller's `context` object, passed through untouched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<serde_json::Value>,
}

impl Extracted {
    pub fn get(&self, kind: ExtractedKind) -> &[String] {
        match kind {
            ExtractedKind::Urls => &self.urls,
            ExtractedKind::Emails => &self.emails,
            ExtractedKind::Paths => &self.paths,
            ExtractedKind::Ids => &self.ids,
            ExtractedKind::Quoted => &self.quoted,
            ExtractedKind::Numbers => &self.numbers,
            ExtractedKind::Dates => &self.dates,
            ExtractedKind::Times => &self.times,
            ExtractedKind::Schedules => &self.schedules,
        }
    }

    pub fn get_mut(&mut self, kind: ExtractedKind) -> &mut Vec<String> {
        match kind {
            ExtractedKind::Urls => &mut self.urls,
            ExtractedKind::Emails => &mut self.emails,
            ExtractedKind::Paths => &mut self.paths,
            ExtractedKind::Ids => &mut self.ids,
            ExtractedKind::Quoted => &mut self.quoted,
            ExtractedKind::Numbers => &mut self.numbers,
            ExtractedKind::Dates => &mut self.dates,
            ExtractedKind::Times => &mut self.times,
            ExtractedKind::Schedules => &mut self.schedules,
        }
    }

    /// Adds a value once, keeping first-seen order.
    pub fn push(&mut self, kind: ExtractedKind, value: impl Into<String>) {
        let value = value.into();
        let list = self.get_mut(kind);
        if !list.contains(&value) {
            list.push(value);
        }
    }

    pub fn is_empty(&self) -> bool {
        ExtractedKind::ALL.iter().all(|k| self.get(*k).is_empty()) && self.payload.is_none()
    }
}

/// Everything the understand stage produced for one request.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Understanding {
    pub clauses: Vec<Clause>,
    pub goals: Vec<Goal>,
    pub extracted: Extracted,
}

/// Whether a request is clear enough to act on (the clarity gate).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(from = "ClarityWire")]
#[schemars(!from)]
pub struct Clarity {
    ambiguity_score: f64,
    missing_criteria: Vec<String>,
    ready_to_formalize: bool,
}

#[derive(Deserialize)]
struct ClarityWire {
    #[serde(default)]
    ambiguity_score: f64,
    #[serde(default)]
    missing_criteria: Vec<String>,
}

impl From<ClarityWire> for Clarity {
    fn from(w: ClarityWire) -> Self {
        Self::new(w.ambiguity_score, w.missing_criteria)
    }
}

impl Default for Clarity {
    fn default() -> Self {
        Self::new(0.0, Vec::new())
    }
}

impl Clarity {
    /// Above this ambiguity a request is not ready to act on.
    pub const MAX_AMBIGUITY: f64 = 0.3;

    /// Builds a clarity; readiness is derived, never set.
    pub fn new(ambiguity_score: f64, missing_criteria: Vec<String>) -> Self {
        let score = if ambiguity_score.is_finite() {
            (ambiguity_score.clamp(0.0, 1.0) * 100.0).round() / 100.0
        } else {
            1.0
        };
        let ready = score <= Self::MAX_AMBIGUITY && missing_criteria.is_empty();
        Self {
            ambiguity_score: score,
            missing_criteria,
            ready_to_formalize: ready,
        }
    }

    pub fn ambiguity_score(&self) -> f64 {
        self.ambiguity_score
    }
    pub fn missing_criteria(&self) -> &[String] {
        &self.missing_criteria
    }
    pub fn ready_to_formalize(&self) -> bool {
        self.ready_to_formalize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readiness_is_derived_from_score_and_questions() {
        assert!(Clarity::new(0.3, vec![]).ready_to_formalize());
        assert!(!Clarity::new(0.31, vec![]).ready_to_formalize());
        assert!(!Clarity::new(0.0, vec!["which file?".into()]).ready_to_formalize());
        assert!(!Clarity::new(f64::NAN, vec![]).ready_to_formalize());
    }

    #[test]
    fn every_kind_round_trips_through_its_name() {
        for kind in ExtractedKind::ALL {
            assert_eq!(ExtractedKind::parse(kind.as_str()), Some(kind));
        }
    }
}
