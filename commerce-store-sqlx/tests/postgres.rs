//! The store conformance suite and fault-injection tests on PostgreSQL, each test in a fresh
//! schema (dropped afterwards).
//!
//! Runs when `COMMERCE_TEST_POSTGRES_URL` (or `DATABASE_URL`) names a database the tests may
//! create schemas in, e.g.
//! `COMMERCE_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test cargo test -p commerce-store-sqlx`.
//! Without it every test passes without running and one line says so.

mod common;

use std::io::Write;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Once};

use commerce_core::store::Store;
use commerce_core::testing::store_cases::TestStore;
use commerce_store_sqlx::PgStore;
use commerce_store_sqlx::sqlx::postgres::PgConnectOptions;
use commerce_store_sqlx::sqlx::{self, AssertSqlSafe, Connection, PgConnection, PgPool};

static NEXT: AtomicU64 = AtomicU64::new(0);
static NOT_RUN: Once = Once::new();

fn database_url() -> Option<String> {
    let url = std::env::var("COMMERCE_TEST_POSTGRES_URL")
        .or_else(|_| std::env::var("DATABASE_URL"))
        .ok()
        .filter(|u| !u.trim().is_empty());
    if url.is_none() {
        NOT_RUN.call_once(|| {
            // Written past the test harness's capture so that it is seen once.
            let _ = writeln!(
                std::io::stderr(),
                "commerce-store-sqlx: PostgreSQL tests NOT RUN (they pass vacuously): set \
                 COMMERCE_TEST_POSTGRES_URL=postgres://user@host:5432/db (or DATABASE_URL), \
                 e.g. `source .ci/postgres.sh && cargo test -p commerce-store-sqlx`"
            );
        });
    }
    url
}

/// A store in a new schema of the test database, and the schema's name.
async fn open(url: &str) -> (PgStore, String) {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let schema = format!(
        "commerce_test_{}_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::SeqCst),
        nanos % 1_000_000_000
    );
    let mut admin = PgConnection::connect(url)
        .await
        .expect("connect PostgreSQL");
    sqlx::raw_sql(AssertSqlSafe(format!("CREATE SCHEMA {schema}")))
        .execute(&mut admin)
        .await
        .expect("create schema");
    admin.close().await.ok();
    let options = PgConnectOptions::from_str(url)
        .expect("PostgreSQL URL")
        .options([("search_path", schema.as_str())]);
    let store = PgStore::connect_with(options)
        .await
        .expect("connect PostgreSQL");
    store.migrate().await.expect("migrate PostgreSQL");
    (store, schema)
}

async fn drop_schema(url: &str, pool: &PgPool, schema: &str) {
    pool.close().await;
    if let Ok(mut admin) = PgConnection::connect(url).await {
        let _ = sqlx::raw_sql(AssertSqlSafe(format!("DROP SCHEMA {schema} CASCADE")))
            .execute(&mut admin)
            .await;
        let _ = admin.close().await;
    }
}

async fn fresh_store() -> Option<TestStore> {
    let url = database_url()?;
    let (store, schema) = open(&url).await;
    let pool = store.pool().clone();
    Some(TestStore::with_cleanup(
        Arc::new(store) as Arc<dyn Store>,
        async move { drop_schema(&url, &pool, &schema).await },
    ))
}

commerce_core::store_conformance_tests!(fresh_store());

struct Db(PgPool);

impl common::Database for Db {
    fn exec(&self, sql: &'static str) -> common::Fut<'_, ()> {
        Box::pin(async move {
            sqlx::raw_sql(sql).execute(&self.0).await.expect("exec");
        })
    }
    fn count(&self, sql: &'static str) -> common::Fut<'_, i64> {
        Box::pin(async move {
            sqlx::query_scalar(sql)
                .fetch_one(&self.0)
                .await
                .expect("count")
        })
    }
    fn close(&self) -> common::Fut<'_, ()> {
        Box::pin(self.0.close())
    }
    fn fail_meter_sql(&self) -> &'static str {
        "CREATE OR REPLACE FUNCTION injected_failure() RETURNS trigger LANGUAGE plpgsql AS \
         $$ BEGIN RAISE EXCEPTION 'injected failure'; END $$; \
         CREATE TRIGGER fail_meter BEFORE INSERT OR UPDATE ON meter_order_operations \
         FOR EACH ROW EXECUTE FUNCTION injected_failure();"
    }
    fn fail_timeline_sql(&self) -> &'static str {
        "CREATE OR REPLACE FUNCTION injected_failure() RETURNS trigger LANGUAGE plpgsql AS \
         $$ BEGIN RAISE EXCEPTION 'injected failure'; END $$; \
         CREATE TRIGGER fail_timeline BEFORE INSERT ON order_timeline \
         FOR EACH ROW EXECUTE FUNCTION injected_failure();"
    }
    fn disarm_sql(&self) -> &'static str {
        "DROP TRIGGER IF EXISTS fail_meter ON meter_order_operations; \
         DROP TRIGGER IF EXISTS fail_timeline ON order_timeline;"
    }
}

macro_rules! fault_tests {
    ($($case:ident),+ $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() {
                let Some(url) = database_url() else { return };
                let (store, schema) = open(&url).await;
                let db = Db(store.pool().clone());
                common::$case(&store, &db).await;
                drop_schema(&url, &db.0, &schema).await;
            }
        )+
    };
}

fault_tests!(
    place_order_failing_at_its_last_write_leaves_nothing,
    cancel_failing_at_its_last_insert_changes_nothing,
    closed_pool_surfaces_as_backend_errors,
    sub_piastre_amounts_are_refused,
);
