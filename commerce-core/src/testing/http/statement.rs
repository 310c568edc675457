//! The supplier's money over HTTP: `GET /statement`, the supplier's `GET /wallet`, supplier
//! withdrawals, the correction refused below zero, and a supplier never seeing a customer.

use chrono::Duration;
use rust_decimal::Decimal;
use serde_json::{Value, json};

use crate::domain::pieces::OutcomeReport;
use crate::model::*;
use crate::operator::{Conflict, OperatorError};
use crate::testing::wallet::assert_supplier_matches_orders;

use super::fixtures::*;
use super::harness::*;

/// The demo supplier's key.
const SUPPLIER: &str = "sk_demo_supplier";

fn dec(v: &Value) -> Decimal {
    money(v).parse().expect("a money string")
}

/// Every entry of the supplier's statement, newest first.
async fn statement(h: &Harness) -> Vec<Value> {
    let r = h.get(SUPPLIER, "/api/v1/statement?per_page=100").await;
    r.assert_ok("statement");
    r.json()["data"].as_array().expect("a list").clone()
}

/// The newest balance and the wallet's `ready + held.amount`: always equal.
async fn reconcile(h: &Harness) -> (Decimal, Vec<Value>) {
    let entries = statement(h).await;
    let newest = entries
        .first()
        .map_or(Decimal::ZERO, |e| dec(&e["balance"]));
    let w = h.get(SUPPLIER, "/api/v1/wallet").await.json()["data"].clone();
    assert_eq!(
        dec(&w["ready"]) + dec(&w["held"]["amount"]),
        newest,
        "the statement's newest balance is the wallet's ready + held: {w}"
    );
    (newest, entries)
}

/// No key of a customer anywhere in a supplier's body, and none of the seeded customers'
/// names, phones or addresses in its text.
async fn assert_no_customer(h: &Harness, body: &str) {
    for key in [
        "\"customer\"",
        "\"phone\"",
        "\"address\"",
        "\"full_name\"",
        "\"name\"",
    ] {
        assert!(!body.contains(key), "{key} in a supplier's body: {body}");
    }
    let op = h.engine.operator();
    for id in [h.fixture.held_order, h.fixture.ready_order] {
        let order = op.order(id).await.expect("seeded order");
        for text in [
            &order.customer.name,
            &order.customer.phone,
            &order.customer.address,
        ] {
            assert!(!body.contains(text.as_str()), "{text} in a supplier's body");
        }
    }
}

