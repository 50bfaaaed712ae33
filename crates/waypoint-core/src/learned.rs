//! The trained router: a linear model (waypoint-classify) taught by everything the
//! catalog says about its entries and by labelled requests, blended into the lexical
//! route score.
//!
//! What an entry says about itself (its name in words, description, keywords) teaches the
//! model the entry's vocabulary; its `examples:` — and the labelled requests added to them
//! by training — teach it how people ask. How much the model's calibrated probability
//! counts against the lexical score follows how many such requests the catalog holds:
//! a catalog described only in its own words is routed as before, one with a hundred
//! requests per entry almost wholly by the model.

use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use waypoint_catalog::Catalog;
use waypoint_classify::cache::{self, Source};
use waypoint_classify::{Model, Settings, TrainingSet};

use crate::hash::{HashMap, HashSet};
use crate::meaning::Meaning;
use crate::network_neighbours::NetworkNeighbours;
use crate::word_neighbours::WordNeighbours;

/// Requests per entry at which the model and the lexical score count equally.
const HALF_WEIGHT_REQUESTS: f64 = 4.0;
/// The model's probability below which an entry the words do not touch is not a candidate.
const MIN_CANDIDATE: f32 = 0.02;
/// Where the model carries at least `MODEL_LEADS` of the score, a clause the segmenter kept
/// whole ("add it to my playlist and humidity in Denver") asks two things when the parts
/// on either side of an "and" or comma each route, at least `CONFIDENT` likely, to a
/// different entry.
/// The whole clause must speak for each of the two entries at least `WHOLE_SUPPORTS`
/// too: a model taught multi-intent requests does; one taught single-intent requests
/// gives the second a split finds next to nothing.
const CONFIDENT: f32 = 0.5;
const MODEL_LEADS: f64 = 0.5;
const WHOLE_SUPPORTS: f32 = 0.1;
/// Where requests ask for one entry each, the share of the router's probability that the
/// network gives (the linear model keeps the rest). Its softmax is not calibrated on
/// held-out requests as the linear model's probabilities are, and is as sure of a
/// request no entry handles as of one it knows: how sure the router is takes
/// `HEAD_SHARE` of it. Which entry is best takes `ENCODER_HEAD_SHARE` where the network
/// reads an encoder's vectors, by which it ranks the entries better than the linear
/// model (CLINC150 dev: 96.8% of in-scope requests ranked right, against 96.2%). Over
/// the static word vectors of pieces in context it ranks about as well as the linear
/// model and takes `WORDS_HEAD_SHARE` in both (docs/performance.md).
const HEAD_SHARE: f32 = 0.4;
const ENCODER_HEAD_SHARE: f32 = 0.7;
const WORDS_HEAD_SHARE: f32 = 0.5;
/// An entry's own words count less than a request phrased by a person.
const OWN_WORDS: f32 = 0.5;
/// The labelled requests a catalog was taught say people ask for one entry at a time
/// when, with one request asking for two added to them as a prior, fewer than this share
/// ask for two or more: the planner then reads a request as one request.
const FEW_ASK_TWO: f64 = 0.02;

/// Where the trained model comes from.
#[derive(Debug, Clone, Default)]
pub enum RouterModel {
    /// Train when the engine is built (the default; fast for catalogs without many
    /// labelled requests).
    #[default]
    Train,
    /// Read from, or train into, this directory, keyed by what trained it.
    Cached(PathBuf),
    /// No trained model: lexical routing only.
    Off,
}

impl RouterModel {
    /// The directory trained artifacts (models, sentence vectors) are cached in, if any.
    pub fn cache_dir(&self) -> Option<&std::path::Path> {
        match self {
            Self::Cached(dir) => Some(dir),
            Self::Train | Self::Off => None,
        }
    }
}

