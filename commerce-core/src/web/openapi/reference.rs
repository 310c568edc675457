//! The document as a reference page for people, served at `GET /api/v1/docs`: one HTML page,
//! rendered once from the document itself ([`document`]), with every operation (method, path,
//! summary, description, parameters, request body fields, answers with their statuses), the
//! schemas and the webhook events. Self-contained: inline style, no script, no asset from
//! anywhere (it works offline and behind a firewall); every value escaped by the templates
//! (maud, as the owner pages).

use std::sync::LazyLock;

use bytes::Bytes;
use maud::{DOCTYPE, Markup, PreEscaped, html};
use serde_json::{Map, Value};

use super::document;

/// The page, rendered once (the document does not change while the process runs).
static PAGE: LazyLock<Bytes> = LazyLock::new(|| Bytes::from(render(document())));

/// The reference page (HTML) of the document.
pub fn reference_page() -> &'static Bytes {
    &PAGE
}

/// Readable on a phone and a desktop; no external file.
const STYLE: &str = "\
*{box-sizing:border-box}\
body{margin:0;font-family:system-ui,sans-serif;line-height:1.5;background:#f5f6f8;color:#1d2330}\
header{background:#123c69;color:#fff;padding:1rem}header a{color:#fff}\
header h1{margin:0 0 .25rem;font-size:1.5rem}header p{margin:.25rem 0}\
main{max-width:60rem;margin:0 auto;padding:1rem}\
nav ul{list-style:none;padding:0;margin:0 0 .75rem}nav li{margin:.15rem 0}\
section{margin-bottom:2rem}h2{font-size:1.3rem;border-bottom:2px solid #123c69;padding-bottom:.25rem}\
article{background:#fff;border-radius:.5rem;padding:.75rem 1rem;margin:0 0 1rem;box-shadow:0 1px 2px #0002}\
h3{font-size:1.1rem;margin:.25rem 0;word-break:break-all}h4{font-size:.95rem;margin:.75rem 0 .25rem}\
.method{display:inline-block;min-width:4.2rem;text-align:center;color:#fff;border-radius:.25rem;padding:0 .4rem;margin-inline-end:.5rem;font-family:monospace}\
.get{background:#1f6f43}.post{background:#123c69}.patch{background:#8a5a00}.put{background:#6b3fa0}.delete{background:#b00020}\
code{font-family:monospace;background:#eef0f4;padding:0 .2rem;border-radius:.2rem;word-break:break-word}\
table{width:100%;border-collapse:collapse;font-size:.9rem}th,td{text-align:start;padding:.3rem;border-bottom:1px solid #dde;vertical-align:top}\
.summary{font-weight:600;margin:.25rem 0}.muted{color:#5a6170}";

