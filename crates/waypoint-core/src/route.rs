//! clause → ranked candidates (tools and pipelines) with calibrated scores.
//!
//! The index is built once per catalog from everything the catalog says about an entry
//! (name, keywords, description, examples, produced and accepted kinds), each field with
//! its own weight. A clause's score is the idf-weighted overlap of its words with an
//! entry, plus a bonus for whole multi-word keywords, scaled by how much of the clause
//! the entry explains. IDF is normalised by the catalog's size and the raw score is
//! squashed into [0, 1], so one threshold means the same on 30 tools and on 10,000.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use waypoint_catalog::Catalog;
use waypoint_protocol::{Candidate, CandidateKind};

use waypoint_protocol::ExtractedKind;

use crate::learned::{Learned, RouterModel};
use crate::lexicon::{Article, Lexicon, Phrase};
use crate::meaning::{Meaning, MeaningSettings, MeaningState};
use crate::text::Token;

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

#[derive(Debug, Clone)]
struct Doc {
    id: String,
    kind: CandidateKind,
    /// Keys of the artifact kinds it produces and accepts.
    produces: Vec<String>,
    accepts: Vec<String>,
    /// Intents its own words express ("Create one agent…" → create).
    intents: Vec<String>,
    /// Kinds of extracted values its arguments take.
    takes: Vec<ExtractedKind>,
    /// What calling it does, for a tool (`effects`, read by default); a pipeline or a
    /// specialist has none of its own.
    effects: Option<waypoint_catalog::Effects>,
    /// Keys of its name's content words (without a server prefix).
    name_keys: Vec<String>,
    /// A required argument takes free text (a note, a brief): any object can be its input.
    takes_text: bool,
    /// Its input schema declares no arguments: it acts on nothing a clause can name.
    takes_nothing: bool,
    /// The share of its score it keeps for what its description says of it: less when
    /// it calls itself deprecated ([`DEPRECATED`]), else 1.
    standing: f64,
    /// Keys of the nouns its description says are new or existing, with which
    /// ("Add new observations to *existing entities*": `entiti`, existing).
    aged: Vec<(String, Article)>,
}

