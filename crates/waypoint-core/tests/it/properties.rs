//! Property tests: the understand stage never panics, keeps spans inside the text and
//! loses no URL.

use proptest::prelude::*;

use crate::engine;

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
}
