//! Every ```` ```json ```` block of the README and of docs/ against the OpenAPI document: the
//! block says in its info string what it shows, and is validated against that schema of the
//! document the engine serves (`GET /api/v1/openapi.json`), with every field name checked (the
//! document's objects are open to new fields, so a validator alone would let a misspelt field
//! through). A block that shows no API payload says so. The forms of the info string:
//!
//! - `json GET /api/v1/quotes/{id} 200`: the answer of that operation with that status;
//! - `json POST /api/v1/quotes request`: the request body of that operation;
//! - `json webhook order.status_changed`: the body of that webhook (the document's `webhooks`);
//! - `json schema SupplierQuoteView`: a schema of the document's components;
//! - `json not-api <why>`: not an API payload (a configuration sample, say): only parsed.
//!
//! GitHub and rustdoc read the first word (`json`) for highlighting and ignore the rest. `...`
//! in a block elides members or items (the object or array then need not be complete), and the
//! string `"..."` stands for any value. A failure names the page and the line.
//!
//! The request bodies of the `curl` examples (`-d '{...}'` to `$API/...`) are checked the same
//! way against their operation's request schema: the docs runner sends them to the sandbox,
//! which ignores a field it does not know, so a misspelt field would pass there. (The answers
//! those examples show are compared with the sandbox's own by the docs runner.)

use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};

use commerce::Engine;
use commerce::store::MemoryStore;
use serde_json::{Map, Value};

/// The marker of an elided member (a key) or item (a string) left by [`with_markers`].
const ELIDED: &str = "\u{2026}elided";

/// The OpenAPI document of an engine with every operation (the sandbox's included).
fn document() -> &'static Value {
    static DOCUMENT: OnceLock<Value> = OnceLock::new();
    DOCUMENT.get_or_init(|| Engine::new(Arc::new(MemoryStore::new())).openapi())
}

/// One fenced block of a page: the line of its first content line (1-based), its info string
/// and its text.
struct Block {
    line: usize,
    info: String,
    text: String,
}

/// The fenced blocks of a Markdown page, as a Markdown renderer finds them (pulldown-cmark: a
/// fence of three or more backticks or tildes, indented or in a list), each with the line of
/// its first content line.
fn blocks(page: &str) -> Vec<Block> {
    use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};
    let mut found = Vec::new();
    let mut open: Option<Block> = None;
    for (event, range) in Parser::new(page).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => {
                open = Some(Block {
                    // The fence's line (1-based) is the newlines before it plus one.
                    line: page[..range.start].matches('\n').count() + 2,
                    info: info.trim().to_owned(),
                    text: String::new(),
                });
            }
            Event::Text(text) => {
                if let Some(block) = &mut open {
                    block.text.push_str(&text);
                }
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some(mut block) = open.take() {
                    block.text.truncate(block.text.trim_end_matches('\n').len());
                    found.push(block);
                }
            }
            _ => {}
        }
    }
    found
}

/// The README and every page of docs/, by name.
fn pages() -> Vec<(String, String)> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let read = |path: &str| {
        std::fs::read_to_string(format!("{root}/{path}")).unwrap_or_else(|e| panic!("{path}: {e}"))
    };
    let mut pages = vec![("README.md".to_owned(), read("README.md"))];
    let mut names: Vec<String> = std::fs::read_dir(format!("{root}/docs"))
        .expect("docs/")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".md"))
        .collect();
    names.sort();
    for name in names {
        let path = format!("docs/{name}");
        let text = read(&path);
        pages.push((path, text));
    }
    pages
}

