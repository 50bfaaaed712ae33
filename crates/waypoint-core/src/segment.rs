//! Splits a request into clauses: at sentence ends, semicolons and list lines, at
//! sequencers ("then", "after that", "finally"), at "and"/commas that join two verb
//! phrases — but never inside a noun phrase ("terms and conditions") or inside a
//! relative clause that describes something ("an agent that checks X and emails me") —
//! and at "but" before a clause that says what not to do ("… but don't commit"). Each
//! clause gets its role: an action, material for the others, or declined.

use waypoint_protocol::{Clause, ClauseRole, TextSpan};

use crate::lexicon::Lexicon;
use crate::text::Token;

/// A clause with its tokens (indices into the request's token list).
#[derive(Debug, Clone)]
pub struct Segment {
    pub clause: Clause,
    pub tokens: Vec<Token>,
    /// Where the clause could have been split but was not ("… playlist and humidity in
    /// Denver"): `(left_end, right_start)` token indices around an "and", "or" or comma.
    /// A trained router may still find two requests there. Joints inside one phrase
    /// ("between Toronto and Detroit") are not listed.
    pub joints: Vec<(usize, usize)>,
    /// The clause runs after the clauses before it: a sequencer that orders ("then",
    /// "after that") opened it, or it is a later item of a numbered list.
    pub follows: bool,
    /// A question mark ends the clause.
    pub asks: bool,
}

/// Splits the request's tokens into clauses. `text` is the original request.
/// `declined_alone`: whether a request whose every clause says what not to do is read
/// so (no step). Where labelled requests lead routing, they say what such a request
/// means instead: CLINC150 teaches "don't sync with my phone anymore" as a request to
/// change how syncing works.
pub fn segment(text: &str, tokens: &[Token], lex: &Lexicon, declined_alone: bool) -> Vec<Segment> {
    // Where a numbered item ("2." or "b)" opening a line) starts: its order is the list's.
    let numbered: Vec<usize> = tokens
        .windows(2)
        .filter(|w| is_list_marker(text, &w[0]))
        .map(|w| w[1].start)
        .collect();
    // Most requests have no list: their tokens are read as they are, not copied.
    let unmarked: Vec<Token>;
    let tokens: &[Token] = if tokens.iter().any(|t| is_list_marker(text, t)) {
        unmarked = (tokens.iter())
            .filter(|t| !is_list_marker(text, t))
            .cloned()
            .collect();
        &unmarked
    } else {
        tokens
    };
    let mut segments: Vec<(Vec<Token>, bool)> = Vec::new();
    for run in hard_runs(text, tokens, lex) {
        split_run(text, run, lex, &mut segments);
    }
    let mut segments: Vec<(Vec<Token>, bool)> = segments
        .into_iter()
        .filter(|(t, _)| !t.is_empty())
        .collect();
    for (i, (toks, follows)) in segments.iter_mut().enumerate() {
        if i > 0 && toks.first().is_some_and(|t| numbered.contains(&t.start)) {
            *follows = true;
        }
    }
    if let Some((_, first)) = segments.first_mut() {
        *first = false;
    }
    // A request made only of material ("i have lost my phone") still asks for something:
    // its clauses are actions, not context for actions that are not there.
    // A clause after nothing but a comma continues the one before ("…, which are
    // dishes 101 and 102"); after "and" or "then" it is a request of its own ("… and
    // then which is the nearest cinema").
    let after_comma: Vec<bool> = (0..segments.len())
        .map(|i| {
            i > 0
                && (segments[i - 1].0.last())
                    .zip(segments[i].0.first())
                    .and_then(|(a, b)| text.get(a.end..b.start))
                    .is_some_and(|gap| gap.trim() == ",")
        })
        .collect();
    let count = segments.len();
    let presents = |i: usize, toks: &[Token]| {
        opens_presenting(toks, lex)
            // "build it, and *if it compiles*, run the tests": a condition on how the
            // step before went, between two requests, asks for nothing itself.
            || (0 < i && i + 1 < count && on_the_outcome(toks, lex))
            || is_label_line(text, toks)
            || lex.background.iter().any(|p| p.matches_at(toks, 0))
            || after_comma[i] && lex.describing.iter().any(|p| p.matches_at(toks, 0))
    };
    let all_context = (segments.iter().enumerate()).all(|(i, (toks, _))| presents(i, toks));
    let declines: Vec<bool> = (segments.iter())
        .map(|(toks, _)| lex.declines(toks, past_fillers(toks, 0, lex)))
        .collect();
    let all_declined = declines.iter().all(|d| *d);
    segments
        .into_iter()
        .enumerate()
        .map(|(index, (toks, follows))| {
            let start = toks.first().map_or(0, |t| t.start);
            let end = toks.last().map_or(0, |t| closing_quote_end(text, t));
            let role = if declines[index] && (declined_alone || !all_declined) {
                ClauseRole::Declined
            } else if !all_context && presents(index, &toks) {
                ClauseRole::Context
            } else {
                ClauseRole::Action
            };
            let joints = (1..toks.len())
                .filter_map(|i| joint_at(text, &toks, i).map(|next| (i, next)))
                .filter(|&(at, next)| next < toks.len() && !inside_one_phrase(&toks, at, next, lex))
                .collect();
            let asks = (toks.last())
                .and_then(|t| text.get(t.end..))
                .is_some_and(|after| after.trim_start().starts_with('?'));
            Segment {
                joints,
                follows,
                asks,
                clause: Clause {
                    index,
                    text: text.get(start..end).unwrap_or_default().to_string(),
                    span: TextSpan { start, end },
                    role,
                },
                tokens: toks,
            }
        })
        .collect()
}

