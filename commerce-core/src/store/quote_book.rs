//! The suppliers' quotes of a backend that keeps them in process memory ([`QuoteBook`]), with
//! the indexes its reads walk. The memory store and the small store of the tests keep theirs
//! here.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::{DateTime, Utc};

use super::{InsertQuoteError, QuoteDecisionError};
use crate::model::*;

/// Every quote, in process memory, with the steps of [`SupplyStore`]'s quote operations: the
/// reads ([`quote`](Self::quote), [`quotes`](Self::quotes), [`find_quotes`](Self::find_quotes),
/// [`pending_at`](Self::pending_at), [`supply_variants`](Self::supply_variants)) and the writes
/// ([`admit`](Self::admit) then [`insert`](Self::insert), [`decided`](Self::decided) then
/// [`put`](Self::put), [`end_pending`](Self::end_pending), [`expire`](Self::expire)). The
/// caller holds its own lock across each call, and across the reads and writes of one
/// operation. A write that moves a quote out of `pending` says so (or returns the quote), so
/// that the caller queues its `quote.updated` event ([`NewEvent::quote`]) in its own outbox,
/// under the same lock.
///
/// A quote is stored as written: a pending quote past its end stays stored `pending` until a
/// write (an insert on its variant, [`end_pending`](Self::end_pending),
/// [`expire`](Self::expire)) writes it `expired`; every read answers it as of its `now`
/// ([`Quote::as_read`]: `expired`, and its product's title and variant's label as they are
/// now). At most one quote of a variant is stored `pending`. A list reads its page from the
/// indexes (by account, by variant, by stored status) and clones only the page.
///
/// [`SupplyStore`]: super::SupplyStore
#[derive(Debug, Default)]
pub struct QuoteBook {
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

impl QuoteBook {
    /// The quote `id` as stored; with `account`, only that supplier's.
    pub fn get(&self, account: Option<AccountId>, id: QuoteId) -> Option<&Quote> {
        let quote = self.by_id.get(&id)?;
        account
            .is_none_or(|a| quote.account_id == a)
            .then_some(quote)
    }

    /// [`SupplyStore::quote`](super::SupplyStore::quote): the quote `id` (with `account`, only
    /// that supplier's) as read at `now`, `product_of` giving each quote's product as stored
    /// now ([`Quote::as_read`]).
    pub fn quote<'p>(
        &self,
        account: Option<AccountId>,
        id: QuoteId,
        now: DateTime<Utc>,
        product_of: impl Fn(ProductId) -> Option<&'p Product>,
    ) -> Option<Quote> {
        let quote = self.get(account, id)?;
        Some(quote.as_read(product_of(quote.product_id), now))
    }

    /// The variant's pending quote at `now` ([`Quote::is_pending_at`]: not expired), if any:
    /// what blocks a new quote of the variant ([`NewQuote::admit`]) and what its
    /// [`SupplyVariant`] shows.
    pub fn pending_at(&self, variant: VariantId, now: DateTime<Utc>) -> Option<&Quote> {
        let quote = self.by_id.get(self.pending.get(&variant)?)?;
        quote.is_pending_at(now).then_some(quote)
    }

