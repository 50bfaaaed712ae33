//! What a tool's input schema asks for: each argument's kinds of value, cue words, unit
//! and whether it takes free text; and whether a value fits it.

use serde_json::Value;
use waypoint_catalog::Tool;
use waypoint_protocol::ExtractedKind;

use crate::lexicon::{Lexicon, Unit};
use crate::suggested::Suggestion;

use super::names::{all_words, name_words, names_an_id, naming_words};
use super::text::free_text_arg;
use super::values::number_value;
use super::{Kind, Shape, Slot};

/// Whether a schema leaves its string free: no format, pattern or enum.
pub(super) fn unconstrained(schema: &Value) -> bool {
    ["format", "pattern", "enum"]
        .iter()
        .all(|k| schema.get(k).is_none())
}

/// The unit an argument's description or name is in: the first word of either that names
/// a unit ("The search radius in meters", `duration_seconds`). One-letter abbreviations
/// are not read there ("e.g." is no gram).
pub(super) fn slot_unit(slot: &Slot<'_>, lex: &Lexicon) -> Option<Unit> {
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
pub(super) fn unit_after(text: &str, end: usize, lex: &Lexicon) -> Option<(Unit, usize)> {
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
    pub(super) shape: Shape,
    pub(super) kinds: Vec<Kind>,
    pub(super) required: bool,
    pub(super) cued_by: Vec<usize>,
    pub(super) end: Option<usize>,
    pub(super) naming: Vec<(String, bool)>,
    pub(super) words: Vec<String>,
    pub(super) suggested: Vec<Suggestion>,
    /// The preposition its description ends with (see [`described_cue`]); its cue rule is
    /// the vocabulary's rule count plus the argument's position.
    pub(super) own_cue: Option<String>,
    pub(super) takes_a_kind: bool,
    pub(super) identifies: bool,
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
pub(super) fn description_words(schema: &Value) -> Vec<String> {
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
                item: super::item_schema(schema),
                shape: Shape::of(schema),
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
                shape: slot.shape,
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
pub(super) fn slots<'t>(tool: &'t Tool, specs: &'t [ArgSpec]) -> Vec<Slot<'t>> {
    tool.properties()
        .zip(specs)
        .map(|((name, schema), spec)| Slot {
            name,
            schema,
            item: super::item_schema(schema),
            shape: spec.shape,
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

pub(super) fn coerce(v: &str, schema: &Value, lex: &Lexicon) -> Value {
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
pub(super) fn iso_date(v: &str, months: &[String]) -> Option<String> {
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

pub(super) fn first_string(v: &Value) -> Option<&str> {
    match v {
        Value::String(s) => Some(s),
        Value::Object(o) => o.values().find_map(first_string),
        Value::Array(a) => a.iter().find_map(first_string),
        _ => None,
    }
}