/// Whether the clause is a condition whose subject stands for the outcome of the step
/// before ("if *it* compiles", "unless *they* fail"; `conditions`, then one of
/// `report_back.asked`). "if my card was stolen" names a thing of its own.
fn on_the_outcome(toks: &[Token], lex: &Lexicon) -> bool {
    matches!(toks, [condition, subject, ..]
        if lex.words.conditions.contains(&condition.form)
            && lex.report_back.asked.contains(&subject.form))
}

/// Whether the clause opens by presenting material ("here's …", "I have …").
fn opens_presenting(toks: &[Token], lex: &Lexicon) -> bool {
    lex.presentational.iter().any(|p| p.matches_at(toks, 0))
}

/// "Video link: https://…", "Email: ana@example.com": up to three words, a colon and
/// nothing but values. Such a line gives material for the request's steps; it asks for
/// no step of its own.
fn is_label_line(text: &str, toks: &[Token]) -> bool {
    let colon = (1..toks.len().min(4)).find(|&i| {
        text.get(toks[i - 1].end..toks[i].start)
            .is_some_and(|gap| gap.trim() == ":")
    });
    colon.is_some_and(|c| toks[..c].iter().all(|t| !t.value) && toks[c..].iter().all(|t| t.value))
}

/// Where a clause ending in token `t` ends: after the closing quote of a quotation it
/// ends with (the token is the quotation's inside), so the clause reads as written.
fn closing_quote_end(text: &str, t: &Token) -> usize {
    const QUOTES: [char; 5] = ['\'', '"', '”', '’', '`'];
    let opened = text
        .get(..t.start)
        .and_then(|before| before.chars().next_back())
        .is_some_and(|c| QUOTES.contains(&c) || c == '“' || c == '‘');
    match text.get(t.end..).and_then(|after| after.chars().next()) {
        Some(c) if opened && QUOTES.contains(&c) => t.end + c.len_utf8(),
        _ => t.end,
    }
}

/// "1." or "a)" opening a line: numbering, not words.
fn is_list_marker(text: &str, t: &Token) -> bool {
    // Only blank space back to the line's start (read back from the token, so a long line
    // costs one step per token, not its length).
    let before_blank = || {
        text[..t.start]
            .chars()
            .rev()
            .take_while(|&c| c != '\n')
            .all(char::is_whitespace)
    };
    let after = text[t.end..].chars().next();
    let short =
        t.end - t.start <= 3 && (t.form.chars().all(|c| c.is_ascii_digit()) || t.form.len() == 1);
    !t.value && short && matches!(after, Some('.' | ')')) && before_blank()
}

