//! [`CatalogStore::catalog_changes`]: every path that changes a product as it is rendered names
//! it in the feed, the feed pages and coalesces, and no change is lost to concurrent writers.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::model::*;
use crate::store::*;

use super::fixtures::*;
use super::quotes::{offer, supply};

/// Reads the feed after `after` to its end, `limit` at a time: every change read, and the
/// position the last read ended at.
async fn read_to_end(
    store: &dyn Store,
    mut after: Option<ChangePosition>,
    limit: usize,
) -> (Vec<CatalogChange>, ChangePosition) {
    let mut read = Vec::new();
    loop {
        let page = store
            .catalog_changes(after, limit)
            .await
            .expect("catalog changes");
        assert!(page.changes.len() <= limit, "at most the limit");
        for c in &page.changes {
            assert!(
                after.is_none_or(|a| c.position > a),
                "{c:?} after {after:?}"
            );
            after = Some(c.position);
        }
        assert_eq!(Some(page.end), after.or(Some(page.end)), "ends at its last");
        read.extend(page.changes);
        after = Some(page.end);
        if !page.has_more {
            return (read, page.end);
        }
    }
}

/// [`read_to_end`] again and again from where it ended until every one of `wanted` is named:
/// a store with a fence (PostgreSQL) returns a change once every transaction older than it has
/// ended, a moment later when other sessions of the server write; at most 60 s.
async fn read_until(
    store: &dyn Store,
    after: Option<ChangePosition>,
    limit: usize,
    wanted: &[ProductId],
) -> (Vec<CatalogChange>, ChangePosition) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    let (mut read, mut end) = read_to_end(store, after, limit).await;
    while !wanted
        .iter()
        .all(|w| read.iter().any(|c| c.product_id == *w))
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{wanted:?} never read: {read:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
        let (more, next) = read_to_end(store, Some(end), limit).await;
        read.extend(more);
        end = next;
    }
    (read, end)
}

/// Every product, active or stopped, as the store lists them.
async fn every_product(store: &dyn Store) -> Vec<ProductId> {
    let listed = store
        .products(&ProductFilter::default(), page(1, 100))
        .await
        .expect("products");
    let stopped = store
        .removed_products(at(-1_000_000), page(1, 100))
        .await
        .expect("removed");
    let mut ids: Vec<ProductId> = listed.items.iter().map(|p| p.id).collect();
    ids.extend(stopped.items.iter().map(|r| r.id));
    ids
}

/// The paths that change a product as `GET /products/{id}` renders it, in the order the
/// case runs them (each after the one before).
const PATHS: &[&str] = &[
    "creation",
    "variant added",
    "variant edited",
    "product edited",
    "stock adjusted",
    "warranty added",
    "warranty edited",
    "warranty stopped",
    "category renamed",
    "order placed",
    "order cancelled",
    "order returned",
    "quote received",
    "stopped",
    "sold again",
];

