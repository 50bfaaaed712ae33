//! The vocabulary file as written (`data/lexicon.yaml` and a catalog's `lexicon:`
//! section), and the helpers that compile its lists.

use std::collections::BTreeMap;

use serde::Deserialize;
use waypoint_catalog::Catalog;

use crate::hash::{HashMap, HashSet};
use crate::text::{Synonyms, stem};

use super::catalog_words;
use super::phrase::{Concept, Phrase};
use super::rules::{Calendar, End, FileType, Range, Unit, WordClasses};

/// A unit as the vocabulary file writes it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawUnit {
    pub(super) names: Vec<String>,
    pub(super) per: f64,
    /// Names read only as a word of their own, never written onto a number.
    #[serde(default)]
    pub(super) spaced: Vec<String>,
}

/// Every unit name of the vocabulary with its unit; a measure is known by its place.
pub(super) fn units(raw: &BTreeMap<String, Vec<RawUnit>>) -> HashMap<String, Unit> {
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
pub(super) fn attached_units(raw: &BTreeMap<String, Vec<RawUnit>>) -> Vec<String> {
    let mut out: Vec<String> = raw
        .values()
        .flatten()
        .flat_map(|u| u.names.iter().filter(|n| !u.spaced.contains(n)))
        .map(|n| n.to_lowercase())
        .collect();
    out.sort();
    out
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSituation {
    pub(super) speakers: Vec<String>,
    pub(super) wants: Vec<String>,
    pub(super) obliged: Vec<String>,
    pub(super) fact_openers: Vec<String>,
    pub(super) copulas: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawReportBack {
    pub(super) openings: Vec<String>,
    pub(super) showing: Vec<String>,
    pub(super) lead_ins: Vec<String>,
    pub(super) about_it: Vec<String>,
    pub(super) asked: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawProgressive {
    pub(super) auxiliaries: Vec<String>,
    pub(super) describes: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawDeclining {
    pub(super) openings: Vec<String>,
    pub(super) objects: Vec<String>,
    pub(super) joints: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawArgCue {
    pub(super) cues: Vec<String>,
    pub(super) args: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Raw {
    pub(super) stopwords: Vec<String>,
    pub(super) verbs: Vec<String>,
    pub(super) abbreviations: Vec<String>,
    pub(super) sequencers: Vec<String>,
    pub(super) soft_sequencers: Vec<String>,
    pub(super) request_openers: Vec<String>,
    pub(super) unordered_sequencers: Vec<String>,
    pub(super) relative_markers: Vec<String>,
    pub(super) presentational: Vec<String>,
    pub(super) background: Vec<String>,
    pub(super) declining: RawDeclining,
    pub(super) report_back: RawReportBack,
    pub(super) situation: RawSituation,
    pub(super) lookup_verbs: Vec<String>,
    pub(super) reading_verbs: Vec<String>,
    pub(super) describing: Vec<String>,
    pub(super) topic_markers: Vec<String>,
    pub(super) target_markers: Vec<String>,
    pub(super) anchor_markers: Vec<String>,
    pub(super) destructive_verbs: Vec<String>,
    pub(super) changing_intents: Vec<String>,
    pub(super) light_verbs: Vec<String>,
    pub(super) support_verbs: Vec<String>,
    pub(super) object_articles: RawArticles,
    pub(super) entity_intents: BTreeMap<String, String>,
    pub(super) vague_objects: Vec<String>,
    pub(super) back_references: Vec<String>,
    pub(super) weak_back_references: Vec<String>,
    pub(super) question_words: Vec<String>,
    pub(super) asking_words: Vec<String>,
    pub(super) question_auxiliaries: Vec<String>,
    pub(super) asking_auxiliaries: Vec<String>,
    pub(super) unsaid: crate::unsaid::RawUnsaid,
    pub(super) base_auxiliaries: Vec<String>,
    pub(super) vague_verbs: Vec<String>,
    pub(super) anaphora: Vec<String>,
    pub(super) plural_anaphora: Vec<String>,
    pub(super) languages: Vec<String>,
    pub(super) synonyms: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    pub(super) verb_synonyms: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    pub(super) aspect_verbs: Vec<String>,
    #[serde(default)]
    pub(super) phrasal_verbs: BTreeMap<String, Vec<String>>,
    pub(super) past_question: RawQuestion,
    pub(super) present_question: RawQuestion,
    pub(super) progressive_question: RawProgressive,
    pub(super) identifier_entity: Option<String>,
    pub(super) calendar: Calendar,
    pub(super) url_tlds: Vec<String>,
    pub(super) scopes: BTreeMap<String, Vec<String>>,
    pub(super) word_classes: WordClasses,
    pub(super) identifier_args: Vec<String>,
    pub(super) name_descriptions: Vec<String>,
    pub(super) looked_up_args: Vec<String>,
    pub(super) compound_particles: BTreeMap<String, Vec<String>>,
    pub(super) arg_names: BTreeMap<String, Vec<String>>,
    pub(super) file_types: BTreeMap<String, FileType>,
    #[serde(default)]
    pub(super) units: BTreeMap<String, Vec<RawUnit>>,
    pub(super) arg_cues: Vec<RawArgCue>,
    pub(super) ends: Vec<End>,
    pub(super) ranges: Vec<Range>,
    pub(super) value_prepositions: Vec<String>,
    pub(super) about_markers: Vec<String>,
    pub(super) trailing_joiners: Vec<String>,
    pub(super) list_joiners: Vec<String>,
    pub(super) currency_signs: Vec<char>,
    pub(super) example_markers: Vec<String>,
    pub(super) intents: BTreeMap<String, RawIntent>,
    pub(super) entities: BTreeMap<String, Vec<String>>,
}

impl Raw {
    /// The synonym groups, the verb-only ones among them, with the words most requests
    /// and the catalog's kinds and names are made of stemmed once.
    pub(super) fn synonyms(&self, catalog: &Catalog) -> Synonyms {
        let groups: Vec<(String, Vec<String>)> = self.synonyms.clone().into_iter().collect();
        let verb_groups: Vec<(String, Vec<String>)> =
            self.verb_synonyms.clone().into_iter().collect();
        let phrasal_groups: Vec<(String, Vec<String>)> =
            self.phrasal_verbs.clone().into_iter().collect();
        let w = &self.word_classes;
        let determiners: HashSet<&String> = (w.articles.iter())
            .chain(&w.possessives)
            .chain(&w.demonstratives)
            .collect();
        let before_verbs = (self.stopwords.iter())
            .filter(|s| !determiners.contains(s))
            .map(|s| s.to_lowercase());
        let mut synonyms = Synonyms::new(&groups)
            .with_verb_only(&verb_groups, before_verbs)
            .with_aspect_verbs(&self.aspect_verbs)
            .with_phrasal_verbs(&phrasal_groups);
        synonyms.remember(self.common_words());
        synonyms.remember(catalog_words(catalog).iter().map(String::as_str));
        synonyms
    }

    /// The words most requests are made of, to be stemmed once when the vocabulary is
    /// built: function words, verbs, pronouns.
    pub(super) fn common_words(&self) -> impl Iterator<Item = &str> {
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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawArticles {
    pub(super) existing: Vec<String>,
    pub(super) new: Vec<String>,
    pub(super) describing: Vec<String>,
    pub(super) existing_intent: String,
    pub(super) new_intent: String,
}

/// The cues of one word, lower case.
pub(super) fn one_word_cues(rules: &[RawArgCue]) -> HashSet<String> {
    rules
        .iter()
        .flat_map(|c| &c.cues)
        .filter(|c| !c.contains(' '))
        .map(|c| c.to_lowercase())
        .collect()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawQuestion {
    pub(super) auxiliaries: Vec<String>,
    pub(super) subjects: Vec<String>,
    pub(super) reinterpret: BTreeMap<String, String>,
    #[serde(default)]
    pub(super) either_order: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawIntent {
    pub(super) phrases: Vec<String>,
    pub(super) artifact: Option<String>,
    pub(super) default_entity: Option<String>,
    pub(super) named_entity: Option<String>,
}

/// The words of a list in lower case, as a set.
pub(crate) fn forms(list: &[String]) -> HashSet<String> {
    list.iter().map(|w| w.to_lowercase()).collect()
}

/// The stems of a list's words, as a set.
pub(super) fn stems(list: &[String]) -> HashSet<String> {
    list.iter().map(|w| stem(&w.to_lowercase())).collect()
}

/// The words of a list in lower case, in its order.
pub(super) fn lower(list: &[String]) -> Vec<String> {
    list.iter().map(|w| w.to_lowercase()).collect()
}

/// The built-in intents and entities, compiled.
pub(super) fn concepts(
    raw: &Raw,
    intent_phrases: &dyn Fn(&[String]) -> Vec<Phrase>,
    phrases: &dyn Fn(&[String]) -> Vec<Phrase>,
) -> (Vec<Concept>, Vec<Concept>) {
    let intents: Vec<Concept> = raw
        .intents
        .iter()
        .map(|(name, i)| Concept {
            name: name.clone(),
            phrases: intent_phrases(&i.phrases),
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

pub(super) fn extend(
    concepts: &mut Vec<Concept>,
    extra: &BTreeMap<String, Vec<String>>,
    synonyms: &Synonyms,
) {
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
