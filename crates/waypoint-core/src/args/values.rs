//! Typed values to the arguments that take them: by the words that name an argument,
//! by kind and order, by the values a description lists, ranges, folders and measures.

use serde_json::Value;
use waypoint_protocol::ExtractedKind;

use crate::hash::HashSet;
use crate::lexicon::Lexicon;
use crate::text::Token;

use super::names::{named_after, named_before, naming_run};
use super::spec::{coerce, description_words, fits};
use super::{Context, Filled, Kind, Piece, Slot, State, Used};

/// Values the request names: a typed value or quotation written right after the words
/// of an argument's name ("expenses of 5000", "the key 'abc123'", "a due date of
/// 2023-05-01") or right before them ("a 5% interest rate") goes to that argument,
/// whatever order the values come in. The pairs that name more of an argument's words,
/// its last word (the head: `tax_rate` is a rate) counting double, are taken first.
pub(super) fn fill_named(cx: &Context<'_, '_>, st: &mut State) {
    let (slots, pieces, lex) = (cx.slots, cx.pieces, cx.lex);
    let toks = cx.inputs.clause.tokens();
    let State { used, out } = st;
    // (score, piece, slot, first token of the naming words, last token)
    let mut pairs: Vec<(u32, usize, usize, usize, usize)> = Vec::new();
    if pieces.is_empty() {
        return;
    }
    let naming: Vec<&[(String, bool)]> = slots.iter().map(|s| s.naming).collect();
    let verb_end = cx.inputs.clause.head_verb.map_or(0, |h| h + 1);
    for (p, piece) in pieces.iter().enumerate() {
        // A later item of a list is named with the list's first, which takes it below:
        // "grades [A, B, F], credit hours [3, 3, 3]" does not give F to the hours.
        let continues_list = p.checked_sub(1).is_some_and(|q| {
            pieces[q].kind == piece.kind
                && listed_between(cx.inputs.request, pieces[q].end, piece.start, lex)
        });
        let Some(at) = toks.iter().position(|t| t.end > piece.start) else {
            continue;
        };
        if continues_list {
            continue;
        }
        let after = toks
            .iter()
            .position(|t| t.start >= piece.end)
            .unwrap_or(toks.len());
        for (s, slot) in slots.iter().enumerate() {
            if !takes_named(slot, piece, at, cx) {
                continue;
            }
            let words = &naming[s];
            // The clause's verb says what the tool does, not which argument a value is:
            // "encrypt 'hello' with the key 'k'" does not name `encryption_key` by "encrypt".
            let lo = verb_end.min(at);
            if let Some((score, from)) = named_before(&toks[lo..at], words, lex) {
                pairs.push((score, p, s, lo + from, at));
            }
            // "1000 as expenses", "'car' as the mode of transport".
            let marked = toks
                .get(after)
                .is_some_and(|t| lex.words.role_markers.contains(&t.form));
            let name_at = if marked {
                after + 1 + usize::from(toks.get(after + 1).is_some_and(|t| lex.is_determiner(t)))
            } else {
                after
            };
            if let Some((score, to)) = named_after(toks.get(name_at..).unwrap_or_default(), words) {
                // Given "as" the argument, the value is said to be it: that outranks a
                // name that only stands near.
                pairs.push((score + u32::from(marked), p, s, at, name_at + to));
            }
        }
    }
    // Best named first; among equals the value nearer its words, then the request's order.
    pairs.sort_by_key(|&(score, p, _, from, to)| {
        (std::cmp::Reverse(score), to.saturating_sub(from), p)
    });
    for (_, p, s, from, to) in pairs {
        let slot = &slots[s];
        if used.pieces.contains(&p) || out.args.contains_key(slot.name) {
            continue;
        }
        let piece = &pieces[p];
        let as_value = |piece: &Piece| {
            if slot.typed() || piece.kind == Kind::Value(ExtractedKind::Numbers) {
                piece.coerce_for(slot, lex)
            } else {
                Value::String(piece.value.clone())
            }
        };
        // A list takes the values of the same kind listed after the first ("participants
        // 'Alice', 'Bob' and 'Charlie'").
        let mut taken = vec![p];
        if slot.is_array() {
            while let Some(&last) = taken.last()
                && let Some(next) = pieces.get(last + 1)
                && next.kind == piece.kind
                && !used.pieces.contains(&(last + 1))
                && listed_between(cx.inputs.request, pieces[last].end, next.start, lex)
            {
                taken.push(last + 1);
            }
        }
        used.pieces.extend(&taken);
        let last = &pieces[*taken.last().unwrap_or(&p)];
        let start = toks
            .get(from)
            .map_or(piece.start, |t| t.start.min(piece.start));
        let end = toks
            .get(to.saturating_sub(1))
            .map_or(last.end, |t| t.end.max(last.end));
        used.spans.push((start, end, true));
        let value = if slot.is_array() {
            Value::Array(match listed_in_quote(piece, slot) {
                Some(items) if taken.len() == 1 => items,
                _ => taken.iter().map(|&i| as_value(&pieces[i])).collect(),
            })
        } else {
            as_value(piece)
        };
        out.args.insert(slot.name.to_string(), value);
    }
}

