//! The rules that reweigh a candidate for what the clause asks: what it is given, the
//! kind of thing asked to be made or changed, the age of what it acts on, and harm.

use waypoint_protocol::ExtractedKind;

use crate::lexicon::{Article, Lexicon};
use crate::meaning::{MeaningState, merge_max};
use crate::text::Token;

use super::doc::Doc;
use super::grammar::{answers, names, object_value};
use super::rank::{
    Ordering, Reason, Share, best_score, blend, blend_ordering, reorder, settle_level,
};
use super::{
    ACTS_ON_SOMETHING_ELSE, ASKED_ELSEWHERE, CONSUMES_TARGET, DESTROYS_SOMETHING_ELSE, Hints,
    MAKES_ANOTHER, NAMED_BY_OBJECT, NOT_FOR_THE_FILE, OTHER_AGE, READS_FOR_A_CHANGE, RouteIndex,
    TAKES_NOTHING_GIVEN, W_ARTICLE, W_TARGET,
};

/// Without an encoder, the static word vectors' standing (`gist`) reorders a clause's
/// candidates only where the words' best score is under `GIST_UNSURE`: they tell a
/// horoscope from a to-do list where the words found nothing sure, but not "set an
/// alarm" from "change an alarm", which the words tell apart. It then takes
/// `GIST_SHARE` of each score.
/// Where the words found next to nothing, the best keeps `GIST_FLOOR` of its standing,
/// so the order shows in the scores ("closest: `forkful` at 0.09", not a row of 0.00);
/// at most 0.2, under the default threshold.
const GIST_UNSURE: f64 = 0.45;
const GIST_SHARE: f64 = 0.4;
const GIST_FLOOR: f64 = 0.2;
/// Without an encoder, where requests ask for one entry each, the share of a score the
/// requests nearest by static word vectors take after the trained router's (an
/// encoder's vote takes `neighbours_weight`, 0.5: its vectors are the surer).
const WORDS_NEAR_SHARE: f64 = 0.4;

impl RouteIndex {
    /// Scales by `factor` the scores of the entries `applies` to.
    fn scale_where(&self, scored: &mut [(f64, u32)], factor: f64, applies: impl Fn(&Doc) -> bool) {
        for (score, doc) in scored.iter_mut() {
            if self.docs.get(*doc as usize).is_some_and(&applies) {
                *score *= factor;
            }
        }
    }

    /// An entry that takes no arguments loses part of its score, second opinions
    /// included, when the clause names a file, a page, an address or a folder ("the
    /// *src* folder") for it to act on. `tokens`: the clause's own words, not the ones a
    /// question means beside them ("what's inside the folder" means "list", which names
    /// no folder).
    pub(super) fn given_what_it_cannot_take(
        &self,
        tokens: &[Token],
        hints: &Hints<'_>,
        lex: &Lexicon,
        scored: &mut [(f64, u32)],
    ) {
        let names_a_thing = hints.supplied.iter().any(|k| {
            matches!(
                k,
                ExtractedKind::Paths | ExtractedKind::Urls | ExtractedKind::Emails
            )
        }) || lex.names_folder_by_word(tokens, hints.head_verb);
        if !names_a_thing {
            return;
        }
        self.scale_where(scored, TAKES_NOTHING_GIVEN, |d| d.takes_nothing);
    }

    /// An entry named for directories and not for files loses part of its score,
    /// second opinions included, when the clause names a file by its extension and no
    /// folder: "how big is report.pdf" asks the file's metadata, not a folder's listing
    /// with sizes.
    pub(super) fn given_a_file(
        &self,
        tokens: &[Token],
        hints: &Hints<'_>,
        lex: &Lexicon,
        scored: &mut [(f64, u32)],
    ) {
        if hints.file_types.is_empty() || lex.unsaid.names_a_folder(tokens) {
            return;
        }
        self.scale_where(scored, NOT_FOR_THE_FILE, |d| {
            lex.unsaid.named_for_a_folder_only(&d.name_keys)
        });
    }

