//! The catalogue of a backend that keeps it in process memory ([`CatalogTables`]): categories,
//! products with their variants and warranties, the stopped products' removal times, the
//! variants' stock histories, governorates, shipping options and the change feed, with the
//! indexes their reads walk. The memory store and the small store of the tests keep theirs
//! here.

mod edits;
mod feed;
#[cfg(test)]
mod invariants;
mod places;
mod stock;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::{StoreError, Unique, next_updated_at};
use crate::model::*;
use feed::ChangeFeed;

/// The whole catalogue, in process memory, with the steps of [`CatalogStore`]'s operations and
/// the reads other operations make of it (a variant's stock for an order's pieces, a
/// quote's product, a supplier's products).
///
/// The caller holds its own lock across each call, and across the reads and writes of one
/// operation. Each of [`CatalogStore`]'s writes checks everything before it writes anything,
/// so a refusal writes nothing; the refusals come in the order the SQL stores meet them, with
/// their texts. Two steps of other operations check nothing themselves, and say what their
/// caller checked first: [`move_order_stock`](Self::move_order_stock) (an order's pieces,
/// checked by [`Order::check_write`] or [`NewOrder::check_placement`]) and
/// [`receive`](Self::receive) (a quote's pieces, when the caller's `QuoteBook` accepted it). What
/// a write means for the caller's other tables it returns: [`update_product`](Self::update_product)
/// the variants whose pending quotes end with a move to another supplier (the caller ends them
/// in its [`QuoteBook`](super::QuoteBook) and queues their events).
///
/// Every write that changes a product as it is rendered stamps its `updated_at`
/// ([`next_updated_at`]) and moves its entry to the end of the change feed
/// ([`catalog_changes`](Self::catalog_changes)) in the same call, so that positions are
/// commit order. Ids are 1, 2, 3, ... per table, as SQL sequences number them.
///
/// The products are kept behind [`Arc`] (a write copies one only while a reader holds it),
/// indexed by variant, by warranty, by supplier, by activity and by removal time, so that a
/// read of a product, a variant's stock or a page of the active products walks no other
/// product.
///
/// [`CatalogStore`]: super::CatalogStore
#[derive(Debug, Default)]
pub struct CatalogTables {
    last: LastIds,
    /// The values that must be unique: category and product slugs, governorate names.
    unique: HashSet<(Unique, String)>,
    categories: BTreeMap<CategoryId, Category>,
    /// `categories` as a list, what `all_categories` copies, made again by every category
    /// write.
    category_list: Arc<[Category]>,
    /// Each record behind an [`Arc`], written through [`Arc::make_mut`].
    products: BTreeMap<ProductId, Arc<Product>>,
    /// The active products: what `GET /products` lists with no filter
    /// ([`ProductFilter::default`]), counted for its total, so that its page costs the
    /// products up to the page's end, not a walk of every product.
    active_products: BTreeSet<ProductId>,
    /// Each stopped product's removal time, and the same as `(removed_at, id)` keys for
    /// `removed_products` (newest last).
    removed_at: HashMap<ProductId, DateTime<Utc>>,
    removals: BTreeSet<(DateTime<Utc>, ProductId)>,
    variant_owner: HashMap<VariantId, ProductId>,
    warranty_owner: HashMap<WarrantyId, ProductId>,
    /// Each supplier's products: what its supply variants list.
    products_by_supplier: HashMap<AccountId, BTreeSet<ProductId>>,
    /// Each variant's stock adjustments, oldest first.
    adjustments: HashMap<VariantId, Vec<StockAdjustment>>,
    governorates: BTreeMap<GovernorateId, Governorate>,
    shipping_options: BTreeMap<ShippingOptionId, ShippingOption>,
    /// The catalogue change feed.
    changes: ChangeFeed,
}

/// The last id given in each table (0: none yet).
#[derive(Debug, Default)]
struct LastIds {
    categories: i64,
    products: i64,
    variants: i64,
    warranties: i64,
    stock_adjustments: i64,
    governorates: i64,
    shipping_options: i64,
}

/// The next id after `last`, counted on.
fn next(last: &mut i64) -> i64 {
    *last += 1;
    *last
}

impl CatalogTables {
    /// The product `id` as stored now.
    pub fn product(&self, id: ProductId) -> Option<&Product> {
        self.products.get(&id).map(|p| &**p)
    }

    /// The product of `variant`, shared (a clone costs a reference count).
    pub fn owner(&self, variant: VariantId) -> Option<&Arc<Product>> {
        self.products.get(self.variant_owner.get(&variant)?)
    }

    /// The variant `id` as stored now: its stock (`available`) for an order's pieces
    /// ([`NewOrder::check_placement`], [`Order::check_write`]).
    pub fn variant(&self, id: VariantId) -> Option<&Variant> {
        self.owner(id)?.variants.iter().find(|v| v.id == id)
    }

