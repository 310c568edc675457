//! The storage contract and the in-memory store.
//!
//! A store keeps everything the engine reads and writes. Its contract is split by concern into
//! eight traits, each a set of atomic domain operations:
//!
//! | Trait | Concern |
//! |---|---|
//! | [`AccountStore`] | accounts, API keys, the per-key rate window |
//! | [`CatalogStore`] | categories, products, variants, warranties, governorates, shipping |
//! | [`OrderStore`] | placing orders, status moves, line outcomes, order reads, wallet sums |
//! | [`IdempotencyStore`] | the records behind `Idempotency-Key` |
//! | [`MeterStore`] | the billing meter |
//! | [`WithdrawalStore`] | withdrawal requests |
//! | [`WebhookStore`] | webhook endpoints and the outbox of their deliveries |
//! | [`SupplyStore`] | a supplier's quotes and its view of its variants |
//!
//! [`Store`] is all eight at once, implemented for every type that implements them; the engine
//! holds an `Arc<dyn Store>`. The rules a backend must apply are decided here, once, so that a
//! backend only persists: [`idempotency::decide`](IdempotencyRecord::decide) says what to do
//! with the record found under a key, and [`StatusMove::check`] says whether an order may move
//! and what the move changes.
//!
//! A [`StoreHook`] sees every operation of a store before and after it runs (metrics, fault
//! injection) through [`Hooked`]; the engine keeps its store behind its own tracing layer. Both
//! are wrappers generated from one delegation list of the contract's methods, so a new method
//! is forwarded by every wrapper once it is listed there.
//!
//! # One backend for every concern
//!
//! The eight traits divide the contract for reading, not for deployment: a store implements
//! all eight over the same data, and nothing assembles a store from one backend per concern.
//! The operations cut across the concerns, and each must be atomic:
//!
//! - [`OrderStore::place_order`] reserves stock (catalogue), counts the order operation on the
//!   meter, links the order to its idempotency record, books the earnings and writes the
//!   webhook deliveries of the outbox, all or nothing; [`OrderStore::change_order_status`]
//!   releases stock, bills the meter and writes the outbox the same way;
//! - [`WithdrawalStore::request_withdrawal`] decides against the account's wallet sums, taken
//!   from its orders in the same atomic operation as the insert;
//! - the SQL tables of keys, orders, withdrawals and webhooks reference `accounts` by foreign
//!   key, and the account's row is the lock that orders one account's withdrawals and webhook
//!   registrations.
//!
//! So no concern can live in a backend of its own without giving up an atomicity the
//! conformance suites check, not even accounts and keys (the SQL store would have to work
//! against accounts it does not own: no foreign keys, another per-account lock). A split
//! that is not tested on the SQL stores is not offered.
//!
//! Every write is one atomic domain operation: a store runs it under one lock, in one
//! transaction or as one conditional statement, so that a failure leaves nothing half-written
//! (a batch such as `expire_quotes` or the provided `finish_deliveries` is one operation per
//! item, as its doc says). A read is one read; each read's doc says whether it is one
//! snapshot (on the SQL stores some read a page and its count, or orders and their lines,
//! in two statements).
//! The engine never sees a transaction. Implementations are checked by the conformance suites
//! of the `commerce-core` crate, module `testing` (its feature `testing`, a dev-dependency of a
//! backend's tests).
//!
//! # How a backend builds the records
//!
//! Every record a store hands back ([`Order`](crate::model::Order),
//! [`Webhook`](crate::model::Webhook), [`RateLimitHit`], [`Page`](crate::model::Page), its
//! parts such as [`Customer`](crate::model::Customer), [`Totals`](crate::model::Totals) and
//! [`Breaker`](crate::model::Breaker), ...) is `#[non_exhaustive]`: another crate cannot write
//! it as a struct literal, so that a field added later breaks no backend. A backend builds
//! them one of two ways, by the record's size:
//!
//! - a record of up to four fields has a `new` taking them in declaration order
//!   (`RateLimitHit::new(allowed, used)`, `Page::new(items, total)`,
//!   `TimelineEntry::new(status, at, reason)`);
//! - a larger one has a builder derived with [`bon`](https://docs.rs/bon): `Record::builder()`,
//!   one setter per field, then `build()`. Missing a required field is a compile error; an
//!   `Option` field may be left out (`None`), and `maybe_field(option)` sets it from an
//!   `Option`, except where a forgotten `None` would write the wrong thing: those are
//!   required and their setter takes the `Option` (`StatusChange`'s `account_id`, `read_at`
//!   and `bill_month`, `NewOrder::idempotency`, `NewKeyRecord::expires_at`). A field added
//!   later is an `Option` or has a default, so existing builders keep compiling.
//!
//! The inputs a store is handed to insert ([`NewProduct`](crate::model::NewProduct),
//! [`NewStockAdjustment`](crate::model::NewStockAdjustment), [`NewQuote`](crate::model::NewQuote),
//! ...) and the operator's ([`KeySpec`](crate::domain::keys::KeySpec),
//! [`OrderDraft`](crate::domain::fields::OrderDraft), ...) are built by the same rule, a field
//! their builder is not given taking the default its docs name.
//!
//! ```
//! # use commerce_core as commerce;
//! use commerce::model::{Category, CategoryId};
//!
//! let parent: Option<i64> = None; // as read from a row
//! let category = Category::builder()
//!     .id(CategoryId::new(7))
//!     .name("أجهزة".to_owned())
//!     .slug("devices".to_owned())
//!     .maybe_parent_id(parent.map(CategoryId::new))
//!     .active(true)
//!     .build();
//! assert_eq!(category.parent_id, None);
//! ```

