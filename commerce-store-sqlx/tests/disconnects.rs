//! Real HTTP clients that disconnect mid-request, against the sandbox served by axum on
//! 127.0.0.1, on each store: memory, SQLite (a temporary file) and PostgreSQL (a fresh schema;
//! ignored unless `COMMERCE_TEST_POSTGRES_URL` is set). See
//! `commerce_core::testing::cancellation::clients_disconnecting_mid_request`.

mod pg;
mod sqlite_file;

use std::net::SocketAddr;
use std::sync::Arc;

use commerce_core::Engine;
use commerce_core::store::{MemoryStore, prelude::*};
use commerce_core::testing::cancellation::clients_disconnecting_mid_request;
use commerce_core::testing::http::Harness;

/// Serves `engine` with axum on a free port of 127.0.0.1 until the test's runtime ends.
async fn serve(engine: Engine) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1");
    let addr = listener.local_addr().expect("address");
    let app = commerce_axum::router(engine);
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

async fn run(store: Arc<dyn Store>) -> Harness {
    let harness = Harness::bare(store).await;
    let addr = serve(harness.engine.clone()).await;
    clients_disconnecting_mid_request(&harness, addr).await;
    harness
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn memory_survives_clients_that_disconnect() {
    run(Arc::new(MemoryStore::new())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_survives_clients_that_disconnect() {
    let (store, path) = sqlite_file::open("disconnects").await;
    let pool = store.pool().clone();
    run(Arc::new(store)).await;
    let mismatches = sqlite_file::counter_mismatches(&pool).await;
    pool.close().await;
    sqlite_file::remove_files(&path);
    assert_eq!(mismatches, 0, "order counters out of step with the orders");
}

#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_survives_clients_that_disconnect() {
    let url = pg::database_url();
    let (store, schema) = pg::open(&url).await;
    let pool = store.pool().clone();
    run(Arc::new(store)).await;
    let mismatches = pg::counter_mismatches(&pool).await;
    let idle_in_transaction = pg::idle_in_transaction(&url, &schema).await;
    pg::drop_schema(&url, &[&pool], &schema).await;
    assert_eq!(mismatches, 0, "order counters out of step with the orders");
    assert_eq!(
        idle_in_transaction, 0,
        "pooled sessions left inside a transaction"
    );
}