/// The demo supplier's statement agrees with marketer A's seeded delivered orders (their
/// lines' supply price times delivered pieces) and with its wallet; an order of its
/// product delivered now books a `delivery` credit held for the hold period, a correction
/// books the difference, a supplier withdrawal is a debit whose `supply_amount` is its amount
/// (a marketer's is zero), and a correction beyond the balance is refused naming the
/// shortfall. Neither the statement nor the wallet ever shows a customer; a marketer key is
/// `wrong_side`.
pub async fn supplier_statement_follows_deliveries_and_withdrawals(h: &Harness) {
    h.get(A, "/api/v1/statement")
        .await
        .assert_error(403, "wrong_side");
    let op = h.engine.operator();
    let supplier = h.fixture.supplier;
    // The seed: what marketer A's delivered orders owe the supplier.
    let (seeded, entries) = reconcile(h).await;
    let mut owed = Decimal::ZERO;
    for id in [
        h.fixture.legacy_order,
        h.fixture.ready_order,
        h.fixture.held_order,
    ] {
        let order = op.order(id).await.expect("seeded order");
        for line in order
            .lines
            .iter()
            .filter(|l| l.supplier_id == Some(supplier))
        {
            owed += line.supply_price
                * Decimal::from(line.outcome.delivered_quantity.unwrap_or(line.quantity));
        }
    }
    assert!(
        owed > Decimal::ZERO,
        "the seed delivers the supplier's pieces"
    );
    assert_eq!(seeded, owed, "{entries:?}");
    let marketers = [h.fixture.marketer_a, h.fixture.marketer_b];
    assert_supplier_matches_orders(h, supplier, &marketers).await;
    // As docs/sandbox.md says: 2 and 3 pieces at 35.00, one piece at 180.00 confirmed.
    let seed_wallet = h.get(SUPPLIER, "/api/v1/wallet").await.json()["data"].clone();
    assert_eq!(
        (
            &seed_wallet["ready"],
            &seed_wallet["held"]["amount"],
            &seed_wallet["expected"]
        ),
        (
            &Value::from("70.00"),
            &Value::from("105.00"),
            &Value::from("180.00")
        )
    );
    assert!(entries.iter().all(|e| e["type"] == "delivery"));
    // An order of the supplier's variant, delivered now.
    let variant = h.fixture.featured_variants[0];
    let mut body = h.order_body(3, "20");
    body["lines"][0]["variant_id"] = variant.get().into();
    let initial = h.get(SUPPLIER, "/api/v1/wallet").await.json()["data"].clone();
    let placed = h.post(A, "/api/v1/orders", &body).await;
    assert_eq!(placed.status, 201, "{}", placed.json());
    let id = OrderId::new(placed.json()["data"]["id"].as_i64().expect("id"));
    let before = h.get(SUPPLIER, "/api/v1/wallet").await.json()["data"].clone();
    let order = op.order(id).await.expect("order");
    let line = &order.lines[0];
    assert_eq!(line.supplier_id, Some(supplier));
    let price = line.supply_price;
    assert!(price > Decimal::ZERO);
    assert_eq!(
        dec(&before["expected"]) - dec(&initial["expected"]),
        price * Decimal::from(3),
        "the order's supply value is expected"
    );
    for status in [
        OrderStatus::Confirmed,
        OrderStatus::Shipped,
        OrderStatus::Delivered,
    ] {
        op.move_order(id, status, None).await.expect("move");
    }
    let (balance, entries) = reconcile(h).await;
    let e = &entries[0];
    assert_eq!(e["type"], "delivery");
    assert_eq!(e["direction"], "credit");
    assert_eq!(e["order"]["id"], id.get());
    assert_eq!(e["order"]["number"], order.number.as_str());
    assert_eq!(
        e["order"].as_object().map(|o| o.len()),
        Some(2),
        "id and number only"
    );
    assert_eq!(e["variant_id"], variant.get());
    assert_eq!(e["quantity"], 3);
    assert_eq!(dec(&e["unit_price"]), price);
    assert_eq!(dec(&e["amount"]), price * Decimal::from(3));
    assert_eq!(balance, seeded + price * Decimal::from(3));
    let now = h.clock.now_utc();
    assert_eq!(
        e["ready_at"],
        crate::time::cairo_timestamp(now + Duration::days(14))
    );
    assert_eq!(e["at"], crate::time::cairo_timestamp(now));
    let w = h.get(SUPPLIER, "/api/v1/wallet").await;
    let w = w.json()["data"].clone();
    assert_eq!(w["side"], "supplier");
    assert_eq!(
        dec(&w["expected"]),
        dec(&before["expected"]) - price * Decimal::from(3)
    );
    assert_eq!(w["income_tax_percent"], "0.00");
    assert_eq!(w["total_commission"], "0.00");
    assert_eq!(w["referral"]["percent"], "0.00");
    assert_eq!(w["referral"]["earned"], "0.00");
    assert!(dec(&w["held"]["amount"]) >= price * Decimal::from(3));
    // A correction: one piece fewer delivered (it was lost on the way).
    let one_lost = OutcomeReport::builder().delivered(2).lost(1).build();
    op.set_line_outcomes(id, vec![(line.id, one_lost)])
        .await
        .expect("correction");
    let (after, entries) = reconcile(h).await;
    assert_eq!(
        (
            &entries[0]["type"],
            &entries[0]["direction"],
            &entries[0]["quantity"]
        ),
        (
            &Value::from("correction"),
            &Value::from("debit"),
            &Value::from(1)
        )
    );
    assert_eq!(entries[0]["ready_at"], Value::Null);
    assert_eq!(after, balance - price);
    // Past the hold, everything is ready: the supplier withdraws it all.
    h.clock.advance(Duration::days(15));
    let w = h.get(SUPPLIER, "/api/v1/wallet").await.json()["data"].clone();
    assert_eq!(dec(&w["ready"]), after);
    let withdrawal = op
        .request_withdrawal(
            NewWithdrawal::builder()
                .account_id(supplier)
                .amount(after)
                .wallet_number("01012345678".to_owned())
                .wallet_description("محفظة".to_owned())
                .build(),
        )
        .await
        .expect("supplier withdrawal");
    assert_eq!(withdrawal.supply_amount, after);
    let (zero, entries) = reconcile(h).await;
    assert_eq!(zero, Decimal::ZERO);
    assert_eq!(entries[0]["type"], "withdrawal");
    assert_eq!(entries[0]["order"], Value::Null);
    assert_eq!(entries[0]["variant_id"], Value::Null);
    assert_eq!(entries[0]["unit_price"], Value::Null);
    let w = h.get(SUPPLIER, "/api/v1/wallet").await.json()["data"].clone();
    assert_eq!(
        dec(&w["pending_withdrawals"]["items"][0]["supply_amount"]),
        after
    );
    // Another piece taken away now would leave the balance below zero: refused, named.
    let refused = op
        .set_line_outcomes(
            id,
            vec![(
                line.id,
                OutcomeReport::builder().delivered(1).lost(2).build(),
            )],
        )
        .await;
    assert!(
        matches!(
            &refused,
            Err(OperatorError::Conflict(Conflict::SupplierShortfall { supplier: s, shortfall }))
                if *s == supplier && *shortfall == price
        ),
        "{refused:?}"
    );
    assert_eq!(statement(h).await.len(), entries.len(), "nothing written");
    // Rejected, the withdrawal is credited back.
    op.reject_withdrawal(withdrawal.id, None)
        .await
        .expect("reject");
    let (back, entries) = reconcile(h).await;
    assert_eq!(
        (back, &entries[0]["type"]),
        (after, &Value::from("withdrawal_rejected"))
    );
    // A marketer's withdrawal has no supply amount, whatever the caller says.
    let marketer_asks = NewWithdrawal::builder()
        .account_id(h.fixture.marketer_a)
        .amount(Decimal::from(100))
        .supply_amount(Decimal::from(5))
        .wallet_number("01012345678".to_owned())
        .wallet_description("محفظة".to_owned())
        .build();
    let w = op
        .request_withdrawal(marketer_asks)
        .await
        .expect("marketer withdrawal");
    assert_eq!(w.supply_amount, Decimal::ZERO);
    assert_supplier_matches_orders(h, supplier, &marketers).await;
    // Nothing a supplier reads names a customer.
    for path in ["/api/v1/statement?per_page=100", "/api/v1/wallet"] {
        let r = h.get(SUPPLIER, path).await;
        assert_no_customer(h, std::str::from_utf8(&r.body).expect("utf-8")).await;
    }
}

