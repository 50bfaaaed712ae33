//! Which model to call, where it lives, and what it can take.
//!
//! Three layers, later wins: the built-in tables (`data/providers.toml`,
//! `data/models.toml`), the user's `waypoint.toml`, and one-off flags ([`Overrides`]).
//! The config file is shared with other parts of Waypoint; this module reads only the
//! `[llm]`, `[providers.*]` and `[models.*]` sections and rejects unknown keys inside them.

use std::time::Duration;

use serde::Deserialize;
use toml::Table;

use crate::error::LlmError;

const BUILTIN_PROVIDERS: &str = include_str!("../data/providers.toml");
const BUILTIN_MODELS: &str = include_str!("../data/models.toml");

/// Call settings from `[llm]`.
#[derive(Debug, Clone, Default, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// The default `PROVIDER/MODEL` when `--model` is not given.
    pub model: Option<String>,
    /// Deadline for one plan's model calls, retries included.
    pub timeout_secs: Option<f64>,
    /// Retries on 429 and 5xx.
    pub retries: Option<u32>,
    pub temperature: Option<f32>,
}

/// One provider: its OpenAI-compatible base URL and the variable holding its key.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provider {
    pub base_url: Option<String>,
    pub api_key_env: Option<String>,
}

/// What a model can take and what it costs.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelInfo {
    pub context_tokens: u32,
    pub max_output_tokens: u32,
    pub usd_per_mtok_in: Option<f64>,
    pub usd_per_mtok_out: Option<f64>,
}

impl ModelInfo {
    /// Estimated cost of one call, or `None` when either price is unknown.
    pub fn cost(&self, prompt_tokens: u32, completion_tokens: u32) -> Option<f64> {
        let (pin, pout) = (self.usd_per_mtok_in?, self.usd_per_mtok_out?);
        Some((f64::from(prompt_tokens) * pin + f64::from(completion_tokens) * pout) / 1e6)
    }
}

/// One-off flags that beat the config file for a single run.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub base_url: Option<String>,
    pub api_key_env: Option<String>,
    pub timeout: Option<Duration>,
}

/// Everything resolved for calling one model.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// `provider/model`, as the user wrote it; reported in plans.
    pub id: String,
    /// The model name sent to the server (the part after the provider).
    pub model: String,
    /// Base URL ending before `/chat/completions`.
    pub base_url: String,
    pub api_key: Option<String>,
    pub timeout: Duration,
    pub retries: u32,
    pub temperature: f32,
    pub info: ModelInfo,
}

/// The merged configuration.
#[derive(Debug, Clone)]
pub struct Config {
    pub settings: Settings,
    providers: Vec<(String, Provider)>,
    /// Patterns in the order they are tried: the user's first, then the built-in ones.
    models: Vec<(String, ModelInfo)>,
}

impl Default for Config {
    fn default() -> Self {
        Self::builtin()
    }
}

impl Config {
    /// The built-in tables alone.
    pub fn builtin() -> Self {
        // The built-in tables are compiled in and covered by tests; parse failures
        // would be a packaging bug, so they degrade to empty tables rather than panic.
        let providers = parse(BUILTIN_PROVIDERS, "built-in providers")
            .and_then(|t| entries::<Provider>(t, "built-in providers"))
            .unwrap_or_default();
        let models = parse(BUILTIN_MODELS, "built-in models")
            .and_then(|t| entries::<ModelInfo>(t, "built-in models"))
            .unwrap_or_default();
        Self {
            settings: Settings::default(),
            providers,
            models,
        }
    }

    /// The built-in tables with a `waypoint.toml`'s text laid over them.
    /// `origin` names the file in errors.
    pub fn with_file(text: &str, origin: &str) -> Result<Self, LlmError> {
        Self::with_table(&parse(text, origin)?, origin)
    }

