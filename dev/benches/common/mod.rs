//! Set-up shared by the benches: settings from the environment, tokio runtimes, resident
//! memory, a sandbox-seeded store, an order template and the wallet recomputation; the raw
//! HTTP client and the axum servers of the loopback runs (`http`), the SQL side (`sql`) and the
//! ratio lines every bench prints (`report`).
#![allow(dead_code)]

#[cfg(feature = "axum")]
pub mod http;
pub mod report;
#[cfg(feature = "sqlx")]
pub mod sql;

use std::sync::Arc;

use commerce_core::domain::earnings::PayoutRules;
use commerce_core::domain::pricing::{LineInput, ShippingTerms, price};
use commerce_core::domain::wallet::WalletFigures;
use commerce_core::model::*;
use commerce_core::store::prelude::*;
pub use commerce_core::testing::wallet::all_orders_of;
use commerce_core::{Engine, sandbox};
use rust_decimal::Decimal;
use tokio::runtime::Runtime;

/// The setting `name` from the environment, or `default` when unset or unparsable.
pub fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A multi-thread tokio runtime with `threads` workers named `name` (so that a profile, `top -H`
/// or `perf report --sort comm` tells the server's threads from the client's) and every driver
/// enabled.
pub fn runtime(name: &str, threads: usize) -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .thread_name(name)
        .enable_all()
        .build()
        .expect("runtime")
}

/// `VmRSS` of this process in bytes (0 where `/proc` is not there).
pub fn rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// Bytes as MiB, for printing.
pub fn mib(bytes: u64) -> f64 {
    bytes as f64 / 1_048_576.0
}

/// Gives `variant` practically endless stock (900 million pieces more, well within the most
/// a variant may hold), so that a bench's orders never run out.
pub async fn endless_stock(engine: &Engine, variant: VariantId) {
    engine
        .operator()
        .adjust_stock(
            NewStockAdjustment::builder()
                .variant_id(variant)
                .delta(900_000_000)
                .reason(StockReason::Received)
                .build(),
        )
        .await
        .expect("stock received");
}

/// The JSON body of `POST /api/v1/orders` for one piece of the sandbox's plain variant,
/// delivered in Cairo by the standard option.
pub fn order_body(fixture: &sandbox::Sandbox) -> Vec<u8> {
    let order = serde_json::json!({
        "full_name": "سارة حسن",
        "phone": "+201112223334",
        "address": "12 شارع النصر، مدينة نصر",
        "governorate_id": fixture.cairo,
        "shipping_option_id": fixture.standard_shipping,
        "lines": [{"variant_id": fixture.plain_variant, "quantity": 1, "profit": "40.00"}],
    });
    serde_json::to_vec(&order).expect("json")
}

/// Seeds `store` with the sandbox, gives the plain variant practically endless stock, and
/// returns the fixture and a priced one-line order of marketer B (who starts with no orders).
pub async fn seeded_template(store: Arc<dyn Store>) -> (sandbox::Sandbox, NewOrder) {
    let engine = Engine::new(store.clone());
    let fixture = sandbox::seed(&engine).await.expect("sandbox seeds");
    endless_stock(&engine, fixture.plain_variant).await;
    let product = store
        .products_of_variants(&[fixture.plain_variant])
        .await
        .expect("product")
        .remove(0);
    let variant = product
        .variants
        .iter()
        .find(|v| v.id == fixture.plain_variant)
        .expect("variant")
        .clone();
    let option = store
        .shipping_options()
        .await
        .expect("options")
        .into_iter()
        .find(|o| o.id == fixture.standard_shipping)
        .expect("standard shipping");
    let rate = option
        .rates
        .iter()
        .find(|r| r.governorate_id == fixture.cairo)
        .expect("cairo rate")
        .clone();
    let profit = Decimal::new(4_000, 2);
    let priced = price(
        &[LineInput::new(variant.price, profit, 1, &[])],
        ShippingTerms::from(&rate),
        Decimal::from(4),
    );
    let template = NewOrder::builder()
        .account_id(fixture.marketer_b)
        .number(String::new())
        .maybe_legacy_number(None)
        .maybe_external_reference(None)
        .status(OrderStatus::Pending)
        .customer(
            Customer::builder()
                .name("سارة حسن".into())
                .phone("01112223334".into())
                .maybe_second_phone(None)
                .address("12 شارع النصر، مدينة نصر".into())
                .governorate_id(rate.governorate_id)
                .governorate_name(rate.governorate_name.clone())
                .build(),
        )
        .shipping_option_id(option.id)
        .shipping_option_name(option.name.clone())
        .maybe_store_name(None)
        .maybe_store_link(None)
        .maybe_note(None)
        .lines(vec![
            NewOrderLine::builder()
                .variant_id(variant.id)
                .product_id(product.id)
                .title(product.title.clone())
                .variant_label(variant.label.clone())
                .quantity(1)
                .sell_price(priced.lines[0].sale)
                .profit(profit)
                .commission_on(true)
                .warranties(Vec::new())
                .maybe_supplier_id(product.supplier_id)
                .supply_price(variant.supply_price)
                .build(),
        ])
        .totals(priced.totals)
        .created_at(engine.now())
        .maybe_bill_month(None)
        .idempotency(None)
        .events(Default::default())
        .priced_from(Vec::new())
        .build();
    (fixture, template)
}

/// The wallet of `account` as the operator serves it, and as recomputed from every order and
/// withdrawal of the account (`WalletFigures::compute`): the two must be equal.
pub async fn wallet_and_recomputation(
    engine: &Engine,
    account: AccountId,
) -> (WalletFigures, WalletFigures) {
    let served = engine
        .operator()
        .wallet(account)
        .await
        .expect("wallet read");
    let orders = all_orders_of(&**engine.store(), account).await;
    let withdrawals = engine
        .store()
        .withdrawals(account)
        .await
        .expect("withdrawals read");
    let rules = PayoutRules::new(engine.now(), engine.config().hold_days)
        .expect("the engine's hold days are in range");
    (served, WalletFigures::compute(&orders, &withdrawals, rules))
}