    /// [`SupplyStore::quotes`](super::SupplyStore::quotes): the supplier's quotes that `filter`
    /// keeps as of `now`, newest first, one page (as read, `product_of` giving each quote's
    /// product) and how many match.
    pub fn quotes<'p>(
        &self,
        account: AccountId,
        filter: &QuoteFilter,
        page: PageRequest,
        now: DateTime<Utc>,
        product_of: impl Fn(ProductId) -> Option<&'p Product>,
    ) -> Page<Quote> {
        let Some(ids) = self.by_account.get(&account) else {
            return Page::new(Vec::new(), 0);
        };
        if filter.variant_id.is_some() || filter.updated_since.is_some() {
            // The variant's quotes (or, since an instant, the supplier's), newest first,
            // walked and counted without a copy; only the page is cloned.
            let walked: Box<dyn Iterator<Item = &QuoteId>> = match filter.variant_id {
                Some(variant) => {
                    Box::new(self.by_variant.get(&variant).into_iter().flatten().rev())
                }
                None => Box::new(ids.iter().rev()),
            };
            let kept = walked.filter_map(|id| self.by_id.get(id)).filter(|quote| {
                let (status, updated_at) = status_at(quote, now);
                quote.account_id == account
                    && filter.status.is_none_or(|s| status == s)
                    && filter.updated_since.is_none_or(|since| updated_at >= since)
            });
            return as_read(Page::of_items(kept, page), now, product_of);
        }
        let (ids, total): (Box<dyn Iterator<Item = QuoteId>>, u64) = match filter.status {
            None => (Box::new(self.all(Some(account)).rev()), ids.len() as u64),
            Some(status) => self.with_status(Some(account), status, true, now),
        };
        self.page(ids, total, page, now, product_of)
    }

    /// [`SupplyStore::find_quotes`](super::SupplyStore::find_quotes): the quotes `query` keeps
    /// as of `now`, pending first, then the others, each oldest first
    /// ([`QuoteQuery::sort_key`]), one page (as read, `product_of` giving each quote's product)
    /// and how many match.
    pub fn find_quotes<'p>(
        &self,
        query: &QuoteQuery,
        page: PageRequest,
        now: DateTime<Utc>,
        product_of: impl Fn(ProductId) -> Option<&'p Product>,
    ) -> Page<Quote> {
        if let Some(variant) = query.variant_id {
            // One variant's quotes: walked, sorted by reference, only the page cloned.
            let mut kept: Vec<(QuoteStatus, &Quote)> = self
                .by_variant
                .get(&variant)
                .into_iter()
                .flatten()
                .filter_map(|id| self.by_id.get(id))
                .map(|quote| (status_at(quote, now).0, quote))
                .filter(|(status, quote)| {
                    query.account_id.is_none_or(|a| quote.account_id == a)
                        && query.status.is_none_or(|s| *status == s)
                })
                .collect();
            // [`QuoteQuery::sort_key`] of each as of `now`.
            kept.sort_by_key(|(status, quote)| (*status != QuoteStatus::Pending, quote.id));
            let found = Page::of_items(kept.into_iter().map(|(_, quote)| quote), page);
            return as_read(found, now, product_of);
        }
        // Pending first, then the others, each oldest first: the page from the pending index,
        // then from the status's (or all the quotes, skipping the pending ones).
        let scope = query.account_id;
        let (live, live_count) = self.with_status(scope, QuoteStatus::Pending, false, now);
        let (ids, total): (Box<dyn Iterator<Item = QuoteId>>, u64) = match query.status {
            None => {
                let others = self.all(scope).filter(move |id| !self.live(*id, now));
                let total = match scope {
                    Some(account) => self.by_account.get(&account).map_or(0, BTreeSet::len),
                    None => self.by_id.len(),
                };
                (Box::new(live.chain(others)), total as u64)
            }
            Some(QuoteStatus::Pending) => (live, live_count),
            Some(status) => self.with_status(scope, status, false, now),
        };
        self.page(ids, total, page, now, product_of)
    }

    /// [`NewQuote::admit`] against the variant's pending quote at `now`: refused with the
    /// first refusal; a pending quote of another supplier (its product's former one, left by a
    /// move) is ended as the move would have ([`end_pending`](Self::end_pending)) and returned
    /// (the caller queues its `quote.updated` event). `supplier` is the variant's product's
    /// supplier now (`None` for no such variant).
    pub fn admit(
        &mut self,
        new: &NewQuote,
        supplier: Option<AccountId>,
        now: DateTime<Utc>,
    ) -> Result<Option<Quote>, InsertQuoteError> {
        let pending = self.pending_at(new.variant_id, now);
        let pending = pending.map(|q| (q.id, q.account_id));
        match new.admit(supplier, pending)? {
            Some(_former_suppliers) => Ok(self.end_pending(new.variant_id, now)),
            None => Ok(None),
        }
    }

    /// A new pending quote ([`NewQuote::into_quote`]) of `product`'s variant, with the next id
    /// (1, 2, 3, ..., as a SQL sequence numbers them); returns it. The caller has admitted it
    /// ([`NewQuote::admit`]) and first written the variant's quote still stored pending, if
    /// any, out of `pending` ([`end_pending`](Self::end_pending)).
    pub fn insert(&mut self, new: NewQuote, product: &Product, now: DateTime<Utc>) -> Quote {
        let label = product
            .variants
            .iter()
            .find(|v| v.id == new.variant_id)
            .map(|v| v.label.clone())
            .unwrap_or_default();
        debug_assert!(
            !self.pending.contains_key(&new.variant_id),
            "the variant's quote stored pending is ended first"
        );
        // After the highest id stored (1, 2, 3, ... as a SQL sequence numbers them).
        let last = self.by_id.last_key_value().map_or(0, |(id, _)| id.get());
        let id = QuoteId::new(last + 1);
        let quote = new.into_quote(id, product.id, product.title.clone(), label, now);
        self.put(quote.clone());
        quote
    }

    /// Writes `quote` (new, or a new version of a stored one) and keeps the indexes. Returns
    /// whether the write moves it out of `pending`: then the caller queues its `quote.updated`
    /// event ([`NewEvent::quote`] of the quote as read at its `updated_at`, the status it left
    /// `pending`).
    ///
    /// What the caller keeps (the book's indexes assume it, as [`insert`](Self::insert) and
    /// [`decided`](Self::decided) do): a new version of a stored quote has the same account
    /// and variant, and a variant has at most one quote stored `pending` (its former one is
    /// written out of `pending` first, [`end_pending`](Self::end_pending)).
    pub fn put(&mut self, quote: Quote) -> bool {
        let (id, account, variant) = (quote.id, quote.account_id, quote.variant_id);
        let before = self.by_id.get(&id).map(|q| q.status);
        let left_pending =
            before == Some(QuoteStatus::Pending) && quote.status != QuoteStatus::Pending;
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
        if quote.status == QuoteStatus::Pending {
            self.pending.insert(variant, id);
        } else if self.pending.get(&variant) == Some(&id) {
            self.pending.remove(&variant);
        }
        self.by_account.entry(account).or_default().insert(id);
        self.by_variant.entry(variant).or_default().insert(id);
        self.by_id.insert(id, quote);
        left_pending
    }

    /// [`SupplyStore::decide_quote`](super::SupplyStore::decide_quote)'s rule on the stored
    /// quote, nothing written: the quote `id` (with `account`, only that supplier's; otherwise
    /// [`QuoteDecisionError::NotFound`]) decided by [`Quote::decide_as_supplied`] against its
    /// product's supplier now (`supplier_of` its variant), and whether the asked decision was
    /// taken. The caller applies what an accept does, then [`put`](Self::put)s the quote.
    pub fn decided(
        &self,
        account: Option<AccountId>,
        id: QuoteId,
        decision: &QuoteDecision,
        supplier_of: impl FnOnce(VariantId) -> Option<AccountId>,
        now: DateTime<Utc>,
    ) -> Result<(Quote, bool), QuoteDecisionError> {
        let mut quote = self
            .get(account, id)
            .cloned()
            .ok_or(QuoteDecisionError::NotFound)?;
        let supplier = supplier_of(quote.variant_id);
        let taken = quote.decide_as_supplied(decision, supplier, now)?;
        Ok((quote, taken))
    }

    /// Writes the variant's quote stored pending out of `pending`: ended because its product
    /// moved to another supplier ([`Quote::end_for_moved_product`]), or written `expired` when
    /// it is expired at `now` ([`Quote::as_of`]). Returns the quote written (the caller queues
    /// its `quote.updated` event); `None` when the variant has no quote stored pending.
    pub fn end_pending(&mut self, variant: VariantId, now: DateTime<Utc>) -> Option<Quote> {
        let id = *self.pending.get(&variant)?;
        let mut quote = self.by_id.get(&id)?.clone();
        if !quote.end_for_moved_product(now) {
            // Expired meanwhile: written so.
            quote = quote.as_of(now);
        }
        self.put(quote.clone());
        Some(quote)
    }

    /// [`SupplyStore::expire_quotes`](super::SupplyStore::expire_quotes): writes `expired` at
    /// most `limit` quotes stored pending and expired at `now` ([`Quote::as_of`]), oldest
    /// first. Returns the quotes written (the caller queues each one's `quote.updated` event).
    pub fn expire(&mut self, now: DateTime<Utc>, limit: usize) -> Vec<Quote> {
        let mut expired: Vec<QuoteId> = self
            .pending
            .values()
            .copied()
            .filter(|id| !self.live(*id, now))
            .collect();
        expired.sort_unstable();
        expired.truncate(limit);
        let mut written = Vec::with_capacity(expired.len());
        for id in expired {
            if let Some(quote) = self.by_id.get(&id) {
                let quote = quote.clone().as_of(now);
                self.put(quote.clone());
                written.push(quote);
            }
        }
        written
    }

    /// [`SupplyStore::supply_variants`](super::SupplyStore::supply_variants) of the supplier
    /// whose `products` (as stored now) are given: their variants, of those updated at or
    /// after `updated_since` when given, by variant id, each with its pending quote at `now`;
    /// one page and how many match.
    pub fn supply_variants<'p>(
        &self,
        products: impl Iterator<Item = &'p Product>,
        updated_since: Option<DateTime<Utc>>,
        page: PageRequest,
        now: DateTime<Utc>,
    ) -> Page<SupplyVariant> {
        let mut variants: Vec<(&Product, &Variant)> = products
            .filter(|p| updated_since.is_none_or(|since| p.updated_at >= since))
            .flat_map(|p| p.variants.iter().map(move |v| (p, v)))
            .collect();
        variants.sort_by_key(|(_, v)| v.id);
        let found = Page::of_items(variants, page);
        let items = found.items.into_iter().map(|(product, variant)| {
            let pending = self.pending_at(variant.id, now).map(|q| q.id);
            SupplyVariant::of(product, variant, pending)
        });
        Page::new(items.collect(), found.total)
    }

    /// The quotes of `page` among `ids`, as read at `now` (only they are cloned), and `total`.
    fn page<'p>(
        &self,
        ids: impl Iterator<Item = QuoteId>,
        total: u64,
        page: PageRequest,
        now: DateTime<Utc>,
        product_of: impl Fn(ProductId) -> Option<&'p Product>,
    ) -> Page<Quote> {
        let items = ids
            .skip(usize::try_from(page.offset()).unwrap_or(usize::MAX))
            .take(page.per_page() as usize)
            .filter_map(|id| self.by_id.get(&id))
            .map(|quote| quote.as_read(product_of(quote.product_id), now))
            .collect();
        Page::new(items, total)
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

/// A page of stored quotes as read at `now` ([`Quote::as_read`]).
fn as_read<'p>(
    found: Page<&Quote>,
    now: DateTime<Utc>,
    product_of: impl Fn(ProductId) -> Option<&'p Product>,
) -> Page<Quote> {
    let items = found.items.into_iter();
    let items = items.map(|quote| quote.as_read(product_of(quote.product_id), now));
    Page::new(items.collect(), found.total)
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

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone};
    use rust_decimal::Decimal;

    use super::*;

    /// Supplier 7's quote `id` of variant `variant`, written at `at`.
    fn quote(id: i64, variant: i64, until: Option<DateTime<Utc>>, at: DateTime<Utc>) -> Quote {
        Quote::builder()
            .id(QuoteId::new(id))
            .account_id(AccountId::new(7))
            .variant_id(VariantId::new(variant))
            .product_id(ProductId::new(3))
            .title("مروحة".into())
            .label("صغير".into())
            .unit_price(Decimal::ONE)
            .quantity(1)
            .status(QuoteStatus::Pending)
            .maybe_valid_until(until)
            .created_at(at)
            .updated_at(at)
            .build()
    }

    /// The variant's pending quote follows every write; only a write out of `pending` says
    /// so; the expired ones are written `expired` oldest first, at most `limit`, and a
    /// variant's quote stored pending is ended (withdrawn, or expired when it is).
    #[test]
    fn the_pending_index_follows_every_write() {
        let at = Utc.with_ymd_and_hms(2026, 11, 1, 10, 0, 0).unwrap();
        let (end, later) = (at + Duration::hours(1), at + Duration::hours(2));
        let mut book = QuoteBook::default();
        for (id, until) in [(1, Some(end)), (2, Some(end)), (3, None)] {
            assert!(!book.put(quote(id, id, until, at)));
        }
        let pending = |book: &QuoteBook, variant, now| {
            let quote = book.pending_at(VariantId::new(variant), now);
            quote.map(|q| q.id.get())
        };
        assert_eq!(pending(&book, 1, at), Some(1));
        assert_eq!(pending(&book, 1, later), None);
        let expired = book.expire(later, 1);
        assert_eq!(expired.len(), 1);
        assert_eq!(expired[0].id, QuoteId::new(1));
        assert_eq!(expired[0].status, QuoteStatus::Expired);
        assert_eq!(expired[0].updated_at, end);
        let ended = book
            .end_pending(VariantId::new(2), later)
            .expect("stored pending");
        assert_eq!(ended.status, QuoteStatus::Expired);
        let ended = book
            .end_pending(VariantId::new(3), later)
            .expect("stored pending");
        assert_eq!(ended.status, QuoteStatus::Withdrawn);
        assert!(book.end_pending(VariantId::new(3), later).is_none());
        assert!(book.expire(later, 10).is_empty());
        assert!(
            !book.put(ended),
            "a withdrawn quote written again leaves nothing"
        );
        let mut next = quote(4, 3, None, later);
        assert!(!book.put(next.clone()));
        assert_eq!(pending(&book, 3, later), Some(4));
        next.status = QuoteStatus::Rejected;
        assert!(book.put(next));
        assert_eq!(pending(&book, 3, later), None);
        let page = PageRequest::new(1, 10).expect("a page");
        let all = book.find_quotes(&QuoteQuery::default(), page, later, |_| None);
        let statuses: Vec<QuoteStatus> = all.items.iter().map(|q| q.status).collect();
        use QuoteStatus::*;
        assert_eq!(statuses, [Expired, Expired, Withdrawn, Rejected]);
    }

    /// A new quote is numbered after the highest id stored, whichever way the stored ones
    /// came in: one written by `put` is never overwritten by an insert.
    #[test]
    fn an_insert_is_numbered_after_the_highest_id() {
        let at = Utc.with_ymd_and_hms(2026, 11, 1, 10, 0, 0).unwrap();
        let mut book = QuoteBook::default();
        let mut kept = quote(2, 1, None, at);
        kept.status = QuoteStatus::Rejected;
        book.put(kept.clone());
        let product = Product::bare(3, &[]);
        let new = NewQuote::builder()
            .account_id(AccountId::new(7))
            .variant_id(VariantId::new(5))
            .unit_price(Decimal::ONE)
            .quantity(1)
            .build();
        let inserted = book.insert(new, &product, at);
        assert_eq!(inserted.id, QuoteId::new(3));
        assert_eq!(book.get(None, QuoteId::new(2)), Some(&kept));
    }
}
