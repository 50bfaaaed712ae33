//! Free text: what the clause is about, for the main free-text argument, without the
//! words other arguments took; names, quotations and proper nouns.

use serde_json::{Value, json};
use waypoint_catalog::Tool;
use waypoint_protocol::ExtractedKind;

use crate::lexicon::Lexicon;
use crate::segment::inflected;
use crate::text::Token;
use crate::understand::ClauseAnalysis;

use super::flow::{earlier_value, output_named, takes_content, unplaced_flow};
use super::names::names_an_id;
use super::spec::{ArgSpec, coerce, first_string, fits, slots};
use super::{Context, Inputs, Kind, Slot, State, Used, fill, reference, step_id};

/// The first required free-text slot still empty takes what the clause is about; the
/// other required free-text slots take the quotations left, in order ("the song
/// 'Bohemian Rhapsody' by 'Queen'"). An array slot takes every quotation left, or its one
/// value as a list.
pub(super) fn fill_text(cx: &Context<'_, '_>, st: &mut State) {
    let (slots, pieces, inputs) = (cx.slots, cx.pieces, cx.inputs);
    let State { used, out } = st;
    let mut first = true;
    // What the clause is about goes to an argument named for content first (`message`
    // before `phone_number`), else to the first in the schema's order.
    let mut order: Vec<&Slot<'_>> = slots
        .iter()
        .filter(|s| s.required && s.free_text())
        .collect();
    order.sort_by_key(|s| !takes_content(s, cx.lex));
    for slot in order {
        if out.args.contains_key(slot.name) {
            continue;
        }
        let quoted: Vec<usize> = (0..pieces.len())
            .filter(|i| {
                !used.pieces.contains(i) && pieces[*i].kind == Kind::Value(ExtractedKind::Quoted)
            })
            .collect();
        let value = if slot.is_array() && quoted.len() > 1 && inputs.from_step.is_none() {
            used.pieces.extend(&quoted);
            Some(Value::Array(
                quoted
                    .iter()
                    .map(|&i| Value::String(pieces[i].value.clone()))
                    .collect(),
            ))
        } else if first {
            object_value(slot, cx, used)
        } else {
            quoted.first().map(|&i| {
                used.pieces.push(i);
                Value::String(pieces[i].value.clone())
            })
        };
        first = false;
        if let Some(v) = value {
            let v = match v {
                Value::String(_) if slot.is_array() => Value::Array(vec![v]),
                other => other,
            };
            out.args.insert(slot.name.to_string(), v);
        }
    }
}

/// A quotation nothing took goes to the one required argument still open, when it fits
/// there and no earlier output is left to fill it: "then encrypt the result with
/// 'abc'" gives the result to `data` and `'abc'` to `encryption_key`, which the request
/// does not name. Two open arguments, or two quotations, leave the question, and so does
/// an address (path, URL, e-mail) the quotation is not a value of.
pub(super) fn fill_last_quote(cx: &Context<'_, '_>, st: &mut State) {
    let (slots, pieces, lex) = (cx.slots, cx.pieces, cx.lex);
    let State { used, out } = st;
    if unplaced_flow(cx.inputs, &out.args).is_some() {
        return;
    }
    let quotes: Vec<usize> = (0..pieces.len())
        .filter(|i| {
            !used.pieces.contains(i) && pieces[*i].kind == Kind::Value(ExtractedKind::Quoted)
        })
        .collect();
    let open: Vec<&Slot<'_>> = slots
        .iter()
        .filter(|s| s.required && !out.args.contains_key(s.name))
        .collect();
    let ([q], [slot]) = (quotes.as_slice(), open.as_slice()) else {
        return;
    };
    // An address (a path, a URL, an e-mail) takes only a value of its kind: "create a
    // folder called '$(touch pwned)'" names no folder path.
    if slot.kinds.contains(&Kind::Enum)
        || slot.is_array()
        || (slot.takes_addresses() && !slot.takes(&pieces[*q], lex))
    {
        return;
    }
    let value = pieces[*q].coerce_for(slot, lex);
    if !value.is_string() || !fits(&value, slot.item_schema()) {
        return;
    }
    used.pieces.push(*q);
    out.args.insert(slot.name.to_string(), value);
}