/// The items of a list written inside one quotation for a list of text ("participants
/// 'John Doe, Jane Doe'"): one item per comma-separated part.
fn listed_in_quote(piece: &Piece, slot: &Slot<'_>) -> Option<Vec<Value>> {
    let item_type = slot.item_schema().get("type").and_then(Value::as_str);
    if piece.kind != Kind::Value(ExtractedKind::Quoted) || item_type.is_some_and(|t| t != "string")
    {
        return None;
    }
    let items: Vec<Value> = piece
        .value
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| Value::String(p.to_string()))
        .collect();
    (items.len() > 1).then_some(items)
}

/// Two numbers that make one range after the name of a text argument ("a price range of
/// $100 - $200", "a price range between 500 and 1000") are its one value, written as
/// the request writes the numbers with a dash between them ("$100-$200"): neither
/// number on its own is what the argument asks for.
pub(super) fn fill_range(cx: &Context<'_, '_>, st: &mut State) {
    let (pieces, lex, request) = (cx.pieces, cx.lex, cx.inputs.request);
    let toks = cx.inputs.clause.tokens();
    let verb_end = cx.inputs.clause.head_verb.map_or(0, |h| h + 1);
    let number = |p: &Piece| p.kind == Kind::Value(ExtractedKind::Numbers);
    // The number as written, with a currency sign before it.
    let signs = lex.currency_signs.as_slice();
    let written = |p: &Piece| {
        let start = request[..p.start]
            .char_indices()
            .next_back()
            .filter(|(_, c)| signs.contains(c))
            .map_or(p.start, |(i, _)| i);
        request.get(start..p.end).unwrap_or(&p.value).to_string()
    };
    for p in 0..pieces.len().saturating_sub(1) {
        let (a, b) = (&pieces[p], &pieces[p + 1]);
        if !number(a) || !number(b) || st.used.pieces.contains(&p) {
            continue;
        }
        let Some(at) = toks.iter().position(|t| t.end > a.start) else {
            continue;
        };
        let gap = request
            .get(a.end..b.start)
            .unwrap_or_default()
            .trim()
            .trim_end_matches(signs)
            .trim();
        let opener = at.checked_sub(1).map(|i| toks[i].form.as_str());
        // "between 500 and 1000", "from 5 to 10"; a bare "to" is no range ("send 10 to 555").
        let range = lex.ranges.iter().find_map(|r| {
            [&r.words, &r.as_cues]
                .into_iter()
                .find(|w| opener == Some(w[0].as_str()) && gap.eq_ignore_ascii_case(&w[1]))
        });
        let joined = matches!(gap, "-" | "–") || range.is_some();
        if !joined {
            continue;
        }
        // The name stands before the range's opening word ("a price range *between*").
        let name_end = at - usize::from(range.is_some());
        let lo = verb_end.min(name_end);
        let named = cx
            .slots
            .iter()
            .filter(|s| s.plain_string() && !st.out.args.contains_key(s.name))
            .filter_map(|s| {
                named_before(&toks[lo..name_end], s.naming, lex)
                    .map(|(score, from)| (score, from, s))
            })
            .max_by_key(|&(score, ..)| score);
        let Some((_, from, slot)) = named else {
            continue;
        };
        st.used.pieces.extend([p, p + 1]);
        st.used.spans.push((toks[lo + from].start, b.end, true));
        st.out.args.insert(
            slot.name.to_string(),
            Value::String(format!("{}-{}", written(a), written(b))),
        );
    }
}

