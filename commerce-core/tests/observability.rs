//! What the engine tells a `tracing` subscriber about real requests against the sandbox: the
//! request span and its fields, store operations as its children, the events of order and
//! withdrawal moves, and never a key, a phone, a name or an address.
//!
//! One test in this file, on purpose: `tracing` caches whether a callsite is wanted, and a
//! test running the engine on another thread without the capturing subscriber could race with
//! it (the metrics test lives in `metrics.rs`, a process of its own).

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use commerce_core::domain::webhooks::WebhookInput;
use commerce_core::model::NewWithdrawal;
use commerce_core::model::OrderStatus;
use commerce_core::store::MemoryStore;
use commerce_core::testing::http::receiver::Receiver;
use commerce_core::{Engine, sandbox};
use http::{Request, Response};
use rust_decimal::Decimal;
use serde_json::{Value, json};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::{LookupSpan, Registry};

/// Fields by name, every value as text.
type Fields = BTreeMap<String, String>;

/// One span as created, with the fields recorded later.
#[derive(Debug, Clone)]
struct SpanRecord {
    name: &'static str,
    /// Index of the parent in the captured spans.
    parent: Option<usize>,
    fields: Fields,
}

/// One event, with the span it happened in.
#[derive(Debug, Clone)]
struct EventRecord {
    /// Index of its span in the captured spans.
    span: Option<usize>,
    fields: Fields,
}

#[derive(Debug, Default)]
struct Captured {
    spans: Vec<SpanRecord>,
    /// Live span id → index in `spans` (the registry reuses ids of closed spans).
    live: BTreeMap<u64, usize>,
    events: Vec<EventRecord>,
}

/// A layer that keeps every span's and event's fields.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Captured>>);

struct Visitor<'a>(&'a mut Fields);

