//! Request values inside an HTTP tool's URL template (docs/run.md, Tools).
//!
//! Values are percent-encoded before they are put in, so they cannot add a path
//! segment, a query or another host. But a value that *is* a dot-segment (`.`, `..`, or
//! `.%2e` with the template's help) is resolved by the URL parser, which moves the call
//! to another path of the same host: `/items/{code}` with `..` asks for `/`. Such a
//! filled URL is refused.

use crate::adapters::ToolError;

/// The dot-segments of `url`'s path as written, before a parser resolves them: `.`,
/// `..` and their percent-encoded spellings, as the URL standard counts them.
fn dot_segments(url: &str) -> Vec<&str> {
    let end = url.find(['?', '#']).unwrap_or(url.len());
    let rest = url[..end].split_once("://").map_or(&url[..end], |(_, r)| r);
    let path = rest.find(['/', '\\']).map_or("", |i| &rest[i..]);
    path.split(['/', '\\'])
        .filter(|s| {
            matches!(
                s.to_ascii_lowercase().as_str(),
                "." | "%2e" | ".." | ".%2e" | "%2e." | "%2e%2e"
            )
        })
        .collect()
}

/// Refuses a URL filled from `template` whose path holds a dot-segment the template
/// did not.
pub(crate) fn check_path(template: &str, filled: &str) -> Result<(), ToolError> {
    let made = dot_segments(filled);
    if made.len() > dot_segments(template).len() {
        let segment = made.last().copied().unwrap_or("..");
        return Err(ToolError::Denied(format!(
            "a value would put `{segment}` in the path of `{template}`, which moves the call to another path of the host; a request cannot climb an HTTP tool's URL (docs/run.md, Tools)"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_segment_values_cannot_climb_an_http_tools_path() {
        let template = "http://api.example/items/{code}/detail?q={q}";
        for filled in [
            "http://api.example/items/../detail?q=x",
            "http://api.example/items/./detail?q=x",
            "http://api.example/items/.%2E/detail?q=x",
            "http://api.example/items/%2e%2e/detail?q=x",
        ] {
            let err = check_path(template, filled).unwrap_err();
            assert!(matches!(err, ToolError::Denied(_)), "{filled}: {err}");
        }
        for filled in [
            "http://api.example/items/widget/detail?q=..",
            "http://api.example/items/.../detail?q=x",
            "http://api.example/items/a..b/detail?q=x",
            "http://api.example/items/..%252F/detail?q=x",
        ] {
            assert!(check_path(template, filled).is_ok(), "{filled}");
        }
        // A template that climbs on purpose still may.
        assert!(check_path("http://h/a/../{x}", "http://h/a/../y").is_ok());
    }
}