/// What the clause is about, for its main free-text argument: an earlier step's output
/// when data flows in, a name, a quotation, URL or path, a pasted payload, or the
/// object's own words.
fn object_value(slot: &Slot<'_>, cx: &Context<'_, '_>, used: &mut Used) -> Option<Value> {
    let Context {
        pieces,
        inputs,
        lex,
        ..
    } = *cx;
    if let Some(step) = inputs.from_step {
        // An argument named for what flows in (`distance` ← a step making `distance`)
        // takes it, and with it what the clause is about ("convert *it* into miles").
        let named_for_it = cx.slots.iter().any(|s| {
            s.name != slot.name
                && output_named(s, inputs.outputs).is_some_and(|i| step_id(i) == step)
        });
        return (!named_for_it).then(|| reference(step));
    }
    let clause = inputs.clause;
    if let Some(text) = name_after_its_name(slot, clause, inputs.request, used, lex) {
        return Some(Value::String(text));
    }
    let described = slot
        .schema
        .get("description")
        .and_then(Value::as_str)
        .map(|d| d.trim_start().to_lowercase())
        .unwrap_or_default();
    // "The name of the company": a name the clause writes, else a question; never the
    // clause's words.
    let described_as_name = lex
        .name_descriptions
        .iter()
        .any(|o| described.starts_with(o.as_str()));
    let names_something =
        described_as_name || slot.words.iter().any(|w| lex.identifier_args.contains(w));
    if names_something && let Some(s) = name_in(clause, inputs.request, used, lex) {
        return Some(Value::String(s));
    }
    if described_as_name {
        return None;
    }
    if let Some(i) = (0..pieces.len()).find(|i| {
        !used.pieces.contains(i)
            && matches!(
                pieces[*i].kind,
                Kind::Value(ExtractedKind::Quoted | ExtractedKind::Urls | ExtractedKind::Paths)
            )
    }) {
        used.pieces.push(i);
        return Some(Value::String(pieces[i].value.clone()));
    }
    if let Some(text) = inputs.payload.and_then(first_string) {
        return Some(Value::String(text.to_string()));
    }
    // The words of the tool's name and description, but not this argument's own: "the
    // example library" keeps "library" for `library`.
    let slot_words = slot.naming;
    let own: Vec<String> = inputs
        .own_words
        .iter()
        .filter(|w| !slot_words.iter().any(|(s, _)| s == *w))
        .cloned()
        .collect();
    match object_words(inputs, lex, used, &own) {
        // A name is one word when no cue, identifier or capital says which words it is:
        // "find the bug in the retry logic" names no symbol.
        Object::Words(text) if !inputs.vague && (!names_something || is_one_word(&text)) => {
            Some(object_items(&text, slot, cx))
        }
        // "summarize it" after "fetch https://…": with no earlier output it can take, the
        // step takes the value the earlier clause named, when it fits.
        Object::PointsBack { pronoun } => {
            match earlier_value(slot, inputs, lex) {
                Some(f) => Some(Value::String(f.value.clone())),
                // "remember this launch, write a blog about it": it is the launch (but "the
                // results" of "build it" are its output, not the thing built).
                None => inputs
                    .antecedent
                    .filter(|_| pronoun)
                    .map(|w| Value::String(w.to_string())),
            }
        }
        Object::Words(_) | Object::Nothing => None,
    }
}