/// Whether `slot` can take `piece` (at token `at`) when the words next to it name the
/// slot. A quotation right after an argument's name is its value, whatever kind the name
/// suggests ("the key 'abc123'"). A number goes to words only right after their head,
/// and only when no typed argument takes it: "for the *year* 2021" gives `year` "2021",
/// not "year 2021"; "a text message to 555" keeps 555 for `phone`.
fn takes_named(slot: &Slot<'_>, piece: &Piece, at: usize, cx: &Context<'_, '_>) -> bool {
    let lex = cx.lex;
    if slot.kinds.contains(&Kind::Enum) {
        return false;
    }
    if slot.typed() {
        return (slot.takes(piece, lex) || piece.kind == Kind::Value(ExtractedKind::Quoted))
            && fits(&piece.coerce_for(slot, lex), slot.item_schema());
    }
    match piece.kind {
        Kind::Value(ExtractedKind::Quoted) => slot.free_text(),
        Kind::Value(ExtractedKind::Numbers) if slot.free_text() => {
            let toks = cx.inputs.clause.tokens();
            let right_after = at.checked_sub(1).is_some_and(|i| {
                slot.naming
                    .iter()
                    .any(|(w, head)| *head && *w == toks[i].stem)
            });
            right_after && !cx.slots.iter().any(|o| o.typed() && o.takes(piece, lex))
        }
        _ => false,
    }
}

/// A word written right before an argument's name is its value when no typed value
/// or cue gave one ("using *driving* mode", "in the *electronics* category", "the *Uber*
/// platform"); a capitalised name that ends in the argument's word is kept whole ("the
/// *Example Library*"), and so are the words that run into it ("the *sales report*
/// workflow"). Only a plain-text argument whose name is named well (its head
/// word, or two of its words) takes it, and only a content word no other argument took,
/// written after the clause's verb with nothing but a space before the name. Not a
/// word of the name nor one of the tool's own ("list the *product* categories" names
/// the tool's object), not a participle ("the *translated* sentence" is an earlier
/// output), and not after an indefinite article ("send it as *a text* message" names a
/// kind of message, not one).
pub(super) fn fill_modifier(cx: &Context<'_, '_>, st: &mut State) {
    let toks = cx.inputs.clause.tokens();
    let request = cx.inputs.request;
    let from = cx.inputs.clause.head_verb.map_or(0, |h| h + 1);
    let State { used, out } = st;
    for slot in cx.slots {
        if out.args.contains_key(slot.name) || !slot.free_text() || slot.is_array() {
            continue;
        }
        for at in from.saturating_add(1)..toks.len() {
            let (score, n) = naming_run(toks[at..].iter(), slot.naming);
            let word = &toks[at - 1];
            let named = &toks[at..at + n];
            let kind_word = at >= 2 && cx.lex.articles.new.contains(&toks[at - 2].form);
            if score < 2
                || kind_word
                || !cx.lex.is_content(word)
                || used.covers(word)
                || word.form.ends_with("ed")
                || slot.naming.iter().any(|(w, _)| *w == word.stem)
                || cx.inputs.own_words.contains(&word.stem)
                || !request
                    .get(word.end..toks[at].start)
                    .is_some_and(|gap| gap.chars().all(char::is_whitespace))
            {
                continue;
            }
            let end = named.last().map_or(word.end, |t| t.end);
            let whole = word.proper && named.iter().all(|t| t.proper);
            let start = toks[compound_start(toks, from, at - 1, request, used, cx)].start;
            let Some(text) = request.get(start..if whole { end } else { word.end }) else {
                continue;
            };
            used.spans.push((start, end, true));
            out.args
                .insert(slot.name.to_string(), Value::String(text.to_string()));
            break;
        }
    }
}

