//! The catalogue change feed of [`MemoryStore`](super::MemoryStore): one entry per product,
//! numbered by a counter under the store's lock, so that positions are commit order.
//!
//! Every write that changes a product as it is rendered goes through one helper,
//! [`State::stamp_product`] (its insert through [`State::record_created`]), which stamps the
//! product's `updated_at` and moves its entry to the end of the feed in the same operation.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::State;
use crate::model::*;
use crate::store::*;

/// The feed: each product's latest change, and the products by the position of that change.
#[derive(Debug, Default)]
pub(super) struct ChangeFeed {
    /// The last position given (0: none yet).
    last: i64,
    by_position: BTreeMap<i64, ProductId>,
    latest: HashMap<ProductId, CatalogChange>,
}

impl ChangeFeed {
    /// Moves `product`'s entry to the end of the feed, as it is now.
    fn record(&mut self, product: &Product, created: bool) {
        self.last += 1;
        let position = ChangePosition::new(0, self.last);
        let change = CatalogChange::new(
            position,
            product.id,
            ChangeKind::of(product.active, created),
            product.updated_at,
        );
        if let Some(before) = self.latest.insert(product.id, change) {
            self.by_position.remove(&before.position.low());
        }
        self.by_position.insert(self.last, product.id);
    }

    /// [`CatalogStore::newest_catalog_change`]: the position of the last entry.
    pub(super) fn newest(&self) -> Option<ChangePosition> {
        let (_, product) = self.by_position.last_key_value()?;
        self.latest.get(product).map(|c| c.position)
    }

    /// [`CatalogStore::catalog_changes`]: the entries after `after`, at most `limit`.
    pub(super) fn read(&self, after: Option<ChangePosition>, limit: usize) -> CatalogChanges {
        // Positions are (0, n): one after (h, l) with h > 0 is past every one of them.
        let from = match after {
            None => 0,
            Some(p) if p.high() > 0 => i64::MAX,
            Some(p) => p.low(),
        };
        let changes = self
            .by_position
            .range(from.saturating_add(1)..)
            .take(limit.saturating_add(1))
            .filter_map(|(_, id)| self.latest.get(id).cloned())
            .collect();
        let head = ChangePosition::new(0, self.last);
        CatalogChanges::from_read(changes, limit, after, head)
    }
}

impl State {
    /// Stamps product `id` changed at `now` ([`next_updated_at`]) and moves its entry to the
    /// end of the feed: the one way a write of the memory store marks a product changed.
    /// Called once the write's other changes to the product (its `active` above all) are made.
    pub(super) fn stamp_product(
        &mut self,
        id: ProductId,
        now: DateTime<Utc>,
    ) -> Result<&mut Product, StoreError> {
        let State {
            products, changes, ..
        } = self;
        let product = products
            .get_mut(&id)
            .map(Arc::make_mut)
            .ok_or(StoreError::NotFound)?;
        product.updated_at = next_updated_at(product.updated_at, now);
        changes.record(product, false);
        Ok(product)
    }

    /// Puts a product just inserted at the end of the feed, `created`.
    pub(super) fn record_created(&mut self, product: &Product) {
        self.changes.record(product, true);
    }
}
