//! The schemas written by hand: the error body, the wallet, the request bodies (from the limits
//! the readers use) and the webhook events.

use serde_json::{Map, Value, json};

use crate::error::{ConflictReason, ErrorCode};
use crate::limits::{
    MAX_CLOCK_ADVANCE_SECONDS, MAX_DESCRIPTION, MAX_LINES, MAX_NOTE, MAX_PHONE, MAX_QUANTITY,
    MAX_QUOTE_NOTE, MAX_QUOTE_QUANTITY, MAX_QUOTE_UNIT_PRICE, MAX_REASON, MAX_REFERENCE,
    MAX_REQUEST_ID, MAX_TEXT, MAX_URL, MAX_WARRANTIES,
};
use crate::model::*;
use crate::money::MAX_AMOUNT;

use super::{
    BLANK, EVENT_ID, JSON, MONEY_INPUT, MULTI_LINE, MULTI_LINE_FILLED, OPTIONAL_PHONE, PHONE,
    SINGLE_LINE, SINGLE_LINE_FILLED, TIMESTAMP_INPUT,
};

fn enum_of<T: Copy>(values: &[T], as_str: fn(T) -> &'static str) -> Value {
    json!({"type": "string", "enum": values.iter().map(|v| as_str(*v)).collect::<Vec<_>>()})
}

fn nullable(schema: Value) -> Value {
    json!({"oneOf": [schema, {"type": "null"}]})
}

fn text(pattern: &str, max: usize) -> Value {
    json!({"type": "string", "maxLength": max, "pattern": pattern})
}

fn optional_text(pattern: &str, max: usize) -> Value {
    // Blank is taken as left out, however long.
    nullable(json!({"anyOf": [{"type": "string", "pattern": BLANK}, text(pattern, max)]}))
}

fn outcome_count() -> Value {
    nullable(json!({"type": "integer", "minimum": 0, "maximum": MAX_QUANTITY}))
}

fn id_input() -> Value {
    json!({"type": "integer", "minimum": 1, "maximum": i64::MAX})
}