/// What a block's info string says it shows: the JSON pointer of its schema in the document,
/// `None` for `not-api`, or why the info string is not understood.
fn target(info: &str) -> Result<Option<String>, String> {
    let language = info.split_whitespace().next().unwrap_or_default();
    let lowered = language.to_ascii_lowercase();
    let words: Vec<&str> = std::iter::once(lowered.as_str())
        .chain(info.split_whitespace().skip(1))
        .collect();
    let escape = |s: &str| s.replace('~', "~0").replace('/', "~1");
    let content = "content/application~1json/schema";
    let pointer = match words.as_slice() {
        ["json", "not-api", why, ..] if !why.is_empty() => return Ok(None),
        ["json", "schema", name] => format!("/components/schemas/{name}"),
        ["json", "webhook", name] => {
            format!("/webhooks/{}/post/requestBody/{content}", escape(name))
        }
        ["json", method, path, "request"] => format!(
            "/paths/{}/{}/requestBody/{content}",
            escape(path),
            method.to_ascii_lowercase()
        ),
        ["json", method, path, status] if status.parse::<u16>().is_ok() => format!(
            "/paths/{}/{}/responses/{status}/{content}",
            escape(path),
            method.to_ascii_lowercase()
        ),
        _ => {
            return Err(format!(
                "```{info}: say what the block shows: `json METHOD /api/v1/path STATUS`, \
                 `json METHOD /api/v1/path request`, `json webhook NAME`, `json schema NAME` \
                 or `json not-api WHY`"
            ));
        }
    };
    match document().pointer(&pointer) {
        Some(_) => Ok(Some(pointer)),
        None => Err(format!(
            "```{info}: the OpenAPI document has no schema at {pointer}"
        )),
    }
}

