//! clause → ranked candidates (tools and pipelines) with calibrated scores.
//!
//! The index is built once per catalog from everything the catalog says about an entry
//! (name, keywords, description, examples, produced and accepted kinds), each field with
//! its own weight. A clause's score is the idf-weighted overlap of its words with an
//! entry, plus a bonus for whole multi-word keywords, scaled by how much of the clause
//! the entry explains. IDF is normalised by the catalog's size and the raw score is
//! squashed into [0, 1], so one threshold means the same on 30 tools and on 10,000.
//!
//! This module holds the index, its weights and what other stages ask of it; the work is
//! in modules of its own:
//! - `index`: building it from the catalog, field by field;
//! - `doc`: one entry as the index knows it;
//! - `rank`: a clause's words against every entry, blended with meaning and the trained
//!   router, into the ordered candidates;
//! - `rules`: what reweighs a candidate for what the clause asks (what it is given, the
//!   kind of thing made or changed, age, harm);
//! - `grammar`: what the clause's words are doing (a verb's object, complements,
//!   participles, word pairs).

use waypoint_catalog::Catalog;
use waypoint_protocol::ExtractedKind;

use crate::hash::{HashMap, HashSet};
use crate::learned::{Learned, RouterModel};
use crate::lexicon::{Article, Lexicon, Phrase};
use crate::meaning::{Meaning, MeaningSettings, MeaningState};
use crate::text::Token;

mod doc;
mod gist;
mod grammar;
mod index;
mod rank;
mod rules;

use doc::Doc;
pub(crate) use grammar::{complement_at, names, object_noun, object_value};
use index::named_by;

/// Field weights: how strongly a word in each part of an entry speaks for it.
const W_KEYWORD: f64 = 3.0;

/// Each word of a multi-word keyword; the whole phrase earns `W_PHRASE` on top.
const W_KEYWORD_PART: f64 = 1.5;

/// Bonus for producing the result a clause names after "into", "as a"…
const W_TARGET: f64 = 2.0;

/// Factor for an entry that consumes, rather than produces, the named result.
const CONSUMES_TARGET: f64 = 0.5;

const W_NAME: f64 = 2.0;

const W_DESCRIPTION: f64 = 1.0;

const W_PRODUCES: f64 = 1.0;

const W_ACCEPTS: f64 = 0.5;

/// A one-word value an argument's description lists ("eg. transfer, deposit"): what the
/// tool does, said by its arguments rather than its name, as telling as a name's word.
const W_SUGGESTED: f64 = 2.5;

/// Each word of a listed value of several words ("e.g., city name"): one of them alone
/// ("the *names* of the singles") is not the value.
const W_SUGGESTED_WORDS: f64 = 1.0;

/// A word of an example request; whole examples also count by similarity.
const W_EXAMPLE: f64 = 1.5;

/// Weight of the best example's cosine similarity with the clause, above the floor.
const W_EXAMPLE_SIM: f64 = 6.0;

/// Cosine similarity below which an example says nothing.
const EXAMPLE_FLOOR: f64 = 0.3;

/// Bonus per word of a whole multi-word keyword found in the clause.
const W_PHRASE: f64 = 1.0;

/// Two clause words side by side that stand side by side in an entry's own words too
/// ("what should I *read next*": "… want to read next"), per unit of their weight.
const W_PAIR: f64 = 0.5;

/// Raw score at which a candidate reaches 1 − 1/e.
const SCALE: f64 = 3.0;

/// Bonus when the entry produces evidence the clause's goal needs.
const W_EVIDENCE: f64 = 1.0;

/// Bonus when the entry's own words express the clause's intent.
const W_INTENT: f64 = 1.5;

/// Bonus when "the X" meets an entry that changes things, or "a X" one that makes them.
const W_ARTICLE: f64 = 1.5;

/// Bonus per kind of value the clause supplies that the entry takes as an argument.
const W_ARG_FIT: f64 = 1.0;

/// Bonus for an entry whose words name the kind of thing the clause's object is ("file"
/// for "the readme"), where no entry names the object itself.
const W_OBJECT_KIND: f64 = 0.5;

