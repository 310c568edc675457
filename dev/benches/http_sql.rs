//! HTTP over SQL: four GET endpoints through `commerce::axum::router` on `PgStore` and on
//! `SqliteStore`, each against a hand-written axum handler making the minimal queries on the
//! same sqlx pool and returning the engine's own bytes. Bounded in time; stops by itself.
//!
//! ```text
//! COMMERCE_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test \
//!   cargo bench -p commerce-dev --features sqlx --bench http_sql
//! ```
//!
//! For each store (PostgreSQL in a database `commerce_http_sql` it creates and drops, when
//! `COMMERCE_TEST_POSTGRES_URL` is set; SQLite in a file in the temporary directory it removes
//! afterwards) the run seeds the sandbox (`sandbox::seed`), then places `HTTP_SQL_ORDERS`
//! (default 200) two-line orders for marketer A through the operator API, one in four moved to
//! `order_delivered` and one in four to `order_confirmed`, so that `GET /orders?per_page=25` is
//! a full page of mixed orders. It renders each endpoint once through the engine (key
//! `sk_demo_bench`, 1,000,000 requests per minute), checks the bare handlers' reads against
//! those answers (full pages; the wallet sums equal the engine's figures), then serves both
//! from a server runtime and drives each pair from a client runtime with the raw keep-alive
//! client of `common::http` (one request in flight per connection), for the same duration and
//! the same number of connections, engine first, at each of `HTTP_SQL_CONNECTIONS`.
//!
//! Both sides share the store's own pool (`PgStore`: 10 connections; `SqliteStore`: 8). Every
//! bare handler hashes the bearer token with `commerce::hash_key` (SHA-256, as the engine
//! does), looks the key up by hash, answers 401 when it is missing, revoked or expired, then:
//!
//! - `GET /api/v1/me`: nothing more (1 query);
//! - `GET /api/v1/products?per_page=25`: the 25 active products by id, then their variants and
//!   their warranties with `product_id IN (...)` (3 more queries, 4 in all);
//! - `GET /api/v1/orders?per_page=25`: the account's 25 newest orders (`orders_newest`) with
//!   their timelines (a column of the order's row), then their lines with `order_id IN (...)`
//!   (2 more, 3 in all);
//! - `GET /api/v1/wallet`: one aggregate statement over the account's orders (the kept
//!   earnings per family, the held ones) with the sum of its completed withdrawals as a
//!   subquery (1 more, 2 in all).
//!
//! and answers with the engine's bytes and content type. It computes no `total`, takes no rate
//! limit, reads no account, categories, line warranties or withdrawal rows and writes nothing:
//! the engine does all of those (see BENCHMARKS.md for its statements per request).
//!
//! Settings (environment): `HTTP_SQL_SECONDS` per phase (default 5), `HTTP_SQL_CONNECTIONS`
//! (default `16,64`), `HTTP_SQL_STORES` (default `postgres,sqlite`), `HTTP_SQL_PAGES` (default
//! `me,products,orders,wallet`), `HTTP_SQL_ORDERS` (200),
//! `HTTP_SQL_SERVER_THREADS` and `HTTP_SQL_CLIENT_THREADS` (1 each); `HTTP_SQL_KEEP` set
//! keeps the PostgreSQL database after the run, to `EXPLAIN` its statements;
//! `HTTP_SQL_RENDERED=0` runs the engine with no rendered JSON kept (`Config::rendered_products_bytes`
//! and `Config::rendered_orders_bytes` 0), so that each request reads and renders all it shows (by
//! default it keeps them, as in production, and the seeded orders do not change during a run,
//! so every `/orders` page after the first is served from kept JSON).
//!
//! Goals (BENCHMARKS.md): through the engine, on PostgreSQL `/me` ≥ 90% of its bare
//! handler's requests per second, `/products` ≥ 50%, `/orders` ≥ 70%; on SQLite `/me`,
//! `/products` and `/orders` ≥ 60%; `/wallet` is reported only. Each pair prints a `ratio`
//! line with its goal.

