//! The compiled rules of the vocabulary that are not plain phrase lists: questions that
//! move an intent, report-back requests, units, file types, argument cues, situations,
//! the calendar, articles and word classes.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::hash::HashSet;
use crate::text::{Synonyms, Token};

use super::phrase::{Phrase, compile_phrases, exact_phrases};
use super::raw::{
    RawArgCue, RawArticles, RawDeclining, RawProgressive, RawQuestion, RawReportBack, RawSituation,
    forms, stems,
};

/// A question that turns the verbs of one intent into a request for another: an
/// auxiliary beside a subject ("*did I* edit …", "what *do you* remember …").
#[derive(Debug, Clone, Default)]
pub struct QuestionRule {
    pub auxiliaries: HashSet<String>,
    pub subjects: HashSet<String>,
    /// (intent whose verbs are re-read, intent they count for)
    pub reinterpret: Vec<(String, String)>,
    /// The subject may come first ("I haven't …"); in the present that is no question
    /// ("I do want you to remember …").
    pub(super) either_order: bool,
}

impl QuestionRule {
    /// Whether the tokens hold the rule's question.
    pub fn asked(&self, toks: &[Token]) -> bool {
        toks.windows(2).any(|w| {
            (self.auxiliaries.contains(&w[0].form) && self.subjects.contains(&w[1].form))
                || (self.either_order
                    && self.subjects.contains(&w[0].form)
                    && self.auxiliaries.contains(&w[1].form))
        })
    }

    pub(super) fn compile(raw: RawQuestion) -> Self {
        Self {
            either_order: raw.either_order,
            auxiliaries: raw.auxiliaries.iter().map(|w| w.to_lowercase()).collect(),
            subjects: raw.subjects.iter().map(|w| w.to_lowercase()).collect(),
            reinterpret: raw.reinterpret.into_iter().collect(),
        }
    }
}

/// `report_back` in the vocabulary: clauses that ask for the answer of the step before.
#[derive(Debug, Clone, Default)]
pub struct ReportBack {
    pub openings: Vec<Phrase>,
    /// Openings that report back only when the outcome's word follows at once ("show
    /// it", not "show me what's in …").
    pub showing: Vec<Phrase>,
    /// Forms that, like a question word, may come between the opening and what the
    /// answer is about ("tell me *if* it passes").
    pub lead_ins: HashSet<String>,
    /// Forms that stand for the earlier step's outcome right after the opening.
    pub about_it: HashSet<String>,
    /// Forms that stand for it as the subject of a short question ("what did *it*
    /// say").
    pub asked: HashSet<String>,
}

impl ReportBack {
    pub(super) fn compile(raw: &RawReportBack) -> Self {
        Self {
            openings: exact_phrases(&raw.openings),
            showing: exact_phrases(&raw.showing),
            lead_ins: forms(&raw.lead_ins),
            about_it: forms(&raw.about_it),
            asked: forms(&raw.asked),
        }
    }
}

/// `declining` in the vocabulary: clauses that say what not to do.
#[derive(Debug, Clone, Default)]
pub struct Declining {
    /// Words before a verb that decline it ("do not", "never").
    pub openings: Vec<Phrase>,
    /// Objects that leave the verb nothing to act on and end the clause ("commit
    /// *nothing*"); "add *nothing fancy* to my playlist" names a title.
    pub objects: Vec<Phrase>,
    /// Words that end the clause before a declining one ("… *but* don't commit").
    pub joints: HashSet<String>,
}

impl Declining {
    pub(super) fn compile(raw: &RawDeclining) -> Self {
        Self {
            openings: exact_phrases(&raw.openings),
            objects: exact_phrases(&raw.objects),
            joints: forms(&raw.joints),
        }
    }
}

/// `progressive_question` in the vocabulary: a question whose verb, in -ing after a
/// form of "be", says what is going on rather than asks for it ("what backend is this
/// session *running* on").
#[derive(Debug, Clone, Default)]
pub struct Progressive {
    pub auxiliaries: HashSet<String>,
    /// Intents such a verb describes and does not ask for.
    pub describes: HashSet<String>,
}

