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
//!
//! A whole `GET /products` body is kept too ([`RenderedPages`]): the page's body is a function
//! of its renderings (in order) and its meta (page, per page, total; the last page follows from
//! them), so it is served again, by reference count and without a copy, exactly when a request
//! produces the very same renderings ([`Arc::ptr_eq`], element by element) and the same meta.
//! A rendering never changes once made, and the kept page holds its renderings (and through
//! them their records), so none of them can be freed and its allocation reused by another
//! rendering while the page is kept: equal pointers mean the same JSON. A changed product gets
//! a new rendering (above), a product stopped or started changes the total or the page's
//! renderings, so no change that shows in a page can leave it looking the same.
//!
//! Before rendering anything, a request looks for a kept page by the store's records
//! themselves ([`RenderedPages::kept`]): the very same product records ([`Arc::ptr_eq`],
//! element by element, in order), the very same categories list (one allocation, whose names
//! the renderings took) and the same meta. This is what a store that hands out its own
//! records finds again (the memory store); a store that builds every record afresh never does,
//! and goes on to the renderings as above. The kept page holds those records and that list, so
//! no other record or list can take their addresses while it is kept, and a shared record is
//! never changed while a reader holds it ([`Arc`] gives no `&mut` to a shared value: the
//! memory store's writes go through [`Arc::make_mut`], which copies it). So equal pointers
//! mean the same records and names, and the page's renderings were made from records equal to
//! them under those names: its body is the one they make.

use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::Arc;

use bytes::Bytes;
use rustc_hash::FxBuildHasher;
use serde_json::value::RawValue;

use crate::model::{Category, PageRequest, Product, ProductId};
use crate::web::wire::{self, ProductView};

/// Rendered products, holding at most a bound of bytes ([`ByBytes`]; the least used go first).
pub(crate) struct RenderedProducts {
    cache: Option<ByteCache<ProductId, Rendered>>,
}

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

/// Whole `GET /products` bodies, at most [`RenderedPages::CAPACITY`] of them (the least used go
/// first), each kept with the records, categories, renderings and meta it was made from
/// (module docs), and found by the records or by the renderings.
pub(crate) struct RenderedPages {
    caches: Option<PageCaches>,
}

/// The pages by what they were made from; a hit is checked in full.
struct PageCaches {
    /// By a hash of the records' and the categories list's addresses and the meta
    /// ([`records_key`]).
    by_records: PageCache,
    /// By a hash of the renderings' addresses and the meta ([`page_key`]).
    by_renderings: PageCache,
}

/// Pages by a hash.
type PageCache = quick_cache::sync::Cache<u64, Arc<Page>, quick_cache::UnitWeighter, FxBuildHasher>;

/// One page's body and what it was made from. Holding the records, the categories list and
/// the renderings keeps their allocations alive, so a pointer equal to one of them is that
/// very value.
struct Page {
    records: Box<[Arc<Product>]>,
    categories: Arc<[Category]>,
    items: Box<[Arc<Rendered>]>,
    page: PageRequest,
    total: u64,
    body: Bytes,
}

impl Page {
    /// Whether this page was made from exactly `items` (the same allocations, in order) under
    /// the same meta: then its body is the body they make.
    fn is_of(&self, items: &[Arc<Rendered>], page: PageRequest, total: u64) -> bool {
        self.page == page
            && self.total == total
            && self.items.len() == items.len()
            && self.items.iter().zip(items).all(|(a, b)| Arc::ptr_eq(a, b))
    }

    /// Whether this page was made from exactly `records` (the same allocations, in order),
    /// under the same categories list (the same allocation) and the same meta: then its body
    /// is the body they make (module docs).
    fn is_from(
        &self,
        records: &[Arc<Product>],
        categories: &Arc<[Category]>,
        page: PageRequest,
        total: u64,
    ) -> bool {
        self.page == page
            && self.total == total
            && Arc::ptr_eq(&self.categories, categories)
            && self.records.len() == records.len()
            && self
                .records
                .iter()
                .zip(records)
                .all(|(a, b)| Arc::ptr_eq(a, b))
    }
}

