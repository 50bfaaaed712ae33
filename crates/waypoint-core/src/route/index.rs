//! Building the index: every entry's words by field and weight, its examples, what it
//! makes and takes, and what its description says of the things it acts on.

use waypoint_catalog::plans::PlanDoc;
use waypoint_catalog::{Catalog, Pipeline, Tool};
use waypoint_protocol::{CandidateKind, ExtractedKind};

use crate::hash::{HashMap, HashSet};
use crate::lexicon::{Article, Lexicon};

use super::doc::Doc;
use super::grammar::{attributive_participle, word_pairs};
use super::{
    DEPRECATED, Example, Finder, RouteIndex, W_ACCEPTS, W_DESCRIPTION, W_EXAMPLE, W_KEYWORD,
    W_KEYWORD_PART, W_NAME, W_PRODUCES, W_SUGGESTED, W_SUGGESTED_WORDS,
};

impl RouteIndex {
    pub(super) fn lexical_only(catalog: &Catalog, lex: &Lexicon) -> Self {
        let mut index = Self::default();
        for tool in catalog.tools() {
            index.add_tool(tool, lex);
        }
        for p in catalog.pipelines() {
            index.add_pipeline(p, lex);
        }
        // Plan documents are candidates beside pipelines: their intent reads
        // like a description, their keywords like a pipeline's intent keywords.
        for d in catalog.plans() {
            index.add_plan(d, lex);
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

    fn add_tool(&mut self, tool: &Tool, lex: &Lexicon) {
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
        self.add(&tool.name, kind, &fields, description, &phrases, lex);
        self.add_finder(&tool.name, lex);
        self.add_examples(&tool.examples, lex);
        self.set_kinds(&tool.produces, &tool.accepts, lex);
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
        self.set_profile(&own, takes, lex);
        let takes_text = crate::args::takes_free_text(tool, &specs);
        self.arg_specs.insert(tool.name.clone(), specs);
        if crate::args::takes_by_id(tool) {
            self.by_id.insert(tool.name.clone());
        }
        if let Some(doc) = self.docs.last_mut() {
            doc.effects = Some(tool.effects);
            doc.takes_text = takes_text;
            doc.takes_nothing = tool.input_schema.is_some() && tool.properties().next().is_none();
            doc.standing = standing(&tool.description, lex);
            doc.aged = aged_nouns(&tool.description, lex);
        }
    }

    fn add_pipeline(&mut self, p: &Pipeline, lex: &Lexicon) {
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
        self.add(&p.id, CandidateKind::Pipeline, &fields, 1, &phrases, lex);
        self.add_examples(&p.examples, lex);
        self.set_kinds(&p.produces, &p.accepts, lex);
        let own = format!(
            "{} . {}",
            p.intent_keywords.join(" . "),
            lead_verb(&p.description)
        );
        self.set_profile(&own, Vec::new(), lex);
    }

    fn add_plan(&mut self, d: &PlanDoc, lex: &Lexicon) {
        let mut fields: Vec<(f64, String)> = vec![
            (W_NAME, d.id.name.replace(['_', '-'], " ")),
            (W_DESCRIPTION, d.intent.clone()),
        ];
        fields.extend(d.keywords.iter().map(|k| (keyword_weight(k), k.clone())));
        fields.extend(d.produces.iter().map(|k| (W_PRODUCES, k.replace('_', " "))));
        let phrases: Vec<&String> = d.keywords.iter().collect();
        self.add(&d.uri, CandidateKind::Plan, &fields, 1, &phrases, lex);
        self.set_kinds(&d.produces, &[], lex);
        let own = format!("{} . {}", d.keywords.join(" . "), lead_verb(&d.intent));
        self.set_profile(&own, Vec::new(), lex);
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
        let mut best: HashMap<String, f64> = HashMap::default();
        let mut pairs: HashSet<(String, String)> = HashSet::default();
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
            let product_keys = (produces.iter())
                .map(|k| lex.synonyms.key(&crate::args::last_name_word(k)))
                .collect();
            self.product_keys.insert(doc.id.clone(), product_keys);
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
pub(super) fn aged_apart(docs: &[Doc]) -> HashSet<String> {
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
pub(super) fn standing(description: &str, lex: &Lexicon) -> f64 {
    // Plain words, not the tokenizer: this runs for every tool at engine build.
    let deprecated = description.split(|c: char| !c.is_alphanumeric()).any(|w| {
        lex.words
            .deprecations
            .iter()
            .any(|d| w.eq_ignore_ascii_case(d))
    });
    if deprecated { DEPRECATED } else { 1.0 }
}

/// Word → the one entry whose name it is. A name's words are its keys less those most
/// names share (a server or dataset prefix: `atis_airport`, `atis_flight`); an entry
/// counts when one word is left and no other name holds it (`new_card` is not named by
/// "card" while `card_declined` is a card too).
pub(super) fn named_by(docs: &[Doc]) -> HashMap<String, u32> {
    let mut in_names: HashMap<&str, usize> = HashMap::default();
    for d in docs {
        for k in &d.name_keys {
            *in_names.entry(k).or_default() += 1;
        }
    }
    let mut named = HashMap::default();
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
