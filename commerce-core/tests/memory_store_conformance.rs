//! The store conformance suite on [`MemoryStore`].

use std::sync::Arc;

use commerce_core::store::{MemoryStore, prelude::*};

async fn fresh_store() -> Arc<dyn Store> {
    Arc::new(MemoryStore::new())
}

commerce_core::store_conformance_tests!(fresh_store());
