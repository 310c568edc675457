//! The OpenAPI document against the code: every route of the dispatch table is in it and
//! everything in it is served, and every answer the HTTP conformance suite receives (on
//! MemoryStore, through the bare engine) fits the document's schema for that operation and
//! status.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use bytes::Bytes;
use commerce_core::Engine;
use commerce_core::store::MemoryStore;
use commerce_core::testing::dispatch::{API_PREFIX, ROUTES, documented, resolve, route_of};
use commerce_core::testing::http::{Harness, HttpIntegration, build_request, run_case};
use http::{HeaderMap, Method, Request, Response, StatusCode};
use serde_json::Value;

fn document() -> &'static Value {
    commerce_core::testing::dispatch::document()
}

/// The operation object of `method template` (template under the API prefix).
fn operation(template: &str, method: &Method) -> Option<&'static Value> {
    document()["paths"]
        .get(format!("{API_PREFIX}{template}"))?
        .get(method.as_str().to_ascii_lowercase())
}

#[test]
fn every_route_and_ability_is_in_the_document() {
    let doc = document();
    assert_eq!(doc["openapi"], "3.1.0");
    for route in ROUTES {
        let endpoint = route.endpoint(&[1, 1]);
        if !documented(endpoint) {
            // A page for people (the reference page) is no operation of the API.
            assert!(
                operation(route.path, &route.method).is_none(),
                "{} {} is in the document",
                route.method,
                route.path
            );
            continue;
        }
        let op = operation(route.path, &route.method)
            .unwrap_or_else(|| panic!("{} {} is not in the document", route.method, route.path));
        assert_eq!(op["operationId"], endpoint.name(), "{}", route.path);
        match endpoint.ability() {
            Some(ability) => {
                assert_eq!(op["x-ability"], ability.as_str(), "{}", route.path);
                let description = op["description"].as_str().unwrap_or_default();
                assert!(description.contains(ability.as_str()), "{description}");
            }
            None => assert_eq!(op["x-ability"], Value::Null, "{}", route.path),
        }
        let responses = op["responses"].as_object().expect("responses");
        assert!(
            responses.keys().any(|s| s.starts_with('2')),
            "{}: no success answer",
            route.path
        );
        if endpoint.needs_key() {
            for status in ["401", "403", "413", "429"] {
                assert!(
                    responses.contains_key(status),
                    "{} lacks {status}",
                    route.path
                );
            }
            assert!(
                op.get("security").is_none(),
                "the document's bearer security applies"
            );
        } else {
            assert_eq!(op["security"], serde_json::json!([]), "{}", route.path);
            assert!(!responses.contains_key("401"));
        }
    }
    assert_eq!(
        doc["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );
}

#[test]
fn every_operation_in_the_document_is_served() {
    let paths = document()["paths"].as_object().expect("paths");
    let mut operations = 0;
    for (path, item) in paths {
        for method in item.as_object().expect("a path item").keys() {
            let method: Method = method.to_ascii_uppercase().parse().expect("a method");
            let concrete: String = path
                .split('/')
                .map(|s| if s.starts_with('{') { "7" } else { s })
                .collect::<Vec<_>>()
                .join("/");
            assert!(
                resolve(&method, &concrete, true).is_ok(),
                "{method} {path} is in the document but the engine does not serve it"
            );
            // Tagged `sandbox` exactly when only the test mode serves it.
            let sandbox_only = item[method.as_str().to_ascii_lowercase()]["tags"]
                == serde_json::json!(["sandbox"]);
            assert_eq!(
                resolve(&method, &concrete, false).is_err(),
                sandbox_only,
                "{method} {path}: tagged sandbox iff a production engine does not serve it"
            );
            let (route, ids) = route_of(&method, &concrete).expect("a route");
            assert_eq!(format!("{API_PREFIX}{}", route.path), *path);
            assert!(ids.iter().all(|id| *id == 7));
            operations += 1;
        }
    }
    let documented_routes = ROUTES
        .iter()
        .filter(|route| documented(route.endpoint(&[1, 1])))
        .count();
    assert_eq!(operations, documented_routes);
    assert_eq!(
        ROUTES.len() - documented_routes,
        1,
        "only the reference page"
    );
}

#[test]
fn the_document_names_the_contract_details() {
    let doc = document();
    let schemas = &doc["components"]["schemas"];
    assert_eq!(schemas["Money"]["pattern"], r"^[0-9]+\.[0-9]{2}$");
    // Every answer of every operation names `Request-Id`; every error body `request_id`.
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            for (status, response) in op["responses"].as_object().unwrap() {
                assert_eq!(
                    response["headers"]["Request-Id"]["required"], true,
                    "{method} {path} {status}"
                );
            }
            assert!(
                op["parameters"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|p| p["name"] == "Request-Id" && p["in"] == "header"),
                "{method} {path}"
            );
        }
    }
    assert!(
        schemas["Error"]["properties"]["error"]["required"]
            .as_array()
            .unwrap()
            .contains(&Value::from("request_id"))
    );
    assert!(
        schemas["Timestamp"]["pattern"]
            .as_str()
            .unwrap()
            .ends_with(r"\+0[23]:00$")
    );
    assert_eq!(
        schemas["Family"]["enum"],
        serde_json::json!([
            "pending",
            "confirmed",
            "shipping",
            "delivered",
            "returned",
            "cancelled",
            "archived"
        ])
    );
    let create = operation("/orders", &Method::POST).unwrap();
    let key = create["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "Idempotency-Key")
        .expect("the Idempotency-Key header");
    assert_eq!(key["in"], "header");
    assert_eq!(key["schema"]["maxLength"], 100);
    let created = &create["responses"]["201"];
    for header in ["Location", "Idempotent-Replayed", "X-RateLimit-Limit"] {
        assert_eq!(created["headers"][header]["required"], true, "{header}");
    }
    assert_eq!(created["links"]["GetOrder"]["operationId"], "orders.show");
    assert_eq!(
        create["responses"]["429"]["headers"]["Retry-After"]["required"],
        true
    );
    let per_page = operation("/orders", &Method::GET).unwrap()["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "per_page")
        .unwrap()
        .clone();
    assert_eq!(
        (
            &per_page["schema"]["minimum"],
            &per_page["schema"]["maximum"]
        ),
        (&Value::from(1), &Value::from(100))
    );
    let order = &schemas["OrderRequest"]["properties"];
    assert_eq!(order["full_name"]["maxLength"], 255);
    assert_eq!(order["lines"]["maxItems"], 100);
    for event in [
        "order.created",
        "order.status_changed",
        "catalog.changed",
        "quote.updated",
        "withdrawal.updated",
        "ping",
    ] {
        let post = &doc["webhooks"][event]["post"];
        let schema = post["requestBody"]["content"]["application/json"]["schema"]["$ref"]
            .as_str()
            .expect("a payload schema");
        let name = schema.trim_start_matches("#/components/schemas/");
        let payload = &schemas[name];
        assert!(payload.is_object(), "{event}: {name}");
        let kind = &payload["properties"]["type"];
        assert!(
            kind["const"] == event
                || kind["enum"]
                    .as_array()
                    .is_some_and(|e| e.contains(&event.into())),
            "{event}: {kind}"
        );
    }
}

#[tokio::test]
async fn the_document_is_served_without_a_key_and_counts_toward_no_limit() {
    let engine = Engine::new(Arc::new(MemoryStore::new()));
    commerce_core::sandbox::seed(&engine)
        .await
        .expect("the sandbox seeds");
    for _ in 0..8 {
        let request = build_request(Method::GET, None, "/api/v1/openapi.json", "", &[]);
        let response = engine.handle(request).await;
        assert_eq!(response.status(), StatusCode::OK);
        assert!(response.headers().get("x-ratelimit-limit").is_none());
        let body: Value = serde_json::from_slice(response.body()).expect("JSON");
        assert_eq!(body, engine.openapi());
    }
    // A key limited to 5 requests a minute has all of them left.
    let me = build_request(Method::GET, Some("sk_demo_limited"), "/api/v1/me", "", &[]);
    let response = engine.handle(me).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["x-ratelimit-remaining"], "4");
    // A wrong method on it is still a 405.
    let post = build_request(Method::POST, None, "/api/v1/openapi.json", "", &[]);
    assert_eq!(
        engine.handle(post).await.status(),
        StatusCode::METHOD_NOT_ALLOWED
    );
}

/// The text maud writes for `text`: `&`, `<`, `>` and `"` escaped.
fn escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `GET /api/v1/docs`: the document as one HTML page, without a key, with an article for every
/// operation (its method and path, summary, parameters and answer statuses), and nothing
/// loaded from anywhere: no script, stylesheet, image or frame, and links only inside the page
/// and to the document.
#[tokio::test]
async fn the_reference_page_shows_every_operation_and_loads_nothing() {
    let engine = Engine::new(Arc::new(MemoryStore::new()));
    let request = build_request(Method::GET, None, "/api/v1/docs", "", &[]);
    let response = engine.handle(request).await;
    assert_eq!(response.status(), StatusCode::OK);
    let headers = response.headers();
    assert_eq!(headers["content-type"], "text/html; charset=utf-8");
    let policy = headers["content-security-policy"].to_str().expect("ASCII");
    assert!(policy.starts_with("default-src 'none';"), "{policy}");
    assert!(!policy.contains("http"), "{policy}");
    assert_eq!(headers["x-content-type-options"], "nosniff");
    assert_eq!(headers["x-frame-options"], "DENY");
    assert!(
        headers.get("x-ratelimit-limit").is_none(),
        "no key, no limit"
    );
    let page = std::str::from_utf8(response.body()).expect("UTF-8");
    assert!(page.starts_with("<!DOCTYPE html>"));

    let mut operations = 0;
    for (path, item) in document()["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().expect("a path item") {
            let id = op["operationId"].as_str().expect("an operationId");
            let start = page
                .find(&format!("<article id=\"{id}\">"))
                .unwrap_or_else(|| panic!("no article for {id}"));
            let end = start + page[start..].find("</article>").expect("its end");
            let article = &page[start..end];
            let heading = format!(
                "{}</span> <code>{}</code>",
                method.to_ascii_uppercase(),
                escaped(path)
            );
            assert!(article.contains(&heading), "{id}: no {heading}");
            let summary = op["summary"].as_str().expect("a summary");
            assert!(article.contains(&escaped(summary)), "{id}: no {summary}");
            for parameter in op["parameters"].as_array().into_iter().flatten() {
                let name = format!("<code>{}</code>", parameter["name"].as_str().unwrap());
                assert!(article.contains(&name), "{id}: no parameter {name}");
            }
            for status in op["responses"].as_object().expect("responses").keys() {
                let cell = format!("<td><code>{status}</code></td>");
                assert!(article.contains(&cell), "{id}: no answer {status}");
            }
            if op.get("requestBody").is_some() {
                assert!(article.contains("Request body"), "{id}: no request body");
            }
            operations += 1;
        }
    }
    assert!(operations > 20, "{operations}");
    // One article per operation (the events and schemas have prefixed ids).
    let articles = page.matches("<article id=\"").count();
    let others = page.matches("<article id=\"webhook-").count()
        + page.matches("<article id=\"schema-").count();
    assert_eq!(articles - others, operations);
    // A request body's fields are listed, nested ones with dotted names.
    assert!(page.contains("<code>lines[].variant_id</code>"));

    // Self-contained: nothing to fetch, every link inside the page or to the document.
    for asset in [
        "<script", "<link", "<img", "<iframe", "src=", "url(", "@import",
    ] {
        assert!(!page.contains(asset), "the page loads {asset}");
    }
    for link in page.split("href=\"").skip(1) {
        let target = &link[..link.find('"').expect("a closed attribute")];
        assert!(
            target.starts_with('#') || target == "openapi.json",
            "a link out of the page: {target}"
        );
        if let Some(anchor) = target.strip_prefix('#') {
            assert!(
                page.contains(&format!(" id=\"{anchor}\"")),
                "a link to nothing: {target}"
            );
        }
    }
    // Not an operation of the API, and a wrong method on it is a 405.
    assert!(document()["paths"].get("/api/v1/docs").is_none());
    let post = build_request(Method::POST, None, "/api/v1/docs", "", &[]);
    assert_eq!(
        engine.handle(post).await.status(),
        StatusCode::METHOD_NOT_ALLOWED
    );
}