mod common;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use bytes::Bytes;
use chrono::{DateTime, Utc};
use commerce::domain::fields::{DraftLine, OrderDraft};
use commerce::model::{KeyHash, OrderStatus};
use commerce::sandbox::Sandbox;
use commerce::{Engine, sandbox};
use commerce::{bearer_token, hash_key};
use commerce_store_sqlx::sqlx::{self, Database, Encode, PgPool, QueryBuilder, Row, SqlitePool};
use common::http::{
    BENCH_KEY, Outcome, drive, engine_body, latencies_ms, raw_request, ready_json, serve,
};
use common::report::{self, Goal, Unit};
use common::sql;
use common::{env_or, runtime};
use rust_decimal::Decimal;
use tokio::runtime::Runtime;

/// The PostgreSQL database of the run, created and dropped by it.
const PG_DATABASE: &str = "commerce_http_sql";

/// The endpoints compared.
#[derive(Debug, Clone, Copy)]
enum Page {
    Me,
    Products,
    Orders,
    Wallet,
}

impl Page {
    const ALL: [Page; 4] = [Page::Me, Page::Products, Page::Orders, Page::Wallet];

    /// The page named `name` (`me`, `products`, `orders`, `wallet`).
    fn named(name: &str) -> Page {
        match name {
            "me" => Page::Me,
            "products" => Page::Products,
            "orders" => Page::Orders,
            "wallet" => Page::Wallet,
            other => {
                panic!("HTTP_SQL_PAGES: unknown page {other:?} (me, products, orders, wallet)")
            }
        }
    }

    /// The request's path and query.
    fn path(self) -> &'static str {
        match self {
            Page::Me => "/api/v1/me",
            Page::Products => "/api/v1/products?per_page=25",
            Page::Orders => "/api/v1/orders?per_page=25",
            Page::Wallet => "/api/v1/wallet",
        }
    }

    /// The lowest engine/bare ratio aimed at on `store`, percent (`None`: reported only).
    fn goal(self, store: &str) -> Option<f64> {
        match (store, self) {
            (_, Page::Wallet) => None,
            ("postgres", Page::Me) => Some(90.0),
            ("postgres", Page::Products) => Some(50.0),
            ("postgres", Page::Orders) => Some(70.0),
            (_, Page::Me | Page::Products | Page::Orders) => Some(60.0),
        }
    }
}

// ---- the bare handlers' SQL (the same text on both databases) ----

const KEY: &str = "SELECT account_id, expires_at, revoked_at FROM api_keys WHERE hash = $1";
const PRODUCTS: &str = "SELECT id, title, slug, category_id, description, images, files, \
     video_url, marketing_files_url, url, active, updated_at FROM products \
     WHERE active = TRUE ORDER BY id LIMIT 25";
/// A query taking a list of ids: the text before the list and the text after it.
type InList = (&'static str, &'static str);

const VARIANTS: InList = (
    "SELECT id, product_id, label, price, suggested_min, suggested_max, available \
     FROM variants WHERE product_id IN (",
    ") ORDER BY id",
);
const WARRANTIES: InList = (
    "SELECT id, product_id, name, admin_fee, percent, price_from, duration_days, terms, \
     icon_url, active FROM warranties WHERE product_id IN (",
    ") ORDER BY id",
);
const ORDERS: &str = "SELECT id, account_id, number, legacy_number, external_reference, \
     tracking_url, status, customer_name, customer_phone, customer_second_phone, \
     customer_address, governorate_id, governorate_name, shipping_option_id, \
     shipping_option_name, store_name, store_link, note, products, warranties, delivery_charge, \
     customer_total, profit, income_tax, net_profit, income_tax_percent, created_at, \
     updated_at, confirmed_at, delivered_at, timeline FROM orders WHERE account_id = $1 \
     ORDER BY created_at DESC, id DESC LIMIT 25";
