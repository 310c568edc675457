//! The catalogue's invariants under random writes (proptest): after each write every index
//! agrees with a walk of the records, the stock agrees with its history, a refusal writes
//! nothing, and a product a reader holds does not change under it.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use chrono::{DateTime, TimeZone, Utc};
use proptest::prelude::*;
use rust_decimal::Decimal;

use super::CatalogTables;
use crate::domain::pieces::{MAX_AVAILABLE, StockMove};
use crate::model::*;
use crate::store::Unique;

fn at(seconds: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_750_000_000 + seconds, 0).unwrap()
}

/// The numbers one run draws its writes from (proptest shrinks them).
struct Draws(std::vec::IntoIter<u64>);

impl Draws {
    /// A number below `m`.
    fn below(&mut self, m: u64) -> u64 {
        self.0.next().unwrap_or(0) % m
    }

    /// An id from 1 to `m`.
    fn id(&mut self, m: u64) -> i64 {
        self.below(m) as i64 + 1
    }
}

/// Every table and index, in an order that does not depend on hashing: equal when nothing
/// was written.
fn snapshot(c: &CatalogTables) -> String {
    let mut unique: Vec<String> = c.unique.iter().map(|x| format!("{x:?}")).collect();
    unique.sort();
    let removed_at: BTreeMap<_, _> = c.removed_at.iter().collect();
    let variant_owner: BTreeMap<_, _> = c.variant_owner.iter().collect();
    let warranty_owner: BTreeMap<_, _> = c.warranty_owner.iter().collect();
    let by_supplier: BTreeMap<_, _> = c.products_by_supplier.iter().collect();
    let adjustments: BTreeMap<_, _> = c.adjustments.iter().collect();
    let latest: BTreeMap<_, _> = c.changes.latest.iter().collect();
    format!(
        "{:?} {unique:?} {:?} {:?} {:?} {:?} {:?} {removed_at:?} {variant_owner:?} \
         {warranty_owner:?} {by_supplier:?} {adjustments:?} {:?} {:?} {} {:?} {latest:?}",
        c.last,
        c.categories,
        c.category_list,
        c.products,
        c.active_products,
        c.removals,
        c.governorates,
        c.shipping_options,
        c.changes.last,
        c.changes.by_position,
    )
}

/// Every index against a walk of the records.
fn check(c: &CatalogTables) {
    let active = c.products.values().filter(|p| p.active).map(|p| p.id);
    let active: BTreeSet<ProductId> = active.collect();
    assert_eq!(active, c.active_products, "the active products' index");
    for p in c.products.values() {
        for v in &p.variants {
            assert_eq!(c.variant_owner.get(&v.id), Some(&p.id), "a variant's owner");
            assert!(
                (0..=MAX_AVAILABLE).contains(&v.available),
                "stock out of bounds"
            );
            match c.adjustments.get(&v.id) {
                Some(history) => {
                    let last = history.last().expect("a history has an entry");
                    assert_eq!(last.available_after, v.available, "history vs stock");
                    let sum: i64 = history.iter().map(|a| a.delta).sum();
                    assert_eq!(sum, v.available, "the history's moves add up to the stock");
                }
                None => assert_eq!(v.available, 0, "stock without a history"),
            }
        }
        for w in &p.warranties {
            assert_eq!(
                c.warranty_owner.get(&w.id),
                Some(&p.id),
                "a warranty's owner"
            );
        }
        for (supplier, ids) in &c.products_by_supplier {
            let filed = ids.contains(&p.id);
            assert_eq!(
                filed,
                p.supplier_id == Some(*supplier),
                "the supplier index"
            );
        }
        let change = &c.changes.latest[&p.id];
        assert_eq!(change.at, p.updated_at, "the feed's time of a product");
        if !p.active {
            assert_eq!(
                change.kind,
                ChangeKind::Removed,
                "a stopped product reads removed"
            );
        }
        let position = c.changes.by_position.get(&change.position.low());
        assert_eq!(position, Some(&p.id), "the feed's position index");
        if let Some(removed) = c.removed_at.get(&p.id) {
            assert!(!p.active, "a removal time of an active product");
            assert!(
                c.removals.contains(&(*removed, p.id)),
                "the removals' index"
            );
        }
    }
    assert_eq!(c.changes.latest.len(), c.products.len());
    assert_eq!(c.changes.by_position.len(), c.products.len());
    assert_eq!(c.removals.len(), c.removed_at.len());
    let variants: usize = c.products.values().map(|p| p.variants.len()).sum();
    assert_eq!(c.variant_owner.len(), variants);
    let mut unique = HashSet::new();
    let slugs = c
        .categories
        .values()
        .map(|x| (Unique::CategorySlug, x.slug.clone()));
    let products = c
        .products
        .values()
        .map(|p| (Unique::ProductSlug, p.slug.clone()));
    let names = c.governorates.values();
    let names = names.map(|g| (Unique::GovernorateName, g.name.clone()));
    for value in slugs.chain(products).chain(names) {
        assert!(unique.insert(value), "a repeated unique value");
    }
    assert_eq!(unique, c.unique, "the unique values");
    let categories: Vec<Category> = c.categories.values().cloned().collect();
    assert_eq!(&*c.category_list, &categories[..], "the category list");
}