/// Where the words before the modifier at `at` run into it with only spaces between,
/// they name the thing with it ("the *sales report* workflow"): the first of them, not
/// before `from` (the verb's object starts there).
fn compound_start(
    toks: &[Token],
    from: usize,
    at: usize,
    request: &str,
    used: &Used,
    cx: &Context<'_, '_>,
) -> usize {
    let mut first = at;
    while first > from {
        let word = &toks[first - 1];
        let joined = request
            .get(word.end..toks[first].start)
            .is_some_and(|gap| gap.chars().all(char::is_whitespace));
        if !joined
            || !cx.lex.is_content(word)
            || cx.lex.is_determiner(word)
            || used.covers(word)
            || word.form.ends_with("ed")
            || cx.inputs.own_words.contains(&word.stem)
        {
            break;
        }
        first -= 1;
    }
    first
}

/// A capitalised word right before the tool's own object ("find *Italian* restaurants")
/// says which kind of it is wanted: it fills the one open plain-text argument whose
/// description calls it a kind (the lexicon's `kind_nouns`: "The cuisine type to filter
/// restaurants by"). One capitalised word only: "New York restaurants" names a place.
pub(super) fn fill_kind(cx: &Context<'_, '_>, st: &mut State) {
    let toks = cx.inputs.clause.tokens();
    let from = cx.inputs.clause.head_verb.map_or(0, |h| h + 1);
    let State { used, out } = st;
    let open: Vec<&Slot<'_>> = cx
        .slots
        .iter()
        .filter(|s| {
            s.takes_a_kind && !out.args.contains_key(s.name) && s.free_text() && !s.is_array()
        })
        .collect();
    let [slot] = open.as_slice() else {
        return;
    };
    let found = (from.max(1)..toks.len().saturating_sub(1)).find(|&at| {
        let (word, object) = (&toks[at], &toks[at + 1]);
        word.proper
            && !toks[at - 1].proper
            && !word.value
            && cx.lex.is_content(word)
            && !used.covers(word)
            && cx.inputs.own_name.contains(&object.stem)
    });
    let Some(at) = found else {
        return;
    };
    let word = &toks[at];
    let Some(text) = cx.inputs.request.get(word.start..word.end) else {
        return;
    };
    used.spans.push((word.start, word.end, true));
    out.args
        .insert(slot.name.to_string(), Value::String(text.to_string()));
}

/// Whether only list punctuation and "and"/"or" stand between two values.
fn listed_between(request: &str, end: usize, start: usize, lex: &Lexicon) -> bool {
    only_between(request, end, start, |w| lex.list_joiners.contains(w))
}

/// Whether only list punctuation and words `allowed` takes (lower case) stand between
/// `end` and `start` of the request.
fn only_between(
    request: &str,
    end: usize,
    start: usize,
    allowed: impl Fn(&String) -> bool,
) -> bool {
    request.get(end..start).is_some_and(|gap| {
        gap.split(|c: char| c.is_whitespace() || ",;'\"“”‘’]".contains(c))
            .all(|w| w.is_empty() || allowed(&w.to_lowercase()))
    })
}