    /// The built-in tables with an already parsed `waypoint.toml` laid over them, for
    /// callers that read other sections of the same file.
    pub fn with_table(table: &Table, origin: &str) -> Result<Self, LlmError> {
        let mut config = Self::builtin();
        if let Some(llm) = table.get("llm") {
            config.settings =
                llm.clone()
                    .try_into()
                    .map_err(|e: toml::de::Error| LlmError::Config {
                        path: origin.to_string(),
                        message: format!("[llm]: {e}"),
                    })?;
        }
        if let Some(section) = subtable(table, "providers") {
            for (name, p) in entries::<Provider>(section.clone(), origin)? {
                match config.providers.iter_mut().find(|(n, _)| *n == name) {
                    Some((_, old)) => {
                        if p.base_url.is_some() {
                            old.base_url = p.base_url;
                        }
                        if p.api_key_env.is_some() {
                            old.api_key_env = p.api_key_env;
                        }
                    }
                    None => config.providers.push((name, p)),
                }
            }
        }
        if let Some(section) = subtable(table, "models") {
            let mut mine = entries::<ModelInfo>(section.clone(), origin)?;
            mine.append(&mut config.models);
            config.models = mine;
        }
        Ok(config)
    }

    /// Names of the providers known to this config.
    pub fn provider_names(&self) -> Vec<&str> {
        self.providers.iter().map(|(n, _)| n.as_str()).collect()
    }

    /// The model table's entry for `provider/model`.
    pub fn model_info(&self, id: &str) -> ModelInfo {
        self.models
            .iter()
            .find(|(pattern, _)| glob(pattern, id))
            .map_or(
                ModelInfo {
                    context_tokens: 8192,
                    max_output_tokens: 1024,
                    usd_per_mtok_in: None,
                    usd_per_mtok_out: None,
                },
                |(_, info)| *info,
            )
    }

    /// Every model pattern with what it can take, user entries first.
    pub fn models(&self) -> &[(String, ModelInfo)] {
        &self.models
    }

    /// Resolves `PROVIDER/MODEL` (or the configured default) into an endpoint.
    pub fn endpoint(&self, spec: Option<&str>, o: &Overrides) -> Result<Endpoint, LlmError> {
        let spec = spec
            .or(self.settings.model.as_deref())
            .ok_or(LlmError::NoModel)?;
        let (provider, model) = spec
            .split_once('/')
            .filter(|(p, m)| !p.is_empty() && !m.is_empty())
            .ok_or_else(|| LlmError::BadModelRef {
                spec: spec.to_string(),
            })?;
        let known = self.providers.iter().find(|(n, _)| n == provider);
        let Some(base_url) = o
            .base_url
            .clone()
            .or_else(|| known.and_then(|(_, p)| p.base_url.clone()))
        else {
            return Err(LlmError::UnknownProvider {
                provider: provider.to_string(),
                known: self.provider_names().join(", "),
            });
        };
        let key_var = o
            .api_key_env
            .clone()
            .or_else(|| known.and_then(|(_, p)| p.api_key_env.clone()))
            .filter(|v| !v.is_empty());
        let api_key = match key_var {
            Some(var) => match std::env::var(&var) {
                Ok(v) if !v.is_empty() => Some(v),
                _ => return Err(LlmError::MissingKey { var }),
            },
            None => None,
        };
        let timeout = o.timeout.unwrap_or_else(|| {
            Duration::from_secs_f64(
                self.settings
                    .timeout_secs
                    .unwrap_or(60.0)
                    .clamp(0.1, 3600.0),
            )
        });
        Ok(Endpoint {
            id: spec.to_string(),
            model: model.to_string(),
            base_url: base_url.trim_end_matches('/').to_string(),
            api_key,
            timeout,
            retries: self.settings.retries.unwrap_or(2).min(10),
            temperature: self.settings.temperature.unwrap_or(0.0),
            info: self.model_info(spec),
        })
    }
}

fn subtable<'t>(table: &'t Table, name: &str) -> Option<&'t Table> {
    match table.get(name) {
        Some(toml::Value::Table(t)) => Some(t),
        _ => None,
    }
}

/// Parses TOML text; `origin` names it in errors.
fn parse(text: &str, origin: &str) -> Result<Table, LlmError> {
    text.parse().map_err(|e: toml::de::Error| LlmError::Config {
        path: origin.to_string(),
        message: e.to_string(),
    })
}

