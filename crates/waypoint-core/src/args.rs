//! Fills a step's arguments from what the request gave, guided by the tool's input
//! schema (docs/routing.md, "Arguments"):
//!
//! 1. typed values — URLs, e-mails, paths, ids, numbers, dates, languages, enum words —
//!    go to the arguments whose name, `format` or `type` takes that kind, in the order
//!    the request gives them; a value that fails the argument's schema is not used;
//! 2. cue phrases ("containing …", "named …") give the words after them, up to the next
//!    value, cue or clause end, to the argument the cue introduces;
//! 3. the one required free-text argument left takes an earlier step's output when data
//!    flows in, else what remains of the clause's object once the words that named
//!    other arguments are gone; an object that only points back ("it", "the summary")
//!    with nothing to point at is no value;
//! 4. what nothing fills and is required is a placeholder and a question.
//!
//! A typed argument never receives free clause text, and the words of one argument are
//! never repeated in another.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::{Map, Value, json};
use waypoint_catalog::Tool;
use waypoint_protocol::ExtractedKind;

use crate::lexicon::{Lexicon, Unit};
use crate::segment::inflected;
use crate::suggested::Suggestion;
use crate::text::Token;
use crate::understand::ClauseAnalysis;

/// The arguments of one step, the required ones it left open with the question each
/// raises, and the values of an argument the request gave several of where the schema
/// takes one ("into French and German"): the planner makes one step per value.
#[derive(Debug, Default)]
pub struct Filled {
    pub args: Map<String, Value>,
    pub open: Vec<Open>,
    pub fan_out: Option<(String, Vec<Value>)>,
    /// Earlier steps (by index) an argument was linked to by name (see [`Inputs::outputs`]).
    pub linked: Vec<usize>,
}

/// A required argument left as a placeholder, and the question that asks for it.
#[derive(Debug)]
pub struct Open {
    pub arg: String,
    pub question: String,
}

impl Filled {
    /// Fills an open argument after all: it no longer asks its question.
    pub fn answer(&mut self, arg: &str, value: Value) {
        self.args.insert(arg.to_string(), value);
        self.open.retain(|o| o.arg != arg);
    }

    /// The questions the open arguments raise.
    pub fn questions(self) -> impl Iterator<Item = String> {
        self.open.into_iter().map(|o| o.question)
    }
}

/// Marks an argument the planner could not fill.
pub fn placeholder(what: &str) -> Value {
    json!({ "$placeholder": what })
}

/// The id of the step at `index` in a plan: `s1`, `s2`, …
pub fn step_id(index: usize) -> String {
    format!("s{}", index + 1)
}

/// Points an argument at an earlier step's output.
pub fn reference(step_id: &str) -> Value {
    json!({ "$ref": format!("{step_id}/output") })
}

/// Whether a value is a placeholder or a reference rather than a concrete argument.
pub fn is_symbolic(v: &Value) -> bool {
    v.as_object()
        .is_some_and(|o| o.contains_key("$placeholder") || o.contains_key("$ref"))
}

pub struct Inputs<'a> {
    pub request: &'a str,
    pub clause: &'a ClauseAnalysis,
    pub payload: Option<&'a Value>,
    /// Id of the step whose output feeds this one, if any.
    pub from_step: Option<&'a str>,
    /// Whether the clause's object is too vague to use as text.
    pub vague: bool,
    /// Whether a word (by its key) names an artifact some entry makes or takes
    /// ("summary", "draft"): "the summary" points back at one.
    pub names_artifact: &'a dyn Fn(&str) -> bool,
    /// The request's clauses before this one, in order: their values can stand for "it".
    pub earlier: &'a [ClauseAnalysis],
    /// The request's clauses after this one: what those that present material give
    /// ("… download the video. Video link: https://…") is lent like an earlier one's.
    pub later: &'a [ClauseAnalysis],
    /// The words an earlier clause acted on, for "it" when no earlier step's output or
    /// value fits ("remember this launch, write a blog about it").
    pub antecedent: Option<&'a str>,
    /// Stems of the content words of the tool's name and description: a value that starts
    /// or ends with them only restates the tool ("analyze *the sales data for* laptops").
    pub own_words: &'a [String],
    /// The stems of the tool's own name words (see [`name_stems`]): "calculate the *sales
    /// tax*" names the tool's own thing, not an earlier step's sales.
    pub own_name: &'a [String],
    /// Earlier steps and the kinds they produce, latest last: a required argument nothing
    /// else fills takes the output of the latest one that makes what the argument is
    /// named after (`draft` ← a step producing `draft`, `originSkyId` ← `skyId`).
    pub outputs: &'a [Made],
    /// The values earlier steps of the request were given, by argument name, latest
    /// first: an argument of the same name that the clause leaves open and that names no
    /// content takes it ("find a bus from New York to Boston and buy me a ticket").
    pub carried: &'a [(String, Value)],
    /// The next clause, when this one is a verb alone that acts on its object ("look up
    /// and cancel booking BK-2231"): what that object presents is lent to this step too.
    pub sharing: Option<&'a ClauseAnalysis>,
}

/// What kind of value an argument takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Value(ExtractedKind),
    /// A path of one file-type family (by its index in the lexicon's `file_types`):
    /// "audio" takes `example.wav`, not `example.mp4` and not the clause's words.
    File(usize),
    Language,
    Enum,
    Text,
}

/// One argument of the schema with what it can take.
struct Slot<'t> {
    name: &'t str,
    schema: &'t Value,
    kinds: Vec<Kind>,
    required: bool,
    /// The arg cues (by index) that introduce this argument.
    cued_by: Vec<usize>,
    /// The end of a move or translation its name makes it (by index in the lexicon's
    /// `ends`): `source_language`, `target_language`.
    end: Option<usize>,
    /// The stems of its name's words, each with whether it is the last (see
    /// `naming_words`).
    naming: &'t [(String, bool)],
    /// Its name as words (see `name_words`): joined by `_`, then the last, then the last
    /// without a plural `s`.
    words: &'t [String],
    /// The values its description lists ("eg. buy, sell"): see [`crate::suggested`].
    suggested: &'t [Suggestion],
    /// The preposition its description ends with: see [`described_cue`].
    own_cue: Option<&'t str>,
    /// Its description calls it a kind of something ("The cuisine type"): see
    /// [`fill_kind`].
    takes_a_kind: bool,
    /// A plain string whose name or description names an id: see [`fill_possessed`].
    identifies: bool,
}

