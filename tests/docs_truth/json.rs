//! The JSON of the docs: every JSON example of a page, and a parser that refuses a key written
//! twice in one object (`serde_json` keeps the last one silently, so a body with two
//! `"request_id"` keys would pass any check that parses it).

use std::collections::BTreeSet;
use std::fmt;

use serde::Deserializer;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// One JSON example of a page: the line it starts on (1-based) and its text.
pub struct Example {
    pub line: usize,
    pub text: String,
}

/// Parses `text` as JSON, refusing an object with a key written twice (at any depth).
pub fn parse_unique(text: &str) -> Result<(), String> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    UniqueKeys
        .deserialize(&mut deserializer)
        .and_then(|()| deserializer.end())
        .map_err(|e| e.to_string())
}

/// A value of any shape whose objects have distinct keys.
struct UniqueKeys;

impl<'de> DeserializeSeed<'de> for UniqueKeys {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for UniqueKeys {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value without a repeated key")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(UniqueKeys)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = BTreeSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                return Err(de::Error::custom(format!(
                    "the key {key:?} is written twice"
                )));
            }
            map.next_value_seed(UniqueKeys)?;
        }
        Ok(())
    }
}

/// `text` with the docs' elisions taken out: `...` stands for fields or items left out
/// (`{"id":5,...}`, `[{...},...]`) or for a value (`"terms":"..."` is a string and stays).
pub fn without_elisions(text: &str) -> String {
    text.replace(",...", "")
        .replace("...,", "")
        .replace("...", "")
}

/// Every JSON example of a Markdown page: each ```` ```json ```` block whole, and in any other
/// fenced block each answer, a line that starts with `{` or `[` together with the lines that
/// follow it until it parses (an answer written over several lines).
pub fn examples(page: &str) -> Vec<Example> {
    let lines: Vec<&str> = page.lines().collect();
    let mut found = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        let Some(info) = lines[at].strip_prefix("```") else {
            at += 1;
            continue;
        };
        let start = at + 1;
        let end = (start..lines.len())
            .find(|&i| lines[i].starts_with("```"))
            .unwrap_or(lines.len());
        let block = &lines[start..end];
        if info.split_whitespace().next() == Some("json") {
            found.push(Example {
                line: start + 1,
                text: block.join("\n"),
            });
        } else {
            let mut i = 0;
            while i < block.len() {
                if !(block[i].starts_with('{') || block[i].starts_with('[')) {
                    i += 1;
                    continue;
                }
                // The shortest run of lines from here that parses; else the line alone
                // (which then fails the check, naming its line).
                let mut text = block[i].to_owned();
                let mut last = i;
                for (j, more) in block.iter().enumerate().skip(i + 1) {
                    if serde_json::from_str::<IgnoredAny>(&without_elisions(&text)).is_ok()
                        || more.starts_with('$')
                    {
                        break;
                    }
                    text.push('\n');
                    text.push_str(more);
                    last = j;
                }
                if serde_json::from_str::<IgnoredAny>(&without_elisions(&text)).is_err() {
                    text = block[i].to_owned();
                    last = i;
                }
                found.push(Example {
                    line: start + i + 1,
                    text,
                });
                i = last + 1;
            }
        }
        at = end + 1;
    }
    found
}

#[test]
fn a_repeated_key_is_refused_at_any_depth() {
    assert!(parse_unique(r#"{"a":1,"b":[{"c":2,"d":{"e":3}}]}"#).is_ok());
    let twice = parse_unique(r#"{"error":{"code":"x","request_id":"a","request_id":"b"}}"#);
    assert!(
        twice.is_err_and(|e| e.contains("request_id")),
        "a repeated key inside an object"
    );
    assert!(parse_unique(r#"[{"a":1},{"a":2,"a":3}]"#).is_err());
    assert!(parse_unique(r#"{"a":1} {"b":2}"#).is_err(), "trailing text");
    // The same key in two different objects is no repeat.
    assert!(parse_unique(r#"[{"a":1},{"a":2}]"#).is_ok());
}

#[test]
fn examples_are_found_whole_with_their_elisions_taken_out() {
    let page = "text\n```sh\n$ curl -s $API/x\n{\"data\":{\"id\":5,...,\n \"b\":[1,...]}}\n\n\
                $ curl -s $API/y\n[1,2]\n```\n\n```json\n{\"a\":\n 1}\n```\n";
    let found = examples(page);
    let texts: Vec<(usize, String)> = found
        .iter()
        .map(|e| (e.line, without_elisions(&e.text)))
        .collect();
    assert_eq!(
        texts,
        [
            (4, "{\"data\":{\"id\":5,\n \"b\":[1]}}".to_owned()),
            (8, "[1,2]".to_owned()),
            (12, "{\"a\":\n 1}".to_owned()),
        ]
    );
}
