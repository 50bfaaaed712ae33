//! The understanding vocabulary, compiled once from `data/lexicon.yaml` and a catalog's
//! `lexicon:` section into phrase matchers over normalised tokens.

use std::collections::BTreeMap;

use serde::Deserialize;
use waypoint_catalog::{Catalog, yaml};

use crate::error::CoreError;
use crate::hash::{HashMap, HashSet};
use crate::text::{Synonyms, Token, stem, tokenize};

const BUILTIN: &str = include_str!("../data/lexicon.yaml");

/// One word of a phrase: a stem key, or an exact form (written `=word`).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Term {
    Key(String),
    Form(String),
}

/// A short multi-word pattern matched on consecutive tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phrase {
    terms: Vec<Term>,
    pub text: String,
}

impl Phrase {
    fn compile(text: &str, synonyms: &Synonyms) -> Option<Self> {
        let terms: Vec<Term> = text
            .split_whitespace()
            .flat_map(|w| {
                if let Some(form) = w.strip_prefix('=') {
                    vec![Term::Form(form.to_lowercase())]
                } else {
                    tokenize(w, &[], synonyms)
                        .into_iter()
                        .map(|t| Term::Key(t.key))
                        .collect()
                }
            })
            .collect();
        (!terms.is_empty()).then(|| Self {
            terms,
            text: text.trim_start_matches('=').to_string(),
        })
    }

    /// A phrase that matches exact word forms only (sequencers: "lastly" is not "last").
    fn compile_exact(text: &str) -> Option<Self> {
        let terms: Vec<Term> = text
            .split_whitespace()
            .map(|w| Term::Form(w.to_lowercase()))
            .collect();
        (!terms.is_empty()).then(|| Self {
            terms,
            text: text.to_string(),
        })
    }

    pub fn len(&self) -> usize {
        self.terms.len()
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// The key of a one-word phrase that matches by key ("file"), not by exact form.
    pub fn single_key(&self) -> Option<&str> {
        match self.terms.as_slice() {
            [Term::Key(k)] => Some(k),
            _ => None,
        }
    }

    /// Whether the phrase matches the tokens starting at `at`.
    pub fn matches_at(&self, tokens: &[Token], at: usize) -> bool {
        at + self.terms.len() <= tokens.len()
            && self
                .terms
                .iter()
                .zip(&tokens[at..])
                .all(|(term, tok)| !tok.value && term_matches(term, tok))
    }

    /// Every start position where the phrase matches.
    pub fn find_all<'a>(&'a self, tokens: &'a [Token]) -> impl Iterator<Item = usize> + 'a {
        (0..tokens.len()).filter(move |&i| self.matches_at(tokens, i))
    }
}

fn term_matches(term: &Term, tok: &Token) -> bool {
    match term {
        Term::Key(k) => *k == tok.key,
        Term::Form(f) => *f == tok.form,
    }
}

/// An intent or entity with the phrases that signal it.
#[derive(Debug, Clone)]
pub struct Concept {
    pub name: String,
    pub phrases: Vec<Phrase>,
    pub artifact: Option<String>,
    pub default_entity: Option<String>,
    /// The entity of a clause that names a thing no entity phrase covers.
    pub named_entity: Option<String>,
}

/// Intents or entities, with where each may start: most of a long list matches none
/// of a clause's words, and trying every phrase at every token was a large share of a
/// plan's time.
#[derive(Debug, Clone, Default)]
pub struct Concepts {
    list: Vec<Concept>,
    /// First term of a phrase (a key or an exact form) → the concepts it starts.
    by_key: HashMap<String, Vec<usize>>,
    by_form: HashMap<String, Vec<usize>>,
}

impl Concepts {
    pub fn new(list: Vec<Concept>) -> Self {
        let mut by_key: HashMap<String, Vec<usize>> = HashMap::default();
        let mut by_form: HashMap<String, Vec<usize>> = HashMap::default();
        for (i, c) in list.iter().enumerate() {
            for p in &c.phrases {
                let (map, word) = match p.terms.first() {
                    Some(Term::Key(k)) => (&mut by_key, k),
                    Some(Term::Form(f)) => (&mut by_form, f),
                    None => continue,
                };
                let starts = map.entry(word.clone()).or_default();
                if starts.last() != Some(&i) {
                    starts.push(i);
                }
            }
        }
        Self {
            list,
            by_key,
            by_form,
        }
    }

    /// The concepts, in their order, that have a phrase starting with one of the tokens:
    /// the only ones a phrase of theirs can match.
    pub fn starting_in<'a>(&'a self, tokens: &[Token]) -> impl Iterator<Item = &'a Concept> + 'a {
        let mut hit = vec![false; self.list.len()];
        for t in tokens.iter().filter(|t| !t.value) {
            let starts = [self.by_key.get(&t.key), self.by_form.get(&t.form)];
            for &i in starts.into_iter().flatten().flatten() {
                hit[i] = true;
            }
        }
        self.list
            .iter()
            .zip(hit)
            .filter_map(|(c, hit)| hit.then_some(c))
    }
}

impl std::ops::Deref for Concepts {
    type Target = [Concept];