const LINES: InList = (
    "SELECT id, order_id, variant_id, product_id, title, variant_label, quantity, sell_price, \
     profit, commission_on, delivered_quantity, returned_quantity, damaged_quantity, \
     lost_quantity, destroyed_quantity FROM order_lines WHERE order_id IN (",
    ") ORDER BY order_id, position",
);
const WALLET: &str = "SELECT \
     CAST(COALESCE(SUM(CASE WHEN family IN ('pending', 'confirmed', 'shipping') \
       THEN earnings_net ELSE 0 END), 0) AS BIGINT), \
     CAST(COALESCE(SUM(CASE WHEN family IN ('delivered', 'archived') \
       THEN earnings_net ELSE 0 END), 0) AS BIGINT), \
     CAST(COALESCE(SUM(CASE WHEN family IN ('delivered', 'archived') \
       THEN earnings_commission ELSE 0 END), 0) AS BIGINT), \
     CAST(COALESCE(SUM(CASE WHEN family IN ('delivered', 'archived') AND delivered_at > $2 \
       THEN earnings_net ELSE 0 END), 0) AS BIGINT), \
     (SELECT CAST(COALESCE(SUM(amount), 0) AS BIGINT) FROM withdrawals \
       WHERE account_id = $1 AND status = 'completed') \
     FROM orders WHERE account_id = $1";

/// What the bare wallet statement sums, in piastres.
#[derive(Debug, Clone, Copy)]
struct WalletSums {
    /// Net earnings of orders not delivered yet.
    expected: i64,
    /// Net earnings of delivered orders.
    settled: i64,
    /// Commission of delivered orders.
    commission: i64,
    /// Net earnings of orders delivered within the hold period.
    held: i64,
    /// Completed withdrawals.
    received: i64,
}

/// The first column of each row, an id.
fn first_ids<R: Row>(rows: &[R]) -> sqlx::Result<Vec<i64>>
where
    usize: sqlx::ColumnIndex<R>,
    for<'r> i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    rows.iter().map(|row| row.try_get(0)).collect()
}

/// `head` + one bind per id + `tail`.
fn in_list<DB: Database>((head, tail): InList, ids: &[i64]) -> QueryBuilder<DB>
where
    for<'a> i64: Encode<'a, DB> + sqlx::Type<DB>,
{
    let mut q = QueryBuilder::new(head);
    let mut list = q.separated(", ");
    for id in ids {
        list.push_bind(*id);
    }
    q.push(tail);
    q
}

/// The queries of the bare handlers, on one kind of pool.
trait BareSql: Clone + Send + Sync + 'static {
    /// The account of the live key with this hash (one query on the unique `api_keys.hash`).
    fn key(
        &self,
        hash: KeyHash,
        now: i64,
    ) -> impl Future<Output = sqlx::Result<Option<i64>>> + Send;
    /// The products page, its variants and warranties (three queries); the rows read.
    fn products(&self) -> impl Future<Output = sqlx::Result<usize>> + Send;
    /// The account's newest orders with their timelines, and their lines (two queries); the
    /// rows read.
    fn orders(&self, account: i64) -> impl Future<Output = sqlx::Result<usize>> + Send;
    /// The rows of each `... IN (ids)` query of `lists`, one query each; how many.
    fn children(
        &self,
        ids: Vec<i64>,
        lists: &[InList],
    ) -> impl Future<Output = sqlx::Result<usize>> + Send;
    /// The wallet sums of the account (one statement), the hold period after `held_after`.
    fn wallet(
        &self,
        account: i64,
        held_after: i64,
    ) -> impl Future<Output = sqlx::Result<WalletSums>> + Send;
}

