//! The `[serve]` section of `waypoint.toml`: who may call, what a request may cost the
//! server, and whether tools run on it.
//!
//! Every field has a default that is safe on a shared machine: tokens required, tools
//! off, loopback host names only.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// What a server may do and how it is guarded.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServeConfig {
    /// Whether `run` (MCP) and `POST /v1/runs` execute plans here. Off by default: a
    /// planner that plans is harmless; one that runs tools is not.
    pub allow_run: bool,
    /// Where tools run when they do (default: the directory the server started in).
    pub workdir: Option<PathBuf>,
    /// `tokens` (default): every call carries `Authorization: Bearer TOKEN` of a caller
    /// under `[serve.callers]`. `off`: no tokens, everyone is `local_caller`; allowed
    /// only on a loopback address.
    pub auth: AuthMode,
    /// Callers by name, each with its token (inline or from an environment variable).
    pub callers: BTreeMap<String, CallerToken>,
    /// The caller everyone is when `auth = "off"`.
    pub local_caller: String,
    /// Host names (or `host:port`) a request's `Host` header may carry; empty allows
    /// any. Guards a loopback server against DNS rebinding.
    pub allowed_hosts: Vec<String>,
    /// Origins (`scheme://host[:port]`) besides the server's own whose browser pages
    /// may call the API. Any other `Origin`, or `Sec-Fetch-Site: cross-site`, is refused:
    /// without tokens a page on any site could otherwise start runs (CSRF).
    pub allowed_origins: Vec<String>,
    /// The largest request body, in bytes.
    pub max_body_bytes: usize,
    /// How long one request may take before it is answered 503.
    pub request_timeout_ms: u64,
    /// Requests served at once; more are refused with 503 and `Retry-After`.
    /// `/healthz` and `/metrics` do not count: a busy server must still say it is alive.
    pub max_concurrent: usize,
    /// Requests one caller may have in flight (default: a quarter of `max_concurrent`);
    /// more are refused with 429 and `Retry-After`, so one caller's slow or many
    /// requests cannot take every slot from the others.
    pub max_concurrent_per_caller: Option<usize>,
    /// Requests a second one caller may send, sustained (bursts up to one second's
    /// worth); more are refused with 429 and `Retry-After`. Unset: no rate limit, only
    /// the concurrency limits.
    pub max_rate_per_caller: Option<u32>,
    /// How long a request's body may take to arrive, in milliseconds; a body still
    /// trickling in after that is answered 408 and its slot freed.
    pub body_timeout_ms: u64,
    /// Tasks per instance that take queued runs and execute them.
    pub workers: usize,
    /// This instance's name in run claims (default: host name and process id).
    pub instance: Option<String>,
    /// How often the catalog files are checked for changes, in milliseconds (0: only
    /// on SIGHUP).
    pub watch_ms: u64,
    /// Longest a plan's history row waits before its batch is committed, in
    /// milliseconds: what a crash can lose, and what batching saves (docs/server.md).
    pub history_flush_ms: u64,
}

impl Default for ServeConfig {
    fn default() -> Self {
        Self {
            allow_run: false,
            workdir: None,
            auth: AuthMode::Tokens,
            callers: BTreeMap::new(),
            local_caller: "local".into(),
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
            allowed_origins: Vec::new(),
            max_body_bytes: 1 << 20,
            request_timeout_ms: 30_000,
            max_concurrent: 256,
            max_concurrent_per_caller: None,
            max_rate_per_caller: None,
            body_timeout_ms: 10_000,
            workers: 2,
            instance: None,
            watch_ms: 1_000,
            history_flush_ms: 5,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AuthMode {
    Tokens,
    Off,
}

/// A caller's bearer token: written inline, or read from an environment variable so the
/// config file can be committed.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CallerToken {
    /// Never shown back (`waypoint config show` lists the caller without it).
    #[serde(skip_serializing)]
    pub token: Option<String>,
    pub token_env: Option<String>,
}

/// Why a `[serve]` section cannot serve.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ServeConfigError {
    #[error(
        "`auth = \"off\"` is only allowed on a loopback address, not {0}; give callers tokens under [serve.callers] instead"
    )]
    OpenOffLoopback(SocketAddr),
    #[error(
        "no callers under [serve.callers], so every request would be refused; add one, e.g.\n  [serve.callers]\n  alice = {{ token_env = \"WAYPOINT_TOKEN_ALICE\" }}\nor, on a loopback address, set `auth = \"off\"` under [serve]"
    )]
    NoCallers,
    #[error("caller `{0}`: give exactly one of `token` or `token_env`")]
    TokenSource(String),
    #[error("caller `{caller}`: the environment variable `{var}` is not set or empty")]
    TokenUnset { caller: String, var: String },
    #[error("caller `{caller}`: the token is shorter than 16 characters")]
    TokenTooShort { caller: String },
    #[error("callers `{0}` and `{1}` have the same token")]
    SharedToken(String, String),
    #[error("`{0}` must be at least 1")]
    Zero(&'static str),
}