/// Groups tokens between hard breaks: `;`, line breaks, and `.`/`!`/`?` that end a
/// sentence (followed by white space or the end). Values (URLs…) are tokens already, so
/// their dots never count.
fn hard_runs<'t>(text: &str, tokens: &'t [Token], lex: &Lexicon) -> Vec<&'t [Token]> {
    let mut runs = Vec::new();
    let mut from = 0;
    for i in 1..tokens.len() {
        let gap = text
            .get(tokens[i - 1].end..tokens[i].start)
            .unwrap_or_default();
        // "st. louis", "at 9 a.m. tomorrow": the period of an abbreviation (a listed one,
        // or a letter after a letter and a period) before a lower-case word ends nothing.
        let initialism = tokens[i - 1].form.chars().count() == 1
            && i >= 2
            && text.get(tokens[i - 2].end..tokens[i - 1].start) == Some(".")
            && tokens[i - 2].form.chars().count() == 1;
        let abbreviated = gap.trim_end() == "."
            && (initialism || lex.abbreviations.contains(&tokens[i - 1].form))
            && text
                .get(tokens[i].start..)
                .and_then(|t| t.chars().next())
                .is_some_and(char::is_lowercase);
        let breaks = gap.contains(';')
            || gap.contains('\n')
            || !abbreviated
                && gap.trim_end().ends_with(['.', '!', '?'])
                && gap.chars().last().is_some_and(char::is_whitespace);
        if breaks {
            runs.push(&tokens[from..i]);
            from = i;
        }
    }
    if from < tokens.len() {
        runs.push(&tokens[from..]);
    }
    runs
}

fn split_run(text: &str, run: &[Token], lex: &Lexicon, out: &mut Vec<(Vec<Token>, bool)>) {
    let mut current: Vec<Token> = Vec::new();
    // Whether the clause being gathered was opened by a sequencer that orders.
    let mut follows = false;
    let mut head_verb: Option<usize> = None; // index in `current`
    let mut in_relative = false;
    // The relative clause's verb is inflected for its noun ("a diner that *serves* …"):
    // what carries on the description agrees with it ("…, opens early"), so a bare verb
    // after a comma ("…, *play* a song") is a request of its own. After "and" it may
    // still be the request's ("an agent that watches X and run it every Friday") unless it
    // acts on something new (`acts_on_something_new`).
    let mut relative_inflected = false;
    let mut i = 0;
    while i < run.len() {
        // A sequencer starts a new clause and is dropped from it.
        let strong = lex
            .sequencers
            .iter()
            .filter(|p| p.matches_at(run, i))
            .max_by_key(|p| p.len());
        // A soft one only where a clause could start: first, or after a comma or "and".
        let at_boundary = i == 0 || run[i - 1].form == "and" || comma_before(text, run, i);
        let soft = lex
            .soft_sequencers
            .iter()
            .filter(|p| at_boundary && p.matches_at(run, i) && starts_action(run, i + p.len(), lex))
            .max_by_key(|p| p.len());
        if let Some(seq) = strong.or(soft)
            && i + seq.len() < run.len()
        {
            flush(&mut current, &mut follows, out);
            follows = !lex.unordered_sequencers.contains(&seq.text);
            head_verb = None;
            in_relative = false;
            i += seq.len();
            continue;
        }
        let tok = &run[i];
        // A clause so far that asks something (a verb, or a question) or presents material
        // ("I have an audio file named a.wav, and I'd like …") can be followed by another.
        let asks = || {
            head_verb.is_some()
                || current.first().is_some_and(|t| lex.opens_question(t))
                || opens_presenting(&current, lex)
        };
        // "run the tests *but* don't commit": a clause that declines something ends the
        // one before it, however that one ends.
        if lex.declining.joints.contains(&tok.form)
            && !current.is_empty()
            && lex.declines(run, past_fillers(run, i + 1, lex))
        {
            flush(&mut current, &mut follows, out);
            head_verb = None;
            in_relative = false;
            i += 1;
            continue;
        }
        if let Some(next) = joint_at(text, run, i)
            && asks()
            && (!in_relative
                || relative_inflected
                    && !inflected_at(run, next, lex)
                    && (next == i || acts_on_something_new(run, next, lex)))
            && starts_action(run, next, lex)
            && !names_another_value(text, &current, run, next, head_verb, lex)
        {
            flush(&mut current, &mut follows, out);
            head_verb = None;
            in_relative = false;
            i = next;
            continue;
        }
        // A clause's first word heads it when it acts like a verb ("grab https://…").
        let opens = current.iter().all(|t| lex.words.fillers.contains(&t.form))
            && starts_action(run, i, lex);
        if head_verb.is_none() && (lex.is_verb(tok) || opens) {
            head_verb = Some(current.len());
        } else if head_verb.is_some()
            && lex.relative_markers.contains(&tok.form)
            && current
                .last()
                .is_some_and(|prev| lex.is_content(prev) && !lex.is_verb(prev))
        {
            in_relative = true;
            // "note that the code is 8812": "that" right after the head verb (and its
            // particle) opens what the verb says, a statement of its own.
            let says = head_verb.is_some_and(|h| {
                current[h + 1..]
                    .iter()
                    .all(|t| lex.words.verb_particles.contains(&t.form))
            });
            relative_inflected =
                inflected_at(run, i + 1, lex) || says && says_of_its_subject(run, i + 1, lex);
        }
        current.push(tok.clone());
        i += 1;
    }
    flush(&mut current, &mut follows, out);
}