impl Slot<'_> {
    /// Whether a stem is the last word of the argument's name (`tax_rate`: "rate").
    fn headed_by(&self, stem: &str) -> bool {
        self.naming.iter().any(|(w, head)| *head && w == stem)
    }

    fn is_array(&self) -> bool {
        self.schema.get("type").and_then(Value::as_str) == Some("array")
    }

    /// The schema a single value must fit: the items' for an array.
    fn item_schema(&self) -> &Value {
        if self.is_array() {
            self.schema.get("items").unwrap_or(&Value::Null)
        } else {
            self.schema
        }
    }

    /// A list whose items the schema does not type: a number written into it is one.
    fn untyped_items(&self) -> bool {
        self.is_array() && self.item_schema().get("type").is_none()
    }

    fn numeric(&self) -> bool {
        matches!(
            self.item_schema().get("type").and_then(Value::as_str),
            Some("number" | "integer")
        )
    }

    fn typed(&self) -> bool {
        self.kinds.iter().any(|k| *k != Kind::Text)
    }

    /// One value as the argument holds it: itself, or a list of it.
    fn one(&self, value: Value) -> Value {
        if self.is_array() {
            Value::Array(vec![value])
        } else {
            value
        }
    }

    /// Whether the slot takes this value of the clause.
    fn takes(&self, piece: &Piece, lex: &Lexicon) -> bool {
        self.kinds.iter().any(|k| match *k {
            Kind::File(f) => {
                piece.kind == Kind::Value(ExtractedKind::Paths)
                    && lex.file_types.get(f).is_some_and(|t| t.holds(&piece.value))
            }
            k => k == piece.kind,
        })
    }

    /// Takes an address — a path, a file of some type, a URL or an e-mail — which names
    /// one thing and so takes no words that are not one.
    fn takes_addresses(&self) -> bool {
        self.kinds.iter().any(|k| {
            matches!(
                k,
                Kind::File(_)
                    | Kind::Value(
                        ExtractedKind::Paths | ExtractedKind::Urls | ExtractedKind::Emails
                    )
            )
        })
    }

    /// A single string with no format, pattern or enum, whatever its name suggests.
    fn plain_string(&self) -> bool {
        !self.is_array()
            && self.schema.get("type").and_then(Value::as_str) == Some("string")
            && unconstrained(self.schema)
    }

    /// Takes words of the clause: a plain string with no format, pattern or enum.
    fn free_text(&self) -> bool {
        let s = self.item_schema();
        self.kinds.contains(&Kind::Text)
            && s.get("type")
                .and_then(Value::as_str)
                .is_none_or(|t| t == "string")
            && unconstrained(s)
    }
}

/// Whether a schema leaves its string free: no format, pattern or enum.
fn unconstrained(schema: &Value) -> bool {
    ["format", "pattern", "enum"]
        .iter()
        .all(|k| schema.get(k).is_none())
}

/// A typed value of the clause with its byte span.
struct Piece {
    kind: Kind,
    value: String,
    start: usize,
    end: usize,
    /// The unit a number is written with ("2 km", "70kg").
    unit: Option<Unit>,
}

impl Piece {
    /// The value as the slot's schema types it; a number written in another unit of the
    /// measure the argument is in ("within 2 km" for "The search radius in meters") is
    /// converted to it.
    fn coerce_for(&self, slot: &Slot<'_>, lex: &Lexicon) -> Value {
        let schema = slot.item_schema();
        if self.kind == Kind::Value(ExtractedKind::Numbers) && slot.untyped_items() {
            return number_value(&self.value);
        }
        // A date written in words ("the 1st of January, 2023") is for people; an argument
        // that takes dates gets it as ISO, as tools read dates. One written in digits
        // ("10/05/2023") is already a tool's form and stays as written.
        if self.kind == Kind::Value(ExtractedKind::Dates)
            && slot.kinds.contains(&self.kind)
            && self.value.contains(char::is_alphabetic)
            && let Some(iso) = iso_date(&self.value, &lex.calendar.months)
        {
            return Value::String(iso);
        }
        let value = || coerce(&self.value, schema, lex);
        let Some(have) = self.unit else {
            return value();
        };
        let (Some(want), Ok(x)) = (
            slot_unit(slot, lex).filter(|w| w.measure == have.measure),
            self.value.replace(',', "").parse::<f64>(),
        ) else {
            return value();
        };
        let converted = x * have.per / want.per;
        if schema.get("type").and_then(Value::as_str) == Some("integer") {
            #[expect(
                clippy::cast_possible_truncation,
                reason = "rounded, and i64 holds any unit count a request gives"
            )]
            return Value::from(converted.round() as i64);
        }
        // Decimals the conversion factors add ("2 km" → 2000.0000000000002) are noise.
        let rounded = (converted * 1e9).round() / 1e9;
        if rounded.fract() == 0.0 && rounded.abs() < 9e15 {
            #[expect(clippy::cast_possible_truncation, reason = "integral and within i64")]
            return Value::from(rounded as i64);
        }
        serde_json::Number::from_f64(rounded).map_or_else(value, Value::Number)
    }
}

/// The unit an argument's description or name is in: the first word of either that names
/// a unit ("The search radius in meters", `duration_seconds`). One-letter abbreviations
/// are not read there ("e.g." is no gram).
fn slot_unit(slot: &Slot<'_>, lex: &Lexicon) -> Option<Unit> {
    let description = slot
        .schema
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_lowercase();
    description
        .split(|c: char| !c.is_alphabetic())
        .map(str::to_string)
        .chain(slot.words.iter().cloned())
        .filter(|w| w.chars().count() > 1)
        .find_map(|w| lex.units.get(&w).copied())
}

/// The unit written right after a number that ends at `end` in `text` — letters or a
/// percent sign run onto it ("70kg", "5%") or the next word ("2 km") — and the bytes it
/// and the space before it take.
fn unit_after(text: &str, end: usize, lex: &Lexicon) -> Option<(Unit, usize)> {
    let rest = text.get(end..)?;
    // A sign the vocabulary names ("%") is a unit only written onto the number.
    if let Some(sign) = rest.chars().next().filter(|c| !c.is_alphanumeric())
        && let Some(unit) = lex.units.get(sign.encode_utf8(&mut [0; 4]) as &str)
    {
        return Some((*unit, sign.len_utf8()));
    }
    let gap = usize::from(rest.starts_with(' '));
    let word: String = rest[gap..]
        .chars()
        .take_while(|c| c.is_alphabetic())
        .collect();
    let unit = lex.units.get(&word.to_lowercase()).copied()?;
    Some((unit, gap + word.len()))
}

