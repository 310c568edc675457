//! Parsing and validating request input: query strings and JSON bodies.
//!
//! Every check adds its message under the field's dotted key; a handler reads all the fields it
//! needs, then turns the collected messages into one 422.

use bytes::Bytes;
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde_json::{Map, Value};

use crate::domain::fields::{TextKind, check_printable, clean_text, is_web_link, phone};
use crate::error::{ApiError, FieldErrors};
use crate::model::PageRequest;
use crate::money::parse_money_input;
use crate::render::messages;
use crate::time::parse_timestamp;

/// Default page size.
pub const DEFAULT_PER_PAGE: u32 = 25;
pub use crate::limits::MAX_PER_PAGE;

/// The parsed query string (the last value of a repeated parameter wins).
///
/// Every parameter a handler reads holds printable single-line text; a parameter given with an
/// empty (or blank) value (`per_page=`, `q=`) is a message on it, never taken as absent, and
/// so is one whose percent-decoded bytes are not UTF-8 (`q=%FF`): it is refused rather than
/// read with replacement characters.
#[derive(Debug, Default)]
pub struct Query {
    /// Each parameter as sent, in order (a repeated name's last value wins); the value is
    /// `None` when its bytes are not UTF-8. A list, not a map: a query holds a handful of
    /// parameters, found by comparing names faster than by hashing them.
    values: Vec<(String, Option<String>)>,
    errors: FieldErrors,
}

impl Query {
    /// Parses a raw query string.
    pub fn parse(raw: Option<&str>) -> Self {
        let values = form_urlencoded::parse(raw.unwrap_or("").as_bytes())
            .into_owned()
            .zip(raw_pairs(raw.unwrap_or("")))
            .map(|((name, lossy), raw_value)| {
                // `form_urlencoded` replaces bytes that are not UTF-8 with U+FFFD: tell them
                // apart from a U+FFFD the client really sent.
                let utf8 = decodes_to_utf8(raw_value);
                (name, utf8.then_some(lossy))
            })
            .collect();
        Self {
            values,
            errors: FieldErrors::new(),
        }
    }

    /// The last value given for `name` (`Some(None)`: given, not UTF-8).
    fn value(&self, name: &str) -> Option<Option<&str>> {
        self.values
            .iter()
            .rev()
            .find(|(given, _)| given == name)
            .map(|(_, value)| value.as_deref())
    }

    fn fail(&mut self, name: &str, message: impl Into<String>) {
        self.errors
            .entry(name.to_owned())
            .or_default()
            .push(message.into());
    }

    /// A string parameter, trimmed: `None` when absent, or (with a message on it) when given
    /// blank or with a character that is not printable single-line text.
    pub fn string(&mut self, name: &str) -> Option<String> {
        let read = match self.value(name)? {
            None => Err(messages::INVALID_ENCODING.to_owned()),
            Some(raw) => match check_printable(raw, TextKind::SingleLine) {
                Err(problem) => Err(messages::problem(problem)),
                Ok(()) if raw.trim().is_empty() => Err(messages::EMPTY_VALUE.to_owned()),
                Ok(()) => Ok(raw.trim().to_owned()),
            },
        };
        read.map_err(|message| self.fail(name, message)).ok()
    }

    /// An integer parameter within a range.
    pub fn integer(&mut self, name: &str, min: i64, max: i64) -> Option<i64> {
        let raw = self.string(name)?;
        match raw.parse::<i64>() {
            Ok(n) if (min..=max).contains(&n) => Some(n),
            _ => {
                self.fail(name, messages::integer_between(min, max));
                None
            }
        }
    }

    /// A timestamp parameter.
    pub fn timestamp(&mut self, name: &str) -> Option<DateTime<Utc>> {
        let raw = self.string(name)?;
        // An unencoded `+` of the offset arrives as a space (form encoding): read it as `+`.
        let parsed = parse_timestamp(&raw).or_else(|| parse_timestamp(&raw.replace(' ', "+")));
        if parsed.is_none() {
            self.fail(name, messages::INVALID_TIMESTAMP);
        }
        parsed
    }

    /// A calendar date parameter, `YYYY-MM-DD`.
    pub fn date(&mut self, name: &str) -> Option<chrono::NaiveDate> {
        let raw = self.string(name)?;
        let parsed = (raw.len() == 10)
            .then(|| chrono::NaiveDate::parse_from_str(&raw, "%Y-%m-%d").ok())
            .flatten();
        if parsed.is_none() {
            self.fail(name, messages::INVALID_DATE);
        }
        parsed
    }

    /// A required timestamp parameter: a message on it when absent.
    pub fn required_timestamp(&mut self, name: &str) -> Option<DateTime<Utc>> {
        if self.value(name).is_none() {
            self.fail(name, messages::REQUIRED);
            return None;
        }
        self.timestamp(name)
    }

