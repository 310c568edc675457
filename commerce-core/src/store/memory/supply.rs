//! [`SupplyStore`] for [`MemoryStore`]: quotes and the supplier's variants.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::{MemoryStore, State};
use crate::model::*;
use crate::store::*;

impl State {
    /// Writes `quote` ([`QuoteBook::put`]) and, when the write moves it out of `pending`,
    /// queues its `quote.updated` event.
    fn put_quote(&mut self, quote: Quote) {
        if self.quotes.put(quote.clone()) {
            self.queue_quote_updated(&quote);
        }
    }

    /// Queues the `quote.updated` event of `quote`, written out of `pending` (the outbox), the
    /// quote as read at its `updated_at`.
    fn queue_quote_updated(&mut self, quote: &Quote) {
        let event = self.outbox_event(quote.account_id, EventType::QuoteUpdated, || {
            let read = quote.as_read(self.product_of(quote.product_id), quote.updated_at);
            NewEvent::quote(&read, QuoteStatus::Pending)
        });
        self.queue_outbox_event(event);
    }

    /// The product `id` as stored now: what a quote is read with ([`Quote::as_read`]).
    fn product_of(&self, id: ProductId) -> Option<&Product> {
        self.catalog.product(id)
    }

    /// Writes the variant's quote stored pending out of `pending`
    /// ([`QuoteBook::end_pending`]: its product moved to another supplier, or it expired), with
    /// its `quote.updated` event.
    pub(super) fn end_pending_quote(&mut self, variant: VariantId, now: DateTime<Utc>) {
        if let Some(quote) = self.quotes.end_pending(variant, now) {
            self.queue_quote_updated(&quote);
        }
    }
}

#[async_trait]
impl SupplyStore for MemoryStore {
    async fn insert_quote(
        &self,
        new: NewQuote,
        claim: Option<&IdempotencyClaim>,
        now: DateTime<Utc>,
    ) -> Result<Quote, InsertQuoteError> {
        let mut s = self.lock();
        let product = s.catalog.owner(new.variant_id).cloned();
        let supplier = product.as_ref().and_then(|p| p.supplier_id);
        if let Some(ended) = s.quotes.admit(&new, supplier, now)? {
            // The former supplier's, left by a move (never here: one lock orders the two).
            s.queue_quote_updated(&ended);
        }
        let product = product.ok_or(InsertQuoteError::NotSuppliers)?;
        if claim.is_some_and(|claim| !s.idempotency.holds(claim)) {
            return Err(InsertQuoteError::IdempotencyLost);
        }
        // A quote still stored pending here has expired: it is written so.
        s.end_pending_quote(new.variant_id, now);
        let quote = s.quotes.insert(new, &product, now);
        if let Some(claim) = claim {
            s.idempotency.link(claim, quote.id);
        }
        Ok(quote)
    }

    async fn quote(
        &self,
        account: Option<AccountId>,
        id: QuoteId,
        now: DateTime<Utc>,
    ) -> Result<Option<Quote>, StoreError> {
        let s = self.lock();
        Ok(s.quotes.quote(account, id, now, |p| s.product_of(p)))
    }

    async fn quotes(
        &self,
        account: AccountId,
        filter: &QuoteFilter,
        page: PageRequest,
        now: DateTime<Utc>,
    ) -> Result<Page<Quote>, StoreError> {
        let s = self.lock();
        Ok(s.quotes
            .quotes(account, filter, page, now, |p| s.product_of(p)))
    }

    async fn find_quotes(
        &self,
        query: &QuoteQuery,
        page: PageRequest,
        now: DateTime<Utc>,
    ) -> Result<Page<Quote>, StoreError> {
        let s = self.lock();
        Ok(s.quotes.find_quotes(query, page, now, |p| s.product_of(p)))
    }

    async fn decide_quote(
        &self,
        account: Option<AccountId>,
        id: QuoteId,
        decision: QuoteDecision,
        now: DateTime<Utc>,
    ) -> Result<Quote, QuoteDecisionError> {
        let mut s = self.lock();
        let supplier_of = |variant| s.catalog.owner(variant)?.supplier_id;
        let (quote, taken) = s.quotes.decided(account, id, &decision, supplier_of, now)?;
        if taken && let QuoteDecision::Accept { .. } = decision {
            s.catalog.receive(&quote, now)?;
        }
        s.put_quote(quote.clone());
        Ok(quote.as_read(s.product_of(quote.product_id), now))
    }

    async fn expire_quotes(&self, now: DateTime<Utc>, limit: usize) -> Result<u64, StoreError> {
        let mut s = self.lock();
        let expired = s.quotes.expire(now, limit);
        for quote in &expired {
            s.queue_quote_updated(quote);
        }
        Ok(expired.len() as u64)
    }

    async fn supply_variants(
        &self,
        account: AccountId,
        updated_since: Option<DateTime<Utc>>,
        page: PageRequest,
        now: DateTime<Utc>,
    ) -> Result<Page<SupplyVariant>, StoreError> {
        let s = self.lock();
        // The supplier's own products only (indexed), never a walk of the catalogue.
        let products = s.catalog.supplier_products(account);
        Ok(s.quotes.supply_variants(products, updated_since, page, now))
    }
}
