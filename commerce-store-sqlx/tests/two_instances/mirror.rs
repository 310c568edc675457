//! The mirror run: a store that knows the catalogue only through the change feed stays equal
//! to it while two instances write.
//!
//! 16 writers place orders on the plain variant and the supplier's variants (through both
//! engines), half of them cancelling each order they place; the supplier offers pieces and the platform accepts
//! them; a follower meanwhile reads only `GET /catalog/changes` (alternating engines) and
//! refetches each product it names with `GET /products/{id}` (a 404 drops it). When the writers
//! stop, the follower reads the feed to its end once more. Then:
//!
//! - **0 stale**: every product of the mirror equals `GET /products/{id}` now, and the mirror
//!   holds every product a full read of the catalogue lists;
//! - **0 missed**: a full re-read of the feed from its start (one entry per product, at its
//!   latest change) names no entry, product and cursor, that the follower did not read.
//!
//! `COMMERCE_MIRROR_SECONDS` sets how long the writers run (3 s by default, as in CI; the
//! figures in BENCHMARKS.md are from a 60 s run:
//! `COMMERCE_MIRROR_SECONDS=60 cargo test --release -p commerce-store-sqlx --all-features
//! --test two_instances -- the_mirror --nocapture`).

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Request, StatusCode};
use serde_json::{Value, json};

use commerce_core::model::{NewStockAdjustment, QuoteId, StockReason, VariantId};

use super::{BENCH, Pair, get, wait_for_changes, with_pair};

const SUPPLIER: &str = "sk_demo_supplier_bench";
const WRITERS: usize = 16;

/// What the follower holds: the products as `GET /products/{id}` showed them, the feed
/// entries it read (product and cursor), and its cursor.
#[derive(Default)]
struct Mirror {
    products: BTreeMap<i64, Value>,
    read: HashSet<(i64, String)>,
    cursor: Option<String>,
    pages: u64,
    refetched: u64,
}

impl Mirror {
    /// Reads the feed from the mirror's cursor to its end through engine `engine`, refetching
    /// every product it names, and keeps the cursor after the products. The products named.
    async fn follow(&mut self, p: &Pair, engine: usize) -> Vec<i64> {
        let mut named = Vec::new();
        loop {
            let path = match &self.cursor {
                Some(c) => format!("/api/v1/catalog/changes?after={c}&limit=100"),
                None => "/api/v1/catalog/changes?limit=100".to_owned(),
            };
            let answer = p.send(engine, get(&path)).await;
            assert_eq!(answer.status, StatusCode::OK, "{path}");
            let page = answer.json();
            self.pages += 1;
            for change in page["data"].as_array().expect("data") {
                let id = change["product_id"].as_i64().expect("a product");
                let cursor = change["cursor"].as_str().expect("a cursor").to_owned();
                self.refetch(p, engine, id).await;
                self.read.insert((id, cursor));
                named.push(id);
            }
            self.cursor = Some(
                page["meta"]["next_cursor"]
                    .as_str()
                    .expect("a cursor")
                    .into(),
            );
            if page["meta"]["has_more"] == json!(false) {
                return named;
            }
        }
    }

    async fn refetch(&mut self, p: &Pair, engine: usize, id: i64) {
        let answer = p.send(engine, get(&format!("/api/v1/products/{id}"))).await;
        self.refetched += 1;
        match answer.status {
            StatusCode::OK => {
                self.products.insert(id, answer.json()["data"].clone());
            }
            StatusCode::NOT_FOUND => {
                self.products.remove(&id);
            }
            other => panic!("GET /products/{id}: {other}"),
        }
    }
}

/// A request of the supplier's bench key.
fn supplier(method: &str, path: &str, body: Option<Value>) -> Request<Bytes> {
    Request::builder()
        .method(method)
        .uri(path)
        .header("authorization", format!("Bearer {SUPPLIER}"))
        .header("content-type", "application/json")
        .body(body.map_or_else(Bytes::new, |b| Bytes::from(b.to_string())))
        .expect("request")
}