/// The trained router's part of a score below which it is not named as a reason, and an
/// entry only it sees is not a candidate.
const MODEL_REASON: f64 = 0.05;

/// Most candidates `rank` returns; planning never looks further down.
pub const MAX_CANDIDATES: usize = 32;

/// In catalogs of at least this many entries, a word in more than half of them is noise.
const COMMON_MIN_DOCS: usize = 50;

/// Lexical raw score below which understanding bonuses are scaled down.
const MIN_SUPPORT: f64 = 1.0;

/// A destructive entry whose arguments take none of the values the clause names is
/// scaled by this: the words say delete, but not what it deletes.
const DESTROYS_SOMETHING_ELSE: f64 = 0.35;

/// Factor on the word score of an entry that takes no free text when no entry's words
/// name the clause's object (which also takes away the bonus the verb alone earns).
const OBJECT_UNKNOWN: f64 = 0.8;

/// Factor on the word score of an entry that makes a kind of its own when the clause asks
/// for a new thing no entry names and names nothing the entry makes ("schedule *a
/// haircut* for Saturday" to a tool that makes workflows): what its verb or keyword
/// matched is said of something else. "an artistic rendition of my *picture*" to a tool
/// that makes images keeps its score.
const NEW_THING_UNKNOWN: f64 = 0.5;

/// Factor on the score of an entry whose description says it acts on existing things of
/// the clause object's kind when the clause asks for a new one ("add *an* entity" to
/// "Add new observations to existing entities"), or on new ones when the clause names
/// an existing one, where another entry's description says it acts on the age asked.
const OTHER_AGE: f64 = 0.35;

/// Factor on the score of an entry that declares what it acts on, and takes neither a
/// path nor a file of the kind, when the clause's verb acts on a file.
const ACTS_ON_SOMETHING_ELSE: f64 = 0.5;

/// Factor on the score of an entry that takes no arguments at all when the clause names
/// a file, a page or an address: "read README.md" is not "Read the entire knowledge
/// graph", however close the two are in meaning.
const TAKES_NOTHING_GIVEN: f64 = 0.5;

/// Factor on the score of an entry that does what a question's verb says but not what
/// the question asks for: "what do you remember about the deploy key" stores nothing.
const REREAD_ELSEWHERE: f64 = 0.5;

/// Most an entry's word score loses when the clause says none of its name's words.
const NAME_UNSAID: f64 = 0.02;

/// Weight of a light verb ("make", "create"): its object decides.
const LIGHT_VERB: f64 = 0.5;

/// What is left of the score of an entry its own description calls deprecated: its
/// replacement, which does the same, leads.
const DEPRECATED: f64 = 0.8;

/// Weight of the family of a file the clause names ("photo.png": image), as a word.
const FILE_TYPE: f64 = 0.5;

/// The share of its score an entry named for directories keeps when the clause names a
/// file.
const NOT_FOR_THE_FILE: f64 = 0.5;

/// Factor on the score, second opinions included, of an entry that makes something other
/// than what a clause asks for, where another entry makes it: "move *the* weekly report
/// workflow to Mondays" is not `create_workflow` (it makes a new one), nor "create *an
/// agent* that summarizes my email" `create_workflow` (it makes a workflow).
const MAKES_ANOTHER: f64 = 0.35;

/// What is left of the score of a tool that only reads where the clause's verb asks for
/// a change and an entry in reach makes it (see [`RouteIndex::reads_where_change_is_asked`]).
const READS_FOR_A_CHANGE: f64 = 0.5;

/// Weights of clause words by role.
const HEAD_VERB: f64 = 1.5;

const DESCRIBING: f64 = 0.35;

const TOPIC: f64 = 0.3;

/// What is left of a taught entry's score when the clause asks for the thing only an
/// untaught entry is named after (see [`RouteIndex::asked_of_untaught`]).
const ASKED_ELSEWHERE: f64 = 0.5;

/// The score an entry named after a clause's object takes when the trained model places
/// the clause nowhere (see [`RouteIndex::object_names_entry`]): above the default
/// threshold, below what a confident model gives.
const NAMED_BY_OBJECT: f64 = 0.5;

/// Candidates this close to the best are tied: the clause's words do not choose.
const TIE: f64 = 0.005;

