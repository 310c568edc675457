//! The HTTP conformance suite (every endpoint, every error and the `race_*` cases) through the
//! bare engine on SQLite: a temporary database file per test, seeded with the sandbox.

mod sqlite_file;

use std::sync::Arc;

use commerce_core::testing::http::Harness;

async fn harness() -> Harness {
    let (store, path) = sqlite_file::open("http").await;
    let pool = store.pool().clone();
    Harness::bare(Arc::new(store))
        .await
        .with_cleanup(async move {
            // The order counters equal COUNT(*) after every case (races included).
            let mismatches = sqlite_file::counter_mismatches(&pool).await;
            pool.close().await;
            sqlite_file::remove_files(&path);
            assert_eq!(mismatches, 0, "order counters out of step with the orders");
        })
}

commerce_core::http_conformance_tests!(harness());
