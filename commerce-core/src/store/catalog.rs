//! The catalogue (categories, products, variants, warranties) and shipping (governorates,
//! options and their rates).

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::{StockError, StoreError};
use crate::model::*;

/// The catalogue and shipping: written by the platform, read by every request.
#[async_trait]
pub trait CatalogStore: Send + Sync {
    /// Adds a category (ids 1, 2, 3, ... as a SQL sequence numbers them); `Invalid` when its
    /// parent does not exist, `Duplicate(CategorySlug)` when a category has this slug
    /// ([`Unique`](super::Unique)). One atomic operation: the parent check and the insert,
    /// whose slug's uniqueness the store decides with it, so two categories made at once never
    /// share a slug.
    async fn insert_category(&self, new: NewCategory) -> Result<Category, StoreError>;
    /// Every category, active or not, by id: one read (one statement on the SQL stores), the
    /// list as of one moment.
    async fn all_categories(&self) -> Result<Vec<Category>, StoreError>;
    /// Changes a category ([`CategoryPatch::apply`]), in one atomic operation: `NotFound`
    /// when there is none; `Invalid` when the new parent does not exist or is the category
    /// itself or one of its descendants ([`parent_allowed`](crate::domain::edits::parent_allowed), checked
    /// against the parents as they stand under the operation's lock, so that two concurrent
    /// moves never make a cycle); `Duplicate(CategorySlug)` when another category has the new
    /// slug. A new name ([`CategoryPatch::renames`]) marks every product of the category
    /// changed at `now` ([`next_updated_at`](super::next_updated_at)): their view shows it.
    async fn update_category(
        &self,
        id: CategoryId,
        patch: CategoryPatch,
        now: DateTime<Utc>,
    ) -> Result<Category, StoreError>;
    /// Adds a product ([`NewProduct::into_product`]: active, no variants, changed at `now`);
    /// `Invalid` when its category does not exist. One atomic operation: the category check,
    /// the insert and its entry in the change feed ([`catalog_changes`](Self::catalog_changes)).
    async fn insert_product(
        &self,
        new: NewProduct,
        now: DateTime<Utc>,
    ) -> Result<Product, StoreError>;
    /// Starts or stops selling a product, changed at `now`; `NotFound` when there is none.
    /// Provided: [`update_product`](Self::update_product) with a patch of `active` alone.
    async fn set_product_active(
        &self,
        id: ProductId,
        active: bool,
        now: DateTime<Utc>,
    ) -> Result<Product, StoreError> {
        let patch = ProductPatch::default().set_active(active);
        self.update_product(id, patch, now).await
    }
    /// Changes a product ([`ProductPatch::apply`]) and marks it changed at `now`, in one
    /// atomic operation; `NotFound` when there is none, `Invalid` when its new category does
    /// not exist. Orders placed before keep their lines as they were. When its supplier
    /// changes, the old supplier's quotes still pending on its variants end in the same
    /// operation ([`Quote::end_for_moved_product`]), so that no quote of a supplier outlives
    /// its product. When the patch sets `active`, the removal time follows
    /// [`removal_after`](crate::domain::edits::removal_after), decided from the product as it
    /// is written: stopping a product that was sold records `now`, stopping a stopped one
    /// keeps the time it was stopped, selling it again clears it
    /// ([`removed_products`](Self::removed_products) lists it no more); a patch without
    /// `active` leaves it as it is.
    async fn update_product(
        &self,
        id: ProductId,
        patch: ProductPatch,
        now: DateTime<Utc>,
    ) -> Result<Product, StoreError>;
    /// Adds a variant to a product ([`NewVariant::into_variant`]; variant ids are unique
    /// across products) and marks the product changed at `now`; `NotFound` when there is no
    /// such product. One atomic operation: the product marked changed, the variant inserted
    /// and, when it starts with pieces, its first stock adjustment (`initial`) kept, so the
    /// product's version never lags its variants.
    async fn insert_variant(
        &self,
        product: ProductId,
        new: NewVariant,
        now: DateTime<Utc>,
    ) -> Result<Variant, StoreError>;
    /// Changes a variant ([`VariantPatch::apply`]) and marks its product changed at `now`;
    /// `NotFound` when there is no such variant. One atomic operation: the variant written and
    /// its product marked changed, so the product's version never lags its variants.
    async fn update_variant(
        &self,
        id: VariantId,
        patch: VariantPatch,
        now: DateTime<Utc>,
    ) -> Result<Variant, StoreError>;
    /// Moves a variant's stock by a delta, in one atomic operation: the variant's `available`
    /// read under the operation's lock, [`NewStockAdjustment::decide`] (refusing, with nothing
    /// written, a result below zero or a compare-and-set whose expected quantity is not the
    /// stock now), `available` set to the result, the adjustment kept
    /// ([`NewStockAdjustment::into_adjustment`], ids increasing) and the variant's product
    /// marked changed at `now` ([`next_updated_at`](super::next_updated_at)).
    /// [`StockError::NotFound`] when there is no such variant.
    async fn adjust_stock(
        &self,
        new: NewStockAdjustment,
        now: DateTime<Utc>,
    ) -> Result<StockAdjustment, StockError>;
    /// A variant's stock adjustments, newest first (by id, descending), one page; `total`
    /// counts them all. An unknown variant has none. One read: the page and its `total` from
    /// one statement on the SQL stores (past the last page, the total is read on its own).
    async fn stock_adjustments(
        &self,
        variant: VariantId,
        page: PageRequest,
    ) -> Result<Page<StockAdjustment>, StoreError>;
    /// Adds a warranty to a product ([`NewWarranty::into_warranty`]) and marks the product
    /// changed at `now`; `NotFound` when there is no such product. One atomic operation: the
    /// product marked changed and the warranty inserted.
    async fn insert_warranty(
        &self,
        product: ProductId,
        new: NewWarranty,
        now: DateTime<Utc>,
    ) -> Result<Warranty, StoreError>;
    /// Changes a warranty ([`WarrantyPatch::apply`]) and marks its product changed at `now`,
    /// in one atomic operation; `NotFound` when there is none. Order lines keep the terms
    /// they were placed with.
    async fn update_warranty(
        &self,
        id: WarrantyId,
        patch: WarrantyPatch,
        now: DateTime<Utc>,
    ) -> Result<Warranty, StoreError>;
    /// Offers or stops a warranty and marks its product changed at `now`; `NotFound` when
    /// there is no such warranty. Provided: [`update_warranty`](Self::update_warranty) with
    /// a patch of `active` alone.
    async fn set_warranty_active(
        &self,
        id: WarrantyId,
        active: bool,
        now: DateTime<Utc>,
    ) -> Result<Warranty, StoreError> {
        let patch = WarrantyPatch::default().set_active(active);
        self.update_warranty(id, patch, now).await
    }
    /// The products [`ProductFilter::listed`] lists, by id, one page; `total` counts every
    /// match. One read, not one snapshot: the SQL stores read the page with its `total` in one
    /// statement, then its variants and warranties, so an edit committed between them shows
    /// in the page's variants.
    async fn products(
        &self,
        filter: &ProductFilter,
        page: PageRequest,
    ) -> Result<Page<Product>, StoreError>;
    /// The products stopped at or after `since` and still stopped, one page, newest removal
    /// first (ties by id, highest first); `total` counts every match. A product sold again is
    /// not listed; stopped again, it is listed with its latest removal time. One read: the
    /// page and its `total` from one statement on the SQL stores (past the last page, the
    /// total is read on its own).
    async fn removed_products(
        &self,
        since: DateTime<Utc>,
        page: PageRequest,
    ) -> Result<Page<RemovedProduct>, StoreError>;
    /// One product, active or stopped: one read, the product with its variants and warranties
    /// from one snapshot.
    async fn product(&self, id: ProductId) -> Result<Option<Product>, StoreError>;
    /// The page [`products`](Self::products) answers for the same filter and page, each
    /// product as its [`ProductVersion`] (id and `updated_at`), with the same `total`: a plain
    /// listing for a reader that keeps products or what it made of them (the engine keeps
    /// their JSON) and reads the whole records only when a version is not one it has. The
    /// provided version reads the page with [`products`](Self::products); a backend that can
    /// list the page's rows alone (the memory and SQL stores) overrides it, so that a page
    /// costs its rows, not their variants or warranties.
    async fn product_versions(
        &self,
        filter: &ProductFilter,
        page: PageRequest,
    ) -> Result<Page<ProductVersion>, StoreError> {
        let found = self.products(filter, page).await?;
        let items = found.items.iter().map(ProductVersion::of).collect();
        Ok(Page::new(items, found.total))
    }
    /// The catalogue change feed after `after` (from its oldest kept change when `None`): at
    /// most `limit` changes in feed order, one per product (its latest: a product's changes
    /// are coalesced, and the one entry moves to the end of the feed with each change).
    ///
    /// Every path that changes a product as `GET /products/{id}` renders it makes a change:
    /// each write that stamps the product's `updated_at` ([`next_updated_at`](super::next_updated_at))
    /// and its insert, of the kind [`ChangeKind::of`] names after the write.
    ///
    /// **Gap-free in commit order.** Once a read has returned a change at position `p` (or
    /// ended at `p`, [`CatalogChanges::end`]), no change can later appear at or before `p`:
    /// every change committed after that read, by any writer of the store's data, comes after
    /// it. So a reader that resumes from the position it last got never misses a change,
    /// whatever writers are in flight while it reads. A backend whose writers take positions
    /// before they commit must not return a position while a writer that took a smaller one
    /// may still commit (the SQL store on PostgreSQL returns only the changes of transactions
    /// older than every transaction still running); a backend whose writers are serialised
    /// (one lock, SQLite's writer lock) numbers them under that lock. One read: the changes
    /// and the feed's head behind one fence (one statement on the SQL stores).
    async fn catalog_changes(
        &self,
        after: Option<ChangePosition>,
        limit: usize,
    ) -> Result<CatalogChanges, StoreError>;
    /// The position of the feed's newest change that a read of the feed would return now
    /// (behind the same fence as [`catalog_changes`](CatalogStore::catalog_changes), so a
    /// reader that resumes from it misses nothing); `None` while the feed is empty. One
    /// indexed step, whatever the feed's size: what `catalog.changed` compares each endpoint
    /// with ([`WebhookStore::queue_catalog_changed`](super::WebhookStore::queue_catalog_changed)).
    async fn newest_catalog_change(&self) -> Result<Option<ChangePosition>, StoreError>;
    /// The products (active or stopped) that own any of these variants, by id, each once;
    /// unknown variants are skipped. One read: the products with their variants and
    /// warranties from one snapshot.
    async fn products_of_variants(
        &self,
        variants: &[VariantId],
    ) -> Result<Vec<Product>, StoreError>;