/// Whether what starts at `at` names one more value in a list of named values ("with
/// the title 'Buy groceries', *description 'Milk'*, and *due date '2023-12-20'*"): a few
/// words that are not a known verb, then a value that ends the item (the run, a comma or
/// "and" follows), after a clause whose last value, or an earlier one, was also named
/// by a word that is not its verb. A word the vocabulary lacks before a value reads as a
/// verb only where nothing before it sets up such a list ("grab https://…").
fn names_another_value(
    text: &str,
    current: &[Token],
    run: &[Token],
    at: usize,
    head_verb: Option<usize>,
    lex: &Lexicon,
) -> bool {
    // A request's verb is bare: "notes" names a value, "note" asks for something.
    let naming = |t: &Token| lex.is_content(t) && (!lex.is_verb(t) || inflected(t)) && !t.proper;
    // The last value may be two ("a price range of $100-$500") and follow a function
    // word or two ("a due date *of* …").
    // Numbers are words to the tokenizer, values here.
    let valued = |t: &Token| t.value || t.form.starts_with(|c: char| c.is_ascii_digit());
    let values = current
        .iter()
        .rev()
        .take(2)
        .take_while(|t| valued(t))
        .count();
    let fillers = current[..current.len() - values]
        .iter()
        .rev()
        .take(2)
        .take_while(|t| !valued(t) && !lex.is_content(t))
        .count();
    let name = current.len().checked_sub(values + fillers + 1);
    // Or an earlier item of the list named its value right before it ("for client
    // 'John' with amount equal to the gross salary, *description 'Salary Invoice'*").
    let names_a_value = |words: &[Token]| words.windows(2).any(|w| naming(&w[0]) && w[1].value);
    let named_earlier = || {
        names_a_value(
            current
                .get(head_verb.map_or(0, |h| h + 1)..)
                .unwrap_or_default(),
        )
    };
    let last_named =
        values > 0 && name.is_some_and(|n| Some(n) != head_verb && naming(&current[n]));
    let left_named = last_named || named_earlier();
    // Once "with" has opened such a list, one bare verb just before a value and after a
    // comma names its next item too: "with the name 'Ana', *email 'ana@x.org'*, and
    // phone …". After "and" it still asks ("with the title 'X' and note 'ask Ana'").
    let opened_with = || {
        comma_before(text, run, at)
            && current
                .iter()
                .position(|t| lex.words.attribute_markers.contains(&t.form))
                .is_some_and(|w| names_a_value(&current[w + 1..]))
    };
    let right = run.get(past_fillers(run, at, lex)..).unwrap_or_default();
    let right_named = right.iter().take(4).position(valued).is_some_and(|v| {
        v > 0
            && (right[..v].iter().all(naming)
                || v == 1 && lex.is_content(&right[0]) && !right[0].proper && opened_with())
            && (v + 1 == right.len()
                || right[v + 1].form == "and"
                || comma_before(text, right, v + 1))
    });
    // A name compared with its value names it whatever follows and whatever its form:
    // "and *rating greater than or equal to 7* released after 2000" (a verb is never
    // followed by "greater than").
    let compared = || {
        let comparison = |t: &Token| lex.words.comparison_words.contains(&t.form);
        let names = right
            .iter()
            .take(3)
            .take_while(|t| lex.is_content(t) && !t.proper && !valued(t) && !comparison(t))
            .count();
        let between = right[names..]
            .iter()
            .take(6)
            .take_while(|t| comparison(t) || !valued(t) && !lex.is_content(t))
            .count();
        names > 0
            && right[names..names + between].iter().any(comparison)
            && right.get(names + between).is_some_and(valued)
    };
    left_named && (right_named || compared())
}

