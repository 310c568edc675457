//! [`CatalogStore::product_versions`]: the page of `products` as versions, and every kind of
//! write of a product giving it a new one.

use crate::model::*;
use crate::store::*;

use super::fixtures::*;

/// The versions of `filter`'s page next to the page `products` reads, compared.
async fn listed_as_read(
    store: &dyn Store,
    filter: &ProductFilter,
    p: PageRequest,
) -> (Page<ProductVersion>, Page<Product>) {
    let listed = store
        .product_versions(filter, p)
        .await
        .expect("product versions");
    let whole = store.products(filter, p).await.expect("products");
    let versions: Vec<ProductVersion> = whole.items.iter().map(ProductVersion::of).collect();
    assert_eq!(
        listed.items, versions,
        "{filter:?} {p:?}: the page of `products`"
    );
    assert_eq!(
        listed.total, whole.total,
        "{filter:?} {p:?}: the same total"
    );
    (listed, whole)
}

/// The same page and total as `products` under every filter (a category, a title query,
/// `updated_since`, a page past the end), stopped products left out; each kind of write of a
/// product (a variant's price, its stock, a warranty added and stopped, its activity, its own
/// fields, its category's name), each at the same instant as the write before, lists it under
/// a new version and leaves the others' as they were.
pub async fn product_versions_list_the_page_of_products(store: &dyn Store) {
    let kitchen = category(store, "kitchen", None).await;
    let garden = category(store, "garden", None).await;
    let kettle = product(store, "Kettle", kitchen.id, 10).await;
    let mixer = product(store, "Mixer", kitchen.id, 20).await;
    let hose = product(store, "Hose", garden.id, 30).await;
    let stopped = product(store, "Stopped Kettle", kitchen.id, 40).await;
    store
        .set_product_active(stopped.id, false, at(40))
        .await
        .expect("stop");
    let v = variant(store, kettle.id, "a", "10.00", 5, 50).await;
    let filters = [
        (
            ProductFilter::default(),
            page(1, 25),
            vec![kettle.id, mixer.id, hose.id],
        ),
        (ProductFilter::default(), page(2, 2), vec![hose.id]),
        (ProductFilter::default(), page(9, 2), vec![]),
        (
            ProductFilter {
                category_ids: Some(vec![kitchen.id]),
                ..ProductFilter::default()
            },
            page(1, 25),
            vec![kettle.id, mixer.id],
        ),
        (
            ProductFilter {
                query: Some("KETTLE".into()),
                ..ProductFilter::default()
            },
            page(1, 25),
            vec![kettle.id],
        ),
        (
            ProductFilter {
                updated_since: Some(at(30)),
                ..ProductFilter::default()
            },
            page(1, 25),
            vec![kettle.id, hose.id],
        ),
    ];
    for (filter, p, expected) in &filters {
        let (listed, _) = listed_as_read(store, filter, *p).await;
        assert_eq!(ids(&listed.items, |v| v.id), *expected, "{filter:?} {p:?}");
    }
    let all = ProductFilter::default();
    let version_of = |listed: &Page<ProductVersion>, id: ProductId| {
        *listed.items.iter().find(|v| v.id == id).expect("listed")
    };
    let (mut before, _) = listed_as_read(store, &all, page(1, 25)).await;
    let writes = [
        "price",
        "stock",
        "warranty",
        "warranty stopped",
        "fields",
        "activity",
        "rename",
    ];
    for write in writes {
        let now = at(60);
        match write {
            "price" => {
                let patch = VariantPatch::default().set_price(d("11.00"));
                store.update_variant(v.id, patch, now).await.map(drop)
            }
            "stock" => {
                let received = NewStockAdjustment::builder()
                    .variant_id(v.id)
                    .delta(2)
                    .reason(StockReason::Received)
                    .build();
                let done = store.adjust_stock(received, now).await;
                assert!(done.is_ok(), "{done:?}");
                Ok(())
            }
            "warranty" => store
                .insert_warranty(kettle.id, warranty_terms(), now)
                .await
                .map(drop),
            "warranty stopped" => {
                let read = store
                    .product(kettle.id)
                    .await
                    .expect("read")
                    .expect("found");
                let w = read.warranties[0].id;
                store.set_warranty_active(w, false, now).await.map(drop)
            }
            "fields" => {
                let patch = ProductPatch::default().set_title("Kettle 2");
                store.update_product(kettle.id, patch, now).await.map(drop)
            }
            "activity" => store
                .set_product_active(kettle.id, true, now)
                .await
                .map(drop),
            _ => {
                let patch = CategoryPatch::default().set_name("مطبخ");
                store
                    .update_category(kitchen.id, patch, now)
                    .await
                    .map(drop)
            }
        }
        .expect(write);
        let (after, whole) = listed_as_read(store, &all, page(1, 25)).await;
        let (was, is) = (
            version_of(&before, kettle.id),
            version_of(&after, kettle.id),
        );
        assert!(
            is.updated_at > was.updated_at,
            "{write}: {was:?} -> {is:?}, a new version"
        );
        let read = store
            .product(kettle.id)
            .await
            .expect("read")
            .expect("found");
        assert_eq!(
            ProductVersion::of(&read),
            is,
            "{write}: the version of the record"
        );
        assert_eq!(whole.items[0], read, "{write}: the record listed");
        assert_eq!(
            version_of(&after, hose.id),
            version_of(&before, hose.id),
            "{write}: another category's product keeps its version"
        );
        before = after;
    }
}

/// A warranty's terms.
fn warranty_terms() -> NewWarranty {
    NewWarranty {
        name: "ضمان".into(),
        admin_fee: d("15.00"),
        percent: d("2.50"),
        price_from: d("20.00"),
        duration_days: 365,
        terms: "الشروط".into(),
        icon_url: None,
    }
}