    /// A parameter from a fixed set of values.
    pub fn one_of<T>(&mut self, name: &str, parse: impl Fn(&str) -> Option<T>) -> Option<T> {
        let raw = self.string(name)?;
        let parsed = parse(&raw);
        if parsed.is_none() {
            self.fail(name, messages::UNKNOWN_VALUE);
        }
        parsed
    }

    /// A parameter `parse` reads, with its text as given (trimmed): a message on it
    /// (`message`) when `parse` refuses it.
    pub fn parsed<T>(
        &mut self,
        name: &str,
        message: &str,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Option<(String, T)> {
        let raw = self.string(name)?;
        match parse(&raw) {
            Some(value) => Some((raw, value)),
            None => {
                self.fail(name, message);
                None
            }
        }
    }

    /// `page` and `per_page`.
    pub fn page(&mut self) -> PageRequest {
        let page = self.integer("page", 1, i64::from(u32::MAX)).unwrap_or(1);
        let per_page = self
            .integer("per_page", 1, i64::from(MAX_PER_PAGE))
            .unwrap_or(i64::from(DEFAULT_PER_PAGE));
        // Both were read within their ranges: the default is never used.
        PageRequest::new(page as u32, per_page as u32).unwrap_or_default()
    }

    /// The collected messages as a 422, if any.
    pub fn finish(self) -> Result<(), ApiError> {
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(ApiError::validation(self.errors))
        }
    }
}

/// The raw (still encoded) value of each `&`-separated pair of a query string, in the order
/// `form_urlencoded::parse` yields them (it skips empty pairs).
fn raw_pairs(query: &str) -> impl Iterator<Item = &str> {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| pair.split_once('=').map_or("", |(_, value)| value))
}

/// Whether a form-encoded value's bytes, percent-decoded, are UTF-8. (`+` stands for a space,
/// which changes nothing to that; a value without escapes is checked without a copy.)
fn decodes_to_utf8(raw: &str) -> bool {
    percent_encoding::percent_decode_str(raw)
        .decode_utf8()
        .is_ok()
}

/// Parses a body that must be a JSON object (an empty body counts as `{}` when allowed).
pub fn json_object(body: &Bytes, empty_allowed: bool) -> Result<Map<String, Value>, ApiError> {
    if empty_allowed && body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(map)) => Ok(map),
        _ => Err(ApiError::field("body", messages::INVALID_BODY)),
    }
}

/// Reads fields of one JSON object, collecting messages under dotted keys.
#[derive(Debug)]
pub struct Fields<'a> {
    object: &'a Map<String, Value>,
    prefix: String,
    errors: &'a mut FieldErrors,
}

impl<'a> Fields<'a> {
    /// Reads `object`; keys are reported as `prefix` + name.
    pub fn new(
        object: &'a Map<String, Value>,
        prefix: String,
        errors: &'a mut FieldErrors,
    ) -> Self {
        Self {
            object,
            prefix,
            errors,
        }
    }

    /// The dotted key of a field.
    pub fn key(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// Adds a message on a field.
    pub fn fail(&mut self, name: &str, message: impl Into<String>) {
        let key = self.key(name);
        self.errors.entry(key).or_default().push(message.into());
    }

    /// Whether a field already has a message.
    pub fn has_error(&self, name: &str) -> bool {
        self.errors.contains_key(&self.key(name))
    }

    /// The raw value; `null` counts as absent.
    pub fn raw(&self, name: &str) -> Option<&'a Value> {
        self.object.get(name).filter(|v| !v.is_null())
    }

    /// A required integer within a range.
    pub fn required_integer(&mut self, name: &str, min: i64, max: i64) -> Option<i64> {
        match self.raw(name) {
            None => {
                self.fail(name, messages::REQUIRED);
                None
            }
            Some(value) => match value.as_i64() {
                Some(n) if (min..=max).contains(&n) => Some(n),
                Some(_) if max < i64::MAX => {
                    self.fail(name, messages::integer_between(min, max));
                    None
                }
                _ => {
                    self.fail(name, messages::MUST_BE_INTEGER);
                    None
                }
            },
        }
    }

    /// An optional single-line string of at most `max` characters; blank counts as absent.
    /// Control characters (tab and line breaks included) and bidirectional overrides are refused.
    pub fn optional_string(&mut self, name: &str, max: usize) -> Option<String> {
        self.optional(name, max, TextKind::SingleLine)
    }

    /// A required, non-blank single-line string of at most `max` characters.
    pub fn required_string(&mut self, name: &str, max: usize) -> Option<String> {
        self.required(name, max, TextKind::SingleLine)
    }