/// Whether the values follow one another as a list, each perhaps behind the preposition
/// the first is behind ("into French and into German").
fn said_as_list(fitting: &[usize], pieces: &[Piece], cx: &Context<'_, '_>) -> bool {
    let mut order: Vec<&Piece> = fitting.iter().map(|&i| &pieces[i]).collect();
    order.sort_by_key(|p| p.start);
    let lex = cx.lex;
    order.windows(2).all(|pair| {
        only_between(cx.inputs.request, pair[0].end, pair[1].start, |w| {
            lex.list_joiners.contains(w) || lex.value_prepositions.contains(w)
        })
    })
}

/// Words either side of a value that say which of several arguments of its kind it is
/// for: "the *first* 10 lines" goes to `head` ("returns only the first N lines"), not to
/// `tail` ("… the last N lines"), though `tail` comes first in the schema. A value two or
/// more open arguments take goes to the one whose description alone has a word among the
/// two words before it or the two after; where none or several do, it is left to
/// [`fill_typed`] and the schema's order.
pub(super) fn fill_described(cx: &Context<'_, '_>, st: &mut State) {
    const AROUND: usize = 2;
    let toks = cx.inputs.clause.tokens();
    for (i, piece) in cx.pieces.iter().enumerate() {
        if st.used.pieces.contains(&i) || !matches!(piece.kind, Kind::Value(_)) {
            continue;
        }
        let rivals: Vec<&Slot<'_>> = cx
            .slots
            .iter()
            .filter(|s| s.typed() && !st.out.args.contains_key(s.name))
            .filter(|s| s.takes(piece, cx.lex))
            .filter(|s| fits(&piece.coerce_for(s, cx.lex), s.item_schema()))
            .collect();
        if rivals.len() < 2 {
            continue;
        }
        let described: Vec<HashSet<String>> = rivals
            .iter()
            .map(|s| {
                description_words(s.schema)
                    .iter()
                    .filter(|w| !cx.lex.stopwords.contains(w.as_str()))
                    .map(|w| crate::text::stem(w))
                    .collect()
            })
            .collect();
        let before = toks
            .iter()
            .rev()
            .filter(|t| t.end <= piece.start)
            .take(AROUND);
        let after = toks.iter().filter(|t| t.start >= piece.end).take(AROUND);
        let near: Vec<&str> = before
            .chain(after)
            .filter(|t| !t.value)
            .map(|t| t.stem.as_str())
            .collect();
        // A word only one rival's description has, said next to the value.
        let telling = |k: usize| {
            near.iter().any(|w| {
                described[k].contains(*w)
                    && described
                        .iter()
                        .enumerate()
                        .all(|(j, d)| j == k || !d.contains(*w))
            })
        };
        let mut told = (0..rivals.len()).filter(|&k| telling(k));
        let (Some(k), None) = (told.next(), told.next()) else {
            continue;
        };
        let slot = rivals[k];
        mark_piece(i, cx.pieces, toks, cx.lex, &mut st.used);
        st.out.args.insert(
            slot.name.to_string(),
            slot.one(piece.coerce_for(slot, cx.lex)),
        );
    }
}