/// What the request's earlier clauses add to a tied entry they name: enough to order the
/// tie, too little to lift anything over the threshold.
const CONTEXT_NUDGE: f64 = 0.01;

/// A tool named for a lookup verb and one kind of thing (`search_company`).
#[derive(Debug, Clone)]
pub struct Finder {
    /// The tool's name.
    pub tool: String,
    /// The name's word for the kind, as the name spells it ("company").
    pub word: String,
}

/// What the planner knows about a clause beyond its words.
#[derive(Debug, Clone, Default)]
pub struct Hints<'a> {
    pub head_verb: Option<usize>,
    /// The goal's intent, when the parser is reasonably sure of it.
    pub intent: Option<&'a str>,
    /// The intent whose verbs a question re-read as `intent` ("what do you *remember*
    /// …" recalls): an entry that does that one and not `intent` is not asked for.
    pub reread: Option<&'a str>,
    pub article: Option<Article>,
    /// The head verb destroys ("delete", "wipe").
    pub destructive: bool,
    /// Evidence classes the goal needs, as named in the catalog's rules.
    pub needs: Vec<&'a str>,
    /// Kinds of values the clause supplies (URL, e-mail, path…).
    pub supplied: Vec<ExtractedKind>,
    /// The families of the files the clause names ("photo.png": image; the lexicon's
    /// `file_types`).
    pub file_types: Vec<&'a str>,
    /// The clause as written, for the trained router.
    pub text: &'a str,
    /// Keys of the last words of what the request's earlier clauses' entries make ("the
    /// gross *salary*", "the best *route*"): a definite phrase ending in one points back
    /// at that output rather than saying what to do, and weighs little.
    pub earlier_products: Vec<String>,
    /// The content words of the request's earlier clauses, their head verbs left out:
    /// what the request is about so far, which decides between entries the clause's own
    /// words tie on ("create a text file, then *change* it": the file tool, not the
    /// password one).
    pub context: Vec<&'a Token>,
    /// What the request sets out before the clause in clauses that ask for nothing
    /// ("I've had a headache for three days, should I be worried?"), read with the
    /// clause for its meaning: the clause alone may not say what it is about.
    pub setting: Option<String>,
}

/// The routing index of one catalog.
#[derive(Debug, Clone, Default)]
pub struct RouteIndex {
    docs: Vec<Doc>,
    /// key → (doc, field weight), one entry per doc holding the best field's weight.
    postings: HashMap<String, Vec<(u32, f64)>>,
    /// first key of a multi-word phrase → (doc, phrase)
    phrases: HashMap<String, Vec<(u32, Phrase)>>,
    /// Two content words next to each other in an entry's name or description
    /// (function words between them aside), first key → second key → the entries that
    /// say them so; nested, so a clause's pairs are looked up without allocating.
    pairs: HashMap<String, HashMap<String, Vec<u32>>>,
    /// key → idf normalised to (0, 1]
    idf: HashMap<String, f64>,
    /// Keys of the nouns the entries' descriptions tell apart by age: some entry says it
    /// acts on new ones, another on existing ones ([`Doc::aged`]).
    aged_apart: HashSet<String>,
    /// Value kind → entries whose arguments take it, in catalog order.
    takers: HashMap<ExtractedKind, Vec<u32>>,
    /// Artifact kind (as written in the catalog) → entries that produce it, in catalog order.
    producers: HashMap<String, Vec<u32>>,
    /// Keys of the artifact kinds entries make or take ("summary", "draft"): the words
    /// "the summary" can point back with.
    artifact_keys: HashSet<String>,
    /// Entry id → stems of the content words of its name and description: a value that
    /// starts or ends with them only restates the entry ("analyze *the sales data for*
    /// laptops").
    own_words: HashMap<String, Vec<String>>,
    /// Entry id → the stems of its name's words (see [`crate::args::name_stems`]).
    name_stems: HashMap<String, Vec<String>>,
    /// Tool name → what filling needs to know of each of its arguments.
    arg_specs: HashMap<String, Vec<crate::args::ArgSpec>>,
    /// Entry id → the words that name what it makes, for later steps pointing back.
    made: HashMap<String, crate::args::Made>,
    /// Entry id → the key of the last word of each kind it makes (`blog_post`: post), the
    /// word a later clause names it by; worked out once, as every plan asks it of each
    /// clause's best entry.
    product_keys: HashMap<String, Vec<String>>,
    /// Tools that take what they act on by id (see [`crate::args::takes_by_id`]), worked
    /// out once: every plan asks it of each step.
    by_id: HashSet<String>,
    /// Example requests, each a small document of its own: a clause close to one of an
    /// entry's examples is close to the entry (nearest neighbour over examples).
    examples: Vec<Example>,
    /// key → examples containing it
    example_postings: HashMap<String, Vec<u32>>,
    /// key → idf over examples
    example_idf: HashMap<String, f64>,
    /// The trained router, when the catalog has at least two entries to tell apart.
    learned: Option<Learned>,
    /// Where the trained router leads: a word → the one entry whose name it is, past
    /// words most names share (`atis_airport` → "airport").
    named_by: HashMap<String, u32>,
    /// Sentence vectors of every entry, when an encoder is configured.
    meaning: MeaningState,
    /// Static word vectors of every entry, where no encoder is on and the catalog knows
    /// its entries by names and descriptions alone.
    gist: Option<gist::Gist>,
    /// Keys of the content words of every entry's whole name, server prefix included
    /// (`spotify_scraper_get_artist_overview`, `github.create_issue`): a capitalised word
    /// of the request among them names a service the catalog has ("from *Spotify*"),
    /// not a value to act on.
    name_words: HashSet<String>,
    /// Kind key → the first tool named for a lookup verb and that kind alone
    /// (`search_company`): what finds a thing a request names instead of its id.
    finders: HashMap<String, Finder>,
}

