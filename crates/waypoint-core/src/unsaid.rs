//! Words a question means without saying them: "what's in the src folder" asks to
//! *list* it, "how big is report.pdf" asks for its *size*, "put this paragraph into
//! German" asks to *translate* it. Catalogs describe tools by
//! what they do ("Get a detailed listing of all files…", "…including size, creation
//! time…"), so a question that names neither the action nor the quantity meets no
//! tool's words; read with the words it means, it meets the tool it asks for.
//!
//! The vocabulary is data (`unsaid:` in `data/lexicon.yaml`); this module only finds
//! where a clause asks so and makes the tokens the router reads beside the clause's own.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::hash::{HashMap, HashSet};
use crate::lexicon::Lexicon;
use crate::text::{Synonyms, Token, tokenize};

/// `unsaid:` as the vocabulary file writes it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawUnsaid {
    contents: RawContents,
    language: RawLanguage,
    file: RawFile,
    /// The word that asks for a degree ("how").
    degree: String,
    /// Noun of a measure → the adjectives `degree` asks it with.
    measures: BTreeMap<String, Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    word: String,
    not: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLanguage {
    before: Vec<String>,
    after_light_verb: Vec<String>,
    means: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawContents {
    prepositions: Vec<String>,
    means: String,
}

/// The compiled vocabulary of unsaid words; the words meant are tokenized once, here.
#[derive(Debug, Clone, Default)]
pub struct Unsaid {
    /// Prepositions of place a question for a thing's contents asks with ("in").
    prepositions: HashSet<String>,
    /// What a question for contents means ("list").
    means: Vec<Token>,
    /// Words before a language's name that make it the language something is put into
    /// ("into").
    into_language: HashSet<String>,
    /// Prepositions that put a thing into a language only after a light verb that opens
    /// the clause ("put it *in* Swedish"; "write the reply in Spanish" writes).
    in_language: HashSet<String>,
    /// What putting something into a language means ("translate").
    language_means: Vec<Token>,
    /// The word that asks for a degree ("how").
    degree: String,
    /// Adjective → the nouns of what it measures ("long" → duration, length).
    measures: HashMap<String, Vec<Token>>,
    /// Key of what a clause naming "report.pdf" names besides a document: a file.
    file_key: String,
    /// Keys of what such a clause does not name (a directory).
    not_file: Vec<String>,
}

impl Unsaid {
    pub(crate) fn compile(raw: RawUnsaid, synonyms: &Synonyms) -> Self {
        let tokens = |word: &str| tokenize(&word.to_lowercase(), &[], synonyms);
        let mut measures: HashMap<String, Vec<Token>> = HashMap::default();
        for (noun, adjectives) in raw.measures {
            for adjective in adjectives {
                measures
                    .entry(adjective.to_lowercase())
                    .or_default()
                    .extend(tokens(&noun));
            }
        }
        let key = |w: &String| synonyms.key(&w.to_lowercase());
        Self {
            prepositions: crate::lexicon::forms(&raw.contents.prepositions),
            means: tokens(&raw.contents.means),
            into_language: crate::lexicon::forms(&raw.language.before),
            in_language: crate::lexicon::forms(&raw.language.after_light_verb),
            language_means: tokens(&raw.language.means),
            degree: raw.degree.to_lowercase(),
            measures,
            file_key: key(&raw.file.word),
            not_file: raw.file.not.iter().map(key).collect(),
        }
    }

    /// Whether a clause names a folder ("how big is the src folder"): then a file it
    /// also names does not keep the tools named for folders from it.
    pub fn names_a_folder(&self, tokens: &[Token]) -> bool {
        tokens.iter().any(|t| self.not_file.contains(&t.key))
    }

    /// Whether an entry whose name has these keys is named for a directory and not for
    /// a file (`list_directory_with_sizes`), so a clause that names a file and no folder
    /// ("how big is report.pdf") does not ask for it.
    pub fn named_for_a_folder_only(&self, name_keys: &[String]) -> bool {
        !name_keys.contains(&self.file_key) && name_keys.iter().any(|k| self.not_file.contains(k))
    }

    /// The tokens a clause means beside its own, each spanning the words that mean it.
    /// `names_file`: the clause names a file, whose contents a question asks to read,
    /// not to list ("what's in notes.txt").
    pub fn words(&self, tokens: &[Token], names_file: bool, lex: &Lexicon) -> Vec<Token> {
        let mut out = Vec::new();
        let mut add = |meant: &[Token], at: &Token| {
            out.extend(meant.iter().map(|tok| Token {
                start: at.start,
                end: at.end,
                ..tok.clone()
            }));
        };
        if !names_file && let Some(at) = self.contents_asked(tokens, lex) {
            add(&self.means, &tokens[at]);
        }
        let opened_light = (tokens.iter())
            .find(|t| !lex.words.fillers.contains(&t.form))
            .is_some_and(|t| lex.is_light_verb(t));
        for pair in tokens.windows(2) {
            let puts_into = self.into_language.contains(&pair[0].form)
                || opened_light && self.in_language.contains(&pair[0].form);
            if puts_into && !pair[1].value && lex.languages.contains(&pair[1].form) {
                add(&self.language_means, &pair[1]);
            }
            if pair[0].form == self.degree
                && !pair[1].value
                && let Some(meant) = self.measures.get(&pair[1].form)
            {
                add(meant, &pair[1]);
            }
        }
        out
    }

    /// Where a question for a thing's contents has its preposition: "what is *in* …",
    /// "what files are *inside* …" — an asking word (`asking_words`), at most one word, a
    /// form of "be" (`copulas`), then a preposition of place. At the clause's start, or
    /// asked of a verb's person ("show me what's in …", "give us what is in …"): the
    /// question is then what the verb gives. "tell me what is in …" reports back.
    fn contents_asked(&self, tokens: &[Token], lex: &Lexicon) -> Option<usize> {
        let plain = |i: usize| tokens.get(i).filter(|t| !t.value);
        // "tell me what is in …" reports back on an earlier step (`report_back`).
        let asked_of = plain(0).is_some_and(|t| lex.is_verb(t))
            && plain(1).is_some_and(|t| lex.words.object_pronouns.contains(&t.form))
            && !(lex.report_back.openings.iter()).any(|p| p.matches_at(tokens, 0));
        let skip = if asked_of { 2 } else { 0 };
        let plain = |i: usize| tokens.get(skip + i).filter(|t| !t.value);
        if !plain(0).is_some_and(|t| lex.asking_words.contains(&t.form)) {
            return None;
        }
        let be = |i: usize| plain(i).is_some_and(|t| lex.words.copulas.contains(&t.form));
        let be_at = (1..=2).find(|&i| be(i))?;
        if be_at == 2 && plain(1).is_none() {
            return None;
        }
        let prep = be_at + 1;
        plain(prep)
            .is_some_and(|t| self.prepositions.contains(&t.form))
            .then_some(skip + prep)
    }
}

#[cfg(test)]
mod tests {
    use crate::lexicon::Lexicon;

    /// The forms of the words a clause means beside its own.
    fn meant(text: &str, names_file: bool) -> Vec<String> {
        let lex = Lexicon::for_catalog(&waypoint_catalog::Catalog::default()).unwrap();
        let tokens = lex.tokenize(text, &[]);
        (lex.unsaid.words(&tokens, names_file, &lex).into_iter())
            .map(|t| t.form)
            .collect()
    }

    #[test]
    fn a_question_for_what_a_thing_holds_means_list() {
        for q in [
            "what's inside the src folder",
            "what is in my inbox",
            "which files are in the docs directory",
        ] {
            assert_eq!(meant(q, false), ["list"], "{q}");
        }
        // Naming a file, the question asks to read it; elsewhere in the clause, or with
        // more than one word before "be", it is no such question.
        assert!(meant("what's in notes.txt", true).is_empty());
        assert!(meant("tell me what is in the folder", false).is_empty());
        assert!(meant("what new files are in the folder", false).is_empty());
        assert!(meant("what is the weather in paris", false).is_empty());
    }

    #[test]
    fn how_and_an_adjective_mean_the_measure() {
        assert_eq!(meant("how big is report.pdf", true), ["size"]);
        assert_eq!(meant("tell me how many files there are", false), ["count"]);
        // An adjective of two measures means both.
        assert_eq!(meant("how long is the trip", false), ["duration", "length"]);
        assert!(meant("a big file", false).is_empty());
        assert!(meant("how is the weather", false).is_empty());
    }

    #[test]
    fn a_question_for_contents_asked_of_a_verbs_person_means_list() {
        assert_eq!(
            meant("show me what's in the config folder", false),
            ["list"]
        );
        assert_eq!(meant("show us what is inside docs", false), ["list"]);
        // A verb's object that is no person asks nothing of the kind.
        assert!(meant("show the files in docs", false).is_empty());
    }

    #[test]
    fn a_language_something_is_put_into_means_translate() {
        assert_eq!(
            meant("put this paragraph into German", false),
            ["translate"]
        );
        // Only after "into": a language named otherwise is no such request.
        assert!(meant("write the reply in German", false).is_empty());
        assert!(meant("turn it into a blog post", false).is_empty());
    }
}
