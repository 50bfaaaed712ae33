//! What earlier steps and clauses give: references to a step's output, values said
//! before and named again, possessives that point back, and what a step makes.

use std::sync::Arc;

use serde_json::{Map, Value};
use waypoint_protocol::ExtractedKind;

use crate::lexicon::Lexicon;
use crate::text::Token;

use super::names::{name_parts, name_words, named_before, naming_words};
use super::spec::fits;
use super::values::{is_address, number_value};
use super::{Context, Inputs, Kind, Slot, State, Used, reference, step_id};

/// A required argument still empty that names no content (where, when, how many) takes
/// the value an earlier step of the request was given under the same name: the request
/// said it once for both ("a bus from New York to Boston … and buy me a ticket"). An
/// address — a path, URL, e-mail or id — names one thing, which the later step need not
/// act on ("create notes.txt …, then list the directory"), so it is not carried unless
/// a pronoun of the clause points back at it as the earlier verb's object ("read
/// todo.txt, then append a line *to it*": the same file, not what reading it returned).
pub(super) fn fill_carried(cx: &Context<'_, '_>, st: &mut State) {
    let toks = cx.inputs.clause.tokens();
    let from = cx.inputs.clause.head_verb.map_or(0, |h| h + 1);
    let points_back =
        (toks.iter().skip(from)).any(|t| cx.lex.words.referring_pronouns.contains(&t.form));
    // Whether the request wrote this value as an address.
    let address = |v: &Value| {
        v.as_str().is_some_and(|v| {
            (cx.inputs.earlier.iter().flat_map(|c| &c.values))
                .any(|f| f.value == v && is_address(f.kind))
        })
    };
    // The address the nearest earlier action's verb acts on ("read *todo.txt*"), which a
    // pronoun after this clause's verb stands for; one after a preposition ("search for
    // notes *in /docs*") says where, not what.
    let pointed_at = (cx.inputs.earlier.iter().rfind(|c| c.is_action()))
        .filter(|_| points_back)
        .and_then(|c| {
            let object = (c.tokens().iter().skip(c.head_verb.map_or(0, |h| h + 1)))
                .take_while(|t| t.value || !cx.lex.words.prepositions.contains(&t.form))
                .find(|t| t.value)?;
            (c.values.iter())
                .find(|f| f.start <= object.start && object.start < f.end && is_address(f.kind))
                .map(|f| f.value.as_str())
        });
    for slot in cx
        .slots
        .iter()
        .filter(|s| s.required && !takes_content(s, cx.lex))
    {
        if st.out.args.contains_key(slot.name) {
            continue;
        }
        let carried = (cx.inputs.carried.iter()).find(|(name, v)| {
            name == slot.name
                && fits(v, slot.schema)
                && (!address(v) || pointed_at.is_some_and(|p| v.as_str() == Some(p)))
        });
        if let Some((_, v)) = carried {
            // The pronoun is this address, so no earlier output flows in for it.
            st.used.pronoun |= address(v);
            st.out.args.insert(slot.name.to_string(), v.clone());
        }
    }
}