#[derive(Debug, Clone)]
struct Example {
    doc: u32,
    text: String,
    /// Euclidean norm of the example's idf vector.
    norm: f64,
}

/// A weighted clause word.
struct Word<'a> {
    tok: &'a Token,
    weight: f64,
}

impl RouteIndex {
    pub fn build(
        catalog: &Catalog,
        lex: &Lexicon,
        router: &RouterModel,
        meaning: Option<&MeaningSettings>,
        word_vectors: bool,
    ) -> Self {
        let mut index = Self::lexical_only(catalog, lex);
        let ids: HashMap<&str, u32> = index
            .docs
            .iter()
            .enumerate()
            .map(|(i, d)| (d.id.as_str(), u32::try_from(i).unwrap_or(u32::MAX)))
            .collect();
        if let Some(settings) = meaning {
            let cache = router.cache_dir();
            let keep_probes = crate::learned::may_train_network(catalog);
            index.meaning = match Meaning::build(
                catalog,
                settings.clone(),
                cache,
                |id| ids.get(id).copied(),
                keep_probes,
            ) {
                Ok(m) => MeaningState::On(std::sync::Arc::new(m)),
                Err(e) => MeaningState::Failed(e.to_string()),
            };
        }
        let meaning = match &index.meaning {
            MeaningState::On(m) => Some(m),
            _ => None,
        };
        if meaning.is_none() && word_vectors {
            index.gist = gist::Gist::build(catalog, |id| ids.get(id).copied());
        }
        index.learned = Learned::build(
            catalog,
            router,
            |id| ids.get(id).copied(),
            meaning,
            word_vectors,
            lex,
        );
        if let Some(m) = meaning {
            m.release_probes();
        }
        if index.learned.as_ref().is_some_and(Learned::leads) {
            index.named_by = named_by(&index.docs);
        }
        index
    }