/// Typed values to the slots that take their kind, in the order the request gives them.
pub(super) fn fill_typed(cx: &Context<'_, '_>, st: &mut State) {
    let (slots, pieces, inputs) = (cx.slots, cx.pieces, cx.inputs);
    let State { used, out } = st;
    let toks = inputs.clause.tokens();
    for slot in slots.iter().filter(|s| s.typed()) {
        if out.args.contains_key(slot.name) {
            continue;
        }
        if slot.kinds.contains(&Kind::Enum) {
            let from = inputs.clause.head_verb.map_or(0, |h| h + 1);
            fill_enum(slot, toks.get(from..).unwrap_or_default(), used, out);
            continue;
        }
        let bare_end = bare_language_end(slot, slots, pieces, toks, cx.lex);
        let fitting: Vec<usize> = (0..pieces.len())
            .filter(|i| !used.pieces.contains(i))
            .filter(|&i| slot.takes(&pieces[i], cx.lex))
            .filter(|&i| {
                let other = piece_end(&pieces[i], toks, cx.lex).or(bare_end);
                slot.end.is_none() || other.is_none() || other == slot.end
            })
            .filter(|&i| fits(&pieces[i].coerce_for(slot, cx.lex), slot.item_schema()))
            .collect();
        let Some(&first) = fitting.first() else {
            // The slot takes one value lent by a presenting clause, if any fits.
            let lent = (0..cx.lent.len())
                .filter(|&i| !used.lent.contains(&i) && slot.takes(&cx.lent[i], cx.lex))
                .find_map(|i| {
                    let v = coerce(&cx.lent[i].value, slot.item_schema(), cx.lex);
                    fits(&v, slot.item_schema()).then_some((i, v))
                });
            if let Some((i, v)) = lent {
                used.lent.push(i);
                out.args.insert(slot.name.to_string(), slot.one(v));
            }
            continue;
        };
        let take: Vec<usize> = if slot.is_array() {
            fitting.clone()
        } else {
            vec![first]
        };
        let values: Vec<Value> = take
            .iter()
            .map(|&i| pieces[i].coerce_for(slot, cx.lex))
            .collect();
        // Several values where one fits, said as a list, and no other argument takes this
        // kind: one step per value ("translate it into French and German"). Values of the
        // kind said apart are no list ("post the weekly metrics every Monday").
        let others_take = slots
            .iter()
            .any(|s| s.name != slot.name && s.takes(&pieces[first], cx.lex));
        if !slot.is_array()
            && fitting.len() > 1
            && !others_take
            && out.fan_out.is_none()
            && said_as_list(&fitting, pieces, cx)
        {
            let all: Vec<Value> = fitting
                .iter()
                .map(|&i| pieces[i].coerce_for(slot, cx.lex))
                .collect();
            out.fan_out = Some((slot.name.to_string(), all));
            for &i in &fitting {
                mark_piece(i, pieces, toks, cx.lex, used);
            }
        }
        for &i in &take {
            mark_piece(i, pieces, toks, cx.lex, used);
        }
        let value = if slot.is_array() {
            Value::Array(values)
        } else {
            values.into_iter().next().unwrap_or(Value::Null)
        };
        out.args.insert(slot.name.to_string(), value);
    }
}