/// Words that point at an earlier step's output go to an argument as a reference to
/// that step: "the profit", "the generated random password" (a definite phrase ending in
/// what an earlier step produces), or a bare "it"/"them" as the verb's object when the
/// latest earlier step produces something ("get a random joke and send *it* to …"). The
/// argument is the one named right before the phrase ("an allowance equal to *the
/// GCD*"), else the first required one still empty that is named for content (`message`,
/// `text`: the lexicon's text arguments), takes a number (what an earlier step computed),
/// takes free text, or is at least not a flag or a choice — in that order.
pub(super) fn fill_refs(cx: &Context<'_, '_>, st: &mut State) {
    let Context {
        slots, inputs, lex, ..
    } = *cx;
    if inputs.from_step.is_some() || inputs.outputs.is_empty() {
        return;
    }
    let toks = inputs.clause.tokens();
    let from = inputs.clause.head_verb.map_or(0, |h| h + 1);
    let State { used, out } = st;
    let own_name = inputs.own_name;
    // "that amount": a demonstrative before the name of an argument still open.
    let open_heads: Vec<&str> = slots
        .iter()
        .filter(|s| s.required && !out.args.contains_key(s.name))
        .flat_map(|s| {
            s.naming
                .iter()
                .filter(|(_, head)| *head)
                .map(|(w, _)| w.as_str())
        })
        .collect();
    for Referring {
        step,
        start,
        end,
        pronoun,
    } in referring_phrases(cx, from, own_name, &open_heads, used)
    {
        let open = |s: &&Slot<'_>| s.required && !out.args.contains_key(s.name);
        let named = slots
            .iter()
            .filter(open)
            .find(|s| s.headed_by(&toks[end - 1].stem))
            .or_else(|| {
                slots
                    .iter()
                    .filter(open)
                    .find(|s| named_just_before(s, &toks[from.min(start)..start], own_name, lex))
            })
            .or_else(|| {
                // Said outright, so an optional argument too.
                slots
                    .iter()
                    .filter(|s| !out.args.contains_key(s.name))
                    .find(|s| named_as(s, &toks[end..], lex))
            });
        let slot = named
            .or_else(|| {
                slots
                    .iter()
                    .filter(open)
                    .find(|s| head_near(s, toks, from, start, cx, used))
            })
            .or_else(|| slots.iter().filter(open).find(|s| takes_content(s, lex)))
            .or_else(|| slots.iter().filter(open).find(|s| s.numeric()))
            .or_else(|| slots.iter().filter(open).find(|s| s.free_text()))
            .or_else(|| {
                slots.iter().filter(open).find(|s| {
                    !s.kinds.contains(&Kind::Enum)
                        && s.item_schema().get("type").and_then(Value::as_str) != Some("boolean")
                })
            });
        let Some(slot) = slot else {
            break;
        };
        // "fetch https://… and then summarize it": a value an earlier clause gave that
        // this argument takes is what a bare pronoun stands for (see `object_value`).
        if pronoun && earlier_value(slot, inputs, lex).is_some() {
            continue;
        }
        used.spans
            .push((toks[start].start, toks[end - 1].end, true));
        out.args
            .insert(slot.name.to_string(), reference(&step_id(step)));
        // "the GCD with both the values": the second argument of the pair too.
        let paired = start
            .checked_sub(1)
            .is_some_and(|b| lex.words.pair_words.contains(&toks[b].form));
        if paired
            && let Some(other) = slots.iter().find(|s| {
                s.required
                    && !out.args.contains_key(s.name)
                    && s.numeric() == slot.numeric()
                    && s.free_text() == slot.free_text()
            })
        {
            out.args
                .insert(other.name.to_string(), reference(&step_id(step)));
        }
        if !out.linked.contains(&step) {
            out.linked.push(step);
        }
    }
}

/// "retrieve *its* financial statements", "get *her* followers": a possessive pronoun
/// right after the clause's verb says that what is asked for belongs to what the step
/// before made, so the arguments that identify it take that step's output — every open
/// required one whose name or description names an id ("Central Index Key", "SEC
/// Filing Identifier"), or, of a tool that requires none, the first such.
pub(super) fn fill_possessed(cx: &Context<'_, '_>, st: &mut State) {
    let Context {
        slots, inputs, lex, ..
    } = *cx;
    let Some(made) = inputs.outputs.last() else {
        return;
    };
    if inputs.from_step.is_some() {
        return;
    }
    let toks = inputs.clause.tokens();
    let Some(verb) = inputs.clause.head_verb else {
        return;
    };
    let at = (verb + 1..toks.len()).find(|&i| !lex.words.particles.contains(&toks[i].form));
    let possessed = at.is_some_and(|i| {
        lex.words.referring_possessives.contains(&toks[i].form)
            && toks
                .get(i + 1)
                .is_some_and(|next| lex.is_content(next) && !next.value)
    });
    if !possessed {
        return;
    }
    let State { out, .. } = st;
    let identifies = |slot: &&Slot<'_>| slot.identifies && !out.args.contains_key(slot.name);
    let any_required = slots.iter().any(|s| s.required);
    let targets: Vec<&Slot<'_>> = if any_required {
        slots
            .iter()
            .filter(|s| s.required)
            .filter(identifies)
            .collect()
    } else {
        slots.iter().find(identifies).into_iter().collect()
    };
    for slot in targets {
        // The step whose product the argument is named after, if one is ("list her
        // albums" takes the artist id the lookup made, not the overview's).
        let step = output_named(slot, inputs.outputs).unwrap_or(made.step);
        out.args
            .insert(slot.name.to_string(), reference(&step_id(step)));
        if !out.linked.contains(&step) {
            out.linked.push(step);
        }
    }
}

