//! A `POST /orders` that stalls between its idempotency begin and its placement past the stale
//! time, on SQLite (a temporary file) and PostgreSQL (a fresh schema; ignored unless
//! `COMMERCE_TEST_POSTGRES_URL` is set): the retry's order is the key's only order; and a
//! `POST /quotes` that stalls after its insert: the retry answers with its quote. See
//! `commerce_core::testing::stalled`.

mod pg;
mod sqlite_file;

use std::sync::Arc;

use commerce_core::testing::http::Harness;
use commerce_core::testing::stalled::{
    a_quote_request_that_outlived_the_stale_time_after_inserting_answers_its_quote as quote_stalled_after,
    a_request_that_outlived_the_stale_time_after_placing_answers_its_order as stalled_after,
    a_request_that_outlived_the_stale_time_answers_409_and_places_nothing as stalled_before,
};
use commerce_store_sqlx::{PgStore, SqliteStore};

/// One case on a fresh SQLite file; the order counters in step afterwards.
async fn on_sqlite<F: Future<Output = Harness>>(case: impl FnOnce(Arc<SqliteStore>) -> F) {
    let (store, path) = sqlite_file::open("stalled").await;
    let pool = store.pool().clone();
    drop(case(Arc::new(store)).await);
    let mismatches = sqlite_file::counter_mismatches(&pool).await;
    pool.close().await;
    sqlite_file::remove_files(&path);
    assert_eq!(mismatches, 0, "order counters out of step with the orders");
}

/// One case on a fresh PostgreSQL schema; the order counters in step afterwards.
async fn on_postgres<F: Future<Output = Harness>>(case: impl FnOnce(Arc<PgStore>) -> F) {
    let url = pg::database_url();
    let (store, schema) = pg::open(&url).await;
    let pool = store.pool().clone();
    drop(case(Arc::new(store)).await);
    let mismatches = pg::counter_mismatches(&pool).await;
    pg::drop_schema(&url, &[&pool], &schema).await;
    assert_eq!(mismatches, 0, "order counters out of step with the orders");
}

#[tokio::test]
async fn sqlite_a_request_stalled_before_placing_places_nothing() {
    on_sqlite(stalled_before).await;
}

#[tokio::test]
async fn sqlite_a_request_stalled_after_placing_answers_its_order() {
    on_sqlite(stalled_after).await;
}

#[tokio::test]
async fn sqlite_a_quote_request_stalled_after_inserting_answers_its_quote() {
    on_sqlite(quote_stalled_after).await;
}

#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
#[tokio::test]
async fn postgres_a_request_stalled_before_placing_places_nothing() {
    on_postgres(stalled_before).await;
}

#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
#[tokio::test]
async fn postgres_a_request_stalled_after_placing_answers_its_order() {
    on_postgres(stalled_after).await;
}

#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
#[tokio::test]
async fn postgres_a_quote_request_stalled_after_inserting_answers_its_quote() {
    on_postgres(quote_stalled_after).await;
}
