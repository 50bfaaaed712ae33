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
//!
//! This module holds the contract ([`Filled`], [`Inputs`]) and the order of the passes
//! (`fill_slots`); the passes live in modules by what they read:
//! - `spec`: what a tool's schema asks for, and whether a value fits it;
//! - `names`: how the words of a request name an argument;
//! - `values`: typed values by the words that name an argument, by kind and order;
//! - `cues`: the words after a cue;
//! - `flow`: earlier steps' outputs and values said before;
//! - `text`: the free-text argument, from what the clause is about.

use serde_json::{Map, Value, json};
use waypoint_catalog::Tool;
use waypoint_protocol::ExtractedKind;

use crate::lexicon::{Lexicon, Unit};
use crate::suggested::Suggestion;
use crate::text::Token;
use crate::understand::ClauseAnalysis;

mod cues;
mod flow;
mod names;
mod spec;
mod text;
mod values;

use cues::fill_cued;
pub use flow::Made;
use flow::{fill_carried, fill_possessed, fill_refs, fill_said, output_named, unplaced_flow};
pub use names::{last_name_word, made_for, name_stems, names_an_id};
pub(crate) use names::{name_keys, name_parts, takes_by_id};
pub(crate) use spec::fits;
pub use spec::{ArgSpec, arg_specs, takes_free_text};
use spec::{coerce, iso_date, slot_unit, slots, unconstrained, unit_after};
use text::{fill_last_quote, fill_text};
pub use text::{free_text_arg, proper_run, words_for};
use values::{
    fill_described, fill_folder, fill_kind, fill_measures, fill_modifier, fill_named, fill_range,
    fill_suggested, fill_typed, is_address, number_value,
};

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

/// What an argument's schema says of the values it takes, read once with its spec: a
/// plan asks it of every argument many times, and each lookup in a JSON object hashes
/// its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shape {
    /// A list of values.
    list: bool,
    /// What a value (an item of a list) is.
    value: ValueType,
    /// A value (an item of a list) has a format, pattern or enum.
    constrained: bool,
}

/// The `type` a schema gives a single value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ValueType {
    /// No `type`.
    Untyped,
    /// A `type` that is not one name (`["string", "null"]`).
    Several,
    String,
    /// `number` or `integer`.
    Number,
    /// `boolean`, `object`, `array`, `null`.
    Other,
}

impl Shape {
    fn of(schema: &Value) -> Self {
        let list = schema.get("type").and_then(Value::as_str) == Some("array");
        let item = item_schema(schema);
        let value = match item.get("type").map(Value::as_str) {
            None => ValueType::Untyped,
            Some(None) => ValueType::Several,
            Some(Some("string")) => ValueType::String,
            Some(Some("number" | "integer")) => ValueType::Number,
            Some(Some(_)) => ValueType::Other,
        };
        Self {
            list,
            value,
            constrained: !unconstrained(item),
        }
    }

    fn numeric(self) -> bool {
        self.value == ValueType::Number
    }

    fn untyped_items(self) -> bool {
        self.list && self.value == ValueType::Untyped
    }

    fn plain_string(self) -> bool {
        !self.list && self.value == ValueType::String && !self.constrained
    }

    /// Words of the clause can be a value: a string or untyped, with no constraint.
    fn takes_words(self) -> bool {
        matches!(
            self.value,
            ValueType::Untyped | ValueType::Several | ValueType::String
        ) && !self.constrained
    }
}

/// The schema a single value must fit: the items' for an array.
fn item_schema(schema: &Value) -> &Value {
    if schema.get("type").and_then(Value::as_str) == Some("array") {
        schema.get("items").unwrap_or(&Value::Null)
    } else {
        schema
    }
}

/// One argument of the schema with what it can take.
struct Slot<'t> {
    name: &'t str,
    schema: &'t Value,
    /// The schema a single value must fit: the items' for an array.
    item: &'t Value,
    shape: Shape,
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
        self.shape.list
    }

    /// The schema a single value must fit: the items' for an array.
    fn item_schema(&self) -> &Value {
        self.item
    }

    /// A list whose items the schema does not type: a number written into it is one.
    fn untyped_items(&self) -> bool {
        self.shape.untyped_items()
    }

    fn numeric(&self) -> bool {
        self.shape.numeric()
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
        self.shape.plain_string()
    }

    /// Takes words of the clause: a plain string with no format, pattern or enum.
    fn free_text(&self) -> bool {
        self.kinds.contains(&Kind::Text) && self.shape.takes_words()
    }
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
        .filter(|c| c.is_context())
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

#[cfg(test)]
mod tests {
    use super::names::name_words;
    use super::text::trim_words;
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
    fn a_schema_is_read_once_into_the_shape_of_its_values() {
        let shape = |schema: Value| Shape::of(&schema);
        let words = shape(json!({"type": "string"}));
        assert!(words.plain_string() && words.takes_words() && !words.list && !words.numeric());
        let listed = shape(json!({"type": "string", "enum": ["a", "b"]}));
        assert!(!listed.plain_string() && !listed.takes_words());
        let dated = shape(json!({"type": "string", "format": "date"}));
        assert!(!dated.plain_string() && !dated.takes_words());
        let untyped = shape(json!({"description": "anything"}));
        assert!(untyped.takes_words() && !untyped.plain_string() && !untyped.untyped_items());
        let nullable = shape(json!({"type": ["string", "null"]}));
        assert_eq!(nullable.value, ValueType::Several);
        assert!(nullable.takes_words() && !nullable.plain_string());
        let numbers = shape(json!({"type": "array", "items": {"type": "integer"}}));
        assert!(numbers.list && numbers.numeric() && !numbers.takes_words());
        assert!(!numbers.untyped_items());
        let names = shape(json!({"type": "array", "items": {"type": "string"}}));
        assert!(names.list && names.takes_words() && !names.plain_string());
        let loose = shape(json!({"type": "array"}));
        assert!(loose.untyped_items() && loose.takes_words() && !loose.numeric());
        assert!(shape(json!({"type": "number"})).numeric());
        assert!(!shape(json!({"type": "boolean"})).takes_words());
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
