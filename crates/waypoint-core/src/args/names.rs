//! How the words of a request name an argument, and how names of arguments and
//! products relate (`originSkyId` and `skyId`).

use serde_json::{Map, Value};
use waypoint_catalog::Tool;

use crate::lexicon::Lexicon;
use crate::text::Token;

use super::Slot;

/// The stems of an argument's name words that can name it in a request, with the head
/// (the last word) marked: `mode_of_transport` → mode, transport (head).
pub(super) fn naming_words(name: &str, lex: &Lexicon) -> Vec<(String, bool)> {
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
pub(super) fn named_before(
    before: &[Token],
    words: &[(String, bool)],
    lex: &Lexicon,
) -> Option<(u32, usize)> {
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
pub(super) fn named_after(after: &[Token], words: &[(String, bool)]) -> Option<(u32, usize)> {
    let (score, n) = naming_run(after.iter(), words);
    (n > 0).then_some((score, n))
}

/// The score (an argument's head word 2, its other words 1, each once) of the run of
/// tokens, in the order given, that are words of the argument's name, and its length.
pub(super) fn naming_run<'t>(
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

/// Whether a word (by stem) is in the name or description of an argument other than
/// `slot` that has a value already.
pub(super) fn labels_another(
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

/// The words of an argument's name: `targetLanguage`, `target-language` and
/// `target_language` all give `target`, `language`; the whole name comes first.
pub(super) fn name_words(name: &str) -> Vec<String> {
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
pub(super) fn all_words(name: &str) -> Vec<String> {
    let mut words = name_words(name);
    if let Some(full) = words.first().cloned() {
        words.extend(full.split('_').map(str::to_string));
    }
    words
}

/// Whether a tool takes what it acts on by id: a required argument named so (`id`,
/// `movie_id`), or, without a schema, a description that says "ID" — and a name that
/// does not (`get_dish_id` gives ids).
pub(crate) fn takes_by_id(tool: &Tool) -> bool {
    let is_id = |w: &str| w.eq_ignore_ascii_case("id");
    if name_parts(&tool.name).iter().any(|w| is_id(w)) {
        return false;
    }
    if tool.properties().next().is_some() {
        return tool
            .required()
            .any(|r| name_parts(r).last().is_some_and(|w| is_id(w)));
    }
    tool.description
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| w == "ID" || w == "id")
}