/// One answer the suite received.
struct Seen {
    method: Method,
    path: String,
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

/// The bare engine, recording every answer.
struct Recorder {
    engine: Engine,
    seen: Arc<Mutex<Vec<Seen>>>,
}

#[async_trait]
impl HttpIntegration for Recorder {
    async fn send(&self, request: Request<Bytes>) -> Response<Bytes> {
        let (method, path) = (request.method().clone(), request.uri().path().to_owned());
        let response = self.engine.handle(request).await;
        self.seen.lock().unwrap().push(Seen {
            method,
            path,
            status: response.status(),
            headers: response.headers().clone(),
            body: response.body().clone(),
        });
        response
    }
}

/// Validators by the JSON pointer of their schema in the document.
#[derive(Default)]
struct Validators(HashMap<String, jsonschema::Validator>);

impl Validators {
    fn get(&mut self, pointer: &str) -> &jsonschema::Validator {
        self.0.entry(pointer.to_owned()).or_insert_with(|| {
            let doc = document();
            let mut schema = doc
                .pointer(pointer)
                .unwrap_or_else(|| panic!("no schema at {pointer}"))
                .clone();
            schema["components"] = doc["components"].clone();
            jsonschema::draft202012::new(&schema).expect("a valid JSON Schema")
        })
    }
}

fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// The mismatches between one answer and the document.
fn check(seen: &Seen, validators: &mut Validators) -> Vec<String> {
    let what = format!("{} {} -> {}", seen.method, seen.path, seen.status);
    let status = seen.status.as_str();
    let (pointer, headers) = match route_of(&seen.method, &seen.path) {
        Some((route, _)) => {
            let method = if seen.method == Method::HEAD {
                Method::GET
            } else {
                seen.method.clone()
            };
            let base = format!(
                "/paths/{}/{}/responses/{status}",
                escape(&format!("{API_PREFIX}{}", route.path)),
                method.as_str().to_ascii_lowercase()
            );
            let Some(response) = document().pointer(&base) else {
                return vec![format!("{what}: status not documented for this operation")];
            };
            (
                format!("{base}/content/application~1json/schema"),
                response.get("headers"),
            )
        }
        // 404 and 405 of paths and methods the engine does not serve.
        None => ("/components/schemas/Error".to_owned(), None),
    };
    let mut problems = Vec::new();
    for name in headers
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|h| h.keys())
    {
        if !seen.headers.contains_key(name.as_str()) {
            problems.push(format!("{what}: header {name} missing"));
        }
    }
    if seen.method == Method::HEAD {
        return problems;
    }
    if document().pointer(&pointer).is_none() {
        if !seen.body.is_empty() {
            problems.push(format!("{what}: a body where the document has none"));
        }
        return problems;
    }
    let Ok(body) = serde_json::from_slice::<Value>(&seen.body) else {
        problems.push(format!("{what}: the body is not JSON"));
        return problems;
    };
    let validator = validators.get(&pointer);
    for error in validator.iter_errors(&body) {
        problems.push(format!(
            "{what}: {error} at {} (schema {})",
            error.instance_path(),
            error.schema_path()
        ));
    }
    problems
}

