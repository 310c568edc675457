//! The webhook events' JSON bodies, rendered by the dispatcher when it sends a delivery
//! (services, above `store`: a store keeps each event as an
//! [`EventSnapshot`](crate::model::EventSnapshot) and never renders; re-exported by
//! [`webhooks`](crate::webhooks)).
//!
//! Rendering is a pure function of the event's id, type and snapshot, so every attempt of a
//! delivery, and a redelivery of its event, sends the same bytes under a stable signature.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::domain::earnings::PayoutRules;
use crate::model::{EventContext, EventSnapshot, EventType, Order, OrderStatus, WebhookId};
use crate::render::wire::{
    OrderView, QuoteStatusView, Stamp, StatusView, SupplierQuoteView, WithdrawalStatusView,
    WithdrawalView,
};

#[derive(Serialize)]
struct Envelope<'a, D> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    created_at: Stamp,
    data: D,
}

#[derive(Serialize)]
struct OrderData<'a> {
    order: OrderView<'a>,
    previous_status: Option<StatusView>,
}

#[derive(Serialize)]
struct QuoteData<'a> {
    quote: SupplierQuoteView<'a>,
    previous_status: QuoteStatusView,
}

#[derive(Serialize)]
struct WithdrawalData<'a> {
    withdrawal: WithdrawalView<'a>,
    previous_status: WithdrawalStatusView,
}

#[derive(Serialize)]
struct CatalogData<'a> {
    cursor: &'a str,
}

#[derive(Serialize)]
struct PingData {
    webhook_id: WebhookId,
}

fn render<D: Serialize>(id: &str, kind: EventType, at: DateTime<Utc>, data: D) -> String {
    serde_json::to_string(&Envelope {
        id,
        kind: kind.as_str(),
        created_at: Stamp(at),
        data,
    })
    .expect("events always serialise")
}

/// The JSON body of the event `id` of type `kind` that `snapshot` keeps: for an order event,
/// at the order's `updated_at`, `data.order` is the order exactly as `GET /api/v1/orders/{id}`
/// rendered it at that instant (its payout with the snapshot's hold) and
/// `data.previous_status` the status it left; for `quote.updated`, `data.quote` is the quote
/// as `GET /api/v1/quotes/{id}` rendered it right after its move and `data.previous_status`
/// the status it left (`{key, label}`); for `withdrawal.updated`, `data.withdrawal` is the
/// withdrawal as `GET /api/v1/wallet` renders one and `data.previous_status` the status it
/// left; for `catalog.changed`, `data.cursor`; for a ping, `data.webhook_id`. A body rendered before ([`EventSnapshot::Rendered`]) is
/// returned as it is.
pub fn render_event(id: &str, kind: EventType, snapshot: &EventSnapshot) -> String {
    match snapshot {
        EventSnapshot::Order {
            order,
            previous,
            context,
        } => render_order(id, kind, order, *previous, *context),
        EventSnapshot::Ping { webhook_id, at } => render(
            id,
            kind,
            *at,
            PingData {
                webhook_id: *webhook_id,
            },
        ),
        EventSnapshot::Quote { quote, previous } => render(
            id,
            kind,
            quote.updated_at,
            QuoteData {
                quote: SupplierQuoteView::new(quote),
                previous_status: QuoteStatusView::of(*previous),
            },
        ),
        EventSnapshot::Withdrawal {
            withdrawal,
            previous,
        } => render(
            id,
            kind,
            withdrawal.decided_at.unwrap_or(withdrawal.created_at),
            WithdrawalData {
                withdrawal: WithdrawalView::new(withdrawal),
                previous_status: WithdrawalStatusView::of(*previous),
            },
        ),
        EventSnapshot::CatalogChanged { cursor, at } => {
            render(id, kind, *at, CatalogData { cursor })
        }
        EventSnapshot::Rendered(body) => body.clone(),
    }
}