    /// An optional multi-line text of at most `max` characters; blank counts as absent. Tab,
    /// CR and LF are allowed; other control characters and bidirectional overrides are refused.
    pub fn optional_text(&mut self, name: &str, max: usize) -> Option<String> {
        self.optional(name, max, TextKind::MultiLine)
    }

    /// A required, non-blank multi-line text of at most `max` characters.
    pub fn required_text(&mut self, name: &str, max: usize) -> Option<String> {
        self.required(name, max, TextKind::MultiLine)
    }

    fn optional(&mut self, name: &str, max: usize, kind: TextKind) -> Option<String> {
        let value = self.raw(name)?;
        let Some(text) = value.as_str() else {
            self.fail(name, messages::MUST_BE_STRING);
            return None;
        };
        clean_text(text, max, kind)
            .map_err(|problem| self.fail(name, messages::problem(problem)))
            .ok()
            .flatten()
    }

    fn required(&mut self, name: &str, max: usize, kind: TextKind) -> Option<String> {
        let present = self
            .raw(name)
            .is_some_and(|v| !v.as_str().is_some_and(|s| s.trim().is_empty()));
        if !present {
            self.fail(name, messages::REQUIRED);
            return None;
        }
        self.optional(name, max, kind)
    }

    /// An optional Egyptian mobile number, normalised to `01` + 9 digits.
    pub fn optional_phone(&mut self, name: &str) -> Option<String> {
        let value = self.raw(name)?;
        let Some(text) = value.as_str() else {
            self.fail(name, messages::MUST_BE_STRING);
            return None;
        };
        phone(text)
            .map_err(|problem| self.fail(name, messages::problem(problem)))
            .ok()
            .flatten()
    }

    /// A required Egyptian mobile number.
    pub fn required_phone(&mut self, name: &str) -> Option<String> {
        let blank = self
            .raw(name)
            .is_none_or(|v| v.as_str().is_some_and(|s| s.trim().is_empty()));
        if blank {
            self.fail(name, messages::REQUIRED);
            return None;
        }
        self.optional_phone(name)
    }

    /// An optional http/https URL of at most `max` characters.
    pub fn optional_url(&mut self, name: &str, max: usize) -> Option<String> {
        let raw = self.optional_string(name, max)?;
        if !is_web_link(&raw) {
            self.fail(name, messages::INVALID_URL);
            return None;
        }
        Some(raw)
    }

    /// An optional instant: an ISO-8601 date-time string with an offset (as `updated_since`);
    /// blank counts as absent.
    pub fn optional_timestamp(&mut self, name: &str) -> Option<DateTime<Utc>> {
        let raw = self.raw(name)?;
        let text = raw.as_str().map(str::trim);
        let parsed = text.and_then(parse_timestamp);
        match (text, parsed) {
            (Some(""), _) => None,
            (_, None) => {
                self.fail(name, messages::INVALID_TIMESTAMP);
                None
            }
            (_, parsed) => parsed,
        }
    }

    /// A money amount (number or numeric string, 0 or more, at most 2 decimals).
    pub fn money(&mut self, name: &str, required: bool) -> Option<Decimal> {
        let Some(value) = self.raw(name) else {
            if required {
                self.fail(name, messages::REQUIRED);
            }
            return None;
        };
        let amount = parse_money_input(value);
        if amount.is_none() {
            self.fail(name, messages::INVALID_MONEY);
        }
        amount
    }