/// Whether the words just before a reference name `slot` ("an allowance equal to the
/// GCD"), and not only by words of the tool's own name: "calculate the sales *tax* for
/// the total" does not name `tax_rate`.
fn named_just_before(
    slot: &Slot<'_>,
    before: &[Token],
    own_name: &[String],
    lex: &Lexicon,
) -> bool {
    named_before(before, slot.naming, lex).is_some_and(|(_, first)| {
        before[first..]
            .iter()
            .filter(|t| lex.is_content(t))
            .any(|t| !own_name.contains(&t.stem) || slot.headed_by(&t.stem))
    })
}

/// Whether the words after a reference say which argument it is: "with the recorded
/// audio *as a ringtone*" (the argument's head word after "as" and an article or a
/// possessive at most).
fn named_as(slot: &Slot<'_>, after: &[Token], lex: &Lexicon) -> bool {
    let Some(rest) = after
        .split_first()
        .and_then(|(first, rest)| lex.words.role_markers.contains(&first.form).then_some(rest))
    else {
        return false;
    };
    let rest = rest
        .split_first()
        .filter(|(t, _)| lex.is_determiner(t) || lex.words.possessives.contains(&t.form))
        .map_or(rest, |(_, r)| r);
    rest.first().is_some_and(|t| slot.headed_by(&t.stem))
}

/// Whether the head word of `slot`'s name is written a few words before token `start`
/// in the same stretch of the clause (no comma, no other argument's words between): "an
/// *amount* equal to the driving distance" gives the reference to `amount`.
fn head_near(
    slot: &Slot<'_>,
    toks: &[Token],
    from: usize,
    start: usize,
    cx: &Context<'_, '_>,
    used: &Used,
) -> bool {
    const WINDOW: usize = 4;
    let request = cx.inputs.request;
    for i in (from.max(start.saturating_sub(WINDOW))..start).rev() {
        let gap = request
            .get(toks[i].end..toks[i + 1].start)
            .unwrap_or_default();
        if used.covers(&toks[i]) || gap.contains([',', ';']) {
            return false;
        }
        if slot.headed_by(&toks[i].stem) {
            return true;
        }
    }
    false
}

/// Whether an argument is named for content (`message`, `body`, `text`): what an
/// earlier step made goes there first.
pub(super) fn takes_content(slot: &Slot<'_>, lex: &Lexicon) -> bool {
    slot.free_text()
        && slot.words.iter().any(|w| {
            lex.arg_names
                .iter()
                .any(|(k, names)| k == "text" && names.contains(w))
        })
}

/// Words of a clause that point at an earlier step's output: tokens `start..end`.
struct Referring {
    pub(super) step: usize,
    pub(super) start: usize,
    pub(super) end: usize,
    /// A bare "it"/"them", which an earlier clause's value can stand for instead.
    pub(super) pronoun: bool,
}

/// The phrases of a clause (from token `from` on) that point at an earlier step's output,
/// in the clause's order.
fn referring_phrases(
    cx: &Context<'_, '_>,
    from: usize,
    name_stems: &[String],
    open_heads: &[&str],
    used: &Used,
) -> Vec<Referring> {
    let toks = cx.inputs.clause.tokens();
    let read = Phrases {
        toks,
        outputs: cx.inputs.outputs,
        request: cx.inputs.request,
        lex: cx.lex,
        used,
    };
    let mut found = read.demonstratives(from, open_heads);
    found.extend(read.pronoun(from));
    for (i, t) in toks.iter().enumerate().skip(from) {
        if t.value || used.covers(t) || found.iter().any(|f| f.start <= i && i < f.end) {
            continue;
        }
        if let Some(r) = read.participle(i).or_else(|| read.possessive(i)) {
            found.push(r);
            continue;
        }
        let Some((step, start)) = read.product_word(i, name_stems) else {
            continue;
        };
        // "the total sales amount" is one phrase: a later noun of it extends it, and the
        // step a product's word named stays (a word for any product names only the last).
        if let Some(f) = found.iter_mut().find(|f| f.start == start) {
            f.end = i + 1;
            continue;
        }
        found.push(Referring {
            step,
            start,
            end: i + 1,
            pronoun: false,
        });
    }
    found.sort_by_key(|f| f.start);
    found
}

/// The readers of [`referring_phrases`], over one clause's tokens.
struct Phrases<'a> {
    pub(super) toks: &'a [Token],
    pub(super) outputs: &'a [Made],
    pub(super) request: &'a str,
    pub(super) lex: &'a Lexicon,
    pub(super) used: &'a Used,
}