/// Every product `GET /products` lists, by id.
async fn catalogue(p: &Pair) -> BTreeMap<i64, Value> {
    let mut all = BTreeMap::new();
    for page in 1.. {
        let answer = p
            .send(
                0,
                get(&format!("/api/v1/products?per_page=100&page={page}")),
            )
            .await;
        assert_eq!(answer.status, StatusCode::OK);
        let body = answer.json();
        for product in body["data"].as_array().expect("data") {
            all.insert(product["id"].as_i64().expect("an id"), product.clone());
        }
        if body["meta"]["last_page"].as_i64() <= Some(page) {
            break;
        }
    }
    all
}

/// Places orders until `stop`, alternating engines; the writers of even `i` cancel each order
/// they place.
async fn writer(p: Pair, i: usize, variants: Arc<Vec<i64>>, stop: Arc<AtomicBool>) -> [u64; 2] {
    let (mut placed, mut cancelled) = (0, 0);
    let mut n = i;
    while !stop.load(Ordering::Relaxed) {
        n += WRITERS;
        let variant = variants[n % variants.len()];
        let mut body = p.order_body(VariantId::new(variant));
        body["external_reference"] = json!(format!("MIRROR-{n}"));
        let answer = p.post_order(n, &body, None).await;
        if answer.status != StatusCode::CREATED {
            // Refused with nothing written: out of stock for a moment (a 422 on the line's
            // quantity; the supplier's receipts bring more), or the variant's product changed
            // twice while the order was priced (a 409: each accepted quote sets its supply
            // price).
            let body = answer.json();
            let refused = match answer.status {
                StatusCode::UNPROCESSABLE_ENTITY => {
                    body["error"]["fields"]["lines.0.quantity"].is_array()
                }
                StatusCode::CONFLICT => body["error"]["reason"] == "catalogue_changed",
                _ => false,
            };
            assert!(refused, "{}: {body}", answer.status);
            continue;
        }
        placed += 1;
        if i.is_multiple_of(2) {
            let id = answer.json()["data"]["id"].as_i64().expect("an id");
            let cancel = Request::post(format!("/api/v1/orders/{id}/cancel"))
                .header("authorization", format!("Bearer {BENCH}"))
                .header("content-type", "application/json")
                .body(Bytes::from_static(b"{}"))
                .expect("request");
            let answer = p.send(n + 1, cancel).await;
            assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.json());
            cancelled += 1;
        }
    }
    [placed, cancelled]
}

/// The supplier offers 5 pieces of each of its variants in turn and the platform accepts,
/// until `stop`. How many quotes were accepted.
async fn receipts(p: Pair, variants: Arc<Vec<i64>>, stop: Arc<AtomicBool>) -> u64 {
    let accepted = AtomicU64::new(0);
    let mut n = 0;
    while !stop.load(Ordering::Relaxed) {
        n += 1;
        let variant = variants[n % variants.len()];
        let offer = json!({"variant_id": variant, "unit_price": "30.00", "quantity": 5});
        let answer = p
            .send(n, supplier("POST", "/api/v1/quotes", Some(offer)))
            .await;
        if answer.status == StatusCode::CONFLICT {
            continue; // the variant's earlier quote is still pending
        }
        assert_eq!(answer.status, StatusCode::CREATED, "{:?}", answer.json());
        let id = answer.json()["data"]["id"].as_i64().expect("an id");
        p.engines[n % 2]
            .operator()
            .accept_quote(QuoteId::new(id), None)
            .await
            .expect("accepted");
        accepted.fetch_add(1, Ordering::Relaxed);
    }
    accepted.into_inner()
}

