//! The understanding vocabulary, compiled once from `data/lexicon.yaml` and a catalog's
//! `lexicon:` section into phrase matchers over normalised tokens.
//!
//! This module holds the compiled [`Lexicon`] and what the stages ask of it (is this
//! token a verb, where does the clause's topic start, which file type is named…); its
//! parts are modules of their own:
//! - `phrase`: phrases (short patterns over tokens) and the concepts (intents, entities)
//!   made of them;
//! - `rules`: the compiled rules that are more than a list of phrases (questions that
//!   move an intent, report-back requests, units, file types, argument cues, situations,
//!   the calendar, articles, word classes);
//! - `raw`: the vocabulary file as written, and the helpers that compile its lists.

use waypoint_catalog::{Catalog, yaml};

use crate::error::CoreError;
use crate::hash::{HashMap, HashSet};
use crate::text::{Synonyms, Token, stem, tokenize};

mod phrase;
mod raw;
mod rules;

pub use phrase::{Concept, Concepts, Phrase, longest_at};
use phrase::{compile_intent_phrases, compile_phrases, exact_phrases};
pub(crate) use raw::forms;
use raw::{Raw, attached_units, concepts, extend, lower, one_word_cues, stems, units};
pub use rules::{
    ArgCue, Article, Articles, Calendar, Declining, End, FileType, Progressive, QuestionRule,
    Range, ReportBack, Situation, Unit, WordClasses,
};

const BUILTIN: &str = include_str!("../../data/lexicon.yaml");

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
    /// Clauses that say what not to do ("… but don't commit"); see
    /// [`Lexicon::declines`].
    pub declining: Declining,
    pub progressive_question: Progressive,
    pub situation: Situation,
    /// Keys of the verbs a finder is named for (`search_movie`).
    pub lookup_verbs: HashSet<String>,
    /// Keys of the verbs that say an entry reads a file's contents (`read_file`).
    pub reading_verbs: HashSet<String>,
    /// Openings of a clause that describes what the clause before it named (", which
    /// are dishes 101 and 102"); only after another clause and a comma, where they are
    /// no question.
    pub describing: Vec<Phrase>,
    pub topic_markers: Vec<Phrase>,
    pub target_markers: Vec<Phrase>,
    pub anchor_markers: Vec<Phrase>,
    pub light_verbs: HashSet<String>,
    /// Light verbs that, before "a"/"an" and a noun of an act, mean the act.
    pub support_verbs: HashSet<String>,
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

