//! The rendered-order cache: each order's JSON, as `GET /orders` shows it, kept with the
//! version of the order it was rendered from, so that a page of orders the engine has shown
//! before is read as ids and versions only and written from the kept JSON.
//!
//! The JSON of an order is a function of the order and of the payout rule at the time of the
//! request ([`OrderView::new`]). The order is identified by its [`OrderVersion`] (id and
//! `updated_at`): every write of an order moves its `updated_at` forward, on every store and
//! whatever the clocks of the instances writing it, so an order read with the version a
//! rendering was made from is the order it was made from; a changed order comes back under a
//! new version and is read and rendered again. Of the payout rule, the rendering depends only on
//! the payout's state and ready date, which the kept status and delivery date give again at any
//! instant ([`PayoutRules::payout_of`]): a rendering is reused only while they are the ones it
//! shows (an order's hold ending turns its kept JSON from `held` to `ready` no more).
//!
//! The store lists the page as versions ([`OrderStore::order_versions`](crate::store::OrderStore));
//! a request takes the kept rendering of each ([`RenderedOrders::get`]) and reads the page whole
//! only when one is missing (the engine's caching store, `caching`). An order's JSON is the
//! same whoever reads it; a store answers only the caller's own orders, so a rendering never
//! crosses accounts. Several engines over one database each keep their own.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde_json::value::RawValue;

use crate::cache::rendered_products::{ByteCache, Weighed, bounded_bytes};
use crate::domain::earnings::PayoutRules;
use crate::model::{Order, OrderId, OrderStatus, PayoutState};
use crate::render::wire::OrderView;
use crate::store::OrderVersion;

/// Rendered orders, holding at most a bound of bytes
/// ([`ByBytes`](crate::cache::rendered_products::ByBytes); the least used go first).
pub(crate) struct RenderedOrders {
    cache: Option<ByteCache<OrderId, RenderedOrder>>,
}

/// One order's JSON and what it was rendered from.
pub(crate) struct RenderedOrder {
    version: OrderVersion,
    status: OrderStatus,
    delivered_at: Option<DateTime<Utc>>,
    payout: (PayoutState, Option<DateTime<Utc>>),
    json: Box<RawValue>,
}

impl RenderedOrder {
    /// The order's JSON object.
    pub(crate) fn json(&self) -> &RawValue {
        &self.json
    }

    /// Whether this is the JSON of `version` under `rules`.
    fn shows(&self, version: OrderVersion, rules: PayoutRules) -> bool {
        self.version == version && rules.payout_of(self.status, self.delivered_at) == self.payout
    }

    fn of(order: &Order, rules: PayoutRules) -> Self {
        let json = serde_json::value::to_raw_value(&OrderView::new(order, rules))
            .expect("an order view always serialises");
        Self {
            version: OrderVersion::of(order),
            status: order.status,
            delivered_at: order.delivered_at,
            payout: rules.payout(order),
            json,
        }
    }
}

impl Weighed for RenderedOrder {
    fn json(&self) -> &RawValue {
        &self.json
    }
}

impl RenderedOrders {
    /// A cache of at most `bytes` bytes ([`ByBytes`](crate::cache::rendered_products::ByBytes)); 0
    /// renders every order every time.
    pub(crate) fn new(bytes: usize) -> Self {
        Self {
            cache: bounded_bytes(bytes),
        }
    }

    /// The bytes the kept renderings weigh.
    #[cfg(any(test, feature = "testing"))]
    pub(crate) fn bytes(&self) -> u64 {
        self.cache.as_ref().map_or(0, |c| c.weight())
    }

    /// The kept JSON of the order at `version` under `rules`, if there is one.
    pub(crate) fn get(
        &self,
        version: OrderVersion,
        rules: PayoutRules,
    ) -> Option<Arc<RenderedOrder>> {
        self.cache
            .as_ref()?
            .get(&version.id)
            .filter(|kept| kept.shows(version, rules))
    }

    /// The JSON of `order` under `rules`, rendered now (and kept for the next requests).
    pub(crate) fn render(&self, order: &Order, rules: PayoutRules) -> Arc<RenderedOrder> {
        let rendered = Arc::new(RenderedOrder::of(order, rules));
        if let Some(cache) = &self.cache {
            cache.insert(order.id, rendered.clone());
        }
        rendered
    }
}

impl std::fmt::Debug for RenderedOrders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RenderedOrders")
            .field("len", &self.cache.as_ref().map_or(0, |c| c.len()))
            .finish()
    }
}