/// Whether a bare verb at `at` acts on something the relative clause before it did not
/// name: an article, a value or a person follows it ("a bus that goes to Boston *and get
/// me a ticket*", "a diner that serves tacos *and reserve a table*"). A pronoun that
/// points back ("an agent that watches the repo *and run it* every Friday") keeps the
/// verb in the description.
fn acts_on_something_new(run: &[Token], at: usize, lex: &Lexicon) -> bool {
    let at = past_fillers(run, at, lex);
    // "… and turn *off* the lights": the particle belongs to the verb.
    let particle = run
        .get(at + 1)
        .is_some_and(|t| lex.words.verb_particles.contains(&t.form));
    run.get(at + 1 + usize::from(particle)).is_some_and(|next| {
        lex.is_determiner(next)
            || next.value
            || lex.words.object_pronouns.contains(&next.form)
                && !lex.words.referring_pronouns.contains(&next.form)
    })
}

/// Whether a clause after "that" opens with a subject of its own and says something of it
/// with a form of "be" ("note that *the printer code is* 8812"): a statement, complete,
/// whose verb is inflected as a relative clause's is.
fn says_of_its_subject(run: &[Token], at: usize, lex: &Lexicon) -> bool {
    run.get(at).is_some_and(|t| lex.is_determiner(t))
        && run
            .iter()
            .skip(at + 1)
            .take(4)
            .take_while(|t| t.form != "and")
            .any(|t| lex.words.copulas.contains(&t.form))
}

/// Whether the first word at `at` (past fillers) looks like a verb inflected for a
/// third person ("serves", "is", "has"): what a relative clause's verb is, and what
/// carries one on, where a request's verb is bare.
fn inflected_at(run: &[Token], at: usize, lex: &Lexicon) -> bool {
    run.get(past_fillers(run, at, lex)).is_some_and(inflected)
}

/// Whether a word ends like a third-person verb or a plural ("serves", "notes").
pub(crate) fn inflected(t: &Token) -> bool {
    !t.value && t.form.ends_with('s') && !t.form.ends_with("ss")
}

/// The first index from `at` on that is neither "and" nor a filler ("please").
fn past_fillers(run: &[Token], mut at: usize, lex: &Lexicon) -> usize {
    while run
        .get(at)
        .is_some_and(|t| t.form == "and" || lex.words.fillers.contains(&t.form))
    {
        at += 1;
    }
    at
}

/// Where the next clause would start if `run[i]` joins two: after an "and" or "or", or at
/// a word a comma separates from the one before.
fn joint_at(text: &str, run: &[Token], i: usize) -> Option<usize> {
    let tok = run.get(i)?;
    if tok.form == "and" || tok.form == "or" {
        Some(i + 1)
    } else if comma_before(text, run, i) {
        Some(i)
    } else {
        None
    }
}