impl Lexicon {
    /// The built-in vocabulary extended by the catalog's `lexicon:` section.
    pub fn for_catalog(catalog: &Catalog) -> Result<Self, CoreError> {
        let node = yaml::parse(BUILTIN, yaml::Limits::default())
            .map_err(|e| CoreError::Lexicon(format!("line {}: {}", e.pos.line, e.message)))?;
        let raw: Raw = serde_json::from_value(yaml::to_json(&node))
            .map_err(|e| CoreError::Lexicon(e.to_string()))?;
        let synonyms = raw.synonyms(catalog);
        let phrases = |list: &[String]| compile_phrases(list, &synonyms);
        let keys = |list: &[String]| -> HashSet<String> {
            list.iter()
                .map(|w| synonyms.key(&w.to_lowercase()))
                .collect()
        };
        let intent_phrases = |list: &[String]| compile_intent_phrases(list, &synonyms);
        let (mut intents, mut entities) = concepts(&raw, &intent_phrases, &phrases);
        extend(&mut intents, &catalog.lexicon().intents, &synonyms);
        extend(&mut entities, &catalog.lexicon().entities, &synonyms);

        Ok(Self {
            stopwords: keys(&raw.stopwords),
            verbs: &stems(&raw.verbs) | &catalog_verbs(catalog, &raw.word_classes),
            abbreviations: forms(&raw.abbreviations),
            sequencers: exact_phrases(&raw.sequencers),
            soft_sequencers: exact_phrases(&raw.soft_sequencers),
            request_openers: exact_phrases(&raw.request_openers),
            unordered_sequencers: forms(&raw.unordered_sequencers),
            relative_markers: forms(&raw.relative_markers),
            presentational: exact_phrases(&raw.presentational),
            background: exact_phrases(&raw.background),
            report_back: ReportBack::compile(&raw.report_back),
            declining: Declining::compile(&raw.declining),
            progressive_question: Progressive::compile(&raw.progressive_question),
            situation: Situation::compile(&raw.situation, &synonyms),
            lookup_verbs: raw.lookup_verbs.iter().map(|w| synonyms.key(w)).collect(),
            reading_verbs: raw.reading_verbs.iter().map(|w| synonyms.key(w)).collect(),
            describing: exact_phrases(&raw.describing),
            topic_markers: exact_phrases(&raw.topic_markers),
            target_markers: exact_phrases(&raw.target_markers),
            anchor_markers: exact_phrases(&raw.anchor_markers),
            light_verbs: stems(&raw.light_verbs),
            support_verbs: stems(&raw.support_verbs),
            destructive_verbs: stems(&raw.destructive_verbs),
            changing_intents: raw.changing_intents,
            articles: Articles::compile(raw.object_articles),
            entity_intents: raw.entity_intents.into_iter().collect(),
            vague_objects: forms(&raw.vague_objects),
            back_references: phrases(&raw.back_references),
            weak_back_references: exact_phrases(&raw.weak_back_references),
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
        self.intent(intent).is_some_and(|c| c.phrase_at(tokens, at))
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

    /// The noun of an act after a support verb and "a"/"an", one describing word
    /// allowed between ("make a release *build*", "give my work a code *review*"):
    /// where the clause's intent is said, instead of by the verb.
    pub fn act_noun(&self, tokens: &[Token], head: usize) -> Option<usize> {
        let verb = tokens.get(head)?;
        if verb.value || !self.support_verbs.contains(&verb.stem) {
            return None;
        }
        let indefinite = |t: &Token| {
            self.words.articles.contains(&t.form) && self.articles.of(&t.form) == Some(Article::New)
        };
        let article = (head + 1..tokens.len()).find(|&i| indefinite(&tokens[i]))?;
        // The compound's last word is its head: "a release *build*".
        (article + 1..tokens.len().min(article + 3))
            .rev()
            .find(|&at| {
                (self.intents.iter())
                    .flat_map(|c| &c.phrases)
                    .any(|p| p.len() == 1 && p.matches_at(tokens, at))
            })
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

    /// Whether the verb at `head` brings its object to the one asking ("show *me* the
    /// folder's contents"): the object's article then says it exists, not that it is to
    /// be changed.
    pub fn brings_to_asker(&self, tokens: &[Token], head: Option<usize>) -> bool {
        head.and_then(|h| tokens.get(h + 1))
            .is_some_and(|t| !t.value && self.words.asker_pronouns.contains(&t.form))
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

    /// The families of a file (`file_types`): the first whose extensions or names hold
    /// it, then the ones it belongs to as well; none for a path of no known type.
    pub fn file_families(&self, path: &str) -> impl Iterator<Item = &str> {
        let family = self.file_types.iter().find(|t| t.holds(path));
        family.into_iter().flat_map(FileType::families)
    }

    pub fn is_determiner(&self, tok: &Token) -> bool {
        self.articles.existing.contains(&tok.form) || self.articles.new.contains(&tok.form)
    }

    /// An article, or a possessive ("my", "our"): what opens a noun phrase.
    pub fn opens_noun_phrase(&self, tok: &Token) -> bool {
        self.is_determiner(tok) || self.words.possessives.contains(&tok.form)
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
    /// pronoun, a modal or a word for an outcome ("the result") that stands for that
    /// step's outcome; after a `showing` opening ("show me") no question word may come
    /// first. "tell me what the weather is" names a thing of its own and is not. A short
    /// question whose subject stands for that outcome reports back too
    /// ([`Lexicon::asks_about_it`]).
    pub fn reports_back(&self, tokens: &[Token]) -> bool {
        let rb = &self.report_back;
        let tokens = &tokens[self.lead_in(tokens)..];
        let longest = |phrases: &[Phrase]| longest_at(phrases, tokens, 0);
        let (opened, showing) = match longest(&rb.openings) {
            Some(len) => (len, false),
            None => match longest(&rb.showing) {
                Some(len) => (len, true),
                None => return self.asks_about_it(tokens),
            },
        };
        let mut rest = tokens.get(opened..).unwrap_or_default();
        if let Some((first, after)) = rest.split_first()
            && !showing
            && (self.question_words.contains(&first.form) || rb.lead_ins.contains(&first.form))
        {
            rest = after;
        }
        let about_it = |t: &Token| rb.about_it.contains(&t.form);
        // "… and show me *the* result": an article may come before the outcome's word.
        if let [article, after @ ..] = rest
            && self.is_determiner(article)
            && after.first().is_some_and(about_it)
        {
            rest = after;
        }
        rest.first().is_none_or(about_it)
    }

    /// Where an opening that asks to be told ends ("*tell me* which model powers you",
    /// "*can you tell me* why"; `report_back.openings` after any request opener), 0
    /// where the clause has none. The opening asks the assistant to answer: its verb
    /// sends no message to anyone.
    pub fn told_until(&self, tokens: &[Token]) -> usize {
        let lead = self.lead_in(tokens);
        longest_at(&self.report_back.openings, tokens, lead).map_or(0, |len| lead + len)
    }

    /// How many tokens the person leads in with ("*can you* find out why",
    /// `request_openers`): they say nothing of what is asked.
    fn lead_in(&self, tokens: &[Token]) -> usize {
        longest_at(&self.request_openers, tokens, 0).unwrap_or(0)
    }

    /// Whether a clause is a short question about the step before, that step's outcome
    /// its subject: a question word, an auxiliary, one of `asked`, and at most one word
    /// more ("… and what did it say", "…, how did they go"). "what did I save" asks
    /// about something else.
    fn asks_about_it(&self, tokens: &[Token]) -> bool {
        match tokens {
            [question, auxiliary, subject, rest @ ..] => {
                self.question_words.contains(&question.form)
                    && self.question_auxiliaries.contains(&auxiliary.form)
                    && self.report_back.asked.contains(&subject.form)
                    && rest.len() <= 1
            }
            _ => false,
        }
    }

    /// Where the verbs of a question in the progressive may start: after the form of
    /// "be" of a clause that opens with a question word ("what backend *is* this
    /// session running on"). Such a verb in -ing says what is going on; it asks for
    /// none of `progressive_question.describes`.
    pub fn progressive_from(&self, tokens: &[Token]) -> Option<usize> {
        let asks = tokens
            .first()
            .is_some_and(|t| self.question_words.contains(&t.form));
        let aux = &self.progressive_question.auxiliaries;
        asks.then(|| tokens.iter().position(|t| aux.contains(&t.form)))
            .flatten()
            .map(|at| at + 1)
    }

    /// Whether a clause says what not to do, from its token `at` on: a `declining`
    /// opening then a verb ("don't commit", read "do not commit"; "never push to main"),
    /// or a verb then a declining object that ends the clause ("commit nothing", not
    /// "add nothing fancy to my playlist"). Such a clause asks for no step: planning it
    /// would do what the person ruled out.
    pub fn declines(&self, tokens: &[Token], at: usize) -> bool {
        let verb_at = |i: usize| tokens.get(i).is_some_and(|t| self.is_verb(t));
        let opened = (self.declining.openings.iter())
            .any(|p| p.matches_at(tokens, at) && verb_at(at + p.len()));
        opened
            || verb_at(at)
                && (self.declining.objects.iter())
                    .any(|p| p.matches_at(tokens, at + 1) && at + 1 + p.len() == tokens.len())
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

    /// Whether a word beside a word for a folder can be the folder's name ("the *docs*
    /// folder", "the folder *src*"): a content word made of name characters that is
    /// neither another word for a folder, nor one that only says which folder ("the
    /// *new* folder"), nor a preposition, nor one that opens a cue ("a folder *called*
    /// build").
    pub fn can_name_a_folder(&self, tok: &Token) -> bool {
        let words = &self.words;
        self.is_content(tok)
            && !words.folder_nouns.contains(&tok.form)
            && !words.folder_describers.contains(&tok.form)
            && !words.prepositions.contains(&tok.form)
            && !self.opens_cue(&tok.form)
            && tok
                .form
                .chars()
                .all(|c| c.is_alphanumeric() || "-_.".contains(c))
    }

    /// Whether a clause names a folder by a bare word beside the word for one ("what's
    /// inside the *src* folder"), other than its head verb: a thing for a tool to act on,
    /// as a path would be.
    pub fn names_folder_by_word(&self, tokens: &[Token], head_verb: Option<usize>) -> bool {
        let names = |at: usize| {
            Some(at) != head_verb && tokens.get(at).is_some_and(|t| self.can_name_a_folder(t))
        };
        tokens.iter().enumerate().any(|(at, t)| {
            self.words.folder_nouns.contains(&t.form)
                && (at.checked_sub(1).is_some_and(names) || names(at + 1))
        })
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

/// The catalog's words that every plan stems: each artifact kind its entries make or
/// take (whole and word by word), for linking a later step to an earlier one, and the
/// words of its tools' names and of their arguments' names, for reading which words of a
/// request name an argument.
fn catalog_words(catalog: &Catalog) -> Vec<String> {
    let tools = catalog
        .tools()
        .iter()
        .flat_map(|t| t.produces.iter().chain(&t.accepts));
    let pipelines = catalog
        .pipelines()
        .iter()
        .flat_map(|p| p.produces.iter().chain(&p.accepts));
    let plans = catalog.plans().iter().flat_map(|d| d.produces.iter());
    let kinds = tools.chain(pipelines).chain(plans).flat_map(|k| {
        let mut forms = crate::args::name_parts(k);
        forms.push(k.to_lowercase());
        forms
    });
    let names = catalog.tools().iter().flat_map(|t| {
        let own = crate::text::without_server(&t.name);
        std::iter::once(own)
            .chain(t.properties().map(|(arg, _)| arg))
            .flat_map(crate::args::name_parts)
    });
    kinds.chain(names).collect()
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
    fn a_bare_word_beside_a_word_for_a_folder_names_one() {
        let lex = lexicon();
        let names = |text: &str| {
            let tokens = lex.tokenize(text, &[]);
            let head = tokens.iter().position(|t| lex.is_verb(t));
            lex.names_folder_by_word(&tokens, head)
        };
        assert!(names("what's inside the src folder"));
        assert!(names("list the folder docs"));
        // Saying which folder, or asking which folders there are, names none.
        assert!(!names("what's in the new folder"));
        assert!(!names("which folders can you access"));
        assert!(!names("list the directory"));
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
            "show it to me",
            "show me the result",
            "tell me the outcome",
            // A lead-in, a verb of finding out, a short question about it.
            "can you tell me why",
            "can you find out why",
            "figure out why it failed",
            "what did it say",
            "how did they go",
        ] {
            assert!(reports(yes), "{yes}");
        }
        for no in [
            "figure out what the weather is",
            "what did I save",
            "what did it say about the budget",
            "can you find the config",
            "tell me what the weather is",
            "tell me the routing number",
            "show me what it says",
            "show me what's in the folder",
            "show me the logs",
            "order a coffee",
            "",
        ] {
            assert!(!reports(no), "{no}");
        }
    }

    #[test]
    fn a_support_verb_gives_way_to_the_noun_of_its_act() {
        let lex = lexicon();
        let act = |text: &str| {
            let toks = lex.tokenize(text, &[]);
            lex.act_noun(&toks, 0).map(|i| toks[i].form.clone())
        };
        assert_eq!(act("make a release build").as_deref(), Some("build"));
        assert_eq!(act("give it a quick review").as_deref(), Some("review"));
        // No act named, no article, or no support verb.
        assert_eq!(act("make a video of the launch"), None);
        assert_eq!(act("make the build faster"), None);
        assert_eq!(act("run a build"), None);
    }

    #[test]
    fn an_opening_that_asks_to_be_told_ends_where_the_question_starts() {
        let lex = lexicon();
        let told = |text: &str| lex.told_until(&lex.tokenize(text, &[]));
        assert_eq!(told("tell me which model powers you"), 2);
        assert_eq!(told("can you tell me why"), 4);
        assert_eq!(told("tell Bob the build is green"), 0);
    }

    #[test]
    fn a_clause_declines_with_a_negated_verb_or_nothing_to_act_on() {
        let lex = lexicon();
        let declines = |text: &str| lex.declines(&lex.tokenize(text, &[]), 0);
        for yes in [
            "don't commit",
            "do not push anything",
            "never push to main",
            "no need to email anyone",
            "commit nothing",
            "change nothing else",
        ] {
            assert!(declines(yes), "{yes}");
        }
        // A negation inside the clause, or one before no verb, rules nothing out here.
        for no in [
            "run the tests",
            "what did not pass",
            "not the slow ones",
            "nothing",
            "add nothing fancy to my playlist",
            "",
        ] {
            assert!(!declines(no), "{no}");
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
    fn an_intents_word_stands_for_its_group_only_where_the_intent_says_the_groups_own() {
        let lex = lexicon();
        let starts = |intent: &str, text: &str| {
            let tokens = lex.tokenize(text, &[]);
            let concept = lex.intent(intent).expect("a built-in intent");
            concept
                .phrases
                .iter()
                .any(|p| p.find_all(&tokens).next().is_some())
        };
        // `create` says "draw", a word of the `image` group, but never "image".
        assert!(starts("create", "draw a cat"));
        assert!(!starts(
            "create",
            "a high level picture of how this repo is organized"
        ));
        assert!(!starts("create", "show me the photo"));
        // `remember` says "remember", its group's own word: "stash" is one of it.
        assert!(starts("remember", "stash my wifi password"));
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
