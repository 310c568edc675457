//! The cancellation suite (requests and store operations dropped at random points) through
//! the engine on SQLite: a temporary database file per test, seeded with the sandbox.

mod sqlite_file;

use std::sync::Arc;

use commerce_core::testing::http::Harness;

async fn harness() -> Harness {
    let (store, path) = sqlite_file::open("cancellation").await;
    let pool = store.pool().clone();
    Harness::bare(Arc::new(store))
        .await
        .with_cleanup(async move {
            let mismatches = sqlite_file::counter_mismatches(&pool).await;
            pool.close().await;
            sqlite_file::remove_files(&path);
            assert_eq!(mismatches, 0, "order counters out of step with the orders");
        })
}

commerce_core::cancellation_tests!(harness());