/// Whether a joint (`toks[..left_end]`, `toks[right_start..]`) joins parts of one
/// phrase rather than two requests: it stands between two prepositions ("flights to or
/// from Love Field"), in the middle of a range ("between Toronto *and Detroit*"), or
/// before a phrase that repeats the shape of one before it — a prepositional phrase with
/// no verb or question after one opened by the same preposition ("flights from Burbank
/// to Milwaukee *and from St. Louis to Burbank*"; not "…, *on June 27 I'd like* a
/// gastropub"), a participle after a participle ("flights leaving Cleveland *and
/// arriving at Dallas*").
fn inside_one_phrase(toks: &[Token], left_end: usize, right_start: usize, lex: &Lexicon) -> bool {
    let (Some(left), Some(right)) = (toks.get(..left_end), toks.get(right_start..)) else {
        return false;
    };
    let Some(first) = right.first() else {
        return false;
    };
    let prepositions = &lex.words.prepositions;
    if left
        .last()
        .is_some_and(|last| prepositions.contains(&last.form) && prepositions.contains(&first.form))
    {
        return true;
    }
    let joint = toks.get(left_end).map(|t| t.form.as_str());
    let in_range = lex.ranges.iter().any(|r| {
        joint == Some(r.words[1].as_str())
            && left.iter().rev().take(4).any(|t| t.form == r.words[0])
    });
    in_range
        || prepositions.contains(&first.form)
            && left.iter().any(|t| t.form == first.form)
            && !right
                .iter()
                .any(|t| lex.is_verb(t) || lex.opens_question(t))
        || first.is_ing_form() && left.iter().any(Token::is_ing_form)
}

/// Whether a comma separates `run[i]` from the token before it; the comma of a number
/// ("$10,000") separates nothing.
fn comma_before(text: &str, run: &[Token], i: usize) -> bool {
    let digit = |s: &str, last: bool| {
        let c = if last {
            s.chars().next_back()
        } else {
            s.chars().next()
        };
        c.is_some_and(|c| c.is_ascii_digit())
    };
    i > 0
        && text.get(run[i - 1].end..run[i].start).is_some_and(|gap| {
            gap.contains(',')
                && !(gap == "," && digit(&run[i - 1].form, true) && digit(&run[i].form, false))
        })
}

/// Whether an action starts at `at`: a verb, optionally after "please" — a known verb,
/// or a word the vocabulary lacks that takes an object pronoun, an article or a value
/// ("sign it", "rent a car", "grab https://…"), as only verbs do.
fn starts_action(run: &[Token], at: usize, lex: &Lexicon) -> bool {
    let mut at = past_fillers(run, at, lex);
    if let Some(opener) = lex.request_openers.iter().find(|p| p.matches_at(run, at)) {
        at = past_fillers(run, at + opener.len(), lex);
    }
    let Some(tok) = run.get(at) else {
        return false;
    };
    if lex.is_verb(tok) {
        return true;
    }
    // "… and why did the build fail", "…, will it rain": a question of its own; "… and
    // if they fail open an issue": a condition and what to do then.
    if (lex.opens_question(tok) || lex.words.conditions.contains(&tok.form)) && at + 1 < run.len() {
        return true;
    }
    let takes_object = run.get(at + 1).is_some_and(|next| {
        lex.words.object_pronouns.contains(&next.form) || lex.is_determiner(next) || next.value
    });

    lex.is_content(tok) && !tok.proper && !tok.identifier && takes_object
}

fn flush(current: &mut Vec<Token>, follows: &mut bool, out: &mut Vec<(Vec<Token>, bool)>) {
    if !current.is_empty() {
        out.push((std::mem::take(current), std::mem::take(follows)));
    }
}

#[cfg(test)]
mod tests {
    use waypoint_protocol::ClauseRole;

    use super::segment;
    use crate::lexicon::Lexicon;

    fn roles(request: &str, declined_alone: bool) -> Vec<ClauseRole> {
        let lex = Lexicon::for_catalog(&waypoint_catalog::Catalog::default()).unwrap();
        let tokens = lex.tokenize(request, &[]);
        (segment(request, &tokens, &lex, declined_alone).into_iter())
            .map(|s| s.clause.role)
            .collect()
    }

    #[test]
    fn a_request_that_only_declines_is_read_as_the_caller_says() {
        let alone = "don't sync with my phone anymore";
        assert_eq!(roles(alone, true), [ClauseRole::Declined]);
        assert_eq!(roles(alone, false), [ClauseRole::Action]);
        // Beside a request, a declining clause declines either way.
        for declined_alone in [true, false] {
            assert_eq!(
                roles("run the tests but don't commit", declined_alone),
                [ClauseRole::Action, ClauseRole::Declined]
            );
        }
    }
}