/// Implements [`BareSql`] for a pool type with the SQL above.
macro_rules! bare_sql {
    ($pool:ty) => {
        impl BareSql for $pool {
            async fn key(&self, hash: KeyHash, now: i64) -> sqlx::Result<Option<i64>> {
                let key: Option<(i64, Option<i64>, Option<i64>)> = sqlx::query_as(KEY)
                    .bind(hash.as_slice())
                    .fetch_optional(self)
                    .await?;
                Ok(key.and_then(|(account, expires_at, revoked_at)| {
                    (revoked_at.is_none() && expires_at.is_none_or(|at| at > now))
                        .then_some(account)
                }))
            }

            async fn products(&self) -> sqlx::Result<usize> {
                let page = sqlx::query(PRODUCTS).fetch_all(self).await?;
                Ok(page.len()
                    + self
                        .children(first_ids(&page)?, &[VARIANTS, WARRANTIES])
                        .await?)
            }

            async fn orders(&self, account: i64) -> sqlx::Result<usize> {
                let page = sqlx::query(ORDERS).bind(account).fetch_all(self).await?;
                Ok(page.len() + self.children(first_ids(&page)?, &[LINES]).await?)
            }

            async fn children(&self, ids: Vec<i64>, lists: &[InList]) -> sqlx::Result<usize> {
                let mut rows = 0;
                for &list in lists {
                    rows += in_list(list, &ids).build().fetch_all(self).await?.len();
                }
                Ok(rows)
            }

            async fn wallet(&self, account: i64, held_after: i64) -> sqlx::Result<WalletSums> {
                let (expected, settled, commission, held, received) = sqlx::query_as(WALLET)
                    .bind(account)
                    .bind(held_after)
                    .fetch_one(self)
                    .await?;
                Ok(WalletSums {
                    expected,
                    settled,
                    commission,
                    held,
                    received,
                })
            }
        }
    };
}

bare_sql!(PgPool);
bare_sql!(SqlitePool);

/// Nanoseconds since the Unix epoch, as the stores keep instants.
/// What every bare handler shares: the pool, the engine's answers, the hold period.
#[derive(Clone)]
struct Bare<P> {
    pool: P,
    bodies: Arc<[Bytes; 4]>,
    hold_days: i64,
}

impl<P: BareSql> Bare<P> {
    /// The start of the hold period at `now`, in nanoseconds.
    fn held_after(&self, now: DateTime<Utc>) -> i64 {
        sql::nanos(now - chrono::Duration::days(self.hold_days))
    }

    /// One bare request: authenticate by the key's hash, make the page's reads, answer the
    /// engine's bytes (401 for a bad key, 500 for a database error).
    async fn answer(self, page: Page, headers: HeaderMap) -> Response {
        let Some(token) = bearer_token(&headers) else {
            return StatusCode::UNAUTHORIZED.into_response();
        };
        let now = Utc::now();
        let account = match self.pool.key(hash_key(token), sql::nanos(now)).await {
            Ok(Some(account)) => account,
            Ok(None) => return StatusCode::UNAUTHORIZED.into_response(),
            Err(_) => return StatusCode::INTERNAL_SERVER_ERROR.into_response(),
        };
        let read = match page {
            Page::Me => Ok(()),
            Page::Products => self.pool.products().await.map(drop),
            Page::Orders => self.pool.orders(account).await.map(drop),
            Page::Wallet => self
                .pool
                .wallet(account, self.held_after(now))
                .await
                .map(drop),
        };
        match read {
            Ok(()) => ready_json(self.bodies[page as usize].clone()),
            Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
        }
    }

    /// Serves every page on its path.
    fn router(self) -> Router {
        Page::ALL
            .into_iter()
            .fold(Router::new(), |router, page| {
                let route = page.path().split('?').next().expect("path");
                router.route(
                    route,
                    get(move |State(bare): State<Self>, headers: HeaderMap| {
                        bare.answer(page, headers)
                    }),
                )
            })
            .with_state(self)
    }

    /// Checks the bare reads against the engine's answers before timing; returns a summary.
    async fn check(&self, account: i64) -> String {
        let body = |page: Page| -> serde_json::Value {
            serde_json::from_slice(&self.bodies[page as usize]).expect("engine answers JSON")
        };
        let now = Utc::now();
        let found = self.pool.key(hash_key(BENCH_KEY), sql::nanos(now)).await;
        assert_eq!(found.expect("key read"), Some(account), "bench key found");
        let (products, orders) = (body(Page::Products), body(Page::Orders));
        for list in [&products, &orders] {
            assert_eq!(list["data"].as_array().map(Vec::len), Some(25), "full page");
        }
        let product_rows = self.pool.products().await.expect("products read");
        let order_rows = self.pool.orders(account).await.expect("orders read");
        let sums = self
            .pool
            .wallet(account, self.held_after(now))
            .await
            .expect("wallet read");
        let wallet = &body(Page::Wallet)["data"];
        let amount = |v: &serde_json::Value| -> Decimal {
            v.as_str().expect("amount").parse().expect("decimal")
        };
        let ready = (sums.settled - sums.held - sums.received).max(0);
        for (figure, piastres) in [
            (&wallet["expected"], sums.expected),
            (&wallet["held"]["amount"], sums.held),
            (&wallet["total_commission"], sums.commission),
            (&wallet["received"], sums.received),
            (&wallet["ready"], ready),
        ] {
            assert_eq!(amount(figure), Decimal::new(piastres, 2), "wallet figure");
        }
        format!(
            "orders total {}, bare rows read: /products {product_rows}, /orders {order_rows}; \
             bare wallet sums = engine figures",
            orders["meta"]["total"]
        )
    }
}