/// A trained model and how its classes map onto the route index's entries.
#[derive(Debug, Clone)]
pub struct Learned {
    pub(crate) model: Model,
    /// Route-index entry of each class.
    pub(crate) docs: Vec<u32>,
    /// Share of the blended score that is the model's.
    pub(crate) weight: f64,
    pub(crate) source: Option<Source>,
    /// The sentence encoder whose vectors the model also learned from, when on.
    pub(crate) meaning: Option<Arc<Meaning>>,
    /// Without an encoder, the static word vectors of the taught requests: the network
    /// reads a clause's (where it was trained) and the nearest requests vote.
    pub(crate) words_near: Option<WordNeighbours>,
    /// With an encoder, the taught requests as the network reads them: the nearest
    /// vote beside those nearest by sentence vector.
    pub(crate) network_near: Option<NetworkNeighbours>,
    /// The labelled requests almost never ask for two entries at once.
    pub(crate) one_at_a_time: bool,
    /// The catalog is taught by its entries' examples alone, one entry each, and the
    /// closest of them vote (by the static word vectors) on how sure the router is.
    pub(crate) examples_vote: bool,
    /// Entries (route-index ids) no labelled request taught, when the model leads the
    /// score: the model knows them only by their own few words, so a request for one is
    /// read as a request for whatever taught entry it resembles most.
    pub(crate) untaught: Vec<u32>,
    /// Which model this is, for the memo of recent probabilities (see [`RECENT`]).
    memo_id: u64,
}

/// Ids for [`Learned::memo_id`]: never reused, so a memo entry of a dropped model can
/// never answer for a new one.
static NEXT_MEMO_ID: AtomicU64 = AtomicU64::new(1);

/// How many texts each thread remembers the probabilities of.
const RECENT_TEXTS: usize = 8;

/// The router's probabilities for a text, blended once per text: as they rank the
/// entries, and as they say how sure the router is where the network's share differs
/// between the two (a network over an encoder's readings).
struct Probabilities {
    ranking: Vec<f32>,
    sure: Option<Vec<f32>>,
    /// The network's hidden layer for the text, where it read it: the nearest requests
    /// as the network reads them start from it too.
    hidden: Option<Vec<f32>>,
}

impl Probabilities {
    fn sure(&self) -> &[f32] {
        self.sure.as_deref().unwrap_or(&self.ranking)
    }
}

/// A model (by [`Learned::memo_id`]), a text, and its probabilities for it.
type Remembered = (u64, String, Arc<Probabilities>);

thread_local! {
    /// The probabilities of the texts this thread asked a model about during the request
    /// it plans: planning one request asks about the same clause several times (to rank
    /// it, to see whether the model is confident, whether it disowns an entry), and each
    /// ask would turn the text into features and score every class anew (the sentence
    /// vector, when on, has a memo of its own). Per thread, so the server's workers never
    /// wait on each other; emptied when a request starts.
    static RECENT: RefCell<Vec<Remembered>> = const { RefCell::new(Vec::new()) };
}

