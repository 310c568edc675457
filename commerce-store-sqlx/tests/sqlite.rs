//! The store conformance suite and fault-injection tests on SQLite (a temporary database file
//! per test; nothing to set up).

mod common;
mod sqlite_file;

use std::sync::Arc;

use commerce_core::store::prelude::*;
use commerce_core::testing::store_cases::TestStore;
use commerce_store_sqlx::SqliteStore;
use commerce_store_sqlx::sqlx::{self, SqlitePool};
use sqlite_file::remove_files;

async fn open() -> (SqliteStore, std::path::PathBuf) {
    sqlite_file::open("store").await
}

async fn fresh_store() -> TestStore {
    let (store, path) = open().await;
    let pool = store.pool().clone();
    TestStore::with_cleanup(Arc::new(store) as Arc<dyn Store>, async move {
        let mismatches = sqlite_file::counter_mismatches(&pool).await;
        pool.close().await;
        remove_files(&path);
        assert_eq!(mismatches, 0, "order counters out of step with the orders");
    })
}

commerce_core::store_conformance_tests!(fresh_store());

struct Db(SqlitePool);

impl common::Database for Db {
    pool_access!();
    fn fail_meter_sql(&self) -> &'static str {
        "CREATE TRIGGER fail_meter_insert BEFORE INSERT ON meter_order_operations \
         BEGIN SELECT RAISE(ABORT, 'injected failure'); END; \
         CREATE TRIGGER fail_meter_update BEFORE UPDATE ON meter_order_operations \
         BEGIN SELECT RAISE(ABORT, 'injected failure'); END;"
    }
    fn fail_event_sql(&self) -> &'static str {
        "CREATE TRIGGER fail_event BEFORE INSERT ON webhook_deliveries \
         BEGIN SELECT RAISE(ABORT, 'injected failure'); END;"
    }
    fn disarm_sql(&self) -> &'static str {
        "DROP TRIGGER IF EXISTS fail_meter_insert; DROP TRIGGER IF EXISTS fail_meter_update; \
         DROP TRIGGER IF EXISTS fail_event;"
    }
}

macro_rules! fault_tests {
    ($($case:ident),+ $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() {
                let (store, path) = open().await;
                let db = Db(store.pool().clone());
                common::$case(&store, &db).await;
                db.0.close().await;
                remove_files(&path);
            }
        )+
    };
}

fault_tests!(
    place_order_failing_at_its_last_write_leaves_nothing,
    cancel_failing_at_its_event_changes_nothing,
    closed_pool_surfaces_as_backend_errors,
    sub_piastre_amounts_are_refused,
);

#[tokio::test]
async fn in_memory_database_works_through_the_url() {
    let store = SqliteStore::connect("sqlite::memory:").await.unwrap();
    store.migrate().await.unwrap();
    // Migrating twice is a no-op.
    store.migrate().await.unwrap();
    commerce_core::testing::store_cases::place_order_round_trips_and_reserves_stock(&store).await;
}

#[tokio::test]
async fn a_file_database_keeps_its_data_across_reopening() {
    let (store, path) = open().await;
    let governorate = store.insert_governorate("القاهرة".into()).await.unwrap();
    store.pool().close().await;
    let reopened = SqliteStore::connect(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    reopened.migrate().await.unwrap();
    assert_eq!(reopened.governorates().await.unwrap(), vec![governorate]);
    reopened.pool().close().await;
    remove_files(&path);
}

/// The crowd of slow accounts (`commerce_core::testing::crowd`) on SQLite, one dispatcher:
/// 20 accounts of 10 endpoints answering after 6 s, kept full of pings; no account holds more
/// than its limit and a polite account's events arrive with p99 <= 2 s (the claim is the SQL
/// stores' shared code, run here under SQLite's single writer).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_crowd_of_slow_accounts_leaves_room_for_a_polite_one() {
    let (store, path) = open().await;
    let pool = store.pool().clone();
    let engine = commerce_core::Engine::builder(Arc::new(store))
        .config(commerce_core::sandbox::config())
        .build()
        .expect("valid settings");
    commerce_core::testing::crowd::a_crowd_of_slow_accounts_leaves_room_for_a_polite_one(&[engine])
        .await;
    pool.close().await;
    remove_files(&path);
}