mod accounts;
mod catalog;
mod catalog_tables;
pub(crate) mod delegate;
mod deliveries;
mod error;
mod hook;
mod idempotency;
mod ledgers;
mod memory;
mod meter;
mod orders;
mod quote_book;
mod statement;
mod stock;
mod supply;
pub(crate) mod traced;
mod webhooks;
mod withdrawals;

pub use accounts::{
    ACCOUNT_CHANGED, AccountStore, InsertKeyError, KEY_HASH_STORED, KeyCheck, RateLimitHit,
    RateWindows, authenticate_by_calls,
};
pub use catalog::{CatalogStore, ProductVersion};
pub use catalog_tables::CatalogTables;
pub use deliveries::DeliveryQueue;
pub use error::{PlaceOrderError, StatusChangeError, StoreError, Unique};
pub use hook::{Concern, Hooked, Operation, StoreHook};
pub use idempotency::{
    Created, IdempotencyBegin, IdempotencyDecision, IdempotencyRecord, IdempotencyRecordBuilder,
    IdempotencyRecords, IdempotencyStore,
};
pub use ledgers::{CheckedBookings, SupplyLedgers};
pub use memory::MemoryStore;
pub use meter::{MeterCounts, MeterStore};
pub use orders::{
    OrderStore, OrderVersion, StatusChange, StatusChangeBuilder, StatusMove, StatusMoveBuilder,
    unchanged_since,
};
pub use quote_book::QuoteBook;
pub use statement::{CheckedBooking, SupplyBooking};
pub use stock::StockError;
pub use supply::{InsertQuoteError, QuoteDecisionError, SupplyStore};
pub(crate) use traced::Traced;
pub use webhooks::{
    CANDIDATES_PER_CLAIMED, ClaimRoom, InsertWebhookError, MAX_PENDING_MANUAL,
    MAX_WEBHOOKS_PER_ACCOUNT, QueueDeliveryError, SECRET_OVERLAP, WebhookStore,
};
pub use withdrawals::{WithdrawalRequestError, WithdrawalStore};

/// The `updated_at` a write gives an entity stamped `stored` when the writer's clock says
/// `now`: the later of `now` and `stored` plus one microsecond. So an entity's `updated_at`
/// never decreases, and every change moves it, even when app instances' clocks disagree: a
/// sync by `updated_since` (with the overlap docs/pagination.md asks for) misses no change.
/// Every backend applies it to orders and products (the SQL stores in their statements).
pub fn next_updated_at(
    stored: chrono::DateTime<chrono::Utc>,
    now: chrono::DateTime<chrono::Utc>,
) -> chrono::DateTime<chrono::Utc> {
    now.max(stored + chrono::TimeDelta::microseconds(1))
}

/// Storage of everything the engine reads and writes.
///
/// Used as `Arc<dyn Store>`. Reads of one account's data take the account id, so that another
/// account's records are never returned.
///
/// # What every implementation must hold
/// * **Atomicity**: each method is one domain operation; it happens whole or not at all
///   (one lock, one transaction or one conditional statement).
/// * **Cancellation safety**: the future of any method may be dropped at any `.await` (the
///   engine's own requests run in tasks of their own, but the operator API and the embedding
///   application call the store directly, under their own timeouts). A dropped operation has
///   either happened whole or not at all, and leaves no resource behind in a state that a later
///   operation could trip on: no pooled connection inside a transaction or with an unread
///   answer, no lock held, no half-written record. (The SQL stores begin and end transactions
///   on a connection of their own and close it, rather than pool it, when dropped in between.)
/// * **Races decided in the store**: no oversell, one order per `external_reference` and per
///   idempotency key, an exact rate window, also across several processes sharing a database.
///
/// The conformance suites of the `commerce-core` crate (module `testing`, its feature
/// `testing`) check all three, cancellation included (`testing::cancellation`).
///
/// `Store` has no methods of its own: it is the eight concern traits together, implemented for
/// every type that implements them. Call its methods with the concern traits in scope
/// (`use commerce::store::*`, or the [`prelude`]).
pub trait Store:
    AccountStore
    + CatalogStore
    + OrderStore
    + IdempotencyStore
    + MeterStore
    + WithdrawalStore
    + WebhookStore
    + SupplyStore
    + 'static
{
}

impl<T> Store for T where
    T: AccountStore
        + CatalogStore
        + OrderStore
        + IdempotencyStore
        + MeterStore
        + WithdrawalStore
        + WebhookStore
        + SupplyStore
        + 'static
{
}

/// The store traits, to call any store operation on an `Arc<dyn Store>`:
/// `use commerce::store::prelude::*;`.
pub mod prelude {
    pub use super::{
        AccountStore, CatalogStore, IdempotencyStore, MeterStore, OrderStore, Store, SupplyStore,
        WebhookStore, WithdrawalStore,
    };
}