/// Places `count` two-line orders for marketer A through the operator API (plain variant and
/// the featured product's first variant, one piece each); one in four is then delivered and
/// one in four confirmed.
async fn seed_orders(engine: &Engine, fixture: &Sandbox, count: usize) {
    let op = engine.operator();
    for i in 0..count {
        let line = |variant_id| DraftLine::new(variant_id, 1, Decimal::new(3_500, 2), Vec::new());
        let draft = OrderDraft::builder()
            .full_name("سارة حسن".to_owned())
            .phone("+201112223334".to_owned())
            .address("12 شارع النصر، مدينة نصر".to_owned())
            .shipping_option_id(fixture.standard_shipping)
            .governorate_id(fixture.cairo)
            .external_reference(format!("BENCH-{i:04}"))
            .lines(vec![
                line(fixture.plain_variant),
                line(fixture.featured_variants[0]),
            ])
            .build();
        let order = op
            .place_order(fixture.marketer_a, draft)
            .await
            .expect("order placed");
        let moves: &[OrderStatus] = match i % 4 {
            0 => &[
                OrderStatus::Confirmed,
                OrderStatus::Shipped,
                OrderStatus::Delivered,
            ],
            1 => &[OrderStatus::Confirmed],
            _ => &[],
        };
        for to in moves {
            op.move_order(order.id, *to, None)
                .await
                .expect("order moved");
        }
    }
}

/// The settings and runtimes of the run.
struct Run {
    server: Runtime,
    client: Runtime,
    duration: Duration,
    connections: Vec<usize>,
    orders: usize,
    pages: Vec<Page>,
    /// Whether the engine keeps rendered JSON (its default; `HTTP_SQL_RENDERED=0`: none).
    rendered: bool,
}

impl Run {
    /// Seeds the store behind `engine`, checks the bare reads on `pool`, then measures every
    /// page at every connection count, one line per pair.
    fn measure<P: BareSql>(&self, store: &str, engine: Engine, pool: P, pool_size: u32) {
        let fixture = self
            .server
            .block_on(sandbox::seed(&engine))
            .expect("sandbox seeds");
        self.server
            .block_on(seed_orders(&engine, &fixture, self.orders));
        let bodies = Page::ALL.map(|page| self.server.block_on(engine_body(&engine, page.path())));
        let bare = Bare {
            pool,
            bodies: Arc::new(bodies),
            hold_days: engine.config().hold_days,
        };
        let summary = self.server.block_on(bare.check(fixture.marketer_a.get()));
        println!("{store}: pool {pool_size} connections (shared); {summary}");
        let engine_addr = serve(&self.server, commerce::axum::router(engine));
        let bare_addr = serve(&self.server, bare.router());
        for &connections in &self.connections {
            for &page in &self.pages {
                let request = raw_request("GET", page.path(), b"");
                let phase = |addr| {
                    drive(
                        &self.client,
                        addr,
                        request.clone(),
                        200,
                        connections,
                        self.duration,
                    )
                };
                let through = phase(engine_addr);
                let baseline = phase(bare_addr);
                report(store, page, connections, &through, &baseline);
            }
        }
    }

    /// The engine over `store`: the default settings, or with no product, page or order JSON
    /// kept (`HTTP_SQL_RENDERED=0`), so that every request reads and renders all it shows.
    fn engine(&self, store: Arc<dyn commerce::store::Store>) -> Engine {
        Engine::builder(store)
            .configure(|c| {
                if !self.rendered {
                    c.rendered_products_bytes = 0;
                    c.rendered_orders_bytes = 0;
                }
            })
            .build()
            .expect("valid settings")
    }