/// Runs one conformance case through the recorder, then checks every answer it received.
async fn check_case<F, Fut>(case: F)
where
    F: FnOnce(Arc<Harness>) -> Fut,
    Fut: Future<Output = ()>,
{
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let harness = Harness::new(Arc::new(MemoryStore::new()), move |engine| {
        Arc::new(Recorder {
            engine,
            seen: log.clone(),
        })
    })
    .await;
    run_case(harness, case).await;
    // A case that drives the operator API only sends nothing to check.
    let seen = std::mem::take(&mut *seen.lock().unwrap());
    let mut validators = Validators::default();
    let problems: Vec<String> = seen
        .iter()
        .flat_map(|s| check(s, &mut validators))
        .collect();
    assert!(
        problems.is_empty(),
        "{} of {} answers do not fit the document:\n{}",
        problems.len(),
        seen.len(),
        problems.join("\n")
    );
}

/// One test per HTTP conformance case, its answers checked against the document.
macro_rules! answers_fit_the_document {
    ([$(($module:ident :: $case:ident)),* $(,)?]) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $case() {
                check_case(|harness| async move {
                    commerce_core::testing::http::$case(&harness).await
                })
                .await;
            }
        )*
    };
}
commerce_core::for_each_http_case!([answers_fit_the_document]);

