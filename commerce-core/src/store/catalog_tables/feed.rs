//! The catalogue change feed of [`CatalogTables`](super::CatalogTables): one entry per product,
//! numbered by a counter under the caller's lock, so that positions are commit order.
//!
//! Every write that changes a product as it is rendered goes through one helper,
//! `CatalogTables::stamp` (its insert through [`ChangeFeed::record`] with `created`), which
//! stamps the product's `updated_at` and moves its entry to the end of the feed in the same
//! call.

use std::collections::{BTreeMap, HashMap};

use crate::model::*;

/// The feed: each product's latest change, and the products by the position of that change.
#[derive(Debug, Default)]
pub(super) struct ChangeFeed {
    /// The last position given (0: none yet).
    pub(super) last: i64,
    pub(super) by_position: BTreeMap<i64, ProductId>,
    pub(super) latest: HashMap<ProductId, CatalogChange>,
}

impl ChangeFeed {
    /// Moves `product`'s entry to the end of the feed, as it is now.
    pub(super) fn record(&mut self, product: &Product, created: bool) {
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

    /// The position of the last entry.
    pub(super) fn newest(&self) -> Option<ChangePosition> {
        let (_, product) = self.by_position.last_key_value()?;
        self.latest.get(product).map(|c| c.position)
    }

    /// The entries after `after`, at most `limit`.
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
