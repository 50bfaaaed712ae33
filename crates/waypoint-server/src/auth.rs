//! Who is calling: bearer tokens mapped to caller namespaces.
//!
//! History and runs belong to a caller, so every `/v1/*` and `/mcp` request must say
//! who it is. Tokens are kept only as SHA-256 digests, and a request's token is looked up
//! by its digest, so comparing does not leak a token's prefix through timing.

use std::collections::HashMap;

use sha2::{Digest as _, Sha256};

/// The caller a request acts for; the auth layer puts it in the request's extensions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller(pub String);

/// How requests are authenticated.
#[derive(Debug, Clone)]
pub enum Auth {
    /// `Authorization: Bearer TOKEN`, TOKEN's digest → caller.
    Tokens(HashMap<[u8; 32], String>),
    /// No tokens (loopback only): everyone is this caller.
    Off(String),
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

impl Auth {
    pub fn tokens(pairs: impl IntoIterator<Item = (String, String)>) -> Self {
        Self::Tokens(
            pairs
                .into_iter()
                .map(|(caller, token)| (digest(&token), caller))
                .collect(),
        )
    }

    /// The caller for an `Authorization` header value, or why there is none.
    pub fn caller(&self, authorization: Option<&str>) -> Result<Caller, &'static str> {
        match self {
            Self::Off(c) => Ok(Caller(c.clone())),
            Self::Tokens(map) => {
                let header = authorization.ok_or(
                    "this server needs `Authorization: Bearer TOKEN`; ask its operator for a token",
                )?;
                let token = header
                    .strip_prefix("Bearer ")
                    .or_else(|| header.strip_prefix("bearer "))
                    .ok_or("the Authorization header must be `Bearer TOKEN`")?;
                map.get(&digest(token.trim()))
                    .map(|c| Caller(c.clone()))
                    .ok_or("the bearer token is not one this server knows")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_map_to_their_callers_only() {
        let auth = Auth::tokens([
            ("alice".into(), "alice-token-0123456789".into()),
            ("bob".into(), "bob-token-0123456789".into()),
        ]);
        assert_eq!(
            auth.caller(Some("Bearer alice-token-0123456789")),
            Ok(Caller("alice".into()))
        );
        assert_eq!(
            auth.caller(Some("Bearer bob-token-0123456789")),
            Ok(Caller("bob".into()))
        );
        assert!(auth.caller(None).is_err());
        assert!(auth.caller(Some("Bearer alice-token")).is_err());
        assert!(auth.caller(Some("Basic YWxpY2U6")).is_err());
        assert_eq!(
            Auth::Off("local".into()).caller(None),
            Ok(Caller("local".into()))
        );
    }
}