    /// "update src/main.rs": the verb acts on a file, so an entry that says what it
    /// acts on (`accepts`) and takes neither a path nor the file's kind is not what acts
    /// on it, however well the verb names it (`update_workflow` acts on workflows). It
    /// loses part of its score, second opinions included.
    pub(super) fn acts_on_a_file(
        &self,
        tokens: &[Token],
        hints: &Hints<'_>,
        lex: &Lexicon,
        scored: &mut [(f64, u32)],
    ) {
        let Some(object) = hints
            .head_verb
            .and_then(|h| object_value(tokens, h, lex))
            .map(|i| &tokens[i])
        else {
            return;
        };
        let families: Vec<String> = (lex.file_families(&object.form))
            .map(|f| lex.synonyms.key(f))
            .collect();
        if families.is_empty() {
            return;
        }
        self.scale_where(scored, ACTS_ON_SOMETHING_ELSE, |d| {
            !d.takes.contains(&ExtractedKind::Paths)
                && !d.accepts.is_empty()
                && !d.accepts.iter().any(|a| families.contains(a))
        });
    }

    /// Meaning and the trained router, each blended into the scores in turn; meaning
    /// also reads the clause after what the request sets out before it.
    pub(super) fn second_opinions(
        &self,
        hints: &Hints<'_>,
        scored: &mut Vec<(f64, u32)>,
        reasons: &mut Vec<(u32, f64, Reason<'_>)>,
    ) {
        let text = hints.text;
        if text.trim().is_empty() {
            return;
        }
        if let MeaningState::On(m) = &self.meaning {
            let share = Share {
                weight: m.weight(),
                lead: m.lead_weight(),
            };
            let mut said = m.scores(text);
            if let Some(setting) = &hints.setting {
                said = said.or_higher(m.scores(setting));
            }
            match said.relative {
                None => blend(share, said.absolute, scored, reasons, Reason::Meaning),
                Some(relative) => {
                    let opinion = Ordering {
                        level: said.absolute,
                        order: relative,
                    };
                    blend_ordering(share, opinion, scored, reasons, Reason::Meaning);
                }
            }
        } else if let Some(gist) = &self.gist
            && best_score(scored) < GIST_UNSURE
        {
            let mut standing = gist.standing(text);
            if let Some(setting) = &hints.setting {
                standing = merge_max(standing, gist.standing(setting));
            }
            let floor = standing.iter().map(|s| f64::from(s.1)).fold(0.0, f64::max) * GIST_FLOOR;
            reorder(Share::even(GIST_SHARE), floor, standing, scored, reasons);
        }
        if let Some(learned) = &self.learned {
            let share = Share::even(learned.weight);
            // Blended before the router, meaning would be a few percent of a score the
            // router leads; the requests closest in meaning get a share of their own.
            // Only where requests ask for one entry each: a request asking for two is
            // no neighbour of a clause asking for one of them.
            let voters = match &self.meaning {
                MeaningState::On(m) if learned.one_at_a_time() => Some((m, scored.clone())),
                _ => None,
            };
            blend(
                share,
                learned.candidates(text),
                scored,
                reasons,
                Reason::Learned,
            );
            if let Some((m, mut sure)) = voters {
                // An encoder's closest requests say how sure the router's best entry is,
                // not which entry is best: its network ranks the entries far better
                // than they do (CLINC150 dev: 96.8% of in-scope requests against 89.5%).
                let opinion = learned.sure_candidates(text);
                blend(share, opinion, &mut sure, &mut Vec::new(), Reason::Learned);
                // The closest requests by sentence vector and as the network reads them
                // vote together (docs/routing.md, "Requests").
                let mut near = m.neighbours(text);
                if let Some(read) = learned.network_near(text) {
                    near = crate::meaning::mean_votes(&near, &read);
                }
                settle_level(
                    Share::even(m.neighbours_weight()),
                    near,
                    sure,
                    scored,
                    reasons,
                    Reason::Meaning,
                );
            } else if let Some(near) = learned.words_near(text) {
                // Without an encoder, the same vote by the static word vectors (built only
                // where requests ask for one entry each).
                blend(
                    Share::even(WORDS_NEAR_SHARE),
                    near,
                    scored,
                    reasons,
                    Reason::NearRequests,
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
    pub(super) fn asked_of_untaught(
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
        let best = best_score(scored);
        for s in scored.iter_mut() {
            s.0 *= ASKED_ELSEWHERE;
        }
        answers(doc, best, &tokens[asked].form, scored, reasons);
    }

    /// "describe pittsburgh airport": where the trained model leads the score but places
    /// the clause nowhere (no entry reaches [`NAMED_BY_OBJECT`]), the labelled requests
    /// never phrased it this way; when the verb's object is the word one entry is named
    /// by, that entry is what the clause acts on.
    pub(super) fn object_names_entry<'s>(
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
    pub(super) fn object_unknown(
        &self,
        object: Option<&Token>,
        kind: Option<&str>,
        lex: &Lexicon,
    ) -> bool {
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
    pub(super) fn kind_of<'l>(&self, object: &Token, lex: &'l Lexicon) -> Option<&'l str> {
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
    pub(super) fn with_target<'s>(
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
    pub(super) fn age_fit(
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

    /// What the clause asks to be made of its object's kind: a new one ("*create an
    /// agent* that …": a making verb, an indefinite article) or a changed one ("*move the*
    /// workflow": a changing verb, a definite article), where one of the entries in reach
    /// declares it makes that (`Doc::declares`): a catalog that declares no products is
    /// not judged by them. The entries that make something else (`Doc::answers`) do not
    /// answer the clause.
    pub(super) fn asked_kind<'t>(
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
    pub(super) fn makes_what_is_asked(&self, asked: Option<Asked<'_>>, scored: &mut [(f64, u32)]) {
        let Some(asked) = asked else {
            return;
        };
        self.scale_where(scored, MAKES_ANOTHER, |d| !d.answers(asked));
    }

    /// A clause whose verb asks for a change ("*remember* my wifi password", "*update*
    /// the README") is no request for a tool that only reads, however well its other
    /// words fit it (a vault that fetches passwords): where an entry in reach changes
    /// things and its own words express the verb's intent, the entries that only read keep
    /// [`READS_FOR_A_CHANGE`] of their scores, second opinions included. A catalog that
    /// says nothing of effects (every tool reads, by default) is not judged by them.
    pub(super) fn reads_where_change_is_asked(
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

    /// What is left of a destructive entry's score where it would destroy something the
    /// clause does not name (its arguments take none of the values given), and again
    /// where the clause asks for no change ([`ChangeAsked`]).
    pub(super) fn harm_factor(
        &self,
        d: &Doc,
        hints: &Hints<'_>,
        change: &ChangeAsked<'_>,
        lacks_object: bool,
    ) -> f64 {
        if !d.destructive() {
            return 1.0;
        }
        let mut factor = 1.0;
        // Nor when the clause names what it destroys by a word the catalog has and the
        // entry's words lack it ("remove the *relation* between …" to `move_file`).
        if !d.can_take(&hints.supplied) || lacks_object {
            factor *= DESTROYS_SOMETHING_ELSE;
        }
        if !change.of_entry(self.name_stems(&d.id)) {
            factor *= DESTROYS_SOMETHING_ELSE;
        }
        factor
    }
}

/// What a clause asks to be made of a kind of thing ([`RouteIndex::asked_kind`]).
#[derive(Clone, Copy)]
pub(super) enum Asked<'k> {
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
pub(super) enum ChangeAsked<'t> {
    Yes,
    No,
    /// Only of an entry whose name has this verb.
    IfNamedBy(&'t Token),
}

impl<'t> ChangeAsked<'t> {
    pub(super) fn of(tokens: &'t [Token], hints: &Hints<'_>, lex: &Lexicon) -> Self {
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
