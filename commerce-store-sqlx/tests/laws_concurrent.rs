//! The laws of stock and money under concurrency (`commerce_core::testing::laws::
//! check_laws_concurrently`): 8 tasks of random operations at once on one engine, then the
//! laws that hold whatever the interleaving, checked on the end state; and the supplier-money
//! race ([`Race::SupplierMoney`]): withdrawals of a supplier's whole ready money against
//! corrections of its ready deliveries. `LAWS_SEED` picks the operations (default: seeds 1 to
//! 4, one run each).

mod pg;
mod sqlite_file;

use commerce_core::testing::laws::{Race, check_laws_concurrently, check_laws_racing};

/// The seeds a run races: `LAWS_SEED` alone when set, else 1 to 4 (seed 2 of these found a
/// deadlock PostgreSQL ended with a 500 before writes were retried).
fn seeds() -> Vec<u64> {
    match std::env::var("LAWS_SEED").ok().and_then(|s| s.parse().ok()) {
        Some(seed) => vec![seed],
        None => (1..=4).collect(),
    }
}

/// 8 tasks of 60 operations on SQLite.
#[test]
fn the_laws_hold_under_concurrency_on_sqlite() {
    for seed in seeds() {
        check_laws_concurrently(8, 60, seed, || sqlite_file::harness("laws-concurrent"));
    }
}

/// 8 tasks of 60 operations on PostgreSQL.
#[test]
#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
fn the_laws_hold_under_concurrency_on_postgres() {
    for seed in seeds() {
        check_laws_concurrently(8, 60, seed, pg::harness);
    }
}

/// The supplier-money race, 8 tasks of 40 operations on SQLite.
#[test]
fn a_supplier_withdrawal_takes_only_ready_money_under_concurrency_on_sqlite() {
    for seed in seeds() {
        check_laws_racing(8, 40, seed, Race::SupplierMoney, || {
            sqlite_file::harness("laws-supplier-money")
        });
    }
}

/// The supplier-money race, 8 tasks of 40 operations on PostgreSQL: with the supplier's
/// totals read unlocked by a withdrawal, a correction that commits between that read and the
/// withdrawal's write leaves a withdrawal that took held money.
#[test]
#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
fn a_supplier_withdrawal_takes_only_ready_money_under_concurrency_on_postgres() {
    for seed in seeds() {
        check_laws_racing(8, 40, seed, Race::SupplierMoney, pg::harness);
    }
}