impl Learned {
    /// Builds the training set for the catalog and trains (or reads) its model. `doc_of`
    /// maps an entry id to its index in the route index.
    pub(crate) fn build(
        catalog: &Catalog,
        how: &RouterModel,
        doc_of: impl Fn(&str) -> Option<u32>,
        meaning: Option<&Arc<Meaning>>,
        word_vectors: bool,
        lex: &crate::lexicon::Lexicon,
    ) -> Option<Self> {
        let (mut set, requests) = training_set(catalog);
        // Without requests the model's share of a score would be nil: training it would
        // cost time (one problem per entry over every text) and change nothing.
        if set.classes().len() < 2 || requests == 0 || matches!(how, RouterModel::Off) {
            return None;
        }
        crate::parts::add_parts(&mut set, lex, how.cache_dir());
        let per_entry = requests as f64 / set.classes().len() as f64;
        let weight = per_entry / (per_entry + HALF_WEIGHT_REQUESTS);
        let one_at_a_time = weight >= MODEL_LEADS && asks_one_at_a_time(catalog.taught());
        // The network over sentence vectors is asked only where requests ask for one
        // entry each; elsewhere training it would cost time and change nothing.
        let settings = Settings {
            network: one_at_a_time,
            ..Settings::default()
        };
        let cache_dir = how.cache_dir();
        // Each text's sentence vector joins its n-grams; without vectors for every text
        // the model learns from n-grams alone.
        let meaning = meaning.filter(|m| {
            let texts: Vec<&str> = set.examples().iter().map(|e| e.text.as_str()).collect();
            let Ok(vectors) = m.vectors_for(&texts, cache_dir) else {
                return false;
            };
            // The network reads the encoder's earlier layers too (docs/routing.md); where
            // they cannot be had it reads the sentence vectors.
            let probes = settings
                .network
                .then(|| m.probes_for(&texts, cache_dir).ok())
                .flatten();
            if !set.set_dense(vectors) {
                return false;
            }
            if let Some(probes) = probes {
                set.set_probes(probes);
            }
            true
        });
        // Without an encoder the network reads each text's static word vectors
        // (docs/routing.md, "Static word vectors"); the linear model keeps its n-grams,
        // which the vectors cost accuracy beside where requests ask for several entries.
        // The model's classes are the training set's (its cache key holds them).
        let docs: Vec<u32> = set
            .classes()
            .iter()
            .map(|c| doc_of(c).unwrap_or(u32::MAX))
            .collect();
        // The closest requests vote where they ask for one entry each, and where the
        // catalog is taught by its entries' `examples:` alone: a few examples per entry
        // teach the linear model cues as thin as one shared word ("repeat *it*" for the
        // weather of "is *it* going to snow"), which its cross-validation, scored on
        // examples that each fit some entry, rates as sure as any. Nearness in meaning
        // tells a paraphrase ("will it be sunny in rome") from a request near none of
        // them. Only where every entry has examples (one without would lose the vote's
        // share to those with) and none names two entries: there a clause may ask for
        // two, and no example of either is near it.
        let by_examples = catalog.taught().requests == 0 && examples_one_each(&set);
        let word_vectors = meaning.is_none() && word_vectors;
        let words_near = (word_vectors && (settings.network || by_examples))
            .then(|| WordNeighbours::with_readings(&set, &docs, settings.network))
            .flatten()
            .map(|(near, readings)| {
                if let Some(readings) = readings {
                    set.set_probes(readings);
                }
                near
            });
        let examples_vote = by_examples && words_near.is_some();
        let (model, source) = match how {
            // Turned away above.
            RouterModel::Off => return None,
            RouterModel::Train => (Model::train(&set, &settings), None),
            RouterModel::Cached(dir) => {
                let (m, s) = cache::load_or_train(dir, &set, &settings);
                (m, Some(s))
            }
        };
        let untaught = if weight >= MODEL_LEADS {
            let taught: HashSet<&str> = set
                .examples()
                .iter()
                .filter(|e| e.held_out)
                .flat_map(|e| &e.labels)
                .filter_map(|&l| set.classes().get(l as usize).map(String::as_str))
                .collect();
            model
                .classes()
                .iter()
                .zip(&docs)
                .filter(|(c, d)| !taught.contains(c.as_str()) && **d != u32::MAX)
                .map(|(_, d)| *d)
                .collect()
        } else {
            Vec::new()
        };
        let network_near = (meaning.is_some() && one_at_a_time)
            .then(|| NetworkNeighbours::new(&set, &model, &docs))
            .flatten();
        Some(Self {
            model,
            docs,
            weight,
            source,
            meaning: meaning.cloned(),
            words_near,
            network_near,
            one_at_a_time,
            examples_vote,
            untaught,
            memo_id: NEXT_MEMO_ID.fetch_add(1, Ordering::Relaxed),
        })
    }