    /// PostgreSQL, when `COMMERCE_TEST_POSTGRES_URL` is set.
    fn postgres(&self) {
        let Some(url) = sql::postgres_url("http_sql") else {
            return;
        };
        let store = self.server.block_on(sql::fresh_pg(&url, PG_DATABASE));
        let pool = store.pool().clone();
        let size = pool.options().get_max_connections();
        self.measure("postgres", self.engine(Arc::new(store)), pool.clone(), size);
        self.server.block_on(async {
            pool.close().await;
            if std::env::var_os("HTTP_SQL_KEEP").is_none() {
                sql::drop_pg(&url, PG_DATABASE).await;
            }
        });
    }

    /// SQLite, in a file of the temporary directory.
    fn sqlite(&self) {
        let path =
            std::env::temp_dir().join(format!("commerce-http-sql-{}.db", std::process::id()));
        let path = path.to_str().expect("utf-8 temp path").to_owned();
        let store = self.server.block_on(sql::fresh_sqlite(&path));
        let pool = store.pool().clone();
        let size = pool.options().get_max_connections();
        self.measure("sqlite", self.engine(Arc::new(store)), pool.clone(), size);
        self.server.block_on(pool.close());
        sql::remove_sqlite(&path);
    }
}

/// One line per pair: requests per second, latencies and errors of each side, then the ratio
/// line with the page's goal.
fn report(store: &str, page: Page, connections: usize, through: &Outcome, baseline: &Outcome) {
    println!(
        "{store:<8} {:<28} conns {connections:>3} | engine {:>7.0} req/s p50/p99 {:>15} err {} \
         | bare {:>7.0} req/s p50/p99 {:>15} err {}",
        page.path(),
        through.rps(),
        latencies_ms(through),
        through.errors,
        baseline.rps(),
        latencies_ms(baseline),
        baseline.errors,
    );
    report::ratio(
        &format!(
            "engine/bare {store} GET {} ({connections} conns)",
            page.path()
        ),
        through.rps() / baseline.rps(),
        Unit::Percent,
        page.goal(store).map_or(Goal::None, Goal::AtLeast),
    );
}

fn main() {
    // `cargo bench` passes `--bench`; this program takes its settings from the environment.
    let seconds: f64 = env_or("HTTP_SQL_SECONDS", 5.0);
    let connections: Vec<usize> = env_or("HTTP_SQL_CONNECTIONS", "16,64".to_owned())
        .split(',')
        .map(|n| n.trim().parse().expect("HTTP_SQL_CONNECTIONS: numbers"))
        .collect();
    let stores = env_or("HTTP_SQL_STORES", "postgres,sqlite".to_owned());
    let (server_threads, client_threads) = (
        env_or("HTTP_SQL_SERVER_THREADS", 1),
        env_or("HTTP_SQL_CLIENT_THREADS", 1),
    );
    let run = Run {
        server: runtime("bench-server", server_threads),
        client: runtime("bench-client", client_threads),
        duration: Duration::from_secs_f64(seconds),
        connections,
        orders: env_or("HTTP_SQL_ORDERS", 200),
        pages: env_or("HTTP_SQL_PAGES", "me,products,orders,wallet".to_owned())
            .split(',')
            .map(|name| Page::named(name.trim()))
            .collect(),
        rendered: env_or("HTTP_SQL_RENDERED", 1) != 0,
    };
    println!(
        "http_sql: {seconds} s per phase, connections {:?}, server threads {server_threads}, \
         client threads {client_threads}, loopback; engine = commerce::axum::router, bare = \
         axum handlers on the same pool; latencies p50/p99 in ms",
        run.connections
    );
    for store in stores.split(',').map(str::trim) {
        match store {
            "postgres" => run.postgres(),
            "sqlite" => run.sqlite(),
            other => println!("http_sql: unknown store {other:?} (postgres, sqlite)"),
        }
    }
    let Run { server, client, .. } = run;
    server.shutdown_background();
    client.shutdown_background();
}
