//! [`SupplyStore`] for [`MemoryStore`]: quotes and the supplier's variants.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::{MemoryStore, State};
use crate::model::*;
use crate::store::*;

/// The quotes, as stored (a pending quote past its end stays `pending` until it is read
/// [`as_of`](Quote::as_of) a later instant, or written `expired` by the next insert on its
/// variant), and the indexes the reads walk: a list reads its page from them and clones only
/// the page, and takes its total from their sizes where the filter allows.
#[derive(Debug, Default)]
pub(super) struct Quotes {
    by_id: BTreeMap<QuoteId, Quote>,
    by_account: HashMap<AccountId, BTreeSet<QuoteId>>,
    by_variant: HashMap<VariantId, BTreeSet<QuoteId>>,
    /// The ids by stored status, of every account (`None`) and of each (oldest first, as
    /// ids are given in order). Those stored `pending` are at most one per variant.
    by_status: HashMap<(Option<AccountId>, QuoteStatus), BTreeSet<QuoteId>>,
    /// Each variant's quote stored `pending` (perhaps expired by now).
    pending: HashMap<VariantId, QuoteId>,
}

/// No quote ids.
static NO_IDS: BTreeSet<QuoteId> = BTreeSet::new();

impl Quotes {
    /// Writes `quote` (new, or a new version of a stored one) and keeps the indexes.
    fn put(&mut self, quote: Quote) {
        let (id, account) = (quote.id, quote.account_id);
        let before = self.by_id.get(&id).map(|q| q.status);
        if before != Some(quote.status) {
            for scope in [None, Some(account)] {
                if let Some(status) = before
                    && let Some(ids) = self.by_status.get_mut(&(scope, status))
                {
                    ids.remove(&id);
                }
                let ids = self.by_status.entry((scope, quote.status)).or_default();
                ids.insert(id);
            }
        }
        self.by_account.entry(account).or_default().insert(id);
        let by_variant = self.by_variant.entry(quote.variant_id).or_default();
        by_variant.insert(id);
        self.by_id.insert(id, quote);
    }

    /// The ids stored with `status`, of `account` or of every account, oldest first.
    fn stored(&self, account: Option<AccountId>, status: QuoteStatus) -> &BTreeSet<QuoteId> {
        self.by_status.get(&(account, status)).unwrap_or(&NO_IDS)
    }

    /// The ids of `account`'s quotes, or of every quote, oldest first.
    fn all(&self, account: Option<AccountId>) -> Box<dyn DoubleEndedIterator<Item = QuoteId> + '_> {
        match account {
            Some(account) => match self.by_account.get(&account) {
                Some(ids) => Box::new(ids.iter().copied()),
                None => Box::new(std::iter::empty()),
            },
            None => Box::new(self.by_id.keys().copied()),
        }
    }

    /// Whether the quote `id` is pending as of `now` (stored pending, not expired).
    fn live(&self, id: QuoteId, now: DateTime<Utc>) -> bool {
        self.by_id.get(&id).is_some_and(|q| q.is_pending_at(now))
    }

    /// The ids of the quotes with `status` as of `now` ([`Quote::as_of`]), of `account` or of
    /// every account, oldest first (newest first with `newest_first`), and how many there
    /// are: from the index of that stored status, merged for `expired` with the quotes stored
    /// pending and expired by now (the quotes stored pending, at most one per variant, are
    /// walked to tell them apart; the other sizes are the indexes').
    fn with_status(
        &self,
        account: Option<AccountId>,
        status: QuoteStatus,
        newest_first: bool,
        now: DateTime<Utc>,
    ) -> (Box<dyn Iterator<Item = QuoteId> + '_>, u64) {
        let ordered = |ids| ordered(ids, newest_first);
        let pending = self.stored(account, QuoteStatus::Pending);
        let mut stale: Vec<QuoteId> = pending
            .iter()
            .copied()
            .filter(|id| !self.live(*id, now))
            .collect();
        match status {
            QuoteStatus::Pending => {
                let live = ordered(pending).filter(move |id| self.live(*id, now));
                (Box::new(live), (pending.len() - stale.len()) as u64)
            }
            QuoteStatus::Expired => {
                let expired = self.stored(account, QuoteStatus::Expired);
                let total = (expired.len() + stale.len()) as u64;
                if newest_first {
                    stale.reverse();
                }
                let ids = merged(ordered(expired), stale.into_iter(), newest_first);
                (Box::new(ids), total)
            }
            other => {
                let ids = self.stored(account, other);
                (ordered(ids), ids.len() as u64)
            }
        }
    }
}

/// `ids` oldest first, or newest first.
fn ordered(ids: &BTreeSet<QuoteId>, newest_first: bool) -> Box<dyn Iterator<Item = QuoteId> + '_> {
    if newest_first {
        Box::new(ids.iter().rev().copied())
    } else {
        Box::new(ids.iter().copied())
    }
}

