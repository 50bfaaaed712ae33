//! Words after a cue ("containing …", "named …", "between A and B") to the argument
//! the cue introduces.

use serde_json::Value;
use waypoint_protocol::ExtractedKind;

use crate::lexicon::Lexicon;
use crate::text::Token;

use super::flow::takes_content;
use super::names::labels_another;
use super::spec::fits;
use super::text::span_text;
use super::{Context, Kind, Slot, State};

/// Words after a cue to the argument the cue introduces.
pub(super) fn fill_cued(cx: &Context<'_, '_>, st: &mut State) {
    let Context {
        slots,
        pieces,
        inputs,
        lex,
        ..
    } = *cx;
    let State { used, out } = st;
    let toks = inputs.clause.tokens();
    let from = inputs.clause.head_verb.map_or(0, |h| h + 1);
    let takes = |s: &Slot<'_>, r: usize| s.cued_by.contains(&r);
    let mut cues = tool_cues(slots, toks, from, lex);
    cues.sort_unstable();
    cues.dedup_by_key(|c| c.0);
    for (n, &(cue_start, cue_end, r)) in cues.iter().enumerate() {
        let Some(slot) = slots
            .iter()
            .find(|s| !out.args.contains_key(s.name) && takes(s, r))
        else {
            continue;
        };
        // A cue that starts inside this one leaves it no words.
        let next_cue = cues.get(n + 1).map_or(toks.len(), |c| c.0).max(cue_end);
        let end = (cue_end..next_cue)
            .find(|&i| used.covers(&toks[i]))
            .unwrap_or(next_cue);
        let span = trimmed_value(&toks[cue_end..end], slot, lex);
        // "with number 555-0134": a word that names the argument whose value follows it
        // labels that value; it is no value of its own.
        if end < next_cue
            && let [word] = span
            && !word.proper
            && labels_another(&word.stem, slot, slots, &out.args)
        {
            continue;
        }
        let (Some(first), Some(last)) = (span.first(), span.last()) else {
            continue;
        };
        // A quotation after the cue is the value, without its quotes.
        let quoted = pieces.iter().position(|p| {
            matches!(p.kind, Kind::Value(ExtractedKind::Quoted))
                && p.start >= first.start.saturating_sub(1)
                && p.end <= last.end + 1
        });
        let text = match quoted {
            Some(i) => pieces[i].value.clone(),
            None => span_text(inputs.request, first, last, lex),
        };
        if text.is_empty() {
            continue;
        }
        let value = Value::String(text);
        if slot.kinds.contains(&Kind::Enum) && !fits(&value, slot.schema) {
            continue;
        }
        // A quotation ends the value: the words after it are the request's again
        // ("between 'Lisbon' and 'Porto' *using driving mode*").
        let used_end = match quoted {
            Some(i) => {
                used.pieces.push(i);
                pieces[i].end
            }
            None => last.end,
        };
        used.spans.push((toks[cue_start].start, used_end, true));
        out.args.insert(slot.name.to_string(), value);
    }
}

