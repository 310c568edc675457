//! The end of the soak: what the store kept, checked against what the clients learnt.

use std::collections::{HashMap, HashSet};

use commerce::model::*;

use super::{Setup, available};
use crate::common;

/// What the clients learnt about one account's orders.
#[derive(Default)]
pub(super) struct Ledger {
    /// Every order id answered 201 (first answers and replays alike, once).
    pub(super) created: HashSet<OrderId>,
    /// Answers marked `Idempotent-Replayed: true`.
    pub(super) replays: u64,
    /// Replays whose order differs from the key's first answer (must stay 0).
    pub(super) replay_mismatches: u64,
    /// Cancels answered 200.
    pub(super) cancels_ok: u64,
    /// Cancels disconnected (outcome unknown to the client).
    pub(super) cancels_disconnected: u64,
    /// Disconnected orders still without a final answer at the end (must stay 0).
    pub(super) unresolved: u64,
}

/// Checks what the store kept against what the run did; returns the failures.
pub(super) async fn reconcile(
    setup: &Setup,
    ledgers: &[Ledger],
    months: &[BillingMonth],
) -> Vec<String> {
    let engine = &setup.engines[0];
    let store = &**engine.store();
    let mut failures = Vec::new();
    let mut check = |ok: bool, line: String| {
        println!("  {} {line}", if ok { "ok  " } else { "FAIL" });
        if !ok {
            failures.push(line);
        }
    };
    let mut reserved: HashMap<VariantId, i64> = HashMap::new();
    for ((account, _), ledger) in setup.accounts.iter().zip(ledgers) {
        let orders = common::all_orders_of(store, *account).await;
        let stored: HashSet<OrderId> = orders.iter().map(|o| o.id).collect();
        check(
            stored == ledger.created,
            format!(
                "account {account}: orders answered 201 (distinct) {} = orders stored {} ({} replays; {} answered but not stored, {} stored but never answered)",
                ledger.created.len(),
                stored.len(),
                ledger.replays,
                ledger.created.difference(&stored).count(),
                stored.difference(&ledger.created).count(),
            ),
        );
        check(
            ledger.replay_mismatches == 0 && ledger.unresolved == 0,
            format!(
                "account {account}: replays naming another order {}, disconnected orders never resolved {}",
                ledger.replay_mismatches, ledger.unresolved
            ),
        );
        for order in &orders {
            if order.status.family() != Family::Cancelled {
                for line in &order.lines {
                    *reserved.entry(line.variant_id).or_default() += line.quantity;
                }
            }
        }
        let cancelled = orders
            .iter()
            .filter(|o| o.status == OrderStatus::RejectedByMarketer)
            .count() as u64;
        check(
            (ledger.cancels_ok..=ledger.cancels_ok + ledger.cancels_disconnected)
                .contains(&cancelled),
            format!(
                "account {account}: cancels answered 200 {} <= orders rejected_by_marketer {cancelled} <= those + disconnected cancels {}",
                ledger.cancels_ok, ledger.cancels_disconnected
            ),
        );
        let mut metered = 0;
        for month in months {
            metered += engine
                .operator()
                .meter(*account, month)
                .await
                .expect("meter read")
                .order_operations;
        }
        let api_orders = stored.len() as u64;
        check(
            metered == api_orders + cancelled,
            format!(
                "account {account}: meter order operations {metered} = API orders {api_orders} + API cancels {cancelled}"
            ),
        );
        let (served, recomputed) = common::wallet_and_recomputation(engine, *account).await;
        check(
            served == recomputed,
            format!(
                "account {account}: wallet served = recomputed from {} orders (expected {}, held {}, ready {}, commission {}){}",
                orders.len(),
                served.expected,
                served.held,
                served.ready,
                served.total_commission,
                if served == recomputed {
                    String::new()
                } else {
                    format!("; recomputed: {recomputed:?}; served: {served:?}")
                }
            ),
        );
    }
    for (variant, initial) in &setup.initial_stock {
        let now = available(store, *variant).await;
        let held = reserved.get(variant).copied().unwrap_or(0);
        check(
            now + held == *initial,
            format!("variant {variant}: stock {now} + reserved {held} = initial {initial}"),
        );
    }
    let (mismatches, compared) = common::sql::counter_mismatches(setup.stores[0].pool()).await;
    check(
        mismatches.is_empty(),
        format!(
            "order counters = COUNT(*) (and earnings sums) per account and family: {compared} rows compared, {} differ {}",
            mismatches.len(),
            mismatches.join(" ")
        ),
    );
    failures
}