/// A table of named entries, keeping file order.
fn entries<T: for<'de> Deserialize<'de>>(
    table: Table,
    origin: &str,
) -> Result<Vec<(String, T)>, LlmError> {
    table
        .into_iter()
        .map(|(name, value)| {
            value
                .try_into::<T>()
                .map(|v| (name.clone(), v))
                .map_err(|e| LlmError::Config {
                    path: origin.to_string(),
                    message: format!("[{name}]: {e}"),
                })
        })
        .collect()
}

/// `*` matches any run of characters; everything else matches itself.
fn glob(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let Some(first) = parts.next() else {
        return text.is_empty();
    };
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_like_a_shell() {
        assert!(glob("*", "anything/at-all"));
        assert!(glob("llamacpp/*", "llamacpp/gemma3-270m"));
        assert!(!glob("llamacpp/*", "ollama/gemma3"));
        assert!(glob("*/gpt-4o*", "openai/gpt-4o-2024-08-06"));
        assert!(glob(
            "*llama-3.1-8b*",
            "openrouter/meta-llama/llama-3.1-8b-instruct"
        ));
        assert!(!glob("*/gpt-4o", "openai/gpt-4o-mini"));
        assert!(glob("a*b*c", "a-x-b-y-c"));
        assert!(!glob("a*b*c", "a-x-c"));
    }

    #[test]
    fn builtin_tables_parse() {
        let c = Config::builtin();
        assert!(c.provider_names().contains(&"llamacpp"));
        assert!(c.provider_names().contains(&"openrouter"));
        assert_eq!(c.model_info("llamacpp/gemma3-270m").context_tokens, 8192);
        assert_eq!(
            c.model_info("openai/gpt-4o-mini").usd_per_mtok_in,
            Some(0.15)
        );
        assert_eq!(c.model_info("unheard/of").usd_per_mtok_in, None);
    }

    #[test]
    fn the_file_overrides_and_extends() {
        let c = Config::with_file(
            r#"
[llm]
model = "local/tiny"
timeout_secs = 5

[providers.local]
base_url = "http://127.0.0.1:9999/v1/"

[providers.llamacpp]
base_url = "http://127.0.0.1:8089/v1"

[models."local/*"]
context_tokens = 2048
max_output_tokens = 256
"#,
            "waypoint.toml",
        )
        .unwrap();
        let e = c.endpoint(None, &Overrides::default()).unwrap();
        assert_eq!(e.base_url, "http://127.0.0.1:9999/v1");
        assert_eq!(e.model, "tiny");
        assert_eq!(e.timeout, Duration::from_secs(5));
        assert_eq!(e.info.context_tokens, 2048);
        let l = c
            .endpoint(Some("llamacpp/x"), &Overrides::default())
            .unwrap();
        assert_eq!(l.base_url, "http://127.0.0.1:8089/v1");
    }

    #[test]
    fn errors_say_what_to_do() {
        let c = Config::builtin();
        let e = c
            .endpoint(Some("nowhere/model"), &Overrides::default())
            .unwrap_err();
        assert!(e.to_string().contains("[providers.nowhere]"), "{e}");
        let e = c
            .endpoint(Some("no-slash"), &Overrides::default())
            .unwrap_err();
        assert!(e.to_string().contains("PROVIDER/MODEL"), "{e}");
        let e = Config::with_file("[llm]\nmodle = 1\n", "w.toml").unwrap_err();
        assert!(e.to_string().contains("w.toml"), "{e}");
        let e = c
            .endpoint(
                Some("openai/gpt-4o"),
                &Overrides {
                    api_key_env: Some("WAYPOINT_TEST_SURELY_UNSET_KEY".into()),
                    ..Overrides::default()
                },
            )
            .unwrap_err();
        assert!(matches!(e, LlmError::MissingKey { .. }));
        // A base URL from the flags makes any provider name usable.
        let e = c
            .endpoint(
                Some("mine/model"),
                &Overrides {
                    base_url: Some("http://127.0.0.1:1/v1".into()),
                    ..Overrides::default()
                },
            )
            .unwrap();
        assert_eq!(e.id, "mine/model");
    }
}