#[tokio::test]
async fn an_answer_off_the_document_is_caught() {
    let engine = Engine::new(Arc::new(MemoryStore::new()));
    commerce_core::sandbox::seed(&engine)
        .await
        .expect("the sandbox seeds");
    let request = build_request(Method::GET, Some("sk_demo_marketer"), "/api/v1/me", "", &[]);
    let response = engine.handle(request).await;
    let mut seen = Seen {
        method: Method::GET,
        path: "/api/v1/me".into(),
        status: response.status(),
        headers: response.headers().clone(),
        body: response.body().clone(),
    };
    let mut validators = Validators::default();
    assert_eq!(check(&seen, &mut validators), Vec::<String>::new());
    let good: Value = serde_json::from_slice(&seen.body).unwrap();
    for (pointer, wrong) in [
        ("/data/side", Value::from("admin")),
        (
            "/data/token/expires_at",
            Value::from("2026-11-22T10:00:00Z"),
        ),
        ("/data/token/abilities", serde_json::json!(["root"])),
        ("/data/id", Value::from(0)),
    ] {
        let mut body = good.clone();
        *body.pointer_mut(pointer).expect(pointer) = wrong;
        seen.body = serde_json::to_vec(&body).unwrap().into();
        assert_eq!(check(&seen, &mut validators).len(), 1, "{pointer}");
    }
    let mut body = good.clone();
    body["data"].as_object_mut().unwrap().remove("store_name");
    seen.body = serde_json::to_vec(&body).unwrap().into();
    assert_eq!(
        check(&seen, &mut validators).len(),
        1,
        "a required field left out"
    );
    seen.headers.remove("x-ratelimit-limit");
    seen.body = serde_json::to_vec(&good).unwrap().into();
    assert_eq!(check(&seen, &mut validators).len(), 1, "a header left out");
    seen.status = StatusCode::CONFLICT;
    assert_eq!(
        check(&seen, &mut validators).len(),
        1,
        "an undocumented status"
    );
}

