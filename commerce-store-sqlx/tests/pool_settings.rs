//! The pool and session settings of the SQL stores (`PoolSettings`): applied to the pool, and
//! on PostgreSQL a statement timeout that ends a request waiting on a row lock held elsewhere
//! with a clean `500 server_error`, the pool healthy afterwards.

mod pg;
mod sqlite_file;

use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use commerce_core::model::AccountId;
use commerce_core::store::AccountStore;
use commerce_core::testing::http::Harness;
use commerce_store_sqlx::sqlx::postgres::PgConnectOptions;
use commerce_store_sqlx::sqlx::sqlite::SqliteConnectOptions;
use commerce_store_sqlx::sqlx::{self, AssertSqlSafe, Connection, PgConnection};
use commerce_store_sqlx::{PgStore, PoolSettings, SqliteStore};

#[tokio::test]
async fn sqlite_pool_takes_the_settings() {
    let path = sqlite_file::temp_path("pool_settings");
    let options = SqliteConnectOptions::new().filename(&path);
    let settings = PoolSettings::sqlite()
        .with_max_connections(3)
        .with_acquire_timeout(Duration::from_secs(2))
        .with_idle_timeout(None);
    let store = SqliteStore::connect_with_settings(options, settings)
        .await
        .unwrap();
    store.migrate().await.unwrap();
    let pool = store.pool().clone();
    assert_eq!(pool.options().get_max_connections(), 3);
    assert_eq!(pool.options().get_acquire_timeout(), Duration::from_secs(2));
    assert_eq!(pool.options().get_idle_timeout(), None);
    pool.close().await;
    sqlite_file::remove_files(&path);
}

#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_statement_timeout_ends_a_wait_on_a_held_row_lock() {
    let url = pg::database_url();
    let schema = pg::create_schema(&url).await;
    let options = PgConnectOptions::from_str(&url)
        .unwrap()
        .application_name(&schema);
    let settings = PoolSettings::postgres()
        .with_max_connections(3)
        .with_statement_timeout(Some(Duration::from_millis(800)));
    let store = PgStore::connect_with_settings(options, &schema, settings)
        .await
        .expect("connect PostgreSQL");
    store.migrate().await.expect("migrate PostgreSQL");
    let pool = store.pool().clone();
    let shown: String = sqlx::query_scalar("SHOW statement_timeout")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(shown, "800ms");
    assert_eq!(pool.options().get_max_connections(), 3);
    let h = Harness::bare(Arc::new(store)).await;
    let variant = h.fixture.plain_variant;
    let before = h.available(variant).await;
    let orders_before = h.order_count().await;

    // Another session (not the store's pool) holds the variant's row lock in an open
    // transaction, as a long transaction of the application or a forgotten psql would.
    let mut holder = PgConnection::connect(&url).await.unwrap();
    sqlx::raw_sql(AssertSqlSafe(format!(
        "BEGIN; SELECT available FROM {schema}.variants WHERE id = {} FOR UPDATE;",
        i64::from(variant)
    )))
    .execute(&mut holder)
    .await
    .unwrap();

    let started = Instant::now();
    // Without the timeout the request would wait as long as the lock is held: fail at 10 s.
    let refused = tokio::time::timeout(
        Duration::from_secs(10),
        h.post(
            "sk_demo_marketer",
            "/api/v1/orders",
            &h.order_body(1, "10.00"),
        ),
    )
    .await
    .expect("the statement timeout ends the wait");
    let waited = started.elapsed();
    refused.assert_error(500, "server_error");
    assert!(
        !refused.json()["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .is_empty(),
        "an Arabic message"
    );
    assert!(
        waited >= Duration::from_millis(700) && waited < Duration::from_secs(5),
        "ended by the 800 ms statement timeout, after {waited:?}"
    );

    // The lock's holder goes away; the pool is healthy: the same order now goes through, and
    // nothing of the refused one was kept.
    sqlx::raw_sql("ROLLBACK")
        .execute(&mut holder)
        .await
        .unwrap();
    holder.close().await.unwrap();
    let placed = h
        .post(
            "sk_demo_marketer",
            "/api/v1/orders",
            &h.order_body(1, "10.00"),
        )
        .await;
    assert_eq!(placed.status, 201, "{}", placed.json());
    assert_eq!(h.available(variant).await, before - 1);
    assert_eq!(h.order_count().await, orders_before + 1);
    for _ in 0..5 {
        h.get("sk_demo_marketer", "/api/v1/me")
            .await
            .assert_ok("me");
    }
    assert_eq!(pg::counter_mismatches(&pool).await, 0);
    assert_eq!(
        pg::idle_in_transaction(&url, &schema).await,
        0,
        "pooled sessions left inside a transaction"
    );
    drop(h);
    pg::drop_schema(&url, &[&pool], &schema).await;
}

/// `Engine::run_background`, once its shutdown resolved, closes the pool a store opened
/// (`connect*`): no connection is left to the database. A pool the application gave
/// (`from_pool`) stays open, the application's to close; operations after the close are store
/// errors, never panics, and a second close does nothing more.
#[tokio::test]
async fn sqlite_run_background_closes_the_pool_the_store_opened_only() {
    let (store, path) = sqlite_file::open("close").await;
    let engine = commerce_core::Engine::new(Arc::new(store.clone()));
    engine.run_background(std::future::ready(())).await;
    assert!(store.pool().is_closed(), "the store's own pool is closed");
    closed_store_refuses_operations(&store).await;

    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    let given = SqliteStore::from_pool(pool.clone());
    commerce_core::Engine::new(Arc::new(given))
        .run_background(std::future::ready(()))
        .await;
    assert!(!pool.is_closed(), "the application's pool stays open");
    pool.close().await;
    sqlite_file::remove_files(&path);
}

#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
#[tokio::test]
async fn postgres_run_background_closes_the_pool_the_store_opened_only() {
    let url = pg::database_url();
    let (store, schema) = pg::open(&url).await;
    let engine = commerce_core::Engine::new(Arc::new(store.clone()));
    engine.run_background(std::future::ready(())).await;
    assert!(store.pool().is_closed(), "the store's own pool is closed");
    closed_store_refuses_operations(&store).await;

    let options = PgConnectOptions::from_str(&url)
        .unwrap()
        .options([("search_path", schema.as_str())]);
    let pool = sqlx::PgPool::connect_with(options).await.unwrap();
    let given = PgStore::from_pool(pool.clone());
    commerce_core::Engine::new(Arc::new(given))
        .run_background(std::future::ready(()))
        .await;
    assert!(!pool.is_closed(), "the application's pool stays open");
    pg::drop_schema(&url, &[&pool], &schema).await;
}

/// After `close`: a read is a store error, and closing again is fine.
async fn closed_store_refuses_operations(store: &dyn AccountStore) {
    let read = store.account(AccountId::new(1)).await;
    assert!(read.is_err(), "{read:?}");
    store.close().await.expect("a second close");
}