/// What the filling has used up so far.
#[derive(Default)]
struct Used {
    pieces: Vec<usize>,
    /// Indices of the lent values taken.
    lent: Vec<usize>,
    /// Byte spans of the request whose words belong to some argument (values, the
    /// preposition before them, cues and the words after them), and whether each one
    /// ends the clause's object: a bare value inside it ("checks my saved search
    /// https://…") is still part of what the object says, "to ana@…" is not.
    spans: Vec<(usize, usize, bool)>,
    /// The clause's pronoun was taken as an address an earlier step was given
    /// (`fill_carried`), not as that step's output.
    pronoun: bool,
}

impl Used {
    fn covers(&self, t: &Token) -> bool {
        self.spans
            .iter()
            .any(|(s, e, _)| t.start < *e && *s < t.end)
    }

    fn breaks_at(&self, t: &Token) -> bool {
        self.spans
            .iter()
            .any(|(s, e, breaks)| *breaks && t.start < *e && *s < t.end)
    }
}

/// What every filling pass reads: the schema's slots, the clause's typed values, the
/// request and the vocabulary.
struct Context<'c, 't> {
    slots: &'c [Slot<'t>],
    pieces: &'c [Piece],
    /// Typed values of the clauses before this one that only present material ("I have
    /// a video (example.mp4) and a voiceover (example.wav). Please synchronize…"): a
    /// typed argument the clause itself does not fill takes them.
    lent: &'c [Piece],
    inputs: &'c Inputs<'c>,
    lex: &'c Lexicon,
}

/// What the passes write: the words and values used so far, and the arguments.
struct State {
    used: Used,
    out: Filled,
}

/// Whether a required argument of `tool` takes free text (a note, a brief): then any
/// object a clause names can be its input (routing uses this).
pub fn takes_free_text(tool: &Tool, specs: &[ArgSpec]) -> bool {
    free_text_arg(tool, specs).is_some()
}

/// What filling needs to know of one argument of a tool: the kinds of value it takes,
/// whether it is required, the cue rules that introduce it and the end of a move it is.
/// Worked out once per tool when the engine is built (its name's words are split, stemmed
/// and looked up in the vocabulary), not once per request.
#[derive(Debug, Clone)]
pub struct ArgSpec {
    kinds: Vec<Kind>,
    required: bool,
    cued_by: Vec<usize>,
    end: Option<usize>,
    naming: Vec<(String, bool)>,
    words: Vec<String>,
    suggested: Vec<Suggestion>,
    /// The preposition its description ends with (see [`described_cue`]); its cue rule is
    /// the vocabulary's rule count plus the argument's position.
    own_cue: Option<String>,
    takes_a_kind: bool,
    identifies: bool,
}

impl ArgSpec {
    /// The values the argument's description lists ("eg. buy, sell").
    pub fn suggested(&self) -> &[Suggestion] {
        &self.suggested
    }

    /// Whether the argument takes a typed value of this kind (a number, a URL…).
    pub fn takes_value(&self, kind: ExtractedKind) -> bool {
        self.kinds.contains(&Kind::Value(kind))
    }

    pub fn required(&self) -> bool {
        self.required
    }
}

/// The preposition an argument's description ends its first phrase with: "The location
/// to order the taxi *to*", "The bank to do the operation *at*", "The social network to
/// share the content *by*, eg. …". The request says the value after the same word
/// ("order a taxi *to* 123 Main St").
fn described_cue(schema: &Value, lex: &Lexicon) -> Option<String> {
    let description = schema.get("description").and_then(Value::as_str)?;
    let phrase = description
        .split(['.', ',', ';', '(', ':'])
        .next()
        .unwrap_or_default();
    let last = phrase.split_whitespace().last()?.to_lowercase();
    lex.words.prepositions.contains(&last).then_some(last)
}

/// The word an argument's description says it is, when a function word follows its
/// first word: `destination`, "Location *of* the hotel", is also where something is ("a
/// hotel *in* London"); "Search term or keyword …" names no such thing.
fn described_as(described: &[String], lex: &Lexicon) -> Option<String> {
    let says_what =
        described.len() == 1 || described.get(1).is_some_and(|n| lex.stopwords.contains(n));
    says_what.then(|| described.first().cloned()).flatten()
}

/// The lower-case words of an argument's description.
fn description_words(schema: &Value) -> Vec<String> {
    let description = schema.get("description").and_then(Value::as_str);
    waypoint_classify::features::words(description.unwrap_or_default())
}

/// The specs of `tool`'s arguments, in schema order.
pub fn arg_specs(tool: &Tool, lex: &Lexicon) -> Vec<ArgSpec> {
    let required: Vec<&str> = tool.required().collect();
    tool.properties()
        .enumerate()
        .map(|(position, (name, schema))| {
            let words = all_words(name);
            let named = name_words(name);
            let described_words = description_words(schema);
            let mut slot = Slot {
                name,
                schema,
                kinds: kinds_of(name, &words, schema, lex),
                required: required.contains(&name),
                cued_by: Vec::new(),
                end: lex
                    .ends
                    .iter()
                    .position(|e| words.iter().any(|w| e.args.contains(w))),
                naming: &[],
                words: &named,
                suggested: &[],
                own_cue: None,
                takes_a_kind: false,
                identifies: false,
            };
            // A path is a name too: "a folder called reports" when no path is written.
            if slot.free_text()
                || slot.kinds.contains(&Kind::Enum)
                || slot.kinds.contains(&Kind::Value(ExtractedKind::Paths))
            {
                let described = described_as(&described_words, lex);
                slot.cued_by = (0..lex.arg_cues.len())
                    .filter(|&r| {
                        let args = &lex.arg_cues[r].args;
                        words.iter().any(|w| args.contains(w))
                            || described.as_ref().is_some_and(|w| args.contains(w))
                    })
                    .collect();
            }
            let own_cue = slot
                .free_text()
                .then(|| described_cue(schema, lex))
                .flatten();
            if own_cue.is_some() {
                slot.cued_by.push(lex.arg_cues.len() + position);
            }
            let takes_a_kind = described_words
                .iter()
                .any(|w| lex.words.kind_nouns.contains(w));
            let identifies = schema.get("type").and_then(Value::as_str) == Some("string")
                && schema.get("enum").is_none()
                && (names_an_id(name, lex) || described_words.iter().any(|w| names_an_id(w, lex)));
            ArgSpec {
                kinds: slot.kinds,
                required: slot.required,
                cued_by: slot.cued_by,
                end: slot.end,
                naming: naming_words(name, lex),
                words: named.clone(),
                suggested: crate::suggested::suggestions(schema, &lex.example_markers),
                own_cue,
                takes_a_kind,
                identifies,
            }
        })
        .collect()
}