/// The schemas written here: the error body, the wallet, the request bodies and the events.
pub(super) fn written_schemas() -> Map<String, Value> {
    let money = json!({"$ref": "#/components/schemas/Money"});
    let stamp = json!({"$ref": "#/components/schemas/Timestamp"});
    let money_input = json!({
        "description": "An amount: a JSON number or a numeric string, zero or more, at most two decimals.",
        "oneOf": [
            {"type": "number", "minimum": 0, "maximum": MAX_AMOUNT.to_string().parse::<u64>().unwrap_or(1_000_000_000), "multipleOf": 0.01},
            {"type": "string", "pattern": MONEY_INPUT},
        ],
    });
    let line = |profit_required: bool| {
        let mut required = vec!["variant_id", "quantity"];
        if profit_required {
            required.push("profit");
        }
        json!({
            "type": "object",
            "required": required,
            "properties": {
                "variant_id": id_input(),
                "quantity": {"type": "integer", "minimum": 1, "maximum": MAX_QUANTITY},
                "profit": if profit_required { money_input.clone() } else { nullable(money_input.clone()) },
                "warranty_ids": nullable(json!({"type": "array", "maxItems": MAX_WARRANTIES, "items": {"type": "integer"}})),
            },
        })
    };
    let checkout = |profit_required: bool| {
        json!({
            "shipping_option_id": id_input(),
            "governorate_id": id_input(),
            "lines": {"type": "array", "minItems": 1, "maxItems": MAX_LINES, "items": line(profit_required)},
        })
    };
    let mut order_properties = json!({
        "external_reference": optional_text(SINGLE_LINE, MAX_REFERENCE),
        "full_name": text(SINGLE_LINE_FILLED, MAX_TEXT),
        "phone": {"type": "string", "maxLength": MAX_PHONE, "pattern": PHONE},
        "second_phone": nullable(json!({"type": "string", "pattern": OPTIONAL_PHONE})),
        "address": text(MULTI_LINE_FILLED, MAX_TEXT),
        "store_name": optional_text(SINGLE_LINE, MAX_TEXT),
        "store_link": optional_text(r"^\s*https?://[^/\\\s]", MAX_TEXT),
        "note": optional_text(MULTI_LINE, MAX_NOTE),
    });
    if let (Some(order), Value::Object(checkout)) =
        (order_properties.as_object_mut(), checkout(true))
    {
        order.extend(checkout);
    }
    let subscribable = enum_of(EventType::SUBSCRIBABLE, EventType::as_str);
    let events = json!({"type": "array", "minItems": 1, "items": subscribable});
    let url = json!({
        "type": "string",
        "maxLength": MAX_URL,
        "pattern": r"^\s*https://[^/\\\s]",
        "description": "An https URL whose host is public (not a private, loopback or link-local address).",
    });
    let description = optional_text(SINGLE_LINE, MAX_DESCRIPTION);
    let error_codes: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
    let conflict_reasons: Vec<&str> = ConflictReason::ALL.iter().map(|r| r.as_str()).collect();
    let withdrawal = json!({
        "type": "object",
        "required": ["id", "amount", "supply_amount", "status", "wallet_number", "wallet_description",
                     "notes", "transfer_reference", "receipt_url", "created_at", "decided_at"],
        "properties": {
            "id": {"$ref": "#/components/schemas/WithdrawalId"},
            "amount": money, "supply_amount": money,
            // A component of its own: generators name an inline object after its parent and
            // property ("WithdrawalStatus"), which is the name of the status enum.
            "status": {"$ref": "#/components/schemas/WithdrawalStatusView"},
            "wallet_number": {"type": "string"},
            "wallet_description": {"type": "string"},
            "notes": {"type": ["string", "null"]},
            "transfer_reference": {"type": ["string", "null"]},
            "receipt_url": {"type": ["string", "null"]},
            "created_at": stamp,
            "decided_at": nullable(stamp.clone()),
        },
    });
    let object = |properties: Value| {
        let required: Vec<String> = properties
            .as_object()
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        json!({"type": "object", "required": required, "properties": properties})
    };
    let wallet = object(json!({
        "side": {"$ref": "#/components/schemas/Side"},
        "currency": {"const": "EGP"},
        "income_tax_percent": money,
        "ready": money,
        "held": object(json!({"amount": money, "next_ready_at": nullable(stamp.clone())})),
        "expected": money,
        "referral": object(json!({"percent": money, "earned": money, "expected": money})),
        "received": money,
        "total_commission": money,
        "pending_withdrawals": object(json!({
            "count": {"type": "integer", "minimum": 0},
            "amount": money,
            "items": {"type": "array", "items": {"$ref": "#/components/schemas/Withdrawal"}},
        })),
        "withdrawal": object(json!({
            "open": {"type": "boolean"},
            "days": {"type": "array", "items": {"enum": ["sunday", "thursday"]}},
            "timezone": {"const": crate::time::CAIRO_TZ_NAME},
            "opens_at": stamp,
            "closes_at": stamp,
            "minimum": money,
            "minimum_currency": {"const": "EGP"},
            "note": {"type": "string"},
        })),
    }));
    let event = |types: Value, data: Value| {
        object(json!({
            "id": {"type": "string", "pattern": EVENT_ID},
            "type": types,
            "created_at": stamp,
            "data": data,
        }))
    };
    let order_events =
        json!({"enum": [EventType::OrderCreated.as_str(), EventType::OrderStatusChanged.as_str()]});
    let mut written = Map::new();
    for (name, schema) in [
        (
            "Error",
            json!({
                "type": "object",
                "required": ["error"],
                "properties": {"error": {
                    "type": "object",
                    "required": ["code", "message", "request_id"],
                    "properties": {
                        "code": {"type": "string", "enum": error_codes},
                        "message": {"type": "string", "minLength": 1, "description": "In Arabic."},
                        "request_id": {"type": "string", "minLength": 1, "maxLength": MAX_REQUEST_ID, "description": "The request's id, as in the `Request-Id` header: quote it when asking for support."},
                        "fields": {
                            "type": "object",
                            "description": "Messages per field, under dotted keys (`lines.0.quantity`); only on 422.",
                            "additionalProperties": {"type": "array", "minItems": 1, "items": {"type": "string"}},
                        },
                        "api_status": {"$ref": "#/components/schemas/ApiStatus"},
                        "retry_after": {"type": "integer", "minimum": 1},
                        "existing_order_id": {"type": "integer", "minimum": 1},
                        "existing_order_number": {"type": "string"},
                        "existing_quote_id": {"type": "integer", "minimum": 1},
                        "reason": {
                            "type": "string",
                            "enum": conflict_reasons,
                            "description": "Why a 409 `conflict` was refused (always there on a 409): branch on it, not on `message`.",
                        },
                    },
                }},
            }),
        ),
        ("Wallet", wallet),
        ("Withdrawal", withdrawal),
        ("StatementEntry", statement_entry(&money, &stamp)),
        (
            "WithdrawalStatusView",
            json!({
                "type": "object", "required": ["key", "label"],
                "properties": {"key": {"$ref": "#/components/schemas/WithdrawalStatus"}, "label": {"type": "string"}},
            }),
        ),
        (
            "QuoteRequest",
            json!({"type": "object", "required": ["shipping_option_id", "governorate_id", "lines"], "properties": checkout(false)}),
        ),
        (
            "OrderRequest",
            json!({
                "type": "object",
                "required": ["full_name", "phone", "address", "shipping_option_id", "governorate_id", "lines"],
                "properties": order_properties,
            }),
        ),
        (
            "SupplierQuoteRequest",
            json!({
                "type": "object",
                "required": ["variant_id", "unit_price", "quantity"],
                "properties": {
                    "variant_id": id_input(),
                    "unit_price": {
                        "description": "The price per piece: a JSON number or a numeric string, above zero, at most 1000000.00, at most two decimals.",
                        "oneOf": [
                            {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_QUOTE_UNIT_PRICE, "multipleOf": 0.01},
                            {"type": "string", "pattern": MONEY_INPUT},
                        ],
                    },
                    "quantity": {"type": "integer", "minimum": 1, "maximum": MAX_QUOTE_QUANTITY},
                    "valid_until": nullable(json!({
                        "type": "string",
                        "pattern": TIMESTAMP_INPUT,
                        "description": "The offer's end: after now, at most 90 days ahead.",
                    })),
                    "note": optional_text(MULTI_LINE, MAX_QUOTE_NOTE),
                },
            }),
        ),
        (
            "QuoteDecisionRequest",
            json!({
                "type": "object",
                "required": ["decision"],
                "properties": {
                    "decision": {"type": "string", "enum": ["accept", "reject"]},
                    "note": optional_text(MULTI_LINE, MAX_QUOTE_NOTE),
                },
            }),
        ),
        (
            "CancelRequest",
            json!({"type": "object", "properties": {"reason_note": optional_text(MULTI_LINE, MAX_REASON)}}),
        ),
        (
            "WebhookCreate",
            json!({
                "type": "object",
                "required": ["url"],
                "properties": {"url": url, "events": nullable(events.clone()), "description": description},
            }),
        ),
        (
            "WebhookUpdate",
            json!({
                "type": "object",
                "properties": {
                    "url": optional_text(r"^\s*https://[^/\\\s]", MAX_URL),
                    "events": nullable(events),
                    "description": description,
                    "enabled": {"type": ["boolean", "null"]},
                },
            }),
        ),
        (
            "SandboxMoveRequest",
            json!({
                "type": "object",
                "required": ["status"],
                "properties": {
                    "status": {"$ref": "#/components/schemas/OrderStatus"},
                    "reason": optional_text(MULTI_LINE, MAX_REASON),
                    "lines": nullable(json!({
                        "type": "array",
                        "maxItems": MAX_LINES,
                        "items": {
                            "type": "object",
                            "required": ["id"],
                            "properties": {
                                "id": id_input(),
                                "delivered_quantity": outcome_count(),
                                "returned_quantity": outcome_count(),
                                "damaged_quantity": outcome_count(),
                                "lost_quantity": outcome_count(),
                                "destroyed_quantity": outcome_count(),
                            },
                        },
                    })),
                },
            }),
        ),
        (
            "SandboxClockAdvance",
            json!({
                "type": "object",
                "required": ["advance_seconds"],
                "properties": {"advance_seconds": {
                    "type": "integer", "minimum": 1, "maximum": MAX_CLOCK_ADVANCE_SECONDS,
                }},
            }),
        ),
        ("SandboxClock", object(json!({"now": stamp}))),
        (
            "CatalogChange",
            object(json!({
                "cursor": {"type": "string", "pattern": super::CURSOR_INPUT, "description": "This change's place in the feed: `after` it, a read starts past it."},
                "product_id": {"type": "integer", "minimum": 1},
                "kind": enum_of(ChangeKind::ALL, ChangeKind::as_str),
                "at": stamp,
            })),
        ),
        (
            "FeedMeta",
            object(json!({
                "next_cursor": {"type": "string", "pattern": super::CURSOR_INPUT, "description": "Where the next read starts: the last change's cursor; on an empty page the place of the `after` given, handed out now (or the feed's head)."},
                "has_more": {"type": "boolean", "description": "Whether more changes follow now."},
            })),
        ),
        (
            "RemovedProduct",
            object(json!({
                "id": {"type": "integer", "minimum": 1},
                "removed_at": stamp,
            })),
        ),
        (
            "WebhookWithSecret",
            json!({"allOf": [{"$ref": "#/components/schemas/WebhookView"}, {"required": ["secret"]}]}),
        ),
        (
            "OrderEvent",
            event(
                order_events,
                object(json!({
                    "order": {"$ref": "#/components/schemas/OrderView"},
                    "previous_status": nullable(json!({"$ref": "#/components/schemas/StatusView"})),
                })),
            ),
        ),
        (
            "QuoteEvent",
            event(
                json!({"const": EventType::QuoteUpdated.as_str()}),
                object(json!({
                    "quote": {"$ref": "#/components/schemas/SupplierQuoteView"},
                    "previous_status": {"$ref": "#/components/schemas/QuoteStatusView"},
                })),
            ),
        ),
        (
            "WithdrawalEvent",
            event(
                json!({"const": EventType::WithdrawalUpdated.as_str()}),
                object(json!({
                    "withdrawal": {"$ref": "#/components/schemas/WithdrawalView"},
                    "previous_status": {"$ref": "#/components/schemas/WithdrawalStatusView"},
                })),
            ),
        ),
        (
            "CatalogChangedEvent",
            event(
                json!({"const": EventType::CatalogChanged.as_str()}),
                object(json!({
                    "cursor": {"type": "string", "pattern": super::CURSOR_INPUT, "description": "The cursor of the catalogue change feed's newest change when the event was sent; read `GET /catalog/changes` from your own cursor to it."},
                })),
            ),
        ),
        (
            "PingEvent",
            event(
                json!({"const": EventType::Ping.as_str()}),
                object(json!({"webhook_id": {"$ref": "#/components/schemas/WebhookId"}})),
            ),
        ),
    ] {
        written.insert(name.to_owned(), schema);
    }
    written
}

