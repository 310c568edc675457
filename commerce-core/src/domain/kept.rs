//! The product records the checkout prices from: each ordered variant's product as the engine
//! last read it, so that an order reads no catalogue from the store while its products are
//! unchanged.
//!
//! A kept record may be out of date (another instance, or the operator, edited the product
//! since): that is safe because the order's own stock write compares what the order was priced
//! from ([`PricedFrom`](crate::model::PricedFrom): the variant's price and its product's
//! revision) with the stored values, in the statement that takes the stock
//! ([`OrderStore::place_order`](crate::store::OrderStore::place_order)); a write that finds
//! them changed writes nothing, and the checkout reads the products from the store, keeps
//! them, prices again and retries ([`placement`](super::placement)). Anything a kept record
//! refuses (a variant not sold, too few pieces) is decided again on records read from the
//! store, so a refusal never rests on a kept record either.
//!
//! Bounded by count: at most [`KeptProducts::CAPACITY`] variants, each naming its product's
//! one record (shared by the product's variants); the least used go first.

use std::sync::Arc;

use rustc_hash::FxBuildHasher;

use crate::model::{Product, VariantId};

/// Variant → its product's record as last read.
pub(crate) struct KeptProducts {
    cache: Option<Cache>,
}

type Cache =
    quick_cache::sync::Cache<VariantId, Arc<Product>, quick_cache::UnitWeighter, FxBuildHasher>;

impl KeptProducts {
    /// How many variants an engine keeps the product of.
    pub(crate) const CAPACITY: usize = 4096;

    /// Keeps the products of at most `capacity` variants; 0 keeps none (every checkout reads
    /// the store).
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            cache: (capacity > 0).then(|| {
                quick_cache::sync::Cache::with(
                    capacity,
                    capacity as u64,
                    quick_cache::UnitWeighter,
                    FxBuildHasher,
                    Default::default(),
                )
            }),
        }
    }

    /// The kept products of `variants` (each once), or `None` when one of them is not kept.
    pub(crate) fn of(&self, variants: &[VariantId]) -> Option<Vec<Arc<Product>>> {
        let cache = self.cache.as_ref()?;
        let mut products: Vec<Arc<Product>> = Vec::with_capacity(1);
        for variant in variants {
            let product = cache.get(variant)?;
            if !products.iter().any(|p| Arc::ptr_eq(p, &product)) {
                products.push(product);
            }
        }
        Some(products)
    }

    /// Keeps `products`, read from the store now, for each of their variants.
    pub(crate) fn keep(&self, products: &[Arc<Product>]) {
        let Some(cache) = &self.cache else {
            return;
        };
        for product in products {
            for variant in &product.variants {
                cache.insert(variant.id, product.clone());
            }
        }
    }

    /// Forgets the products of `variants` (read from the store again next time).
    pub(crate) fn forget(&self, variants: &[VariantId]) {
        if let Some(cache) = &self.cache {
            for variant in variants {
                cache.remove(variant);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn product(id: i64, variants: &[i64]) -> Arc<Product> {
        Arc::new(Product::bare(id, variants))
    }

    #[test]
    fn a_product_is_found_by_each_of_its_variants_once() {
        let kept = KeptProducts::new(16);
        let (a, b) = (product(1, &[10, 11]), product(2, &[20]));
        kept.keep(&[a.clone(), b.clone()]);
        let found = kept.of(&[VariantId::new(11), VariantId::new(10)]).unwrap();
        assert_eq!(found.len(), 1);
        assert!(Arc::ptr_eq(&found[0], &a));
        assert_eq!(
            kept.of(&[VariantId::new(20), VariantId::new(10)])
                .unwrap()
                .len(),
            2
        );
        // One variant not kept: the store is read for all of them.
        assert!(kept.of(&[VariantId::new(10), VariantId::new(30)]).is_none());
        kept.forget(&[VariantId::new(20)]);
        assert!(kept.of(&[VariantId::new(20)]).is_none());
        assert!(KeptProducts::new(0).of(&[VariantId::new(10)]).is_none());
    }
}