/// The tool's arguments as slots, from their specs.
fn slots<'t>(tool: &'t Tool, specs: &'t [ArgSpec]) -> Vec<Slot<'t>> {
    tool.properties()
        .zip(specs)
        .map(|((name, schema), spec)| Slot {
            name,
            schema,
            kinds: spec.kinds.clone(),
            required: spec.required,
            cued_by: spec.cued_by.clone(),
            end: spec.end,
            naming: &spec.naming,
            words: &spec.words,
            suggested: &spec.suggested,
            own_cue: spec.own_cue.as_deref(),
            takes_a_kind: spec.takes_a_kind,
            identifies: spec.identifies,
        })
        .collect()
}

/// Fills `tool`'s arguments from the request; `cached` are its [`ArgSpec`]s when the
/// engine has them (else they are worked out here).
pub fn fill(tool: &Tool, cached: Option<&[ArgSpec]>, inputs: &Inputs<'_>, lex: &Lexicon) -> Filled {
    let owned;
    let specs = match cached {
        Some(specs) if specs.len() == tool.properties().count() => specs,
        _ => {
            owned = arg_specs(tool, lex);
            &owned
        }
    };
    fill_slots(tool, specs, inputs, lex)
}

fn fill_slots(tool: &Tool, specs: &[ArgSpec], inputs: &Inputs<'_>, lex: &Lexicon) -> Filled {
    let slots = slots(tool, specs);
    let pieces = pieces(inputs.clause, inputs.request, lex);
    let lent: Vec<Piece> = inputs
        .earlier
        .iter()
        .chain(inputs.later)
        .filter(|c| !c.is_action())
        .chain(inputs.sharing)
        .flat_map(|c| self::pieces(c, inputs.request, lex))
        // What a person presents: files, addresses, ids — not a count or a date that
        // belongs to what they said about it.
        .filter(|p| matches!(p.kind, Kind::Value(k) if is_address(k)))
        .collect();
    let cx = Context {
        slots: &slots,
        pieces: &pieces,
        lent: &lent,
        inputs,
        lex,
    };
    let mut st = State {
        used: Used::default(),
        out: Filled::default(),
    };
    fill_range(&cx, &mut st);
    fill_named(&cx, &mut st);
    fill_refs(&cx, &mut st);
    fill_possessed(&cx, &mut st);
    fill_said(&cx, &mut st);
    fill_described(&cx, &mut st);
    fill_typed(&cx, &mut st);
    fill_suggested(&cx, &mut st);
    fill_folder(&cx, &mut st);
    fill_cued(&cx, &mut st);
    fill_modifier(&cx, &mut st);
    fill_kind(&cx, &mut st);
    fill_carried(&cx, &mut st);
    fill_text(&cx, &mut st);
    fill_measures(&cx, &mut st);
    fill_last_quote(&cx, &mut st);
    let pronoun_carried = st.used.pronoun;
    let mut out = st.out;
    for v in out.args.values_mut() {
        if let Value::String(text) = v
            && let Some(kept) = before_open_aside(text)
        {
            *text = kept;
        }
    }

    // What the request does not give, an earlier step's output may: one argument takes
    // it, not every one left ("convert the distance into kilometers" does not make the
    // distance the unit it is converted from).
    let mut flowing = unplaced_flow(inputs, &out.args).filter(|_| !pronoun_carried);
    for slot in slots.iter().filter(|s| s.required) {
        if out.args.contains_key(slot.name) {
            continue;
        }
        if let Some(step) = flowing.take() {
            out.args.insert(slot.name.to_string(), reference(step));
            continue;
        }
        if let Some(step) = output_named(slot, inputs.outputs) {
            out.args
                .insert(slot.name.to_string(), reference(&step_id(step)));
            out.linked.push(step);
            continue;
        }
        let what = slot
            .schema
            .get("description")
            .and_then(Value::as_str)
            .map_or_else(|| slot.name.replace('_', " "), str::to_string);
        out.args.insert(slot.name.to_string(), placeholder(&what));
        out.open.push(Open {
            arg: slot.name.to_string(),
            question: format!(
                "What should `{}` ({what}) be for `{}`?",
                slot.name, tool.name
            ),
        });
    }
    // Keep the schema's order of arguments.
    let mut ordered = Map::new();
    for slot in &slots {
        if let Some(v) = out.args.remove(slot.name) {
            ordered.insert(slot.name.to_string(), ungrouped(v));
        }
    }
    ordered.append(&mut out.args);
    out.args = ordered;
    out
}

/// A value whose words run into a parenthesis it does not close ("IBM (form" of "for
/// IBM (form 10-K)") ends before it: the aside holds values of its own.
fn before_open_aside(text: &str) -> Option<String> {
    let open = text.rfind('(')?;
    if text[open..].contains(')') {
        return None;
    }
    let kept = text[..open].trim_end();
    (!kept.is_empty()).then(|| kept.to_string())
}

/// A number given as text loses the commas that group its digits for reading: "$10,000"
/// is the text "10000".
fn ungrouped(v: Value) -> Value {
    match v {
        Value::String(s)
            if s.contains(',') && grouped_digits(&s) && number_value(&s).is_number() =>
        {
            Value::String(s.replace(',', ""))
        }
        other => other,
    }
}

/// Whether the whole part of a number is digits in groups of three after the first
/// ("10,000", "1,234,567.5"; not "12,34").
fn grouped_digits(s: &str) -> bool {
    let digits = |g: &str| g.bytes().all(|b| b.is_ascii_digit());
    let whole = s.split('.').next().unwrap_or_default();
    let mut groups = whole.split(',');
    groups
        .next()
        .is_some_and(|g| (1..=3).contains(&g.len()) && digits(g))
        && groups.all(|g| g.len() == 3 && digits(g))
}

