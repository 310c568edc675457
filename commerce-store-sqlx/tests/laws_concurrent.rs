//! The laws of stock and money under concurrency (`commerce_core::testing::laws::
//! check_laws_concurrently`): 8 tasks of random operations at once on one engine, then the
//! laws that hold whatever the interleaving, checked on the end state. `LAWS_SEED` picks
//! the operations (default 1).

mod pg;
mod sqlite_file;

use commerce_core::testing::laws::check_laws_concurrently;

fn seed() -> u64 {
    std::env::var("LAWS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
}

/// 8 tasks of 60 operations on SQLite.
#[test]
fn the_laws_hold_under_concurrency_on_sqlite() {
    check_laws_concurrently(8, 60, seed(), || sqlite_file::harness("laws-concurrent"));
}

/// 8 tasks of 60 operations on PostgreSQL.
#[test]
#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
fn the_laws_hold_under_concurrency_on_postgres() {
    check_laws_concurrently(8, 60, seed(), pg::harness);
}
