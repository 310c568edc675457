//! The wallet check every suite shares: the figures the engine serves equal a recomputation
//! from every order and withdrawal of the account.

use super::http::Harness;
use crate::domain::wallet::PayoutRules;
use crate::domain::wallet::WalletFigures;
use crate::model::*;
use crate::store::Store;

/// Every order of an account, all pages, newest first.
pub async fn all_orders(h: &Harness, account: AccountId) -> Vec<Order> {
    all_orders_of(&**h.engine.store(), account).await
}

/// Every order of an account in `store`, all pages, newest first.
pub async fn all_orders_of(store: &dyn Store, account: AccountId) -> Vec<Order> {
    let mut orders = Vec::new();
    for page in 1.. {
        let request = PageRequest {
            page,
            per_page: 100,
        };
        let found = store
            .orders(account, &OrderFilter::default(), request)
            .await
            .expect("orders listed");
        let done = found.items.len() < 100;
        orders.extend(found.items);
        if done {
            break;
        }
    }
    orders
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
    let rules = PayoutRules {
        now: h.engine.now(),
        hold_days: h.engine.config().hold_days,
    };
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
