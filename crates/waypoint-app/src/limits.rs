//! Run limits in layers: the executor's defaults, then `[run]` of the configuration,
//! then what the caller overrides for one run (the CLI's flags, a resume raising a
//! budget). Durations are written the way people write them (`30s`, `10m`, `2h`).

use waypoint_run::Limits;

use crate::config::RunSection;

/// Limits a caller sets for one run; `None` keeps the layer below.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LimitOverrides {
    pub max_steps: Option<u32>,
    pub max_tool_calls: Option<u32>,
    pub max_wall_ms: Option<u64>,
    pub max_usd: Option<f64>,
    pub max_replans: Option<u32>,
    pub tool_timeout_ms: Option<u64>,
    pub concurrency: Option<usize>,
    pub max_output_bytes: Option<usize>,
}

/// Why limits cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitError {
    /// A duration that does not parse; `what` names the key.
    #[error("{what} `{text}` is not a duration; write e.g. 30s, 10m, 500ms")]
    Duration { what: &'static str, text: String },
    #[error("{what} `{text}` has an unknown unit `{unit}`; use ms, s, m or h")]
    Unit {
        what: &'static str,
        text: String,
        unit: String,
    },
    #[error("{what} `{text}` is out of range")]
    Range { what: &'static str, text: String },
    /// The limits together make no sense (a zero concurrency, say).
    #[error("{0}")]
    Invalid(String),
}

impl LimitOverrides {
    /// Whether any limit is set.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// `[run]` read as overrides of the executor's defaults.
    pub fn from_section(s: &RunSection) -> Result<Self, LimitError> {
        Ok(Self {
            max_steps: s.max_steps,
            max_tool_calls: s.max_tool_calls,
            max_wall_ms: s
                .max_wall
                .as_deref()
                .map(|t| parse_millis(t, "max_wall"))
                .transpose()?,
            max_usd: s.max_usd,
            max_replans: s.max_replans,
            tool_timeout_ms: s
                .tool_timeout
                .as_deref()
                .map(|t| parse_millis(t, "tool_timeout"))
                .transpose()?,
            concurrency: s.concurrency,
            max_output_bytes: s.max_output_bytes,
        })
    }

    /// `base` with these overrides laid over it, checked.
    pub fn over(&self, base: &Limits) -> Result<Limits, LimitError> {
        let mut l = base.clone();
        if let Some(v) = self.max_steps {
            l.max_steps = v;
        }
        if let Some(v) = self.max_tool_calls {
            l.max_tool_calls = v;
        }
        if let Some(v) = self.max_wall_ms {
            l.max_wall_ms = v;
        }
        if let Some(v) = self.max_usd {
            l.max_usd = v;
        }
        if let Some(v) = self.max_replans {
            l.max_replans = v;
        }
        if let Some(v) = self.tool_timeout_ms {
            l.tool_timeout_ms = v;
        }
        if let Some(v) = self.concurrency {
            l.concurrency = v;
        }
        if let Some(v) = self.max_output_bytes {
            l.max_output_bytes = v;
        }
        l.check().map_err(LimitError::Invalid)?;
        Ok(l)
    }
}

/// Defaults, then `[run]`, then `overrides`.
pub fn layered(section: &RunSection, overrides: &LimitOverrides) -> Result<Limits, LimitError> {
    let file = LimitOverrides::from_section(section)?.over(&Limits::default())?;
    overrides.over(&file)
}

/// Parses `30s`, `10m`, `500ms`, `2h` or a bare number of seconds into milliseconds.
pub fn parse_millis(text: &str, what: &'static str) -> Result<u64, LimitError> {
    let t = text.trim();
    let (num, unit) = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .map_or((t, "s"), |i| t.split_at(i));
    let n: f64 = num.parse().map_err(|_| LimitError::Duration {
        what,
        text: text.to_string(),
    })?;
    let factor = match unit {
        "ms" => 1.0,
        "s" => 1000.0,
        "m" => 60_000.0,
        "h" => 3_600_000.0,
        _ => {
            return Err(LimitError::Unit {
                what,
                text: text.to_string(),
                unit: unit.to_string(),
            });
        }
    };
    let ms = n * factor;
    if !(1.0..1e12).contains(&ms) {
        return Err(LimitError::Range {
            what,
            text: text.to_string(),
        });
    }
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "checked to lie in 1..1e12 above"
    )]
    Ok(ms.round() as u64)
}

/// Parses `30d`, `12h`, `15m`, `90s`, `2w` (a bare number is days) into seconds, for
/// history ages.
pub fn parse_age(text: &str) -> Result<i64, LimitError> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (num, unit) = text.split_at(split);
    let n: i64 = num.parse().map_err(|_| LimitError::Duration {
        what: "age",
        text: text.to_string(),
    })?;
    let factor = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3_600,
        "d" | "" => 86_400,
        "w" => 7 * 86_400,
        _ => {
            return Err(LimitError::Unit {
                what: "age",
                text: text.to_string(),
                unit: unit.to_string(),
            });
        }
    };
    Ok(n.saturating_mul(factor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_like_people_write_them() {
        assert_eq!(parse_millis("30s", "x"), Ok(30_000));
        assert_eq!(parse_millis("500ms", "x"), Ok(500));
        assert_eq!(parse_millis("2", "x"), Ok(2_000));
        assert!(matches!(
            parse_millis("5y", "x"),
            Err(LimitError::Unit { .. })
        ));
        assert_eq!(parse_age("30d"), Ok(30 * 86_400));
        assert_eq!(parse_age("2w"), Ok(14 * 86_400));
        assert!(parse_age("soon").is_err());
    }

    #[test]
    fn each_layer_overrides_the_one_below() {
        let section = RunSection {
            max_steps: Some(5),
            max_wall: Some("30s".into()),
            ..RunSection::default()
        };
        let flags = LimitOverrides {
            max_steps: Some(7),
            ..LimitOverrides::default()
        };
        let l = layered(&section, &flags).unwrap();
        assert_eq!(l.max_steps, 7, "the caller's override wins");
        assert_eq!(l.max_wall_ms, 30_000, "the file's value stays");
        assert_eq!(
            l.max_tool_calls,
            Limits::default().max_tool_calls,
            "the default fills the rest"
        );
        let zero = LimitOverrides {
            concurrency: Some(0),
            ..LimitOverrides::default()
        };
        assert!(matches!(
            layered(&section, &zero),
            Err(LimitError::Invalid(_))
        ));
    }
}