/// The `webhooks` section: each event as the request the endpoint receives.
pub(super) fn webhooks() -> Value {
    let mut section = Map::new();
    for kind in EventType::ALL {
        let schema = match kind {
            EventType::Ping => "PingEvent",
            EventType::QuoteUpdated => "QuoteEvent",
            EventType::WithdrawalUpdated => "WithdrawalEvent",
            EventType::CatalogChanged => "CatalogChangedEvent",
            EventType::OrderCreated | EventType::OrderStatusChanged => "OrderEvent",
        };
        section.insert(
            kind.as_str().to_owned(),
            json!({"post": {
                "summary": format!("The `{}` event", kind.as_str()),
                "description": "Signed as Standard Webhooks: `webhook-id`, `webhook-timestamp` and `webhook-signature` headers.",
                "requestBody": {"required": true, "content": {JSON: {"schema": {"$ref": format!("#/components/schemas/{schema}")}}}},
                "responses": {"2XX": {"description": "Received; any other answer is retried."}},
            }}),
        );
    }
    Value::Object(section)
}

/// An entry of a supplier's statement (docs/supplier-statement.md): the order by id and
/// number only, never its customer.
fn statement_entry(money: &Value, stamp: &Value) -> Value {
    json!({
        "type": "object",
        "required": ["id", "type", "order", "variant_id", "quantity", "unit_price", "amount",
                     "direction", "balance", "ready_at", "at"],
        "properties": {
            "id": {"$ref": "#/components/schemas/StatementEntryId"},
            "type": enum_of(StatementEntryType::ALL, StatementEntryType::as_str),
            "order": nullable(json!({
                "type": "object", "required": ["id", "number"],
                "properties": {"id": {"type": "integer", "minimum": 1}, "number": {"type": "string"}},
            })),
            "variant_id": {"type": ["integer", "null"], "minimum": 1},
            "quantity": {"type": ["integer", "null"], "minimum": 1},
            "unit_price": nullable(money.clone()),
            "amount": money,
            "direction": enum_of(Direction::ALL, Direction::as_str),
            "balance": money,
            "ready_at": nullable(stamp.clone()),
            "at": stamp,
        },
    })
}