/// `GET /statement` pages newest first with `meta`, and filters by Cairo dates: `from` and
/// `to` are days (`to` included), anything else a 422 naming the parameter.
pub async fn statement_pages_and_filters_by_cairo_day(h: &Harness) {
    let all = statement(h).await;
    assert!(all.len() >= 2, "the seed writes entries: {all:?}");
    let r = h.get(SUPPLIER, "/api/v1/statement?per_page=1&page=2").await;
    r.assert_ok("page 2");
    let page = r.json();
    assert_eq!(page["meta"]["total"], all.len());
    assert_eq!(page["meta"]["per_page"], 1);
    assert_eq!(page["data"][0], all[1]);
    let ids: Vec<i64> = all.iter().map(|e| e["id"].as_i64().expect("id")).collect();
    assert!(ids.windows(2).all(|w| w[0] > w[1]), "newest first: {ids:?}");
    // The newest entry's Cairo day holds it; the day before it does not.
    let newest_at = all[0]["at"].as_str().expect("at").to_owned();
    let day = &newest_at[..10];
    let r = h
        .get(SUPPLIER, &format!("/api/v1/statement?from={day}&to={day}"))
        .await;
    r.assert_ok("one day");
    let found = r.json()["data"].as_array().expect("list").clone();
    assert!(found.iter().any(|e| e["id"] == all[0]["id"]));
    assert!(
        found
            .iter()
            .all(|e| e["at"].as_str().is_some_and(|at| at.starts_with(day)))
    );
    let r = h
        .get(SUPPLIER, "/api/v1/statement?from=2000-01-01&to=2000-01-31")
        .await;
    assert_eq!(r.json()["meta"]["total"], 0);
    assert_eq!(r.json()["meta"]["last_page"], 1);
    for bad in [
        "from=",
        "from=2026-13-01",
        "to=yesterday",
        "from=2026-1-1",
        "to=2026-01-01T00:00:00Z",
    ] {
        let r = h.get(SUPPLIER, &format!("/api/v1/statement?{bad}")).await;
        r.assert_error(422, "validation_failed");
        let field = bad.split('=').next().expect("name");
        assert_eq!(r.error_fields(), vec![field.to_owned()], "{bad}");
    }
}