/// `text` with the docs' elisions made JSON: `...` as a member becomes the key [`ELIDED`], as an
/// item the string [`ELIDED`] (a `"..."` string is left as it is).
fn with_markers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut open = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if rest.starts_with("...") {
            if open.last() == Some(&'{') {
                out.push_str(&format!("\"{ELIDED}\": null"));
            } else {
                out.push_str(&format!("\"{ELIDED}\""));
            }
            rest = &rest[3..];
            continue;
        } else {
            match c {
                '"' => in_string = true,
                '{' | '[' => open.push(c),
                '}' | ']' => {
                    open.pop();
                }
                _ => {}
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// A value without its markers, and the JSON pointers of the objects that had one (elided:
/// their required members may be left out).
fn without_markers(value: &Value, at: &str, open: &mut BTreeSet<String>) -> Value {
    match value {
        Value::Object(members) => {
            if members.contains_key(ELIDED) {
                open.insert(at.to_owned());
            }
            let kept: Map<String, Value> = members
                .iter()
                .filter(|(key, _)| key.as_str() != ELIDED)
                .map(|(key, v)| {
                    let inner = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
                    (key.clone(), without_markers(v, &inner, open))
                })
                .collect();
            Value::Object(kept)
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .filter(|item| item.as_str() != Some(ELIDED))
                .enumerate()
                .map(|(n, item)| without_markers(item, &format!("{at}/{n}"), open))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The schema at `schema`, its `$ref`s followed.
fn resolve(schema: &Value) -> &Value {
    let mut schema = schema;
    while let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let pointer = reference.trim_start_matches('#');
        schema = document()
            .pointer(pointer)
            .unwrap_or_else(|| panic!("the document's $ref {reference} leads nowhere"));
    }
    schema
}

/// Whether `value` is of a type `schema` allows (a schema that names no type allows all).
fn type_fits(schema: &Value, value: &Value) -> bool {
    let named = |t: &str| match value {
        Value::Null => t == "null",
        Value::Bool(_) => t == "boolean",
        Value::Number(n) => t == "number" || (t == "integer" && (n.is_i64() || n.is_u64())),
        Value::String(_) => t == "string",
        Value::Array(_) => t == "array",
        Value::Object(_) => t == "object",
    };
    match schema.get("type") {
        Some(Value::String(t)) => named(t),
        Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).any(named),
        _ => true,
    }
}

/// The members of `value` (at `at`) that none of `schemas` (all of which apply to it) names,
/// and theirs inside.
fn unknown_members(schemas: &[Value], value: &Value, at: &str, found: &mut Vec<String>) {
    // Every schema that applies, `allOf` flattened, without its `anyOf` and `oneOf`: those are
    // tried one branch at a time (the value passes if a branch of its type names its members).
    let mut applying: Vec<Value> = Vec::new();
    let mut choices: Vec<Vec<Value>> = Vec::new();
    let mut pending: Vec<Value> = schemas.iter().map(|s| resolve(s).clone()).collect();
    while let Some(mut schema) = pending.pop() {
        if let Value::Object(members) = &mut schema {
            if let Some(Value::Array(all)) = members.remove("allOf") {
                pending.extend(all.iter().map(|s| resolve(s).clone()));
            }
            for key in ["anyOf", "oneOf"] {
                if let Some(Value::Array(any)) = members.remove(key) {
                    choices.push(any.iter().map(|s| resolve(s).clone()).collect());
                }
            }
        }
        applying.push(schema);
    }
    for choice in choices {
        let fits = choice.iter().filter(|b| type_fits(b, value)).any(|branch| {
            let mut inside = Vec::new();
            let mut with = applying.clone();
            with.push(branch.clone());
            unknown_members(&with, value, at, &mut inside);
            inside.is_empty()
        });
        if !fits {
            found.push(format!("{at}: fits none of the document's alternatives"));
            return;
        }
    }
    match value {
        Value::Object(members) => {
            let extra: Vec<Value> = applying
                .iter()
                .filter_map(|s| s.get("additionalProperties"))
                .filter(|a| a.is_object())
                .cloned()
                .collect();
            // A schema that says nothing of its members (no `properties`) leaves them open.
            let closed = applying.iter().any(|s| s.get("properties").is_some())
                && !applying
                    .iter()
                    .any(|s| s.get("additionalProperties") == Some(&Value::Bool(true)));
            for (key, member) in members {
                let inner = format!("{at}/{key}");
                let named: Vec<Value> = applying
                    .iter()
                    .filter_map(|s| s.get("properties").and_then(|p| p.get(key)))
                    .cloned()
                    .collect();
                if !named.is_empty() {
                    unknown_members(&named, member, &inner, found);
                } else if !extra.is_empty() {
                    unknown_members(&extra, member, &inner, found);
                } else if closed {
                    found.push(format!("{inner}: no such field in the document"));
                }
            }
        }
        Value::Array(items) => {
            let item_schemas: Vec<Value> = applying
                .iter()
                .filter_map(|s| s.get("items"))
                .cloned()
                .collect();
            if !item_schemas.is_empty() {
                for (n, item) in items.iter().enumerate() {
                    unknown_members(&item_schemas, item, &format!("{at}/{n}"), found);
                }
            }
        }
        _ => {}
    }
}

/// The value at a JSON pointer of `value`.
fn at<'v>(value: &'v Value, pointer: &str) -> Option<&'v Value> {
    value.pointer(pointer)
}

/// The problems of one block's JSON against the schema at `pointer`.
fn problems(text: &str, pointer: &str) -> Vec<String> {
    let marked: Value = match serde_json::from_str(&with_markers(text)) {
        Ok(value) => value,
        Err(error) => return vec![format!("not JSON: {error}")],
    };
    let mut open = BTreeSet::new();
    let value = without_markers(&marked, "", &mut open);
    let mut schema = document().pointer(pointer).expect("checked").clone();
    if let Value::Object(members) = &mut schema {
        members.insert("components".into(), document()["components"].clone());
    }
    let validator = jsonschema::draft202012::new(&schema).expect("the document's schemas");
    let mut found = Vec::new();
    for error in validator.iter_errors(&value) {
        let location = error.instance_path().to_string();
        // An elided object may leave out required members; "..." stands for any value.
        let elided =
            open.contains(&location) && error.schema_path().to_string().ends_with("/required");
        let any = at(&value, &location).and_then(Value::as_str) == Some("...");
        if !elided && !any {
            found.push(format!("{location}: {error}"));
        }
    }
    unknown_members(&[schema], &value, "", &mut found);
    found
}

/// The line of the block (page line numbers) that best locates a problem: the first line that
/// writes the last field of its JSON pointer as a key, else the block's first line.
fn line_of(block: &Block, problem: &str) -> usize {
    let pointer = problem.split(':').next().unwrap_or_default();
    let key = pointer.rsplit('/').find(|s| s.parse::<usize>().is_err());
    key.filter(|k| !k.is_empty())
        .and_then(|k| {
            block
                .text
                .lines()
                .position(|l| l.contains(&format!("\"{k}\"")))
        })
        .map_or(block.line, |n| block.line + n)
}

/// What the sandbox accepts beyond the document, which states production's rules: a webhook
/// URL in `http` on the loopback address (the docs' examples register the receiver on
/// `http://127.0.0.1:4000`; production takes `https` to public hosts only).
fn sandbox_allows(template: &str, problem: &str) -> bool {
    template.starts_with("/api/v1/webhooks")
        && problem.starts_with("/url: \"http://127.0.0.1:")
        && problem.contains("does not match \"^\\s*https://")
}

/// The document's path that `path` (`/api/v1/orders/5/cancel`, no query) is an instance of.
fn template_of(path: &str) -> Option<String> {
    let segments: Vec<&str> = path.split('/').collect();
    document()["paths"]
        .as_object()?
        .keys()
        .find(|template| {
            let parts: Vec<&str> = template.split('/').collect();
            parts.len() == segments.len()
                && parts
                    .iter()
                    .zip(&segments)
                    .all(|(p, s)| p == s || (p.starts_with('{') && p.ends_with('}')))
        })
        .cloned()
}

/// Whether a shell command's text ends inside a quote (a `# comment` outside quotes read as
/// such: its apostrophes open nothing).
fn open_quote(text: &str) -> bool {
    let (mut single, mut double, mut comment) = (false, false, false);
    let mut previous = ' ';
    for c in text.chars() {
        if c == '\n' {
            comment = false;
        } else if !comment {
            match c {
                '\'' if !double => single = !single,
                '"' if !single && previous != '\\' => double = !double,
                '#' if !single && !double && previous.is_whitespace() => comment = true,
                _ => {}
            }
        }
        previous = c;
    }
    single || double
}

/// The request bodies of the `curl` commands of a shell block: (line of the command, method,
/// path, body), for each `-d '...'` sent to `$API/...` or to the sandbox's URL. A body in
/// double quotes (built from shell variables) is not JSON as written: left out.
fn curl_bodies(block: &Block) -> Vec<(usize, String, String, String)> {
    let lines: Vec<&str> = block.text.lines().collect();
    let mut found = Vec::new();
    let mut n = 0;
    while n < lines.len() {
        let first = n;
        if lines[n].trim_start().starts_with('#') {
            n += 1;
            continue;
        }
        let mut command = lines[n].trim_start_matches("$ ").to_owned();
        // A command goes on after a trailing `\` and inside an open quote.
        while (command.trim_end().ends_with('\\') || open_quote(&command)) && n + 1 < lines.len() {
            n += 1;
            command.push('\n');
            command.push_str(lines[n]);
        }
        n += 1;
        if !command.contains("curl ") {
            continue;
        }
        let Some((_, rest)) = command.split_once(" -d '") else {
            continue;
        };
        let Some((body, _)) = rest.split_once('\'') else {
            continue;
        };
        let url = command
            .split_whitespace()
            .map(|w| w.trim_matches('"'))
            .find_map(|w| {
                w.strip_prefix("$API")
                    .or_else(|| w.strip_prefix("http://127.0.0.1:8080/api/v1"))
            });
        let Some(url) = url else { continue };
        let path = format!("/api/v1{}", url.split('?').next().unwrap_or_default());
        let method = command
            .split_once("-X ")
            .and_then(|(_, m)| m.split_whitespace().next())
            .unwrap_or("POST")
            .to_owned();
        found.push((block.line + first, method, path, body.to_owned()));
    }
    found
}

/// The problems of every ```` ```json ```` block of `pages`, and of any other block that holds
/// JSON without saying so, as `page:line: problem`; and how many blocks were validated.
fn check_pages(pages: &[(String, String)]) -> (Vec<String>, usize) {
    let mut found = Vec::new();
    let mut validated = 0;
    for (page, text) in pages {
        for block in blocks(text) {
            // `JSON` is `json` to a renderer's highlighter too.
            let language = block.info.split_whitespace().next().unwrap_or_default();
            let language = language.to_ascii_lowercase();
            let language = language.as_str();
            let starts = block.text.trim_start().starts_with(['{', '[']);
            if matches!(language, "sh" | "bash" | "console") {
                for (line, method, path, body) in curl_bodies(&block) {
                    let what = format!("{method} {path}");
                    let Some(template) = template_of(&path) else {
                        found.push(format!(
                            "{page}:{line}: {what}: no such path in the document"
                        ));
                        continue;
                    };
                    let pointer = format!(
                        "/paths/{}/{}/requestBody/content/application~1json/schema",
                        template.replace('~', "~0").replace('/', "~1"),
                        method.to_ascii_lowercase()
                    );
                    if document().pointer(&pointer).is_none() {
                        found.push(format!(
                            "{page}:{line}: {what}: the operation takes no JSON body"
                        ));
                        continue;
                    }
                    validated += 1;
                    for problem in problems(&body, &pointer) {
                        if sandbox_allows(&template, &problem) {
                            continue;
                        }
                        found.push(format!("{page}:{line}: {problem} (the body of {what})"));
                    }
                }
                continue;
            }
            if language != "json" {
                if starts && matches!(language, "" | "text" | "jsonc" | "js" | "javascript") {
                    found.push(format!(
                        "{page}:{}: JSON in a ```{} block: make it ```json with what it shows",
                        block.line, block.info
                    ));
                }
                continue;
            }
            match target(&block.info) {
                Err(problem) => found.push(format!("{page}:{}: {problem}", block.line - 1)),
                Ok(None) => {
                    if let Err(error) = serde_json::from_str::<Value>(&with_markers(&block.text)) {
                        found.push(format!("{page}:{}: not JSON: {error}", block.line));
                    }
                }
                Ok(Some(pointer)) => {
                    validated += 1;
                    for problem in problems(&block.text, &pointer) {
                        let line = line_of(&block, &problem);
                        found.push(format!("{page}:{line}: {problem} (```{})", block.info));
                    }
                }
            }
        }
    }
    (found, validated)
}

#[test]
fn every_json_block_of_the_docs_is_valid_against_the_document() {
    let (found, validated) = check_pages(&pages());
    assert!(
        found.is_empty(),
        "JSON blocks of the docs against the OpenAPI document:\n{}",
        found.join("\n")
    );
    assert!(
        validated >= 25,
        "only {validated} blocks and bodies validated"
    );
}

/// The guard itself: a page with a misspelt field, a wrong type, a block that says nothing and
/// JSON in an unnamed block fails, each naming its page and line; elisions pass.
#[test]
fn a_wrong_field_or_an_unsaid_block_fails_naming_page_and_line() {
    let page = |text: &str| vec![("docs/planted.md".to_owned(), text.to_owned())];
    let good = "text\n\n```json GET /api/v1/supply/variants 200\n\
                {\"data\": [{\"id\": 2, ...}],\n \"meta\": {\"page\": 1, \"per_page\": 25, \
                \"total\": 1, \"last_page\": 1}}\n```\n";
    assert_eq!(check_pages(&page(good)), (vec![], 1));
    let misspelt = good.replace("\"page\"", "\"current_page\"");
    let (found, _) = check_pages(&page(&misspelt));
    assert!(
        found
            .iter()
            .any(|f| f.starts_with("docs/planted.md:5: /meta/current_page: no such field")),
        "{found:?}"
    );
    let typed = good.replace("\"total\": 1", "\"total\": \"1\"");
    let (found, _) = check_pages(&page(&typed));
    assert!(
        found
            .iter()
            .any(|f| f.starts_with("docs/planted.md:5: /meta/total:")),
        "{found:?}"
    );
    let deep = "```json schema SupplierQuoteView\n{\"id\": 4, \"variant\": {\"id\": 2, \
                \"product\": 2, ...}, ...}\n```\n";
    let (found, _) = check_pages(&page(deep));
    assert!(
        found
            .iter()
            .any(|f| f.starts_with("docs/planted.md:2: /variant/product: no such field")),
        "{found:?}"
    );
    let unsaid = "a\n```json\n{\"a\": 1}\n```\n";
    let (found, _) = check_pages(&page(unsaid));
    assert!(
        found[0].starts_with("docs/planted.md:2: ```json: say what the block shows"),
        "{found:?}"
    );
    let unnamed = "```\n{\"a\": 1}\n```\n";
    let (found, _) = check_pages(&page(unnamed));
    assert!(
        found[0].starts_with("docs/planted.md:2: JSON in a ``` block"),
        "{found:?}"
    );
    // Fences of tildes or of more backticks, and `JSON` in capitals, are blocks like any other.
    for fence in ["~~~", "````"] {
        let other = misspelt_fence(good, fence);
        let (found, _) = check_pages(&page(&other));
        assert!(
            found
                .iter()
                .any(|f| f.starts_with("docs/planted.md:5: /meta/current_page: no such field")),
            "{fence}: {found:?}"
        );
    }
    let capitals = good
        .replace("```json", "```JSON")
        .replace("\"page\"", "\"current_page\"");
    let (found, _) = check_pages(&page(&capitals));
    assert!(
        found
            .iter()
            .any(|f| f.starts_with("docs/planted.md:5: /meta/current_page: no such field")),
        "{found:?}"
    );
    let nowhere = "```json GET /api/v1/nothing 200\n{}\n```\n";
    let (found, _) = check_pages(&page(nowhere));
    assert!(found[0].contains("has no schema at"), "{found:?}");
    let config = "```json not-api a configuration sample\n{\"anything\": 1}\n```\n";
    assert_eq!(check_pages(&page(config)), (vec![], 0));
    // A request body of a curl example, written over lines, after a comment with an apostrophe.
    let curl = "```sh\n# the marketer's quote\ncurl -s $API/shipping/quote -H \"$K\" \\\n  -d '{\"shipping_option_id\":1,\n  \
                \"governorate_id\":1,\"lines\":[{\"variant_id\":1,\"quantity\":1}]}'\n```\n";
    assert_eq!(check_pages(&page(curl)), (vec![], 1));
    let misspelt = curl.replace("\"quantity\"", "\"qty\"");
    let (found, _) = check_pages(&page(&misspelt));
    assert!(
        found
            .iter()
            .any(|f| f.starts_with("docs/planted.md:3: /lines/0/qty: no such field")),
        "{found:?}"
    );
    let patched = "```sh\ncurl -s -X PATCH $API/webhooks/1 -H \"$K\" -d '{\"enabld\":true}'\n```\n";
    let (found, _) = check_pages(&page(patched));
    assert!(
        found
            .iter()
            .any(|f| f.contains("/enabld: no such field") && f.contains("PATCH /api/v1/webhooks/1")),
        "{found:?}"
    );
    // The sandbox's loopback receiver passes; any other `http` URL fails as the document says.
    let loopback =
        "```sh\ncurl -s $API/webhooks -d '{\"url\":\"http://127.0.0.1:4000/webhooks\"}'\n```\n";
    assert_eq!(check_pages(&page(loopback)), (vec![], 1));
    let public = loopback.replace("127.0.0.1:4000", "shop.example.com");
    let (found, _) = check_pages(&page(&public));
    assert!(
        found[0].contains("/url: \"http://shop.example.com"),
        "{found:?}"
    );
}

/// `page` with its fences written with `fence` and its `page` field misspelt.
fn misspelt_fence(page: &str, fence: &str) -> String {
    page.replace("```", fence)
        .replace("\"page\"", "\"current_page\"")
}

#[test]
fn elisions_become_markers_outside_strings_only() {
    assert_eq!(
        with_markers(r#"{"a":[1,...],...,"s":"...","t":"a\"..."}"#),
        format!(r#"{{"a":[1,"{ELIDED}"],"{ELIDED}": null,"s":"...","t":"a\"..."}}"#)
    );
}
