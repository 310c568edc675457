//! The catalogue's change feed (`GET /catalog/changes`): where a change stands in the feed, what
//! kind it is, and one page of the feed as a store reads it.

use chrono::{DateTime, Utc};

use super::*;

/// A change's place in the catalogue change feed: two numbers compared in order (`high`
/// first). A store writes them so that every change committed after a read that returned a
/// position comes after it ([`CatalogStore::catalog_changes`](crate::store::CatalogStore::catalog_changes)):
/// the SQL store on PostgreSQL writes the writing transaction's id and a sequence's number,
/// the memory store and the SQL store on SQLite 0 and a counter taken under the writer's lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ChangePosition {
    high: i64,
    low: i64,
}

impl ChangePosition {
    /// The position `(high, low)`; both are 0 or more (a negative number is taken as 0).
    pub fn new(high: i64, low: i64) -> Self {
        Self {
            high: high.max(0),
            low: low.max(0),
        }
    }

    /// The first number (compared first).
    pub fn high(self) -> i64 {
        self.high
    }

    /// The second number.
    pub fn low(self) -> i64 {
        self.low
    }
}

string_enum! {
    /// What happened to a product, as the feed names it: the latest of its changes since the
    /// reader's position (a product's consecutive changes are coalesced into its latest).
    ChangeKind {
        /// It was added (and has not changed since, or the reader has not read it since).
        Created => "created",
        /// Anything `GET /products/{id}` renders changed: its fields, a variant's price,
        /// label or stock, its warranties, its category's name; or it is sold again.
        Updated => "updated",
        /// It was stopped (`GET /products/{id}` is a 404).
        Removed => "removed",
    }
}

impl ChangeKind {
    /// The kind of a change that leaves a product `active` (whether it is sold), `created`
    /// when the change is its insert.
    pub fn of(active: bool, created: bool) -> Self {
        match (active, created) {
            (false, _) => ChangeKind::Removed,
            (true, true) => ChangeKind::Created,
            (true, false) => ChangeKind::Updated,
        }
    }
}

/// One entry of the feed: a product's latest change and its position.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CatalogChange {
    /// Where it stands in the feed.
    pub position: ChangePosition,
    /// The product.
    pub product_id: ProductId,
    /// What happened.
    pub kind: ChangeKind,
    /// The product's `updated_at` after the change.
    pub at: DateTime<Utc>,
}

impl CatalogChange {
    /// A change of `product_id` of `kind` at `at`, at `position`.
    pub fn new(
        position: ChangePosition,
        product_id: ProductId,
        kind: ChangeKind,
        at: DateTime<Utc>,
    ) -> Self {
        Self {
            position,
            product_id,
            kind,
            at,
        }
    }
}

/// One read of the feed ([`CatalogStore::catalog_changes`](crate::store::CatalogStore::catalog_changes)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CatalogChanges {
    /// The changes after the reader's position, in feed order, at most the limit asked.
    pub changes: Vec<CatalogChange>,
    /// Whether more changes follow the last one returned (visible to this read).
    pub has_more: bool,
    /// Where the next read resumes: the position of the last change returned; with none, the
    /// position the read was given; with none either, the feed's head as this read saw it,
    /// a position that every change not returned (committed before or after the read) follows.
    pub end: ChangePosition,
}

impl CatalogChanges {
    /// A read that returned `changes` (`has_more` when more follow) and ends at `end`.
    pub fn new(changes: Vec<CatalogChange>, has_more: bool, end: ChangePosition) -> Self {
        Self {
            changes,
            has_more,
            end,
        }
    }

    /// The read of `changes` (in feed order, at most `limit + 1`: the one past the limit only
    /// tells that more follow) after `after`, `head` being the feed's head as the read saw it.
    pub fn from_read(
        mut changes: Vec<CatalogChange>,
        limit: usize,
        after: Option<ChangePosition>,
        head: ChangePosition,
    ) -> Self {
        let has_more = changes.len() > limit;
        changes.truncate(limit);
        let end = changes.last().map(|c| c.position).or(after).unwrap_or(head);
        Self::new(changes, has_more, end)
    }
}