    fn deref(&self) -> &[Concept] {
        &self.list
    }
}

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
    either_order: bool,
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

    fn compile(raw: RawQuestion) -> Self {
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
    /// Forms that, like a question word, may come between the opening and what the
    /// answer is about ("tell me *if* it passes").
    pub lead_ins: HashSet<String>,
    /// Forms that stand for the earlier step's outcome right after the opening.
    pub about_it: HashSet<String>,
}

impl ReportBack {
    fn compile(raw: &RawReportBack) -> Self {
        Self {
            openings: (raw.openings.iter())
                .filter_map(|p| Phrase::compile_exact(p))
                .collect(),
            lead_ins: forms(&raw.lead_ins),
            about_it: forms(&raw.about_it),
        }
    }
}

/// The compiled vocabulary.
#[derive(Debug, Clone)]
pub struct Lexicon {
    pub synonyms: Synonyms,
    pub stopwords: HashSet<String>,
    pub verbs: HashSet<String>,
    pub abbreviations: HashSet<String>,
    pub sequencers: Vec<Phrase>,
    pub soft_sequencers: Vec<Phrase>,
    /// How a person leads into what they ask ("I'd like to", "can you"): the verb after
    /// one can start a clause of its own.
    pub request_openers: Vec<Phrase>,
    /// Sequencers that split without ordering (by their text).
    pub unordered_sequencers: HashSet<String>,
    pub relative_markers: HashSet<String>,
    pub presentational: Vec<Phrase>,
    /// Openings of a clause that gives a reason or a circumstance ("because the issue
    /// has been resolved"): it explains the request and asks for no step.
    pub background: Vec<Phrase>,
    /// Clauses that ask to hear how the step before them went ("… and tell me what could
    /// be better", "… and let me know"); see [`Lexicon::reports_back`].
    pub report_back: ReportBack,
    pub situation: Situation,
    /// Keys of the verbs a finder is named for (`search_movie`).
    pub lookup_verbs: HashSet<String>,
    /// Openings of a clause that describes what the clause before it named (", which
    /// are dishes 101 and 102"); only after another clause and a comma, where they are
    /// no question.
    pub describing: Vec<Phrase>,
    pub topic_markers: Vec<Phrase>,
    pub target_markers: Vec<Phrase>,
    pub anchor_markers: Vec<Phrase>,
    pub light_verbs: HashSet<String>,
    /// Stems of verbs that destroy.
    pub destructive_verbs: HashSet<String>,
    /// Intents that ask for a change, so a destructive entry may serve them.
    pub changing_intents: Vec<String>,
    pub articles: Articles,
    /// Entity → the intent it implies when no intent phrase matched.
    pub entity_intents: HashMap<String, String>,
    pub vague_objects: HashSet<String>,
    pub back_references: Vec<Phrase>,
    pub weak_back_references: Vec<Phrase>,
    pub question_words: HashSet<String>,
    pub asking_words: HashSet<String>,
    pub question_auxiliaries: HashSet<String>,
    /// Auxiliaries that open a question about something, no request to change it ("is
    /// there a file called …", unlike "can you …").
    pub asking_auxiliaries: HashSet<String>,
    /// Words a question means without saying them ("how *big*": size).
    pub unsaid: crate::unsaid::Unsaid,
    pub base_auxiliaries: HashSet<String>,
    pub vague_verbs: HashSet<String>,
    pub anaphora: HashSet<String>,
    /// Anaphora that stand for several things, never for one value said before.
    pub plural_anaphora: HashSet<String>,
    pub languages: Vec<String>,
    pub intents: Concepts,
    pub entities: Concepts,
    /// "did I edit …": a question about what was done.
    pub past_question: QuestionRule,
    /// "what do you remember …": a question for what was kept, in the present.
    pub present_question: QuestionRule,
    pub identifier_entity: Option<String>,
    pub calendar: Calendar,
    pub url_tlds: Vec<String>,
    /// Scope name → phrases.
    pub scopes: Vec<(String, Vec<Phrase>)>,
    pub words: WordClasses,
    /// Argument names filled from a code identifier.
    pub identifier_args: HashSet<String>,
    /// How a description says its argument is a name ("The name of the company").
    pub name_descriptions: Vec<String>,
    /// Last words of argument names whose value another tool can find when the request
    /// leaves it open (`restaurant_name`): the lookup that tool makes comes first.
    pub looked_up_args: HashSet<String>,
    /// Particles a verb closes into one word with ("login", "checkout", "signup"), each
    /// with the words that say it after the open verb ("log *into*").
    pub compound_particles: Vec<(String, Vec<String>)>,
    /// Value kind (`urls`, `text`…) → argument names that take it, in file order of kinds.
    pub arg_names: Vec<(String, Vec<String>)>,
    /// File-type families: the extensions that make a bare name a path, and the argument
    /// words that take only paths of the family.
    pub file_types: Vec<FileType>,
    /// Unit names (lower-case) → the unit (see `units` in the vocabulary file).
    pub units: HashMap<String, Unit>,
    /// The unit names that may be written onto a number ("70kg"), sorted.
    pub attached_units: Vec<String>,
    pub arg_cues: Vec<ArgCue>,
    /// The cues of one word ("called", "containing"), for [`Lexicon::opens_cue`].
    one_word_cues: HashSet<String>,
    /// The ends of a move or a translation: an argument of one end never takes a value
    /// introduced by a preposition of the other.
    pub ends: Vec<End>,
    pub ranges: Vec<Range>,
    pub value_prepositions: HashSet<String>,
    pub about_markers: HashSet<String>,
    pub trailing_joiners: Vec<String>,
    /// Words that join the items of a list ("New York, Boston *and* Denver").
    pub list_joiners: Vec<String>,
    /// Signs written before a number that belong to it ("$100").
    pub currency_signs: Vec<char>,
    /// Words after which an argument's description lists values it takes ("eg. buy,
    /// sell"), lower-case.
    pub example_markers: Vec<String>,
}