    /// An optional array of integers of at most `max` items.
    pub fn integer_list(&mut self, name: &str, max: usize, too_many: &str) -> Vec<i64> {
        let Some(value) = self.raw(name) else {
            return Vec::new();
        };
        let Some(items) = value.as_array() else {
            self.fail(name, messages::MUST_BE_ARRAY);
            return Vec::new();
        };
        if items.len() > max {
            self.fail(name, too_many);
            return Vec::new();
        }
        let ids: Option<Vec<i64>> = items.iter().map(Value::as_i64).collect();
        ids.unwrap_or_else(|| {
            self.fail(name, messages::MUST_BE_INTEGER);
            Vec::new()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::fields::normalize_phone;
    use crate::model::Problem;

    #[test]
    fn phones_are_normalised() {
        assert_eq!(
            normalize_phone("01012345678").as_deref(),
            Some("01012345678")
        );
        assert_eq!(
            normalize_phone("+201012345678").as_deref(),
            Some("01012345678")
        );
        assert_eq!(
            normalize_phone("00201012345678").as_deref(),
            Some("01012345678")
        );
        assert_eq!(
            normalize_phone("010 1234-5678").as_deref(),
            Some("01012345678")
        );
        for bad in [
            "0101234567",
            "010123456789",
            "02012345678",
            "+2001012345678",
            "01O12345678",
            "",
        ] {
            assert_eq!(normalize_phone(bad), None, "{bad}");
        }
    }

    #[test]
    fn query_rejects_bad_paging_instead_of_clamping() {
        for raw in [
            "per_page=0",
            "per_page=101",
            "page=0",
            "page=x",
            "per_page=2.5",
        ] {
            let mut q = Query::parse(Some(raw));
            q.page();
            assert!(q.finish().is_err(), "{raw}");
        }
        let mut q = Query::parse(Some("page=2&per_page=100"));
        assert_eq!(q.page(), PageRequest::new(2, 100).expect("a valid page"));
        assert!(q.finish().is_ok());
    }

    #[test]
    fn printable_text_refuses_control_and_bidi_characters() {
        for bad in [
            "a\u{0}b",
            "a\u{1}b",
            "a\u{1F}b",
            "a\u{7F}b",
            "a\u{80}b",
            "a\u{85}b",
            "a\u{9F}b",
            "a\u{202A}b",
            "a\u{202E}b",
            "a\u{2066}b",
            "a\u{2069}b",
        ] {
            assert!(
                check_printable(bad, TextKind::SingleLine).is_err(),
                "{bad:?}"
            );
            assert!(
                check_printable(bad, TextKind::MultiLine).is_err(),
                "{bad:?}"
            );
        }
        for breaks in ["a\tb", "a\nb", "a\r\nb"] {
            assert_eq!(
                check_printable(breaks, TextKind::SingleLine),
                Err(Problem::NotPrintable { multi_line: false })
            );
            assert_eq!(check_printable(breaks, TextKind::MultiLine), Ok(()));
        }
        // Arabic, emoji, a zero-width joiner, a right-to-left mark and U+2028 are text.
        for good in [
            "سارة حسن",
            "a 😀 b",
            "a\u{200D}b",
            "a\u{200F}b",
            "a\u{2028}b",
            "",
        ] {
            assert_eq!(
                check_printable(good, TextKind::SingleLine),
                Ok(()),
                "{good:?}"
            );
        }
    }

    #[test]
    fn fields_say_which_text_they_read() {
        let object = serde_json::json!({
            "line": "a\nb", "lines": " a\r\n\tb ", "nul": "a\u{0}b", "edge": "ab\u{b}",
        });
        let object = object.as_object().expect("object");
        let mut errors = FieldErrors::new();
        let mut f = Fields::new(object, String::new(), &mut errors);
        assert_eq!(f.optional_string("line", 10), None);
        assert_eq!(f.optional_text("lines", 10).as_deref(), Some("a\r\n\tb"));
        assert_eq!(f.required_text("nul", 10), None);
        // A control character where trimming would drop it is still refused.
        assert_eq!(f.required_string("edge", 10), None);
        let keys: Vec<&str> = errors.keys().map(String::as_str).collect();
        assert_eq!(keys.len(), 3, "{errors:?}");
        for key in ["line", "nul", "edge"] {
            assert!(errors.contains_key(key), "{key}: {errors:?}");
        }
        assert_eq!(errors["line"], vec![messages::INVALID_CHARACTERS]);
        assert_eq!(errors["nul"], vec![messages::INVALID_CHARACTERS_MULTILINE]);
    }

    #[test]
    fn query_refuses_empty_values_and_control_characters() {
        for (raw, name) in [
            ("q=", "q"),
            ("q=%20%20", "q"),
            ("q", "q"),
            ("per_page=", "per_page"),
            ("page=", "page"),
            ("updated_since=", "updated_since"),
            ("q=a%00b", "q"),
            ("q=a%C2%85b", "q"),
            ("q=a%E2%80%AEb", "q"),
            ("q=a%0Ab", "q"),
            ("q=%FF", "q"),
            ("q=%D8", "q"),
            ("per_page=%FF", "per_page"),
        ] {
            let mut q = Query::parse(Some(raw));
            q.page();
            q.timestamp("updated_since");
            q.string("q");
            let Err(error) = q.finish() else {
                panic!("{raw} is accepted");
            };
            let keys: Vec<&str> = error.fields().keys().map(String::as_str).collect();
            assert_eq!(keys, vec![name], "{raw}: {:?}", error.fields());
        }
        let mut q = Query::parse(Some("q=%20%D8%B3%20&other="));
        assert_eq!(q.string("q").as_deref(), Some("س"));
        // An escape that is not one is literal text; U+FFFD sent as such is text too.
        let mut q = Query::parse(Some("q=%ZZ&number=%EF%BF%BD&&page=1&page=2"));
        assert_eq!(q.string("q").as_deref(), Some("%ZZ"));
        assert_eq!(q.string("number").as_deref(), Some("\u{FFFD}"));
        assert_eq!(q.page().page(), 2);
        assert_eq!(q.string("absent"), None);
        assert!(q.finish().is_ok(), "an unread empty parameter is ignored");
    }
}
