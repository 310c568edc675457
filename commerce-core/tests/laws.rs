//! The laws of stock and money (`commerce_core::testing::laws`) on the in-memory store: random
//! scripts of orders, moves with outcome counts, corrections, quotes, stock adjustments,
//! product moves, withdrawals and clock moves, every figure compared with a reference model
//! after every step. A failure prints the shrunk script and the law it broke.
//!
//! `LAWS_CASES`, `LAWS_STEPS`, `LAWS_SKIP` (laws to leave unchecked, comma-separated names or
//! prefixes) and `LAWS_SHRINK` tune a run.

use std::sync::Arc;

use commerce_core::store::MemoryStore;
use commerce_core::testing::http::Harness;
use commerce_core::testing::laws::{Race, Scripts, check_laws, check_laws_of, check_laws_racing};

/// 512 scripts of up to 50 steps.
#[test]
fn the_laws_of_stock_and_money_hold_on_the_memory_store() {
    check_laws(512, 50, || Harness::bare(Arc::new(MemoryStore::new())));
}

/// 512 scripts of up to 30 steps of placing, moving, correcting, cancelling and counting
/// shelves empty ([`Scripts::Settling`]): where returned pieces are sold out and a correction
/// takes them back.
#[test]
fn the_laws_hold_where_settling_selling_out_and_correcting_meet() {
    check_laws_of(512, 30, Scripts::Settling, || {
        Harness::bare(Arc::new(MemoryStore::new()))
    });
}

/// The supplier-money race on the memory store: 8 tasks of 40 operations, seeds 1 to 4
/// (withdrawals of the supplier's whole ready money against corrections of its deliveries).
#[test]
fn a_supplier_withdrawal_takes_only_ready_money_under_concurrency_on_the_memory_store() {
    for seed in 1..=4 {
        check_laws_racing(8, 40, seed, Race::SupplierMoney, || {
            Harness::bare(Arc::new(MemoryStore::new()))
        });
    }
}

/// The long run: 20,000 scripts of up to 50 steps. Run it with
/// `cargo test -p commerce-core --features testing --release --test laws -- --ignored the_long_run`
/// (`LAWS_CASES` changes the count).
#[test]
#[ignore = "the long run: 20,000 scripts (see its doc comment)"]
fn the_long_run_of_the_laws_on_the_memory_store() {
    check_laws(20_000, 50, || Harness::bare(Arc::new(MemoryStore::new())));
}