/// A partial delivery counts every piece once: an order of 3 of the demo supplier's variant,
/// shipped, then `order_partially_delivered` with only `returned_quantity: 2` shows
/// `delivered_quantity: 1`, puts the 2 pieces back on the shelf (a `restock` naming the
/// order), credits the supplier one piece and earns the marketer one piece's profit. Counts
/// sent with a move that does not settle the order are a 422 on `lines`, writing nothing.
pub async fn a_partial_delivery_pays_and_restocks_each_piece_once(h: &Harness) {
    let variant = h.fixture.featured_variants[0];
    let mut body = h.order_body(3, "10.00");
    body["lines"][0]["variant_id"] = json!(variant);
    let shelf = h.available(variant).await;
    let placed = h.post(A, "/api/v1/orders", &body).await;
    assert_eq!(placed.status, 201, "{}", placed.json());
    let order = placed.json()["data"].clone();
    let (id, line) = (order["id"].clone(), order["lines"][0]["id"].clone());
    let move_to = |status: &'static str, lines: Value| {
        let path = format!("/api/v1/sandbox/orders/{id}/status");
        async move {
            h.post(A, &path, &json!({"status": status, "lines": lines}))
                .await
        }
    };
    // An empty correction of an order not settled changes nothing, not even `updated_at`.
    let order_id = OrderId::new(id.as_i64().expect("an id"));
    let before = h
        .engine
        .operator()
        .order(order_id)
        .await
        .expect("the order");
    let untouched = h
        .engine
        .operator()
        .set_line_outcomes(order_id, Vec::new())
        .await
        .expect("nothing to correct");
    let read = h
        .engine
        .operator()
        .order(order_id)
        .await
        .expect("the order");
    assert_eq!(
        (untouched.updated_at, read.updated_at),
        (before.updated_at, before.updated_at)
    );
    // Early counts: refused on `lines`, the order unmoved.
    let early = move_to(
        "order_confirmed",
        json!([{"id": line, "returned_quantity": 3}]),
    )
    .await;
    early.assert_error(422, "validation_failed");
    assert_eq!(early.error_fields(), ["lines"]);
    let shown = h.get(A, &format!("/api/v1/orders/{id}")).await.json()["data"].clone();
    assert_eq!(shown["status"]["key"], "order_pending");
    for status in ["order_confirmed", "order_shipped"] {
        move_to(status, Value::Null).await.assert_ok(status);
    }
    let (_, before) = reconcile(h).await;
    let held = |w: &Value| dec(&w["held"]["amount"]);
    let wallet_before = h.get(A, "/api/v1/wallet").await.json()["data"].clone();
    let settled = move_to(
        "order_partially_delivered",
        json!([{"id": line, "returned_quantity": 2}]),
    )
    .await;
    settled.assert_ok("partially delivered");
    let settled = settled.json()["data"].clone();
    let counts = &settled["lines"][0];
    assert_eq!(
        (&counts["delivered_quantity"], &counts["returned_quantity"]),
        (&json!(1), &json!(2))
    );
    assert_eq!(h.available(variant).await, shelf - 1, "2 of the 3 back");
    let history = h
        .engine
        .operator()
        .stock_adjustments(
            VariantId::new(variant.get()),
            PageRequest::new(1, 2).expect("page"),
        )
        .await
        .expect("history");
    let newest = &history.items[0];
    assert_eq!(
        (
            newest.delta,
            newest.reason,
            newest.order_id.map(|o| o.get())
        ),
        (2, StockReason::Restock, id.as_i64())
    );
    let (after, entries) = reconcile(h).await;
    assert_eq!(entries.len(), before.len() + 1);
    let credit = &entries[0];
    assert_eq!(
        (&credit["type"], &credit["direction"], &credit["quantity"]),
        (&json!("delivery"), &json!("credit"), &json!(1))
    );
    assert_eq!(dec(&credit["amount"]), Decimal::new(18000, 2));
    assert_eq!(after, dec(&entries[1]["balance"]) + Decimal::new(18000, 2));
    // The marketer earns one piece of profit, less the commission on it.
    assert_eq!(settled["payout"]["state"], "held");
    let percent = dec(&settled["totals"]["income_tax_percent"]);
    let profit = Decimal::from(10);
    let net = profit - crate::domain::pricing::commission(profit, percent);
    let wallet_after = h.get(A, "/api/v1/wallet").await.json()["data"].clone();
    assert_eq!(
        held(&wallet_after) - held(&wallet_before),
        net,
        "{wallet_after}"
    );
}
