//! docs/ against the code, so that the next drift fails CI: the error codes and their statuses
//! (`ErrorCode::ALL`), the conflict reasons (`ConflictReason::ALL`), every error body shown in
//! the docs, every JSON example (no key written twice), the endpoints and their abilities (the
//! OpenAPI document, built from the dispatch table), the documented limits and defaults
//! (`Config::default()`, the document's limits, `limits.rs` through its public re-exports), and
//! the sandbox's keys (the seed itself); `claims` checks the README's and the pages' other
//! machine-readable claims. (`commerce-core/src/limits.rs` checks the field limits of
//! orders.md and errors.md.)

#[path = "docs_truth/claims.rs"]
mod claims;
#[path = "docs_truth/json.rs"]
mod json;
#[path = "docs_truth/tables.rs"]
mod tables;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use commerce::operator::MAX_LIVE_KEYS;
use commerce::store::{MAX_PENDING_MANUAL, MAX_WEBHOOKS_PER_ACCOUNT, MemoryStore};
use commerce::webhooks::DispatcherConfig;
use commerce::{ConflictReason, Engine, ErrorCode, config::Config, hash_key, sandbox};
use serde_json::Value;

/// `docs/<name>`.
fn doc(name: &str) -> String {
    repo(&format!("docs/{name}"))
}

/// The repository's file `path`.
fn repo(path: &str) -> String {
    let path = format!("{}/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The pages an integrator reads: the README and every Markdown page of docs/, by name.
fn pages() -> Vec<(String, String)> {
    let dir = format!("{}/docs", env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![("README.md".to_owned(), repo("README.md"))];
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            let name = format!("docs/{}", path.file_name().unwrap().to_string_lossy());
            pages.push((name, std::fs::read_to_string(&path).unwrap()));
        }
    }
    pages.sort();
    pages
}

/// The OpenAPI document of an engine (every operation, the sandbox's included).
fn document() -> Value {
    Engine::new(Arc::new(MemoryStore::new())).openapi()
}

/// The rows of the first table of `text` whose header row starts with `header` (cells
/// trimmed, the header and separator rows left out).
fn table(text: &str, header: &[&str]) -> Vec<Vec<String>> {
    let cells = |line: &str| -> Vec<String> {
        line.trim()
            .trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_owned())
            .collect()
    };
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let wanted: Vec<String> = header.iter().map(|h| (*h).to_owned()).collect();
        if line.starts_with('|') && cells(line).starts_with(&wanted) {
            lines.next(); // |---|
            return lines
                .take_while(|l| l.starts_with('|'))
                .map(cells)
                .collect();
        }
    }
    panic!("no table with the header {header:?}");
}

/// The text between the first pair of backticks of `cell`.
fn code(cell: &str) -> &str {
    cell.split('`').nth(1).unwrap_or_default()
}

/// Every backticked word of `cell`.
fn codes(cell: &str) -> BTreeSet<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_error_codes_are_the_codes_of_the_code() {
    let rows = table(&doc("errors.md"), &["code", "HTTP"]);
    let documented: BTreeMap<&str, &str> =
        rows.iter().map(|r| (code(&r[0]), r[1].as_str())).collect();
    let actual: BTreeMap<&str, String> = ErrorCode::ALL
        .iter()
        .map(|c| (c.as_str(), c.status().as_u16().to_string()))
        .collect();
    let actual: BTreeMap<&str, &str> = actual.iter().map(|(k, v)| (*k, v.as_str())).collect();
    assert_eq!(documented, actual, "docs/errors.md's codes and statuses");
}

