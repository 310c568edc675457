//! The rendered-product cache: each product's JSON, as `GET /products` and
//! `GET /products/{id}` show it, kept with the version of the product it was rendered from,
//! and whole `GET /products` bodies kept with the versions of their products.
//!
//! The JSON of a product is a function of the product record and its category's name only
//! ([`ProductView::new`]), the same for every account. The record is identified by its
//! [`ProductVersion`] (id and `updated_at`): every write of a product, of its variants (prices,
//! stock), of its warranties and of its category's name moves its `updated_at` forward, on
//! every store and whatever the clocks of the instances writing it, so a product listed with
//! the version a rendering was made from is the product it was made from; a changed product
//! comes back under a new version and is read and rendered again. No version to bump, nothing
//! to invalidate, and a stale price or stock figure is never served (a property test
//! interleaves changes and reads, on every store). Several engines over one database each keep
//! their own; a change made by another instance shows in the version the store lists.
//!
//! A whole `GET /products` body is kept too ([`RenderedPages`]): the page's body is a function
//! of its products' renderings (in order) and its meta (page, per page, total; the last page
//! follows from them), so it is served again, by reference count and without a copy, exactly
//! when the store lists the very same versions (in order) under the same meta. A changed
//! product lists under a new version, a product stopped or started changes the total or the
//! page's versions, so no change that shows in a page can leave it looking the same.

use std::hash::{BuildHasher, Hash};
use std::sync::Arc;

use bytes::Bytes;
use rustc_hash::FxBuildHasher;
use serde_json::value::RawValue;

use crate::model::{PageRequest, Product, ProductId};
use crate::render::wire::{self, ProductView};
use crate::store::ProductVersion;

/// Rendered products, holding at most a bound of bytes ([`ByBytes`]; the least used go first).
pub(crate) struct RenderedProducts {
    cache: Option<ByteCache<ProductId, Rendered>>,
}

/// One product's JSON and the version it was rendered from.
pub(crate) struct Rendered {
    version: ProductVersion,
    active: bool,
    json: Box<RawValue>,
}

impl Rendered {
    /// The product's JSON object.
    pub(crate) fn json(&self) -> &RawValue {
        &self.json
    }

    /// Whether the product was sold (active) in the version rendered.
    pub(crate) fn active(&self) -> bool {
        self.active
    }

    fn of(product: &Product, category_name: &str) -> Self {
        let json = serde_json::value::to_raw_value(&ProductView::new(product, category_name))
            .expect("a product view always serialises");
        Self {
            version: ProductVersion::of(product),
            active: product.active,
            json,
        }
    }
}

impl Weighed for Rendered {
    fn json(&self) -> &RawValue {
        &self.json
    }
}

impl RenderedProducts {
    /// A cache of at most `bytes` bytes ([`ByBytes`]); 0 renders every product every time.
    pub(crate) fn new(bytes: usize) -> Self {
        Self {
            cache: bounded_bytes(bytes),
        }
    }

    /// The bytes the kept renderings weigh ([`ByBytes`]).
    #[cfg(any(test, feature = "testing"))]
    pub(crate) fn bytes(&self) -> u64 {
        self.cache.as_ref().map_or(0, |c| c.weight())
    }

    /// Whether the rendering of the product `id` is kept.
    #[cfg(any(test, feature = "testing"))]
    pub(crate) fn keeps(&self, id: ProductId) -> bool {
        self.cache.as_ref().is_some_and(|c| c.peek(&id).is_some())
    }

    /// The kept JSON of the product at `version`, if there is one.
    pub(crate) fn get(&self, version: ProductVersion) -> Option<Arc<Rendered>> {
        self.cache
            .as_ref()?
            .get(&version.id)
            .filter(|kept| kept.version == version)
    }

    /// The JSON of `product` under `category_name` (its category's), rendered now and kept for
    /// the next requests.
    pub(crate) fn render(&self, product: &Product, category_name: &str) -> Arc<Rendered> {
        let rendered = Arc::new(Rendered::of(product, category_name));
        if let Some(cache) = &self.cache {
            cache.insert(product.id, rendered.clone());
        }
        rendered
    }
}

/// Whole `GET /products` bodies, at most [`RenderedPages::CAPACITY`] of them (the least used go
/// first), each kept with the versions and meta it was made from (module docs).
pub(crate) struct RenderedPages {
    cache: Option<PageCache>,
}

/// Pages by a hash of their versions and meta ([`page_key`]); a hit is checked in full.
type PageCache = quick_cache::sync::Cache<u64, Arc<Page>, quick_cache::UnitWeighter, FxBuildHasher>;

/// One page's body and what it was made from.
struct Page {
    versions: Box<[ProductVersion]>,
    page: PageRequest,
    total: u64,
    body: Bytes,
}

impl Page {
    /// Whether this page was made from exactly `versions` (in order) under the same meta:
    /// then its body is the body they make.
    fn is_of(&self, versions: &[ProductVersion], page: PageRequest, total: u64) -> bool {
        self.page == page && self.total == total && *self.versions == *versions
    }
}

/// The hash of a page's versions (in order) and meta.
fn page_key(versions: &[ProductVersion], page: PageRequest, total: u64) -> u64 {
    FxBuildHasher.hash_one((page.page(), page.per_page(), total, versions))
}

impl RenderedPages {
    /// How many pages an engine keeps when it keeps renderings at all: a page of 100
    /// products is about 150 KiB, so at most about 10 MiB.
    pub(crate) const CAPACITY: usize = 64;