/// Each path of its list (creation, a variant added and edited, the product's fields, a
/// stock adjustment, a warranty added, edited and stopped, its category renamed, an order's
/// reservation, a cancellation's release, a return's restock, a quote's received pieces, a
/// stop and a sale again) puts exactly the products it changed at the end of the feed, each
/// once, of its kind, at its new `updated_at`; nothing else moves.
pub async fn every_path_that_changes_a_product_names_it_in_the_feed(store: &dyn Store) {
    let s = supply(store, 5).await;
    let f = &s.f;
    let kitchen = f.product.category_id;
    let (_, mut end) = read_until(store, None, 1000, &every_product(store).await).await;
    let mut created = None;
    let mut returned_order = None;
    for path in PATHS {
        let now = at(100);
        let (kind, changed): (ChangeKind, Vec<ProductId>) = match *path {
            "creation" => {
                let p = product(store, "Toaster", kitchen, 100).await;
                created = Some(p.id);
                (ChangeKind::Created, vec![p.id])
            }
            "variant added" => {
                let p = created.expect("created");
                variant(store, p, "أحمر", "50.00", 3, 100).await;
                (ChangeKind::Updated, vec![p])
            }
            "variant edited" => {
                let patch = VariantPatch::default().set_price(d("130.00"));
                store
                    .update_variant(f.variant.id, patch, now)
                    .await
                    .expect(path);
                (ChangeKind::Updated, vec![f.product.id])
            }
            "product edited" => {
                let patch = ProductPatch::default().set_title("Electric Kettle 2");
                store
                    .update_product(f.product.id, patch, now)
                    .await
                    .expect(path);
                (ChangeKind::Updated, vec![f.product.id])
            }
            "stock adjusted" => {
                let more = NewStockAdjustment::builder()
                    .variant_id(s.v2.id)
                    .delta(2)
                    .reason(StockReason::Received)
                    .build();
                store.adjust_stock(more, now).await.expect(path);
                (ChangeKind::Updated, vec![s.product.id])
            }
            "warranty added" => {
                warranty(store, f.product.id, "ضمان سنتين", 100).await;
                (ChangeKind::Updated, vec![f.product.id])
            }
            "warranty edited" => {
                let patch = WarrantyPatch::default().set_name("ضمان ممتد");
                store
                    .update_warranty(f.warranty.id, patch, now)
                    .await
                    .expect(path);
                (ChangeKind::Updated, vec![f.product.id])
            }
            "warranty stopped" => {
                store
                    .set_warranty_active(f.warranty.id, false, now)
                    .await
                    .expect(path);
                (ChangeKind::Updated, vec![f.product.id])
            }
            "category renamed" => {
                let patch = CategoryPatch::default().set_name("مطبخ جديد");
                store
                    .update_category(kitchen, patch, now)
                    .await
                    .expect(path);
                let all = store
                    .products(&ProductFilter::default(), page(1, 100))
                    .await
                    .expect("products");
                let shown = all.items.iter().filter(|p| p.category_id == kitchen);
                (ChangeKind::Updated, shown.map(|p| p.id).collect())
            }
            "order placed" => {
                // Not priced from a record (`priced_from` empty): the edits above stand.
                let lines = vec![line(f, &f.variant, 1, false)];
                let order = new_order(f, f.account.id, &number(1), lines, 100);
                let placed = place(store, order).await;
                returned_order = Some(placed.id);
                (ChangeKind::Updated, vec![f.product.id])
            }
            "order cancelled" => {
                let lines = vec![line(f, &f.variant, 1, false)];
                let order = new_order(f, f.account.id, &number(2), lines, 100);
                let placed = place(store, order).await;
                // Placed, read past, then cancelled: the release is its own change.
                end = read_until(store, Some(end), 1000, &[f.product.id]).await.1;
                let cancel = change(placed.id, OrderStatus::Cancelled, 101);
                store.change_order_status(cancel).await.expect(path);
                (ChangeKind::Updated, vec![f.product.id])
            }
            "order returned" => {
                let order = returned_order.expect("placed");
                let shipped = [OrderStatus::Confirmed, OrderStatus::Shipped];
                let moved = move_to(store, order, &shipped, 102).await;
                end = read_until(store, Some(end), 1000, &[]).await.1;
                let mut back = change(order, OrderStatus::Returned, 110);
                back.outcomes = vec![(moved.lines[0].id, LineOutcome::partly_delivered(0, 1))];
                store.change_order_status(back).await.expect(path);
                (ChangeKind::Updated, vec![f.product.id])
            }
            "quote received" => {
                let q = store
                    .insert_quote(offer(s.supplier.id, s.v1.id, "40.00", 4), None, now)
                    .await
                    .expect("quote");
                let accept = QuoteDecision::Accept { note: None };
                store
                    .decide_quote(None, q.id, accept, now)
                    .await
                    .expect(path);
                (ChangeKind::Updated, vec![s.product.id])
            }
            "stopped" => {
                store
                    .set_product_active(s.product.id, false, now)
                    .await
                    .expect(path);
                (ChangeKind::Removed, vec![s.product.id])
            }
            _ => {
                store
                    .set_product_active(s.product.id, true, now)
                    .await
                    .expect(path);
                (ChangeKind::Updated, vec![s.product.id])
            }
        };
        let (read, next) = read_until(store, Some(end), 2, &changed).await;
        let named: Vec<ProductId> = read.iter().map(|c| c.product_id).collect();
        let expected: BTreeSet<ProductId> = changed.iter().copied().collect();
        assert_eq!(
            named.iter().copied().collect::<BTreeSet<_>>(),
            expected,
            "{path}: the products it changed, {named:?}"
        );
        assert_eq!(named.len(), expected.len(), "{path}: each once, {named:?}");
        for c in &read {
            let p = store.product(c.product_id).await.unwrap().expect("found");
            assert_eq!(c.kind, kind, "{path}: {c:?}");
            assert_eq!(c.at, p.updated_at, "{path}: at its new updated_at");
        }
        assert!(next > end, "{path}: the feed moved on");
        end = next;
        let quiet = store.catalog_changes(Some(end), 10).await.expect("read");
        assert!(quiet.changes.is_empty(), "{path}: nothing more");
        assert_eq!(quiet.end, end, "{path}: an empty read ends where it began");
        assert!(!quiet.has_more);
    }
}