impl Phrases<'_> {
    fn free(&self, t: &Token) -> bool {
        !t.value && !self.used.covers(t)
    }

    /// Where the definite word of the phrase ending at `i` stands.
    fn definite(&self, i: usize) -> Option<usize> {
        self.lex.definite_before(self.toks, i, |t| self.free(t))
    }

    /// "for that amount", "convert this amount": a demonstrative before the name of an
    /// argument the step still needs points back at the latest step that makes something.
    fn demonstratives(&self, from: usize, open_heads: &[&str]) -> Vec<Referring> {
        let (toks, lex) = (self.toks, self.lex);
        let Some(made) = self.outputs.iter().rev().find(|m| !m.names.is_empty()) else {
            return Vec::new();
        };
        (from.max(1)..toks.len())
            .filter(|&i| {
                lex.words.demonstratives.contains(&toks[i - 1].form)
                    && self.free(&toks[i])
                    && open_heads.contains(&toks[i].stem.as_str())
            })
            .map(|i| Referring {
                step: made.step,
                start: i - 1,
                end: i + 1,
                pronoun: false,
            })
            .collect()
    }

    /// A bare pronoun as the verb's object, or a free relative whose verb is another's
    /// ("what you find"): the latest step's output, if it has one.
    fn pronoun(&self, from: usize) -> Option<Referring> {
        let (toks, lex) = (self.toks, self.lex);
        let t = toks.get(from)?;
        let made = self.outputs.last()?;
        if self.used.covers(t) || made.names.is_empty() {
            return None;
        }
        let len = if lex.words.referring_pronouns.contains(&t.form)
            && toks.get(from + 1).is_none_or(|n| {
                !lex.is_content(n) || n.value || lex.words.verb_particles.contains(&n.form)
            }) {
            1
        } else if let Some(at) = self.free_relative(from) {
            at + 3 - from
        } else {
            return None;
        };
        Some(Referring {
            step: made.step,
            start: from,
            end: from + len,
            pronoun: true,
        })
    }

    /// Where "what you find" starts at `from`, or after "me"/"us" there ("email me
    /// what you get"): a free relative, a subject and its verb.
    fn free_relative(&self, from: usize) -> Option<usize> {
        let (toks, lex) = (self.toks, self.lex);
        let at = if toks
            .get(from)
            .is_some_and(|t| lex.words.particles.contains(&t.form))
        {
            from + 1
        } else {
            from
        };
        (lex.opens_free_relative(toks, at)
            && toks
                .get(at + 2)
                .is_some_and(|v| !v.value && (lex.is_verb(v) || lex.is_content(v))))
        .then_some(at)
    }

    /// "the recorded audio": a participle of the verb an earlier step's tool is named
    /// for, before a noun, after a definite word; of several steps named for the verb,
    /// the one whose product the following words name ("the calculated *discount
    /// amount*"); else a participle of another word of a tool's name ("the *discounted*
    /// price" after `calculate_discount`).
    fn participle(&self, i: usize) -> Option<Referring> {
        let (toks, lex) = (self.toks, self.lex);
        if !toks[i].form.ends_with("ed")
            || !toks
                .get(i + 1)
                .is_some_and(|n| lex.is_content(n) && self.free(n))
        {
            return None;
        }
        let stem = toks[i].stem.as_str();
        let by_verb = |made: &&Made| made.verb.as_deref() == Some(stem);
        let named_next = |made: &&Made| {
            toks[i + 1..]
                .iter()
                .take(3)
                .take_while(|n| lex.is_content(n))
                .any(|n| made.heads.contains(&n.stem))
        };
        let outputs = || self.outputs.iter().rev();
        let made = outputs()
            .filter(by_verb)
            .find(named_next)
            .or_else(|| outputs().find(by_verb))
            .or_else(|| outputs().find(|m| m.words.iter().any(|w| w == stem)))?;
        Some(Referring {
            step: made.step,
            start: self.definite(i)?,
            end: i + 2,
            pronoun: false,
        })
    }

    /// "the todo item's description": what belongs to a thing an earlier step's tool is
    /// named for, or to its product, is that step's.
    fn possessive(&self, i: usize) -> Option<Referring> {
        let (toks, lex) = (self.toks, self.lex);
        let word = self.request.get(toks[i].start..toks[i].end)?;
        if !(word.ends_with("'s") || word.ends_with("’s")) {
            return None;
        }
        let start = self.definite(i)?;
        let made = self.outputs.iter().rev().find(|m| {
            toks[start..=i]
                .iter()
                .any(|t| m.words.contains(&t.stem) || m.heads.contains(&t.stem))
        })?;
        let owned = toks
            .get(i + 1)
            .is_some_and(|n| lex.is_content(n) && self.free(n));
        Some(Referring {
            step: made.step,
            start,
            end: i + 1 + usize::from(owned),
            pronoun: false,
        })
    }

    /// The latest step whose product's last word the word at `i` is, or the latest step
    /// for a word that names any product ("the result"), with where the phrase starts.
    fn product_word(&self, i: usize, name_stems: &[String]) -> Option<(usize, usize)> {
        let (toks, lex) = (self.toks, self.lex);
        let step = self
            .outputs
            .iter()
            .rev()
            .find_map(|made| made.heads.contains(&toks[i].stem).then_some(made.step))
            .or_else(|| {
                lex.words
                    .output_nouns
                    .contains(&toks[i].form)
                    .then(|| self.outputs.last().map(|made| made.step))
                    .flatten()
            })?;
        let next = toks.get(i + 1);
        // "calculate the sales *tax*": the word is part of the name of this tool's thing;
        // "the number 10" names the value written after it, not an earlier output.
        if next.is_some_and(|n| {
            n.value
                || number_value(&n.form).is_number()
                || lex.is_content(n) && name_stems.contains(&n.stem)
        }) {
            return None;
        }
        // "the (generated random) password".
        Some((step, self.definite(i)?))
    }
}