/// The end a language with no preposition belongs to, when the tool has a language
/// argument for each end (`source_language`, `target_language`) and no language of the
/// clause is already marked for that end: the vocabulary's `bare_languages` end ("the
/// translation of 'hello' in French"; in "the English text, translated to French" the
/// bare "English" keeps going to the source).
fn bare_language_end(
    slot: &Slot<'_>,
    slots: &[Slot<'_>],
    pieces: &[Piece],
    toks: &[Token],
    lex: &Lexicon,
) -> Option<usize> {
    let language = |s: &Slot<'_>| s.kinds.contains(&Kind::Language) && s.end.is_some();
    if !language(slot) || slots.iter().filter(|s| language(s)).count() < 2 {
        return None;
    }
    let end = lex.ends.iter().position(|e| e.bare_languages)?;
    let taken = pieces
        .iter()
        .any(|p| p.kind == Kind::Language && piece_end(p, toks, lex) == Some(end));
    (!taken).then_some(end)
}

/// An enum argument takes the first word of the clause (after its verb) that is one of
/// its options, compared without case ("as CSV" → `csv`).
fn fill_enum(slot: &Slot<'_>, toks: &[Token], used: &mut Used, out: &mut Filled) {
    let Some(options) = slot.item_schema().get("enum").and_then(Value::as_array) else {
        return;
    };
    let found = toks
        .iter()
        .filter(|t| !t.value && !used.covers(t))
        .find_map(|t| {
            options
                .iter()
                .find(|o| o.as_str().is_some_and(|o| o.eq_ignore_ascii_case(&t.form)))
                .map(|o| (t, o.clone()))
        });
    if let Some((t, option)) = found {
        used.spans.push((t.start, t.end, true));
        out.args.insert(slot.name.to_string(), slot.one(option));
    }
}

/// A free-text argument whose description lists values ("eg. buy, sell, short") takes
/// the one the clause says, its verb included: "I want to buy Apple stocks" gives
/// `operation` "buy", "share it on Facebook" gives `social_network` "Facebook". A name
/// that starts with a listed value is kept whole ("using Uber Eats"). Two listed values
/// in one clause say neither is the one, and leave the argument to the other passes.
pub(super) fn fill_suggested(cx: &Context<'_, '_>, st: &mut State) {
    let toks = cx.inputs.clause.tokens();
    let State { used, out } = st;
    for slot in cx.slots {
        if slot.suggested.is_empty() || !slot.free_text() || out.args.contains_key(slot.name) {
            continue;
        }
        let free = |t: &Token| !t.value && !used.covers(t);
        // (suggestion, first token, token count) of every place a listed value is said.
        let mut said: Vec<(usize, usize, usize)> = Vec::new();
        for (k, option) in slot.suggested.iter().enumerate() {
            let n = option.words.len();
            for at in 0..toks.len() {
                let Some(run) = toks.get(at..at + n) else {
                    break;
                };
                let matches = run.iter().zip(&option.words).all(|(t, w)| {
                    free(t) && (t.form == *w || option.stem.as_ref() == Some(&t.stem))
                });
                if matches {
                    said.push((k, at, n));
                }
            }
        }
        let Some(&(k, at, mut n)) = said.first() else {
            continue;
        };
        if said.iter().any(|&(other, ..)| other != k) {
            continue;
        }
        while toks[at].proper && toks.get(at + n).is_some_and(|t| t.proper && free(t)) {
            n += 1;
        }
        let listed = &slot.suggested[k];
        let value = if n > listed.words.len() {
            cx.inputs
                .request
                .get(toks[at].start..toks[at + n - 1].end)
                .map_or_else(|| listed.text.clone(), str::to_string)
        } else {
            listed.text.clone()
        };
        // The value ends the clause's object ("a taxi to 123 Main St using the *Uber*
        // platform"), with the preposition that introduced it.
        let start = at
            .checked_sub(1)
            .map(|i| &toks[i])
            .filter(|prev| cx.lex.value_prepositions.contains(&prev.form))
            .map_or(toks[at].start, |prev| prev.start);
        used.spans.push((start, toks[at + n - 1].end, true));
        out.args.insert(slot.name.to_string(), Value::String(value));
    }
}

/// A used value's span, with the preposition that introduced it ("to ana@…", "into French").
/// The end of a move or translation the preposition right before a value makes it
/// ("*to* French"), by index in the lexicon's `ends`.
fn piece_end(p: &Piece, toks: &[Token], lex: &Lexicon) -> Option<usize> {
    let prev = toks.iter().rev().find(|t| t.end <= p.start)?;
    lex.ends
        .iter()
        .position(|e| e.prepositions.contains(&prev.form))
}

fn mark_piece(i: usize, pieces: &[Piece], toks: &[Token], lex: &Lexicon, used: &mut Used) {
    let p = &pieces[i];
    used.pieces.push(i);
    let introduced = toks
        .iter()
        .rev()
        .find(|t| t.end <= p.start)
        .filter(|prev| lex.value_prepositions.contains(&prev.form));
    match introduced {
        Some(prev) => used.spans.push((prev.start, p.end, true)),
        None => used.spans.push((p.start, p.end, false)),
    }
}

/// A folder named by a bare word beside the word for one: "list the files in the *docs*
/// folder", "the folder *src*". An argument that takes paths and was given none takes the
/// word, unless it only says which folder ("the *new* folder": `folder_describers`), is a
/// function word, opens a cue ("a folder *called* build"), or is a word of the tool's
/// own name ("the directory *tree*"); past those and a preposition the word may follow
/// ("the directory tree *of src*"). Before the cues, so "move it *to the archive
/// folder*" gives the destination "archive", not the words after "to".
pub(super) fn fill_folder(cx: &Context<'_, '_>, st: &mut State) {
    let toks = cx.inputs.clause.tokens();
    let words = &cx.lex.words;
    let Some(slot) = cx.slots.iter().find(|s| {
        s.kinds.contains(&Kind::Value(ExtractedKind::Paths)) && !st.out.args.contains_key(s.name)
    }) else {
        return;
    };
    let head = cx.inputs.clause.head_verb;
    let names = |at: usize| {
        toks.get(at).filter(|t| {
            cx.lex.can_name_a_folder(t)
                && Some(at) != head
                && !st.used.covers(t)
                && !cx.inputs.own_name.contains(&t.stem)
        })
    };
    // "the directory *tree* of src": past the tool's own words and one preposition.
    let past_own_words = |at: usize| {
        let mut i = at + 1;
        while toks
            .get(i)
            .is_some_and(|t| !t.value && cx.inputs.own_name.contains(&t.stem))
        {
            i += 1;
        }
        (i > at + 1
            && toks
                .get(i)
                .is_some_and(|t| words.prepositions.contains(&t.form)))
        .then_some(i + 1)
    };
    let named = toks
        .iter()
        .enumerate()
        .filter(|(_, t)| words.folder_nouns.contains(&t.form))
        .find_map(|(at, _)| {
            at.checked_sub(1)
                .and_then(names)
                .or_else(|| names(at + 1))
                .or_else(|| names(past_own_words(at)?))
        });
    if let Some(t) = named {
        let path = cx.inputs.request[t.start..t.end].to_string();
        st.used.spans.push((t.start, t.end, false));
        st.out
            .args
            .insert(slot.name.to_string(), slot.one(Value::String(path)));
    }
}

/// Whether values of this kind are addresses: each names one thing (a file, a page, a
/// mailbox, a record) rather than saying something about it.
pub(super) fn is_address(kind: ExtractedKind) -> bool {
    matches!(
        kind,
        ExtractedKind::Paths | ExtractedKind::Urls | ExtractedKind::Emails | ExtractedKind::Ids
    )
}

/// A required list of numbers the words did not fill takes the numbers of the clause no
/// argument took, in order: "the area of a rectangle with length 5 and width 3" gives
/// `dimensions` [5, 3]. Only while no earlier output flows in, which would be its input.
pub(super) fn fill_measures(cx: &Context<'_, '_>, st: &mut State) {
    if cx.inputs.from_step.is_some() {
        return;
    }
    let State { used, out } = st;
    for slot in cx.slots {
        if !slot.required
            || out.args.contains_key(slot.name)
            || !(slot.untyped_items() || (slot.is_array() && slot.numeric()))
        {
            continue;
        }
        let free: Vec<usize> = (0..cx.pieces.len())
            .filter(|i| {
                !used.pieces.contains(i)
                    && cx.pieces[*i].kind == Kind::Value(ExtractedKind::Numbers)
            })
            .collect();
        if free.is_empty() {
            continue;
        }
        let values = free
            .iter()
            .map(|&i| number_value(&cx.pieces[i].value))
            .collect();
        used.pieces.extend(&free);
        out.args.insert(slot.name.to_string(), Value::Array(values));
    }
}

/// A number as JSON: an integer when it is one ("10", "10,000"), else a decimal
/// ("1.75"); text that is no number stays text.
pub(super) fn number_value(v: &str) -> Value {
    let plain = v.replace(',', "");
    plain.parse::<i64>().map_or_else(
        |_| {
            plain
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map_or_else(|| Value::String(v.into()), Value::Number)
        },
        Value::from,
    )
}