    /// A cache of `capacity` pages; 0 writes every body every time.
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            cache: bounded(capacity),
        }
    }

    /// The kept list body made from exactly `versions` (in order) under the same `page` and
    /// `total`, by reference count; `None` when there is none (then render the products and
    /// call [`body`](Self::body)).
    pub(crate) fn kept(
        &self,
        versions: &[ProductVersion],
        page: PageRequest,
        total: u64,
    ) -> Option<Bytes> {
        let kept = self.cache.as_ref()?.get(&page_key(versions, page, total))?;
        kept.is_of(versions, page, total).then(|| kept.body.clone())
    }

    /// The list body of `items` (the renderings of the products at `versions`, in order) under
    /// `page` and `total` (`{"data": [...], "meta": {...}}`), written now and kept for the next
    /// call ([`kept`](Self::kept)).
    pub(crate) fn body(
        &self,
        versions: Vec<ProductVersion>,
        items: &[Arc<Rendered>],
        page: PageRequest,
        total: u64,
    ) -> Bytes {
        let body = Bytes::from(list_body(items, page, total));
        if let Some(cache) = &self.cache {
            let key = page_key(&versions, page, total);
            let kept = Arc::new(Page {
                versions: versions.into_boxed_slice(),
                page,
                total,
                body: body.clone(),
            });
            cache.insert(key, kept);
        }
        body
    }
}

/// A cache of at most `capacity` entries (the least used go first); none for 0.
pub(crate) fn bounded<K: Eq + Hash, V: Clone>(
    capacity: usize,
) -> Option<quick_cache::sync::Cache<K, V, quick_cache::UnitWeighter, FxBuildHasher>> {
    (capacity > 0).then(|| {
        let items = u64::try_from(capacity).unwrap_or(u64::MAX);
        let (weigh, lifecycle) = (quick_cache::UnitWeighter, Default::default());
        quick_cache::sync::Cache::with(capacity, items, weigh, FxBuildHasher, lifecycle)
    })
}

/// A kept rendering, weighed by its JSON ([`ByBytes`]).
pub(crate) trait Weighed {
    /// The rendered JSON.
    fn json(&self) -> &RawValue;
}

/// What one kept rendering counts for against its cache's bound, besides its JSON's length:
/// the rendering's own fields, its reference counts and its slot in the cache.
pub(crate) const ENTRY_OVERHEAD: u64 = 256;

/// The smallest share of a byte bound one shard of a cache holds (1 MiB): a bound below twice
/// this is one shard, so an entry is refused only when it weighs more than the whole bound.
const MIN_SHARD_BYTES: usize = 1 << 20;

/// The most shards of a byte-bounded cache (readers and writers of different shards never
/// wait on each other).
const MAX_SHARDS: usize = 16;

/// Weighs a kept rendering in bytes: its JSON's length plus [`ENTRY_OVERHEAD`].
#[derive(Clone, Copy)]
pub(crate) struct ByBytes;

impl<K, V: Weighed> quick_cache::Weighter<K, Arc<V>> for ByBytes {
    fn weight(&self, _: &K, value: &Arc<V>) -> u64 {
        u64::try_from(value.json().get().len())
            .unwrap_or(u64::MAX)
            .saturating_add(ENTRY_OVERHEAD)
    }
}

/// Renderings by id, weighed by [`ByBytes`].
pub(crate) type ByteCache<K, V> = quick_cache::sync::Cache<K, Arc<V>, ByBytes, FxBuildHasher>;

/// A cache holding at most `bytes` bytes of renderings ([`ByBytes`]), the least used going
/// first when an insert would pass the bound; none for 0. The bound is split evenly among
/// shards of at least [`MIN_SHARD_BYTES`] each (at most [`MAX_SHARDS`]; one below 2 MiB), and
/// the total never passes `bytes`. A rendering weighing more than 97% of its shard's share is
/// not kept (the cache keeps that much room for its most used entries); at the default bound
/// a shard holds 4 MiB, a hundred times an order of 100 lines with warranties.
pub(crate) fn bounded_bytes<K: Eq + Hash, V: Weighed>(bytes: usize) -> Option<ByteCache<K, V>> {
    (bytes > 0).then(|| {
        let shards = (bytes / MIN_SHARD_BYTES).clamp(1, MAX_SHARDS);
        // A power of two, as the cache wants, at most `shards`.
        let shards = 1usize << shards.ilog2();
        let share = bytes / shards;
        let weight = u64::try_from(share * shards).unwrap_or(u64::MAX);
        let options = quick_cache::OptionsBuilder::new()
            .shards(shards)
            .estimated_items_capacity((bytes / 4096).max(shards * 32))
            .weight_capacity(weight)
            .build()
            .expect("every option is set");
        quick_cache::sync::Cache::with_options(options, ByBytes, FxBuildHasher, Default::default())
    })
}

/// The list body of `items`, written afresh.
fn list_body(items: &[Arc<Rendered>], page: PageRequest, total: u64) -> Vec<u8> {
    let json: Vec<&RawValue> = items.iter().map(|r| r.json()).collect();
    wire::rendered_list_body(&json, page, total)
}

impl std::fmt::Debug for RenderedPages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RenderedPages")
            .field("len", &self.cache.as_ref().map_or(0, |c| c.len()))
            .finish()
    }
}

impl std::fmt::Debug for RenderedProducts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RenderedProducts")
            .field("len", &self.cache.as_ref().map_or(0, |c| c.len()))
            .finish()
    }
}
