//! The cancellation suite (requests and store operations dropped at random points) through
//! the engine on PostgreSQL, each test in a fresh schema seeded with the sandbox. Afterwards no
//! session of the test's pool may sit `idle in transaction` (`pg_stat_activity`).
//!
//! Runs when `COMMERCE_TEST_POSTGRES_URL` (or `DATABASE_URL`) is set; ignored otherwise.

mod pg;

use std::sync::Arc;

use commerce_core::testing::http::Harness;

async fn harness() -> Harness {
    let url = pg::database_url();
    let (store, schema) = pg::open(&url).await;
    let pool = store.pool().clone();
    Harness::bare(Arc::new(store))
        .await
        .with_cleanup(async move {
            let mismatches = pg::counter_mismatches(&pool).await;
            let idle_in_transaction = pg::idle_in_transaction(&url, &schema).await;
            pg::drop_schema(&url, &[&pool], &schema).await;
            assert_eq!(mismatches, 0, "order counters out of step with the orders");
            assert_eq!(
                idle_in_transaction, 0,
                "pooled sessions left inside a transaction"
            );
        })
}

commerce_core::cancellation_tests!(
    #[cfg_attr(
        not(commerce_postgres_tests),
        ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
    )]
    harness()
);