#[test]
fn the_conflict_reasons_are_the_reasons_of_the_code() {
    let errors = doc("errors.md");
    let rows = table(&errors, &["`reason`", "Endpoint"]);
    let documented: BTreeSet<&str> = rows.iter().map(|r| code(&r[0])).collect();
    let actual: BTreeSet<&str> = ConflictReason::ALL.iter().map(|r| r.as_str()).collect();
    assert_eq!(documented, actual, "docs/errors.md's conflict reasons");
    // A count of them in words, if the text gives one, is the table's.
    let words = [
        "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    ];
    for (n, word) in words.iter().enumerate() {
        if errors.contains(&format!("the {word} conflicts")) {
            assert_eq!(
                n + 2,
                actual.len(),
                "\"the {word} conflicts\" in docs/errors.md"
            );
        }
    }
    // The webhook limits the conflicts name.
    let limit = |reason: &str| rows.iter().find(|r| code(&r[0]) == reason).unwrap()[2].clone();
    assert!(limit("webhook_limit").contains(&format!("{MAX_WEBHOOKS_PER_ACCOUNT} webhooks")));
    assert!(limit("webhook_busy").contains(&format!("{MAX_PENDING_MANUAL} pings")));
    assert!(limit("key_limit").contains(&format!("{MAX_LIVE_KEYS} live keys")));
}

/// Every `{"error":{...}}` body written in docs/ is one the API can give: a known code, a
/// `request_id`, and on a 409 a known reason.
#[test]
fn every_error_body_in_the_docs_is_one_the_api_gives() {
    let codes: BTreeSet<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
    let reasons: BTreeSet<&str> = ConflictReason::ALL.iter().map(|r| r.as_str()).collect();
    let dir = format!("{}/docs", env!("CARGO_MANIFEST_DIR"));
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "md") {
            continue; // docs/onboarding/: the screenshots
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for (at, _) in text.match_indices("{\"error\":{") {
            let body = &text[at..];
            let end = body.find("}}").map_or(body.len(), |e| e + 2);
            let body = &body[..end];
            let what = format!("{}: {body}", path.display());
            let json: Value = match serde_json::from_str(body) {
                Ok(json) => json,
                // An example cut with `...` is checked by its pieces.
                Err(_) => Value::Null,
            };
            let error = &json["error"];
            let code = error["code"]
                .as_str()
                .or_else(|| body.split("\"code\":\"").nth(1)?.split('"').next())
                .unwrap_or_default();
            assert!(codes.contains(code), "unknown code in {what}");
            assert!(
                body.contains("\"request_id\":\""),
                "no request_id in {what}"
            );
            if code == "conflict" {
                let reason = body
                    .split("\"reason\":\"")
                    .nth(1)
                    .and_then(|r| r.split('"').next())
                    .unwrap_or_default();
                assert!(reasons.contains(reason), "no known reason in {what}");
            }
            seen += 1;
        }
    }
    assert!(seen >= 10, "only {seen} error bodies found");
}

/// Every JSON example of the pages parses (with its `...` elisions taken out) and no object in
/// it has a key written twice.
#[test]
fn every_json_example_parses_with_each_key_once() {
    let mut seen = 0;
    for (page, text) in pages() {
        for example in json::examples(&text) {
            let parsed = json::parse_unique(&json::without_elisions(&example.text));
            if let Err(error) = parsed {
                panic!("{page}:{}: {error}\n{}", example.line, example.text);
            }
            seen += 1;
        }
    }
    assert!(seen >= 30, "only {seen} JSON examples found");
}

/// The endpoint table of docs/README.md is the document's operations, with their abilities.
#[test]
fn the_endpoint_table_is_the_documents_operations() {
    let engine = Engine::new(Arc::new(MemoryStore::new()));
    let document = engine.openapi();
    let mut operations = BTreeMap::new();
    for (path, item) in document["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let ability = operation["x-ability"].as_str().map(str::to_owned);
            operations.insert(format!("{} {path}", method.to_uppercase()), ability);
        }
    }
    let readme = doc("README.md");
    let documented: BTreeMap<String, Option<String>> = table(&readme, &["Method and path"])
        .iter()
        .map(|r| {
            let ability = code(&r[1]);
            let ability = (!ability.is_empty()).then(|| ability.to_owned());
            (code(&r[0]).to_owned(), ability)
        })
        .collect();
    assert_eq!(
        documented, operations,
        "docs/README.md's endpoints and abilities"
    );
}