impl Visit for Visitor<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Capture {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = Fields::new();
        attrs.record(&mut Visitor(&mut fields));
        let parent_id = ctx
            .span(id)
            .and_then(|span| span.parent())
            .map(|parent| parent.id().into_u64());
        let mut captured = self.0.lock().unwrap();
        let parent = parent_id.and_then(|p| captured.live.get(&p).copied());
        captured.spans.push(SpanRecord {
            name: attrs.metadata().name(),
            parent,
            fields,
        });
        let index = captured.spans.len() - 1;
        captured.live.insert(id.into_u64(), index);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _ctx: Context<'_, S>) {
        let mut captured = self.0.lock().unwrap();
        let index = captured.live[&id.into_u64()];
        values.record(&mut Visitor(&mut captured.spans[index].fields));
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let mut fields = Fields::new();
        event.record(&mut Visitor(&mut fields));
        let span_id = ctx.event_span(event).map(|span| span.id().into_u64());
        let mut captured = self.0.lock().unwrap();
        let span = span_id.and_then(|s| captured.live.get(&s).copied());
        captured.events.push(EventRecord { span, fields });
    }

    fn on_close(&self, id: Id, _ctx: Context<'_, S>) {
        self.0.lock().unwrap().live.remove(&id.into_u64());
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

const KEY: &str = "sk_demo_marketer";
const PHONE: &str = "+201112223334";
const PHONE_DIGITS: &str = "1112223334";
const NAME: &str = "سارة حسن";
const ADDRESS: &str = "12 شارع النصر، مدينة نصر";

fn request(method: &str, uri: &str, body: Option<Value>) -> Request<Bytes> {
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let method = method.parse().expect("method");
    commerce_core::testing::http::build_request(method, Some(KEY), uri, body, &[])
}

fn json_of(response: &Response<Bytes>) -> Value {
    serde_json::from_slice(response.body()).expect("json body")
}

/// Seeds the sandbox, then GET /me, POST /orders (with an `Idempotency-Key`, twice: the second
/// is a replay), POST /orders/{id}/cancel, a 404, and a withdrawal request the platform rejects.
async fn scenario() -> (sandbox::Sandbox, Vec<String>) {
    let engine = Engine::builder(Arc::new(MemoryStore::new()))
        .config(sandbox::config())
        .build()
        .expect("valid settings");
    let fixture = sandbox::seed(&engine).await.expect("sandbox seeds");
    let receiver = Receiver::start().await;
    let hook = engine
        .operator()
        .create_webhook(fixture.marketer_a, WebhookInput::url(&receiver.url))
        .await
        .expect("a webhook endpoint");

    let me = engine.handle(request("GET", "/api/v1/me", None)).await;
    assert_eq!(me.status(), 200);

    let order = json!({
        "full_name": NAME,
        "phone": PHONE,
        "address": ADDRESS,
        "governorate_id": fixture.cairo,
        "shipping_option_id": fixture.standard_shipping,
        "lines": [{"variant_id": fixture.plain_variant, "quantity": 1, "profit": "40.00"}],
    });
    let mut create = request(
        "POST",
        "/api/v1/orders?note=secret-query",
        Some(order.clone()),
    );
    create
        .headers_mut()
        .insert("idempotency-key", "obs-1".parse().unwrap());
    let created = engine.handle(create).await;
    assert_eq!(created.status(), 201, "{:?}", json_of(&created));
    let id = json_of(&created)["data"]["id"].as_i64().expect("order id");
    let mut again = request("POST", "/api/v1/orders", Some(order));
    again
        .headers_mut()
        .insert("idempotency-key", "obs-1".parse().unwrap());
    assert_eq!(engine.handle(again).await.status(), 201);

    let cancel = engine
        .handle(request(
            "POST",
            &format!("/api/v1/orders/{id}/cancel"),
            Some(json!({"reason_note": "customer changed mind"})),
        ))
        .await;
    assert_eq!(cancel.status(), 200, "{:?}", json_of(&cancel));
    assert_eq!(
        json_of(&cancel)["data"]["status"]["key"],
        OrderStatus::RejectedByMarketer.as_str()
    );

    let missing = engine.handle(request("GET", "/api/v1/nope/42", None)).await;
    assert_eq!(missing.status(), 404);

    let operator = engine.operator();
    let withdrawal = operator
        .request_withdrawal(
            NewWithdrawal::builder()
                .account_id(fixture.marketer_a)
                .amount(Decimal::new(10_000, 2))
                .wallet_number("01099887766".to_owned())
                .wallet_description("wallet".to_owned())
                .build(),
        )
        .await
        .expect("withdrawal requested");
    operator
        .reject_withdrawal(withdrawal.id, Some("no".into()))
        .await
        .expect("withdrawal rejected");
    // The two order events and the withdrawal's decision, sent to the receiver: an order's
    // events go one at a time, so it takes passes until none is due.
    let dispatcher = engine.dispatcher();
    let mut sent = 0;
    for _ in 0..8 {
        let pass = dispatcher.deliver_due().await.expect("a pass");
        if pass == 0 {
            break;
        }
        sent += pass;
    }
    assert_eq!(sent, 3);
    assert_eq!(receiver.received().len(), 3);
    (
        fixture,
        vec![hook.secret.expose().to_owned(), receiver.url.clone()],
    )
}

#[test]
fn requests_are_spans_with_store_children_and_nothing_secret() {
    let capture = Capture::default();
    let subscriber = Registry::default().with(capture.clone());
    let (fixture, webhook_secrets) = {
        let _guard = tracing::subscriber::set_default(subscriber);
        runtime().block_on(scenario())
    };
    let captured = capture.0.lock().unwrap();
    let spans = &captured.spans;
    let events = &captured.events;
    let account = fixture.marketer_a.to_string();

    let requests: Vec<(usize, &SpanRecord)> = spans
        .iter()
        .enumerate()
        .filter(|(_, s)| s.name == "commerce.request")
        .collect();
    let endpoints: Vec<&str> = requests
        .iter()
        .map(|(_, s)| s.fields["endpoint"].as_str())
        .collect();
    assert_eq!(
        endpoints,
        [
            "me.show",
            "orders.create",
            "orders.create",
            "orders.cancel",
            "unmatched"
        ]
    );
    let statuses: Vec<&str> = requests
        .iter()
        .map(|(_, s)| s.fields["status"].as_str())
        .collect();
    assert_eq!(statuses, ["200", "201", "201", "200", "404"]);
    // Every request's span records its id, the one its answer's `Request-Id` carries.
    for (_, span) in &requests {
        let id = span.fields["request_id"].as_str();
        assert!(
            id.strip_prefix("req_").is_some_and(|tail| tail.len() == 24),
            "{span:?}"
        );
    }
    for (_, span) in &requests[..4] {
        assert_eq!(span.fields["account_id"], account, "{span:?}");
        assert!(span.fields["key_id"].parse::<i64>().is_ok(), "{span:?}");
        assert!(span.fields["latency_ms"].parse::<f64>().is_ok(), "{span:?}");
    }
    assert_eq!(requests[1].1.fields["method"], "POST");
    // A request that matched no route never reached the key.
    assert!(!requests[4].1.fields.contains_key("account_id"));

    // Store operations are children of their request's span.
    let children = |request: usize| -> Vec<String> {
        spans
            .iter()
            .filter(|s| s.name == "commerce.store" && s.parent == Some(request))
            .map(|s| format!("{}.{}", s.fields["concern"], s.fields["operation"]))
            .collect()
    };
    assert_eq!(children(requests[0].0), ["accounts.authenticate"]);
    let create = children(requests[1].0);
    for op in [
        "accounts.authenticate",
        "idempotency.begin_idempotent",
        "orders.place_order",
        "idempotency.finish_idempotent",
    ] {
        assert!(create.contains(&op.to_owned()), "{op} in {create:?}");
    }
    assert!(children(requests[3].0).contains(&"orders.change_order_status".to_owned()));
    assert!(children(requests[4].0).is_empty());
    // The operator's store operations are spans too, with no request above them.
    assert!(spans.iter().any(|s| s.name == "commerce.store"
        && s.fields["operation"] == "decide_withdrawal"
        && s.parent.is_none()));

    // Events: the order placed and cancelled inside their requests, the withdrawals.
    let event = |message: &str| -> Vec<&EventRecord> {
        events
            .iter()
            .filter(|e| e.fields.get("message").is_some_and(|m| m == message))
            .collect()
    };
    let placed = event("order placed");
    let in_create = placed
        .iter()
        .find(|e| e.span.is_some_and(|s| s == requests[1].0))
        .expect("order placed inside POST /orders");
    assert_eq!(in_create.fields["account_id"], account);
    let moved = event("order moved");
    let cancelled = moved
        .iter()
        .find(|e| e.fields["by"] == "api")
        .expect("the API's cancel");
    assert_eq!(cancelled.span, Some(requests[3].0));
    assert_eq!(cancelled.fields["from"], "order_pending");
    assert_eq!(cancelled.fields["to"], "rejected_by_Marketer");
    assert!(moved.iter().any(|e| e.fields["by"] == "platform"
        && e.fields["to"] == "order_delivered"
        && e.fields["from"] == "order_shipped"));
    assert!(!event("withdrawal requested").is_empty());
    let decided: Vec<&str> = event("withdrawal decided")
        .iter()
        .map(|e| e.fields["status"].as_str())
        .collect();
    assert_eq!(decided, ["completed", "rejected"]);
    assert_eq!(event("withdrawal decided")[1].fields["amount"], "100.00");

    // Each webhook attempt is a span with its delivery, endpoint, type and answer.
    let attempts: Vec<(&str, &str)> = spans
        .iter()
        .filter(|s| s.name == "commerce.webhook")
        .map(|s| (s.fields["event_type"].as_str(), s.fields["status"].as_str()))
        .collect();
    let mut attempts = attempts;
    attempts.sort_unstable();
    assert_eq!(
        attempts,
        [
            ("order.created", "204"),
            ("order.status_changed", "204"),
            ("withdrawal.updated", "204"),
        ]
    );

    // Nothing secret anywhere: no key, phone (the customer's or a wallet's), name, address,
    // reason or query string, webhook secret or receiver URL.
    let all = spans
        .iter()
        .flat_map(|s| s.fields.values())
        .chain(events.iter().flat_map(|e| e.fields.values()));
    let mut seen = 0;
    for value in all {
        seen += 1;
        for secret in [
            KEY,
            PHONE_DIGITS,
            "01012345678",
            "01099887766",
            NAME,
            "شارع",
            "customer changed mind",
            "secret-query",
            "/api/v1",
        ]
        .into_iter()
        .chain(webhook_secrets.iter().map(String::as_str))
        {
            assert!(!value.contains(secret), "{secret:?} recorded in {value:?}");
        }
    }
    assert!(seen > 100, "{seen} values recorded");
}