    pub fn model(&self) -> &Model {
        &self.model
    }

    /// Where the model came from, when a cache was asked for.
    pub fn source(&self) -> Option<&Source> {
        self.source.as_ref()
    }

    /// The model's share of the blended score.
    pub fn weight(&self) -> f64 {
        self.weight
    }

    /// Whether the model leads the score and the labelled requests it was taught ask for
    /// one entry at a time.
    pub fn one_at_a_time(&self) -> bool {
        self.one_at_a_time
    }

    /// Whether the catalog's examples (its only requests, one entry each) vote on how
    /// sure the router is (docs/routing.md, "Requests").
    pub fn examples_vote(&self) -> bool {
        self.examples_vote
    }

    /// The share of the router's probability a network over sentence vectors gives,
    /// where it has one (docs/routing.md): it is trained only where requests ask for one
    /// entry each (`Settings::network`) and every text had a vector, so having one is
    /// where it is asked. This is its share in ranking the entries; in how sure the
    /// router is of the best it has [`Self::network_sure_share`].
    pub fn network_share(&self) -> Option<f32> {
        let share = if self.words_near.is_some() {
            WORDS_HEAD_SHARE
        } else {
            ENCODER_HEAD_SHARE
        };
        self.model.has_head().then_some(share)
    }

    /// The share of the router's probability a network gives in how sure the router is
    /// of its best entry, where it has one (`HEAD_SHARE`; over the static word vectors
    /// the share it ranks with).
    pub fn network_sure_share(&self) -> Option<f32> {
        let share = if self.words_near.is_some() {
            WORDS_HEAD_SHARE
        } else {
            HEAD_SHARE
        };
        self.model.has_head().then_some(share)
    }

    /// Whether the router reads the static word vectors (no encoder; requests for one
    /// entry each): its network reads them, and the nearest requests by them vote.
    pub fn reads_word_vectors(&self) -> bool {
        self.words_near.is_some() && self.model.has_head()
    }

    /// The model's calibrated probabilities for a text (with its sentence vector when the
    /// model learned from them).
    fn probabilities(&self, text: &str) -> Arc<Probabilities> {
        let known = RECENT.with_borrow(|recent| {
            recent
                .iter()
                .find(|(id, t, _)| *id == self.memo_id && t == text)
                .map(|(.., p)| Arc::clone(p))
        });
        if let Some(p) = known {
            return p;
        }
        let vector = self.meaning.as_ref().and_then(|m| m.vector(text));
        let linear = self.model.probabilities_with(text, vector.as_deref());
        // The network makes the entries compete for the clause's meaning.
        let share = self.network_share();
        let hidden = share
            .and_then(|_| match &self.words_near {
                Some(near) => near.reading(text).map(Arc::from),
                None => self.encoder_reading(text, vector),
            })
            .and_then(|v| self.model.head_hidden(&v));
        let network = hidden
            .as_deref()
            .and_then(|h| self.model.head_probabilities_of_hidden(h));
        let p = match (network, share) {
            (Some(h), Some(share)) => {
                let blend = |share: f32| -> Vec<f32> {
                    (linear.iter().zip(&h))
                        .map(|(p, h)| (1.0 - share) * p + share * h)
                        .collect()
                };
                // Over an encoder's readings the network ranks at another share than
                // the one it has in how sure the router is.
                let sure = self.words_near.is_none().then(|| blend(HEAD_SHARE));
                Probabilities {
                    ranking: blend(share),
                    sure,
                    hidden,
                }
            }
            _ => Probabilities {
                ranking: linear,
                sure: None,
                hidden,
            },
        };
        let p = Arc::new(p);
        RECENT.with_borrow_mut(|recent| {
            if recent.len() >= RECENT_TEXTS {
                recent.remove(0);
            }
            recent.push((self.memo_id, text.to_string(), Arc::clone(&p)));
        });
        p
    }

