//! Values an argument's description suggests: "The operation to do, eg. buy, sell, short,
//! cover etc." lists the words that fill `operation`, as an `enum` would but without
//! closing the list. Schemas imported from MCP servers and API specs say this far more
//! often than they declare an `enum`, so filling reads the list as a soft enum (a word of
//! the request that is one of them is the value) and routing reads it as words of the
//! tool ("buy Apple stocks" names the tool whose operation can be "buy").

use serde_json::Value;

/// One listed value, ready to be found in a clause: its lower-case words, and for a
/// one-word value its stem ("buying" says "buy").
#[derive(Debug, Clone)]
pub struct Suggestion {
    /// As the description writes it: the value an argument takes.
    pub text: String,
    pub words: Vec<String>,
    pub stem: Option<String>,
}

impl Suggestion {
    fn new(text: String) -> Self {
        let words: Vec<String> = text.split_whitespace().map(str::to_lowercase).collect();
        let stem = match words.as_slice() {
            [one] => Some(crate::text::stem(one)),
            _ => None,
        };
        Self { text, words, stem }
    }
}

/// The values `schema`'s description lists, each ready to be matched (see
/// [`suggested_values`]).
pub fn suggestions(schema: &Value, markers: &[String]) -> Vec<Suggestion> {
    suggested_values(schema, markers)
        .into_iter()
        .map(Suggestion::new)
        .collect()
}

/// Longest suggestion kept, in words: longer items describe a value rather than are one
/// ("a city name or an airport code").
const MAX_WORDS: usize = 3;

/// The values `schema`'s description lists after one of `markers` ("e.g.", "such as"),
/// in their order and as written. Empty when it lists none.
fn suggested_values(schema: &Value, markers: &[String]) -> Vec<String> {
    let Some(description) = schema.get("description").and_then(Value::as_str) else {
        return Vec::new();
    };
    // ASCII lower case keeps every byte where it was, so an offset found in `lower` is one
    // in `description` (full lower case can change a character's length: "İ").
    let lower = description.to_ascii_lowercase();
    let Some(start) = markers.iter().find_map(|m| marker_end(&lower, m)) else {
        return legend(description);
    };
    let rest = &description[start..];
    // The list ends where its sentence or its parenthesis does; "etc." ends it too.
    let end = rest
        .char_indices()
        .find(|&(i, c)| {
            c == ')'
                || c == ';'
                || (c == '.' && rest[i + 1..].chars().next().is_none_or(char::is_whitespace))
        })
        .map_or(rest.len(), |(i, _)| i);
    rest[..end]
        .split([',', '/'])
        .flat_map(|item| item.split(" or "))
        .flat_map(|item| item.split(" and "))
        .map(|item| {
            item.trim()
                .trim_matches(|c: char| "'\"`“”‘’".contains(c))
                .trim()
        })
        .map(|item| item.strip_suffix("etc").unwrap_or(item).trim())
        .filter(|item| {
            !item.is_empty()
                && item.split_whitespace().count() <= MAX_WORDS
                && item.chars().any(char::is_alphanumeric)
                && !item.eq_ignore_ascii_case("etc")
        })
        .map(str::to_string)
        .collect()
}

/// The codes of a legend, as API references write one: "10-K = Annual Report (default) |
/// 10-Q = Quarterly Report" lists `10-K` and `10-Q`. Every part between the bars must
/// give a code before its "=", or none is taken.
fn legend(description: &str) -> Vec<String> {
    let parts: Vec<&str> = description.split('|').collect();
    if parts.len() < 2 {
        return Vec::new();
    }
    let codes: Vec<String> = parts
        .iter()
        .filter_map(|p| p.split_once('=').map(|(code, _)| code.trim()))
        .filter(|code| {
            !code.is_empty()
                && code.split_whitespace().count() <= MAX_WORDS
                && code.chars().any(char::is_alphanumeric)
        })
        .map(str::to_string)
        .collect();
    if codes.len() == parts.len() {
        codes
    } else {
        Vec::new()
    }
}

/// Where the text after `marker` begins in `lower`, when the marker stands as words of
/// its own (not "eg" inside "leg").
fn marker_end(lower: &str, marker: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = lower[from..].find(marker).map(|i| i + from) {
        let end = at + marker.len();
        let before_ok = lower[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric());
        let after_ok = lower[end..]
            .chars()
            .next()
            .is_none_or(|c| !c.is_alphanumeric());
        if before_ok && after_ok {
            // Skip the punctuation a marker is written with ("e.g.,", "eg:").
            let skip = lower[end..]
                .char_indices()
                .find(|&(_, c)| !matches!(c, '.' | ',' | ':'))
                .map_or(lower.len() - end, |(i, _)| i);
            return Some(end + skip);
        }
        from = end;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn markers() -> Vec<String> {
        [
            "e.g.",
            "eg.",
            "e.g",
            "eg",
            "such as",
            "for example",
            "for instance",
        ]
        .map(String::from)
        .to_vec()
    }

    fn of(description: &str) -> Vec<String> {
        suggested_values(
            &json!({"type": "string", "description": description}),
            &markers(),
        )
    }

    #[test]
    fn a_legend_lists_its_codes() {
        assert_eq!(
            of("10-K = Annual Report (default) | 10-Q = Quarterly Report"),
            ["10-K", "10-Q"]
        );
        // Bars without codes are no legend.
        assert!(of("Annual | Quarterly").is_empty());
        assert!(of("a = b | something else").is_empty());
    }

    #[test]
    fn a_listed_example_is_a_value() {
        assert_eq!(
            of("The operation to do, eg. buy, sell, short, cover etc."),
            ["buy", "sell", "short", "cover"]
        );
        assert_eq!(
            of("Mode of transportation (e.g. driving, walking, cycling). Optional."),
            ["driving", "walking", "cycling"]
        );
        assert_eq!(
            of("Language for the results (e.g., 'en', 'es', 'fr')"),
            ["en", "es", "fr"]
        );
        assert_eq!(of("A platform such as Uber or Didi"), ["Uber", "Didi"]);
    }

    #[test]
    fn a_description_without_a_list_suggests_nothing() {
        assert!(of("The leg of the trip to book").is_empty());
        assert!(of("The stock to do the operation on").is_empty());
        assert!(suggested_values(&json!({"type": "string"}), &markers()).is_empty());
    }

    #[test]
    fn a_character_whose_lower_case_is_longer_does_not_shift_the_list() {
        assert_eq!(of("İİİ the mode, e.g. fast, slow"), ["fast", "slow"]);
    }

    #[test]
    fn a_long_item_describes_a_value_and_is_not_one() {
        assert_eq!(
            of("Where to go, e.g. a city name written in full, or London"),
            ["London"]
        );
    }
}