/// Values the request names: a typed value or quotation written right after the words
/// of an argument's name ("expenses of 5000", "the key 'abc123'", "a due date of
/// 2023-05-01") or right before them ("a 5% interest rate") goes to that argument,
/// whatever order the values come in. The pairs that name more of an argument's words,
/// its last word (the head: `tax_rate` is a rate) counting double, are taken first.
fn fill_named(cx: &Context<'_, '_>, st: &mut State) {
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
fn fill_range(cx: &Context<'_, '_>, st: &mut State) {
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
fn fill_modifier(cx: &Context<'_, '_>, st: &mut State) {
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
fn fill_kind(cx: &Context<'_, '_>, st: &mut State) {
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
    request.get(end..start).is_some_and(|gap| {
        gap.split(|c: char| c.is_whitespace() || ",;'\"“”‘’]".contains(c))
            .all(|w| w.is_empty() || lex.list_joiners.iter().any(|j| w.eq_ignore_ascii_case(j)))
    })
}

/// The stems of an argument's name words that can name it in a request, with the head
/// (the last word) marked: `mode_of_transport` → mode, transport (head).
fn naming_words(name: &str, lex: &Lexicon) -> Vec<(String, bool)> {
    let parts = name_parts(name);
    let last = parts.len().saturating_sub(1);
    parts
        .iter()
        .enumerate()
        .filter(|(_, w)| w.len() > 1 && !w.bytes().all(|b| b.is_ascii_digit()))
        .map(|(i, w)| (lex.synonyms.stem_and_key(w).0, i == last))
        .filter(|(w, _)| !lex.stopwords.contains(w))
        .collect()
}

/// The stems of a name's words that can name it in a request (see `naming_words`).
pub fn name_stems(name: &str, lex: &Lexicon) -> Vec<String> {
    naming_words(name, lex)
        .into_iter()
        .map(|(w, _)| w)
        .collect()
}

/// The synonym keys of a name's words, a server prefix left out (`tmdb.search_people`
/// → search, person).
pub(crate) fn name_keys(name: &str, lex: &Lexicon) -> Vec<String> {
    let short = crate::text::without_server(name);
    name_parts(short)
        .iter()
        .filter(|w| w.len() > 1)
        .map(|w| lex.synonyms.key(w))
        .collect()
}

/// The lower-case words of a name (`pdfSummary`, `pdf_summary` and `pdf-summary` all
/// give "pdf", "summary").
pub(crate) fn name_parts(name: &str) -> Vec<String> {
    name_words(name)
        .swap_remove(0)
        .split('_')
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// How well the words just before a value name an argument: the nearest word that is
/// not a function word must be one of the argument's, and each further one of its words
/// next to it adds. At most two function words sit between ("a length *of* 10",
/// "the title *is* 'Dune'"). Gives the score and the first naming token.
fn named_before(before: &[Token], words: &[(String, bool)], lex: &Lexicon) -> Option<(u32, usize)> {
    let mut i = before.len();
    let mut skipped = 0;
    let mut compared = false;
    while i > 0 && !before[i - 1].value {
        let t = &before[i - 1];
        if lex.words.comparison_words.contains(&t.form) {
            compared = true;
        } else if lex.is_content(t) {
            break;
        }
        skipped += 1;
        // "greater than or equal to" is one comparison, however many words it takes.
        if skipped > if compared { 5 } else { 2 } {
            return None;
        }
        i -= 1;
    }
    let (score, n) = naming_run(before[..i].iter().rev(), words);
    (n > 0).then(|| (score, i - n))
}

/// How well the words right after a value name an argument ("a 5% *interest rate*"):
/// gives the score and how many tokens name it.
fn named_after(after: &[Token], words: &[(String, bool)]) -> Option<(u32, usize)> {
    let (score, n) = naming_run(after.iter(), words);
    (n > 0).then_some((score, n))
}

/// The score (an argument's head word 2, its other words 1, each once) of the run of
/// tokens, in the order given, that are words of the argument's name, and its length.
fn naming_run<'t>(
    tokens: impl Iterator<Item = &'t Token>,
    words: &[(String, bool)],
) -> (u32, usize) {
    let mut score = 0;
    let mut n = 0;
    let mut seen: Vec<&str> = Vec::new();
    for t in tokens {
        let Some((w, head)) = words
            .iter()
            .find(|(w, _)| *w == t.stem && !seen.contains(&w.as_str()))
        else {
            break;
        };
        seen.push(w);
        score += if *head { 2 } else { 1 };
        n += 1;
    }
    (score, n)
}

/// Words either side of a value that say which of several arguments of its kind it is
/// for: "the *first* 10 lines" goes to `head` ("returns only the first N lines"), not to
/// `tail` ("… the last N lines"), though `tail` comes first in the schema. A value two or
/// more open arguments take goes to the one whose description alone has a word among the
/// two words before it or the two after; where none or several do, it is left to
/// [`fill_typed`] and the schema's order.
fn fill_described(cx: &Context<'_, '_>, st: &mut State) {
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
fn fill_typed(cx: &Context<'_, '_>, st: &mut State) {
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
        // Several values where one fits, and no other argument takes this kind: one step
        // per value ("translate it into French and German").
        let others_take = slots
            .iter()
            .any(|s| s.name != slot.name && s.takes(&pieces[first], cx.lex));
        if !slot.is_array() && fitting.len() > 1 && !others_take && out.fan_out.is_none() {
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
fn fill_suggested(cx: &Context<'_, '_>, st: &mut State) {
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
fn fill_folder(cx: &Context<'_, '_>, st: &mut State) {
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
            cx.lex.is_content(t)
                && Some(at) != head
                && !st.used.covers(t)
                && !words.folder_nouns.contains(&t.form)
                && !words.folder_describers.contains(&t.form)
                && !words.prepositions.contains(&t.form)
                && !cx.lex.opens_cue(&t.form)
                && !cx.inputs.own_name.contains(&t.stem)
                && t.form
                    .chars()
                    .all(|c| c.is_alphanumeric() || "-_.".contains(c))
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

/// Words after a cue to the argument the cue introduces.
fn fill_cued(cx: &Context<'_, '_>, st: &mut State) {
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
            None => trim_words(
                inputs
                    .request
                    .get(first.start..last.end)
                    .unwrap_or_default(),
                lex,
            ),
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

/// Whether a word (by stem) is in the name or description of an argument other than
/// `slot` that has a value already.
fn labels_another(
    stem: &str,
    slot: &Slot<'_>,
    slots: &[Slot<'_>],
    args: &Map<String, Value>,
) -> bool {
    slots
        .iter()
        .filter(|s| s.name != slot.name && args.contains_key(s.name))
        .any(|s| {
            let about = s.schema.get("description").and_then(Value::as_str);
            s.naming.iter().any(|(w, _)| w == stem)
                || about
                    .into_iter()
                    .flat_map(str::split_whitespace)
                    .any(|w| crate::text::stem(&w.to_lowercase()) == stem)
        })
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

/// Whether values of this kind are addresses: each names one thing (a file, a page, a
/// mailbox, a record) rather than saying something about it.
fn is_address(kind: ExtractedKind) -> bool {
    matches!(
        kind,
        ExtractedKind::Paths | ExtractedKind::Urls | ExtractedKind::Emails | ExtractedKind::Ids
    )
}

/// A required argument still empty that names no content (where, when, how many) takes
/// the value an earlier step of the request was given under the same name: the request
/// said it once for both ("a bus from New York to Boston … and buy me a ticket"). An
/// address — a path, URL, e-mail or id — names one thing, which the later step need not
/// act on ("create notes.txt …, then list the directory"), so it is not carried unless
/// a pronoun of the clause points back at it as the earlier verb's object ("read
/// todo.txt, then append a line *to it*": the same file, not what reading it returned).
fn fill_carried(cx: &Context<'_, '_>, st: &mut State) {
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
fn fill_refs(cx: &Context<'_, '_>, st: &mut State) {
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
fn fill_possessed(cx: &Context<'_, '_>, st: &mut State) {
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
fn takes_content(slot: &Slot<'_>, lex: &Lexicon) -> bool {
    slot.free_text()
        && slot.words.iter().any(|w| {
            lex.arg_names
                .iter()
                .any(|(k, names)| k == "text" && names.contains(w))
        })
}

/// Words of a clause that point at an earlier step's output: tokens `start..end`.
struct Referring {
    step: usize,
    start: usize,
    end: usize,
    /// A bare "it"/"them", which an earlier clause's value can stand for instead.
    pronoun: bool,
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
    toks: &'a [Token],
    outputs: &'a [Made],
    request: &'a str,
    lex: &'a Lexicon,
    used: &'a Used,
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

/// The first required free-text slot still empty takes what the clause is about; the
/// other required free-text slots take the quotations left, in order ("the song
/// 'Bohemian Rhapsody' by 'Queen'"). An array slot takes every quotation left, or its one
/// value as a list.
fn fill_text(cx: &Context<'_, '_>, st: &mut State) {
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

/// A value said earlier, named again: "calculate the profit with expenses of 5000, then
/// the GCD of the profit and *the expenses*" — "the expenses" is the 5000 an earlier step
/// was given as `expenses`. A definite article followed by every word of an earlier
/// argument's name gives that value to a required argument still empty that it fits,
/// names no content or address, and is named like it or only by its position.
fn fill_said(cx: &Context<'_, '_>, st: &mut State) {
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

/// A required list of numbers the words did not fill takes the numbers of the clause no
/// argument took, in order: "the area of a rectangle with length 5 and width 3" gives
/// `dimensions` [5, 3]. Only while no earlier output flows in, which would be its input.
fn fill_measures(cx: &Context<'_, '_>, st: &mut State) {
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
fn number_value(v: &str) -> Value {
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

/// The earlier step whose output flows into this one, while no argument refers to it yet.
fn unplaced_flow<'i>(inputs: &Inputs<'i>, args: &Map<String, Value>) -> Option<&'i str> {
    inputs.from_step.filter(|step| {
        let r = reference(step);
        !args.values().any(|v| *v == r)
    })
}

/// A quotation nothing took goes to the one required argument still open, when it fits
/// there and no earlier output is left to fill it: "then encrypt the result with
/// 'abc'" gives the result to `data` and `'abc'` to `encryption_key`, which the request
/// does not name. Two open arguments, or two quotations, leave the question, and so does
/// an address (path, URL, e-mail) the quotation is not a value of.
fn fill_last_quote(cx: &Context<'_, '_>, st: &mut State) {
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

/// The latest value an earlier clause gave that an argument takes: what "it" stands for
/// when no earlier step's output does. "them" is never one value, and a quotation is
/// "it" only when its clause quotes nothing else: after "find the lyrics of 'Bohemian Rhapsody' by 'Queen'", "translate
/// them" means the lyrics, not one of the two names that found them.
fn earlier_value<'i>(
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
    for c in inputs.earlier.iter().rev() {
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
enum Object {
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
    let text = trim_words(
        inputs
            .request
            .get(first.start..last.end)
            .unwrap_or_default(),
        lex,
    );
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

/// Trims the punctuation and joining words a span can end with ("hello, and" → "hello").
fn trim_words(s: &str, lex: &Lexicon) -> String {
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

/// How closely a product (`skyId`) names an argument (`originSkyId`): 2 when it is the
/// argument's whole name, 1 when it ends the name and is itself two words or more (a lone
/// `id` ends too many names to say which); with the words before it ("origin"), which
/// tell two arguments made by the same tool apart.
pub fn made_for(arg: &str, product: &str) -> Option<(u8, String)> {
    let arg = name_words(arg).swap_remove(0);
    let product = name_words(product).swap_remove(0);
    if product.is_empty() {
        return None;
    }
    if arg == product {
        return Some((2, String::new()));
    }
    let prefix = arg.strip_suffix(product.as_str())?.strip_suffix('_')?;
    (product.contains('_') && !prefix.is_empty()).then(|| (1, prefix.to_string()))
}

/// The last word of a name, lower case: `best_route` → `route`, `skyId` → `id`.
pub fn last_name_word(name: &str) -> String {
    let mut words = name_words(name);
    let last = usize::from(words.len() > 1);
    words.swap_remove(last)
}

/// Whether an argument's name ends in a word the lexicon's `arg_names` give to ids
/// (`artistId`, `geo_id`): a value that another tool looks up, not words of the request.
pub fn names_an_id(arg: &str, lex: &Lexicon) -> bool {
    let last = last_name_word(arg);
    lex.arg_names
        .iter()
        .any(|(kind, names)| kind == "ids" && names.contains(&last))
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

/// The earlier step whose product an argument is named after, by the whole name or its
/// last words (`origin_sky_id` takes a `sky_id`): the one naming it most fully
/// (`artist_id` before a bare `id`), the latest of those that name it alike.
fn output_named(slot: &Slot<'_>, outputs: &[Made]) -> Option<usize> {
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
    names: Arc<[String]>,
    /// The stems of the last words of the kinds' names ("summary").
    heads: Arc<[String]>,
    /// The stem of the verb the step's tool is named for (`record_audio`: "record"), so
    /// "the *recorded* audio" names its output whatever the tool calls it.
    verb: Option<Arc<str>>,
    /// The stems of the tool's name words: "the *discounted* price" after
    /// `calculate_discount`, "the *todo* item's description" after `create_todo`.
    words: Arc<[String]>,
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

/// The typed values of a clause, in order: extracted values, then language names.
/// `request` is the whole request: a unit may stand past the clause's last word ("a
/// rate of 5%." ends the clause at the 5).
fn pieces(clause: &ClauseAnalysis, request: &str, lex: &Lexicon) -> Vec<Piece> {
    let mut out: Vec<Piece> = clause
        .values
        .iter()
        .map(|f| {
            // A number's unit is part of the value: no text argument takes it ("2 km").
            let unit = (f.kind == ExtractedKind::Numbers)
                .then(|| unit_after(request, f.end, lex))
                .flatten();
            Piece {
                kind: Kind::Value(f.kind),
                value: f.value.clone(),
                start: f.start,
                end: f.end + unit.map_or(0, |(_, len)| len),
                unit: unit.map(|(u, _)| u),
            }
        })
        .collect();
    for t in clause.tokens() {
        if let Some(lang) = lex.language(t) {
            out.push(Piece {
                kind: Kind::Language,
                value: lang,
                start: t.start,
                end: t.end,
                unit: None,
            });
        }
    }
    out.sort_by_key(|p| p.start);
    out
}

/// The words of an argument's name: `targetLanguage`, `target-language` and
/// `target_language` all give `target`, `language`; the whole name comes first.
fn name_words(name: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        let boundary = c == '_' || c == '-' || c == ' ' || (c.is_uppercase() && prev_lower);
        if boundary && !current.is_empty() {
            words.push(std::mem::take(&mut current));
        }
        if c.is_alphanumeric() {
            current.extend(c.to_lowercase());
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
    }
    if !current.is_empty() {
        words.push(current);
    }
    let mut out = vec![words.join("_")];
    if let Some(last) = words.last() {
        out.push(last.clone());
        if let Some(one) = last.strip_suffix('s').filter(|s| s.len() > 2) {
            out.push(one.to_string());
        }
    }
    out.dedup();
    out
}

/// Every word of an argument's name (`mode_of_transport` → mode, of, transport): a cue
/// for any of them introduces the argument.
fn all_words(name: &str) -> Vec<String> {
    let mut words = name_words(name);
    if let Some(full) = words.first().cloned() {
        words.extend(full.split('_').map(str::to_string));
    }
    words
}

/// The kinds the lexicon's `arg_names` give the first of `name`'s words it knows (the
/// whole name, then its last word).
fn kinds_named(name: &str, lex: &Lexicon) -> Vec<Kind> {
    let mut kinds: Vec<Kind> = Vec::new();
    for word in name_words(name) {
        for (kind, names) in &lex.arg_names {
            if names.contains(&word) {
                let k = match kind.as_str() {
                    "text" => Some(Kind::Text),
                    "languages" => Some(Kind::Language),
                    other => ExtractedKind::parse(other).map(Kind::Value),
                };
                if let Some(k) = k.filter(|k| !kinds.contains(k)) {
                    kinds.push(k);
                }
            }
        }
        if !kinds.is_empty() {
            break;
        }
    }
    kinds
}

/// The kinds an argument takes: from its name (the lexicon's `arg_names`, by the whole
/// name, then its last word), its `enum`, `format` and `type`.
fn kinds_of(name: &str, words: &[String], schema: &Value, lex: &Lexicon) -> Vec<Kind> {
    let item = if schema.get("type").and_then(Value::as_str) == Some("array") {
        schema.get("items").unwrap_or(&Value::Null)
    } else {
        schema
    };
    if item.get("enum").is_some() {
        return vec![Kind::Enum];
    }
    let by_format = match item.get("format").and_then(Value::as_str) {
        Some("uri" | "url" | "iri" | "uri-reference") => Some(Kind::Value(ExtractedKind::Urls)),
        Some("email" | "idn-email") => Some(Kind::Value(ExtractedKind::Emails)),
        Some("date" | "date-time") => Some(Kind::Value(ExtractedKind::Dates)),
        Some("time") => Some(Kind::Value(ExtractedKind::Times)),
        _ => None,
    };
    if let Some(k) = by_format {
        return vec![k];
    }
    // Any word names a file type ("image_2", "source_audio"): such an argument is a path
    // of that type.
    let file_type = words
        .iter()
        .find_map(|w| lex.file_types.iter().position(|t| t.args.contains(w)));
    let mut kinds = match file_type {
        Some(f) => vec![Kind::File(f)],
        None => kinds_named(name, lex),
    };
    // A `to` whose description speaks of no address is where something goes (a currency,
    // a city), not a recipient: it takes words.
    if kinds == [Kind::Value(ExtractedKind::Emails)]
        && let Some(description) = item.get("description").and_then(Value::as_str)
    {
        let names = lex.arg_names.iter().find(|(k, _)| k == "emails");
        let speaks_of_mail = description
            .to_lowercase()
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| w.len() > 2 && names.is_some_and(|(_, n)| n.iter().any(|n| n == w)));
        if !speaks_of_mail {
            kinds = vec![Kind::Text];
        }
    }
    let numeric = matches!(
        item.get("type").and_then(Value::as_str),
        Some("integer" | "number")
    );
    // A string argument the vocabulary does not know takes words ("document", "song").
    let stringy = item
        .get("type")
        .and_then(Value::as_str)
        .is_none_or(|t| t == "string");
    if kinds.is_empty() && stringy {
        kinds.push(Kind::Text);
    }
    if numeric {
        // A number argument takes numbers whatever its name says.
        kinds.retain(|k| *k == Kind::Value(ExtractedKind::Numbers));
        if kinds.is_empty() {
            kinds.push(Kind::Value(ExtractedKind::Numbers));
        }
    }
    // Text kinds go last: a typed value is tried before the clause's words.
    kinds.sort_by_key(|k| *k == Kind::Text);
    kinds
}

/// Whether a value fits an argument's schema: its type, enum, pattern and format.
pub(crate) fn fits(v: &Value, schema: &Value) -> bool {
    let type_ok = match schema.get("type").and_then(Value::as_str) {
        Some("integer") => v.is_i64() || v.is_u64(),
        Some("number") => v.is_number(),
        Some("boolean") => v.is_boolean(),
        Some("string") => v.is_string(),
        _ => true,
    };
    if !type_ok {
        return false;
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array)
        && !options.contains(v)
    {
        return false;
    }
    let Some(s) = v.as_str() else {
        return true;
    };
    if let Some(p) = schema.get("pattern").and_then(Value::as_str)
        && regex::RegexBuilder::new(p)
            .size_limit(1 << 20)
            .build()
            .is_ok_and(|re| !re.is_match(s))
    {
        return false;
    }
    match schema.get("format").and_then(Value::as_str) {
        Some("email" | "idn-email") => s.contains('@') && !s.contains(char::is_whitespace),
        Some("uri" | "url" | "iri") => s.contains(':') && !s.contains(char::is_whitespace),
        _ => true,
    }
}

fn coerce(v: &str, schema: &Value, lex: &Lexicon) -> Value {
    // A date argument is ISO when its format says so, or its description ("… in
    // YYYY-MM-DD format").
    let iso_wanted = schema.get("format").and_then(Value::as_str) == Some("date")
        || schema
            .get("description")
            .and_then(Value::as_str)
            .is_some_and(|d| d.to_ascii_uppercase().contains("YYYY-MM-DD"));
    if iso_wanted && let Some(iso) = iso_date(v, &lex.calendar.months) {
        return Value::String(iso);
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("integer") => v
            .replace(',', "")
            .parse::<i64>()
            .map_or_else(|_| Value::String(v.into()), Value::from),
        Some("number") => number_value(v),
        _ => Value::String(v.into()),
    }
}

/// A written date with a year as `YYYY-MM-DD`: "August 15, 2024", "15 August 2024",
/// "8/15/2024" (month first), "2024-08-15". Without a year there is no date to give.
/// `months` are the calendar's month names, the first twelve in order; a word names a
/// month when it starts with the first three letters of one.
fn iso_date(v: &str, months: &[String]) -> Option<String> {
    let lower = v.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | '/' | '-' | '.'))
        .filter(|w| !w.is_empty() && *w != "of")
        .collect();
    let number = |w: &str| {
        w.trim_end_matches(|c: char| c.is_ascii_alphabetic())
            .parse::<u32>()
            .ok()
    };
    let month_word = |w: &str| {
        months
            .iter()
            .take(12)
            .position(|m| m.get(..3).is_some_and(|m| w.starts_with(m)))
            .and_then(|i| u32::try_from(i + 1).ok())
    };
    let (y, m, d) = match words.as_slice() {
        [a, b, c] if a.len() == 4 && a.bytes().all(|c| c.is_ascii_digit()) => {
            (number(a)?, number(b)?, number(c)?)
        }
        [a, b, c] if month_word(a).is_some() => (number(c)?, month_word(a)?, number(b)?),
        [a, b, c] if month_word(b).is_some() => (number(c)?, month_word(b)?, number(a)?),
        [a, b, c] => (number(c)?, number(a)?, number(b)?),
        _ => return None,
    };
    ((1000..=9999).contains(&y) && (1..=12).contains(&m) && (1..=31).contains(&d))
        .then(|| format!("{y:04}-{m:02}-{d:02}"))
}

fn first_string(v: &Value) -> Option<&str> {
    match v {
        Value::String(s) => Some(s),
        Value::Object(o) => o.values().find_map(first_string),
        Value::Array(a) => a.iter().find_map(first_string),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_as_text_lose_their_grouping_commas_and_nothing_else_does() {
        for (given, want) in [
            ("10,000", "10000"),
            ("1,234,567.5", "1234567.5"),
            ("Milk, eggs", "Milk, eggs"),
            ("1,2,3", "1,2,3"),
            ("100, 200", "100, 200"),
            ("12,34", "12,34"),
        ] {
            assert_eq!(ungrouped(Value::from(given)), Value::from(want), "{given}");
        }
    }

    #[test]
    fn a_value_ends_before_an_aside_it_does_not_close() {
        assert_eq!(before_open_aside("IBM (form").as_deref(), Some("IBM"));
        assert_eq!(before_open_aside("f(x) and (y)"), None);
        assert_eq!(before_open_aside("(form"), None);
        assert_eq!(before_open_aside("plain"), None);
    }

    #[test]
    fn argument_names_split_into_words() {
        assert_eq!(
            name_words("targetLanguage"),
            ["target_language", "language"]
        );
        assert_eq!(
            name_words("target-language"),
            ["target_language", "language"]
        );
        assert_eq!(name_words("entityNames"), ["entity_names", "names", "name"]);
        assert_eq!(name_words("path"), ["path"]);
        assert_eq!(name_words("URL"), ["url"]);
    }

    #[test]
    fn values_must_fit_the_schema() {
        let int = json!({"type": "integer"});
        assert!(fits(&json!(3), &int));
        assert!(!fits(&json!("three"), &int));
        let email = json!({"type": "string", "format": "email"});
        assert!(fits(&json!("ana@example.com"), &email));
        assert!(!fits(&json!("the summary to ana"), &email));
        let choice = json!({"enum": ["json", "csv"]});
        assert!(fits(&json!("csv"), &choice));
        assert!(!fits(&json!("a table"), &choice));
        let pat = json!({"type": "string", "pattern": "^[A-Z]+-[0-9]+$"});
        assert!(fits(&json!("JIRA-12"), &pat));
        assert!(!fits(&json!("the ticket"), &pat));
    }

    fn lex() -> Lexicon {
        Lexicon::for_catalog(&waypoint_catalog::Catalog::default()).unwrap()
    }

    #[test]
    fn written_dates_become_iso_dates() {
        let lex = lex();
        let date = |v: &str| iso_date(v, &lex.calendar.months);
        assert_eq!(date("August 15, 2024").as_deref(), Some("2024-08-15"));
        assert_eq!(date("15th of August 2024").as_deref(), Some("2024-08-15"));
        assert_eq!(date("8/15/2024").as_deref(), Some("2024-08-15"));
        assert_eq!(date("2024-08-15").as_deref(), Some("2024-08-15"));
        assert_eq!(date("May 1st, 2023").as_deref(), Some("2023-05-01"));
        assert_eq!(date("tomorrow"), None);
        assert_eq!(date("August 15"), None);
        assert_eq!(date("13/45/2024"), None);
    }

    #[test]
    fn spans_lose_their_joining_words() {
        let lex = lex();
        let trim = |v: &str| trim_words(v, &lex);
        assert_eq!(trim("hello, and"), "hello");
        assert_eq!(trim("\"hi there\""), "hi there");
        assert_eq!(trim("the report to"), "the report");
        assert_eq!(trim("the café AND"), "the café");
        assert_eq!(trim("toronto"), "toronto");
        assert_eq!(trim("a plan, or, and"), "a plan");
    }
}
