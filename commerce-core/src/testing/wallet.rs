//! The wallet check every suite shares: the figures the engine serves equal a recomputation
//! from every order and withdrawal of the account.

use super::http::Harness;
use crate::domain::earnings::PayoutRules;
use crate::domain::wallet::WalletFigures;
use crate::model::*;
use crate::store::Store;

/// Every order of an account, all pages, newest first.
pub async fn all_orders(h: &Harness, account: AccountId) -> Vec<Order> {
    all_orders_of(&**h.engine.store(), account).await
}

/// Every order of an account in `store`, all pages, newest first.
pub async fn all_orders_of(store: &dyn Store, account: AccountId) -> Vec<Order> {
    every_page(|request| async move {
        let found = store
            .orders(account, &OrderFilter::default(), request)
            .await
            .expect("orders listed");
        found.items
    })
    .await
}

/// Every item of a list read page by page (100 a page) until a page is short.
async fn every_page<T, F, Fut>(mut read: F) -> Vec<T>
where
    F: FnMut(PageRequest) -> Fut,
    Fut: std::future::Future<Output = Vec<T>>,
{
    let mut items = Vec::new();
    for page in 1.. {
        let found = read(PageRequest::new(page, 100).expect("a valid page")).await;
        let done = found.len() < 100;
        items.extend(found);
        if done {
            break;
        }
    }
    items
}

/// The wallet of `account` recomputed from all its orders and withdrawals at the engine's
/// instant (the reference the served figures are checked against).
pub async fn recomputed_wallet(h: &Harness, account: AccountId) -> WalletFigures {
    let orders = all_orders(h, account).await;
    let withdrawals = h
        .engine
        .store()
        .withdrawals(account)
        .await
        .expect("withdrawals read");
    let rules = PayoutRules::new(h.engine.now(), h.engine.config().hold_days)
        .expect("the engine's hold days are in range");
    WalletFigures::compute(&orders, &withdrawals, rules)
}

/// Asserts that the wallet the engine serves for `account` now equals the figures recomputed
/// from all its orders and withdrawals, to the piastre.
pub async fn assert_wallet_matches_orders(h: &Harness, account: AccountId) {
    let served = h
        .engine
        .operator()
        .wallet(account)
        .await
        .expect("wallet read");
    let recomputed = recomputed_wallet(h, account).await;
    assert_eq!(served, recomputed, "wallet of account {account}");
}

/// Asserts that the supplier's money agrees with the orders of `marketers` (every order that
/// can name it): its `expected` is the supply value of its pieces on undelivered orders, its
/// statement's entries of each order add up to that order's delivered pieces at their supply
/// price, and the statement's newest balance is those minus its withdrawals (pending or
/// completed), which is the wallet's `ready + held`.
pub async fn assert_supplier_matches_orders(
    h: &Harness,
    supplier: AccountId,
    marketers: &[AccountId],
) {
    use rust_decimal::Decimal;
    let store = h.engine.store();
    let mut expected = Decimal::ZERO;
    let mut delivered: std::collections::HashMap<OrderId, Decimal> = Default::default();
    for account in marketers {
        for order in all_orders(h, *account).await {
            let open = order.delivered_at.is_none()
                && matches!(
                    order.status.family(),
                    Family::Pending | Family::Confirmed | Family::Shipping
                );
            let settled = order.delivered_at.is_some()
                && matches!(order.status.family(), Family::Delivered | Family::Archived);
            for line in order
                .lines
                .iter()
                .filter(|l| l.supplier_id == Some(supplier))
            {
                if open {
                    expected += line.supply_price * Decimal::from(line.quantity);
                }
                if settled {
                    let pieces = line.outcome.delivered_quantity.unwrap_or(line.quantity);
                    *delivered.entry(order.id).or_default() +=
                        line.supply_price * Decimal::from(pieces);
                }
            }
        }
    }
    let entries = every_page(|request| async move {
        let found = store
            .statement(supplier, &StatementFilter::default(), request)
            .await
            .expect("statement read");
        found.items
    })
    .await;
    let mut booked: std::collections::HashMap<OrderId, Decimal> = Default::default();
    let mut balance = Decimal::ZERO;
    for entry in entries.iter().rev() {
        let signed = match entry.direction {
            Direction::Credit => entry.amount,
            _ => -entry.amount,
        };
        balance += signed;
        assert_eq!(entry.balance, balance, "entry {} of {supplier}", entry.id);
        if let Some(order) = entry.order_id {
            *booked.entry(order).or_default() += signed;
        }
    }
    booked.retain(|_, amount| !amount.is_zero());
    delivered.retain(|_, amount| !amount.is_zero());
    assert_eq!(
        booked, delivered,
        "statement of {supplier} against the orders"
    );
    let withdrawals = store.withdrawals(supplier).await.expect("withdrawals");
    let withdrawn = crate::domain::earnings::Withdrawn::of(&withdrawals);
    let settled: Decimal = delivered.values().sum();
    assert_eq!(balance, settled - withdrawn.received - withdrawn.pending);
    let served = h
        .engine
        .operator()
        .wallet(supplier)
        .await
        .expect("wallet read");
    assert_eq!(served.expected, expected, "expected of {supplier}");
    assert_eq!(
        served.ready + served.held,
        balance,
        "ready + held of {supplier}"
    );
}
