//! The rendered-product cache: each product's JSON, as `GET /products` and
//! `GET /products/{id}` show it, kept with the record it was rendered from.
//!
//! The JSON of a product is a function of the product record and its category's name only
//! ([`ProductView::new`]), the same for every account. So a rendering is reused exactly when
//! the record the store returns now equals the one it was rendered from (`==` on the whole
//! [`Product`]: price, stock figures, variants, warranties, activity, `updated_at`) and the
//! category's name is the same: no version to bump, nothing to invalidate, and a stale price or
//! stock figure can never be served (a property test interleaves changes and reads, on every
//! store). Comparing a record costs a small part of rendering it, whose Arabic text serde_json
//! escapes byte by byte. Several engines over one database each keep their own; a change made
//! by another instance shows in the record the store returns.

use std::sync::Arc;

use serde_json::value::RawValue;

use crate::model::{Product, ProductId};
use crate::wire::ProductView;

/// Rendered products, at most `capacity` of them (the least used go first).
pub(crate) struct RenderedProducts {
    cache: Option<quick_cache::sync::Cache<ProductId, Arc<Rendered>>>,
}

/// One product's JSON and what it was rendered from.
pub(crate) struct Rendered {
    product: Product,
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
            cache: (capacity > 0).then(|| quick_cache::sync::Cache::new(capacity)),
        }
    }

    /// The JSON of `product` under `category_name`: the kept rendering when it was made from
    /// an equal record under the same name, else a new one (kept for the next call).
    pub(crate) fn render(&self, product: Product, category_name: &str) -> Arc<Rendered> {
        let Some(cache) = &self.cache else {
            return Arc::new(Rendered::of(product, category_name));
        };
        if let Some(kept) = cache.get(&product.id)
            && kept.product == product
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
    fn of(product: Product, category_name: &str) -> Self {
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