/// The document as one HTML page.
fn render(doc: &Value) -> String {
    let info = &doc["info"];
    let title = text(&info["title"]);
    let tags: Vec<&str> = doc["tags"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tag| tag["name"].as_str())
        .collect();
    let operations = operations(doc);
    let schemas = object(&doc["components"]["schemas"]);
    let webhooks = object(&doc["webhooks"]);
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " reference" }
                style { (PreEscaped(STYLE)) }
            }
            body {
                header {
                    h1 { (title) " " (text(&info["version"])) }
                    p { (prose(text(&info["description"]))) }
                    p {
                        (operations.len()) " operations. The OpenAPI document: "
                        a href="openapi.json" { "openapi.json" }
                        " (the same document, for tools and client generators)."
                    }
                }
                main {
                    nav aria-label="Operations" {
                        h2 { "Operations" }
                        @for tag in &tags {
                            @let tagged: Vec<&Operation<'_>> = operations.iter().filter(|o| o.tag == *tag).collect();
                            @if !tagged.is_empty() {
                                h4 { (tag) }
                                ul {
                                    @for op in tagged {
                                        li {
                                            a href=(format!("#{}", op.id)) {
                                                span class=(format!("method {}", op.method)) { (op.method.to_uppercase()) }
                                                " " code { (op.path) }
                                            }
                                            " " (text(&op.value["summary"]))
                                        }
                                    }
                                }
                            }
                        }
                    }
                    @for tag in &tags {
                        @let tagged: Vec<&Operation<'_>> = operations.iter().filter(|o| o.tag == *tag).collect();
                        @if !tagged.is_empty() {
                            section id=(format!("tag-{tag}")) {
                                h2 { (tag) }
                                @for op in tagged { (operation(doc, op)) }
                            }
                        }
                    }
                    section id="webhooks" {
                        h2 { "Webhook events" }
                        p.muted { "Sent by the platform to the URLs registered with " code { "POST /api/v1/webhooks" } "." }
                        @for (name, item) in webhooks {
                            @for (method, event) in object(item) {
                                article id=(format!("webhook-{name}")) {
                                    h3 { span class=(format!("method {method}")) { (method.to_uppercase()) } " " code { (name) } }
                                    p.summary { (text(&event["summary"])) }
                                    p { (prose(text(&event["description"]))) }
                                    (request_body(doc, &event["requestBody"]))
                                }
                            }
                        }
                    }
                    section id="schemas" {
                        h2 { "Schemas" }
                        @for (name, schema) in schemas {
                            article id=(format!("schema-{name}")) {
                                h3 { code { (name) } }
                                p { (prose(text(&schema["description"]))) }
                                (fields(doc, schema))
                            }
                        }
                    }
                }
            }
        }
    }
    .into_string()
}

/// An operation of the document and where it is.
struct Operation<'d> {
    /// Its `operationId`, the element id of its article.
    id: &'d str,
    /// The lower-case method (`get`).
    method: &'d str,
    path: &'d str,
    /// Its first tag.
    tag: &'d str,
    value: &'d Value,
}

/// Every operation, in the document's order.
fn operations(doc: &Value) -> Vec<Operation<'_>> {
    object(&doc["paths"])
        .iter()
        .flat_map(|(path, item)| {
            object(item).iter().map(move |(method, value)| Operation {
                id: value["operationId"].as_str().unwrap_or(method),
                method,
                path,
                tag: value["tags"][0].as_str().unwrap_or_default(),
                value,
            })
        })
        .collect()
}

