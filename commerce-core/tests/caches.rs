//! The engine's rendered-JSON caches hold to their bounds in bytes (on the memory store: what
//! is tested is the cache, not the backend that made the records).

use commerce_core::store::MemoryStore;
use commerce_core::testing::caches;

#[tokio::test]
async fn rendered_orders_are_bounded_in_bytes() {
    caches::rendered_orders_are_bounded_in_bytes(&MemoryStore::new()).await;
}

#[tokio::test]
async fn rendered_products_are_bounded_in_bytes() {
    caches::rendered_products_are_bounded_in_bytes(&MemoryStore::new()).await;
}
