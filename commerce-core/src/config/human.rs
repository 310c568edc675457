//! Durations in settings files and environment variables, written as people write them:
//! `"30s"`, `"2m"`, `"1h 30m"`, `"250ms"`, `"14days"` (the format of the `humantime` crate).
//! [`Config`](super::Config), `DispatcherConfig` (feature
//! `webhooks`) and the SQL store's `PoolSettings` read their durations with these; an
//! application's own settings can too:
//!
//! ```
//! # use commerce_core as commerce;
//! use std::time::Duration;
//!
//! #[derive(serde::Deserialize)]
//! struct Settings {
//!     #[serde(deserialize_with = "commerce::config::human::duration")]
//!     report_every: Duration,
//!     #[serde(deserialize_with = "commerce::config::human::optional_duration")]
//!     give_up_after: Option<Duration>,
//! }
//!
//! let settings: Settings =
//!     serde_json::from_str(r#"{"report_every": "1h 30m", "give_up_after": "none"}"#).unwrap();
//! assert_eq!(settings.report_every, Duration::from_secs(5400));
//! assert_eq!(settings.give_up_after, None);
//! ```
//!
//! A bare number is refused (`30` could be seconds or milliseconds): the unit is part of the
//! value.

use std::fmt;
use std::time::Duration;

use serde::Deserializer;
use serde::de::{self, Visitor};

/// What the error messages ask for.
const EXPECTED: &str = "a duration with its unit, such as \"30s\", \"5m\" or \"1h 30m\"";

struct Human {
    none_allowed: bool,
}

impl Visitor<'_> for Human {
    type Value = Option<Duration>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(EXPECTED)?;
        if self.none_allowed {
            f.write_str(", or \"none\"")?;
        }
        Ok(())
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
        let text = text.trim();
        if self.none_allowed && text.eq_ignore_ascii_case("none") {
            return Ok(None);
        }
        humantime::parse_duration(text)
            .map(Some)
            .map_err(|error| E::custom(format_args!("{text:?} is not {EXPECTED}: {error}")))
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        if self.none_allowed {
            Ok(None)
        } else {
            Err(E::invalid_type(de::Unexpected::Option, &self))
        }
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        self.visit_none()
    }
}

/// A [`std::time::Duration`] written `"30s"`, `"2m"`, `"1h 30m"`, `"250ms"`.
pub fn duration<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
    let found = deserializer.deserialize_str(Human {
        none_allowed: false,
    })?;
    found.ok_or_else(|| de::Error::custom(EXPECTED))
}

/// An optional [`std::time::Duration`]: as [`duration`], or `"none"` (or a null) for `None`.
pub fn optional_duration<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Duration>, D::Error> {
    deserializer.deserialize_any(Human { none_allowed: true })
}

/// A [`chrono::TimeDelta`] (the business spans of [`Config`](super::Config), such as
/// `idempotency_ttl`), written as [`duration`]: `"24h"`, `"2m"`.
pub fn time_delta<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<chrono::TimeDelta, D::Error> {
    let span = duration(deserializer)?;
    chrono::TimeDelta::from_std(span).map_err(|_| de::Error::custom("the duration is too long"))
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Deserialize)]
    struct Spans {
        #[serde(deserialize_with = "duration")]
        plain: Duration,
        #[serde(deserialize_with = "optional_duration", default)]
        maybe: Option<Duration>,
        #[serde(deserialize_with = "time_delta")]
        delta: chrono::TimeDelta,
    }

    fn read(json: &str) -> Result<Spans, String> {
        serde_json::from_str(json).map_err(|e| e.to_string())
    }

    #[test]
    fn durations_are_read_with_their_units() {
        let spans = read(r#"{"plain": "1m 30s", "maybe": "250ms", "delta": "24h"}"#).unwrap();
        assert_eq!(spans.plain, Duration::from_secs(90));
        assert_eq!(spans.maybe, Some(Duration::from_millis(250)));
        assert_eq!(spans.delta, chrono::TimeDelta::hours(24));
        for none in [r#""none""#, r#""None""#, "null"] {
            let spans = read(&format!(
                r#"{{"plain": "2s", "maybe": {none}, "delta": "1s"}}"#
            ));
            assert_eq!(spans.unwrap().maybe, None, "{none}");
        }
    }

    #[test]
    fn a_bare_number_or_a_wrong_unit_is_refused_with_what_is_expected() {
        for (json, says) in [
            (r#"{"plain": 30, "delta": "1s"}"#, "such as \"30s\""),
            (
                r#"{"plain": "30", "delta": "1s"}"#,
                "\"30\" is not a duration",
            ),
            (
                r#"{"plain": "30 parsecs", "delta": "1s"}"#,
                "\"30 parsecs\" is not",
            ),
            (r#"{"plain": "none", "delta": "1s"}"#, "\"none\" is not"),
            (
                r#"{"plain": "1s", "maybe": 5, "delta": "1s"}"#,
                "or \"none\"",
            ),
        ] {
            let error = read(json).unwrap_err();
            assert!(error.contains(says), "{json}: {error}");
        }
    }
}
