//! [`SupplyStore`] for [`MemoryStore`]: quotes and the supplier's variants.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::{MemoryStore, State, page_of, paginate};
use crate::model::*;
use crate::store::*;

/// The quotes, as stored (a pending quote past its end stays `pending` until it is read
/// [`as_of`](Quote::as_of) a later instant, or written `expired` by the next insert on its
/// variant), and the indexes the reads walk.
#[derive(Debug, Default)]
pub(super) struct Quotes {
    by_id: BTreeMap<QuoteId, Quote>,
    by_account: HashMap<AccountId, BTreeSet<QuoteId>>,
    /// Each variant's quote stored `pending` (perhaps expired by now).
    pending: HashMap<VariantId, QuoteId>,
}

impl State {
    /// `quote` as read at `now`: the product's title and the variant's label as they are now,
    /// and its status as of `now`.
    fn quote_as_read(&self, quote: &Quote, now: DateTime<Utc>) -> Quote {
        let mut quote = quote.clone();
        if let Some(product) = self.products.get(&quote.product_id) {
            quote.title.clone_from(&product.title);
            if let Some(variant) = product.variants.iter().find(|v| v.id == quote.variant_id) {
                quote.label.clone_from(&variant.label);
            }
        }
        quote.as_of(now)
    }

    /// The variant's pending quote at `now` (not expired).
    fn pending_quote(&self, variant: VariantId, now: DateTime<Utc>) -> Option<QuoteId> {
        let id = *self.quotes.pending.get(&variant)?;
        let quote = self.quotes.by_id.get(&id)?;
        (!Quote::expired_at(quote.status, quote.valid_until, now)).then_some(id)
    }

    /// Ends the variant's pending quote because its product moved to another supplier
    /// ([`Quote::end_for_moved_product`]).
    pub(super) fn end_pending_quote(&mut self, variant: VariantId, now: DateTime<Utc>) {
        let Some(id) = self.quotes.pending.get(&variant).copied() else {
            return;
        };
        if let Some(quote) = self.quotes.by_id.get_mut(&id)
            && !quote.end_for_moved_product(now)
        {
            // Expired meanwhile: written so.
            *quote = quote.clone().as_of(now);
        }
        self.quotes.pending.remove(&variant);
    }

