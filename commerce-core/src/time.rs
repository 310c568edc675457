//! Egypt time: rendering timestamps in `Africa/Cairo`, parsing `updated_since` (billing months:
//! [`BillingMonth`](crate::model::BillingMonth)).

use chrono::{DateTime, SecondsFormat, Utc};
use chrono_tz::Africa::Cairo;

/// The time zone name used on the wire.
pub const CAIRO_TZ_NAME: &str = "Africa/Cairo";

/// Renders an instant in Egypt time as `YYYY-MM-DDThh:mm:ss+hh:mm`.
pub fn cairo_timestamp(at: DateTime<Utc>) -> String {
    // RFC 3339 with whole seconds and a numeric offset is exactly the wire shape, and chrono
    // writes it without interpreting a format string.
    at.with_timezone(&Cairo)
        .to_rfc3339_opts(SecondsFormat::Secs, false)
}

/// Parses an ISO-8601 date-time in extended form (`YYYY-MM-DDThh:mm:ss`, optional fractional
/// seconds) with a `Z`, `+hh`, `+hhmm` or `+hh:mm` offset (or `-`); no offset is refused.
pub fn parse_timestamp(text: &str) -> Option<DateTime<Utc>> {
    let text = text.trim();
    let parse = |t: &str| {
        DateTime::parse_from_rfc3339(t)
            .ok()
            .map(|t| t.with_timezone(&Utc))
    };
    parse(text).or_else(|| {
        // `+hh` and `+hhmm`: rewrite as `+hh:mm` (RFC 3339's only numeric form).
        let time_start = text.find('T')?;
        let sign = time_start + text[time_start..].rfind(['+', '-'])?;
        let offset = &text[sign + 1..];
        if !offset.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let (hours, minutes) = match offset.len() {
            2 => (offset, "00"),
            4 => offset.split_at(2),
            _ => return None,
        };
        parse(&format!("{}{hours}:{minutes}", &text[..=sign]))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn renders_summer_and_winter_offsets() {
        let summer = Utc.with_ymd_and_hms(2026, 7, 1, 9, 0, 0).unwrap();
        assert_eq!(cairo_timestamp(summer), "2026-07-01T12:00:00+03:00");
        let winter = Utc.with_ymd_and_hms(2026, 12, 1, 9, 0, 0).unwrap();
        assert_eq!(cairo_timestamp(winter), "2026-12-01T11:00:00+02:00");
    }

    #[test]
    fn matches_the_explicit_format_across_every_dst_rule() {
        // Every 7h13m17.123s over 1995-2031 (each of Egypt's daylight-saving rules), plus the
        // minutes around each offset change.
        let format = |t: DateTime<Utc>| {
            t.with_timezone(&Cairo)
                .format("%Y-%m-%dT%H:%M:%S%:z")
                .to_string()
        };
        let mut at = Utc.with_ymd_and_hms(1995, 1, 1, 0, 0, 0).unwrap();
        let end = Utc.with_ymd_and_hms(2031, 1, 1, 0, 0, 0).unwrap();
        let step = chrono::Duration::milliseconds(((7 * 60 + 13) * 60 + 17) * 1000 + 123);
        while at < end {
            assert_eq!(cairo_timestamp(at), format(at), "{at}");
            let next = at + chrono::Duration::hours(1);
            if cairo_timestamp(at)[19..] != cairo_timestamp(next)[19..] {
                for minute in 0..=60 {
                    let t = at + chrono::Duration::minutes(minute);
                    assert_eq!(cairo_timestamp(t), format(t), "{t}");
                }
            }
            at += step;
        }
    }

    #[test]
    fn parses_any_offset() {
        let a = parse_timestamp("2026-07-01T12:00:00+03:00").unwrap();
        let b = parse_timestamp("2026-07-01T09:00:00Z").unwrap();
        assert_eq!(a, b);
        assert!(parse_timestamp("yesterday").is_none());
        for other in [
            "2026-07-01T12:00:00+03",
            "2026-07-01T12:00:00+0300",
            "2026-07-01T12:00:00.000+03:00",
            "2026-07-01T08:30:00-0030",
        ] {
            assert_eq!(parse_timestamp(other), Some(b), "{other}");
        }
        for refused in [
            "2026-07-01T12:00:00",
            "2026-07-01T12:00:00+3",
            "2026-07-01T12:00:00+030",
            "2026-07-01T12:00:00+03:0",
            "2026-07-01",
        ] {
            assert_eq!(parse_timestamp(refused), None, "{refused}");
        }
    }
}