/// The clause's object as an argument holds it. A list argument takes one item per
/// listed name ("between New York, Boston and Denver" → three), and a name or place
/// ends where words naming another of the tool's arguments begin ("San Francisco *with
/// mode of transport* as driving"), and a kind written with an indefinite article is its
/// noun ("a circle with a radius of 5" → circle); a message or brief keeps its words whole.
fn object_items(text: &str, slot: &Slot<'_>, cx: &Context<'_, '_>) -> Value {
    let lex = cx.lex;
    let cut = |item: &str| -> String {
        if takes_content(slot, lex) {
            return item.to_string();
        }
        let mut words: Vec<&str> = item.split_whitespace().collect();
        // "a circle with a radius of 5": a kind, named by the noun after the article.
        let indefinite = |w: &str| {
            let w = w.to_lowercase();
            lex.articles.new.contains(&w) && lex.words.articles.contains(&w)
        };
        if words.len() > 1 && indefinite(words[0]) {
            words.remove(0);
        }
        // … and its measures, which other arguments take, are not part of it ("rectangle
        // *with length 5 meters*").
        let preposition = |w: &str| lex.words.prepositions.contains(&w.to_lowercase());
        if let Some(p) = (1..words.len()).find(|&i| {
            preposition(words[i])
                && words[i + 1..]
                    .iter()
                    .any(|w| w.starts_with(|c: char| c.is_ascii_digit()))
        }) {
            words.truncate(p);
        }
        let names_another = |w: &str| {
            let stem = crate::text::stem(&w.to_lowercase());
            cx.slots
                .iter()
                .any(|o| o.name != slot.name && o.naming.iter().any(|(n, _)| *n == stem))
        };
        let at = (1..words.len()).find(|&i| {
            preposition(words[i])
                && words[i + 1..]
                    .iter()
                    .find(|w| !lex.words.articles.contains(&w.to_lowercase()))
                    .is_some_and(|w| names_another(w))
        });
        trim_words(&words[..at.unwrap_or(words.len())].join(" "), lex)
    };
    if !slot.is_array() {
        return Value::String(cut(text));
    }
    let joiner = |w: &str| lex.list_joiners.iter().any(|j| w.eq_ignore_ascii_case(j));
    let items: Vec<Value> = text
        .split([',', ';'])
        .flat_map(|part| {
            let words: Vec<&str> = part.split_whitespace().collect();
            words
                .split(|w| joiner(w))
                .map(|item| item.join(" "))
                .collect::<Vec<_>>()
        })
        .map(|item| cut(&trim_words(&item, lex)))
        .filter(|item| !item.is_empty())
        .map(|item| coerce(&item, slot.item_schema(), lex))
        .collect();
    Value::Array(items)
}

fn is_one_word(text: &str) -> bool {
    !text.contains(' ')
}

/// A name the clause gives: a code identifier (`TokenManager`), else the first run of
/// capitalised words after the verb ("play the movie *Inception*", "at the *Holiday Inn*")
/// that no indefinite article opens: "a *Chinese* restaurant", "a *Sports* event" say what
/// kind of one, not which.
fn name_in(clause: &ClauseAnalysis, request: &str, used: &Used, lex: &Lexicon) -> Option<String> {
    let toks = clause.tokens();
    if let Some(tok) = toks.iter().find(|t| t.identifier) {
        return request.get(tok.start..tok.end).map(str::to_string);
    }
    let from = clause.head_verb.map_or(0, |h| h + 1);
    let start = (from..toks.len()).find(|&i| {
        toks[i].proper
            && !used.covers(&toks[i])
            && (i <= from || !toks[i - 1].proper)
            && (i == 0 || !lex.articles.new.contains(&toks[i - 1].form))
    })?;
    let end = (start..toks.len())
        .find(|&i| !toks[i].proper || used.covers(&toks[i]))
        .unwrap_or(toks.len());
    request
        .get(toks[start].start..toks[end - 1].end)
        .map(str::to_string)
}

/// A name written right after the argument's own name, or after "is" and words naming
/// ids: "the ticker *MSFT*", "Microsoft (ticker id is *MSFT*)". The argument's name says
/// which words are its value; the rest of the object ("Microsoft") is what the request is
/// about. Not for content (a message keeps all of its words) nor a list (it takes
/// items): a name is at most four capitalised words or identifiers.
fn name_after_its_name(
    slot: &Slot<'_>,
    clause: &ClauseAnalysis,
    request: &str,
    used: &Used,
    lex: &Lexicon,
) -> Option<String> {
    if takes_content(slot, lex) || slot.is_array() {
        return None;
    }
    let toks = clause.tokens();
    let from = clause.head_verb.map_or(0, |h| h + 1);
    let at = (from..toks.len()).find(|&i| !toks[i].value && slot.headed_by(&toks[i].stem))?;
    let mut start = at + 1;
    while start < toks.len()
        && start - at <= 2
        && !toks[start].proper
        && !toks[start].identifier
        && (names_an_id(&toks[start].form, lex) || lex.words.copulas.contains(&toks[start].form))
    {
        start += 1;
    }
    let is_name = |t: &Token| (t.proper || t.identifier) && !t.value && !used.covers(t);
    let end = (start..toks.len())
        .take(4)
        .take_while(|&i| is_name(&toks[i]))
        .last()?
        + 1;
    request
        .get(toks[start].start..toks[end - 1].end)
        .map(str::to_string)
}

