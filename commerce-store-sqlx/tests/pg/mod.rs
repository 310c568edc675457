//! PostgreSQL test support shared by the test files: the database URL and a fresh schema per
//! test, dropped afterwards.
//!
//! Every PostgreSQL test carries
//! `#[cfg_attr(not(commerce_postgres_tests), ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)")]`:
//! without `COMMERCE_TEST_POSTGRES_URL` at build time, `build.rs` leaves
//! `cfg(commerce_postgres_tests)` unset and cargo reports the tests as ignored, never as passed.

#![allow(dead_code)]

use std::io::Write;
use std::str::FromStr;
use std::sync::Once;
use std::sync::atomic::{AtomicU64, Ordering};

use commerce_store_sqlx::PgStore;
use commerce_store_sqlx::sqlx::postgres::PgConnectOptions;
use commerce_store_sqlx::sqlx::{self, AssertSqlSafe, Connection, PgConnection, PgPool};

static NEXT: AtomicU64 = AtomicU64::new(0);
static ANNOUNCED: Once = Once::new();

/// `COMMERCE_TEST_POSTGRES_URL`. One line on stderr (once per test
/// binary) says that the PostgreSQL tests run, and where. Panics when neither is set: a test
/// that gets here was built with a URL (or run with `--ignored`) and must not pass without
/// running.
pub fn database_url() -> String {
    let url = std::env::var("COMMERCE_TEST_POSTGRES_URL")
        .ok()
        .filter(|u| !u.trim().is_empty())
        .expect(
            "COMMERCE_TEST_POSTGRES_URL is not set: build and run the \
             PostgreSQL tests with it, e.g. \
             COMMERCE_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test \
             cargo test -p commerce-store-sqlx",
        );
    ANNOUNCED.call_once(|| {
        let place = PgConnectOptions::from_str(&url).map_or_else(
            |_| "an unparsable URL".to_owned(),
            |o| {
                format!(
                    "{}@{}:{}/{}",
                    o.get_username(),
                    o.get_host(),
                    o.get_port(),
                    o.get_database().unwrap_or_default()
                )
            },
        );
        // Written past the test harness's capture so that it is seen once.
        let _ = writeln!(
            std::io::stderr(),
            "commerce-store-sqlx: PostgreSQL tests RUNNING on {place}, a fresh schema per test"
        );
    });
    url
}

/// A new, empty schema in the test database: its name, unique across processes and runs.
pub async fn create_schema(url: &str) -> String {
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
    schema
}

/// A store (its own pool) in `schema`, migrated. Its sessions commit without waiting for the
/// WAL to reach the disk (`synchronous_commit = off`): a commit is visible and ordered exactly
/// as before, only not durable through a crash of the server, which no test makes; on a disk
/// whose flush takes milliseconds, the tests' thousands of commits in sequence stop waiting on
/// it.
pub async fn connect(url: &str, schema: &str) -> PgStore {
    let options = PgConnectOptions::from_str(url)
        .expect("PostgreSQL URL")
        .application_name(schema)
        .options([("synchronous_commit", "off")]);
    let store = PgStore::connect_with_schema(options, schema)
        .await
        .expect("connect PostgreSQL");
    store.migrate().await.expect("migrate PostgreSQL");
    store
}

/// A store in a new schema of the test database, and the schema's name.
pub async fn open(url: &str) -> (PgStore, String) {
    let schema = create_schema(url).await;
    let store = connect(url, &schema).await;
    (store, schema)
}

/// Closes `pools` and drops `schema` with everything in it.
pub async fn drop_schema(url: &str, pools: &[&PgPool], schema: &str) {
    for pool in pools {
        pool.close().await;
    }
    if let Ok(mut admin) = PgConnection::connect(url).await {
        let _ = sqlx::raw_sql(AssertSqlSafe(format!("DROP SCHEMA {schema} CASCADE")))
            .execute(&mut admin)
            .await;
        let _ = admin.close().await;
    }
}

/// Rows where the order counters and earnings sums differ from the orders: 0 when in step.
pub const COUNTER_MISMATCHES: &str = include_str!("../queries/counter_mismatches.sql");

/// [`COUNTER_MISMATCHES`] on `pool`.
pub async fn counter_mismatches(pool: &PgPool) -> i64 {
    sqlx::query_scalar(COUNTER_MISMATCHES)
        .fetch_one(pool)
        .await
        .expect("counters compared")
}

/// Sessions of the test's pools (named after `schema`) that sit inside a transaction with no
/// statement running, waited on for up to 5 s (a connection being closed after a cancelled
/// operation may still be ending): 0 when none is left.
pub async fn idle_in_transaction(url: &str, schema: &str) -> i64 {
    let mut admin = PgConnection::connect(url)
        .await
        .expect("connect PostgreSQL");
    let mut count = 0;
    for _ in 0..50 {
        count = sqlx::query_scalar(
            "SELECT COUNT(*) FROM pg_stat_activity \
             WHERE application_name = $1 AND state LIKE 'idle in transaction%'",
        )
        .bind(schema)
        .fetch_one(&mut admin)
        .await
        .expect("pg_stat_activity read");
        if count == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let _ = admin.close().await;
    count
}

/// The sandbox on a fresh schema behind the bare engine, for the HTTP-level suites. After the
/// case: the counters equal the orders, no session of the pool sits `idle in transaction`, and
/// the schema is dropped.
pub async fn harness() -> commerce_core::testing::http::Harness {
    let url = database_url();
    let (store, schema) = open(&url).await;
    let pool = store.pool().clone();
    commerce_core::testing::http::Harness::bare(std::sync::Arc::new(store))
        .await
        .with_cleanup(async move {
            let mismatches = counter_mismatches(&pool).await;
            let idle = idle_in_transaction(&url, &schema).await;
            drop_schema(&url, &[&pool], &schema).await;
            assert_eq!(mismatches, 0, "order counters out of step with the orders");
            assert_eq!(idle, 0, "pooled sessions left inside a transaction");
        })
}