impl Progressive {
    pub(super) fn compile(raw: &RawProgressive) -> Self {
        Self {
            auxiliaries: forms(&raw.auxiliaries),
            describes: forms(&raw.describes),
        }
    }
}

/// A unit of measure: which measure (by index), and how many of its first unit it makes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Unit {
    pub measure: usize,
    pub per: f64,
}

/// A family of file types ("audio": .wav, .mp3…) and the argument words that take them.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileType {
    /// The family's name ("image"), a word an entry that handles such files may use.
    #[serde(skip)]
    pub name: String,
    pub extensions: Vec<String>,
    pub args: Vec<String>,
    /// Files known by a name alone (`README`, `Makefile`), matched as written.
    #[serde(default)]
    pub names: Vec<String>,
    /// Families its files belong to as well: a source file is a text file too.
    #[serde(default)]
    pub also: Vec<String>,
}

impl FileType {
    /// The family's name, then the families its files belong to as well.
    pub fn families(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.name.as_str()).chain(self.also.iter().map(String::as_str))
    }

    /// Whether `path` ends in one of the family's extensions, or its last part is one
    /// of the family's names.
    pub fn holds(&self, path: &str) -> bool {
        let file = path.rsplit('/').next().unwrap_or(path);
        self.names.iter().any(|n| n.eq_ignore_ascii_case(file))
            || path
                .rsplit_once('.')
                .is_some_and(|(_, ext)| self.extensions.iter().any(|e| e.eq_ignore_ascii_case(ext)))
    }
}

/// One end of a move, a conversion or a translation: the prepositions that introduce a
/// value of this end ("*to* French") and the words that make an argument's name this end
/// (`target_language`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct End {
    pub prepositions: Vec<String>,
    pub args: Vec<String>,
    /// A language named with no preposition of either end ("the translation of 'hello'
    /// in French") belongs to this end: one translates *into* the language one names.
    #[serde(default)]
    pub bare_languages: bool,
}

/// Two words that open both ends of a range ("between … and …"), each standing for the
/// arg cue of `as` at its place.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Range {
    pub words: [String; 2],
    #[serde(rename = "as")]
    pub as_cues: [String; 2],
}

/// Words that introduce the value of the arguments named in `args`.
#[derive(Debug, Clone)]
pub struct ArgCue {
    pub cues: Vec<Phrase>,
    pub args: HashSet<String>,
}

impl ArgCue {
    pub(super) fn compile(raw: &RawArgCue) -> Self {
        Self {
            cues: exact_phrases(&raw.cues),
            args: raw.args.iter().map(|w| w.to_lowercase()).collect(),
        }
    }
}

/// `situation` in the vocabulary: clauses that tell of the speaker's situation.
#[derive(Debug, Clone, Default)]
pub struct Situation {
    pub speakers: HashSet<String>,
    /// Stems of the verbs that say what someone wants or must do ("I *need* a logo").
    pub wants: HashSet<String>,
    /// Phrases that say what someone must do ("I *have to* call Ana").
    pub obliged: Vec<Phrase>,
    /// Besides `speakers`, the words a clause stating a fact opens with ("*the*
    /// appointment is at 3 pm").
    pub fact_openers: HashSet<String>,
    /// Forms of "be" that make such a clause a statement.
    pub copulas: HashSet<String>,
}

impl Situation {
    pub(super) fn compile(raw: &RawSituation, synonyms: &Synonyms) -> Self {
        Self {
            speakers: forms(&raw.speakers),
            wants: stems(&raw.wants),
            obliged: compile_phrases(&raw.obliged, synonyms),
            fact_openers: forms(&raw.fact_openers),
            copulas: forms(&raw.copulas),
        }
    }
}

/// Calendar words for the extractor.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Calendar {
    pub weekdays: Vec<String>,
    pub months: Vec<String>,
    pub relative_days: Vec<String>,
    pub day_parts: Vec<String>,
    pub frequencies: Vec<String>,
    pub number_words: BTreeMap<String, u32>,
}