impl Doc {
    /// Whether it acts on `key` things of `age` only (`Some(true)`) or of the other age
    /// only (`Some(false)`), as its description says; `None` where it says neither or
    /// both.
    fn age_of(&self, key: &str, age: Article) -> Option<bool> {
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

    fn destructive(&self) -> bool {
        self.effects == Some(waypoint_catalog::Effects::Destructive)
    }

    /// A tool that stores, sends and deletes nothing (`effects: read`, the default).
    fn reads_only(&self) -> bool {
        self.effects == Some(waypoint_catalog::Effects::Read)
    }

    /// "list the directory": of entries the words fit alike, the one whose name the
    /// clause says in full (`list_directory`, not `list_allowed_directories`) keeps
    /// most of its score.
    fn name_factor(&self, tokens: &[Token]) -> f64 {
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
    fn declares(&self, asked: Asked<'_>) -> bool {
        let makes = |kind: &str| self.produces.iter().any(|p| p == kind);
        match asked {
            Asked::Make(kind) => makes(kind),
            Asked::Change(kind) => makes(kind) && self.accepts.iter().any(|a| a == kind),
        }
    }

    /// Whether it makes what the clause asks for: it declares so, or, for a new thing, is
    /// named for one (`generate_qr_code` may call its product `qr_code_data`).
    fn answers(&self, asked: Asked<'_>) -> bool {
        self.declares(asked)
            || matches!(asked, Asked::Make(kind) if self.name_keys.iter().any(|k| k == kind))
    }

    /// [`REREAD_ELSEWHERE`] when it does what a question's verb says and not what the
    /// question asks for ("what do you *remember* …" to a tool that stores), else 1.
    fn reread_factor(&self, hints: &Hints<'_>) -> f64 {
        let does = |intent: &str| self.intents.iter().any(|i| i == intent);
        match (hints.intent, hints.reread) {
            (Some(asked), Some(reread)) if does(reread) && !does(asked) => REREAD_ELSEWHERE,
            _ => 1.0,
        }
    }

    /// Whether it takes at least one of the kinds of value a clause supplies (or the
    /// clause supplies none): "delete notes.txt" names a file, and a tool that takes no
    /// file cannot be what deletes it.
    fn can_take(&self, supplied: &[ExtractedKind]) -> bool {
        supplied.is_empty() || supplied.iter().any(|k| self.takes.contains(k))
    }
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
        index.learned = Learned::build(catalog, router, |id| ids.get(id).copied(), meaning, lex);
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

    fn lexical_only(catalog: &Catalog, lex: &Lexicon) -> Self {
        let mut index = Self::default();
        for tool in catalog.tools() {
            let specs = crate::args::arg_specs(tool, lex);
            let mut fields: Vec<(f64, String)> =
                vec![(W_NAME, tool.name.replace(['_', '.', '-'], " "))];
            let (compound_verbs, compound_phrases) = lex.compounds(&tool.name);
            if !compound_verbs.is_empty() {
                fields.push((W_NAME, compound_verbs.join(" ")));
            }
            let description = fields.len();
            fields.push((W_DESCRIPTION, tool.description.clone()));
            fields.extend(tool.keywords.iter().map(|k| (keyword_weight(k), k.clone())));
            fields.extend(kind_fields(W_PRODUCES, &tool.produces));
            fields.extend(kind_fields(W_ACCEPTS, &tool.accepts));
            fields.extend(tool.examples.iter().map(|k| (W_EXAMPLE, k.clone())));
            fields.extend(
                specs
                    .iter()
                    .flat_map(crate::args::ArgSpec::suggested)
                    .map(|v| (suggested_weight(v), v.text.clone())),
            );
            let phrases: Vec<&String> = tool.keywords.iter().chain(&compound_phrases).collect();
            let kind = CandidateKind::Tool;
            index.add(&tool.name, kind, &fields, description, &phrases, lex);
            index.add_finder(&tool.name, lex);
            index.add_examples(&tool.examples, lex);
            index.set_kinds(&tool.produces, &tool.accepts, lex);
            let own = format!(
                "{} . {} . {}",
                tool.name.replace(['_', '.', '-'], " "),
                tool.keywords.join(" . "),
                lead_verb(&tool.description)
            );
            let takes = tool
                .properties()
                .filter_map(|(name, _)| arg_kind(name, lex))
                .collect();
            index.set_profile(&own, takes, lex);
            let takes_text = crate::args::takes_free_text(tool, &specs);
            index.arg_specs.insert(tool.name.clone(), specs);
            if let Some(doc) = index.docs.last_mut() {
                doc.effects = Some(tool.effects);
                doc.takes_text = takes_text;
                doc.takes_nothing =
                    tool.input_schema.is_some() && tool.properties().next().is_none();
                doc.standing = standing(&tool.description, lex);
                doc.aged = aged_nouns(&tool.description, lex);
            }
        }
        for p in catalog.pipelines() {
            let short = crate::text::without_server(&p.id).replace(['_', '-'], " ");
            let mut fields: Vec<(f64, String)> =
                vec![(W_NAME, short), (W_DESCRIPTION, p.description.clone())];
            fields.extend(
                p.intent_keywords
                    .iter()
                    .map(|k| (keyword_weight(k), k.clone())),
            );
            fields.extend(p.produces.iter().map(|k| (W_PRODUCES, k.replace('_', " "))));
            fields.extend(p.examples.iter().map(|k| (W_EXAMPLE, k.clone())));
            let phrases: Vec<&String> = p.intent_keywords.iter().collect();
            index.add(&p.id, CandidateKind::Pipeline, &fields, 1, &phrases, lex);
            index.add_examples(&p.examples, lex);
            index.set_kinds(&p.produces, &p.accepts, lex);
            let own = format!(
                "{} . {}",
                p.intent_keywords.join(" . "),
                lead_verb(&p.description)
            );
            index.set_profile(&own, Vec::new(), lex);
        }
        // Plan documents are candidates beside pipelines: their intent reads
        // like a description, their keywords like a pipeline's intent keywords.
        for d in catalog.plans() {
            let mut fields: Vec<(f64, String)> = vec![
                (W_NAME, d.id.name.replace(['_', '-'], " ")),
                (W_DESCRIPTION, d.intent.clone()),
            ];
            fields.extend(d.keywords.iter().map(|k| (keyword_weight(k), k.clone())));
            fields.extend(d.produces.iter().map(|k| (W_PRODUCES, k.replace('_', " "))));
            let phrases: Vec<&String> = d.keywords.iter().collect();
            index.add(&d.uri, CandidateKind::Plan, &fields, 1, &phrases, lex);
            index.set_kinds(&d.produces, &[], lex);
            let own = format!("{} . {}", d.keywords.join(" . "), lead_verb(&d.intent));
            index.set_profile(&own, Vec::new(), lex);
        }
        let n = index.docs.len().max(1) as f64;
        let norm = (1.0 + n).ln();
        index.idf = index
            .postings
            .iter()
            .map(|(k, list)| {
                (
                    k.clone(),
                    ((1.0 + n / list.len() as f64).ln() / norm).min(1.0),
                )
            })
            .collect();
        index.aged_apart = aged_apart(&index.docs);
        index.finish_examples();
        index
    }

    /// Indexes an entry's examples (the entry added last).
    fn add_examples(&mut self, examples: &[String], lex: &Lexicon) {
        let doc = u32::try_from(self.docs.len().saturating_sub(1)).unwrap_or(u32::MAX);
        for text in examples {
            let id = u32::try_from(self.examples.len()).unwrap_or(u32::MAX);
            let mut keys: Vec<String> = lex
                .tokenize(text, &[])
                .into_iter()
                .filter(|t| lex.is_content(t))
                .map(|t| t.key)
                .collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                self.example_postings.entry(key).or_default().push(id);
            }
            self.examples.push(Example {
                doc,
                text: text.clone(),
                norm: 0.0,
            });
        }
    }

    /// Computes example idf and norms once every example is in.
    fn finish_examples(&mut self) {
        let n = self.examples.len() as f64;
        if n == 0.0 {
            return;
        }
        let mut sums = vec![0.0_f64; self.examples.len()];
        for (key, list) in &self.example_postings {
            let idf = (1.0 + n / list.len() as f64).ln();
            self.example_idf.insert(key.clone(), idf);
            for &e in list {
                sums[e as usize] += idf * idf;
            }
        }
        for (example, sum) in self.examples.iter_mut().zip(sums) {
            example.norm = sum.sqrt();
        }
    }

    /// The best example of each entry by cosine similarity with the clause's words.
    fn example_similarity(&self, words: &[Word<'_>]) -> Vec<(u32, f64, u32)> {
        if self.examples.is_empty() {
            return Vec::new();
        }
        let mut dot = vec![0.0_f64; self.examples.len()];
        let mut touched: Vec<u32> = Vec::new();
        let mut qnorm = 0.0;
        let mut seen: Vec<&str> = Vec::new();
        for word in words {
            let key = word.tok.key.as_str();
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            let Some(idf) = self.example_idf.get(key) else {
                continue;
            };
            let q = word.weight * idf;
            qnorm += q * q;
            for &e in self.example_postings.get(key).into_iter().flatten() {
                if dot[e as usize] == 0.0 {
                    touched.push(e);
                }
                dot[e as usize] += q * idf;
            }
        }
        let qnorm = qnorm.sqrt();
        let mut best: HashMap<u32, (f64, u32)> = HashMap::new();
        for e in touched {
            let ex = &self.examples[e as usize];
            let sim = dot[e as usize] / (qnorm * ex.norm).max(f64::EPSILON);
            let entry = best.entry(ex.doc).or_insert((0.0, e));
            if sim > entry.0 {
                *entry = (sim, e);
            }
        }
        best.into_iter()
            .map(|(doc, (sim, e))| (doc, sim.min(1.0), e))
            .collect()
    }

    /// Indexes one entry; `fields` are (weight, text) with the entry's name first and
    /// its description at `description`.
    fn add(
        &mut self,
        id: &str,
        kind: CandidateKind,
        fields: &[(f64, String)],
        description: usize,
        phrases: &[&String],
        lex: &Lexicon,
    ) {
        let doc = u32::try_from(self.docs.len()).unwrap_or(u32::MAX);
        // The name without a server prefix, as `name_keys` below, then the description.
        let mut own: Vec<String> = fields
            .iter()
            .take(2)
            .enumerate()
            .flat_map(|(i, (_, text))| {
                let text = if i == 0 {
                    crate::text::without_server(id)
                } else {
                    text
                };
                text.split(|c: char| !c.is_alphanumeric())
                    .filter(|w| w.len() > 1)
                    .map(|w| crate::text::stem(&w.to_lowercase()))
                    .collect::<Vec<_>>()
            })
            .filter(|w| !lex.stopwords.contains(w))
            .collect();
        own.sort_unstable();
        own.dedup();
        self.own_words.insert(id.to_string(), own);
        self.name_stems
            .insert(id.to_string(), crate::args::name_stems(id, lex));
        if let Some((_, name)) = fields.first() {
            let words = lex.tokenize(&name.replace(['_', '-', '.'], " "), &[]);
            self.name_words.extend(
                words
                    .into_iter()
                    .filter(|t| lex.is_content(t))
                    .map(|t| t.key),
            );
        }
        let short_name = fields
            .first()
            .map_or("", |(_, name)| crate::text::without_server(name));
        let name_keys = lex
            .tokenize(&short_name.replace(['_', '-'], " "), &[])
            .into_iter()
            .filter(|t| lex.is_content(t))
            .map(|t| t.key)
            .collect();
        self.docs.push(Doc {
            id: id.to_string(),
            kind,
            produces: Vec::new(),
            accepts: Vec::new(),
            intents: Vec::new(),
            takes: Vec::new(),
            effects: None,
            name_keys,
            takes_text: true,
            takes_nothing: false,
            standing: 1.0,
            aged: Vec::new(),
        });
        let mut best: HashMap<String, f64> = HashMap::new();
        let mut pairs: HashSet<(String, String)> = HashSet::new();
        // Pairs come from the name and the description: the words of argument kinds
        // ("optimize route") and keywords are no phrase an author wrote in that order.
        for (f, (w, text)) in fields.iter().enumerate() {
            let toks = lex.tokenize(text, &[]);
            for (j, tok) in toks.iter().enumerate() {
                if lex.is_content(tok) && !attributive_participle(&toks, j, lex) {
                    let e = best.entry(tok.key.clone()).or_insert(0.0);
                    *e = e.max(*w);
                }
            }
            if f == 0 || f == description {
                pairs.extend(word_pairs(&toks, lex));
            }
        }
        for (first, second) in pairs {
            let seconds = self.pairs.entry(first).or_default();
            seconds.entry(second).or_default().push(doc);
        }
        for (key, w) in best {
            self.postings.entry(key).or_default().push((doc, w));
        }
        for text in phrases {
            let toks = lex.tokenize(text, &[]);
            if toks.iter().filter(|t| lex.is_content(t)).count() >= 1
                && toks.len() >= 2
                && let Some(p) = crate::lexicon::Phrase::from_tokens(&toks, text)
            {
                self.phrases
                    .entry(toks[0].key.clone())
                    .or_default()
                    .push((doc, p));
            }
        }
    }

    fn set_kinds(&mut self, produces: &[String], accepts: &[String], lex: &Lexicon) {
        let keys = |list: &[String]| -> Vec<String> {
            list.iter()
                .filter_map(|k| {
                    lex.tokenize(&k.replace('_', " "), &[])
                        .into_iter()
                        .last()
                        .map(|t| t.key)
                })
                .collect()
        };
        let id = u32::try_from(self.docs.len().saturating_sub(1)).unwrap_or(u32::MAX);
        for kind in produces {
            self.producers.entry(kind.clone()).or_default().push(id);
        }
        if let Some(doc) = self.docs.last_mut() {
            let made = crate::args::Made::new(0, &doc.id, produces, lex);
            self.made.insert(doc.id.clone(), made);
            doc.produces = keys(produces);
            doc.accepts = keys(accepts);
            self.artifact_keys
                .extend(doc.produces.iter().chain(&doc.accepts).cloned());
        }
    }

    fn set_profile(&mut self, own_words: &str, takes: Vec<ExtractedKind>, lex: &Lexicon) {
        let toks = lex.tokenize(own_words, &[]);
        let intents = lex
            .intents
            .iter()
            .filter(|c| c.phrases.iter().any(|p| p.find_all(&toks).next().is_some()))
            .map(|c| c.name.clone())
            .collect();
        let id = u32::try_from(self.docs.len().saturating_sub(1)).unwrap_or(u32::MAX);
        for kind in &takes {
            self.takers.entry(*kind).or_default().push(id);
        }
        if let Some(doc) = self.docs.last_mut() {
            doc.intents = intents;
            doc.takes = takes;
        }
    }

    /// Keeps `name` as the finder of its kind when it is named for a lookup verb and
    /// the kind alone, and no tool before it is.
    fn add_finder(&mut self, name: &str, lex: &Lexicon) {
        if let [verb, kind] = crate::args::name_keys(name, lex).as_slice()
            && lex.lookup_verbs.contains(verb)
        {
            self.finders.entry(kind.clone()).or_insert_with(|| {
                let short = crate::text::without_server(name);
                Finder {
                    tool: name.to_string(),
                    word: crate::args::name_parts(short).pop().unwrap_or_default(),
                }
            });
        }
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

    /// Word and phrase overlap of the clause with every entry it touches.
    /// `own`: how many of `tokens` the clause says; the words after them are what it
    /// means without saying, which stand next to none of its words.
    fn lexical<'s>(&'s self, tokens: &[Token], words: &[Word<'_>], own: usize) -> Lexical<'s> {
        let n = self.docs.len();
        let mut raw = vec![0.0_f64; n];
        let mut explained = vec![0.0_f64; n];
        let mut touched: Vec<u32> = Vec::new();
        let mut reasons: Vec<(u32, f64, Reason<'_>)> = Vec::new();
        let mut total = 0.0;
        let mut seen: Vec<&str> = Vec::new();
        for (wi, word) in words.iter().enumerate() {
            let key = word.tok.key.as_str();
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            let idf = self.idf.get(key).copied().unwrap_or(1.0);
            total += word.weight * idf;
            let Some(list) = self.postings.get(key) else {
                continue;
            };
            if self.is_noise(list.len()) {
                continue;
            }
            for &(doc, w) in list {
                let i = doc as usize;
                if raw[i] == 0.0 {
                    touched.push(doc);
                }
                let gain = word.weight * w * idf;
                raw[i] += gain;
                explained[i] += word.weight * idf;
                reasons.push((doc, gain, Reason::Word(wi)));
            }
        }
        for (i, tok) in tokens.iter().enumerate() {
            for (doc, phrase) in self.phrases.get(&tok.key).into_iter().flatten() {
                if phrase.matches_at(tokens, i) {
                    let d = *doc as usize;
                    if raw[d] == 0.0 {
                        touched.push(*doc);
                    }
                    let gain = W_PHRASE * phrase.len() as f64;
                    raw[d] += gain;
                    reasons.push((*doc, gain, Reason::Phrase(phrase)));
                }
            }
        }
        let said = words.len().saturating_sub(tokens.len().saturating_sub(own));
        for pair in words[..said].windows(2) {
            let (a, b) = (&pair[0], &pair[1]);
            let (first, second) = (a.tok.key.as_str(), b.tok.key.as_str());
            let Some(list) = self.pairs.get(first).and_then(|s| s.get(second)) else {
                continue;
            };
            if self.is_noise(list.len()) {
                continue;
            }
            let idf = |k: &str| self.idf.get(k).copied().unwrap_or(1.0);
            let gain = W_PAIR * a.weight.min(b.weight) * idf(first).min(idf(second));
            for &doc in list {
                let d = doc as usize;
                if raw[d] == 0.0 {
                    touched.push(doc);
                }
                raw[d] += gain;
            }
        }
        let mut example = vec![0.0_f64; n];
        for (doc, sim, which) in self.example_similarity(words) {
            // Sharing a word or two with some example is common; only a close example
            // speaks for its entry.
            let gain = W_EXAMPLE_SIM * ((sim - EXAMPLE_FLOOR) / (1.0 - EXAMPLE_FLOOR)).max(0.0);
            if gain <= 0.0 {
                continue;
            }
            let d = doc as usize;
            if raw[d] == 0.0 && example[d] == 0.0 {
                touched.push(doc);
            }
            example[d] = gain;
            reasons.push((doc, gain, Reason::Example(which)));
        }
        Lexical {
            raw,
            example,
            explained,
            touched,
            reasons,
            total,
        }
    }

    /// "open photo.png": the family of a file the clause names is a word of the clause
    /// of its own, weak, so a tool for images ("Image and audio files are returned as
    /// …") leads one for text where both read files.
    fn file_type_words<'s>(
        &'s self,
        tokens: &[Token],
        hints: &Hints<'_>,
        lex: &Lexicon,
        raw: &mut [f64],
        touched: &mut Vec<u32>,
        reasons: &mut Vec<(u32, f64, Reason<'s>)>,
    ) {
        let mut seen: Vec<&str> = Vec::new();
        for family in &hints.file_types {
            if seen.contains(family) {
                continue;
            }
            seen.push(family);
            for tok in lex.tokenize(family, &[]) {
                // "the provided image 'example.jpg'" says it already.
                if tokens.iter().any(|t| t.key == tok.key) {
                    continue;
                }
                let Some((key, list)) = self.postings.get_key_value(tok.key.as_str()) else {
                    continue;
                };
                // As for the clause's own words: one in most of a large catalog is noise.
                if self.is_noise(list.len()) {
                    continue;
                }
                let idf = self.idf.get(key).copied().unwrap_or(1.0);
                for &(doc, w) in list {
                    if raw[doc as usize] == 0.0 {
                        touched.push(doc);
                    }
                    let gain = FILE_TYPE * w * idf;
                    raw[doc as usize] += gain;
                    reasons.push((doc, gain, Reason::FileType(family.to_string())));
                }
            }
        }
    }

    /// Whether some entry is named or described by the clause's verb ("*cancel* my
    /// booking"): the verb then says what to do to the object, and whether the object
    /// exists already ("my", "the") adds nothing.
    fn knows_verb(&self, tokens: &[Token], hints: &Hints<'_>) -> bool {
        hints
            .head_verb
            .is_some_and(|h| self.postings.contains_key(tokens[h].key.as_str()))
    }

    /// An entry that takes no arguments loses part of its score, second opinions
    /// included, when the clause names a file, a page or an address for it to act on.
    fn given_what_it_cannot_take(&self, hints: &Hints<'_>, scored: &mut [(f64, u32)]) {
        let names_a_thing = hints.supplied.iter().any(|k| {
            matches!(
                k,
                ExtractedKind::Paths | ExtractedKind::Urls | ExtractedKind::Emails
            )
        });
        if !names_a_thing {
            return;
        }
        for (score, doc) in scored.iter_mut() {
            if self
                .docs
                .get(*doc as usize)
                .is_some_and(|d| d.takes_nothing)
            {
                *score *= TAKES_NOTHING_GIVEN;
            }
        }
    }

    /// An entry named for directories and not for files loses part of its score,
    /// second opinions included, when the clause names a file by its extension and no
    /// folder: "how big is report.pdf" asks the file's metadata, not a folder's listing
    /// with sizes.
    fn given_a_file(
        &self,
        tokens: &[Token],
        hints: &Hints<'_>,
        lex: &Lexicon,
        scored: &mut [(f64, u32)],
    ) {
        if hints.file_types.is_empty() || lex.unsaid.names_a_folder(tokens) {
            return;
        }
        for (score, doc) in scored.iter_mut() {
            if let Some(d) = self.docs.get(*doc as usize)
                && lex.unsaid.named_for_a_folder_only(&d.name_keys)
            {
                *score *= NOT_FOR_THE_FILE;
            }
        }
    }

    /// Meaning and the trained router, each blended into the scores in turn.
    fn second_opinions(
        &self,
        text: &str,
        scored: &mut Vec<(f64, u32)>,
        reasons: &mut Vec<(u32, f64, Reason<'_>)>,
    ) {
        if text.trim().is_empty() {
            return;
        }
        if let MeaningState::On(m) = &self.meaning {
            let share = Share {
                weight: m.weight(),
                lead: m.lead_weight(),
            };
            blend(share, m.scores(text), scored, reasons, Reason::Meaning);
        }
        if let Some(learned) = &self.learned {
            let opinion = learned.candidates(text);
            let share = Share::even(learned.weight);
            blend(share, opinion, scored, reasons, Reason::Learned);
            // Blended before the router, meaning would be a few percent of a score the
            // router leads; the requests closest in meaning get a share of their own.
            // Only where requests ask for one entry each: a request asking for two is
            // no neighbour of a clause asking for one of them.
            if let MeaningState::On(m) = &self.meaning
                && learned.one_at_a_time()
            {
                let near = m.neighbours(text);
                blend(
                    Share::even(m.neighbours_weight()),
                    near,
                    scored,
                    reasons,
                    Reason::Meaning,
                );
            }
        }
    }

    /// "what *day* of the week do flights … fly on": where the trained model leads the
    /// score, an entry no labelled request taught is known to it only by its own few
    /// words, so the model reads a question for it as one for the taught entry it
    /// resembles (flights). When the noun the question asks for is in the name of exactly
    /// one untaught entry, that entry answers it: it takes the best score and the taught
    /// entries keep part of theirs.
    fn asked_of_untaught(
        &self,
        tokens: &[Token],
        lex: &Lexicon,
        scored: &mut Vec<(f64, u32)>,
        reasons: &mut Vec<(u32, f64, Reason<'_>)>,
    ) {
        let Some(learned) = self.learned.as_ref().filter(|l| !l.untaught.is_empty()) else {
            return;
        };
        let Some(asked) = lex.asked_for(tokens) else {
            return;
        };
        let key = &tokens[asked].key;
        let mut named = learned.untaught.iter().filter(|&&d| {
            self.docs
                .get(d as usize)
                .is_some_and(|doc| doc.name_keys.contains(key))
        });
        let (Some(&doc), None) = (named.next(), named.next()) else {
            return;
        };
        let best = scored.iter().map(|s| s.0).fold(0.0, f64::max);
        for s in scored.iter_mut() {
            s.0 *= ASKED_ELSEWHERE;
        }
        answers(doc, best, &tokens[asked].form, scored, reasons);
    }

    /// "describe pittsburgh airport": where the trained model leads the score but places
    /// the clause nowhere (no entry reaches [`NAMED_BY_OBJECT`]), the labelled requests
    /// never phrased it this way; when the verb's object is the word one entry is named
    /// by, that entry is what the clause acts on.
    fn object_names_entry<'s>(
        &'s self,
        object: Option<&Token>,
        scored: &mut Vec<(f64, u32)>,
        reasons: &mut Vec<(u32, f64, Reason<'s>)>,
    ) {
        let Some((object, &doc)) = object.and_then(|o| Some((o, self.named_by.get(&o.key)?)))
        else {
            return;
        };
        if scored.iter().any(|s| s.0 >= NAMED_BY_OBJECT) {
            return;
        }
        answers(doc, NAMED_BY_OBJECT, &object.form, scored, reasons);
    }

    /// Whether the verb's object is a word no entry knows ("open a PR"): the verb may fit
    /// an entry, but what it acts on is nothing the catalog handles, so for an entry that
    /// does not take free text the verb's match counts for less and earns no bonus.
    /// `kind` is the object's kind, as [`Self::kind_of`] found it.
    fn object_unknown(&self, object: Option<&Token>, kind: Option<&str>, lex: &Lexicon) -> bool {
        object
            // A number is a value to take, not a thing to act on ("add 2 and 3").
            .is_some_and(|t| {
                !lex.is_light_verb(t)
                    && !t.form.chars().any(|c| c.is_ascii_digit())
                    && !self.postings.contains_key(&t.key)
                    && kind.is_none()
            })
    }

    /// The catalog's word for the kind of thing an object is, when the catalog has no word
    /// for the object itself: "the readme" is a file (the lexicon's `entities`) to a
    /// catalog that reads files, though no entry says "readme".
    fn kind_of<'l>(&self, object: &Token, lex: &'l Lexicon) -> Option<&'l str> {
        if self.postings.contains_key(&object.key) {
            return None;
        }
        lex.entities.iter().find_map(|entity| {
            let words = || entity.phrases.iter().filter_map(|p| p.single_key());
            if !words().any(|k| k == object.key) {
                return None;
            }
            words().find(|k| self.postings.contains_key(*k))
        })
    }

    /// The word score `r` of entry `d` read with what the clause asks to be made
    /// (`target`, the words after "into", "as a"…): more for an entry that makes it,
    /// less for one that only takes it. Where no entry declares what it makes, the nouns
    /// of an entry's name say it ("… as a relation" to `create_relations`).
    fn with_target<'s>(
        &'s self,
        r: f64,
        d: &'s Doc,
        doc: u32,
        target: &[&Token],
        reasons: &mut Vec<(u32, f64, Reason<'s>)>,
    ) -> f64 {
        if target.is_empty() {
            return r;
        }
        let asked = |k: &str| target.iter().any(|t| t.key == k);
        let gain = |k: &str| W_TARGET * self.idf.get(k).copied().unwrap_or(1.0);
        if let Some(k) = d.produces.iter().find(|k| asked(k)) {
            let g = gain(k);
            reasons.push((doc, g, Reason::Produces(k)));
            return r + g;
        }
        let named = (self.producers.is_empty())
            .then(|| target.iter().find(|t| d.name_keys.contains(&t.key)))
            .flatten();
        if let Some(t) = named {
            let g = gain(&t.key);
            reasons.push((doc, g, Reason::Makes(t.form.clone())));
            return r + g;
        }
        if d.accepts.iter().any(|k| asked(k)) {
            return r * CONSUMES_TARGET;
        }
        r
    }

    /// What entry `d`'s description says of the age of the clause's object (`key`,
    /// asked `age`, a noun the catalog tells apart by age) does to its score: the entry
    /// for new ones makes one, as asked ("add *an* entity"), and gains the new article's
    /// bonus where the article earned none; the entry for the other age does not serve
    /// the clause, and its score is scaled by the factor returned ([`OTHER_AGE`]). Many
    /// entries act on existing things without saying so, so "the alarm" speaks for none
    /// of them.
    #[allow(clippy::too_many_arguments, reason = "the scoring loop's state, lent")]
    fn age_fit(
        d: &Doc,
        doc: u32,
        key: &str,
        age: Article,
        article_fit: bool,
        bonus: &mut f64,
        reasons: &mut Vec<(u32, f64, Reason<'_>)>,
    ) -> f64 {
        match d.age_of(key, age) {
            Some(true) if age == Article::New && !article_fit => {
                *bonus += W_ARTICLE;
                reasons.push((doc, W_ARTICLE, Reason::Article(Article::New)));
                1.0
            }
            Some(false) => OTHER_AGE,
            _ => 1.0,
        }
    }

    /// Whether a word that `entries` entries have is noise: it is in more than half of a
    /// catalog of at least [`COMMON_MIN_DOCS`].
    fn is_noise(&self, entries: usize) -> bool {
        let n = self.docs.len();
        n >= COMMON_MIN_DOCS && entries * 2 > n
    }

    /// Whether the entry's own fields use the word (postings are in entry order).
    fn has_word(&self, doc: u32, key: &str) -> bool {
        self.postings
            .get(key)
            .is_some_and(|list| list.binary_search_by_key(&doc, |(d, _)| *d).is_ok())
    }

    /// Ranks the entries that share a word with the clause, best first; at most
    /// [`MAX_CANDIDATES`] are returned.
    ///
    /// Work per clause is proportional to the postings of its words, not to the catalog:
    /// words in more than half of a large catalog's entries carry no signal and are
    /// skipped, and reasons are rendered only for the candidates returned.
    pub fn rank(&self, tokens: &[Token], hints: &Hints<'_>, lex: &Lexicon) -> Vec<Candidate> {
        let object = hints.head_verb.and_then(|h| object_noun(tokens, h, lex));
        // What a question means without saying it ("how big": size) follows the
        // clause's own words.
        let all = with_unsaid(tokens, hints, lex);
        let own = tokens.len();
        let tokens = &*all;
        let words = self.clause_words(tokens, own, hints, object, lex);
        let Lexical {
            mut raw,
            explained,
            example,
            mut touched,
            mut reasons,
            total,
        } = self.lexical(tokens, &words, own);
        self.file_type_words(tokens, hints, lex, &mut raw, &mut touched, &mut reasons);
        let target = target_words(tokens, lex);
        let needed: Vec<u32> = hints
            .needs
            .iter()
            .filter_map(|n| self.producers.get(*n))
            .flatten()
            .copied()
            .collect();
        let object_kind = object.and_then(|o| self.kind_of(&tokens[o], lex));
        let object_unknown = self.object_unknown(object.map(|o| &tokens[o]), object_kind, lex);
        // The object the catalog has a word for: an entry without that word is not what
        // the article ("a video") asks to find or make, and after a light verb ("generate
        // a response") not what the verb asks for either.
        let object_key = object
            .map(|o| tokens[o].key.as_str())
            .filter(|k| self.postings.contains_key(*k));
        let light_verb = hints
            .head_verb
            .is_some_and(|h| lex.is_light_verb(&tokens[h]));
        let verb_decides = !light_verb && self.knows_verb(tokens, hints);
        // "create a logo", "schedule a haircut": a new thing for the verb to act on, which
        // an entry making a kind of its own does not take unless it is that kind. A
        // lookup ("find a play") asks for something that exists, whatever it is.
        let asks_to_make = matches!(hints.article, Some(Article::New))
            && (hints.intent == Some(lex.articles.new_intent.as_str())
                || hints
                    .head_verb
                    .is_some_and(|h| !lex.lookup_verbs.contains(&tokens[h].key)));
        let change = ChangeAsked::of(tokens, hints, lex);
        let asked = self.asked_kind(tokens, hints, &touched, lex);
        let asked_age =
            (object_key.zip(hints.article)).filter(|(k, _)| self.aged_apart.contains(*k));
        let mut scored: Vec<(f64, u32)> = Vec::with_capacity(touched.len());
        for &doc in &touched {
            let Some(d) = self.docs.get(doc as usize) else {
                continue;
            };
            let r = self.with_target(raw[doc as usize], d, doc, &target, &mut reasons);
            let coverage = if total > 0.0 {
                (explained[doc as usize] / total).min(1.0)
            } else {
                1.0
            };
            // Bonuses from understanding are not scaled by word coverage: they stand for
            // the words (the head verb, the article) that led to the understanding. They can
            // tip a choice between entries the words support, not lift one they barely touch.
            let lacks_object = object_key.is_some_and(|k| !self.has_word(doc, k));
            // A head verb that destroys ("delete the build directory") leaves no other
            // intent, nor the evidence that intent needs, to a tool that destroys nothing:
            // "build" is its object.
            let destroys_not = hints.destructive && !d.destructive();
            let fit = HintFit {
                intent: !(destroys_not || lacks_object && light_verb),
                article: !lacks_object && !verb_decides,
                kind: object_kind.filter(|k| self.has_word(doc, k)),
            };
            let mut bonus = hint_bonus(d, doc, hints, lex, &mut reasons, fit);
            // Only an entry that takes free text can take an object it has no word for,
            // and asked to make a new one ("create a logo", not "find a play"), only if
            // it does not make a kind of its own (an agent).
            let makes_other = asks_to_make && !d.produces.is_empty();
            let foreign_object = object_unknown && (!d.takes_text || makes_other);
            if foreign_object {
                bonus = 0.0;
            }
            if needed.contains(&doc) && !destroys_not {
                bonus += W_EVIDENCE;
                reasons.push((doc, W_EVIDENCE, Reason::Evidence));
            }
            let mut words_part = r * (0.5 + 0.5 * coverage) + example[doc as usize];
            words_part *= d.name_factor(tokens);
            if foreign_object {
                words_part *= OBJECT_UNKNOWN;
            }
            if object_unknown
                && makes_other
                && !(d.produces.iter()).any(|k| tokens.iter().any(|t| t.key == *k))
            {
                words_part *= NEW_THING_UNKNOWN;
            }
            let age_factor = asked_age.map_or(1.0, |(key, age)| {
                Self::age_fit(d, doc, key, age, fit.article, &mut bonus, &mut reasons)
            });
            let support = (words_part / MIN_SUPPORT).min(1.0);
            let mut adjusted = (words_part + support * bonus) * age_factor;
            adjusted *= self.harm_factor(d, hints, &change) * d.reread_factor(hints);
            adjusted *= d.standing;
            scored.push((1.0 - (-adjusted / SCALE).exp(), doc));
        }
        self.second_opinions(hints.text, &mut scored, &mut reasons);
        self.given_what_it_cannot_take(hints, &mut scored);
        self.makes_what_is_asked(asked, &mut scored);
        self.reads_where_change_is_asked(tokens, hints, lex, &mut scored);
        self.given_a_file(tokens, hints, lex, &mut scored);
        self.asked_of_untaught(tokens, lex, &mut scored, &mut reasons);
        self.object_names_entry(object.map(|o| &tokens[o]), &mut scored, &mut reasons);
        self.break_tie_by_context(&hints.context, &mut scored, &mut reasons);
        self.keep_best(&mut scored);
        self.candidates(scored, reasons, &words)
    }

    /// What the clause asks to be made of its object's kind: a new one ("*create an
    /// agent* that …": a making verb, an indefinite article) or a changed one ("*move the*
    /// workflow": a changing verb, a definite article), where one of the entries in reach
    /// declares it makes that (`Doc::declares`): a catalog that declares no products is
    /// not judged by them. The entries that make something else (`Doc::answers`) do not
    /// answer the clause.
    fn asked_kind<'t>(
        &self,
        tokens: &'t [Token],
        hints: &Hints<'_>,
        touched: &[u32],
        lex: &Lexicon,
    ) -> Option<Asked<'t>> {
        let asks = |intent: &str| hints.intent == Some(intent);
        let make: fn(&'t str) -> Asked<'t> = match hints.article? {
            Article::Existing if asks(&lex.articles.existing_intent) => Asked::Change,
            Article::New if asks(&lex.articles.new_intent) => Asked::Make,
            _ => return None,
        };
        // The article opens the verb's own object, not a phrase after a preposition
        // ("know the classification *of an* image" asks for no image).
        let phrase = tokens.get(hints.head_verb? + 1..)?;
        let mut opening = phrase
            .iter()
            .take_while(|t| lex.articles.of(&t.form).is_none());
        if opening.any(|t| lex.words.prepositions.contains(&t.form)) {
            return None;
        }
        // The noun phrase's last word names its kind ("the weekly report *workflow*"),
        // even where a word before it could be a verb.
        let kind = (phrase.iter())
            .skip_while(|t| !t.value && !lex.is_content(t))
            .take_while(|t| lex.is_content(t) && !t.identifier && !t.proper)
            .last()?;
        let asked = make(kind.key.as_str());
        let answered = (touched
            .iter()
            .filter_map(|&doc| self.docs.get(doc as usize)))
        .any(|d| d.declares(asked));
        answered.then_some(asked)
    }

    /// [`MAKES_ANOTHER`] for the entries that make something other than what the clause
    /// asks for ([`RouteIndex::asked_kind`]).
    fn makes_what_is_asked(&self, asked: Option<Asked<'_>>, scored: &mut [(f64, u32)]) {
        let Some(asked) = asked else {
            return;
        };
        for (score, doc) in scored.iter_mut() {
            if self
                .docs
                .get(*doc as usize)
                .is_some_and(|d| !d.answers(asked))
            {
                *score *= MAKES_ANOTHER;
            }
        }
    }

    /// A clause whose verb asks for a change ("*remember* my wifi password", "*update*
    /// the README") is no request for a tool that only reads, however well its other
    /// words fit it (a vault that fetches passwords): where an entry in reach changes
    /// things and its own words express the verb's intent, the entries that only read keep
    /// [`READS_FOR_A_CHANGE`] of their scores, second opinions included. A catalog that
    /// says nothing of effects (every tool reads, by default) is not judged by them.
    fn reads_where_change_is_asked(
        &self,
        tokens: &[Token],
        hints: &Hints<'_>,
        lex: &Lexicon,
        scored: &mut [(f64, u32)],
    ) {
        let (Some(h), Some(intent)) = (hints.head_verb, hints.intent) else {
            return;
        };
        // Making a new thing is not it: tools that generate (an image, a summary) make
        // something and declare that they only read.
        let asks = lex.changing_intents.iter().any(|c| c == intent)
            && intent != lex.articles.new_intent
            && lex.intent_phrase_at(intent, tokens, h)
            && !lex.asks_about(tokens);
        if !asks {
            return;
        }
        let doc = |d: u32| self.docs.get(d as usize);
        let changer_in_reach = scored.iter().any(|&(_, d)| {
            doc(d).is_some_and(|e| !e.reads_only() && e.intents.iter().any(|i| i == intent))
        });
        if !changer_in_reach {
            return;
        }
        for (score, d) in scored.iter_mut() {
            if doc(*d).is_some_and(Doc::reads_only) {
                *score *= READS_FOR_A_CHANGE;
            }
        }
    }

    /// The clause's words weighed by role; words it means without saying them (after
    /// `own`) weigh as its verb or object would.
    fn clause_words<'a>(
        &self,
        tokens: &'a [Token],
        own: usize,
        hints: &Hints<'_>,
        object: Option<usize>,
        lex: &Lexicon,
    ) -> Vec<Word<'a>> {
        let mut words = weigh(
            &tokens[..own],
            hints.head_verb,
            object,
            &hints.earlier_products,
            &self.name_words,
            lex,
        );
        let unsaid = tokens[own..].iter();
        words.extend(unsaid.map(|tok| Word {
            tok,
            weight: HEAD_VERB,
        }));
        words
    }

    /// The [`MAX_CANDIDATES`] best, best first; equal scores in name order.
    fn keep_best(&self, scored: &mut Vec<(f64, u32)>) {
        let by_rank = |a: &(f64, u32), b: &(f64, u32)| {
            b.0.total_cmp(&a.0)
                .then_with(|| self.docs[a.1 as usize].id.cmp(&self.docs[b.1 as usize].id))
        };
        if scored.len() > MAX_CANDIDATES {
            scored.select_nth_unstable_by(MAX_CANDIDATES, by_rank);
            scored.truncate(MAX_CANDIDATES);
        }
        scored.sort_by(by_rank);
    }

    /// Where the clause's words leave several entries tied at the top ("*change* the
    /// release date" fits every tool that changes something), the ones the earlier
    /// clauses name most often lead by [`CONTEXT_NUDGE`]; a tie the request does not
    /// decide stays a tie. Where a trained model leads the score, entries it rates alike
    /// are no tie of words: near-certain probabilities meet at the top, and the model
    /// has read the clause already.
    fn break_tie_by_context(
        &self,
        context: &[&Token],
        scored: &mut [(f64, u32)],
        reasons: &mut Vec<(u32, f64, Reason<'_>)>,
    ) {
        if self.learned.as_ref().is_some_and(Learned::leads) {
            return;
        }
        let Some(top) = scored.iter().map(|s| s.0).max_by(f64::total_cmp) else {
            return;
        };
        let named: Vec<(usize, Vec<&Token>)> = (scored.iter().enumerate())
            .filter(|(_, s)| s.0 >= top - TIE)
            .map(|(i, &(_, doc))| {
                let words = (context.iter().copied())
                    .filter(|t| {
                        self.has_word(doc, &t.key)
                            && !self
                                .postings
                                .get(t.key.as_str())
                                .is_some_and(|l| self.is_noise(l.len()))
                    })
                    .collect();
                (i, words)
            })
            .collect();
        let most = named.iter().map(|(_, w)| w.len()).max().unwrap_or(0);
        if named.len() < 2 || most == 0 || named.iter().all(|(_, w)| w.len() == most) {
            return;
        }
        for (i, words) in named.into_iter().filter(|(_, w)| w.len() == most) {
            let doc = scored[i].1;
            scored[i].0 += CONTEXT_NUDGE;
            let said: Vec<String> = words.iter().map(|t| t.form.to_lowercase()).collect();
            reasons.push((doc, CONTEXT_NUDGE, Reason::Context(said.join(", "))));
        }
    }

    /// What is left of a destructive entry's score where it would destroy something the
    /// clause does not name (its arguments take none of the values given), and again
    /// where the clause asks for no change ([`ChangeAsked`]).
    fn harm_factor(&self, d: &Doc, hints: &Hints<'_>, change: &ChangeAsked<'_>) -> f64 {
        if !d.destructive() {
            return 1.0;
        }
        let mut factor = 1.0;
        if !d.can_take(&hints.supplied) {
            factor *= DESTROYS_SOMETHING_ELSE;
        }
        if !change.of_entry(self.name_stems(&d.id)) {
            factor *= DESTROYS_SOMETHING_ELSE;
        }
        factor
    }

    /// The ranked entries as candidates, each with its reasons rendered, strongest first.
    fn candidates(
        &self,
        scored: Vec<(f64, u32)>,
        mut reasons: Vec<(u32, f64, Reason<'_>)>,
        words: &[Word<'_>],
    ) -> Vec<Candidate> {
        reasons.sort_by_key(|(doc, ..)| *doc);
        scored
            .into_iter()
            .filter_map(|(score, doc)| {
                let score = crate::understand::round2(score);
                let d = self.docs.get(doc as usize)?;
                let from = reasons.partition_point(|(r, ..)| *r < doc);
                let to = reasons.partition_point(|(r, ..)| *r <= doc);
                let mut mine: Vec<(f64, String)> = reasons[from..to]
                    .iter()
                    .map(|(_, gain, reason)| (*gain, reason.render(words, &self.examples)))
                    .collect();
                mine.sort_by(|a, b| b.0.total_cmp(&a.0));
                let mut why: Vec<String> = Vec::new();
                for (_, w) in mine {
                    if !why.contains(&w) {
                        why.push(w);
                    }
                }
                Some(Candidate {
                    id: d.id.clone(),
                    kind: d.kind,
                    score,
                    why,
                })
            })
            .collect()
    }
}

/// Per-entry sums of a clause's word overlap, indexed by entry.
struct Lexical<'s> {
    raw: Vec<f64>,
    /// Calibrated similarity of each entry's closest example.
    example: Vec<f64>,
    /// idf-weighted clause words each entry explains.
    explained: Vec<f64>,
    touched: Vec<u32>,
    reasons: Vec<(u32, f64, Reason<'s>)>,
    /// idf-weighted weight of all clause words.
    total: f64,
}

/// Why an entry scored, rendered only for the candidates returned.
enum Reason<'a> {
    Word(usize),
    Phrase(&'a Phrase),
    Produces(&'a str),
    Intent(&'a str),
    Article(Article),
    Takes(ExtractedKind),
    Destroys,
    /// The kind of thing the clause's object is, which the entry's words name.
    Kind(&'a str),
    Evidence,
    Example(u32),
    Learned(f64),
    Meaning(f64),
    /// The token the clause asks for, which only this (untaught) entry is named after.
    AskedFor(String),
    /// Words of the request's earlier clauses that decided a tie.
    Context(String),
    /// The family of a file the clause names.
    FileType(String),
    /// What the clause asks to be made ("as a relation"), which the entry's name says
    /// it makes.
    Makes(String),
}

impl Reason<'_> {
    fn render(&self, words: &[Word<'_>], examples: &[Example]) -> String {
        match self {
            Reason::Example(e) => examples
                .get(*e as usize)
                .map(|x| format!("like “{}”", x.text))
                .unwrap_or_default(),
            Reason::Word(i) => words
                .get(*i)
                .map(|w| w.tok.form.clone())
                .unwrap_or_default(),
            Reason::Phrase(p) => format!("“{}”", p.text),
            Reason::Produces(k) => format!("produces {k}"),
            Reason::Makes(w) => format!("makes a {w}"),
            Reason::Intent(i) => format!("does `{i}`"),
            Reason::Article(Article::Existing) => "changes an existing one".into(),
            Reason::Article(Article::New) => "makes a new one".into(),
            Reason::Takes(k) => format!("takes the {} given", k.as_str()),
            Reason::Destroys => "deletes, as asked".into(),
            Reason::Kind(k) => format!("acts on a {k}"),
            Reason::Evidence => "gives the evidence the goal needs".into(),
            Reason::Learned(p) => format!("learned from requests {p:.2}"),
            Reason::AskedFor(w) => format!("asks for the {w} it is named after"),
            Reason::FileType(w) => format!("a {w} file"),
            Reason::Context(w) => format!("the request is about {w}"),
            Reason::Meaning(p) => format!("close in meaning {p:.2}"),
        }
    }
}

/// How much a second opinion counts in a blended score.
#[derive(Debug, Clone, Copy)]
struct Share {
    /// Where the opinion thinks no more of an entry than the score so far.
    weight: f64,
    /// Where it thinks more: the stronger of two opinions may lead.
    lead: f64,
}

impl Share {
    /// The same share either way.
    fn even(weight: f64) -> Self {
        Self {
            weight,
            lead: weight,
        }
    }

    fn of(self, opinion: f64, score: f64) -> f64 {
        if opinion > score {
            self.lead
        } else {
            self.weight
        }
    }
}

/// Blends a second opinion (meaning, or the trained router's probability) into each
/// score, `w` parts opinion to `1 − w` parts the score so far, `w` from the [`Share`];
/// entries only the opinion finds join the candidates. Its part is named as a reason
/// when it is large enough to matter.
fn blend(
    share: Share,
    opinion: Vec<(u32, f32)>,
    scored: &mut Vec<(f64, u32)>,
    reasons: &mut Vec<(u32, f64, Reason<'_>)>,
    reason: fn(f64) -> Reason<'static>,
) {
    if share.weight <= 0.0 && share.lead <= 0.0 {
        return;
    }
    let mut opinion: HashMap<u32, f32> = opinion.into_iter().collect();
    let mut note = |doc: u32, part: f64| {
        if part >= MODEL_REASON {
            reasons.push((doc, part * SCALE, reason(part)));
        }
    };
    for (score, doc) in scored.iter_mut() {
        let said = f64::from(opinion.remove(doc).unwrap_or(0.0));
        let weight = share.of(said, *score);
        let part = weight * said;
        *score = part + (1.0 - weight) * *score;
        note(*doc, part);
    }
    let mut rest: Vec<(u32, f32)> = opinion.into_iter().collect();
    rest.sort_by_key(|(d, _)| *d);
    for (doc, p) in rest {
        let part = share.of(f64::from(p), 0.0) * f64::from(p);
        if part >= MODEL_REASON {
            scored.push((part, doc));
            note(doc, part);
        }
    }
}

fn keyword_weight(keyword: &str) -> f64 {
    if keyword.split_whitespace().count() > 1 {
        W_KEYWORD_PART
    } else {
        W_KEYWORD
    }
}

/// The first word of a description, which in a good one is the verb of what the entry
/// does ("Publish a draft…"); later words name inputs, not the action.
fn lead_verb(description: &str) -> &str {
    description.split_whitespace().next().unwrap_or_default()
}

/// The extracted kind an argument name takes (`url` → URLs), text excluded.
fn arg_kind(name: &str, lex: &Lexicon) -> Option<ExtractedKind> {
    let lower = name.to_ascii_lowercase();
    // An argument named for a file type ("audio", "image_2") takes paths.
    if lower
        .split(['_', '-'])
        .any(|w| lex.file_types.iter().any(|t| t.args.iter().any(|a| a == w)))
    {
        return Some(ExtractedKind::Paths);
    }
    lex.arg_names
        .iter()
        .find(|(_, names)| names.contains(&lower))
        .and_then(|(kind, _)| ExtractedKind::parse(kind))
}

/// What a clause asks to be made of a kind of thing ([`RouteIndex::asked_kind`]).
#[derive(Clone, Copy)]
enum Asked<'k> {
    /// A new one.
    Make(&'k str),
    /// A changed one.
    Change(&'k str),
}

/// Whether a clause asks for the change a destructive entry makes, worked out once per
/// clause. It does where a verb of it destroys, wherever it stands ("ignore the above and
/// *delete* notes.txt" is headed by "ignore"; "when the build ends, *delete* the logs").
/// Short of that, a question ("what files are in /tmp", "which files changed") asks to be
/// told; otherwise the clause asks when its intent changes something (`changing_intents`)
/// or its head verb is too vague to say ("handle the notes") — or, entry by entry, when
/// its head verb is a word of the entry's name ("edit main.rs"). A word the description
/// uses in passing ("a diff *showing* the changes") is no such request. A clause without
/// a verb is not judged.
enum ChangeAsked<'t> {
    Yes,
    No,
    /// Only of an entry whose name has this verb.
    IfNamedBy(&'t Token),
}

impl<'t> ChangeAsked<'t> {
    fn of(tokens: &'t [Token], hints: &Hints<'_>, lex: &Lexicon) -> Self {
        if hints.destructive || tokens.iter().any(|t| lex.destroys(t)) {
            return Self::Yes;
        }
        // "what files …" could read "files" as a verb.
        if lex.asks_about(tokens) {
            return Self::No;
        }
        let changing = hints
            .intent
            .is_some_and(|i| lex.changing_intents.iter().any(|c| c == i));
        match hints.head_verb.and_then(|h| tokens.get(h)) {
            _ if changing => Self::Yes,
            None => Self::Yes,
            Some(verb) if lex.vague_verbs.contains(&verb.key) => Self::Yes,
            Some(verb) => Self::IfNamedBy(verb),
        }
    }

    fn of_entry(&self, name_stems: &[String]) -> bool {
        match self {
            Self::Yes => true,
            Self::No => false,
            Self::IfNamedBy(verb) => names(verb, name_stems),
        }
    }
}

/// Whether `verb` is a word of the entry's name, given the name's stems
/// ([`RouteIndex::name_stems`]): "edit main.rs" asks for `edit_file` by name.
pub(crate) fn names(verb: &Token, name_stems: &[String]) -> bool {
    name_stems.iter().any(|w| *w == verb.stem || *w == verb.key)
}

/// Which of the understanding's bonuses an entry may take.
#[derive(Clone, Copy)]
struct HintFit<'l> {
    /// The head verb's intent.
    intent: bool,
    /// The object's article ("a" makes or finds one, "the" changes one).
    article: bool,
    /// The kind of thing the object is, when the entry's words name it and no entry
    /// names the object itself (`RouteIndex::kind_of`).
    kind: Option<&'l str>,
}

/// The bonus from what is known beyond the words: the goal's intent, whether the
/// object exists already, what kind of thing it is, and which supplied values the
/// entry's arguments take.
fn hint_bonus<'s>(
    d: &'s Doc,
    doc: u32,
    hints: &Hints<'s>,
    lex: &'s Lexicon,
    reasons: &mut Vec<(u32, f64, Reason<'s>)>,
    fit: HintFit<'s>,
) -> f64 {
    let mut bonus = 0.0;
    if let Some(kind) = fit.kind {
        bonus += W_OBJECT_KIND;
        reasons.push((doc, W_OBJECT_KIND, Reason::Kind(kind)));
    }
    if let Some(intent) = hints.intent
        && fit.intent
        && d.intents.iter().any(|i| i == intent)
    {
        bonus += W_INTENT;
        reasons.push((doc, W_INTENT, Reason::Intent(intent)));
    }
    let article_intent = match hints.article {
        Some(Article::Existing) => Some(lex.articles.existing_intent.as_str()),
        Some(Article::New) => Some(lex.articles.new_intent.as_str()),
        None => None,
    };
    if let (Some(intent), Some(article)) = (article_intent, hints.article)
        && fit.article
        && d.intents.iter().any(|i| i == intent)
    {
        bonus += W_ARTICLE;
        reasons.push((doc, W_ARTICLE, Reason::Article(article)));
    }
    if hints.destructive && d.destructive() && d.can_take(&hints.supplied) {
        bonus += W_INTENT;
        reasons.push((doc, W_INTENT, Reason::Destroys));
    }
    for kind in &hints.supplied {
        if d.takes.contains(kind) {
            bonus += W_ARG_FIT;
            reasons.push((doc, W_ARG_FIT, Reason::Takes(*kind)));
        }
    }
    bonus
}

/// The head noun of the noun phrase after the verb at `h`: the last of the content words
/// that follow it (skipping a particle, articles and pronouns), stopping at the first other word,
/// a verb, or a cue that a value follows ("a folder *named* logs" acts on a folder).
pub(crate) fn object_noun(tokens: &[Token], h: usize, lex: &Lexicon) -> Option<usize> {
    let mut i = h + 1;
    // A particle right after the verb is part of it ("kick *off* a build", "turn *off*
    // the lights"), not what it acts on.
    if tokens
        .get(i)
        .is_some_and(|t| lex.words.verb_particles.contains(&t.form))
    {
        i += 1;
    }
    while tokens.get(i).is_some_and(|t| {
        !t.value
            && !lex.is_content(t)
            && (lex.is_determiner(t) || lex.words.particles.contains(&t.form))
    }) {
        i += 1;
    }
    let mut last = None;
    while let Some(t) = tokens.get(i) {
        if t.value
            || !lex.is_content(t)
            || t.identifier
            || t.proper
            || (last.is_some()
                && (lex.is_verb(t) || post_modifier(tokens, i, lex) || lex.opens_cue(&t.form)))
        {
            break;
        }
        last = Some(i);
        i += 1;
    }
    last
}

/// The nouns a description says are new or existing ("Add new observations to existing
/// entities": observations new, entities existing), by key: the content words after one
/// of the lexicon's describing articles, up to the noun they qualify.
fn aged_nouns(description: &str, lex: &Lexicon) -> Vec<(String, Article)> {
    let toks = lex.tokenize(description, &[]);
    let mut out = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        let Some(age) = (lex.articles.describing.contains(&t.form))
            .then(|| lex.articles.of(&t.form))
            .flatten()
        else {
            continue;
        };
        for n in toks[i + 1..]
            .iter()
            .take(2)
            .take_while(|n| lex.is_content(n))
        {
            out.push((n.key.clone(), age));
        }
    }
    out
}

/// Keys of the nouns some entry's description says it acts on new ones of and another
/// on existing ones of.
fn aged_apart(docs: &[Doc]) -> HashSet<String> {
    let of_age = |age: Article| -> HashSet<&String> {
        (docs.iter())
            .flat_map(|d| &d.aged)
            .filter(|(_, a)| *a == age)
            .map(|(k, _)| k)
            .collect()
    };
    let new = of_age(Article::New);
    of_age(Article::Existing)
        .into_iter()
        .filter(|k| new.contains(k))
        .cloned()
        .collect()
}

/// [`DEPRECATED`] for a description that says so ("DEPRECATED: Use `read_text_file`
/// instead"), else 1.
fn standing(description: &str, lex: &Lexicon) -> f64 {
    // Plain words, not the tokenizer: this runs for every tool at engine build.
    let deprecated = description.split(|c: char| !c.is_alphanumeric()).any(|w| {
        lex.words
            .deprecations
            .iter()
            .any(|d| w.eq_ignore_ascii_case(d))
    });
    if deprecated { DEPRECATED } else { 1.0 }
}

/// "Fetch a *stored* credential", "checks a *saved* search": a past participle between a
/// determiner and a noun describes the thing the entry acts on, not what the entry does,
/// so "remember my password" is no request for the tool that fetches one.
fn attributive_participle(tokens: &[Token], i: usize, lex: &Lexicon) -> bool {
    tokens[i].form.ends_with("ed")
        && i > 0
        && lex.is_determiner(&tokens[i - 1])
        && tokens.get(i + 1).is_some_and(|t| lex.is_content(t))
}

/// Each two content words next to each other, function words between them aside, by
/// key. A participle after a noun describes it ("a diff *showing* the changes"): what
/// the entry gives back, not what it does, so it pairs with neither neighbour.
fn word_pairs(tokens: &[Token], lex: &Lexicon) -> Vec<(String, String)> {
    let content: Vec<(usize, &Token)> = (tokens.iter().enumerate())
        .filter(|(_, t)| !t.value && lex.is_content(t))
        .collect();
    let mut out = Vec::new();
    for pair in content.windows(2) {
        let ((i, a), (j, b)) = (pair[0], pair[1]);
        let describing = [i, j]
            .iter()
            .any(|&k| participle_after_noun(tokens, k, lex));
        if a.key != b.key && !describing {
            out.push((a.key.clone(), b.key.clone()));
        }
    }
    out
}

/// "a diff *showing* the changes", "the files *created*": an -ing or -ed word right
/// after a content word.
fn participle_after_noun(tokens: &[Token], i: usize, lex: &Lexicon) -> bool {
    let form = tokens[i].form.as_str();
    form.len() > 4
        && (form.ends_with("ing") || form.ends_with("ed"))
        && i > 0
        && lex.is_content(&tokens[i - 1])
}

/// The entry named by `word` answers the clause: it takes `score`, joining the
/// candidates if the words had not found it.
fn answers(
    doc: u32,
    score: f64,
    word: &str,
    scored: &mut Vec<(f64, u32)>,
    reasons: &mut Vec<(u32, f64, Reason<'_>)>,
) {
    match scored.iter_mut().find(|s| s.1 == doc) {
        Some(s) => s.0 = score,
        None => scored.push((score, doc)),
    }
    reasons.push((doc, score * SCALE, Reason::AskedFor(word.to_string())));
}

/// Word → the one entry whose name it is. A name's words are its keys less those most
/// names share (a server or dataset prefix: `atis_airport`, `atis_flight`); an entry
/// counts when one word is left and no other name holds it (`new_card` is not named by
/// "card" while `card_declined` is a card too).
fn named_by(docs: &[Doc]) -> HashMap<String, u32> {
    let mut in_names: HashMap<&str, usize> = HashMap::new();
    for d in docs {
        for k in &d.name_keys {
            *in_names.entry(k).or_default() += 1;
        }
    }
    let mut named = HashMap::new();
    for (i, d) in docs.iter().enumerate() {
        let mut own = d.name_keys.iter().filter(|k| {
            in_names
                .get(k.as_str())
                .is_some_and(|&n| n * 2 <= docs.len())
        });
        if let (Some(word), None) = (own.next(), own.next())
            && in_names.get(word.as_str()) == Some(&1)
            && let Ok(doc) = u32::try_from(i)
        {
            named.insert(word.clone(), doc);
        }
    }
    named
}

/// Whether the word at `i` is a participle that opens a phrase describing the noun before
/// it ("a response *based* on the text", "the files *created* by the job"): an -ed word
/// followed by a function word. The noun before it ends the noun phrase.
fn post_modifier(tokens: &[Token], i: usize, lex: &Lexicon) -> bool {
    tokens[i].form.len() > 4
        && tokens[i].form.ends_with("ed")
        && !tokens[i].form.ends_with("eed")
        && tokens
            .get(i + 1)
            .is_some_and(|t| !t.value && !lex.is_content(t))
}

/// Whether the word at `i` ends a definite phrase naming what an earlier clause's entry
/// makes ("convert *the gross salary* to EUR" after a salary was calculated): a definite
/// word at most three words before, nothing but plain words between.
fn names_earlier_output(tokens: &[Token], i: usize, earlier: &[String], lex: &Lexicon) -> bool {
    if earlier.is_empty() {
        return false;
    }
    let definite_before = |i: usize| lex.definite_before(tokens, i, |t| !t.value).is_some();
    // "the result", "the output", and what follows as theirs ("the output *of the
    // program*"): any product of the step before. A noun right after one is the
    // phrase's head, not the output's ("the total *interest*" asks for interest).
    let output_noun =
        |j: usize| lex.words.output_nouns.contains(&tokens[j].form) && definite_before(j);
    let of_an_output = (i.saturating_sub(3)..i.saturating_sub(1))
        .rev()
        .any(|j| output_noun(j) && tokens[j + 1..i].iter().all(|t| !lex.is_content(t)));
    output_noun(i) || of_an_output || (earlier.contains(&tokens[i].key) && definite_before(i))
}

/// Content words of a clause with their role weights.
fn weigh<'a>(
    tokens: &'a [Token],
    head_verb: Option<usize>,
    object: Option<usize>,
    earlier_products: &[String],
    name_words: &HashSet<String>,
    lex: &Lexicon,
) -> Vec<Word<'a>> {
    let topic_from = lex
        .topic_markers
        .iter()
        .filter_map(|p| p.find_all(tokens).next())
        .min()
        .unwrap_or(usize::MAX);
    let mut describing = false;
    let mut out = Vec::new();
    // The verb's object — the last word of the noun phrase after it ("the weekly report
    // *workflow*") — names what to act on. A light verb hands its weight to it; any other
    // verb shares it, so an entry that does not know the object fits worse.
    let head = head_verb.map(|h| {
        if lex.is_light_verb(&tokens[h]) {
            object.unwrap_or(h)
        } else {
            h
        }
    });
    let complement = head_verb.and_then(|h| complement_at(tokens, h, object, lex));
    for (i, tok) in tokens.iter().enumerate() {
        if i > 0 && lex.relative_markers.contains(&tok.form) && head_verb.is_some_and(|h| h < i) {
            describing = true;
        }
        if complement == Some(i) {
            describing = true;
        }
        if !lex.is_content(tok) {
            continue;
        }
        let mut weight = if head == Some(i) || object == Some(i) {
            HEAD_VERB
        } else {
            1.0
        };
        if head_verb == Some(i) && head != Some(i) {
            weight = LIGHT_VERB;
        }
        if describing {
            weight *= DESCRIBING;
        }
        if i > topic_from
            || tok.identifier
            || (tok.proper && !name_words.contains(&tok.key))
            || names_earlier_output(tokens, i, earlier_products, lex)
        {
            weight *= TOPIC;
        }
        out.push(Word { tok, weight });
    }
    out
}

/// Where a complement of the head verb at `h` starts: words that describe its object
/// rather than ask the catalog for something, so they weigh like a relative clause.
/// - "teach the onboarding agent *to also send* a welcome email": after the object of a
///   verb that is neither light nor a function word, "to" and a verb say what the object
///   should do. After a light verb they are the request ("set an alarm to go off at
///   6:45"), as after "use" ("use my card to make a repayment").
/// - "save *what you find*": "what" and a subject pronoun after the verb make its
///   object, something another step produces.
pub(crate) fn complement_at(
    tokens: &[Token],
    h: usize,
    object: Option<usize>,
    lex: &Lexicon,
) -> Option<usize> {
    let verb_after = |i: usize| {
        tokens[i..]
            .iter()
            .find(|t| !lex.words.fillers.contains(&t.form))
            .is_some_and(|t| lex.is_verb(t))
    };
    let to_verb = object
        .filter(|_| lex.is_content(&tokens[h]) && !lex.is_light_verb(&tokens[h]))
        .and_then(|o| (o + 1..tokens.len()).find(|&i| tokens[i].form == "to" && verb_after(i + 1)));
    let what_subject = tokens
        .get(h + 1..)
        .and_then(|rest| {
            rest.iter()
                .position(|t| lex.words.free_relatives.contains(&t.form))
        })
        .map(|at| h + 1 + at)
        .filter(|&i| lex.opens_free_relative(tokens, i) && verb_after(i + 2));
    to_verb.into_iter().chain(what_subject).min()
}

/// The clause's tokens followed by those of the words it means without saying them
/// (docs/routing.md, item 1: "how big" means a size); borrowed where there are none.
fn with_unsaid<'t>(tokens: &'t [Token], hints: &Hints<'_>, lex: &Lexicon) -> Cow<'t, [Token]> {
    let names_file = !hints.file_types.is_empty();
    let unsaid = lex.unsaid.words(tokens, names_file, lex);
    if unsaid.is_empty() {
        Cow::Borrowed(tokens)
    } else {
        Cow::Owned([tokens, &unsaid].concat())
    }
}

/// Direction: the result named after "into" favours its producers over its consumers;
/// these are its words.
fn target_words<'t>(tokens: &'t [Token], lex: &Lexicon) -> Vec<&'t Token> {
    Lexicon::after_marker(&lex.target_markers, tokens)
        .map(|from| {
            tokens[from..]
                .iter()
                .filter(|t| lex.is_content(t))
                .collect()
        })
        .unwrap_or_default()
}

/// Artifact kinds as words of a field (`audio_file` → "audio file").
fn kind_fields(weight: f64, kinds: &[String]) -> impl Iterator<Item = (f64, String)> + '_ {
    kinds.iter().map(move |k| (weight, k.replace('_', " ")))
}

/// The field weight of a value an argument's description lists: a one-word value
/// weighs as a name's word, each word of a longer one as a description's.
fn suggested_weight(value: &crate::suggested::Suggestion) -> f64 {
    if value.words.len() == 1 {
        W_SUGGESTED
    } else {
        W_SUGGESTED_WORDS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stronger_opinion_leads_a_blend() {
        let share = Share {
            weight: 0.4,
            lead: 0.7,
        };
        // Entry 0: the words like it (0.8), meaning less (0.2); entry 1: the words barely
        // (0.1), meaning much (0.9); entry 2: only meaning finds it.
        let mut scored = vec![(0.8, 0), (0.1, 1)];
        let mut reasons = Vec::new();
        let opinion = vec![(0, 0.2), (1, 0.9), (2, 0.5)];
        blend(share, opinion, &mut scored, &mut reasons, Reason::Meaning);
        let score = |doc: u32| scored.iter().find(|(_, d)| *d == doc).unwrap().0;
        assert!((score(0) - (0.4 * 0.2 + 0.6 * 0.8)).abs() < 1e-6);
        assert!((score(1) - (0.7 * 0.9 + 0.3 * 0.1)).abs() < 1e-6);
        assert!((score(2) - 0.7 * 0.5).abs() < 1e-6);
        // An even share is the plain weighted mean either way.
        let mut even = vec![(0.1, 1)];
        blend(
            Share::even(0.4),
            vec![(1, 0.9)],
            &mut even,
            &mut reasons,
            Reason::Meaning,
        );
        assert!((even[0].0 - (0.4 * 0.9 + 0.6 * 0.1)).abs() < 1e-6);
    }
}
