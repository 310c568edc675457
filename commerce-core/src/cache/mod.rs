//! The engine's caching store: any [`Store`] wrapped with the rendered-product, rendered-page
//! and rendered-order caches, as tower-sessions' `CachingSessionStore` wraps a session store.
//!
//! Every store method goes to the wrapped store unchanged (the one delegation list,
//! `store_methods!`); the contract's only part for the caches is two provided reads of
//! versions ([`CatalogStore::product_versions`], [`OrderStore::order_versions`]). The reads the engine
//! answers from kept JSON are this wrapper's own: [`CachingStore::product_page`],
//! [`CachingStore::active_product`] and [`CachingStore::order_page`]. Each lists what it needs
//! as versions first ([`CatalogStore::product_versions`], [`CatalogStore::product`],
//! [`OrderStore::order_versions`]: plain reads of the contract), answers from the kept JSON
//! of exactly those versions, and reads the records whole only when one is missing. A version
//! changes with every write of its product or order, whichever instance writes it, so what is
//! served is never older than what the store listed at the request (`rendered_products`,
//! `rendered_orders`).
//!
//! A product's JSON shows its category's name, and a rename moves the `updated_at` of every
//! product of the category in the rename's own atomic operation. So the names are read after
//! the products they render: a rename that lands between the two reads shows its new name
//! under the version before it (newer than the version, never older), and the next listing
//! shows the new version.

pub(crate) mod pulls_seen;
pub(crate) mod rendered_me;
pub(crate) mod rendered_orders;
pub(crate) mod rendered_products;
pub(crate) mod shared;
pub(crate) mod unknown_keys;

use std::future::Future;
use std::sync::Arc;

use bytes::Bytes;
use serde_json::value::RawValue;

use crate::cache::rendered_orders::{RenderedOrder, RenderedOrders};
use crate::cache::rendered_products::{Rendered, RenderedPages, RenderedProducts};
use crate::config::Config;
use crate::domain::earnings::{PayoutRules, WalletTotals};
use crate::model::*;
use crate::render::wire;
use crate::store::delegate::forward_store;
use crate::store::*;
use chrono::{DateTime, Utc};

/// A store with the engine's rendered-JSON caches (module docs).
pub(crate) struct CachingStore {
    inner: Arc<dyn Store>,
    /// Products' JSON, reused while their versions are the ones listed.
    products: RenderedProducts,
    /// Whole `GET /products` bodies, reused while the page lists the same versions and meta.
    pages: RenderedPages,
    /// Orders' JSON, reused while the orders keep their versions.
    orders: RenderedOrders,
}

/// A `GET /products` page: the products listed (billed as pulled) and the body.
pub(crate) struct ProductPage {
    /// The products of the page, in order.
    pub(crate) ids: Vec<ProductId>,
    /// `{"data": [...], "meta": {...}}`.
    pub(crate) body: Bytes,
}

impl CachingStore {
    /// `inner` with caches of the sizes `config` sets (`rendered_products_bytes`,
    /// `rendered_orders_bytes`; 0 keeps none, and no page either without product renderings).
    pub(crate) fn new(inner: Arc<dyn Store>, config: &Config) -> Self {
        let pages = if config.rendered_products_bytes > 0 {
            RenderedPages::CAPACITY
        } else {
            0
        };
        Self {
            inner,
            products: RenderedProducts::new(config.rendered_products_bytes),
            pages: RenderedPages::new(pages),
            orders: RenderedOrders::new(config.rendered_orders_bytes),
        }
    }

    /// Every store method is the wrapped store's.
    async fn around<T, E: From<StoreError>>(
        &self,
        _op: Operation,
        _event: impl FnOnce(&T) + Send,
        call: impl Future<Output = Result<T, E>> + Send,
    ) -> Result<T, E> {
        call.await
    }

