//! PostgreSQL: a page filtered by a range over a parameter is planned per call, never kept as
//! a prepared statement (whose generic plan, after five runs, guesses the range keeps a third
//! of the rows: `GET /orders?updated_since=` read every order of a million for a page of 25;
//! BENCHMARKS.md, `scale`). A page without a range stays prepared once and reused.
//!
//! The store runs on a pool of one connection, so the statements its reads prepared are the
//! ones `pg_prepared_statements` lists on that same connection afterwards.

mod pg;

use std::str::FromStr;

use chrono::{Duration, Utc};
use commerce_core::model::{AccountId, OrderFilter, PageRequest, ProductFilter};
use commerce_core::store::prelude::*;
use commerce_store_sqlx::sqlx::postgres::PgConnectOptions;
use commerce_store_sqlx::sqlx::{self, PgPool};
use commerce_store_sqlx::{PgStore, PoolSettings};

/// How many of the connection's prepared statements contain `text`.
async fn prepared_containing(pool: &PgPool, text: &str) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM pg_prepared_statements WHERE statement LIKE $1")
        .bind(format!("%{text}%"))
        .fetch_one(pool)
        .await
        .expect("read pg_prepared_statements")
}

#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
#[tokio::test]
async fn postgres_plans_range_pages_per_call_and_keeps_the_others() {
    let url = pg::database_url();
    let schema = pg::create_schema(&url).await;
    let options = PgConnectOptions::from_str(&url)
        .unwrap()
        .application_name(&schema);
    let settings = PoolSettings::postgres().with_max_connections(1);
    let store = PgStore::connect_with_settings(options, &schema, settings)
        .await
        .expect("connect PostgreSQL");
    store.migrate().await.expect("migrate PostgreSQL");
    let pool = store.pool().clone();

    let account = AccountId::new(1);
    let since = Utc::now() - Duration::days(1);
    let by_range = OrderFilter::builder()
        .maybe_updated_since(Some(since))
        .build();
    let products_by_range = ProductFilter::new(Default::default(), Default::default(), Some(since));
    // More runs than PostgreSQL's five custom plans before it may choose a generic one.
    for _ in 0..7 {
        store
            .orders(account, &OrderFilter::default(), PageRequest::default())
            .await
            .unwrap();
        store
            .orders(account, &by_range, PageRequest::default())
            .await
            .unwrap();
        store
            .products(&products_by_range, PageRequest::default())
            .await
            .unwrap();
    }

    assert!(
        prepared_containing(
            &pool,
            "FROM orders WHERE account_id = $2 ORDER BY created_at"
        )
        .await
            >= 1,
        "the unfiltered page is prepared once and kept"
    );
    for range in ["updated_at >= $", "WHERE at >= $"] {
        assert_eq!(
            prepared_containing(&pool, range).await,
            0,
            "a page filtered by a range over a parameter ({range}) is never kept with a \
             generic plan"
        );
    }
    pg::drop_schema(&url, &[&pool], &schema).await;
}