/// `quote`'s status and `updated_at` as of `now` ([`Quote::as_of`]), without a copy.
fn status_at(quote: &Quote, now: DateTime<Utc>) -> (QuoteStatus, DateTime<Utc>) {
    match quote.valid_until {
        Some(until) if Quote::expired_at(quote.status, quote.valid_until, now) => {
            (QuoteStatus::Expired, quote.updated_at.max(until))
        }
        _ => (quote.status, quote.updated_at),
    }
}

/// `a` and `b` (each ascending, or each descending with `newest_first`) merged in that order.
fn merged(
    a: impl Iterator<Item = QuoteId>,
    b: impl Iterator<Item = QuoteId>,
    newest_first: bool,
) -> impl Iterator<Item = QuoteId> {
    let (mut a, mut b) = (a.peekable(), b.peekable());
    std::iter::from_fn(move || match (a.peek(), b.peek()) {
        (Some(x), Some(y)) if (x < y) != newest_first => a.next(),
        (Some(_), Some(_)) | (None, _) => b.next(),
        (Some(_), None) => a.next(),
    })
}

impl State {
    /// Writes `quote` (new, or a new version of a stored one) and, when the write moves it
    /// out of `pending`, queues its `quote.updated` event (the outbox), the quote as read.
    fn put_quote(&mut self, quote: Quote) {
        let before = self.quotes.by_id.get(&quote.id).map(|q| q.status);
        let event = match before {
            Some(QuoteStatus::Pending) if quote.status != QuoteStatus::Pending => self
                .outbox_event(quote.account_id, EventType::QuoteUpdated, || {
                    NewEvent::quote(
                        &self.quote_as_read(&quote, quote.updated_at),
                        QuoteStatus::Pending,
                    )
                }),
            _ => None,
        };
        self.quotes.put(quote);
        self.queue_outbox_event(event);
    }

    /// `quote` as read at `now`: the product's title and the variant's label as they are now,
    /// and its status as of `now`.
    fn quote_as_read(&self, quote: &Quote, now: DateTime<Utc>) -> Quote {
        quote.as_read(self.products.get(&quote.product_id).map(|p| &**p), now)
    }

    /// The quotes of `page` among `ids`, as read at `now` (only they are cloned).
    fn quotes_page(
        &self,
        ids: impl Iterator<Item = QuoteId>,
        page: PageRequest,
        now: DateTime<Utc>,
    ) -> Vec<Quote> {
        ids.skip(usize::try_from(page.offset()).unwrap_or(usize::MAX))
            .take(page.per_page() as usize)
            .filter_map(|id| self.quotes.by_id.get(&id))
            .map(|quote| self.quote_as_read(quote, now))
            .collect()
    }

    /// The variant's pending quote at `now` (not expired).
    fn pending_quote(&self, variant: VariantId, now: DateTime<Utc>) -> Option<QuoteId> {
        let id = *self.quotes.pending.get(&variant)?;
        let quote = self.quotes.by_id.get(&id)?;
        quote.is_pending_at(now).then_some(id)
    }