/// A unit as the vocabulary file writes it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawUnit {
    names: Vec<String>,
    per: f64,
    /// Names read only as a word of their own, never written onto a number.
    #[serde(default)]
    spaced: Vec<String>,
}

/// A unit of measure: which measure (by index), and how many of its first unit it makes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Unit {
    pub measure: usize,
    pub per: f64,
}

/// Every unit name of the vocabulary with its unit; a measure is known by its place.
fn units(raw: &BTreeMap<String, Vec<RawUnit>>) -> HashMap<String, Unit> {
    raw.values()
        .enumerate()
        .flat_map(|(measure, units)| {
            units.iter().flat_map(move |u| {
                u.names.iter().map(move |n| {
                    (
                        n.to_lowercase(),
                        Unit {
                            measure,
                            per: u.per,
                        },
                    )
                })
            })
        })
        .collect()
}

/// The unit names not marked `spaced`, lower-case and sorted.
fn attached_units(raw: &BTreeMap<String, Vec<RawUnit>>) -> Vec<String> {
    let mut out: Vec<String> = raw
        .values()
        .flatten()
        .flat_map(|u| u.names.iter().filter(|n| !u.spaced.contains(n)))
        .map(|n| n.to_lowercase())
        .collect();
    out.sort();
    out
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
}