    /// Adds a governorate; `Duplicate(GovernorateName)` when one has this name
    /// ([`Unique`](super::Unique)). One atomic operation: the name's uniqueness decided with
    /// the insert, so two governorates added at once never share a name.
    async fn insert_governorate(&self, name: String) -> Result<Governorate, StoreError>;
    /// Every governorate, by id: one read (one statement on the SQL stores).
    async fn governorates(&self) -> Result<Vec<Governorate>, StoreError>;
    /// Adds a shipping option (active, no governorates): one insert.
    async fn insert_shipping_option(&self, name: String) -> Result<ShippingOption, StoreError>;
    /// Offers or stops a shipping option; `NotFound` when there is none. One atomic write of
    /// the option, answered with its rates as they stand in the same operation.
    async fn set_shipping_option_active(
        &self,
        id: ShippingOptionId,
        active: bool,
    ) -> Result<ShippingOption, StoreError>;
    /// Sets (adds or replaces) what an option charges for a governorate, the rate's
    /// `governorate_name` taken from the governorate; rates stay sorted by governorate id.
    /// `Invalid` when there is no such governorate, `NotFound` when there is no such option.
    /// One atomic operation: both checks, the rate's write, and the option read back with its
    /// rates, so the answer is the option as this write left it.
    async fn set_shipping_rate(
        &self,
        option: ShippingOptionId,
        rate: ShippingRate,
    ) -> Result<ShippingOption, StoreError>;
    /// Every shipping option, active or not, by id, with rates by governorate id: one read,
    /// the options and their rates from one statement on the SQL stores.
    async fn shipping_options(&self) -> Result<Vec<ShippingOption>, StoreError>;
}

/// One state of a product: its id and its `updated_at`, which every write of the product
/// moves forward ([`next_updated_at`](super::next_updated_at) on every store, in the SQL
/// stores' statements): its own fields and activity, its variants' prices, labels and stock,
/// its warranties, its category's name ([`CatalogStore::update_category`]). So two reads with
/// the same version saw the same record. What [`CatalogStore::product_versions`] lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ProductVersion {
    /// The product.
    pub id: ProductId,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
}

impl ProductVersion {
    /// The version of `id` as of `updated_at`.
    pub fn new(id: ProductId, updated_at: DateTime<Utc>) -> Self {
        Self { id, updated_at }
    }

    /// The version of `product` as it is.
    pub fn of(product: &Product) -> Self {
        Self::new(product.id, product.updated_at)
    }
}