/// Whether a clause's object is something that exists or something to make.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Article {
    Existing,
    New,
}

#[derive(Debug, Clone, Default)]
pub struct Articles {
    pub existing: HashSet<String>,
    pub new: HashSet<String>,
    /// Of those, the ones that in an entry's description say whether it acts on new
    /// things or existing ones ("Add new observations to *existing* entities").
    pub describing: HashSet<String>,
    pub existing_intent: String,
    pub new_intent: String,
}

impl Articles {
    pub(super) fn compile(raw: RawArticles) -> Self {
        Self {
            existing: forms(&raw.existing),
            new: forms(&raw.new),
            describing: forms(&raw.describing),
            existing_intent: raw.existing_intent,
            new_intent: raw.new_intent,
        }
    }

    /// What an article of this form says of its noun, if the form is one.
    pub fn of(&self, form: &str) -> Option<Article> {
        if self.existing.contains(form) {
            Some(Article::Existing)
        } else if self.new.contains(form) {
            Some(Article::New)
        } else {
            None
        }
    }
}

/// Small closed word classes, by lower-case form.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WordClasses {
    pub fillers: HashSet<String>,
    pub articles: HashSet<String>,
    pub possessives: HashSet<String>,
    /// Possessives that point back at something said or made before ("*its* statements").
    pub referring_possessives: HashSet<String>,
    /// Of those, the ones that point back at a thing, not a person: "add *its* main
    /// points" takes what the step before made, "retrieve *his* albums" the person.
    pub thing_possessives: HashSet<String>,
    pub object_pronouns: HashSet<String>,
    /// Stand for the one asking between a verb and its object ("show *me* the report"):
    /// the object is brought to them, not changed, whatever its article says.
    pub asker_pronouns: HashSet<String>,
    pub referring_pronouns: HashSet<String>,
    pub output_nouns: HashSet<String>,
    /// After "the", pick one of several things found before ("save *the best* link").
    pub selecting: HashSet<String>,
    /// Before an output phrase, fill two arguments with it ("with *both* the values").
    pub pair_words: HashSet<String>,
    /// In an argument's description, say it takes a kind of the tool's object.
    pub kind_nouns: HashSet<String>,
    /// After a reference, name the argument it fills ("the recorded audio *as* a
    /// ringtone").
    pub role_markers: HashSet<String>,
    /// Open a list of named values ("a contact *with* the name 'Ana', email …").
    pub attribute_markers: HashSet<String>,
    /// Between an argument's name and its value ("a rating *greater than* 7").
    pub comparison_words: HashSet<String>,
    /// Say that a name has a value ("the ticker id *is* MSFT").
    pub copulas: HashSet<String>,
    /// Close a verb after its object pronoun ("play it *back*"): the pronoun is still
    /// the whole object.
    pub verb_particles: HashSet<String>,
    /// Open a condition ("… and *if* they fail open an issue"): a request of its own.
    pub conditions: HashSet<String>,
    /// Name a folder; a bare word beside one is its path ("the *docs* folder").
    pub folder_nouns: HashSet<String>,
    /// Say which folder without naming it ("the *new* folder").
    pub folder_describers: HashSet<String>,
    /// Open a verb's object that another step produces ("save *what* you find").
    pub free_relatives: HashSet<String>,
    /// Stand before a verb as its subject ("what *you* find").
    pub subject_pronouns: HashSet<String>,
    /// In a description, say the entry is on its way out ("DEPRECATED: use … instead").
    pub deprecations: HashSet<String>,
    pub particles: HashSet<String>,
    pub demonstratives: HashSet<String>,
    pub prepositions: HashSet<String>,
}

impl WordClasses {
    /// Articles, possessives, demonstratives and prepositions: words that open a phrase
    /// and never head one.
    pub(super) fn function_words(&self) -> HashSet<String> {
        (self.articles.iter())
            .chain(&self.possessives)
            .chain(&self.demonstratives)
            .chain(&self.prepositions)
            .cloned()
            .collect()
    }
}