/// One operation's article.
fn operation(doc: &Value, op: &Operation<'_>) -> Markup {
    let value = op.value;
    let keyless = value["security"] == Value::Array(Vec::new());
    let parameters = value["parameters"].as_array().cloned().unwrap_or_default();
    html! {
        article id=(op.id) {
            h3 {
                span class=(format!("method {}", op.method)) { (op.method.to_uppercase()) }
                " " code { (op.path) }
            }
            p.summary { (text(&value["summary"])) }
            p.muted { "Operation " code { (op.id) } @if keyless { "; no key needed" } "." }
            @for paragraph in text(&value["description"]).split("\n\n") {
                p { (prose(paragraph)) }
            }
            @if !parameters.is_empty() {
                h4 { "Parameters" }
                table {
                    thead { tr { th { "Name" } th { "In" } th { "Type" } th { "Required" } th { "Description" } } }
                    tbody {
                        @for parameter in &parameters {
                            tr {
                                td { code { (text(&parameter["name"])) } }
                                td { (text(&parameter["in"])) }
                                td { (type_of(&parameter["schema"])) }
                                td { (yes_no(&parameter["required"])) }
                                td { (prose(text(&parameter["description"]))) }
                            }
                        }
                    }
                }
            }
            (request_body(doc, &value["requestBody"]))
            h4 { "Answers" }
            table {
                thead { tr { th { "Status" } th { "Description" } th { "Body" } } }
                tbody {
                    @for (status, response) in object(&value["responses"]) {
                        tr {
                            td { code { (status) } }
                            td { (prose(text(&response["description"]))) }
                            td {
                                @for (media, content) in object(&response["content"]) {
                                    (type_of(&content["schema"])) " " span.muted { "(" (media) ")" }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// A request body: its media type, whether it is required, and its fields.
fn request_body(doc: &Value, body: &Value) -> Markup {
    html! {
        @for (media, content) in object(&body["content"]) {
            h4 { "Request body" }
            p {
                code { (media) } ", " @if body["required"] == Value::Bool(true) { "required" } @else { "optional" }
                ": " (type_of(&content["schema"]))
            }
            (fields(doc, &content["schema"]))
        }
    }
}

/// The fields of an object schema, nested objects and arrays of objects flattened with dotted
/// names (`lines[].variant_id`); nothing for a schema without properties.
fn fields(doc: &Value, schema: &Value) -> Markup {
    let mut rows = Vec::new();
    collect_fields(doc, schema, "", 0, &mut rows);
    html! {
        @if !rows.is_empty() {
            table {
                thead { tr { th { "Field" } th { "Type" } th { "Required" } th { "Description" } } }
                tbody {
                    @for row in &rows {
                        tr {
                            td { code { (row.name) } }
                            td { (type_of(row.schema)) }
                            td { @if row.required { "yes" } @else { "no" } }
                            td { (prose(text(&row.schema["description"]))) }
                        }
                    }
                }
            }
        }
    }
}

/// A row of a fields table.
struct Field<'d> {
    name: String,
    schema: &'d Value,
    required: bool,
}

/// How deep [`fields`] follows nested objects.
const MAX_DEPTH: usize = 3;

fn collect_fields<'d>(
    doc: &'d Value,
    schema: &'d Value,
    prefix: &str,
    depth: usize,
    rows: &mut Vec<Field<'d>>,
) {
    // A named schema is described in the schemas section: a request body's is expanded here
    // (depth 0), a nested one is a link there.
    if depth > 0 && schema.get("$ref").is_some() {
        return;
    }
    let schema = resolve(doc, schema);
    let required = schema["required"].as_array();
    for (name, property) in object(&schema["properties"]) {
        rows.push(Field {
            name: format!("{prefix}{name}"),
            schema: property,
            required: required.is_some_and(|r| r.iter().any(|n| n == name.as_str())),
        });
        if depth + 1 >= MAX_DEPTH {
            continue;
        }
        let items = &property["items"];
        if items.is_object() {
            collect_fields(doc, items, &format!("{prefix}{name}[]."), depth + 1, rows);
        } else {
            collect_fields(doc, property, &format!("{prefix}{name}."), depth + 1, rows);
        }
    }
}

/// A schema's type in a few words, named schemas linked to their section.
fn type_of(schema: &Value) -> Markup {
    if let Some(name) = schema["$ref"].as_str().and_then(|r| r.rsplit('/').next()) {
        return html! { a href=(format!("#schema-{name}")) { (name) } };
    }
    for (key, joiner) in [("oneOf", " or "), ("anyOf", " or "), ("allOf", " and ")] {
        if let Some(variants) = schema[key].as_array() {
            return html! {
                @for (i, variant) in variants.iter().enumerate() {
                    @if i > 0 { (joiner) }
                    (type_of(variant))
                }
            };
        }
    }
    if let Some(values) = schema["enum"].as_array() {
        return html! {
            "one of "
            @for (i, value) in values.iter().enumerate() {
                @if i > 0 { ", " }
                code { (literal(value)) }
            }
        };
    }
    if let Some(value) = schema.get("const") {
        return html! { code { (literal(value)) } };
    }
    let types: Vec<&str> = match &schema["type"] {
        Value::String(one) => vec![one.as_str()],
        Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let properties = object(&schema["properties"]);
    html! {
        @if types.is_empty() && properties.is_empty() { "any" }
        @for (i, name) in types.iter().enumerate() {
            @if i > 0 { " or " }
            @if *name == "array" { "array of " (type_of(&schema["items"])) }
            @else if *name == "object" && !properties.is_empty() {
                "{"
                @for (j, (field, property)) in properties.iter().enumerate() {
                    @if j > 0 { ", " }
                    code { (field) } ": " (type_of(property))
                }
                "}"
            }
            @else { (name) }
        }
        (constraints(schema))
    }
}

/// A schema's bounds and format, in parentheses (`(1 to 100 characters)`).
fn constraints(schema: &Value) -> Markup {
    let mut parts = Vec::new();
    match (&schema["minLength"], &schema["maxLength"]) {
        (Value::Number(min), Value::Number(max)) => {
            parts.push(format!("{min} to {max} characters"))
        }
        (_, Value::Number(max)) => parts.push(format!("at most {max} characters")),
        _ => {}
    }
    // A bound past what a JavaScript number holds exactly (an id's `i64::MAX`) says nothing to
    // a reader: left out.
    let maximum = match &schema["maximum"] {
        Value::Number(max) if max.as_f64().is_some_and(|m| m < 9_007_199_254_740_992.0) => {
            &schema["maximum"]
        }
        _ => &Value::Null,
    };
    match (&schema["minimum"], maximum) {
        (Value::Number(min), Value::Number(max)) => parts.push(format!("{min} to {max}")),
        (Value::Number(min), _) => parts.push(format!("at least {min}")),
        (_, Value::Number(max)) => parts.push(format!("at most {max}")),
        _ => {}
    }
    if let Some(max) = schema["maxItems"].as_u64() {
        parts.push(format!("at most {max} items"));
    }
    if let Some(format) = schema["format"].as_str() {
        parts.push(format.to_owned());
    }
    html! { @if !parts.is_empty() { " (" (parts.join(", ")) ")" } }
}

/// The schema a `$ref` names (the schema itself when it is none).
fn resolve<'d>(doc: &'d Value, schema: &'d Value) -> &'d Value {
    match schema["$ref"]
        .as_str()
        .and_then(|r| r.strip_prefix("#/components/schemas/"))
    {
        Some(name) => &doc["components"]["schemas"][name],
        None => schema,
    }
}

/// Text with its `code spans` (the document's descriptions are CommonMark) set as code.
fn prose(text: &str) -> Markup {
    html! {
        @for (i, piece) in text.split('`').enumerate() {
            @if i % 2 == 1 { code { (piece) } } @else { (piece) }
        }
    }
}

fn object(value: &Value) -> &Map<String, Value> {
    static EMPTY: LazyLock<Map<String, Value>> = LazyLock::new(Map::new);
    value.as_object().unwrap_or(&EMPTY)
}

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

fn literal(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn yes_no(value: &Value) -> &'static str {
    if value == &Value::Bool(true) {
        "yes"
    } else {
        "no"
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::render;

    /// Every value of the document is escaped: markup in a summary, a description, a parameter
    /// or a schema name is shown as text, never run or loaded.
    #[test]
    fn every_value_of_the_document_is_escaped() {
        let hostile = "<script>alert(1)</script><img src=x>\"'&";
        let doc = json!({
            "info": {"title": hostile, "version": "1", "description": hostile},
            "tags": [{"name": "meta"}],
            "paths": {"/x": {"get": {
                "operationId": hostile,
                "tags": ["meta"],
                "summary": hostile,
                "description": format!("`{hostile}`"),
                "parameters": [{"name": hostile, "in": "query", "schema": {"enum": [hostile]}}],
                "responses": {"200": {"description": hostile, "content": {"application/json":
                    {"schema": {"$ref": format!("#/components/schemas/{hostile}")}}}}},
            }}},
            "components": {"schemas": {hostile: {"description": hostile, "properties": {
                hostile: {"type": "string", "description": hostile}}}}},
        });
        let page = render(&doc);
        assert!(!page.contains("<script"), "{page}");
        assert!(!page.contains("<img"), "{page}");
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x&gt;&quot;"));
    }
}