impl FileType {
    /// Whether `path` ends in one of the family's extensions.
    pub fn holds(&self, path: &str) -> bool {
        path.rsplit_once('.')
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
    fn compile(raw: &RawArgCue) -> Self {
        Self {
            cues: raw
                .cues
                .iter()
                .filter_map(|p| Phrase::compile_exact(p))
                .collect(),
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
    fn compile(raw: &RawSituation, synonyms: &Synonyms) -> Self {
        Self {
            speakers: forms(&raw.speakers),
            wants: stems(&raw.wants),
            obliged: compile_phrases(&raw.obliged, synonyms),
            fact_openers: forms(&raw.fact_openers),
            copulas: forms(&raw.copulas),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSituation {
    speakers: Vec<String>,
    wants: Vec<String>,
    obliged: Vec<String>,
    fact_openers: Vec<String>,
    copulas: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReportBack {
    openings: Vec<String>,
    lead_ins: Vec<String>,
    about_it: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawArgCue {
    cues: Vec<String>,
    args: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    stopwords: Vec<String>,
    verbs: Vec<String>,
    abbreviations: Vec<String>,
    sequencers: Vec<String>,
    soft_sequencers: Vec<String>,
    request_openers: Vec<String>,
    unordered_sequencers: Vec<String>,
    relative_markers: Vec<String>,
    presentational: Vec<String>,
    background: Vec<String>,
    report_back: RawReportBack,
    situation: RawSituation,
    lookup_verbs: Vec<String>,
    describing: Vec<String>,
    topic_markers: Vec<String>,
    target_markers: Vec<String>,
    anchor_markers: Vec<String>,
    destructive_verbs: Vec<String>,
    changing_intents: Vec<String>,
    light_verbs: Vec<String>,
    object_articles: RawArticles,
    entity_intents: BTreeMap<String, String>,
    vague_objects: Vec<String>,
    back_references: Vec<String>,
    weak_back_references: Vec<String>,
    question_words: Vec<String>,
    asking_words: Vec<String>,
    question_auxiliaries: Vec<String>,
    asking_auxiliaries: Vec<String>,
    unsaid: crate::unsaid::RawUnsaid,
    base_auxiliaries: Vec<String>,
    vague_verbs: Vec<String>,
    anaphora: Vec<String>,
    plural_anaphora: Vec<String>,
    languages: Vec<String>,
    synonyms: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    verb_synonyms: BTreeMap<String, Vec<String>>,
    past_question: RawQuestion,
    present_question: RawQuestion,
    identifier_entity: Option<String>,
    calendar: Calendar,
    url_tlds: Vec<String>,
    scopes: BTreeMap<String, Vec<String>>,
    word_classes: WordClasses,
    identifier_args: Vec<String>,
    name_descriptions: Vec<String>,
    looked_up_args: Vec<String>,
    compound_particles: BTreeMap<String, Vec<String>>,
    arg_names: BTreeMap<String, Vec<String>>,
    file_types: BTreeMap<String, FileType>,
    #[serde(default)]
    units: BTreeMap<String, Vec<RawUnit>>,
    arg_cues: Vec<RawArgCue>,
    ends: Vec<End>,
    ranges: Vec<Range>,
    value_prepositions: Vec<String>,
    about_markers: Vec<String>,
    trailing_joiners: Vec<String>,
    list_joiners: Vec<String>,
    currency_signs: Vec<char>,
    example_markers: Vec<String>,
    intents: BTreeMap<String, RawIntent>,
    entities: BTreeMap<String, Vec<String>>,
}

impl Raw {
    /// The synonym groups, the verb-only ones among them, with the words most requests
    /// and the catalog's kinds are made of stemmed once.
    fn synonyms(&self, catalog: &Catalog) -> Synonyms {
        let groups: Vec<(String, Vec<String>)> = self.synonyms.clone().into_iter().collect();
        let verb_groups: Vec<(String, Vec<String>)> =
            self.verb_synonyms.clone().into_iter().collect();
        let w = &self.word_classes;
        let determiners: HashSet<&String> = (w.articles.iter())
            .chain(&w.possessives)
            .chain(&w.demonstratives)
            .collect();
        let before_verbs = (self.stopwords.iter())
            .filter(|s| !determiners.contains(s))
            .map(|s| s.to_lowercase());
        let mut synonyms = Synonyms::new(&groups).with_verb_only(&verb_groups, before_verbs);
        synonyms.remember(self.common_words());
        synonyms.remember(kind_words(catalog).iter().map(String::as_str));
        synonyms
    }

    /// The words most requests are made of, to be stemmed once when the vocabulary is
    /// built: function words, verbs, pronouns.
    fn common_words(&self) -> impl Iterator<Item = &str> {
        let w = &self.word_classes;
        self.stopwords
            .iter()
            .chain(&self.verbs)
            .chain(&self.anaphora)
            .map(String::as_str)
            .chain(
                [
                    &w.prepositions,
                    &w.articles,
                    &w.object_pronouns,
                    &w.possessives,
                    &w.demonstratives,
                ]
                .into_iter()
                .flatten()
                .map(String::as_str),
            )
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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawArticles {
    existing: Vec<String>,
    new: Vec<String>,
    describing: Vec<String>,
    existing_intent: String,
    new_intent: String,
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
    fn compile(raw: RawArticles) -> Self {
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
    pub object_pronouns: HashSet<String>,
    pub referring_pronouns: HashSet<String>,
    pub output_nouns: HashSet<String>,
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
    fn function_words(&self) -> HashSet<String> {
        (self.articles.iter())
            .chain(&self.possessives)
            .chain(&self.demonstratives)
            .chain(&self.prepositions)
            .cloned()
            .collect()
    }
}

/// The cues of one word, lower case.
fn one_word_cues(rules: &[RawArgCue]) -> HashSet<String> {
    rules
        .iter()
        .flat_map(|c| &c.cues)
        .filter(|c| !c.contains(' '))
        .map(|c| c.to_lowercase())
        .collect()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawQuestion {
    auxiliaries: Vec<String>,
    subjects: Vec<String>,
    reinterpret: BTreeMap<String, String>,
    #[serde(default)]
    either_order: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawIntent {
    phrases: Vec<String>,
    artifact: Option<String>,
    default_entity: Option<String>,
    named_entity: Option<String>,
}

/// Phrases compiled against the synonyms, each once: synonyms can make two phrases one.
fn compile_phrases(list: &[String], synonyms: &Synonyms) -> Vec<Phrase> {
    let mut out: Vec<Phrase> = Vec::new();
    for p in list.iter().filter_map(|p| Phrase::compile(p, synonyms)) {
        if !out.iter().any(|q| q.terms == p.terms) {
            out.push(p);
        }
    }
    out
}

/// The words of a list in lower case, as a set.
pub(crate) fn forms(list: &[String]) -> HashSet<String> {
    list.iter().map(|w| w.to_lowercase()).collect()
}

/// The stems of a list's words, as a set.
fn stems(list: &[String]) -> HashSet<String> {
    list.iter().map(|w| stem(&w.to_lowercase())).collect()
}

/// The words of a list in lower case, in its order.
fn lower(list: &[String]) -> Vec<String> {
    list.iter().map(|w| w.to_lowercase()).collect()
}

impl Lexicon {
    /// The built-in vocabulary extended by the catalog's `lexicon:` section.
    pub fn for_catalog(catalog: &Catalog) -> Result<Self, CoreError> {
        let node = yaml::parse(BUILTIN, yaml::Limits::default())
            .map_err(|e| CoreError::Lexicon(format!("line {}: {}", e.pos.line, e.message)))?;
        let raw: Raw = serde_json::from_value(yaml::to_json(&node))
            .map_err(|e| CoreError::Lexicon(e.to_string()))?;
        let synonyms = raw.synonyms(catalog);
        let phrases = |list: &[String]| compile_phrases(list, &synonyms);
        let exact = |list: &[String]| -> Vec<Phrase> {
            list.iter()
                .filter_map(|p| Phrase::compile_exact(p))
                .collect()
        };
        let keys = |list: &[String]| -> HashSet<String> {
            list.iter()
                .map(|w| synonyms.key(&w.to_lowercase()))
                .collect()
        };
        let (mut intents, mut entities) = concepts(&raw, &phrases);
        extend(&mut intents, &catalog.lexicon().intents, &synonyms);
        extend(&mut entities, &catalog.lexicon().entities, &synonyms);

        Ok(Self {
            stopwords: keys(&raw.stopwords),
            verbs: &stems(&raw.verbs) | &catalog_verbs(catalog, &raw.word_classes),
            abbreviations: forms(&raw.abbreviations),
            sequencers: exact(&raw.sequencers),
            soft_sequencers: exact(&raw.soft_sequencers),
            request_openers: exact(&raw.request_openers),
            unordered_sequencers: forms(&raw.unordered_sequencers),
            relative_markers: forms(&raw.relative_markers),
            presentational: exact(&raw.presentational),
            background: exact(&raw.background),
            report_back: ReportBack::compile(&raw.report_back),
            situation: Situation::compile(&raw.situation, &synonyms),
            lookup_verbs: raw.lookup_verbs.iter().map(|w| synonyms.key(w)).collect(),
            describing: exact(&raw.describing),
            topic_markers: exact(&raw.topic_markers),
            target_markers: exact(&raw.target_markers),
            anchor_markers: exact(&raw.anchor_markers),
            light_verbs: stems(&raw.light_verbs),
            destructive_verbs: stems(&raw.destructive_verbs),
            changing_intents: raw.changing_intents,
            articles: Articles::compile(raw.object_articles),
            entity_intents: raw.entity_intents.into_iter().collect(),
            vague_objects: forms(&raw.vague_objects),
            back_references: phrases(&raw.back_references),
            weak_back_references: exact(&raw.weak_back_references),
            question_words: forms(&raw.question_words),
            asking_words: forms(&raw.asking_words),
            question_auxiliaries: forms(&raw.question_auxiliaries),
            asking_auxiliaries: forms(&raw.asking_auxiliaries),
            unsaid: crate::unsaid::Unsaid::compile(raw.unsaid, &synonyms),
            base_auxiliaries: forms(&raw.base_auxiliaries),
            vague_verbs: keys(&raw.vague_verbs),
            anaphora: forms(&raw.anaphora),
            plural_anaphora: forms(&raw.plural_anaphora),
            languages: raw.languages,
            intents: Concepts::new(intents),
            entities: Concepts::new(entities),
            past_question: QuestionRule::compile(raw.past_question),
            present_question: QuestionRule::compile(raw.present_question),
            identifier_entity: raw.identifier_entity,
            calendar: raw.calendar,
            url_tlds: raw.url_tlds,
            scopes: raw
                .scopes
                .iter()
                .map(|(name, list)| (name.clone(), phrases(list)))
                .collect(),
            words: raw.word_classes,
            identifier_args: forms(&raw.identifier_args),
            name_descriptions: lower(&raw.name_descriptions),
            looked_up_args: forms(&raw.looked_up_args),
            compound_particles: raw.compound_particles.into_iter().collect(),
            arg_names: raw.arg_names.into_iter().collect(),
            file_types: (raw.file_types.into_iter())
                .map(|(name, family)| FileType { name, ..family })
                .collect(),
            units: units(&raw.units),
            attached_units: attached_units(&raw.units),
            value_prepositions: forms(&raw.value_prepositions),
            about_markers: forms(&raw.about_markers),
            trailing_joiners: lower(&raw.trailing_joiners),
            list_joiners: lower(&raw.list_joiners),
            currency_signs: raw.currency_signs,
            example_markers: lower(&raw.example_markers),
            arg_cues: raw.arg_cues.iter().map(ArgCue::compile).collect(),
            one_word_cues: one_word_cues(&raw.arg_cues),
            ends: raw.ends,
            ranges: raw.ranges,
            synonyms,
        })
    }

    pub fn tokenize(&self, text: &str, values: &[(usize, usize)]) -> Vec<Token> {
        let mut tokens = tokenize(text, values, &self.synonyms);
        // "open a PR", "check the CI": an acronym after an article is a common noun — what
        // to act on — not a name to pass along.
        for i in 1..tokens.len() {
            let raw = text.get(tokens[i].start..tokens[i].end).unwrap_or_default();
            if tokens[i].proper
                && self.is_determiner(&tokens[i - 1])
                && raw.chars().all(|c| c.is_ascii_uppercase() || c == 's')
            {
                tokens[i].proper = false;
            }
        }
        tokens
    }

    /// The closed compounds among a name's words, opened: for `account_login` the verb
    /// "log" and the phrases "log in", "log into"; for `checkout_api` "check" and "check
    /// out". So "log into my account" meets the login tool, and meets it better than the
    /// logout tool, which shares only the verb. A word is one when it ends in a particle
    /// and at least three letters that are no function word come before it.
    pub fn compounds(&self, name: &str) -> (Vec<String>, Vec<String>) {
        let mut verbs = Vec::new();
        let mut phrases = Vec::new();
        for w in waypoint_classify::features::words(name) {
            let Some((p, forms)) = self
                .compound_particles
                .iter()
                .find(|(p, _)| w.len() >= p.len() + 3 && w.ends_with(p.as_str()))
            else {
                continue;
            };
            let head = &w[..w.len() - p.len()];
            if head.chars().all(|c| c.is_ascii_alphabetic()) && !self.stopwords.contains(head) {
                phrases.extend(forms.iter().map(|f| format!("{head} {f}")));
                verbs.push(head.to_string());
            }
        }
        (verbs, phrases)
    }

    /// Whether a token can head an action.
    pub fn is_verb(&self, tok: &Token) -> bool {
        !tok.value && self.verbs.contains(&tok.stem)
    }

    /// The noun a question asks for: the first content word after "what" or "which",
    /// past auxiliaries and articles ("what *day* of the week …", "what is the
    /// *capacity* …").
    pub fn asked_for(&self, tokens: &[Token]) -> Option<usize> {
        let at = tokens
            .iter()
            .position(|t| !t.value && self.asking_words.contains(&t.form))?;
        (at + 1..tokens.len().min(at + 4))
            .find(|&i| {
                let t = &tokens[i];
                !self.question_auxiliaries.contains(&t.form) && !self.stopwords.contains(&t.key)
            })
            .filter(|&i| self.is_content(&tokens[i]))
    }

    /// Whether a token opens a question ("what", "will", "can").
    pub fn opens_question(&self, tok: &Token) -> bool {
        self.question_words.contains(&tok.form) || self.question_auxiliaries.contains(&tok.form)
    }

    /// Whether a clause opening with these tokens asks *about* something rather than for
    /// it ("what files …", "is there …"; "can you …" is a request): it asks for no change.
    pub fn asks_about(&self, tokens: &[Token]) -> bool {
        tokens.first().is_some_and(|t| {
            self.question_words.contains(&t.form) || self.asking_auxiliaries.contains(&t.form)
        })
    }

    /// Whether one of the intent's phrases starts at token `at`.
    pub fn intent_phrase_at(&self, intent: &str, tokens: &[Token], at: usize) -> bool {
        self.intent(intent)
            .is_some_and(|c| c.phrases.iter().any(|p| p.matches_at(tokens, at)))
    }

    /// Whether a token is a verb that destroys ("delete", "wipe").
    pub fn destroys(&self, tok: &Token) -> bool {
        !tok.value && self.destructive_verbs.contains(&tok.stem)
    }

    /// Whether a word is an argument cue on its own ("a folder *called* logs", "a file
    /// *containing* …"): what follows is a value, not more of the noun before it.
    pub fn opens_cue(&self, form: &str) -> bool {
        self.one_word_cues.contains(form)
    }

    /// The intent whose verbs a question re-reads as `intent` ("what do you *remember*
    /// …" asks to recall), if one does.
    pub fn reread_as(&self, toks: &[Token], intent: &str) -> Option<&str> {
        [&self.past_question, &self.present_question]
            .into_iter()
            .filter(|q| q.asked(toks))
            .flat_map(|q| &q.reinterpret)
            .find(|(_, to)| to == intent)
            .map(|(from, _)| from.as_str())
    }

    /// Whether a token is a verb that says little on its own ("make", "create").
    pub fn is_light_verb(&self, tok: &Token) -> bool {
        !tok.value && self.light_verbs.contains(&tok.stem)
    }

    /// Where the definite word ("the", "that") of a phrase ending at `end` stands: at most
    /// three words before it, with nothing but `plain` words between ("*the* generated
    /// random password").
    pub fn definite_before(
        &self,
        tokens: &[Token],
        end: usize,
        plain: impl Fn(&Token) -> bool,
    ) -> Option<usize> {
        (end.saturating_sub(3)..end)
            .rev()
            .take_while(|&j| plain(&tokens[j]))
            .find(|&j| {
                let form = &tokens[j].form;
                self.articles.existing.contains(form) || self.words.possessives.contains(form)
            })
    }

    /// The article of the object right after `head`: "the X" exists, "a X" is new.
    pub fn article_after(&self, tokens: &[Token], head: Option<usize>) -> Option<Article> {
        // Skip particles and pronouns ("set *up* an agent", "give *me* a summary"); a
        // question word opens a question of its own, whose article is not the object's
        // ("show me *what's in the* folder" changes nothing).
        for tok in tokens.get(head? + 1..)? {
            if !tok.value && self.asking_words.contains(&tok.form) {
                return None;
            }
            if let Some(article) = self.articles.of(&tok.form) {
                return Some(article);
            }
            if tok.value || self.is_content(tok) {
                return None;
            }
        }
        None
    }

    /// Whether a free relative and its subject open at `i` ("*what you* find"): the
    /// verb after them is the caller's to check.
    pub fn opens_free_relative(&self, tokens: &[Token], i: usize) -> bool {
        tokens
            .get(i)
            .is_some_and(|t| self.words.free_relatives.contains(&t.form))
            && tokens
                .get(i + 1)
                .is_some_and(|t| self.words.subject_pronouns.contains(&t.form))
    }

    pub fn is_determiner(&self, tok: &Token) -> bool {
        self.articles.existing.contains(&tok.form) || self.articles.new.contains(&tok.form)
    }

    /// Index of the first token after any of `markers`, if one occurs.
    pub fn after_marker(markers: &[Phrase], tokens: &[Token]) -> Option<usize> {
        markers
            .iter()
            .filter_map(|p| p.find_all(tokens).next().map(|at| at + p.len()))
            .min()
    }

    /// Whether a clause asks only to hear how the step before it went: an opening of
    /// `report_back`, then nothing, or (after a question word or a `lead_ins` word) a
    /// pronoun or a modal that stands for that step's outcome. "tell me what the weather
    /// is" names a thing of its own and is not.
    pub fn reports_back(&self, tokens: &[Token]) -> bool {
        let Some(opening) = self
            .report_back
            .openings
            .iter()
            .find(|p| p.matches_at(tokens, 0))
        else {
            return false;
        };
        let mut rest = tokens.get(opening.len()..).unwrap_or_default();
        if let Some((first, after)) = rest.split_first()
            && (self.question_words.contains(&first.form)
                || self.report_back.lead_ins.contains(&first.form))
        {
            rest = after;
        }
        rest.first()
            .is_none_or(|t| self.report_back.about_it.contains(&t.form))
    }

    /// Whether a clause tells of the speaker's situation ("I'm a nurse moving to
    /// Seattle", "my landlord is raising the rent"): it opens with one of `speakers`,
    /// asks nothing (`asks`: a question mark ends it; no request opener) and says no
    /// want or duty ("I *need* a logo", "I *have to* call Ana" ask for something).
    pub fn tells_a_situation(&self, tokens: &[Token], asks: bool) -> bool {
        tokens
            .first()
            .is_some_and(|t| self.situation.speakers.contains(&t.form))
            && self.says_no_want(tokens, asks)
    }

    /// Whether a clause states a fact ("my ID number is 1234567890", "the appointment
    /// is at 3 pm"): it opens with a speaker's word or a definite one, a form of "be"
    /// follows within its first few words, and it asks nothing and says no want or duty,
    /// as [`Lexicon::tells_a_situation`] reads them.
    pub fn states_a_fact(&self, tokens: &[Token], asks: bool) -> bool {
        /// Words of the subject before its "be": "my home phone number is".
        const SUBJECT: usize = 5;
        let s = &self.situation;
        tokens
            .first()
            .is_some_and(|t| s.speakers.contains(&t.form) || s.fact_openers.contains(&t.form))
            && (tokens.iter().skip(1).take(SUBJECT)).any(|t| s.copulas.contains(&t.form))
            && self.says_no_want(tokens, asks)
    }

    fn says_no_want(&self, tokens: &[Token], asks: bool) -> bool {
        !asks
            && !self.request_openers.iter().any(|p| p.matches_at(tokens, 0))
            && !tokens
                .iter()
                .any(|t| self.situation.wants.contains(&t.stem))
            && !(self.situation.obliged.iter()).any(|p| p.find_all(tokens).next().is_some())
    }

    /// Whether a token carries routing signal.
    pub fn is_content(&self, tok: &Token) -> bool {
        !tok.value && !self.stopwords.contains(&tok.key) && !tok.key.is_empty()
    }

    pub fn intent(&self, name: &str) -> Option<&Concept> {
        self.intents.iter().find(|c| c.name == name)
    }

    /// The language a token names, in its usual capitalisation.
    pub fn language(&self, tok: &Token) -> Option<String> {
        self.languages.iter().find(|l| **l == tok.form).map(|l| {
            let mut c = l.chars();
            c.next()
                .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
                .unwrap_or_default()
        })
    }
}

/// The built-in intents and entities, compiled.
fn concepts(raw: &Raw, phrases: &dyn Fn(&[String]) -> Vec<Phrase>) -> (Vec<Concept>, Vec<Concept>) {
    let intents: Vec<Concept> = raw
        .intents
        .iter()
        .map(|(name, i)| Concept {
            name: name.clone(),
            phrases: phrases(&i.phrases),
            artifact: i.artifact.clone(),
            default_entity: i.default_entity.clone(),
            named_entity: i.named_entity.clone(),
        })
        .collect();
    let entities: Vec<Concept> = raw
        .entities
        .iter()
        .map(|(name, p)| Concept {
            name: name.clone(),
            phrases: phrases(p),
            artifact: None,
            default_entity: None,
            named_entity: None,
        })
        .collect();
    (intents, entities)
}

fn extend(concepts: &mut Vec<Concept>, extra: &BTreeMap<String, Vec<String>>, synonyms: &Synonyms) {
    let index: HashMap<String, usize> = concepts
        .iter()
        .enumerate()
        .map(|(i, c)| (c.name.clone(), i))
        .collect();
    for (name, list) in extra {
        let compiled: Vec<Phrase> = list
            .iter()
            .filter_map(|p| Phrase::compile(p, synonyms))
            .collect();
        match index.get(name) {
            Some(&i) => concepts[i].phrases.extend(compiled),
            None => concepts.push(Concept {
                name: name.clone(),
                phrases: compiled,
                artifact: None,
                default_entity: None,
                named_entity: None,
            }),
        }
    }
}

impl Phrase {
    /// A phrase from already-normalised tokens (catalog keywords and examples).
    pub fn from_tokens(tokens: &[Token], text: &str) -> Option<Self> {
        let terms: Vec<Term> = tokens
            .iter()
            .filter(|t| !t.value)
            .map(|t| Term::Key(t.key.clone()))
            .collect();
        (!terms.is_empty()).then(|| Self {
            terms,
            text: text.to_string(),
        })
    }
}

/// Stems of the verbs a catalog's tools are named for: the first word of a tool's name
/// when its description opens with that word and a function word (`validate_email`:
/// "Validate an email address"; `search_hotel`: "Search for hotels"), so a clause
/// opened by a verb the built-in vocabulary lacks still has one. A description that
/// restates the name ("Image classification is the task…", "account blocked
/// (banking)") or names a thing ("Hotel order modification interface") says nothing
/// about the word's class.
fn catalog_verbs(catalog: &Catalog, classes: &WordClasses) -> HashSet<String> {
    let function_words = classes.function_words();
    let words = |text: &str| -> Vec<String> {
        waypoint_classify::features::words(text)
            .into_iter()
            .filter(|w| !w.starts_with('0'))
            .collect()
    };
    catalog
        .tools()
        .iter()
        .filter_map(|t| {
            let short = crate::text::without_server(&t.name);
            let name = words(short);
            let plain = t.description.split('(').next().unwrap_or_default();
            let about = words(plain);
            let first = name.first()?;
            (name.len() >= 2
                && about.len() > name.len()
                && about.first() == Some(first)
                && about.get(1) != name.get(1)
                && about.get(1).is_some_and(|w| function_words.contains(w))
                && first.len() >= 3
                && first.chars().all(|c| c.is_ascii_alphabetic()))
            .then(|| stem(first))
        })
        .collect()
}

/// Every artifact kind the catalog's entries make or take, and the words of their
/// names: linking a later step to an earlier one asks for their keys and stems in every
/// plan.
fn kind_words(catalog: &Catalog) -> Vec<String> {
    let tools = catalog
        .tools()
        .iter()
        .flat_map(|t| t.produces.iter().chain(&t.accepts));
    let pipelines = catalog
        .pipelines()
        .iter()
        .flat_map(|p| p.produces.iter().chain(&p.accepts));
    let plans = catalog.plans().iter().flat_map(|d| d.produces.iter());
    tools
        .chain(pipelines)
        .chain(plans)
        .flat_map(|k| {
            let mut forms = crate::args::name_parts(k);
            forms.push(k.to_lowercase());
            forms
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lexicon() -> Lexicon {
        Lexicon::for_catalog(&Catalog::default()).unwrap()
    }

    #[test]
    fn closed_compounds_in_names_open_into_verb_and_particle() {
        let lex = lexicon();
        let (verbs, phrases) = lex.compounds("account_login");
        assert_eq!(verbs, ["log"]);
        assert_eq!(phrases, ["log in", "log into"]);
        assert_eq!(lex.compounds("checkoutApi").1, ["check out"]);
        assert_eq!(lex.compounds("plugin").0, ["plug"]);
        // Too short a verb, a function word, or no particle at the end: none.
        assert!(lex.compounds("join").0.is_empty());
        assert!(lex.compounds("within_range").0.is_empty());
        assert!(lex.compounds("get_weather").0.is_empty());
    }

    #[test]
    fn builtin_vocabulary_compiles() {
        let lex = lexicon();
        assert!(lex.intent("status").is_some());
        assert!(lex.verbs.contains(&stem("translate")));
    }

    #[test]
    fn a_clause_states_a_fact_when_its_subject_goes_on_with_be_and_it_asks_nothing() {
        let lex = lexicon();
        let fact = |text: &str| lex.states_a_fact(&lex.tokenize(text, &[]), false);
        for yes in [
            "my ID number is 1234567890",
            "the appointment is scheduled for April 3",
            "her number is 123-456-7890 and her email is a@b.com",
            "the due date is 2022-12-31",
        ] {
            assert!(fact(yes), "{yes}");
        }
        for no in [
            // A request, a want, a duty, or no "be" after the subject.
            "book the appointment for April 3",
            "my goal is to find a flat, I need one by May",
            "the report has to be sent today",
            "the quick brown fox jumps over the lazy dog and is gone",
            "is the build green",
        ] {
            assert!(!fact(no), "{no}");
        }
        // A question asks.
        assert!(!lex.states_a_fact(&lex.tokenize("my balance is what", &[]), true));
    }

    #[test]
    fn a_clause_reports_back_when_what_follows_the_opening_stands_for_the_outcome() {
        let lex = lexicon();
        let reports = |text: &str| lex.reports_back(&lex.tokenize(text, &[]));
        for yes in [
            "let me know",
            "tell me what could be better",
            "tell me if it passes",
            "report back",
            "tell me how they went",
        ] {
            assert!(reports(yes), "{yes}");
        }
        for no in [
            "tell me what the weather is",
            "tell me the routing number",
            "show me what it says",
            "order a coffee",
            "",
        ] {
            assert!(!reports(no), "{no}");
        }
    }

    #[test]
    fn exact_forms_do_not_match_other_inflections() {
        let lex = lexicon();
        let p = Phrase::compile("=changed", &lex.synonyms).unwrap();
        assert!(p.matches_at(&lex.tokenize("changed", &[]), 0));
        assert!(!p.matches_at(&lex.tokenize("change", &[]), 0));
        let q = Phrase::compile("change", &lex.synonyms).unwrap();
        assert!(q.matches_at(&lex.tokenize("changing", &[]), 0));
    }

    #[test]
    fn the_article_is_the_objects_not_a_phrase_after_it() {
        let lex = lexicon();
        let article = |text: &str| lex.article_after(&lex.tokenize(text, &[]), Some(0));
        assert_eq!(article("fix the bug"), Some(Article::Existing));
        assert_eq!(article("give me a summary"), Some(Article::New));
        assert_eq!(article("set up an agent"), Some(Article::New));
        assert_eq!(article("turn it into a blog post"), Some(Article::New));
        assert_eq!(article("show me what's in the folder"), None);
        assert_eq!(article("tell me which of the files changed"), None);
    }
}