/// An order's stock moves its product's `updated_at` past the last stamp (to the order's
/// instant), `updated_since` at that instant finds the product and its versions say so; an
/// edit after it whose clock is behind still moves `updated_at` on, past the order's stamp,
/// and the feed's `at` follows each.
pub async fn an_order_moves_its_products_stamp_and_later_edits_move_past_it(store: &dyn Store) {
    let f = fixture(store, 10, 5).await;
    let before = store.product(f.product.id).await.unwrap().expect("product");
    let lines = vec![line(&f, &f.variant, 1, false)];
    let order = new_order(&f, f.account.id, &number(1), lines, 200);
    place(store, order).await;
    let ordered = store.product(f.product.id).await.unwrap().expect("product");
    assert_eq!(ordered.updated_at, at(200), "the order's instant");
    assert!(ordered.updated_at > before.updated_at);
    assert_eq!(
        ordered.revision, before.revision,
        "stock leaves the revision"
    );
    let since = ProductFilter {
        updated_since: Some(at(200)),
        ..Default::default()
    };
    let found = store.products(&since, page(1, 25)).await.unwrap();
    assert_eq!(product_ids(&found), vec![f.product.id]);
    let versions = store.product_versions(&since, page(1, 25)).await.unwrap();
    assert_eq!(versions.items.len(), 1);
    assert_eq!(versions.items[0].updated_at, at(200));

    // An edit stamped by a clock 100 s behind the order's.
    let patch = ProductPatch::default().set_title("Kettle, edited");
    let edited = store
        .update_product(f.product.id, patch, at(100))
        .await
        .expect("edit");
    let read = store.product(f.product.id).await.unwrap().expect("product");
    assert_eq!(read.updated_at, edited.updated_at);
    assert!(
        read.updated_at > ordered.updated_at,
        "{} after {}",
        read.updated_at,
        ordered.updated_at
    );
    let (changes, _) = read_until(store, None, 1000, &[f.product.id]).await;
    let last = changes.iter().rev().find(|c| c.product_id == f.product.id);
    assert_eq!(last.map(|c| c.at), Some(read.updated_at), "the feed's at");
}

/// An empty feed read from its start ends at its head, after which the first change comes;
/// read from the start, the feed lists each product once, oldest change first, in pages of
/// `limit` with `has_more` until the last; a product changed again moves to the end
/// (coalesced: one entry, its latest), and a read after a position never returns it again
/// unless it changed again.
pub async fn the_change_feed_pages_from_its_start_and_coalesces(store: &dyn Store) {
    let empty = store.catalog_changes(None, 10).await.expect("read");
    assert!(empty.changes.is_empty() && !empty.has_more, "{empty:?}");
    let head = empty.end;
    let kitchen = category(store, "kitchen", None).await;
    let mut made = Vec::new();
    for (i, title) in ["A", "B", "C", "D", "E"].iter().enumerate() {
        made.push(product(store, title, kitchen.id, 10 + i as i64).await.id);
    }
    let (after_head, _) = read_until(store, Some(head), 10, &made).await;
    let ids: Vec<ProductId> = after_head.iter().map(|c| c.product_id).collect();
    assert_eq!(ids, made, "every change comes after the empty feed's head");

    let first = store.catalog_changes(None, 2).await.expect("read");
    assert_eq!(ids_of(&first), made[..2], "the oldest first");
    assert!(first.has_more);
    assert_eq!(first.end, first.changes[1].position);
    let second = store
        .catalog_changes(Some(first.end), 2)
        .await
        .expect("read");
    assert_eq!(ids_of(&second), made[2..4]);
    assert!(second.has_more);
    let third = store
        .catalog_changes(Some(second.end), 2)
        .await
        .expect("read");
    assert_eq!(ids_of(&third), made[4..]);
    assert!(!third.has_more, "the last page");
    let exact = store
        .catalog_changes(Some(second.end), 1)
        .await
        .expect("read");
    assert_eq!(ids_of(&exact), made[4..]);
    assert!(
        !exact.has_more,
        "a page that ends at the feed's end has no more"
    );

    // B twice, then A: one entry each, latest last; the first A and B are gone from the start.
    for p in [made[1], made[1], made[0]] {
        let patch = ProductPatch::default().set_title(format!("{p} again"));
        store.update_product(p, patch, at(50)).await.expect("edit");
    }
    read_until(store, Some(third.end), 3, &made[..2]).await;
    let (all, _) = read_to_end(store, None, 3).await;
    assert_eq!(
        ids_of(&CatalogChanges::new(all.clone(), false, head)),
        vec![made[2], made[3], made[4], made[1], made[0]],
        "each product once, by its latest change"
    );
    let since = store
        .catalog_changes(Some(third.end), 10)
        .await
        .expect("read");
    assert_eq!(ids_of(&since), vec![made[1], made[0]], "the changes after");
    assert!(all.windows(2).all(|w| w[0].position < w[1].position));
}