    /// Encodes these clause texts together ahead of ranking (a no-op, and no allocation,
    /// without meaning).
    pub fn prefetch<'t>(&self, texts: impl IntoIterator<Item = &'t str>) {
        if let MeaningState::On(m) = &self.meaning {
            m.prefetch(&texts.into_iter().collect::<Vec<_>>());
        }
    }

    /// Whether routing reads what clauses mean (an encoder, or the static word vectors),
    /// and so what a request sets out before a clause.
    pub fn reads_meaning(&self) -> bool {
        self.meaning.is_on() || self.gist.is_some()
    }

    /// Meaning-level matching as built for this catalog.
    pub fn meaning(&self) -> &MeaningState {
        &self.meaning
    }

    /// The trained router, when there is one.
    pub fn learned(&self) -> Option<&Learned> {
        self.learned.as_ref()
    }

    /// Whether the trained router finds each of these entries somewhat likely for the text.
    pub fn supports_all(&self, text: &str, ids: &[&str]) -> bool {
        self.learned
            .as_ref()
            .is_some_and(|learned| learned.supports_all(text, ids))
    }

    /// Whether the trained router gives this entry next to no chance for the text.
    pub fn disowns(&self, text: &str, id: &str) -> bool {
        self.learned
            .as_ref()
            .is_some_and(|learned| learned.disowns(text, id))
    }

    /// Whether the trained router was taught requests that ask for one entry at a time.
    pub fn one_at_a_time(&self) -> bool {
        self.learned.as_ref().is_some_and(Learned::one_at_a_time)
    }

    /// The trained router's confident choice for a text, where it leads the score.
    pub fn confident(&self, text: &str) -> Option<(&str, f64)> {
        let (doc, p) = self.learned.as_ref()?.confident(text)?;
        Some((self.docs.get(doc as usize)?.id.as_str(), f64::from(p)))
    }

    /// The entry the verb's object names (see [`RouteIndex::object_names_entry`]), where
    /// the trained model leads.
    pub fn named_by_object(
        &self,
        tokens: &[Token],
        head_verb: Option<usize>,
        lex: &Lexicon,
    ) -> Option<&str> {
        let object = object_noun(tokens, head_verb?, lex)?;
        let doc = self.named_by.get(&tokens[object].key)?;
        Some(self.docs.get(*doc as usize)?.id.as_str())
    }

    /// The tool that finds a thing of this kind by name (`lookup_verbs` in the
    /// vocabulary), when the catalog has one.
    pub fn finder(&self, kind: &str) -> Option<&Finder> {
        self.finders.get(kind)
    }

    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// Ids of the entries whose arguments take a kind of value, in catalog order.
    pub fn takers(&self, kind: ExtractedKind) -> impl Iterator<Item = &str> {
        self.ids(self.takers.get(&kind))
    }

    /// Stems of the content words of an entry's name and description.
    pub fn own_words(&self, id: &str) -> &[String] {
        self.own_words.get(id).map_or(&[], Vec::as_slice)
    }

    /// The stems of the entry's name words (see [`crate::args::name_stems`]).
    pub fn name_stems(&self, id: &str) -> &[String] {
        self.name_stems.get(id).map_or(&[], Vec::as_slice)
    }

    /// What the entry `id` makes, as made by the step at `step`.
    pub fn made(&self, id: &str, step: usize) -> Option<crate::args::Made> {
        self.made.get(id).map(|m| m.at(step))
    }

    /// The key of the last word of each kind the entry makes (see `product_keys`).
    pub fn product_keys(&self, id: &str) -> &[String] {
        self.product_keys.get(id).map_or(&[], Vec::as_slice)
    }

    /// Whether the tool takes what it acts on by id (see [`crate::args::takes_by_id`]).
    pub fn takes_by_id(&self, tool: &str) -> bool {
        self.by_id.contains(tool)
    }

    /// What filling needs to know of a tool's arguments (see [`crate::args::ArgSpec`]).
    pub fn arg_specs(&self, tool: &str) -> Option<&[crate::args::ArgSpec]> {
        self.arg_specs.get(tool).map(Vec::as_slice)
    }

    /// Whether a word (by its key) names an artifact kind some entry makes or takes.
    pub fn names_artifact(&self, key: &str) -> bool {
        self.artifact_keys.contains(key)
    }

    /// Ids of the entries that produce an artifact kind, in catalog order.
    pub fn producers(&self, kind: &str) -> impl Iterator<Item = &str> {
        self.ids(self.producers.get(kind))
    }

    fn ids<'a>(&'a self, list: Option<&'a Vec<u32>>) -> impl Iterator<Item = &'a str> {
        list.into_iter()
            .flatten()
            .filter_map(|d| self.docs.get(*d as usize).map(|d| d.id.as_str()))
    }

    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }
}