/// A value said earlier, named again: "calculate the profit with expenses of 5000, then
/// the GCD of the profit and *the expenses*" — "the expenses" is the 5000 an earlier step
/// was given as `expenses`. A definite article followed by every word of an earlier
/// argument's name gives that value to a required argument still empty that it fits,
/// names no content or address, and is named like it or only by its position.
pub(super) fn fill_said(cx: &Context<'_, '_>, st: &mut State) {
    let toks = cx.inputs.clause.tokens();
    let from = cx.inputs.clause.head_verb.map_or(0, |h| h + 1);
    let State { used, out } = st;
    let mut seen: Vec<&str> = Vec::new();
    for (name, value) in cx.inputs.carried {
        if seen.contains(&name.as_str()) || !(value.is_number() || value.is_string()) {
            continue;
        }
        seen.push(name);
        let words = naming_words(name, cx.lex);
        let n = words.len();
        if n == 0 {
            continue;
        }
        let Some(at) = (from..toks.len().saturating_sub(n)).find(|&i| {
            cx.lex.words.articles.contains(&toks[i].form)
                && !cx.lex.articles.new.contains(&toks[i].form)
                && toks[i + 1..=i + n]
                    .iter()
                    .zip(&words)
                    .all(|(t, (w, _))| !used.covers(t) && t.stem == *w)
                // The whole name, not the start of a longer phrase ("the expenses report").
                && toks.get(i + n + 1).is_none_or(|t| !cx.lex.is_content(t) || t.value)
        }) else {
            continue;
        };
        let open = |s: &&Slot<'_>| {
            s.required
                && !out.args.contains_key(s.name)
                && !takes_content(s, cx.lex)
                && !s.takes_addresses()
                && fits(value, s.schema)
        };
        // An argument named like it ("the basic salary" → `salary`), else one named only
        // by its position (`num2`, `b`); never one named for something else ("the loan
        // term" is no `principal_amount`).
        let positional =
            |s: &Slot<'_>| s.name.len() <= 2 || s.name.contains(|c: char| c.is_ascii_digit());
        let Some(slot) = cx
            .slots
            .iter()
            .filter(open)
            .find(|s| {
                s.naming
                    .iter()
                    .any(|(w, _)| words.iter().any(|(n, _)| n == w))
            })
            .or_else(|| cx.slots.iter().filter(open).find(|s| positional(s)))
        else {
            continue;
        };
        used.spans.push((toks[at].start, toks[at + n].end, true));
        out.args.insert(slot.name.to_string(), value.clone());
    }
}

/// The earlier step whose output flows into this one, while no argument refers to it yet.
pub(super) fn unplaced_flow<'i>(inputs: &Inputs<'i>, args: &Map<String, Value>) -> Option<&'i str> {
    inputs.from_step.filter(|step| {
        let r = reference(step);
        !args.values().any(|v| *v == r)
    })
}