#[tokio::test]
async fn money_and_timestamps_of_real_orders_fit_their_patterns() {
    let harness = Harness::bare(Arc::new(MemoryStore::new())).await;
    let body = harness.order_body(1, "12.5");
    let created = harness
        .post("sk_demo_marketer", "/api/v1/orders", &body)
        .await;
    assert_eq!(created.status, StatusCode::CREATED);
    let order = created.json();
    let money = regex_like(r"^[0-9]+\.[0-9]{2}$");
    assert!(
        money(&order["data"]["totals"]["profit"]),
        "{}",
        order["data"]["totals"]
    );
    assert_eq!(order["data"]["totals"]["profit"], "12.50");
    let mut validators = Validators::default();
    let seen = Seen {
        method: Method::POST,
        path: "/api/v1/orders".into(),
        status: created.status,
        headers: created.headers.clone(),
        body: created.body.clone(),
    };
    assert_eq!(check(&seen, &mut validators), Vec::<String>::new());
}

/// The phone pattern of the document takes what the server takes: spaces and dashes anywhere,
/// `+20` and `0020` for the leading `0`; and refuses what it refuses.
#[test]
fn the_phone_pattern_is_the_servers_rule() {
    use commerce_core::domain::fields::normalize_phone;
    let doc = document();
    let phone = &doc["components"]["schemas"]["OrderRequest"]["properties"]["phone"]["pattern"];
    let matches = regex_like(phone.as_str().expect("a phone pattern"));
    for (typed, accepted) in [
        ("01001234567", true),
        ("0100 123 4567", true),
        ("+20-100-123-4567", true),
        ("0020 100 123 4567", true),
        ("+20 1001234567", true),
        (" 0100-123-4567 ", true),
        ("0200 123 4567", false),
        ("0100123456", false),
        ("010012345678", false),
        ("+2001001234567", false),
        ("0100.123.4567", false),
    ] {
        assert_eq!(
            normalize_phone(typed).is_some(),
            accepted,
            "server: {typed:?}"
        );
        assert_eq!(matches(&Value::from(typed)), accepted, "pattern: {typed:?}");
    }
}

