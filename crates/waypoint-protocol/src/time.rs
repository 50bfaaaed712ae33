//! The one time format of the JSON contract: RFC 3339 in UTC with milliseconds
//! (`2026-11-24T14:38:07.123Z`), whatever a store keeps underneath (history rows whole
//! seconds, runs milliseconds). Fields use [`secs`] or [`millis`] through
//! `#[serde(with = …)]`; both read back what they write.

/// `ms` since the Unix epoch as RFC 3339 (UTC, milliseconds).
#[must_use]
pub fn rfc3339(ms: i64) -> String {
    let (days, rem) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    let (year, month, day) = civil_from_days(days);
    let (hour, rem) = (rem / 3_600_000, rem % 3_600_000);
    let (min, rem) = (rem / 60_000, rem % 60_000);
    let (sec, milli) = (rem / 1000, rem % 1000);
    format!("{year:04}-{month:02}-{day:02}T{hour:02}:{min:02}:{sec:02}.{milli:03}Z")
}

/// Milliseconds since the Unix epoch of an RFC 3339 timestamp (`Z` or `±HH:MM`, any
/// number of fraction digits, of which milliseconds are kept).
#[must_use]
pub fn parse_rfc3339(text: &str) -> Option<i64> {
    let bytes = text.as_bytes();
    if bytes.len() < 20
        || bytes[4] != b'-'
        || bytes[7] != b'-'
        || !matches!(bytes[10], b'T' | b't' | b' ')
    {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = text.get(r)?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())
            .flatten()
    };
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if bytes[13] != b':' || bytes[16] != b':' {
        return None;
    }
    let (hour, min, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || min > 59 || sec > 60 {
        return None;
    }
    let mut rest = &text[19..];
    let mut milli = 0;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let kept = &frac[..digits.min(3)];
        milli = kept.parse::<i64>().ok()? * 10_i64.pow(3 - u32::try_from(kept.len()).ok()?);
        rest = &frac[digits..];
    }
    let offset_min = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            if rest.len() != 6 || rest.as_bytes()[3] != b':' {
                return None;
            }
            let oh: i64 = rest.get(1..3)?.parse().ok()?;
            let om: i64 = rest.get(4..6)?.parse().ok()?;
            sign * (oh * 60 + om)
        }
    };
    let days = days_from_civil(year, month, day);
    Some(((days * 24 + hour) * 60 + min - offset_min) * 60_000 + sec * 1000 + milli)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// A field kept as Unix milliseconds, written as RFC 3339.
pub mod millis {
    use serde::{Deserialize, Deserializer, Serializer};

    /// # Errors
    /// Whatever the serializer reports.
    pub fn serialize<S: Serializer>(ms: &i64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::rfc3339(*ms))
    }

    /// # Errors
    /// Text that is not an RFC 3339 timestamp.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
        let text = String::deserialize(d)?;
        super::parse_rfc3339(&text)
            .ok_or_else(|| serde::de::Error::custom(format!("`{text}` is not an RFC 3339 time")))
    }
}

/// A field kept as Unix seconds, written as RFC 3339.
pub mod secs {
    use serde::{Deserialize, Deserializer, Serializer};

    /// # Errors
    /// Whatever the serializer reports.
    pub fn serialize<S: Serializer>(secs: &i64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::rfc3339(secs.saturating_mul(1000)))
    }

    /// # Errors
    /// Text that is not an RFC 3339 timestamp.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
        let text = String::deserialize(d)?;
        super::parse_rfc3339(&text)
            .map(|ms| ms.div_euclid(1000))
            .ok_or_else(|| serde::de::Error::custom(format!("`{text}` is not an RFC 3339 time")))
    }
}

/// The JSON Schema of a timestamp field: a string in `date-time` format.
#[must_use]
pub fn schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "string", "format": "date-time"})
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_instants_are_written_as_rfc3339() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(1_795_531_087_123), "2026-11-24T14:38:07.123Z");
        assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(rfc3339(-1), "1969-12-31T23:59:59.999Z");
    }

    #[test]
    fn offsets_and_fractions_are_read() {
        assert_eq!(
            parse_rfc3339("2026-11-24T15:38:07.1+01:00"),
            Some(1_795_531_087_100)
        );
        assert_eq!(
            parse_rfc3339("2026-11-24T14:38:07Z"),
            Some(1_795_531_087_000)
        );
        for bad in [
            "",
            "2026-11-24",
            "2026-13-01T00:00:00Z",
            "2026-11-24T14:38:07",
            "x026-11-24T14:38:07Z",
            "2026-11-24T14:38:07.Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }

    proptest! {
        #[test]
        fn every_millisecond_reads_back_as_itself(ms in -62_135_596_800_000_i64..253_402_300_799_999) {
            prop_assert_eq!(parse_rfc3339(&rfc3339(ms)), Some(ms));
        }

        #[test]
        fn no_text_makes_the_reader_panic(text in ".{0,40}") {
            let _ = parse_rfc3339(&text);
        }
    }
}
