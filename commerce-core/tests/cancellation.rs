//! The cancellation suite on the in-memory store.

use std::sync::Arc;

use commerce_core::store::MemoryStore;
use commerce_core::testing::http::Harness;

commerce_core::cancellation_tests!(Harness::bare(Arc::new(MemoryStore::new())));