    /// Ends the variant's pending quote because its product moved to another supplier
    /// ([`Quote::end_for_moved_product`]).
    pub(super) fn end_pending_quote(&mut self, variant: VariantId, now: DateTime<Utc>) {
        let Some(id) = self.quotes.pending.get(&variant).copied() else {
            return;
        };
        if let Some(mut quote) = self.quotes.by_id.get(&id).cloned() {
            if !quote.end_for_moved_product(now) {
                // Expired meanwhile: written so.
                quote = quote.as_of(now);
            }
            self.put_quote(quote);
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
        let pending = s
            .pending_quote(new.variant_id, now)
            .and_then(|id| s.quotes.by_id.get(&id).map(|q| (id, q.account_id)));
        if new.admit(supplier, pending)?.is_some() {
            // The former supplier's, left by a move (never here: one lock orders the two).
            s.end_pending_quote(new.variant_id, now);
        }
        let Some(product) = product else {
            return Err(InsertQuoteError::NotSuppliers);
        };
        if claim.is_some_and(|claim| !s.idempotency.holds(claim)) {
            return Err(InsertQuoteError::IdempotencyLost);
        }
        // A quote still stored pending here has expired: it is written so.
        if let Some(stale) = s.quotes.pending.remove(&new.variant_id)
            && let Some(quote) = s.quotes.by_id.get(&stale).cloned()
        {
            s.put_quote(quote.as_of(now));
        }
        let label = product
            .variants
            .iter()
            .find(|v| v.id == new.variant_id)
            .map(|v| v.label.clone())
            .unwrap_or_default();
        let id = QuoteId::new(s.next_id("quotes"));
        let quote = new.into_quote(id, product.id, product.title.clone(), label, now);
        s.quotes.put(quote.clone());
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
        let q = &s.quotes;
        let Some(ids) = q.by_account.get(&account) else {
            return Ok(Page::new(Vec::new(), 0));
        };
        if filter.variant_id.is_some() || filter.updated_since.is_some() {
            // The variant's quotes (or, since an instant, the supplier's), newest first,
            // walked and counted without a copy; only the page is cloned.
            let walked: Box<dyn Iterator<Item = &QuoteId>> = match filter.variant_id {
                Some(variant) => Box::new(q.by_variant.get(&variant).into_iter().flatten().rev()),
                None => Box::new(ids.iter().rev()),
            };
            let kept = walked.filter_map(|id| q.by_id.get(id)).filter(|quote| {
                let (status, updated_at) = status_at(quote, now);
                quote.account_id == account
                    && filter.status.is_none_or(|s| status == s)
                    && filter.updated_since.is_none_or(|since| updated_at >= since)
            });
            let found = Page::of_items(kept, page);
            let items = found
                .items
                .into_iter()
                .map(|quote| s.quote_as_read(quote, now));
            return Ok(Page::new(items.collect(), found.total));
        }
        let (ids, total): (Box<dyn Iterator<Item = QuoteId>>, u64) = match filter.status {
            None => (Box::new(q.all(Some(account)).rev()), ids.len() as u64),
            Some(status) => q.with_status(Some(account), status, true, now),
        };
        Ok(Page::new(s.quotes_page(ids, page, now), total))
    }

    async fn find_quotes(
        &self,
        query: &QuoteQuery,
        page: PageRequest,
        now: DateTime<Utc>,
    ) -> Result<Page<Quote>, StoreError> {
        let s = self.lock();
        let q = &s.quotes;
        if let Some(variant) = query.variant_id {
            // One variant's quotes: walked, sorted by reference, only the page cloned.
            let mut kept: Vec<(QuoteStatus, &Quote)> = q
                .by_variant
                .get(&variant)
                .into_iter()
                .flatten()
                .filter_map(|id| q.by_id.get(id))
                .map(|quote| (status_at(quote, now).0, quote))
                .filter(|(status, quote)| {
                    query.account_id.is_none_or(|a| quote.account_id == a)
                        && query.status.is_none_or(|s| *status == s)
                })
                .collect();
            // [`QuoteQuery::sort_key`] of each as of `now`.
            kept.sort_by_key(|(status, quote)| (*status != QuoteStatus::Pending, quote.id));
            let found = Page::of_items(kept.into_iter().map(|(_, quote)| quote), page);
            let items = found
                .items
                .into_iter()
                .map(|quote| s.quote_as_read(quote, now));
            return Ok(Page::new(items.collect(), found.total));
        }
        // Pending first, then the others, each oldest first: the page from the pending index,
        // then from the status's (or all the quotes, skipping the pending ones).
        let scope = query.account_id;
        let (live, live_count) = q.with_status(scope, QuoteStatus::Pending, false, now);
        let (ids, total): (Box<dyn Iterator<Item = QuoteId>>, u64) = match query.status {
            None => {
                let others = q.all(scope).filter(move |id| !q.live(*id, now));
                let total = match scope {
                    Some(account) => q.by_account.get(&account).map_or(0, BTreeSet::len),
                    None => q.by_id.len(),
                };
                (Box::new(live.chain(others)), total as u64)
            }
            Some(QuoteStatus::Pending) => (live, live_count),
            Some(status) => q.with_status(scope, status, false, now),
        };
        Ok(Page::new(s.quotes_page(ids, page, now), total))
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
        let supplier = s
            .variant_owner
            .get(&quote.variant_id)
            .and_then(|p| s.products.get(p))
            .and_then(|p| p.supplier_id);
        let decided = quote.decide_as_supplied(&decision, supplier, now)?;
        if decided && let QuoteDecision::Accept { .. } = decision {
            s.receive(&quote, now)?;
        }
        s.quotes.pending.remove(&quote.variant_id);
        s.put_quote(quote.clone());
        Ok(s.quote_as_read(&quote, now))
    }

    async fn expire_quotes(&self, now: DateTime<Utc>, limit: usize) -> Result<u64, StoreError> {
        let mut s = self.lock();
        let mut expired: Vec<(QuoteId, VariantId)> = s
            .quotes
            .pending
            .iter()
            .filter(|(_, id)| !s.quotes.live(**id, now))
            .map(|(variant, id)| (*id, *variant))
            .collect();
        expired.sort_unstable();
        expired.truncate(limit);
        for (id, variant) in &expired {
            s.quotes.pending.remove(variant);
            if let Some(quote) = s.quotes.by_id.get(id).cloned() {
                s.put_quote(quote.as_of(now));
            }
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
        let mut variants: Vec<(&Product, &Variant)> = s
            .products_by_supplier
            .get(&account)
            .into_iter()
            .flatten()
            .filter_map(|id| s.products.get(id))
            .filter(|p| updated_since.is_none_or(|since| p.updated_at >= since))
            .flat_map(|p| p.variants.iter().map(move |v| (&**p, v)))
            .collect();
        variants.sort_by_key(|(_, v)| v.id);
        let found = Page::of_items(variants, page);
        let items = found
            .items
            .into_iter()
            .map(|(product, variant)| {
                SupplyVariant::of(product, variant, s.pending_quote(variant.id, now))
            })
            .collect();
        Ok(Page::new(items, found.total))
    }
}