/// One write drawn from `d` at `now`; whether it was refused.
fn write(c: &mut CatalogTables, d: &mut Draws, now: DateTime<Utc>) -> bool {
    match d.below(12) {
        0 => {
            let slug = format!("c{}", d.below(6));
            let new = match d.below(2) {
                0 => NewCategory::new("c".to_owned(), slug, None),
                _ => NewCategory::new("c".to_owned(), slug, Some(CategoryId::new(d.id(5)))),
            };
            c.insert_category(new).is_err()
        }
        1 => {
            let patch = match d.below(3) {
                0 => CategoryPatch::default().set_name(format!("n{}", d.below(3))),
                1 => CategoryPatch::default().set_slug(format!("c{}", d.below(6))),
                _ => CategoryPatch::default().set_parent(Some(CategoryId::new(d.id(5)))),
            };
            c.update_category(CategoryId::new(d.id(5)), &patch, now)
                .is_err()
        }
        2 | 3 => {
            let slug = format!("p{}", d.below(8));
            let new = NewProduct::builder()
                .category_id(CategoryId::new(d.id(4)))
                .title("p".to_owned())
                .slug(slug)
                .url("u".to_owned())
                .build();
            c.insert_product(new, now).is_err()
        }
        4 | 5 => {
            let mut patch = ProductPatch::default();
            if d.below(2) == 0 {
                patch = patch.set_active(d.below(2) == 0);
            }
            if d.below(3) == 0 {
                patch = patch.set_slug(format!("p{}", d.below(8)));
            }
            if d.below(3) == 0 {
                patch = patch.set_category(CategoryId::new(d.id(5)));
            }
            if d.below(3) == 0 {
                let supplier = d.id(4);
                patch = patch.set_supplier((supplier < 4).then(|| AccountId::new(supplier)));
            }
            c.update_product(ProductId::new(d.id(7)), &patch, now)
                .is_err()
        }
        6 => {
            let new = NewVariant::builder()
                .label("v".to_owned())
                .price(Decimal::ONE)
                .available(d.below(4) as i64)
                .build();
            c.insert_variant(ProductId::new(d.id(7)), new, now).is_err()
        }
        7 => {
            let patch = VariantPatch::default().set_label("l");
            c.update_variant(VariantId::new(d.id(10)), &patch, now)
                .is_err()
        }
        8 | 9 => {
            let delta = d.below(9) as i64 - 4;
            let delta = if delta == 0 { MAX_AVAILABLE } else { delta };
            let new = NewStockAdjustment::builder()
                .variant_id(VariantId::new(d.id(10)))
                .delta(delta)
                .reason(StockReason::Correction)
                .build();
            c.adjust_stock(new, now).is_err()
        }
        10 => {
            // An order's reservation, checked as its callers check it: it fits the stock.
            let variant = VariantId::new(d.id(10));
            let available = c.variant(variant).map_or(0, |v| v.available);
            if available > 0 {
                let delta = -(d.id(available as u64));
                let reason = StockReason::Reservation;
                let reservation = StockMove {
                    variant_id: variant,
                    delta,
                    reason,
                };
                c.move_order_stock(OrderId::new(d.id(50)), vec![reservation], now);
            }
            false
        }
        _ => {
            let new = NewWarranty::builder()
                .name("w".to_owned())
                .duration_days(30)
                .build();
            c.insert_warranty(ProductId::new(d.id(7)), new, now)
                .is_err()
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn random_writes_keep_every_index(draws in prop::collection::vec(any::<u64>(), 0..1500)) {
        let mut c = CatalogTables::default();
        let mut d = Draws(draws.into_iter());
        let mut seconds = 0;
        for _ in 0..250 {
            // Sometimes in the same second: `next_updated_at` moves on anyway.
            seconds += d.below(3) as i64;
            let held_id = ProductId::new(d.id(6));
            let held = c.products.get(&held_id).cloned();
            let held_copy = held.as_deref().cloned();
            let before = snapshot(&c);
            if write(&mut c, &mut d, at(seconds)) {
                prop_assert_eq!(&before, &snapshot(&c), "a refusal wrote");
            }
            prop_assert_eq!(held.as_deref(), held_copy.as_ref(), "a held product changed");
            check(&c);
        }
    }
}

/// A quote's pieces above the maximum are refused and write nothing; pieces that fit are
/// added with the quote's supply price and a new revision, and a product a reader holds keeps
/// its copy.
#[test]
fn a_refused_receipt_writes_nothing_and_one_that_fits_writes_once() {
    let mut c = super::tests::catalogue(1);
    let held = c.owner(VariantId::new(1)).cloned().unwrap();
    let before = snapshot(&c);
    let quote = |quantity: i64| {
        Quote::builder()
            .id(QuoteId::new(1))
            .account_id(AccountId::new(1))
            .variant_id(VariantId::new(1))
            .product_id(ProductId::new(1))
            .title("t".into())
            .label("l".into())
            .unit_price(Decimal::TWO)
            .quantity(quantity)
            .status(QuoteStatus::Accepted)
            .created_at(at(0))
            .updated_at(at(0))
            .build()
    };
    assert!(c.receive(&quote(MAX_AVAILABLE), at(1)).is_err());
    assert_eq!(before, snapshot(&c), "a refused receipt wrote");
    c.receive(&quote(3), at(2)).unwrap();
    let received = c.variant(VariantId::new(1)).unwrap();
    assert_eq!(
        (received.available, received.supply_price),
        (8, Decimal::TWO)
    );
    assert_eq!(
        held.variants[0].available, 5,
        "the held product kept its copy"
    );
    let revision = c.product(ProductId::new(1)).unwrap().revision;
    assert_eq!(revision, held.revision + 1);
    check(&c);
}
