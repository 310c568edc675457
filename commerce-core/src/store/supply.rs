//! The supply side: a supplier's quotes and its view of its variants.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::{StockError, StoreError};
use crate::model::*;

/// Why [`SupplyStore::insert_quote`] registered nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InsertQuoteError {
    /// The variant does not exist, or its product is not the supplier's.
    #[error("the variant is not one of the supplier's")]
    NotSuppliers,
    /// The variant already has a pending quote (not expired).
    #[error("the variant already has the pending quote {existing}")]
    Pending {
        /// The pending quote.
        existing: QuoteId,
    },
    /// The quote was made under an idempotency claim that no longer holds its record (a retry
    /// took it over while this request stalled past the stale time): nothing was written.
    #[error("the idempotency record was taken over by another request")]
    IdempotencyLost,
    /// The storage failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Why [`SupplyStore::decide_quote`] changed nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum QuoteDecisionError {
    /// No such quote (or it belongs to another account).
    #[error("quote not found")]
    NotFound,
    /// The quote is not pending (as of the decision: an expired quote is not).
    #[error("the quote is {status}, not pending")]
    NotPending {
        /// Its status.
        status: QuoteStatus,
    },
    /// Accepting it would take the variant past the most it may hold
    /// ([`StockError::AboveMaximum`]): nothing was written.
    #[error("{available} pieces available: at most {max} may be")]
    AboveMaximum {
        /// Pieces available now.
        available: i64,
        /// The most the variant may hold now.
        max: i64,
    },
    /// The storage failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The received pieces of an accepted quote could not be added: the variant would pass the
/// most it may hold, or it is gone (a store that lost it). Adding pieces is never refused
/// for want of stock.
impl From<StockError> for QuoteDecisionError {
    fn from(error: StockError) -> Self {
        match error {
            StockError::Store(error) => QuoteDecisionError::Store(error),
            StockError::AboveMaximum { available, max } => {
                QuoteDecisionError::AboveMaximum { available, max }
            }
            StockError::NotFound => QuoteDecisionError::Store(StoreError::NotFound),
            other => QuoteDecisionError::Store(StoreError::Invalid(other.to_string())),
        }
    }
}

/// A supplier's quotes and its view of its variants.
///
/// Every read takes `now` and answers the quotes as of then ([`Quote::as_of`]: a pending
/// quote past its `valid_until` is `expired`), its filters included.
#[async_trait]
pub trait SupplyStore: Send + Sync {
    /// Registers a pending quote if the variant is one of the supplier's and has no pending
    /// quote ([`NewQuote::admit`]), both read in the same atomic operation as the insert: of
    /// quotes made at once on one variant, from one instance or several, one is pending and
    /// the others are refused with [`InsertQuoteError::Pending`] naming it. A pending quote of
    /// the variant past its `valid_until` does not count (the store may write it `expired`,
    /// with `updated_at` its `valid_until`). A refusal writes nothing.
    ///
    /// With `claim` (a request under an `Idempotency-Key`), in the same atomic operation and
    /// after those checks: the claim must still hold its record
    /// ([`IdempotencyRecords::holds`](super::IdempotencyRecords::holds); otherwise
    /// [`InsertQuoteError::IdempotencyLost`], nothing written), and the record is linked to the
    /// new quote ([`IdempotencyRecord::quote_id`](super::IdempotencyRecord::quote_id)), so that
    /// a retry after this request died answers with the quote
    /// ([`IdempotencyBegin::Recovered`](super::IdempotencyBegin::Recovered)).
    async fn insert_quote(
        &self,
        new: NewQuote,
        claim: Option<&IdempotencyClaim>,
        now: DateTime<Utc>,
    ) -> Result<Quote, InsertQuoteError>;
    /// One quote as of `now`; with `account`, only that supplier's (another's is `None`). One
    /// read of its record.
    async fn quote(
        &self,
        account: Option<AccountId>,
        id: QuoteId,
        now: DateTime<Utc>,
    ) -> Result<Option<Quote>, StoreError>;
    /// A supplier's quotes that `filter` keeps ([`QuoteFilter::keeps`], as of `now`), newest
    /// first (by id), one page and how many match. One read: the page and the count from one
    /// statement on the SQL stores, so they agree.
    async fn quotes(
        &self,
        account: AccountId,
        filter: &QuoteFilter,
        page: PageRequest,
        now: DateTime<Utc>,
    ) -> Result<Page<Quote>, StoreError>;
    /// The platform's list ([`QuoteQuery`]): the quotes of any supplier that the query keeps,
    /// pending first, then the others, each oldest first ([`QuoteQuery::sort_key`]), as of
    /// `now`; one page and how many match. One read: the page and the count from one
    /// statement on the SQL stores, so they agree.
    async fn find_quotes(
        &self,
        query: &QuoteQuery,
        page: PageRequest,
        now: DateTime<Utc>,
    ) -> Result<Page<Quote>, StoreError>;
    /// Decides a quote ([`Quote::decide`], checked against the quote read in the same atomic
    /// operation, so that a quote is decided once: of an accept and a withdrawal at once, one
    /// happens and the other is `NotPending`). With `account`, only that supplier's quote
    /// (another's is `NotFound`). Accepting also, in the same atomic operation, sets the
    /// variant's `supply_price` to the quote's `unit_price` and adds its `quantity` to the
    /// variant's `available` as a stock adjustment of reason `received` naming the quote,
    /// which bumps the product's `updated_at`.
    ///
    /// **The outbox**: every move of a quote out of `pending` (this decision, the end of a
    /// quote whose product moved to another supplier, an expiry that a store writes) queues,
    /// in the atomic operation of the move, one pending delivery of
    /// [`NewEvent::quote`]`(&quote, previous)` for each enabled endpoint of the quote's
    /// supplier that receives `quote.updated` ([`Webhook::receives`]); none when no endpoint
    /// receives it, nothing when the move is refused.
    async fn decide_quote(
        &self,
        account: Option<AccountId>,
        id: QuoteId,
        decision: QuoteDecision,
        now: DateTime<Utc>,
    ) -> Result<Quote, QuoteDecisionError>;
    /// Writes `expired` at most `limit` quotes stored pending whose `valid_until` is at or
    /// before `now` ([`Quote::as_of`]: `updated_at` its `valid_until`), oldest first, each
    /// with its `quote.updated` event in the same atomic operation; returns how many. Reads
    /// answer the same before and after (they derive `expired`); this makes the move an event.
    /// A quote written expired by another write (or another instance) meanwhile is skipped, so
    /// each expiry yields one event. The atomic operation is each quote's expiry with its
    /// event, not the batch (the SQL stores commit one quote at a time). The instance runner
    /// calls it
    /// ([`Engine::run_background`](crate::Engine::run_background)).
    async fn expire_quotes(&self, now: DateTime<Utc>, limit: usize) -> Result<u64, StoreError>;
    /// The variants of the products whose supplier is `account`, by variant id, each with
    /// its pending quote as of `now`; with `updated_since`, only those whose product was
    /// updated at or after it (an accepted quote bumps it). One page and how many match. One
    /// read: the page and its total from one statement on the SQL stores (past the last page,
    /// the total is read on its own).
    async fn supply_variants(
        &self,
        account: AccountId,
        updated_since: Option<DateTime<Utc>>,
        page: PageRequest,
        now: DateTime<Utc>,
    ) -> Result<Page<SupplyVariant>, StoreError>;
}