/// A matcher for one pattern, through the validator (the same regex engine as the checks).
fn regex_like(pattern: &str) -> impl Fn(&Value) -> bool {
    let validator =
        jsonschema::draft202012::new(&serde_json::json!({"type": "string", "pattern": pattern}))
            .expect("a valid schema");
    move |value| validator.is_valid(value)
}

#[test]
fn every_conflict_reason_and_the_webhook_abilities_are_in_the_document() {
    use commerce_core::ConflictReason;
    let doc = document();
    let reasons: Vec<&str> = ConflictReason::ALL.iter().map(|r| r.as_str()).collect();
    assert_eq!(
        doc["components"]["schemas"]["Error"]["properties"]["error"]["properties"]["reason"]["enum"],
        serde_json::json!(reasons)
    );
    let reasons_of = |template: &str| {
        let op = operation(template, &Method::POST).expect("an operation");
        op["responses"]["409"]["content"]["application/json"]["schema"]["allOf"][1]["properties"]
            ["error"]["properties"]["reason"]["enum"]
            .clone()
    };
    assert_eq!(
        reasons_of("/orders"),
        serde_json::json!([
            "duplicate_external_reference",
            "idempotency_key_reused",
            "idempotency_in_progress",
            "catalogue_changed"
        ])
    );
    assert_eq!(
        reasons_of("/orders/{id}/cancel"),
        serde_json::json!(["not_cancellable"])
    );
    assert_eq!(
        reasons_of("/webhooks"),
        serde_json::json!(["webhook_limit"])
    );
    for template in [
        "/webhooks/{id}/ping",
        "/webhooks/{id}/deliveries/{delivery_id}/redeliver",
    ] {
        assert_eq!(
            reasons_of(template),
            serde_json::json!(["webhook_disabled", "webhook_busy"]),
            "{template}"
        );
    }
    let redeliver = operation(
        "/webhooks/{id}/deliveries/{delivery_id}/redeliver",
        &Method::POST,
    )
    .expect("redeliver");
    assert_eq!(
        redeliver["x-abilities"],
        serde_json::json!(["webhooks:manage"])
    );
    for (template, method) in [
        ("/webhooks", Method::POST),
        ("/webhooks/{id}", Method::PATCH),
        (
            "/webhooks/{id}/deliveries/{delivery_id}/redeliver",
            Method::POST,
        ),
    ] {
        let op = operation(template, &method).expect("an operation");
        assert!(
            op["description"]
                .as_str()
                .unwrap_or_default()
                .contains("orders:read"),
            "{template}"
        );
        assert!(op["responses"].get("403").is_some());
    }
}