impl ServeConfig {
    /// Checks the section against the address it will serve on.
    pub fn check(&self, addr: SocketAddr) -> Result<(), ServeConfigError> {
        if self.max_concurrent == 0 {
            return Err(ServeConfigError::Zero("max_concurrent"));
        }
        if self.max_body_bytes == 0 {
            return Err(ServeConfigError::Zero("max_body_bytes"));
        }
        if self.max_concurrent_per_caller == Some(0) {
            return Err(ServeConfigError::Zero("max_concurrent_per_caller"));
        }
        if self.max_rate_per_caller == Some(0) {
            return Err(ServeConfigError::Zero("max_rate_per_caller"));
        }
        if self.body_timeout_ms == 0 {
            return Err(ServeConfigError::Zero("body_timeout_ms"));
        }
        if self.request_timeout_ms == 0 {
            return Err(ServeConfigError::Zero("request_timeout_ms"));
        }
        match self.auth {
            AuthMode::Off if !addr.ip().is_loopback() => {
                Err(ServeConfigError::OpenOffLoopback(addr))
            }
            AuthMode::Off => Ok(()),
            AuthMode::Tokens if self.callers.is_empty() => Err(ServeConfigError::NoCallers),
            AuthMode::Tokens => self.tokens().map(|_| ()),
        }
    }

    /// Each caller's token, read from where the config says it is.
    pub fn tokens(&self) -> Result<Vec<(String, String)>, ServeConfigError> {
        let mut out: Vec<(String, String)> = Vec::new();
        for (caller, source) in &self.callers {
            let token = match (&source.token, &source.token_env) {
                (Some(t), None) => t.clone(),
                (None, Some(var)) => std::env::var(var)
                    .ok()
                    .filter(|t| !t.is_empty())
                    .ok_or_else(|| ServeConfigError::TokenUnset {
                        caller: caller.clone(),
                        var: var.clone(),
                    })?,
                _ => return Err(ServeConfigError::TokenSource(caller.clone())),
            };
            if token.chars().count() < 16 {
                return Err(ServeConfigError::TokenTooShort {
                    caller: caller.clone(),
                });
            }
            if let Some((other, _)) = out.iter().find(|(_, t)| *t == token) {
                return Err(ServeConfigError::SharedToken(other.clone(), caller.clone()));
            }
            out.push((caller.clone(), token));
        }
        Ok(out)
    }

    /// Requests one caller may have in flight.
    pub fn per_caller(&self) -> usize {
        self.max_concurrent_per_caller
            .unwrap_or(self.max_concurrent / 4)
            .max(1)
    }

    /// This instance's name in run claims.
    pub fn instance_name(&self) -> String {
        self.instance.clone().unwrap_or_else(|| {
            let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
                .map_or_else(|_| "host".into(), |h| h.trim().to_string());
            format!("{host}-{}", std::process::id())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> SocketAddr {
        s.parse()
            .unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 0)))
    }

    fn with_caller(name: &str, token: &str) -> ServeConfig {
        let mut c = ServeConfig::default();
        c.callers.insert(
            name.into(),
            CallerToken {
                token: Some(token.into()),
                token_env: None,
            },
        );
        c
    }

    #[test]
    fn auth_off_is_refused_off_loopback() {
        let c = ServeConfig {
            auth: AuthMode::Off,
            ..ServeConfig::default()
        };
        assert_eq!(c.check(addr("127.0.0.1:8080")), Ok(()));
        assert_eq!(c.check(addr("[::1]:8080")), Ok(()));
        assert!(matches!(
            c.check(addr("0.0.0.0:8080")),
            Err(ServeConfigError::OpenOffLoopback(_))
        ));
    }

    #[test]
    fn tokens_mode_needs_callers_with_sound_tokens() {
        let a = addr("0.0.0.0:1");
        assert_eq!(
            ServeConfig::default().check(a),
            Err(ServeConfigError::NoCallers)
        );
        assert_eq!(with_caller("alice", "0123456789abcdef").check(a), Ok(()));
        assert!(matches!(
            with_caller("alice", "short").check(a),
            Err(ServeConfigError::TokenTooShort { .. })
        ));
        let mut two = with_caller("alice", "0123456789abcdef");
        two.callers.insert(
            "bob".into(),
            CallerToken {
                token: Some("0123456789abcdef".into()),
                token_env: None,
            },
        );
        assert!(matches!(
            two.check(a),
            Err(ServeConfigError::SharedToken(..))
        ));
        let mut unset = ServeConfig::default();
        unset.callers.insert(
            "carol".into(),
            CallerToken {
                token: None,
                token_env: Some("WAYPOINT_TEST_SURELY_UNSET_VAR".into()),
            },
        );
        assert!(matches!(
            unset.check(a),
            Err(ServeConfigError::TokenUnset { .. })
        ));
    }

    #[test]
    fn the_section_parses_from_toml_with_defaults() {
        let c: ServeConfig = toml::from_str(
            "allow_run = true\nmax_concurrent = 8\n[callers]\nalice = { token = \"0123456789abcdef\" }\n",
        )
        .unwrap_or_default();
        assert!(c.allow_run);
        assert_eq!(c.max_concurrent, 8);
        assert_eq!(c.auth, AuthMode::Tokens);
        assert_eq!(c.callers.len(), 1);
        assert!(toml::from_str::<ServeConfig>("alow_run = true").is_err());
    }
}