/// What a clause's object gives a free-text argument.
pub(super) enum Object {
    Words(String),
    /// Only words that point back ("it", "the summary"): a value this step cannot see;
    /// `pronoun` when they are a bare pronoun ("it", "them").
    PointsBack {
        pronoun: bool,
    },
    Nothing,
}

/// The clause's object without the words other arguments took: the first run of free
/// words after the head verb, without a leading phrase that only names what the tool
/// makes ("an image *of* a fox", "a blog post *about* our launch").
fn object_words(inputs: &Inputs<'_>, lex: &Lexicon, used: &Used, own: &[String]) -> Object {
    let toks = inputs.clause.tokens();
    let mut from = inputs.clause.head_verb.map_or(0, |h| h + 1);
    // A run of function words before a value another argument took ("*the* onboarding
    // agent to also send …" once `agent` has "onboarding") is no object: it goes on after.
    let (start, mut end) = loop {
        let Some(start) = (from..toks.len()).find(|&i| !used.covers(&toks[i])) else {
            return Object::Nothing;
        };
        let end = (start..toks.len())
            .find(|&i| used.breaks_at(&toks[i]))
            .unwrap_or(toks.len());
        if end == toks.len()
            || toks[start..end]
                .iter()
                .any(|t| t.value || lex.is_content(t))
        {
            break (start, end);
        }
        from = end;
    };
    // A bare value may sit inside the object, not at its end.
    while end > start && used.covers(&toks[end - 1]) {
        end -= 1;
    }
    // Nor at its start: "update *the Makefile* to add a lint target", where the
    // articles before the value another argument took go with it.
    let mut start = start;
    let articles = (start..end)
        .find(|&i| toks[i].value || !lex.is_determiner(&toks[i]))
        .unwrap_or(end);
    if articles > start && articles < end && used.covers(&toks[articles]) {
        start = (articles..end)
            .find(|&i| !used.covers(&toks[i]))
            .unwrap_or(end);
    }
    let mut run = before_own_conjunct(&toks[start..end], lex);
    // "a blog post about": at most three words naming an artifact, then a preposition.
    if let Some(p) = run
        .iter()
        .take(5)
        .position(|t| lex.about_markers.contains(&t.form))
        && p + 1 < run.len()
        && run[..p].iter().any(|t| (inputs.names_artifact)(&t.key))
    {
        run = &run[p + 1..];
    }
    if points_back(run, inputs, lex) {
        let pronoun = run.iter().all(|t| {
            lex.words.object_pronouns.contains(&t.form)
                || lex.words.demonstratives.contains(&t.form)
        });
        return Object::PointsBack { pronoun };
    }
    let is_value = |t: &Token| {
        t.value || (inputs.clause.values.iter()).any(|f| f.start <= t.start && t.end <= f.end)
    };
    let run = without_own_words(appositive_value(run, is_value, lex), own, lex);
    let (Some(first), Some(last)) = (run.first(), run.last()) else {
        return Object::Nothing;
    };
    let text = span_text(inputs.request, first, last, lex);
    if text.is_empty() {
        Object::Nothing
    } else {
        Object::Words(text)
    }
}

