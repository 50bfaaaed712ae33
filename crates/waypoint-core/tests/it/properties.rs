//! Property tests: the understand stage never panics, keeps spans inside the text and
//! loses no URL.

use std::sync::OnceLock;

use proptest::prelude::*;
use waypoint_core::extract::Extractor;
use waypoint_core::lexicon::Lexicon;

use crate::engine;

fn extractor() -> &'static Extractor {
    static EXTRACTOR: OnceLock<Extractor> = OnceLock::new();
    EXTRACTOR.get_or_init(|| {
        Extractor::new(&Lexicon::for_catalog(&waypoint_catalog::Catalog::default()).unwrap())
            .unwrap()
    })
}

/// The values of a text, as (kind, value) pairs.
fn values(text: &str) -> Vec<String> {
    extractor()
        .find(text)
        .into_iter()
        .map(|f| format!("{:?}: {}", f.kind, f.value))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn any_text_plans_without_panicking(text in "\\PC{1,200}") {
        let _ = engine().plan(&text, None);
    }

    #[test]
    fn clause_spans_lie_on_char_boundaries_inside_the_text(text in "[a-zA-Z ,;.\\n'’é0-9:/-]{1,160}") {
        if let Ok(u) = engine().understand(&text, None) {
            for c in u.clauses {
                prop_assert!(c.span.start <= c.span.end && c.span.end <= text.len());
                prop_assert_eq!(text.get(c.span.start..c.span.end), Some(c.text.as_str()));
            }
        }
    }

    #[test]
    fn no_url_is_lost(
        before in "[a-z ]{0,30}",
        host in "[a-z]{2,10}",
        path in "[a-z0-9/_-]{0,20}",
        after in "[a-z ,.]{0,30}",
    ) {
        let url = format!("https://{host}.com/{path}");
        let url = url.trim_end_matches(['/', '-', '_']).to_string();
        let text = format!("{before} {url} {after}");
        let u = engine().understand(&text, None).unwrap();
        prop_assert!(u.extracted.urls.contains(&url), "{:?} not in {:?}", url, u.extracted.urls);
    }

    #[test]
    fn a_value_is_the_text_at_its_span(text in "[a-z0-9 .:/@#_-]{0,40}[é٣“”’\u{FFFD}ß]{0,3}[a-z0-9 .:/@é٣-]{0,40}") {
        for f in extractor().find(&text) {
            let span = text.get(f.start..f.end);
            prop_assert!(span.is_some(), "{:?} cuts a character of {:?}", f, text);
            // A number written as a word ("five") has its digits as its value.
            let written = span.is_some_and(|s| s.chars().any(char::is_alphabetic));
            if !(f.kind == waypoint_protocol::ExtractedKind::Numbers && written) {
                prop_assert_eq!(span, Some(f.value.as_str()));
            }
        }
    }

    #[test]
    fn words_outside_ascii_around_a_text_take_none_of_its_values(
        text in "[a-z0-9 .:/@-]{1,60}",
        word in "[éüñßø]{1,4}",
    ) {
        let alone = values(&text);
        let framed = values(&format!("{word} {text} {word}"));
        for v in &alone {
            prop_assert!(framed.contains(v), "{:?} lost from {:?}", v, framed);
        }
    }
}