    /// `(entry, probability)` for every entry `p` gives at least a small chance.
    fn above_min(&self, p: &[f32]) -> Vec<(u32, f32)> {
        p.iter()
            .zip(&self.docs)
            .filter(|(p, d)| **p >= MIN_CANDIDATE && **d != u32::MAX)
            .map(|(p, d)| (*d, *p))
            .collect()
    }

    /// `(entry, probability)` for every entry the model gives at least a small chance.
    pub(crate) fn candidates(&self, text: &str) -> Vec<(u32, f32)> {
        self.above_min(&self.probabilities(text).ranking)
    }

    /// [`Self::candidates`] as they say how sure the router is: the network at
    /// `HEAD_SHARE` where it ranks with another share.
    pub(crate) fn sure_candidates(&self, text: &str) -> Vec<(u32, f32)> {
        self.above_min(self.probabilities(text).sure())
    }
}

/// Forgets the probabilities this thread remembers: planning a request starts here, so
/// what is remembered saves the asks within one request and no more.
pub(crate) fn new_request() {
    RECENT.with_borrow_mut(Vec::clear);
}

impl Learned {
    /// Whether the model carries most of a route score (enough labelled requests per
    /// entry that the entries' own words are a small part of what it knows).
    pub(crate) fn leads(&self) -> bool {
        self.weight >= MODEL_LEADS
    }

    /// `(entry, score)` from the taught requests nearest the text by static word
    /// vectors, where they vote (no encoder; requests for one entry each, or a catalog
    /// taught by its entries' examples alone).
    pub(crate) fn words_near(&self, text: &str) -> Option<Vec<(u32, f32)>> {
        self.words_near.as_ref().map(|n| n.scores(text))
    }

    /// `(entry, score)` from the taught requests nearest the text as the network reads
    /// them, where an encoder is on and requests ask for one entry each.
    pub(crate) fn network_near(&self, text: &str) -> Option<Vec<(u32, f32)>> {
        let near = self.network_near.as_ref()?;
        // Where there are such neighbours the network reads the encoder, and has read
        // this text already to rank the entries.
        let hidden = self.probabilities(text).hidden.clone()?;
        Some(near.scores(hidden))
    }

    /// What the network reads of a text where an encoder is on: its probe, or its
    /// sentence vector where the network learned from those.
    fn encoder_reading(&self, text: &str, vector: Option<Arc<[f32]>>) -> Option<Arc<[f32]>> {
        match (self.model.head_dims(), vector) {
            (Some(dims), Some(v)) if dims != v.len() => {
                self.meaning.as_ref().and_then(|m| m.probe(text))
            }
            (_, vector) => vector,
        }
    }

    /// The model's best entry for a text, when the model is the main voice of the score
    /// and finds that entry more likely than not.
    pub(crate) fn confident(&self, text: &str) -> Option<(u32, f32)> {
        if !self.leads() {
            return None;
        }
        self.candidates(text)
            .into_iter()
            .filter(|(_, p)| *p >= CONFIDENT)
            .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))
    }

    /// Whether the model gives this entry next to no chance for the text (by id).
    pub(crate) fn disowns(&self, text: &str, id: &str) -> bool {
        let classes = self.model.classes();
        classes.iter().position(|c| c == id).is_some_and(|k| {
            self.probabilities(text)
                .ranking
                .get(k)
                .is_some_and(|p| *p < MIN_CANDIDATE)
        })
    }

    /// Whether the whole text speaks for each of these entries (by id: the model's classes
    /// are entry ids).
    pub(crate) fn supports_all(&self, text: &str, ids: &[&str]) -> bool {
        let p = self.probabilities(text);
        let classes = self.model.classes();
        ids.iter().all(|id| {
            classes
                .iter()
                .position(|c| c == id)
                .and_then(|k| p.ranking.get(k))
                .is_some_and(|p| *p >= WHOLE_SUPPORTS)
        })
    }
}

