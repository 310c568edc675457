//! Product removals for sync: [`CatalogStore::removed_products`].

use chrono::{DateTime, Utc};

use crate::model::*;
use crate::store::*;

use super::fixtures::*;

async fn removed(
    store: &dyn Store,
    since: DateTime<Utc>,
    p: u32,
    per: u32,
) -> Page<RemovedProduct> {
    store
        .removed_products(since, page(p, per))
        .await
        .expect("removals listed")
}

fn listed(page: &Page<RemovedProduct>) -> Vec<(ProductId, DateTime<Utc>)> {
    page.items.iter().map(|r| (r.id, r.removed_at)).collect()
}

/// Stopped products are listed from `since` (inclusive), newest removal first (ties by id,
/// highest first), paged with the total of every match; stopping a stopped product keeps its
/// removal time; a product sold again drops out, and stopped again comes back with its new
/// time.
pub async fn removed_products_are_listed_newest_first_since(store: &dyn Store) {
    let cat = category(store, "removals", None).await;
    let a = product(store, "Removed A", cat.id, 0).await.id;
    let b = product(store, "Removed Bb", cat.id, 0).await.id;
    let c = product(store, "Removed Ccc", cat.id, 0).await.id;
    let sold = product(store, "Removed Dddd", cat.id, 0).await.id;
    assert_eq!(removed(store, at(0), 1, 10).await.total, 0);

    let stop = |id, active, seconds| async move {
        let p = store
            .set_product_active(id, active, at(seconds))
            .await
            .expect("product changed");
        assert_eq!(p.active, active);
    };
    stop(a, false, 10).await;
    stop(b, false, 20).await;
    stop(c, false, 20).await;
    // Stopping a stopped product keeps the time it was stopped.
    stop(c, false, 25).await;
    // Selling a sold product records nothing.
    stop(sold, true, 26).await;

    let all = removed(store, at(0), 1, 10).await;
    assert_eq!(listed(&all), [(c, at(20)), (b, at(20)), (a, at(10))]);
    assert_eq!(all.total, 3);
    let from = removed(store, at(20), 1, 10).await;
    assert_eq!(
        listed(&from),
        [(c, at(20)), (b, at(20))],
        "since is inclusive"
    );
    assert_eq!(from.total, 2);
    assert_eq!(removed(store, at(21), 1, 10).await.total, 0);
    let far = removed(store, DateTime::<Utc>::MIN_UTC, 1, 10).await;
    assert_eq!(far.total, 3, "a bound before every instant keeps them all");
    assert_eq!(
        removed(store, DateTime::<Utc>::MAX_UTC, 1, 10).await.total,
        0
    );

    // Pages.
    let first = removed(store, at(0), 1, 2).await;
    assert_eq!(listed(&first), [(c, at(20)), (b, at(20))]);
    assert_eq!(first.total, 3);
    let second = removed(store, at(0), 2, 2).await;
    assert_eq!(listed(&second), [(a, at(10))]);
    assert_eq!(second.total, 3);
    let past = removed(store, at(0), 3, 2).await;
    assert!(past.items.is_empty());
    assert_eq!(past.total, 3, "past the last page the total still counts");

    // Sold again: no longer a removal. Stopped again: listed with the new time, first.
    stop(b, true, 30).await;
    assert_eq!(
        listed(&removed(store, at(0), 1, 10).await),
        [(c, at(20)), (a, at(10))]
    );
    stop(b, false, 40).await;
    stop(a, true, 41).await;
    let now = removed(store, at(0), 1, 10).await;
    assert_eq!(listed(&now), [(b, at(40)), (c, at(20))]);
    assert_eq!(now.total, 2);

    assert!(matches!(
        store.set_product_active(a.absent(), false, at(50)).await,
        Err(StoreError::NotFound)
    ));
    assert_eq!(removed(store, at(0), 1, 10).await.total, 2);
}

/// `active` is one field of a product's edit ([`ProductPatch::set_active`]): an edit that
/// does not set it keeps the removal time, one that sets it moves it with its other fields in
/// the same write.
pub async fn an_edit_of_a_product_moves_its_removal_only_when_it_sets_active(store: &dyn Store) {
    let cat = category(store, "removal-edits", None).await;
    let id = product(store, "Edited Removal", cat.id, 0).await.id;
    let edit = |patch: ProductPatch, seconds| async move {
        store
            .update_product(id, patch, at(seconds))
            .await
            .expect("product edited")
    };
    let stopped = edit(ProductPatch::default().set_active(false), 10).await;
    assert!(!stopped.active);
    assert_eq!(listed(&removed(store, at(0), 1, 10).await), [(id, at(10))]);

    let renamed = edit(ProductPatch::default().set_title("Renamed Removal"), 20).await;
    assert!(!renamed.active, "an edit without active keeps it");
    assert_eq!(
        listed(&removed(store, at(0), 1, 10).await),
        [(id, at(10))],
        "and keeps the removal time"
    );

    let sold = ProductPatch::default()
        .set_title("Sold Again")
        .set_active(true);
    let sold = edit(sold, 30).await;
    assert!(sold.active);
    assert_eq!(sold.title, "Sold Again");
    assert_eq!(removed(store, at(0), 1, 10).await.total, 0);
    let read = store.product(id).await.expect("read").expect("there");
    assert_eq!((read.active, read.title.as_str()), (true, "Sold Again"));

    let stopped = ProductPatch::default()
        .set_slug("stopped-again")
        .set_active(false);
    assert_eq!(edit(stopped, 40).await.slug, "stopped-again");
    assert_eq!(listed(&removed(store, at(0), 1, 10).await), [(id, at(40))]);
}