    /// The page of products `filter` lists as `GET /products` shows it: the kept body when the
    /// store lists the same versions under the same meta; else each product's kept JSON, the
    /// page read whole when one is missing.
    pub(crate) async fn product_page(
        &self,
        filter: &ProductFilter,
        page: PageRequest,
    ) -> Result<ProductPage, StoreError> {
        let listed = self.inner.product_versions(filter, page).await?;
        let ids = listed.items.iter().map(|v| v.id).collect();
        if let Some(body) = self.pages.kept(&listed.items, page, listed.total) {
            return Ok(ProductPage { ids, body });
        }
        let kept: Option<Vec<Arc<Rendered>>> = listed
            .items
            .iter()
            .map(|&version| self.products.get(version))
            .collect();
        if let Some(items) = kept {
            let body = self.pages.body(listed.items, &items, page, listed.total);
            return Ok(ProductPage { ids, body });
        }
        // Read whole (a product changed since the listing shows in this read) and answer
        // with this read: its products, versions and total.
        let found = self.inner.products(filter, page).await?;
        let categories = self.inner.all_categories().await?;
        let items: Vec<Arc<Rendered>> = found
            .items
            .iter()
            .map(|product| self.render(product, &categories))
            .collect();
        let versions: Vec<ProductVersion> = found.items.iter().map(ProductVersion::of).collect();
        let ids = versions.iter().map(|v| v.id).collect();
        let body = self.pages.body(versions, &items, page, found.total);
        Ok(ProductPage { ids, body })
    }

    /// The JSON of product `id` as `GET /products/{id}` shows it, `None` when there is no such
    /// product or it is stopped.
    pub(crate) async fn active_product(
        &self,
        id: ProductId,
    ) -> Result<Option<Arc<Rendered>>, StoreError> {
        let Some(product) = self.inner.product(id).await? else {
            return Ok(None);
        };
        let rendered = match self.products.get(ProductVersion::of(&product)) {
            Some(kept) => kept,
            None => {
                let categories = self.inner.all_categories().await?;
                self.render(&product, &categories)
            }
        };
        Ok(rendered.active().then_some(rendered))
    }

    /// The JSON of `product` under its category's name in `categories` (kept).
    fn render(&self, product: &Product, categories: &[Category]) -> Arc<Rendered> {
        match self.products.get(ProductVersion::of(product)) {
            Some(kept) => kept,
            None => self
                .products
                .render(product, category_name(categories, product.category_id)),
        }
    }

    /// The account's orders `filter` lists, as `GET /orders` shows them under `rules`: each
    /// order's kept JSON when the store lists the version it was made from, the page read
    /// whole when one is missing. Returns the list body.
    pub(crate) async fn order_page(
        &self,
        account: AccountId,
        filter: &OrderFilter,
        page: PageRequest,
        rules: PayoutRules,
    ) -> Result<Vec<u8>, StoreError> {
        let listed = self.inner.order_versions(account, filter, page).await?;
        let kept: Option<Vec<Arc<RenderedOrder>>> = listed
            .items
            .iter()
            .map(|&version| self.orders.get(version, rules))
            .collect();
        let (items, total) = match kept {
            Some(items) => (items, listed.total),
            None => {
                let found = self.inner.orders(account, filter, page).await?;
                let items = found
                    .items
                    .iter()
                    .map(|order| {
                        self.orders
                            .get(OrderVersion::of(order), rules)
                            .unwrap_or_else(|| self.orders.render(order, rules))
                    })
                    .collect();
                (items, found.total)
            }
        };
        let json: Vec<&RawValue> = items.iter().map(|r| r.json()).collect();
        Ok(wire::rendered_list_body(&json, page, total))
    }
}

/// The name of a category of `all` (by id, as the store lists them); empty for an unknown id.
fn category_name(all: &[Category], id: CategoryId) -> &str {
    all.binary_search_by_key(&id, |c| c.id)
        .map_or("", |at| all[at].name.as_str())
}

forward_store!(impl for CachingStore => inner);

impl std::fmt::Debug for CachingStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachingStore")
            .field("products", &self.products)
            .field("pages", &self.pages)
            .field("orders", &self.orders)
            .finish_non_exhaustive()
    }
}
