//! Orders stored before their earnings were kept (the columns NULL, the sums zero) are booked
//! by `migrate()` from the orders themselves: afterwards the sums equal the orders and the
//! wallet equals the recomputation. SQLite always; PostgreSQL when configured.

mod pg;
mod sqlite_file;

use std::future::Future;
use std::sync::Arc;

use commerce_core::testing::http::Harness;
use commerce_core::testing::wallet::assert_wallet_matches_orders;
use commerce_store_sqlx::sqlx;

/// SQL that forgets every booking, as a database migrated from before the earnings columns.
const FORGET: &str = "UPDATE orders SET earnings_net = NULL, earnings_commission = NULL; \
     UPDATE account_order_counts SET net = 0, commission = 0";

/// Forgets every booking with `forget`, checks that the wallet changed, books again with
/// `migrate`, and checks that the wallets are what they were and equal the recomputation.
async fn forget_then_book<F, M>(h: &Harness, forget: F, migrate: M)
where
    F: Future<Output = ()>,
    M: Future<Output = ()>,
{
    let wallet = || async {
        h.engine
            .operator()
            .wallet(h.fixture.marketer_a)
            .await
            .unwrap()
    };
    let before = wallet().await;
    forget.await;
    assert_ne!(wallet().await, before, "the bookings are gone");
    migrate.await;
    assert_eq!(wallet().await, before);
    for account in [h.fixture.marketer_a, h.fixture.marketer_b] {
        assert_wallet_matches_orders(h, account).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_books_orders_stored_before_earnings_were_kept() {
    let (store, path) = sqlite_file::open("backfill").await;
    let pool = store.pool().clone();
    let h = Harness::bare(Arc::new(store.clone())).await;
    let forget = async {
        sqlx::raw_sql(FORGET)
            .execute(&pool)
            .await
            .expect("bookings forgotten");
    };
    let migrate = async { store.migrate().await.expect("migrate books the orders") };
    forget_then_book(&h, forget, migrate).await;
    assert_eq!(sqlite_file::counter_mismatches(&pool).await, 0);
    pool.close().await;
    sqlite_file::remove_files(&path);
}

#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_books_orders_stored_before_earnings_were_kept() {
    let url = pg::database_url();
    let (store, schema) = pg::open(&url).await;
    let pool = store.pool().clone();
    let h = Harness::bare(Arc::new(store.clone())).await;
    let forget = async {
        sqlx::raw_sql(FORGET)
            .execute(&pool)
            .await
            .expect("bookings forgotten");
    };
    let migrate = async { store.migrate().await.expect("migrate books the orders") };
    forget_then_book(&h, forget, migrate).await;
    let mismatches = pg::counter_mismatches(&pool).await;
    pg::drop_schema(&url, &[&pool], &schema).await;
    assert_eq!(mismatches, 0);
}