/// The latest value an earlier clause gave that an argument takes: what "it" stands for
/// when no earlier step's output does. "them" is never one value, and a quotation is
/// "it" only when its clause quotes nothing else: after "find the lyrics of 'Bohemian Rhapsody' by 'Queen'", "translate
/// them" means the lyrics, not one of the two names that found them.
pub(super) fn earlier_value<'i>(
    slot: &Slot<'_>,
    inputs: &'i Inputs<'_>,
    lex: &Lexicon,
) -> Option<&'i crate::extract::Found> {
    let clause = inputs.clause;
    let plural = clause
        .tokens()
        .iter()
        .skip(clause.head_verb.map_or(0, |h| h + 1))
        .any(|t| lex.plural_anaphora.contains(&t.form));
    if plural {
        return None;
    }
    // The nearest action clause is the antecedent ("…with the query 'laptop', then get a
    // random joke and send it" sends the joke); material presented before it is read
    // through.
    for c in inputs.earlier.iter().rev().filter(|c| !c.is_declined()) {
        let quotes = c
            .values
            .iter()
            .filter(|f| f.kind == ExtractedKind::Quoted)
            .count();
        let found = c.values.iter().rev().find(|f| {
            slot.kinds.contains(&Kind::Value(f.kind))
                || (slot.kinds.contains(&Kind::Text)
                    && f.kind == ExtractedKind::Quoted
                    && quotes == 1)
        });
        if found.is_some() || c.is_action() {
            return found;
        }
    }
    None
}

/// The earlier step whose product an argument is named after, by the whole name or its
/// last words (`origin_sky_id` takes a `sky_id`): the one naming it most fully
/// (`artist_id` before a bare `id`), the latest of those that name it alike.
pub(super) fn output_named(slot: &Slot<'_>, outputs: &[Made]) -> Option<usize> {
    let arg = slot.words.first()?;
    let mut best: Option<(usize, usize)> = None;
    for made in outputs.iter().rev() {
        let named = made
            .names
            .iter()
            .filter(|k| {
                !k.is_empty()
                    && arg
                        .strip_suffix(k.as_str())
                        .is_some_and(|rest| rest.is_empty() || rest.ends_with('_'))
            })
            .map(String::len)
            .max();
        if let Some(len) = named
            && best.is_none_or(|(b, _)| len > b)
        {
            best = Some((len, made.step));
        }
    }
    best.map(|(_, step)| step)
}

/// What an earlier step makes, with the words that name it worked out once per step
/// rather than once for every later argument that looks back at it.
///
/// The words depend on the tool alone, so the route index works them out once per entry
/// and a step takes a copy that shares them ([`Made::at`]).
#[derive(Debug, Clone)]
pub struct Made {
    pub step: usize,
    /// Each kind's name as words joined by `_` (`pdf_summary`).
    pub(super) names: Arc<[String]>,
    /// The stems of the last words of the kinds' names ("summary").
    pub(super) heads: Arc<[String]>,
    /// The stem of the verb the step's tool is named for (`record_audio`: "record"), so
    /// "the *recorded* audio" names its output whatever the tool calls it.
    pub(super) verb: Option<Arc<str>>,
    /// The stems of the tool's name words: "the *discounted* price" after
    /// `calculate_discount`, "the *todo* item's description" after `create_todo`.
    pub(super) words: Arc<[String]>,
}

impl Made {
    /// The same products, made by the step at `step`.
    pub fn at(&self, step: usize) -> Self {
        Self {
            step,
            ..self.clone()
        }
    }

    pub fn new(step: usize, tool: &str, kinds: &[String], lex: &Lexicon) -> Self {
        let short = crate::text::without_server(tool);
        let verb = name_parts(short)
            .first()
            .map(|w| lex.synonyms.stem_and_key(w).0)
            .filter(|w| lex.verbs.contains(w))
            .map(Arc::from);
        Self {
            step,
            verb,
            words: naming_words(short, lex)
                .into_iter()
                .map(|(w, _)| w)
                .collect(),
            names: kinds.iter().map(|k| name_words(k).swap_remove(0)).collect(),
            heads: kinds
                .iter()
                .flat_map(|k| naming_words(k, lex))
                .filter_map(|(w, head)| head.then_some(w))
                .collect(),
        }
    }
}
