//! The HTTP conformance suite (every endpoint, every error and the `race_*` cases) through the
//! bare engine on PostgreSQL, each test in a fresh schema seeded with the sandbox (dropped
//! afterwards).
//!
//! Runs when `COMMERCE_TEST_POSTGRES_URL` (or `DATABASE_URL`) is set; without it every test
//! is reported as ignored (see `build.rs`).

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
            // The order counters equal COUNT(*) after every case (races included).
            let mismatches = pg::counter_mismatches(&pool).await;
            pg::drop_schema(&url, &[&pool], &schema).await;
            assert_eq!(mismatches, 0, "order counters out of step with the orders");
        })
}

commerce_core::http_conformance_tests!(
    #[cfg_attr(
        not(commerce_postgres_tests),
        ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
    )]
    harness()
);
