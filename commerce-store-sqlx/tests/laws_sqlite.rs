//! The laws of stock and money (`commerce_core::testing::laws`) on SQLite: a fresh database
//! file per script. `LAWS_CASES`, `LAWS_STEPS`, `LAWS_SKIP`, `LAWS_SHRINK` tune a run.

mod sqlite_file;

use commerce_core::testing::laws::check_laws;

/// 16 scripts of up to 30 steps.
#[test]
fn the_laws_of_stock_and_money_hold_on_sqlite() {
    check_laws(16, 30, || sqlite_file::harness("laws"));
}