    /// Accepting `quote`: the variant's supply price and the pieces received.
    fn receive(&mut self, quote: &Quote, now: DateTime<Utc>) -> Result<(), QuoteDecisionError> {
        let variant = self
            .variant_mut(quote.variant_id)
            .ok_or(QuoteDecisionError::Store(StoreError::NotFound))?;
        variant.supply_price = quote.unit_price;
        let product = variant.product_id;
        self.product_mut(product)?.revision += 1;
        let adjustment =
            NewStockAdjustment::new(quote.variant_id, quote.quantity, StockReason::Received)
                .for_quote(quote.id);
        self.apply_stock_adjustment(adjustment, now)?;
        Ok(())
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
        let product = s
            .variant_owner
            .get(&new.variant_id)
            .and_then(|id| s.products.get(id))
            .cloned();
        let supplier = product.as_ref().and_then(|p| p.supplier_id);
        new.admit(supplier, s.pending_quote(new.variant_id, now))?;
        let Some(product) = product else {
            return Err(InsertQuoteError::NotSuppliers);
        };
        if claim.is_some_and(|claim| !s.idempotency.holds(claim)) {
            return Err(InsertQuoteError::IdempotencyLost);
        }
        // A quote still stored pending here has expired: it is written so.
        if let Some(stale) = s.quotes.pending.remove(&new.variant_id)
            && let Some(quote) = s.quotes.by_id.get_mut(&stale)
        {
            *quote = quote.clone().as_of(now);
        }
        let label = product
            .variants
            .iter()
            .find(|v| v.id == new.variant_id)
            .map(|v| v.label.clone())
            .unwrap_or_default();
        let id = QuoteId::new(s.next_id("quotes"));
        let account = new.account_id;
        let quote = new.into_quote(id, product.id, (product.title.clone(), label), now);
        s.quotes.by_id.insert(id, quote.clone());
        s.quotes.by_account.entry(account).or_default().insert(id);
        s.quotes.pending.insert(quote.variant_id, id);
        if let Some(claim) = claim {
            s.idempotency.link(claim, id);
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
        Ok(s.quotes
            .by_id
            .get(&id)
            .filter(|q| account.is_none_or(|a| q.account_id == a))
            .map(|q| s.quote_as_read(q, now)))
    }

    async fn quotes(
        &self,
        account: AccountId,
        filter: &QuoteFilter,
        page: PageRequest,
        now: DateTime<Utc>,
    ) -> Result<Page<Quote>, StoreError> {
        let s = self.lock();
        let Some(ids) = s.quotes.by_account.get(&account) else {
            return Ok(Page::new(Vec::new(), 0));
        };
        let found = ids
            .iter()
            .rev()
            .filter_map(|id| s.quotes.by_id.get(id))
            .filter(|q| filter.variant_id.is_none_or(|v| q.variant_id == v))
            .map(|q| q.clone().as_of(now))
            .filter(|q| filter.keeps(q));
        let mut found = page_of(found, page);
        for quote in &mut found.items {
            *quote = s.quote_as_read(quote, now);
        }
        Ok(found)
    }

    async fn find_quotes(
        &self,
        query: &QuoteQuery,
        page: PageRequest,
        now: DateTime<Utc>,
    ) -> Result<Page<Quote>, StoreError> {
        let s = self.lock();
        let mut found: Vec<Quote> = s
            .quotes
            .by_id
            .values()
            .map(|q| q.clone().as_of(now))
            .filter(|q| query.keeps(q))
            .collect();
        found.sort_by_key(QuoteQuery::sort_key);
        let mut found = paginate(found.iter(), page);
        for quote in &mut found.items {
            *quote = s.quote_as_read(quote, now);
        }
        Ok(found)
    }

    async fn decide_quote(
        &self,
        account: Option<AccountId>,
        id: QuoteId,
        decision: QuoteDecision,
        now: DateTime<Utc>,
    ) -> Result<Quote, QuoteDecisionError> {
        let mut s = self.lock();
        let mut quote = s
            .quotes
            .by_id
            .get(&id)
            .filter(|q| account.is_none_or(|a| q.account_id == a))
            .cloned()
            .ok_or(QuoteDecisionError::NotFound)?;
        quote.decide(&decision, now)?;
        if let QuoteDecision::Accept { .. } = decision {
            s.receive(&quote, now)?;
        }
        s.quotes.pending.remove(&quote.variant_id);
        s.quotes.by_id.insert(id, quote.clone());
        Ok(s.quote_as_read(&quote, now))
    }

    async fn supply_variants(
        &self,
        account: AccountId,
        updated_since: Option<DateTime<Utc>>,
        page: PageRequest,
        now: DateTime<Utc>,
    ) -> Result<Page<SupplyVariant>, StoreError> {
        let s = self.lock();
        let mut variants: Vec<(&Product, &Variant)> = s
            .products
            .values()
            .filter(|p| p.supplier_id == Some(account))
            .filter(|p| updated_since.is_none_or(|since| p.updated_at >= since))
            .flat_map(|p| p.variants.iter().map(move |v| (&**p, v)))
            .collect();
        variants.sort_by_key(|(_, v)| v.id);
        let found = page_of(variants.into_iter(), page);
        let items = found
            .items
            .into_iter()
            .map(|(product, variant)| {
                SupplyVariant::builder()
                    .id(variant.id)
                    .product_id(product.id)
                    .product_title(product.title.clone())
                    .label(variant.label.clone())
                    .supply_price(variant.supply_price)
                    .available(variant.available)
                    .maybe_pending_quote_id(s.pending_quote(variant.id, now))
                    .build()
            })
            .collect();
        Ok(Page::new(items, found.total))
    }
}
