//! What the words of a clause are doing: a verb's object, its complement, participles
//! and modifiers, word pairs, and the words a question means without saying.

use std::borrow::Cow;

use crate::lexicon::Lexicon;
use crate::text::Token;

use super::rank::Reason;
use super::{Hints, SCALE};

/// Whether `verb` is a word of the entry's name, given the name's stems
/// ([`RouteIndex::name_stems`]): "edit main.rs" asks for `edit_file` by name.
pub(crate) fn names(verb: &Token, name_stems: &[String]) -> bool {
    name_stems.iter().any(|w| *w == verb.stem || *w == verb.key)
}

/// The head noun of the noun phrase after the verb at `h`: the last of the content words
/// that follow it (skipping a particle, articles and pronouns), stopping at the first other word,
/// a verb, a preposition ("the relation *between* …") or a cue that a value follows ("a
/// folder *named* logs" acts on a folder).
pub(crate) fn object_noun(tokens: &[Token], h: usize, lex: &Lexicon) -> Option<usize> {
    let mut i = object_start(tokens, h, lex);
    let mut last = None;
    while let Some(t) = tokens.get(i) {
        if t.value
            || !lex.is_content(t)
            || t.identifier
            || t.proper
            || (last.is_some()
                && (lex.is_verb(t)
                    || lex.words.prepositions.contains(&t.form)
                    || post_modifier(tokens, i, lex)
                    || lex.opens_cue(&t.form)))
        {
            break;
        }
        last = Some(i);
        i += 1;
    }
    last
}

/// Where the noun phrase after the verb at `h` starts: past a particle that is part of
/// the verb ("kick *off* a build", "turn *off* the lights") and the articles and
/// pronouns before the phrase's first word.
fn object_start(tokens: &[Token], h: usize, lex: &Lexicon) -> usize {
    let mut i = h + 1;
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
    i
}

/// The value the verb at `h` acts on, when the noun phrase after it is that value
/// ("translate *notes.txt*", "email my *report.md*"): the value's token.
pub(crate) fn object_value(tokens: &[Token], h: usize, lex: &Lexicon) -> Option<usize> {
    let i = object_start(tokens, h, lex);
    tokens.get(i).is_some_and(|t| t.value).then_some(i)
}

/// "Fetch a *stored* credential", "checks a *saved* search": a past participle between a
/// determiner and a noun describes the thing the entry acts on, not what the entry does,
/// so "remember my password" is no request for the tool that fetches one.
pub(super) fn attributive_participle(tokens: &[Token], i: usize, lex: &Lexicon) -> bool {
    tokens[i].form.ends_with("ed")
        && i > 0
        && lex.is_determiner(&tokens[i - 1])
        && tokens.get(i + 1).is_some_and(|t| lex.is_content(t))
}

/// Each two content words next to each other, function words between them aside, by
/// key. A participle after a noun describes it ("a diff *showing* the changes"): what
/// the entry gives back, not what it does, so it pairs with neither neighbour.
pub(super) fn word_pairs(tokens: &[Token], lex: &Lexicon) -> Vec<(String, String)> {
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
pub(super) fn answers(
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
pub(super) fn names_earlier_output(
    tokens: &[Token],
    i: usize,
    earlier: &[String],
    lex: &Lexicon,
) -> bool {
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

/// Where a complement of the head verb at `h` starts: words that describe its object
/// rather than ask the catalog for something, so they weigh like a relative clause.
/// - "teach the onboarding agent *to also send* a welcome email": after the object of a
///   verb that is neither light nor a function word, "to" and a verb say what the object
///   should do. After a light verb they are the request ("set an alarm to go off at
///   6:45"), as after "use" ("use my card to make a repayment").
/// - "save *what you find*", "look over *what I've changed*": "what" and a subject
///   pronoun after the verb (an auxiliary may follow) make its object, something
///   another step produces or that exists already.
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
        .filter(|&i| {
            // "what I*'ve* changed": an auxiliary may stand before the verb.
            let past_auxiliary = tokens
                .get(i + 2)
                .is_some_and(|t| lex.question_auxiliaries.contains(&t.form));
            lex.opens_free_relative(tokens, i) && verb_after(i + 2 + usize::from(past_auxiliary))
        });
    to_verb.into_iter().chain(what_subject).min()
}

/// The clause's tokens followed by those of the words it means without saying them
/// (docs/routing.md, item 1: "how big" means a size); borrowed where there are none.
pub(super) fn with_unsaid<'t>(
    tokens: &'t [Token],
    hints: &Hints<'_>,
    lex: &Lexicon,
) -> Cow<'t, [Token]> {
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
pub(super) fn target_words<'t>(tokens: &'t [Token], lex: &Lexicon) -> Vec<&'t Token> {
    Lexicon::after_marker(&lex.target_markers, tokens)
        .map(|from| {
            tokens[from..]
                .iter()
                .filter(|t| lex.is_content(t))
                .collect()
        })
        .unwrap_or_default()
}
