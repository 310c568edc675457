//! The rendered-product cache: each product's JSON, as `GET /products` and
//! `GET /products/{id}` show it, kept with the record it was rendered from.
//!
//! The JSON of a product is a function of the product record and its category's name only
//! ([`ProductView::new`]), the same for every account. So a rendering is reused exactly when
//! the record the store returns now is the one it was rendered from and the category's name is
//! the same: no version to bump, nothing to invalidate, and a stale price or stock figure can
//! never be served (a property test interleaves changes and reads, on every store).
//!
//! "The one it was rendered from" is checked in two steps. The same allocation
//! ([`Arc::ptr_eq`]): a store that keeps its products in memory hands out its own records
//! ([`CatalogStore::shared_products`](crate::store::CatalogStore::shared_products)) and never
//! changes one a reader holds (a write copies it), and the kept rendering holds its record, so
//! the allocation cannot be freed and reused by another record either. Else an equal record
//! (`==` on the whole [`Product`]: price, stock figures, variants, warranties, activity,
//! `updated_at`): what the SQL stores, which build every record afresh, are checked by;
//! comparing costs a small part of rendering, whose Arabic text serde_json escapes byte by
//! byte. Several engines over one database each keep their own; a change made by another
//! instance shows in the record the store returns.

use rustc_hash::FxBuildHasher;
use std::sync::Arc;

use serde_json::value::RawValue;

use crate::model::{Product, ProductId};
use crate::wire::ProductView;

/// Rendered products, at most `capacity` of them (the least used go first).
pub(crate) struct RenderedProducts {
    cache: Option<Cache>,
}

/// The renderings by product id.
type Cache =
    quick_cache::sync::Cache<ProductId, Arc<Rendered>, quick_cache::UnitWeighter, FxBuildHasher>;

/// One product's JSON and what it was rendered from.
pub(crate) struct Rendered {
    product: Arc<Product>,
    category_name: Box<str>,
    json: Box<RawValue>,
}

impl Rendered {
    /// The product's JSON object.
    pub(crate) fn json(&self) -> &RawValue {
        &self.json
    }
}

impl RenderedProducts {
    /// A cache of `capacity` products; 0 renders every product every time.
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            cache: (capacity > 0).then(|| {
                let items = u64::try_from(capacity).unwrap_or(u64::MAX);
                let (weigh, lifecycle) = (quick_cache::UnitWeighter, Default::default());
                Cache::with(capacity, items, weigh, FxBuildHasher, lifecycle)
            }),
        }
    }

    /// The JSON of `product` under `category_name`: the kept rendering when it was made from
    /// the same or an equal record under the same name, else a new one (kept for the next
    /// call).
    pub(crate) fn render(&self, product: Arc<Product>, category_name: &str) -> Arc<Rendered> {
        let Some(cache) = &self.cache else {
            return Arc::new(Rendered::of(product, category_name));
        };
        if let Some(kept) = cache.get(&product.id)
            && (Arc::ptr_eq(&kept.product, &product) || *kept.product == *product)
            && *kept.category_name == *category_name
        {
            return kept;
        }
        let rendered = Arc::new(Rendered::of(product, category_name));
        cache.insert(rendered.product.id, rendered.clone());
        rendered
    }
}

impl Rendered {
    fn of(product: Arc<Product>, category_name: &str) -> Self {
        let json = serde_json::value::to_raw_value(&ProductView::new(&product, category_name))
            .expect("a product view always serialises");
        Self {
            product,
            category_name: category_name.into(),
            json,
        }
    }
}

impl std::fmt::Debug for RenderedProducts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RenderedProducts")
            .field("len", &self.cache.as_ref().map_or(0, |c| c.len()))
            .finish()
    }
}