fn ids_of(read: &CatalogChanges) -> Vec<ProductId> {
    read.changes.iter().map(|c| c.product_id).collect()
}

/// Writers change products concurrently (stock adjustments and orders, several tasks) while a
/// follower reads the feed from the position it last got, many times; once the writers are
/// done, the follower's view (each product's latest `at`) becomes the products' own
/// `updated_at`. A change that committed behind a position the follower had already passed
/// (the gap a plain sequence opens: numbers taken before commit) would never be read, and the
/// view would stay stale.
pub async fn the_change_feed_misses_no_change_of_concurrent_writers(store: Arc<dyn Store>) {
    let kitchen = category(&*store, "kitchen", None).await;
    let mut variants = Vec::new();
    for i in 0..6 {
        let p = product(&*store, &format!("Racing {i}"), kitchen.id, 0).await;
        variants.push(variant(&*store, p.id, "v", "10.00", 1000, 0).await);
    }
    let done = Arc::new(AtomicBool::new(false));
    let follower = {
        let (store, done) = (store.clone(), done.clone());
        tokio::spawn(async move {
            let mut view: BTreeMap<ProductId, chrono::DateTime<chrono::Utc>> = BTreeMap::new();
            let mut after = None;
            let mut reads = 0;
            loop {
                let finished = done.load(Ordering::SeqCst);
                let page = store
                    .catalog_changes(after, 5)
                    .await
                    .expect("catalog changes");
                reads += 1;
                for c in &page.changes {
                    assert!(after.is_none_or(|a| c.position > a), "in order");
                    view.insert(c.product_id, c.at);
                }
                after = Some(page.end);
                if finished && !page.has_more {
                    return (view, after, reads);
                }
                if !page.has_more {
                    tokio::task::yield_now().await;
                }
            }
        })
    };
    let mut writers = Vec::new();
    for w in 0..4_i64 {
        let (store, variants) = (store.clone(), variants.clone());
        writers.push(tokio::spawn(async move {
            for round in 0..15_i64 {
                let v = &variants[((w + round) % 6) as usize];
                let delta = if round % 2 == 0 { -1 } else { 1 };
                let adjustment = NewStockAdjustment::builder()
                    .variant_id(v.id)
                    .delta(delta)
                    .reason(StockReason::Correction)
                    .build();
                store
                    .adjust_stock(adjustment, at(10 + round))
                    .await
                    .expect("adjust");
            }
        }));
    }
    for writer in writers {
        writer.await.expect("writer");
    }
    done.store(true, Ordering::SeqCst);
    let (mut view, mut after, reads) = follower.await.expect("follower");
    assert!(reads > 1, "the follower read while the writers wrote");
    // On a store with a fence, changes committed just now may show a moment later: the
    // follower goes on from where it was until the feed is quiet, never from the start.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let mut stale = Vec::new();
        for v in &variants {
            let p = store.product(v.product_id).await.unwrap().expect("found");
            if view.get(&p.id) != Some(&p.updated_at) {
                stale.push((p.id, view.get(&p.id).copied(), p.updated_at));
            }
        }
        if stale.is_empty() {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "changes missed by a follower that read from its last position: {stale:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
        let page = store.catalog_changes(after, 100).await.expect("read");
        for c in &page.changes {
            view.insert(c.product_id, c.at);
        }
        after = Some(page.end);
    }
}