/// The documented limits and defaults are the code's.
#[test]
fn the_documented_limits_and_defaults_are_the_codes() {
    let config = Config::default();
    let (kib, order_kib) = (config.body_limit / 1024, config.order_body_limit / 1024);
    assert_eq!(
        (kib * 1024, order_kib * 1024),
        (config.body_limit, config.order_body_limit),
        "whole numbers of KiB"
    );
    let mentions = |file: &str, text: &str| {
        assert!(doc(file).contains(text), "docs/{file} should say {text:?}");
    };
    mentions(
        "README.md",
        &format!("at most {kib} KiB (the default; {order_kib} KiB for `POST /orders`"),
    );
    mentions(
        "errors.md",
        &format!("{kib} KiB ({order_kib} KiB for `POST /orders`) unless the platform set another"),
    );
    mentions(
        "authentication.md",
        &format!(
            "{kib} KiB,\n   {order_kib} KiB for `POST /orders`, unless the platform set another"
        ),
    );
    mentions(
        "bad-input.md",
        &format!(
            "`Config::order_body_limit` for `POST /orders`, {order_kib} KiB by default; `Config::body_limit` for every other endpoint, {kib} KiB by default"
        ),
    );
    let life = config.unknown_key_life.as_secs();
    mentions(
        "authentication.md",
        &format!(
            "remembered as unknown for {life} seconds (the most recent\n{}",
            {
                let n = config.unknown_keys;
                if n >= 1000 {
                    format!("{},{:03}", n / 1000, n % 1000)
                } else {
                    n.to_string()
                }
            }
        ),
    );
    mentions(
        "rate-limits.md",
        &format!(
            "**{}** unless\nthe platform changed it",
            config.default_rate_limit
        ),
    );
    mentions(
        "authentication.md",
        &format!(
            "({} unless the platform changed it)",
            config.default_rate_limit
        ),
    );
    mentions(
        "money-and-time.md",
        &format!("{} by default", config.commission_percent),
    );
    mentions(
        "orders.md",
        &format!("hold period ({} days by default)", config.hold_days),
    );
    mentions(
        "wallet.md",
        &format!(
            "({} by default)",
            commerce::money::money_string(config.withdrawal_minimum)
        ),
    );
    mentions(
        "idempotency.md",
        &format!(
            "{} hours from the first request (the default",
            config.idempotency_ttl.num_hours()
        ),
    );
    mentions(
        "webhooks.md",
        &format!("| webhooks per account | {MAX_WEBHOOKS_PER_ACCOUNT} |"),
    );
    mentions(
        "webhooks.md",
        &format!("| pings and redeliveries pending per webhook | {MAX_PENDING_MANUAL} |"),
    );
    // The dispatcher's limits in flight, as `DispatcherConfig::default()` sets them.
    let dispatcher = DispatcherConfig::default();
    mentions(
        "webhooks.md",
        &format!(
            "| requests at once per webhook | {} |",
            dispatcher.per_endpoint_in_flight
        ),
    );
    mentions(
        "webhooks.md",
        &format!(
            "| requests at once per account (all its webhooks) | {} |",
            dispatcher.per_account_in_flight
        ),
    );
    mentions(
        "webhooks.md",
        &format!(
            "At most {} at a time per webhook, {} per account.",
            dispatcher.per_endpoint_in_flight, dispatcher.per_account_in_flight
        ),
    );
    mentions(
        "webhooks.md",
        &format!(
            "last {} of its {} requests at once for accounts with fewer than {} in flight",
            dispatcher.reserved_in_flight,
            dispatcher.max_in_flight,
            dispatcher.reserved_per_account
        ),
    );
    // The limits the OpenAPI document states, as the docs state them.
    let engine = Engine::new(Arc::new(MemoryStore::new()));
    let document = engine.openapi();
    let parameter = |path: &str, method: &str, name: &str| -> Value {
        document["paths"][path][method]["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("{name} of {method} {path}"))["schema"]
            .clone()
    };
    let per_page = parameter("/api/v1/orders", "get", "per_page");
    mentions(
        "pagination.md",
        &format!(
            "| `per_page` | integer | 25 | 1 to {} |",
            per_page["maximum"]
        ),
    );
    let key = parameter("/api/v1/orders", "post", "Idempotency-Key");
    mentions(
        "idempotency.md",
        &format!("| Form | 1 to {} printable ASCII", key["maxLength"]),
    );
    // `Request-Id` constrains nothing in its schema (any value is accepted, an invalid one
    // replaced): its description names the bound.
    let described = document["paths"]["/api/v1/me"]["get"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "Request-Id")
        .and_then(|p| p["description"].as_str())
        .expect("Request-Id of GET /me, described");
    let max = described
        .split("1 to ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .expect("the Request-Id description names its bound");
    mentions(
        "errors.md",
        &format!("`Request-Id` header: 1 to {max} printable ASCII"),
    );
    // Every paged list of the document is named in pagination.md.
    let pages = doc("pagination.md");
    for (path, item) in document["paths"].as_object().unwrap() {
        let Some(get) = item.get("get") else { continue };
        let paged = get["parameters"]
            .as_array()
            .is_some_and(|p| p.iter().any(|p| p["name"] == "page"));
        let short = path.trim_start_matches("/api/v1");
        if paged {
            assert!(
                pages.contains(&format!("`GET {short}`")),
                "pagination.md does not name GET {short} among the paged lists"
            );
        }
    }
}

/// The sandbox key table of docs/sandbox.md is the seed: the same keys, sides, abilities and
/// rate limits; and `GET /me` in catalog.md shows `sk_demo_marketer`'s abilities.
#[tokio::test]
async fn the_sandbox_keys_are_the_seeds() {
    let engine = Engine::builder(Arc::new(MemoryStore::new()))
        .config(sandbox::config())
        .build()
        .unwrap();
    sandbox::seed(&engine).await.unwrap();
    let store = engine.store();
    let rows = table(&doc("sandbox.md"), &["Key", "Account", "Side", "Abilities"]);
    let documented: BTreeSet<&str> = rows.iter().map(|r| code(&r[0])).collect();
    let seeded: BTreeSet<&str> = sandbox::DEMO_KEYS.iter().map(|(k, _)| *k).collect();
    assert_eq!(documented, seeded, "docs/sandbox.md's keys");
    let mut marketer = None;
    for row in &rows {
        let plaintext = code(&row[0]);
        let key = store
            .key_by_hash(&hash_key(plaintext))
            .await
            .unwrap()
            .expect("a seeded key");
        let account = store.account(key.account_id).await.unwrap().unwrap();
        let abilities: BTreeSet<String> = key
            .abilities
            .iter()
            .map(|a| a.as_str().to_owned())
            .collect();
        assert_eq!(codes(&row[3]), abilities, "the abilities of {plaintext}");
        assert_eq!(row[2], account.side.as_str(), "the side of {plaintext}");
        let limited = row[4].contains("limit ");
        let default = engine.config().default_rate_limit;
        assert_eq!(
            limited,
            key.rate_limit != default,
            "the limit of {plaintext}"
        );
        if limited {
            let figure = key.rate_limit.to_string();
            let written = row[4].replace(',', "");
            assert!(
                written.contains(&figure),
                "{plaintext}: {} per minute",
                figure
            );
        }
        assert_eq!(
            row[4].contains("revoked"),
            key.revoked_at.is_some(),
            "{plaintext} revoked"
        );
        assert_eq!(
            row[4].contains("expired"),
            key.expires_at.is_some(),
            "{plaintext} expired"
        );
        if plaintext == "sk_demo_marketer" {
            marketer = Some(key.abilities.clone());
        }
    }
    let me = doc("catalog.md");
    let shown = me
        .split("\"abilities\":")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .map(|list| format!("{list}]"))
        .expect("GET /me's example");
    let shown: Vec<String> = serde_json::from_str(&shown).unwrap();
    let marketer: Vec<String> = marketer
        .unwrap()
        .iter()
        .map(|a| a.as_str().to_owned())
        .collect();
    assert_eq!(shown, marketer, "GET /me's example in docs/catalog.md");
}
