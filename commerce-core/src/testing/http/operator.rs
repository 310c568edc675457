//! The platform's side: orders entered through the operator API follow the rules of
//! `POST /orders`, and withdrawals are decided against the ready balance.

use std::collections::BTreeSet;

use rust_decimal::Decimal;
use serde_json::{Value, json};

use super::fixtures::*;
use super::harness::*;
use crate::domain::fields::{DraftLine, OrderDraft};
use crate::model::{NewVariant, NewWithdrawal, Problem, Variant, VariantPatch};
use crate::operator::Conflict;
use crate::operator::OperatorError;

/// The same broken order sent to `POST /orders` and to `Operator::place_order`: both refuse
/// it on the same fields, and neither touches the stock or registers an order.
pub async fn operator_orders_follow_the_api_rules(h: &Harness) {
    let f = &h.fixture;
    let valid_draft = || {
        OrderDraft::builder()
            .full_name("سارة حسن".to_owned())
            .phone("+201112223334".to_owned())
            .address("12 شارع النصر، مدينة نصر".to_owned())
            .shipping_option_id(f.standard_shipping)
            .governorate_id(f.cairo)
            .lines(vec![DraftLine::new(
                f.plain_variant,
                1,
                Decimal::new(5000, 2),
                Vec::new(),
            )])
            .build()
    };
    type Breaks = (&'static str, fn(&mut Value), fn(&mut OrderDraft));
    let cases: &[Breaks] = &[
        (
            "the report's order: -5 pieces at -100.00, blank name and address",
            |b| {
                b["full_name"] = json!("");
                b["address"] = json!("   ");
                b["lines"][0]["quantity"] = json!(-5);
                b["lines"][0]["profit"] = json!("-100.00");
            },
            |d| {
                d.full_name = String::new();
                d.address = "   ".into();
                d.lines[0].quantity = -5;
                d.lines[0].profit = Decimal::new(-10000, 2);
            },
        ),
        ("no lines", |b| b["lines"] = json!([]), |d| d.lines.clear()),
        (
            "a bad phone and a bad second phone",
            |b| {
                b["phone"] = json!("012");
                b["second_phone"] = json!("+20 99");
            },
            |d| {
                d.phone = "012".into();
                d.second_phone = Some("+20 99".into());
            },
        ),
        (
            "control characters, a bad link, a long note",
            |b| {
                b["full_name"] = json!("a\u{1b}b");
                b["address"] = json!("x\u{202e}y");
                b["store_link"] = json!("http:///nohost");
                b["note"] = json!("n".repeat(1001));
            },
            |d| {
                d.full_name = "a\u{1b}b".into();
                d.address = "x\u{202e}y".into();
                d.store_link = Some("http:///nohost".into());
                d.note = Some("n".repeat(1001));
            },
        ),
        (
            "a quantity over the limit, profit with three decimals, eleven warranties",
            |b| {
                b["lines"][0]["quantity"] = json!(1000);
                b["lines"][0]["profit"] = json!("1.005");
                b["lines"][0]["warranty_ids"] = json!(vec![1; 11]);
            },
            |d| {
                d.lines[0].quantity = 1000;
                d.lines[0].profit = Decimal::new(1005, 3);
                d.lines[0].warranty_ids = vec![crate::model::WarrantyId::new(1); 11];
            },
        ),
        (
            "more pieces than in stock",
            |b| b["lines"][0]["quantity"] = json!(999),
            |d| d.lines[0].quantity = 999,
        ),
    ];
    let stock = h.available(f.plain_variant).await;
    let orders = h.order_count().await;
    for (name, break_body, break_draft) in cases {
        let mut body = h.order_body(1, "50.00");
        break_body(&mut body);
        let r = h.post(A, "/api/v1/orders", &body).await;
        r.assert_error(422, "validation_failed");
        let api: BTreeSet<String> = r.error_fields().into_iter().collect();

        let mut draft = valid_draft();
        break_draft(&mut draft);
        let refused = h.engine.operator().place_order(f.marketer_a, draft).await;
        let operator: BTreeSet<String> = match refused {
            Err(OperatorError::Invalid(problems)) => {
                problems.into_iter().map(|p| p.field).collect()
            }
            other => panic!("{name}: the operator answered {other:?}"),
        };
        assert!(!api.is_empty(), "{name}");
        assert_eq!(operator, api, "{name}");
    }
    assert_eq!(h.available(f.plain_variant).await, stock);
    assert_eq!(h.order_count().await, orders);
    // And a valid draft is placed, as the API would.
    let placed = h
        .engine
        .operator()
        .place_order(f.marketer_a, valid_draft())
        .await
        .expect("valid draft");
    assert_eq!(placed.customer.phone, "01112223334");
    assert_eq!(h.available(f.plain_variant).await, stock - 1);
}

/// A variant whose suggested range's top is below its bottom is refused on `suggested_max`,
/// whether the range is given whole or by one end (the other end is the price) on creation,
/// or whole on an edit; an edit of one end alone is refused on the other; nothing is written.
pub async fn operator_refuses_an_inverted_suggested_range(h: &Harness) {
    let f = &h.fixture;
    let op = h.engine.operator();
    let product = f.featured_product;
    let read = || async {
        let stored = h.engine.store().product(product).await.expect("read");
        stored.expect("the featured product")
    };
    let before = read().await.variants.len();
    let refused_on_top = |result: Result<Variant, OperatorError>| match result {
        Err(OperatorError::Invalid(problems)) => {
            let fields: Vec<&str> = problems.iter().map(|p| p.field.as_str()).collect();
            assert_eq!(fields, ["suggested_max"], "{problems:?}");
            assert_eq!(
                problems[0].problem,
                Problem::BelowMinimum {
                    minimum: Decimal::new(30000, 2)
                }
            );
        }
        other => panic!("an inverted range was answered {other:?}"),
    };
    let price = Decimal::new(25000, 2);
    let one_end = NewVariant::builder()
        .label("قطعة".to_owned())
        .price(price)
        .suggested_min(Decimal::new(30000, 2))
        .available(1)
        .build();
    refused_on_top(op.add_variant(product, one_end).await);
    let whole = NewVariant::builder()
        .label("قطعة".to_owned())
        .price(price)
        .suggested_min(Decimal::new(30000, 2))
        .suggested_max(Decimal::new(29999, 2))
        .available(1)
        .build();
    refused_on_top(op.add_variant(product, whole).await);
    assert_eq!(
        read().await.variants.len(),
        before,
        "a refused variant was added"
    );
    let variant = &read().await.variants[0];
    let edit =
        VariantPatch::default().set_suggested_range(Decimal::new(30000, 2), Decimal::new(25000, 2));
    refused_on_top(op.update_variant(variant.id, edit).await);
    // One end alone is refused on the other: the range is edited whole.
    let one_end = VariantPatch {
        suggested_max: Some(Decimal::new(100, 2)),
        ..VariantPatch::default()
    };
    match op.update_variant(variant.id, one_end).await {
        Err(OperatorError::Invalid(problems)) => {
            let fields: Vec<(&str, Problem)> = problems
                .iter()
                .map(|p| (p.field.as_str(), p.problem))
                .collect();
            assert_eq!(fields, [("suggested_min", Problem::Required)]);
        }
        other => panic!("an edit of one end was answered {other:?}"),
    }
    assert_eq!(&read().await.variants[0], variant, "a refused edit wrote");
    // A range whose ends meet is a range.
    let point = NewVariant::builder()
        .label("قطعة".to_owned())
        .price(price)
        .suggested_min(price)
        .available(0)
        .build();
    let added = op
        .add_variant(product, point)
        .await
        .expect("a one-price range");
    assert_eq!((added.suggested_min, added.suggested_max), (price, price));
}

/// 12 withdrawal requests at once through the operator API on marketer A's ready balance:
/// exactly as many are accepted as the balance covers, the others are refused as over the
/// balance, and the wallet's `ready` drops by what was accepted, to the piastre.
pub async fn race_withdrawals_never_overdraw(h: &Harness) {
    let op = h.engine.operator();
    let account = h.fixture.marketer_a;
    let before = op.wallet(account).await.expect("wallet");
    let ready = before.ready;
    assert!(
        ready > Decimal::ZERO,
        "the sandbox gives marketer A a ready balance"
    );
    let minimum = h.engine.config().withdrawal_minimum;
    // An amount that fits two to three times, never a divisor rounding problem: a third,
    // cut to whole pounds, at least the minimum.
    let amount = (ready / Decimal::from(3)).floor().max(minimum);
    let covered = (ready / amount).floor();
    let mut tasks = Vec::new();
    for _ in 0..12 {
        let h = h.clone_handle();
        tasks.push(tokio::spawn(async move {
            let new = NewWithdrawal {
                account_id: account,
                amount,
                supply_amount: Decimal::ZERO,
                wallet_number: "01012345678".into(),
                wallet_description: "فودافون كاش".into(),
                notes: None,
            };
            h.engine.operator().request_withdrawal(new).await
        }));
    }
    let (mut accepted, mut refused) = (0, 0);
    for task in tasks {
        match task.await.expect("task") {
            Ok(_) => accepted += 1,
            Err(OperatorError::Conflict(Conflict::OverReadyBalance { .. })) => refused += 1,
            Err(other) => panic!("unexpected failure: {other:?}"),
        }
    }
    assert_eq!((Decimal::from(accepted), refused), (covered, 12 - accepted));
    let after = op.wallet(account).await.expect("wallet");
    assert_eq!(after.ready, ready - covered * amount);
    assert_eq!(
        after.pending_withdrawals.len(),
        before.pending_withdrawals.len() + accepted
    );
}
