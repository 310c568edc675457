//! The sqlx store's `place_order` on SQLite (a file in the temp directory) and on PostgreSQL,
//! each against a raw sqlx transaction inserting the same rows (see `common/sql.rs`). The
//! PostgreSQL pair runs when `COMMERCE_TEST_POSTGRES_URL` is set (in a fresh database
//! `commerce_bench` on that server) and prints a line saying it was skipped otherwise.
//!
//! ```text
//! COMMERCE_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test \
//!   cargo bench -p commerce-dev --features sqlx --bench stores -- --warm-up-time 1 --measurement-time 3
//! ```
//!
//! No goal: after criterion's output the bench reports one `ratio` line per database.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use commerce_core::model::NewOrder;
use commerce_core::store::prelude::*;
use common::report::{Goal, run_criterion};
use criterion::{Criterion, criterion_group};

/// Order numbers unique across the whole run.
static NEXT: AtomicU64 = AtomicU64::new(0);

fn next_order(template: &NewOrder) -> NewOrder {
    let mut new = template.clone();
    new.number = format!("EG-S{:07}", NEXT.fetch_add(1, Ordering::Relaxed));
    new
}

fn bench_stores(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let mut group = c.benchmark_group("place_order");

    let path = std::env::temp_dir().join(format!("commerce-bench-{}.db", std::process::id()));
    let path = path.to_str().expect("utf-8 temp path").to_owned();
    let sqlite = rt.block_on(common::sql::fresh_sqlite(&path));
    let pool = sqlite.pool().clone();
    let sqlite: Arc<dyn Store> = Arc::new(sqlite);
    let (_, template) = rt.block_on(common::seeded_template(sqlite.clone()));
    group.bench_function("sqlite/store", |b| {
        b.to_async(&rt).iter(|| async {
            sqlite
                .place_order(next_order(&template))
                .await
                .expect("placed");
        })
    });
    group.bench_function("sqlite/raw_insert_baseline", |b| {
        b.to_async(&rt)
            .iter(|| async { common::sql::raw_place_sqlite(&pool, &next_order(&template)).await })
    });

    if let Some(url) = common::sql::postgres_url("place_order") {
        let pg = rt.block_on(common::sql::fresh_pg(&url, "commerce_bench"));
        let pool = pg.pool().clone();
        let pg: Arc<dyn Store> = Arc::new(pg);
        let (_, template) = rt.block_on(common::seeded_template(pg.clone()));
        group.bench_function("postgres/store", |b| {
            b.to_async(&rt).iter(|| async {
                pg.place_order(next_order(&template)).await.expect("placed");
            })
        });
        group.bench_function("postgres/raw_insert_baseline", |b| {
            b.to_async(&rt)
                .iter(|| async { common::sql::raw_place_pg(&pool, &next_order(&template)).await })
        });
    }
    group.finish();
    common::sql::remove_sqlite(&path);
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = bench_stores
}

fn main() {
    let estimates = run_criterion(&[benches]);
    for db in ["sqlite", "postgres"] {
        estimates.ratio(
            &format!("store/raw transaction place_order {db}"),
            "place_order",
            &format!("{db}/store"),
            &format!("{db}/raw_insert_baseline"),
            Goal::None,
        );
    }
}