/// What a catalog says about one of its entries: the words every router learns from.
pub(crate) struct EntryWords<'c> {
    pub id: &'c str,
    /// The name as words ("read file" for `fs.read_file`).
    pub name: String,
    pub about: &'c str,
    pub keywords: &'c [String],
    /// Requests that should route here.
    pub examples: &'c [String],
}

/// Every tool, pipeline and plan document, in catalog order.
pub(crate) fn entries(catalog: &Catalog) -> Vec<EntryWords<'_>> {
    let mut out = Vec::new();
    for t in catalog.tools() {
        out.push(EntryWords {
            id: &t.name,
            name: name_words(&t.name),
            about: &t.description,
            keywords: &t.keywords,
            examples: &t.examples,
        });
    }
    for p in catalog.pipelines() {
        let short = crate::text::without_server(&p.id);
        out.push(EntryWords {
            id: &p.id,
            name: name_words(short),
            about: &p.description,
            keywords: &p.intent_keywords,
            examples: &p.examples,
        });
    }
    for d in catalog.plans() {
        out.push(EntryWords {
            id: &d.uri,
            name: name_words(&d.id.name),
            about: &d.intent,
            keywords: &d.keywords,
            examples: &[],
        });
    }
    out
}

/// What the catalog teaches, one class per tool, pipeline and plan document; and how
/// many of the texts are requests (examples) rather than the entries' own words.
///
/// A request that is an example of several entries ("play it and add it to my playlist")
/// is one multi-label example, not one copy per entry that contradicts the others.
pub fn training_set(catalog: &Catalog) -> (TrainingSet, usize) {
    let mut set = TrainingSet::default();
    let mut requests: Vec<(&str, Vec<&str>)> = Vec::new();
    let mut at: HashMap<&str, usize> = HashMap::default();
    for e in entries(catalog) {
        set.class(e.id);
        for text in [e.name.as_str(), e.about, &e.keywords.join(", ")] {
            set.add(text, &[e.id], OWN_WORDS, false);
        }
        for x in e.examples {
            if let Some(&i) = at.get(x.as_str()) {
                requests[i].1.push(e.id);
            } else {
                at.insert(x, requests.len());
                requests.push((x, vec![e.id]));
            }
        }
    }
    for (text, labels) in &requests {
        set.add(text, labels, 1.0, true);
    }
    (set, requests.len())
}

/// Whether the router built for this catalog may train its network (it does where
/// `asks_one_at_a_time` holds and the requests lead the score): meaning keeps the
/// requests' probes for it when it encodes them. A wrong guess costs time or memory at
/// build, never a different model.
pub(crate) fn may_train_network(catalog: &Catalog) -> bool {
    asks_one_at_a_time(catalog.taught())
}

/// Whether every class of the set has requests of its own (not only its entry's own
/// words) and each request names one class.
fn examples_one_each(set: &TrainingSet) -> bool {
    let mut taught = vec![false; set.classes().len()];
    for e in set.examples().iter().filter(|e| e.held_out) {
        if e.labels.len() > 1 {
            return false;
        }
        for &l in &e.labels {
            if let Some(t) = taught.get_mut(l as usize) {
                *t = true;
            }
        }
    }
    taught.iter().all(|t| *t)
}

/// Whether labelled requests say people ask for one entry at a time. Examples written
/// under an entry cannot say so, and a few requests say nothing either way.
fn asks_one_at_a_time(taught: waypoint_catalog::Taught) -> bool {
    (taught.asking_two as f64 + 1.0) / (taught.requests as f64 + 1.0) < FEW_ASK_TWO
}

/// An entry name as words: `fs.read_file`, `getTinyImage` and `get-tiny-image` read as
/// "read file", "get tiny image".
pub fn name_words(name: &str) -> String {
    waypoint_classify::features::words(name).join(" ")
}
