//! The laws of stock and money (`commerce_core::testing::laws`) on PostgreSQL: a fresh
//! schema per script (dropped afterwards). Runs when `COMMERCE_TEST_POSTGRES_URL` is set;
//! without it the test is reported as ignored (see `build.rs`). `LAWS_CASES`, `LAWS_STEPS`,
//! `LAWS_SKIP`, `LAWS_SHRINK` tune a run.

mod pg;

use commerce_core::testing::laws::check_laws;

/// 16 scripts of up to 30 steps.
#[test]
#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
fn the_laws_of_stock_and_money_hold_on_postgres() {
    check_laws(16, 30, pg::harness);
}
