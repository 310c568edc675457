//! The platform's side of the engine, end to end, on a real database: what the platform's own
//! back office does through [`Operator`](commerce::operator::Operator), with one order placed by a
//! marketer's store through the HTTP API in the middle.
//!
//! ```text
//! cargo run --example platform --features sqlx-sqlite
//! COMMERCE_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test \
//!     cargo run --example platform --features sqlx
//! ```
//!
//! The steps: the governorates and a shipping option with a rate for each; a category; a
//! product with two variants and a warranty; a marketer's account through activation and
//! API approval; a key, shown once; an order placed with that key through `POST
//! /api/v1/orders`; the order moved pending -> confirmed -> shipped -> delivered, with what
//! became of its pieces; two weeks later its profit is ready and withdrawn; the month's
//! billing meter read. The engine runs on a [`ManualClock`] so that the two weeks pass at once.

#[path = "support/args.rs"]
mod args;

use std::error::Error;
use std::sync::Arc;

use bytes::Bytes;
use commerce::clock::ManualClock;
use commerce::domain::keys::KeySpec;
use commerce::domain::pieces::OutcomeReport;
use commerce::model::*;
use commerce::store::Store;
use commerce::{Decimal, Engine, governorates};
use serde_json::{Value, json};

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    args::arguments(&[], 0)?;
    let store = open_store().await?;
    let start = chrono::Utc::now();
    let clock = ManualClock::new(start);
    let engine = Engine::builder(store)
        .clock(Arc::new(clock.clone()))
        .build()?;
    let op = engine.operator();
    let egp = |text: &str| -> Decimal { text.parse().expect("an amount") };

    // 1. Where the platform ships, and what it charges.
    let standard = op.create_shipping_option("شحن عادي").await?;
    let mut cairo = None;
    for name in governorates::EGYPT {
        let governorate = op.create_governorate(name.arabic).await?;
        let charge = if name.english == "Cairo" || name.english == "Giza" {
            egp("45.00")
        } else {
            egp("65.00")
        };
        let terms = RateTerms::charge(charge).shipping_tax_percent(egp("14.00"));
        op.set_shipping_rate(standard.id, governorate.id, terms)
            .await?;
        if name.english == "Cairo" {
            cairo = Some(governorate.id);
        }
    }
    let cairo = cairo.expect("Cairo is a governorate");
    println!(
        "shipping: {} governorates served",
        governorates::EGYPT.len()
    );

    // 2. The catalogue: a category, a product with two variants, a warranty.
    let home = op
        .create_category(NewCategory::new(
            "أدوات منزلية".to_owned(),
            "home".to_owned(),
            None,
        ))
        .await?;
    let kettle = op
        .create_product(
            NewProduct::builder()
                .category_id(home.id)
                .title("غلاية كهربائية".to_owned())
                .slug("electric-kettle".to_owned())
                .url("https://shop.example.com/kettle".to_owned())
                .description("غلاية 1.7 لتر، فصل تلقائي.".to_owned())
                .images(vec!["https://cdn.example.com/kettle/1.jpg".to_owned()])
                .build(),
        )
        .await?;
    let white = op
        .add_variant(
            kettle.id,
            NewVariant::builder()
                .label("أبيض".to_owned())
                .price(egp("250.00"))
                .available(40)
                .suggested_min(egp("300.00"))
                .suggested_max(egp("380.00"))
                .build(),
        )
        .await?;
    op.add_variant(
        kettle.id,
        NewVariant::builder()
            .label("أسود".to_owned())
            .price(egp("265.00"))
            .available(15)
            .build(),
    )
    .await?;
    let warranty = op
        .add_warranty(
            kettle.id,
            NewWarranty::builder()
                .name("ضمان سنة".to_owned())
                .duration_days(365)
                .admin_fee(egp("15.00"))
                .percent(egp("5.00"))
                .price_from(egp("20.00"))
                .terms("استبدال خلال سنة من الاستلام.".to_owned())
                .build(),
        )
        .await?;
    println!("catalogue: product {} with variant {}", kettle.id, white.id);

    // 3. A marketer registers, is activated, asks for API access and is approved.
    let account = op
        .create_account(NewAccount::marketer(
            "أحمد محمود",
            "متجر أحمد",
            "ahmed@example.com",
            "01012345678",
        ))
        .await?;
    op.set_account_state(account.id, AccountState::Active)
        .await?;
    op.set_api_status(account.id, ApiStatus::Pending).await?;
    let account = op.set_api_status(account.id, ApiStatus::Approved).await?;
    println!(
        "account {}: {} / API {}",
        account.id, account.state, account.api_status
    );

    // 4. A key, whose plaintext is shown this once (only its hash is stored).
    let abilities = vec![
        Ability::CatalogRead,
        Ability::OrdersRead,
        Ability::OrdersWrite,
        Ability::WalletRead,
    ];
    let key = op
        .create_key(
            account.id,
            KeySpec::new("متجري".to_owned(), abilities, None, None),
        )
        .await?;
    println!("key {} (shown once): {}", key.key.id, key.plaintext);

    // 5. The marketer's store places an order through the HTTP API.
    let body = json!({
        "external_reference": "SHOP-1001",
        "full_name": "سارة حسن",
        "phone": "+201112223334",
        "address": "12 شارع النصر، مدينة نصر",
        "governorate_id": cairo,
        "shipping_option_id": standard.id,
        "lines": [{
            "variant_id": white.id,
            "quantity": 2,
            "profit": "60.00",
            "warranty_ids": [warranty.id],
        }],
    });
    let request = http::Request::post("/api/v1/orders")
        .header("authorization", format!("Bearer {}", key.plaintext))
        .header("content-type", "application/json")
        .header("idempotency-key", "SHOP-1001")
        .body(Bytes::from(body.to_string()))?;
    let response = engine.handle(request).await;
    let answer: Value = serde_json::from_slice(response.body())?;
    assert_eq!(response.status(), 201, "{answer}");
    let order_id = OrderId::new(answer["data"]["id"].as_i64().expect("an order id"));
    println!(
        "order {} placed through the API: customer pays {}",
        answer["data"]["number"], answer["data"]["totals"]["customer_total"]
    );

    // 6. The back office moves it along; the courier delivers both pieces.
    op.move_order(order_id, OrderStatus::Confirmed, None)
        .await?;
    let order = op.move_order(order_id, OrderStatus::Shipped, None).await?;
    let line = &order.lines[0];
    let outcomes = vec![(
        line.id,
        OutcomeReport::builder().delivered(line.quantity).build(),
    )];
    op.set_tracking_url(order_id, Some("https://courier.example.com/t/1001".into()))
        .await?;
    let order = op
        .move_order_with_outcomes(order_id, OrderStatus::Delivered, None, outcomes)
        .await?;
    println!("order {}: {}", order.number, order.status);

    // 7. Two weeks later the profit is out of its hold: the marketer withdraws it.
    let held = op.wallet(account.id).await?;
    println!(
        "wallet on delivery: held {}, ready {}",
        held.held, held.ready
    );
    clock.advance(chrono::Duration::days(engine.config().hold_days + 1));
    let wallet = op.wallet(account.id).await?;
    println!("wallet after the hold: ready {}", wallet.ready);
    let withdrawal = op
        .request_withdrawal(
            NewWithdrawal::builder()
                .account_id(account.id)
                .amount(wallet.ready)
                .wallet_number("01012345678".to_owned())
                .wallet_description("فودافون كاش".to_owned())
                .build(),
        )
        .await?;
    let paid = op
        .complete_withdrawal(withdrawal.id, "TRX-0001".into(), None)
        .await?;
    let wallet = op.wallet(account.id).await?;
    println!(
        "withdrawal {} {}: {}; wallet now received {}, ready {}",
        paid.id, paid.status, paid.amount, wallet.received, wallet.ready
    );

    // 8. What the month costs the marketer: the billing meter.
    let meter = op.meter(account.id, &BillingMonth::of(start)).await?;
    println!(
        "meter: {} products pulled, {} order operations",
        meter.pulled_products, meter.order_operations
    );
    assert_eq!(meter.order_operations, 1);
    Ok(())
}

/// PostgreSQL when `COMMERCE_DATABASE_URL` names one (feature `sqlx-postgres`), else a fresh
/// SQLite file in the temporary directory.
async fn open_store() -> Result<Arc<dyn Store>, Box<dyn Error>> {
    #[cfg(feature = "sqlx-postgres")]
    if let Ok(url) = std::env::var("COMMERCE_DATABASE_URL") {
        let store = commerce::sqlx::PgStore::connect_with_schema(
            url.parse()?,
            &format!("platform_example_{}", std::process::id()),
        )
        .await?;
        store.migrate().await?;
        println!("database: PostgreSQL, schema {:?}", store.schema());
        return Ok(Arc::new(store));
    }
    let path = std::env::temp_dir().join(format!("commerce-platform-{}.db", std::process::id()));
    let store =
        commerce::sqlx::SqliteStore::connect(&format!("sqlite://{}?mode=rwc", path.display()))
            .await?;
    store.migrate().await?;
    println!("database: SQLite, {}", path.display());
    Ok(Arc::new(store))
}