/// The hash of a page's renderings (their addresses, in order) and meta.
fn page_key(items: &[Arc<Rendered>], page: PageRequest, total: u64) -> u64 {
    let mut hasher = FxBuildHasher.build_hasher();
    (page.page(), page.per_page(), total, items.len()).hash(&mut hasher);
    for item in items {
        Arc::as_ptr(item).hash(&mut hasher);
    }
    hasher.finish()
}

/// The hash of a page's records (their addresses, in order), its categories list's address
/// and its meta.
fn records_key(
    records: &[Arc<Product>],
    categories: &Arc<[Category]>,
    page: PageRequest,
    total: u64,
) -> u64 {
    let mut hasher = FxBuildHasher.build_hasher();
    (page.page(), page.per_page(), total, records.len()).hash(&mut hasher);
    Arc::as_ptr(categories).cast::<Category>().hash(&mut hasher);
    for record in records {
        Arc::as_ptr(record).hash(&mut hasher);
    }
    hasher.finish()
}

impl RenderedPages {
    /// How many pages an engine keeps when it keeps renderings at all: a page of 100
    /// products is about 150 KiB, so at most about 10 MiB, besides the records it keeps
    /// alive (at most 100 a page) after the store has replaced them. Each of the two ways to
    /// find a page keeps at most this many.
    pub(crate) const CAPACITY: usize = 64;

    /// A cache of `capacity` pages; 0 writes every body every time.
    pub(crate) fn new(capacity: usize) -> Self {
        let caches = bounded(capacity).zip(bounded(capacity));
        Self {
            caches: caches.map(|(by_records, by_renderings)| PageCaches {
                by_records,
                by_renderings,
            }),
        }
    }

    /// The kept list body made from exactly `records` (the same allocations, in order) under
    /// the very same `categories` list and the same `page` and `total`, by reference count;
    /// `None` when there is none (then render the records and call [`body`](Self::body)).
    pub(crate) fn kept(
        &self,
        records: &[Arc<Product>],
        categories: &Arc<[Category]>,
        page: PageRequest,
        total: u64,
    ) -> Option<Bytes> {
        let caches = self.caches.as_ref()?;
        let kept = caches
            .by_records
            .get(&records_key(records, categories, page, total))?;
        kept.is_from(records, categories, page, total)
            .then(|| kept.body.clone())
    }

    /// The list body of `items` (the renderings of `records` under `categories`) under `page`
    /// and `total` (`{"data": [...], "meta": {...}}`): the kept one, by reference count, when
    /// it was made from the very same renderings and meta; else a new one, kept for the next
    /// call, to be found by `records` ([`kept`](Self::kept)) or by `items`. A page found by its
    /// renderings is not kept again under these records: they are a store's fresh copies (the
    /// SQL stores'), which no later request hands back, so keeping them would cost every
    /// request an allocation and an insert for nothing.
    pub(crate) fn body(
        &self,
        records: Vec<Arc<Product>>,
        categories: &Arc<[Category]>,
        items: Vec<Arc<Rendered>>,
        page: PageRequest,
        total: u64,
    ) -> Bytes {
        let Some(caches) = &self.caches else {
            return Bytes::from(list_body(&items, page, total));
        };
        let key = page_key(&items, page, total);
        if let Some(kept) = caches.by_renderings.get(&key)
            && kept.is_of(&items, page, total)
        {
            return kept.body.clone();
        }
        let body = Bytes::from(list_body(&items, page, total));
        let records_key = records_key(&records, categories, page, total);
        let kept = Arc::new(Page {
            records: records.into_boxed_slice(),
            categories: categories.clone(),
            items: items.into_boxed_slice(),
            page,
            total,
            body: body.clone(),
        });
        caches.by_renderings.insert(key, kept.clone());
        caches.by_records.insert(records_key, kept);
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
            .field(
                "len",
                &self.caches.as_ref().map_or(0, |c| c.by_renderings.len()),
            )
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