/// The value that ends an object after a short common-noun phrase naming it ("encrypt
/// *the birthdate* '1990-01-01'", "send *the code* 4411"): the phrase says what the value
/// is, the value is what the argument takes. A phrase with a name in it ("the Holiday Inn
/// hotel 2022") or longer than three words is left whole.
fn appositive_value<'r>(
    run: &'r [Token],
    is_value: impl Fn(&Token) -> bool,
    lex: &Lexicon,
) -> &'r [Token] {
    let Some(v) = run.iter().position(&is_value) else {
        return run;
    };
    let w = (v..run.len())
        .find(|&i| !is_value(&run[i]))
        .unwrap_or(run.len());
    let phrase = &run[..v];
    let names_it = (1..=3).contains(&v)
        // What trails the value only joins it to the next ("… '1990-01-01' *using* the key").
        && run[w..].iter().all(|t| !lex.is_content(t))
        && phrase.iter().any(|t| lex.is_content(t))
        && phrase
            .iter()
            .all(|t| !t.proper && (lex.is_determiner(t) || lex.is_content(t)));
    if names_it { &run[v..w] } else { run }
}

/// An object that ends before a request of the caller's own joined to its relative
/// clause: in "an agent that *watches my inbox* and run it every Monday", the
/// clause's verb is inflected for its noun and "run" is bare, so "run it every Monday"
/// asks something of the agent once made (a schedule) and is no part of what it does.
/// "an agent that watches X *and emails me*" carries the description on.
fn before_own_conjunct<'r>(run: &'r [Token], lex: &Lexicon) -> &'r [Token] {
    let Some(r) = run
        .iter()
        .position(|t| lex.relative_markers.contains(&t.form))
    else {
        return run;
    };
    if !run.get(r + 1).is_some_and(inflected) {
        return run;
    }
    let end = (r + 2..run.len().saturating_sub(1))
        .find(|&i| run[i].form == "and" && lex.is_verb(&run[i + 1]) && !inflected(&run[i + 1]));
    end.map_or(run, |e| &run[..e])
}

/// An object without the words at its edges that only restate the tool ("analyze *the
/// sales data for* laptops" → laptops, "get *the latest* technology *news headlines*" →
/// technology), with the function words around them. Unchanged when it has none, or
/// when nothing else would be left — but empty when a possessive opens it ("its
/// financial statements") or a pronoun in it points back ("a slide deck *with it*"): that
/// names the tool's product, not a value.
fn without_own_words<'r>(run: &'r [Token], own: &[String], lex: &Lexicon) -> &'r [Token] {
    let is_own = |t: &Token| !t.value && own.contains(&t.stem);
    // A capitalised word is part of a name ("New York"), not a function word.
    let filler = |t: &Token| !t.value && !t.proper && !lex.is_content(t);
    let (mut a, mut b, mut cut) = (0, run.len(), false);
    while a < b && (is_own(&run[a]) || filler(&run[a])) {
        cut |= is_own(&run[a]);
        a += 1;
        // What a relative clause says is the value ("an agent that *watches my inbox*"),
        // whatever words of the tool's it uses.
        if lex.relative_markers.contains(&run[a - 1].form) {
            break;
        }
    }
    while b > a && (is_own(&run[b - 1]) || filler(&run[b - 1])) {
        cut |= is_own(&run[b - 1]);
        b -= 1;
    }
    let run = if cut && a < b {
        &run[a..b]
    } else if cut
        && (run
            .first()
            .is_some_and(|t| lex.words.possessives.contains(&t.form))
            || run
                .iter()
                .any(|t| lex.words.referring_pronouns.contains(&t.form)))
    {
        // A possessive, or a pronoun pointing back, and nothing but the tool's own words
        // ("retrieve *its financial statements*" for `sec_financial_statements`, "make *a
        // slide deck with it*" for `slides_render`): the object is what the tool makes of
        // something said before, and gives no argument a value.
        &run[..0]
    } else {
        run
    };
    // "text it *to* 555": a value never starts with the preposition that introduced it.
    match run {
        [first, rest @ ..] if !rest.is_empty() && lex.words.prepositions.contains(&first.form) => {
            rest
        }
        _ => run,
    }
}