/// The words after a cue that are its value: not the words that bring the next value
/// or that lead to it.
fn trimmed_value<'t>(mut span: &'t [Token], slot: &Slot<'_>, lex: &Lexicon) -> &'t [Token] {
    // A name or place ends before a preposition that brings a value of its own ("in
    // San Diego *for 3 days* starting …"); a message keeps it ("saying meet me at 5").
    if !takes_content(slot, lex)
        && let Some(cut) = (1..span.len()).find(|&i| {
            span[i + 1..]
                .first()
                .is_some_and(|t| t.value || t.form.starts_with(|c: char| c.is_ascii_digit()))
                && lex.words.prepositions.contains(&span[i].form)
        })
    {
        span = &span[..cut];
    }
    // "from the Example Library": the article is not the name's ("for the best
    // boots" keeps it: the words are a phrase, not a name).
    if let [first, next, ..] = span
        && !first.proper
        && next.proper
        && lex.words.articles.contains(&first.form)
    {
        span = &span[1..];
    }
    // A name ends at a preposition after it that opens words of another kind ("at
    // Chase *to my friend's account*"), not one inside it ("Bank *of* America").
    if span.first().is_some_and(|t| t.proper)
        && let Some(cut) = (1..span.len()).find(|&i| {
            !span[i].proper
                && lex.words.prepositions.contains(&span[i].form)
                && span.get(i + 1).is_some_and(|n| !n.proper)
        })
        && span[..cut].iter().all(|t| t.proper)
    {
        span = &span[..cut];
    }
    // Nor does it run on into a relative clause that describes it ("in San Francisco
    // *that has laundry service*").
    if span.first().is_some_and(|t| t.proper)
        && let Some(cut) = (1..span.len())
            .find(|&i| !span[i].proper && lex.relative_markers.contains(&span[i].form))
        && span[..cut].iter().all(|t| t.proper)
    {
        span = &span[..cut];
    }
    // "named John Doe with a description …": not the words that lead to the next value.
    // A capitalised word is a name's ("named John *Doe*", though "doe" stems like "does").
    while let [rest @ .., last] = span
        && !last.value
        && !last.proper
        && !lex.is_content(last)
    {
        span = rest;
    }
    span
}

/// Every cue of the clause (after token `from`) this tool has an argument for, as (start
/// token, end token, rule): only those count, as values and as ends of values.
fn tool_cues(
    slots: &[Slot<'_>],
    toks: &[Token],
    from: usize,
    lex: &Lexicon,
) -> Vec<(usize, usize, usize)> {
    let takes = |s: &Slot<'_>, r: usize| s.cued_by.contains(&r);
    let mut cues: Vec<(usize, usize, usize)> = Vec::new();
    for (r, rule) in lex.arg_cues.iter().enumerate() {
        if !slots.iter().any(|s| takes(s, r)) {
            continue;
        }
        for p in &rule.cues {
            for at in p.find_all(toks).filter(|&at| at >= from) {
                cues.push((at, at + p.len(), r));
            }
        }
    }
    // The words an argument's description ends with ("to" for "the location to order
    // the taxi to"), where they stand as a preposition: not "to" before a verb ("a pizza
    // *to* be delivered").
    for (i, slot) in slots.iter().enumerate() {
        let Some(word) = slot.own_cue else { continue };
        let r = lex.arg_cues.len() + i;
        for at in (from..toks.len()).filter(|&at| toks[at].form == *word) {
            let infinitive = toks
                .get(at + 1)
                .is_some_and(|next| lex.is_verb(next) || lex.base_auxiliaries.contains(&next.form));
            if !infinitive {
                cues.push((at, at + 1, r));
            }
        }
    }
    ranged_cues(
        toks,
        from,
        lex,
        &|r| slots.iter().any(|s| takes(s, r)),
        &mut cues,
    );
    cues
}

/// "between A and B": the first word of a range stands for the cue of its first end and
/// the next second word after it for the cue of the other, when the tool has arguments
/// for both.
fn ranged_cues(
    toks: &[Token],
    from: usize,
    lex: &Lexicon,
    wanted: &dyn Fn(usize) -> bool,
    cues: &mut Vec<(usize, usize, usize)>,
) {
    let rule_of = |cue: &str| {
        lex.arg_cues
            .iter()
            .position(|r| r.cues.iter().any(|p| p.text == cue))
            .filter(|&r| wanted(r))
    };
    for range in &lex.ranges {
        let (Some(first), Some(second)) = (rule_of(&range.as_cues[0]), rule_of(&range.as_cues[1]))
        else {
            continue;
        };
        for at in (from..toks.len()).filter(|&i| toks[i].form == range.words[0]) {
            if let Some(then) = (at + 2..toks.len()).find(|&i| toks[i].form == range.words[1]) {
                cues.push((at, at + 1, first));
                cues.push((then, then + 1, second));
            }
        }
    }
}
