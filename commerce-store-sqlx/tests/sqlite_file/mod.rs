//! SQLite test support shared by the test files: a temporary database file per test.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use commerce_store_sqlx::SqliteStore;
use commerce_store_sqlx::sqlx::sqlite::SqliteConnectOptions;
use commerce_store_sqlx::sqlx::{self, SqlitePool};

static NEXT: AtomicU64 = AtomicU64::new(0);

/// A database path under the target's temporary directory, unique within the process;
/// `tag` names the test binary.
pub fn temp_path(tag: &str) -> PathBuf {
    let n = NEXT.fetch_add(1, Ordering::SeqCst);
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("commerce-{tag}-{}-{n}.db", std::process::id()))
}

/// Removes the database file and its WAL and shared-memory files.
pub fn remove_files(path: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(p);
    }
}

/// A migrated store in a new database file, and the file's path.
pub async fn open(tag: &str) -> (SqliteStore, PathBuf) {
    let path = temp_path(tag);
    remove_files(&path);
    let store = SqliteStore::connect_with(SqliteConnectOptions::new().filename(&path))
        .await
        .expect("open SQLite");
    store.migrate().await.expect("migrate SQLite");
    (store, path)
}

/// Rows where the order counters and earnings sums differ from the orders: 0 when in step.
pub const COUNTER_MISMATCHES: &str = include_str!("../queries/counter_mismatches.sql");

/// [`COUNTER_MISMATCHES`] on `pool`.
pub async fn counter_mismatches(pool: &SqlitePool) -> i64 {
    sqlx::query_scalar(COUNTER_MISMATCHES)
        .fetch_one(pool)
        .await
        .expect("counters compared")
}

/// The sandbox on a fresh database file behind the bare engine, for the HTTP-level suites.
/// After the case: the counters equal the orders, and the files are removed.
pub async fn harness(tag: &str) -> commerce_core::testing::http::Harness {
    let (store, path) = open(tag).await;
    let pool = store.pool().clone();
    commerce_core::testing::http::Harness::bare(std::sync::Arc::new(store))
        .await
        .with_cleanup(async move {
            let mismatches = counter_mismatches(&pool).await;
            pool.close().await;
            remove_files(&path);
            assert_eq!(mismatches, 0, "order counters out of step with the orders");
        })
}