/// Words that only point at something said or made before: "it", "them", "the
/// summary", "that result" — not "a summary" (something new).
fn points_back(run: &[Token], inputs: &Inputs<'_>, lex: &Lexicon) -> bool {
    // "a summary", "another draft": something new, not something before.
    let indefinite = |t: &Token| lex.articles.new.contains(&t.form);
    !run.is_empty()
        && run.iter().all(|t| {
            (lex.is_determiner(t) && !indefinite(t))
                || lex.anaphora.contains(&t.form)
                || lex.vague_objects.contains(&t.form)
                || (inputs.names_artifact)(&t.key)
        })
        && run
            .iter()
            .any(|t| !lex.is_determiner(t) || lex.anaphora.contains(&t.form))
}

/// The request's words from token `first` to token `last`, trimmed as [`trim_words`]
/// trims them.
pub(super) fn span_text(request: &str, first: &Token, last: &Token, lex: &Lexicon) -> String {
    trim_words(request.get(first.start..last.end).unwrap_or_default(), lex)
}

/// Trims the punctuation and joining words a span can end with ("hello, and" → "hello").
pub(super) fn trim_words(s: &str, lex: &Lexicon) -> String {
    let mut t = s
        .trim()
        .trim_matches(|c: char| ",;:.!?\"'“”‘’`".contains(c))
        .trim();
    // The last word, whole and after a space, is a joining word (case aside).
    let ends_with_word = |t: &str, w: &str| {
        t.len() > w.len()
            && t.is_char_boundary(t.len() - w.len())
            && t[t.len() - w.len()..].eq_ignore_ascii_case(w)
            && t[..t.len() - w.len()].ends_with(' ')
    };
    while let Some(cut) = (lex.trailing_joiners.iter()).find(|w| ends_with_word(t, w)) {
        t = t[..t.len() - cut.len() - 1].trim_end_matches([',', ' ']);
    }
    t.to_string()
}

/// The first required argument of `tool` that takes free text (a name, a query).
pub fn free_text_arg<'t>(tool: &'t Tool, specs: &[ArgSpec]) -> Option<&'t str> {
    let at = slots(tool, specs)
        .iter()
        .position(|s| s.required && s.free_text())?;
    tool.properties().nth(at).map(|(name, _)| name)
}

/// The words a request gives for `what` ("origin": "from New York"), read as the value
/// of a one-argument view of `tool` by that name, narrowed to the name they hold
/// ("London that departs" → "London").
pub fn words_for(what: &str, tool: &Tool, inputs: &Inputs<'_>, lex: &Lexicon) -> Option<String> {
    let mut view = tool.clone();
    view.input_schema = Some(json!({
        "type": "object",
        "properties": {what: {"type": "string"}},
        "required": [what],
    }));
    let filled = fill(&view, None, inputs, lex);
    let words = filled.args.get(what)?.as_str()?;
    Some(capitalised(words).unwrap_or(words).to_string())
}

/// The first run of capitalised words in `text` ("London that departs" → "London").
fn capitalised(text: &str) -> Option<&str> {
    let mut run: Option<(usize, usize)> = None;
    let mut at = 0;
    for word in text.split(' ') {
        let start = at;
        at += word.len() + 1;
        let upper = word.chars().next().is_some_and(char::is_uppercase);
        match (upper, run) {
            (true, None) => run = Some((start, start + word.len())),
            (true, Some((s, _))) => run = Some((s, start + word.len())),
            (false, Some(_)) => break,
            (false, None) => {}
        }
    }
    run.and_then(|(s, e)| text.get(s..e))
}

/// The first run of proper nouns among a clause's words after its verb ("the top-rated
/// restaurants in Rome" → "Rome"): the name a lookup by name wants.
pub fn proper_run(clause: &ClauseAnalysis, request: &str) -> Option<String> {
    let toks = clause.tokens();
    let from = clause.head_verb.map_or(0, |h| h + 1);
    let first = (from..toks.len()).find(|&i| toks[i].proper && !toks[i].value)?;
    let last = (first..toks.len())
        .take_while(|&i| toks[i].proper && !toks[i].value)
        .last()?;
    request
        .get(toks[first].start..toks[last].end)
        .map(str::to_string)
}
