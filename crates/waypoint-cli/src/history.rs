//! Opening the configured store (plan history, the run journal, memories) and the
//! rows a plan leaves in it.

use anyhow::{Context as _, Result, bail};

pub use waypoint_stores::{Store, default_location, history_row as row_for};

pub use waypoint_store::now_unix;

/// Parses `30d`, `12h`, `15m`, `90s`, `2w` into seconds.
pub fn parse_duration(text: &str) -> Result<i64> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (num, unit) = text.split_at(split);
    let n: i64 = num
        .parse()
        .with_context(|| format!("`{text}` is not a duration; write e.g. `30d`, `12h`, `15m`"))?;
    let factor = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3_600,
        "d" | "" => 86_400,
        "w" => 7 * 86_400,
        _ => bail!("unknown unit `{unit}` in `{text}`; use s, m, h, d or w"),
    };
    Ok(n.saturating_mul(factor))
}

/// A current-thread runtime for the store's async calls.
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_like_people_write_them() {
        assert_eq!(parse_duration("30d").unwrap(), 30 * 86_400);
        assert_eq!(parse_duration("12h").unwrap(), 43_200);
        assert_eq!(parse_duration("2w").unwrap(), 14 * 86_400);
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("5y").is_err());
    }
}