    /// [`CatalogStore::all_categories`](super::CatalogStore::all_categories).
    pub fn all_categories(&self) -> Vec<Category> {
        self.category_list.to_vec()
    }

    /// [`CatalogStore::products`](super::CatalogStore::products) and
    /// [`product_versions`](super::CatalogStore::product_versions): the page of products
    /// `filter` lists, by id, each made into what `make` makes of it (a clone, a version),
    /// with the total.
    pub fn products<T>(
        &self,
        filter: &ProductFilter,
        page: PageRequest,
        make: impl Fn(&Product) -> T,
    ) -> Page<T> {
        if *filter == ProductFilter::default() {
            // Every active product is listed: the walk of their index stops at the page's
            // end (no stopped product is walked), and the total is the count of active
            // products.
            let items = self
                .active_products
                .iter()
                .skip(usize::try_from(page.offset()).unwrap_or(usize::MAX))
                .take(page.per_page() as usize)
                .filter_map(|id| self.products.get(id))
                .map(|p| make(p))
                .collect();
            return Page::new(items, self.active_products.len() as u64);
        }
        let listed = filter.listed();
        let found = Page::of_items(self.products.values().filter(|p| listed(p)), page);
        Page::new(
            found.items.into_iter().map(|p| make(p)).collect(),
            found.total,
        )
    }

    /// [`CatalogStore::removed_products`](super::CatalogStore::removed_products): the products
    /// stopped at or after `since`, newest first, one page.
    pub fn removed_products(
        &self,
        since: DateTime<Utc>,
        page: PageRequest,
    ) -> Page<RemovedProduct> {
        let newest_first = self
            .removals
            .range((since, ProductId::new(i64::MIN))..)
            .rev()
            .map(|(removed_at, id)| RemovedProduct::new(*id, *removed_at));
        Page::of_items(newest_first, page)
    }

    /// [`CatalogStore::products_of_variants`](super::CatalogStore::products_of_variants): the
    /// products of `variants`, each once, by id.
    pub fn products_of_variants(&self, variants: &[VariantId]) -> Vec<Product> {
        let ids: BTreeSet<ProductId> = variants
            .iter()
            .filter_map(|v| self.variant_owner.get(v).copied())
            .collect();
        ids.iter()
            .filter_map(|id| self.product(*id).cloned())
            .collect()
    }

    /// The products `supplier` supplies, by id: what its supply variants list
    /// ([`QuoteBook::supply_variants`](super::QuoteBook::supply_variants)).
    pub fn supplier_products(&self, supplier: AccountId) -> impl Iterator<Item = &Product> {
        let ids = self
            .products_by_supplier
            .get(&supplier)
            .into_iter()
            .flatten();
        ids.filter_map(|id| self.product(*id))
    }

    /// [`CatalogStore::catalog_changes`](super::CatalogStore::catalog_changes): the feed's
    /// entries after `after`, at most `limit`.
    pub fn catalog_changes(&self, after: Option<ChangePosition>, limit: usize) -> CatalogChanges {
        self.changes.read(after, limit)
    }

    /// [`CatalogStore::newest_catalog_change`](super::CatalogStore::newest_catalog_change):
    /// the position of the feed's last entry.
    pub fn newest_catalog_change(&self) -> Option<ChangePosition> {
        self.changes.newest()
    }

    /// Takes `value` of `kind` for a new record, or refuses it when another record has it
    /// ([`StoreError::Duplicate`]). Called once nothing else can refuse the write.
    fn claim_unique(&mut self, kind: Unique, value: &str) -> Result<(), StoreError> {
        if self.unique.insert((kind, value.to_owned())) {
            Ok(())
        } else {
            Err(StoreError::Duplicate(kind))
        }
    }

    /// Stamps product `id` changed at `now` ([`next_updated_at`]) and moves its entry to the
    /// end of the feed: the one way a write marks a product changed. Called once the write's
    /// other changes to the product (its `active` above all) are made.
    fn stamp(&mut self, id: ProductId, now: DateTime<Utc>) -> Result<&mut Product, StoreError> {
        let product = self
            .products
            .get_mut(&id)
            .map(Arc::make_mut)
            .ok_or(StoreError::NotFound)?;
        product.updated_at = next_updated_at(product.updated_at, now);
        self.changes.record(product, false);
        Ok(product)
    }

    /// A product to write without stamping it: its own copy when a reader still holds the
    /// stored one.
    fn product_mut(&mut self, id: ProductId) -> Result<&mut Product, StoreError> {
        self.products
            .get_mut(&id)
            .map(Arc::make_mut)
            .ok_or(StoreError::NotFound)
    }

    /// A variant to write without stamping its product.
    fn variant_mut(&mut self, id: VariantId) -> Option<&mut Variant> {
        let product = *self.variant_owner.get(&id)?;
        let product = self.product_mut(product).ok()?;
        product.variants.iter_mut().find(|v| v.id == id)
    }
}