fn render_order(
    id: &str,
    kind: EventType,
    order: &Order,
    previous: Option<OrderStatus>,
    context: EventContext,
) -> String {
    let at = order.updated_at;
    let rules = PayoutRules::clamped(at, context.hold_days);
    let data = OrderData {
        order: OrderView::new(order, rules),
        previous_status: previous.map(StatusView::of),
    };
    render(id, kind, at, data)
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;
    use crate::model::{NewEvent, new_event_id};

    /// The id the expected bodies carry.
    const ID: &str = "evt_0123456789abcdefghijklmn";

    /// The bodies the stores rendered into the outbox before they kept snapshots (issue 32),
    /// for [`fixed_order`] and the id [`ID`]: `webhooks::order_event` and `ping_event` of
    /// commit 4d7592c, byte for byte. `order.created` with a hold of 14 days, then
    /// `order.status_changed` from `order_confirmed` (14 days) and from `order_shipped` (0).
    /// One change since, on purpose: a settled line shows its completed counts (the second
    /// line of the partially delivered order, with no counts, shows its piece delivered).
    const BEFORE: [&str; 4] = [
        r#"{"id":"evt_0123456789abcdefghijklmn","type":"order.created","created_at":"2026-11-03T14:30:15+02:00","data":{"order":{"id":42,"number":"EG-AB12CD34","external_reference":"shop-77","tracking_url":"https://track.example/x?a=1&b=2","status":{"key":"order_partially_delivered","label":"اتسلم جزء والباقي رجع"},"family":"delivered","customer":{"name":"سارة علي","phone":"01012345678","second_phone":"01198765432","address":"12 شارع النيل، الدور 3","governorate":{"id":2,"name":"الجيزة"}},"shipping_option":{"id":4,"name":"شحن سريع"},"lines":[{"id":11,"variant_id":21,"product_id":31,"title":"سماعة <بلوتوث>","variant_label":"أسود","quantity":2,"delivered_quantity":1,"returned_quantity":1,"damaged_quantity":0,"lost_quantity":0,"destroyed_quantity":0,"sell_price":"150.25","profit":"20.13","commission_on":true,"warranties":[{"id":3,"name":"ضمان سنة","unit_price":"25.50","quantity":2,"total":"51.00","duration_days":365,"terms":"يشمل \"عيوب\" الصناعة\nفقط"}]},{"id":12,"variant_id":22,"product_id":32,"title":"Cable","variant_label":"","quantity":1,"delivered_quantity":1,"returned_quantity":0,"damaged_quantity":0,"lost_quantity":0,"destroyed_quantity":0,"sell_price":"10.00","profit":"0.01","commission_on":false,"warranties":[]}],"totals":{"products":"310.50","warranties":"51.00","delivery_charge":"45.00","customer_total":"406.50","profit":"40.26","income_tax":"0.40","net_profit":"39.86","income_tax_percent":"1.00"},"payout":{"state":"held","ready_at":"2026-11-17T14:30:15+02:00"},"timeline":[{"status":"order_pending","label":"في انتظار التأكيد","at":"2026-11-01T10:30:15+02:00","reason":null},{"status":"order_confirmed","label":"العميل أكد الأوردر","at":"2026-11-01T11:30:15+02:00","reason":"by phone"},{"status":"order_partially_delivered","label":"اتسلم جزء والباقي رجع","at":"2026-11-03T14:30:15+02:00","reason":null}],"created_at":"2026-11-01T10:30:15+02:00","updated_at":"2026-11-03T14:30:15+02:00","confirmed_at":"2026-11-01T11:30:15+02:00","delivered_at":"2026-11-03T14:30:15+02:00"},"previous_status":null}}"#,
        r#"{"id":"evt_0123456789abcdefghijklmn","type":"order.status_changed","created_at":"2026-11-03T14:30:15+02:00","data":{"order":{"id":42,"number":"EG-AB12CD34","external_reference":"shop-77","tracking_url":"https://track.example/x?a=1&b=2","status":{"key":"order_partially_delivered","label":"اتسلم جزء والباقي رجع"},"family":"delivered","customer":{"name":"سارة علي","phone":"01012345678","second_phone":"01198765432","address":"12 شارع النيل، الدور 3","governorate":{"id":2,"name":"الجيزة"}},"shipping_option":{"id":4,"name":"شحن سريع"},"lines":[{"id":11,"variant_id":21,"product_id":31,"title":"سماعة <بلوتوث>","variant_label":"أسود","quantity":2,"delivered_quantity":1,"returned_quantity":1,"damaged_quantity":0,"lost_quantity":0,"destroyed_quantity":0,"sell_price":"150.25","profit":"20.13","commission_on":true,"warranties":[{"id":3,"name":"ضمان سنة","unit_price":"25.50","quantity":2,"total":"51.00","duration_days":365,"terms":"يشمل \"عيوب\" الصناعة\nفقط"}]},{"id":12,"variant_id":22,"product_id":32,"title":"Cable","variant_label":"","quantity":1,"delivered_quantity":1,"returned_quantity":0,"damaged_quantity":0,"lost_quantity":0,"destroyed_quantity":0,"sell_price":"10.00","profit":"0.01","commission_on":false,"warranties":[]}],"totals":{"products":"310.50","warranties":"51.00","delivery_charge":"45.00","customer_total":"406.50","profit":"40.26","income_tax":"0.40","net_profit":"39.86","income_tax_percent":"1.00"},"payout":{"state":"held","ready_at":"2026-11-17T14:30:15+02:00"},"timeline":[{"status":"order_pending","label":"في انتظار التأكيد","at":"2026-11-01T10:30:15+02:00","reason":null},{"status":"order_confirmed","label":"العميل أكد الأوردر","at":"2026-11-01T11:30:15+02:00","reason":"by phone"},{"status":"order_partially_delivered","label":"اتسلم جزء والباقي رجع","at":"2026-11-03T14:30:15+02:00","reason":null}],"created_at":"2026-11-01T10:30:15+02:00","updated_at":"2026-11-03T14:30:15+02:00","confirmed_at":"2026-11-01T11:30:15+02:00","delivered_at":"2026-11-03T14:30:15+02:00"},"previous_status":{"key":"order_confirmed","label":"العميل أكد الأوردر"}}}"#,
        r#"{"id":"evt_0123456789abcdefghijklmn","type":"order.status_changed","created_at":"2026-11-03T14:30:15+02:00","data":{"order":{"id":42,"number":"EG-AB12CD34","external_reference":"shop-77","tracking_url":"https://track.example/x?a=1&b=2","status":{"key":"order_partially_delivered","label":"اتسلم جزء والباقي رجع"},"family":"delivered","customer":{"name":"سارة علي","phone":"01012345678","second_phone":"01198765432","address":"12 شارع النيل، الدور 3","governorate":{"id":2,"name":"الجيزة"}},"shipping_option":{"id":4,"name":"شحن سريع"},"lines":[{"id":11,"variant_id":21,"product_id":31,"title":"سماعة <بلوتوث>","variant_label":"أسود","quantity":2,"delivered_quantity":1,"returned_quantity":1,"damaged_quantity":0,"lost_quantity":0,"destroyed_quantity":0,"sell_price":"150.25","profit":"20.13","commission_on":true,"warranties":[{"id":3,"name":"ضمان سنة","unit_price":"25.50","quantity":2,"total":"51.00","duration_days":365,"terms":"يشمل \"عيوب\" الصناعة\nفقط"}]},{"id":12,"variant_id":22,"product_id":32,"title":"Cable","variant_label":"","quantity":1,"delivered_quantity":1,"returned_quantity":0,"damaged_quantity":0,"lost_quantity":0,"destroyed_quantity":0,"sell_price":"10.00","profit":"0.01","commission_on":false,"warranties":[]}],"totals":{"products":"310.50","warranties":"51.00","delivery_charge":"45.00","customer_total":"406.50","profit":"40.26","income_tax":"0.40","net_profit":"39.86","income_tax_percent":"1.00"},"payout":{"state":"ready","ready_at":"2026-11-03T14:30:15+02:00"},"timeline":[{"status":"order_pending","label":"في انتظار التأكيد","at":"2026-11-01T10:30:15+02:00","reason":null},{"status":"order_confirmed","label":"العميل أكد الأوردر","at":"2026-11-01T11:30:15+02:00","reason":"by phone"},{"status":"order_partially_delivered","label":"اتسلم جزء والباقي رجع","at":"2026-11-03T14:30:15+02:00","reason":null}],"created_at":"2026-11-01T10:30:15+02:00","updated_at":"2026-11-03T14:30:15+02:00","confirmed_at":"2026-11-01T11:30:15+02:00","delivered_at":"2026-11-03T14:30:15+02:00"},"previous_status":{"key":"order_shipped","label":"الأوردر مع شركة الشحن"}}}"#,
        r#"{"id":"evt_0123456789abcdefghijklmn","type":"ping","created_at":"2027-01-15T10:00:00+02:00","data":{"webhook_id":7}}"#,
    ];

    fn rendered(event: &NewEvent) -> String {
        render_event(ID, event.kind, &event.snapshot)
    }

    #[test]
    fn the_bodies_are_byte_identical_to_those_rendered_before_snapshots() {
        let order = fixed_order();
        let events = [
            (EventType::OrderCreated, None, 14),
            (
                EventType::OrderStatusChanged,
                Some(OrderStatus::Confirmed),
                14,
            ),
            (EventType::OrderStatusChanged, Some(OrderStatus::Shipped), 0),
        ]
        .map(|(kind, previous, hold_days)| {
            NewEvent::order(kind, &order, previous, EventContext { hold_days })
        });
        let ping = NewEvent::ping(
            WebhookId::new(7),
            Utc.timestamp_opt(1_800_000_000, 123_456_789).unwrap(),
        );
        for (event, before) in events.iter().chain([&ping]).zip(BEFORE) {
            assert_eq!(rendered(event), before, "{:?}", event.kind);
            // Every attempt renders again: the same bytes, so the same signature.
            assert_eq!(rendered(event), rendered(&event.clone()));
        }
        // A body rendered before is sent as it is.
        let kept = EventSnapshot::Rendered(BEFORE[0].to_owned());
        assert_eq!(render_event("evt_other", EventType::Ping, &kept), BEFORE[0]);
    }

    #[test]
    fn the_snapshot_is_the_order_as_it_was() {
        let mut order = fixed_order();
        let event = NewEvent::order(
            EventType::OrderCreated,
            &order,
            None,
            EventContext::default(),
        );
        order.status = OrderStatus::Cancelled;
        order.customer.name = "someone else".into();
        let body: serde_json::Value = serde_json::from_str(&rendered(&event)).unwrap();
        assert_eq!(
            body["data"]["order"]["status"]["key"],
            "order_partially_delivered"
        );
        assert_eq!(body["data"]["order"]["customer"]["name"], "سارة علي");
        assert_eq!(event.created_at, order.updated_at);
        assert_eq!(event.order_id, Some(order.id));
    }

    #[test]
    fn event_ids_have_the_documented_shape() {
        let id = new_event_id();
        assert_eq!(id.len(), 28);
        assert!(id.starts_with("evt_"));
        assert!(
            id[4..]
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        );
        assert_ne!(id, new_event_id());
    }

    /// A quote's and a withdrawal's events carry the record as the API renders it (the same
    /// view) and the status they left as `{key, label}`, at the instant of the change.
    #[test]
    fn quote_and_withdrawal_events_render_the_api_views() {
        use crate::model::*;
        use crate::render::wire::{SupplierQuoteView, WithdrawalView};
        use rust_decimal::Decimal;
        let at = |h| Utc.with_ymd_and_hms(2026, 11, 2, h, 0, 0).unwrap();
        let quote = Quote::builder()
            .id(QuoteId::new(5))
            .account_id(AccountId::new(9))
            .variant_id(VariantId::new(21))
            .product_id(ProductId::new(31))
            .title("مروحة".into())
            .label("صغير".into())
            .unit_price(Decimal::new(4550, 2))
            .quantity(30)
            .status(QuoteStatus::Accepted)
            .decision_note("تمام".into())
            .decided_at(at(12))
            .created_at(at(10))
            .updated_at(at(12))
            .build();
        let event = NewEvent::quote(&quote, QuoteStatus::Pending);
        assert_eq!(
            (event.kind, event.created_at),
            (EventType::QuoteUpdated, at(12))
        );
        let body: serde_json::Value =
            serde_json::from_str(&render_event(ID, event.kind, &event.snapshot)).unwrap();
        assert_eq!(body["type"], "quote.updated");
        assert_eq!(body["created_at"], "2026-11-02T14:00:00+02:00");
        assert_eq!(
            body["data"]["quote"],
            serde_json::to_value(SupplierQuoteView::new(&quote)).unwrap()
        );
        assert_eq!(body["data"]["quote"]["status"]["key"], "accepted");
        assert_eq!(body["data"]["previous_status"]["key"], "pending");
        assert!(body["data"]["previous_status"]["label"].is_string());

        let withdrawal = Withdrawal::builder()
            .id(WithdrawalId::new(3))
            .account_id(AccountId::new(4))
            .amount(Decimal::new(15025, 2))
            .supply_amount(Decimal::ZERO)
            .status(WithdrawalStatus::Completed)
            .wallet_number("01012345678".into())
            .wallet_description("فودافون كاش".into())
            .transfer_reference("TR-1".into())
            .created_at(at(9))
            .decided_at(at(11))
            .build();
        let event = NewEvent::withdrawal(&withdrawal, WithdrawalStatus::Pending);
        assert_eq!(event.created_at, at(11));
        let body: serde_json::Value =
            serde_json::from_str(&render_event(ID, event.kind, &event.snapshot)).unwrap();
        assert_eq!(body["type"], "withdrawal.updated");
        assert_eq!(
            body["data"]["withdrawal"],
            serde_json::to_value(WithdrawalView::new(&withdrawal)).unwrap()
        );
        assert_eq!(body["data"]["withdrawal"]["amount"], "150.25");
        assert_eq!(body["data"]["withdrawal"]["status"]["key"], "completed");
        assert_eq!(body["data"]["previous_status"]["key"], "pending");
        assert!(!body.to_string().contains("customer"));
    }

    #[test]
    fn a_ping_names_its_endpoint() {
        let at = chrono::DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let event = NewEvent::ping(WebhookId::new(7), at);
        let body = render_event(&event.id, event.kind, &event.snapshot);
        let body: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(body["type"], "ping");
        assert_eq!(body["id"], event.id.as_str());
        assert_eq!(body["data"], serde_json::json!({"webhook_id": 7}));
        assert!(body["created_at"].as_str().unwrap().ends_with("+02:00"));
    }

    /// A fixed order with every field the rendering reads: two lines (one with a warranty
    /// and an outcome), a partial delivery inside the payout hold, a timeline with a reason.
    fn fixed_order() -> Order {
        use crate::model::*;
        use chrono::TimeZone;
        use rust_decimal::Decimal;
        let at = |d, h| Utc.with_ymd_and_hms(2026, 11, d, h, 30, 15).unwrap();
        let dec = |s: &str| s.parse::<Decimal>().unwrap();
        let warranty = LineWarranty::builder()
            .warranty_id(WarrantyId::new(3))
            .name("ضمان سنة".into())
            .unit_price(dec("25.50"))
            .quantity(2)
            .total(dec("51.00"))
            .duration_days(365)
            .terms("يشمل \"عيوب\" الصناعة\nفقط".into())
            .build();
        let first = OrderLine::builder()
            .id(LineId::new(11))
            .variant_id(VariantId::new(21))
            .product_id(ProductId::new(31))
            .title("سماعة <بلوتوث>".into())
            .variant_label("أسود".into())
            .quantity(2)
            .sell_price(dec("150.25"))
            .profit(dec("20.125"))
            .commission_on(true)
            .warranties(vec![warranty])
            .outcome(LineOutcome::partly_delivered(1, 1))
            .supplier_id(AccountId::new(9))
            .supply_price(dec("99.99"))
            .build();
        let second = OrderLine::builder()
            .id(LineId::new(12))
            .variant_id(VariantId::new(22))
            .product_id(ProductId::new(32))
            .title("Cable".into())
            .variant_label(String::new())
            .quantity(1)
            .sell_price(dec("10"))
            .profit(dec("0.005"))
            .commission_on(false)
            .warranties(vec![])
            .outcome(LineOutcome::default())
            .build();
        Order::builder()
            .id(OrderId::new(42))
            .account_id(AccountId::new(5))
            .number("EG-AB12CD34".into())
            .legacy_number("1001".into())
            .external_reference("shop-77".into())
            .tracking_url("https://track.example/x?a=1&b=2".into())
            .status(OrderStatus::PartiallyDelivered)
            .customer(Customer {
                name: "سارة علي".into(),
                phone: "01012345678".into(),
                second_phone: Some("01198765432".into()),
                address: "12 شارع النيل، الدور 3".into(),
                governorate_id: GovernorateId::new(2),
                governorate_name: "الجيزة".into(),
            })
            .shipping_option_id(ShippingOptionId::new(4))
            .shipping_option_name("شحن سريع".into())
            .store_name("متجري".into())
            .store_link("https://shop.example".into())
            .note("اتصل قبل الوصول 🙏".into())
            .lines(vec![first, second])
            .totals(Totals {
                products: dec("310.50"),
                warranties: dec("51.00"),
                delivery_charge: dec("45"),
                customer_total: dec("406.50"),
                profit: dec("40.255"),
                income_tax: dec("0.40"),
                net_profit: dec("39.855"),
                income_tax_percent: dec("1.0"),
            })
            .timeline(vec![
                TimelineEntry::new(OrderStatus::Pending, at(1, 8), None),
                TimelineEntry::new(OrderStatus::Confirmed, at(1, 9), Some("by phone".into())),
                TimelineEntry::new(OrderStatus::PartiallyDelivered, at(3, 12), None),
            ])
            .created_at(at(1, 8))
            .updated_at(at(3, 12))
            .confirmed_at(at(1, 9))
            .delivered_at(at(3, 12))
            .build()
    }
}
