//! A store that yields to the scheduler before each operation: a request through the engine
//! then takes several polls even on a store that never waits (the in-memory one), so that a
//! caller's drop can land in the middle of it, where the engine must finish it anyway.

use std::future::Future;
use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::Harness;
use crate::domain::earnings::WalletTotals;
use crate::engine::Engine;
use crate::model::*;
use crate::store::delegate::forward_store;
use crate::store::*;

/// Every operation of `inner`, each after one yield.
struct Yielding {
    inner: Arc<dyn Store>,
}

impl Yielding {
    async fn around<T, E: From<StoreError>>(
        &self,
        _op: Operation,
        _event: impl FnOnce(&T) + Send,
        call: impl Future<Output = Result<T, E>> + Send,
    ) -> Result<T, E> {
        tokio::task::yield_now().await;
        call.await
    }
}

forward_store!(impl for Yielding => inner);

/// An engine over `h`'s store behind [`Yielding`], with `h`'s settings and clock.
pub(super) fn engine(h: &Harness) -> Engine {
    let store = Arc::new(Yielding {
        inner: h.engine.store().clone(),
    });
    Engine::builder(store)
        .config(h.engine.config().clone())
        .clock(Arc::new(h.clock.clone()))
        .build()
        .expect("the harness's settings are valid")
}