/// See the module's documentation.
#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_mirror_of_the_feed_equals_the_catalogue() {
    let seconds: u64 = std::env::var("COMMERCE_MIRROR_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    with_pair(move |p| async move {
        let supplied = p.send(
            0,
            supplier("GET", "/api/v1/supply/variants?per_page=100", None),
        );
        let supplied: Vec<i64> = supplied.await.json()["data"]
            .as_array()
            .expect("the supplier's variants")
            .iter()
            .filter_map(|v| v["id"].as_i64())
            .collect();
        assert!(!supplied.is_empty(), "the sandbox's supplier has variants");
        let mut ordered = supplied.clone();
        ordered.push(p.fixture.plain_variant.get());
        let (ordered, supplied) = (Arc::new(ordered), Arc::new(supplied));

        let stop = Arc::new(AtomicBool::new(false));
        let started = Instant::now();
        let writers: Vec<_> = (0..WRITERS)
            .map(|i| tokio::spawn(writer(p.clone(), i, ordered.clone(), stop.clone())))
            .collect();
        let supply = tokio::spawn(receipts(p.clone(), supplied, stop.clone()));
        let mut mirror = Mirror::default();
        let mut turn = 0;
        while started.elapsed() < Duration::from_secs(seconds) {
            turn += 1;
            if mirror.follow(&p, turn).await.is_empty() {
                // The feed is at its end: let the writers write before reading again.
                tokio::task::yield_now().await;
            }
        }
        stop.store(true, Ordering::Relaxed);
        let (mut placed, mut cancelled) = (0, 0);
        for writer in writers {
            let [p, c] = writer.await.expect("a writer");
            placed += p;
            cancelled += c;
        }
        let accepted = supply.await.expect("the supplier");
        let during = (mirror.pages, mirror.refetched);
        // A last change after every writer's: once the follower has read it, the feed's head
        // is past every write before it (a transaction of another test on the server holds
        // the head back for a moment, so read until then, for at most a minute).
        let marker = p.fixture.plain_variant;
        let marked = p.engines[0]
            .store()
            .products_of_variants(&[marker])
            .await
            .expect("the plain variant's product")[0]
            .id
            .get();
        let receipt = NewStockAdjustment::builder()
            .variant_id(marker)
            .delta(1)
            .reason(StockReason::Received)
            .build();
        p.engines[1]
            .operator()
            .adjust_stock(receipt)
            .await
            .expect("stock");
        // Any entry of its product read from here on is that change (the latest of it).
        let store = &**p.engines[0].store();
        wait_for_changes(store, mirror.cursor.as_deref(), &[marked]).await;
        let named = mirror.follow(&p, 0).await;
        assert!(named.contains(&marked), "the feed names the last change");

        let mut stale = 0;
        let listed = catalogue(&p).await;
        for (id, shown) in &mirror.products {
            let now = p.send(1, get(&format!("/api/v1/products/{id}"))).await;
            if now.status != StatusCode::OK || now.json()["data"] != *shown {
                stale += 1;
            }
        }
        let unmirrored = listed.keys().filter(|id| !mirror.products.contains_key(id));
        let unmirrored = unmirrored.count();

        let mut cursor: Option<String> = None;
        let mut missed = 0;
        let mut entries = 0;
        loop {
            let path = match &cursor {
                Some(c) => format!("/api/v1/catalog/changes?after={c}&limit=1000"),
                None => "/api/v1/catalog/changes?limit=1000".to_owned(),
            };
            let page = p.send(1, get(&path)).await.json();
            for change in page["data"].as_array().expect("data") {
                entries += 1;
                let id = change["product_id"].as_i64().expect("a product");
                let cursor = change["cursor"].as_str().expect("a cursor").to_owned();
                if !mirror.read.contains(&(id, cursor)) {
                    missed += 1;
                }
            }
            cursor = page["meta"]["next_cursor"].as_str().map(str::to_owned);
            if page["meta"]["has_more"] == json!(false) {
                break;
            }
        }
        eprintln!(
            "mirror: {seconds} s, {WRITERS} writers on 2 instances: {placed} orders placed \
             ({cancelled} cancelled), {accepted} quotes accepted; the follower read {} pages \
             and refetched {} products while they wrote ({} and {} in all); {} products \
             mirrored, {entries} entries in the feed: {missed} missed, {stale} stale, \
             {unmirrored} listed but not mirrored",
            during.0,
            during.1,
            mirror.pages,
            mirror.refetched,
            mirror.products.len()
        );
        assert!(
            placed > 0 && cancelled > 0 && accepted > 0,
            "the writers wrote"
        );
        assert_eq!(missed, 0, "feed entries the follower never read");
        assert_eq!(stale, 0, "mirrored products that differ from the catalogue");
        assert_eq!(unmirrored, 0, "listed products the mirror lacks");
        assert_eq!(
            mirror.products.len(),
            listed.len(),
            "no product the catalogue lacks"
        );
    })
    .await;
}
