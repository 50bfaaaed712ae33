//! Hashes that stand in for user text: the same request, normalised, always gives the
//! same `intent_sha`; nothing of the text can be read back from it.

use sha2::{Digest, Sha256};

/// Lower case, words only, single spaces: "Which files changed?" ≡ "which  files changed".
pub fn normalise(request: &str) -> String {
    request
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

fn short_sha(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest
        .iter()
        .take(8)
        .fold(String::with_capacity(16), |mut s, b| {
            use std::fmt::Write as _;
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// 16 hex digits of SHA-256 over the normalised request.
pub fn intent_sha(request: &str) -> String {
    short_sha(normalise(request).as_bytes())
}

/// 16 hex digits of SHA-256 over a step's args as canonical JSON (keys sorted).
pub fn args_sha(args: &serde_json::Map<String, serde_json::Value>) -> String {
    let sorted: std::collections::BTreeMap<&String, &serde_json::Value> = args.iter().collect();
    short_sha(
        serde_json::to_string(&sorted)
            .unwrap_or_default()
            .as_bytes(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equivalent_requests_share_a_hash() {
        assert_eq!(
            intent_sha("Which files changed?"),
            intent_sha("which   files CHANGED")
        );
        assert_ne!(
            intent_sha("which files changed"),
            intent_sha("which file changed")
        );
        assert_eq!(intent_sha("x").len(), 16);
    }

    #[test]
    fn args_hash_ignores_key_order() {
        let a: serde_json::Map<_, _> = serde_json::from_str(r#"{"a":1,"b":2}"#).unwrap();
        let b: serde_json::Map<_, _> = serde_json::from_str(r#"{"b":2,"a":1}"#).unwrap();
        assert_eq!(args_sha(&a), args_sha(&b));
    }
}
