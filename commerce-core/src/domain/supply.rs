//! The supply side's rules: a supplier's quote admitted ([`NewQuote::admit`], its validity
//! [`NewQuote::check_validity`]), the platform's decision on it ([`Quote::decide`], and
//! [`Quote::decide_as_supplied`] when its product may have moved to another supplier), and a
//! quote as read at an instant ([`Quote::as_of`], [`Quote::as_read`]). A store reads what a
//! rule needs inside the write's own atomic operation, then applies the rule here; the
//! supplier's statement and wallet are booked by `SupplyBooking` (`store::statement`).

use chrono::{DateTime, Utc};

use crate::limits::MAX_QUOTE_DAYS;
use crate::model::*;
use crate::store::{InsertQuoteError, QuoteDecisionError, next_updated_at};

impl NewQuote {
    /// The rule of [`SupplyStore::insert_quote`](crate::store::SupplyStore::insert_quote),
    /// given what the store read in the insert's own atomic operation: the supplier of the
    /// variant's product (`None` for a variant that does not exist or a product of no
    /// supplier) and the variant's pending quote with its account, if any (expired ones do not
    /// count).
    ///
    /// The supplier's own pending quote refuses the new one. A pending quote of another
    /// account is one its product's former supplier made while the operator moved the product
    /// (the move ends the pending quotes it finds; one written at that very moment escapes
    /// it): it never blocks the new supplier, and its id is returned for the store to end it
    /// as the move would have ([`Quote::end_for_moved_product`]), in the same operation.
    pub fn admit(
        &self,
        supplier: Option<AccountId>,
        pending: Option<(QuoteId, AccountId)>,
    ) -> Result<Option<QuoteId>, InsertQuoteError> {
        if supplier != Some(self.account_id) {
            return Err(InsertQuoteError::NotSuppliers);
        }
        match pending {
            Some((existing, owner)) if owner == self.account_id => {
                Err(InsertQuoteError::Pending { existing })
            }
            Some((stale, _former_supplier)) => Ok(Some(stale)),
            None => Ok(None),
        }
    }
}

impl Quote {
    /// The rule of [`SupplyStore::decide_quote`](crate::store::SupplyStore::decide_quote) for the quote as stored: only a quote
    /// pending at `now` (not expired) is decided, once; the decision sets its status,
    /// `decided_at` (`now`), the platform's note (accept and reject) and `updated_at`
    /// ([`next_updated_at`]). Nothing changes on a refusal.
    pub fn decide(
        &mut self,
        decision: &QuoteDecision,
        now: DateTime<Utc>,
    ) -> Result<(), QuoteDecisionError> {
        let status = self.clone().as_of(now).status;
        if status != QuoteStatus::Pending {
            return Err(QuoteDecisionError::NotPending { status });
        }
        self.status = decision.status();
        self.decision_note = decision.note().map(str::to_owned);
        self.decided_at = Some(now);
        self.updated_at = next_updated_at(self.updated_at, now);
        Ok(())
    }

    /// The rule of [`CatalogStore::update_product`](crate::store::CatalogStore::update_product)
    /// when the product moves to another supplier: a quote of the old supplier still pending
    /// at `now` is withdrawn by the platform, in the same atomic operation, with
    /// the platform's note ("the product moved to another supplier") as its decision note, so the new supplier can quote at once and
    /// never meets the old one's quote. Returns whether the quote was withdrawn (an expired or
    /// decided quote is left as it is).
    pub fn end_for_moved_product(&mut self, now: DateTime<Utc>) -> bool {
        if self.decide(&QuoteDecision::Withdraw, now).is_err() {
            return false;
        }
        self.decision_note = Some(MOVED_PRODUCT_NOTE.to_owned());
        true
    }

    /// Decides the quote ([`decide`](Self::decide)) when its product's supplier is still the
    /// quote's (`supplier` is the product's supplier now). A pending quote whose product moved
    /// to another supplier since it was made (a quote made while the move was being written)
    /// is ended as the move would have ended it ([`end_for_moved_product`](Self::end_for_moved_product)),
    /// whatever the decision asked: it is never accepted, so the old supplier's price never
    /// becomes the new supplier's. Returns whether the asked decision was taken.
    pub fn decide_as_supplied(
        &mut self,
        decision: &QuoteDecision,
        supplier: Option<AccountId>,
        now: DateTime<Utc>,
    ) -> Result<bool, QuoteDecisionError> {
        if supplier != Some(self.account_id) && self.end_for_moved_product(now) {
            return Ok(false);
        }
        self.decide(decision, now).map(|()| true)
    }
}

/// The decision note of a quote withdrawn because its product moved to another supplier.
pub const MOVED_PRODUCT_NOTE: &str = "المنتج اتنقل لمورد تاني، فالعرض اتسحب.";

impl NewQuote {
    /// The validity rule of a new quote: `valid_until`, when given, after `now`
    /// ([`Problem::NotInFuture`]) and at most `MAX_QUOTE_DAYS` (90) days ahead
    /// ([`Problem::TooFarAhead`]). Checked when the quote is made (a replay does not check it
    /// again).
    pub fn check_validity(&self, now: DateTime<Utc>) -> Result<(), FieldProblem> {
        let problem = match self.valid_until {
            Some(until) if until <= now => Problem::NotInFuture,
            Some(until) if until > now + chrono::Duration::days(MAX_QUOTE_DAYS) => {
                Problem::TooFarAhead
            }
            _ => return Ok(()),
        };
        Err(FieldProblem {
            field: "valid_until".into(),
            problem,
        })
    }
}

impl Quote {
    /// The stock adjustment accepting this quote keeps: its pieces received into its
    /// variant, naming the quote (what every store writes on an accept).
    pub fn received_pieces(&self) -> NewStockAdjustment {
        NewStockAdjustment::builder()
            .variant_id(self.variant_id)
            .delta(self.quantity)
            .reason(StockReason::Received)
            .quote_id(self.id)
            .build()
    }

    /// The stored quote as a read shows it at `now`, its `product` (the quote's, as stored
    /// now; `None` when it is gone) giving the title and its variant's label, then
    /// [`as_of`](Self::as_of) `now`: for a backend that keeps whole records.
    pub fn as_read(&self, product: Option<&Product>, now: DateTime<Utc>) -> Self {
        let mut quote = self.clone();
        if let Some(product) = product {
            quote.title.clone_from(&product.title);
            if let Some(variant) = product.variants.iter().find(|v| v.id == quote.variant_id) {
                quote.label.clone_from(&variant.label);
            }
        }
        quote.as_of(now)
    }

    /// Whether the quote is pending at `now`: stored pending and not expired
    /// ([`expired_at`](Self::expired_at)). Only such a quote is decided, blocks a new quote of
    /// its variant ([`NewQuote::admit`]) and is a variant's pending quote.
    pub fn is_pending_at(&self, now: DateTime<Utc>) -> bool {
        self.status == QuoteStatus::Pending && !Self::expired_at(self.status, self.valid_until, now)
    }

    /// The quote as read at `now`: a stored pending quote past its `valid_until` is
    /// `expired`, last updated at its `valid_until`. Every read of every store answers this.
    pub fn as_of(mut self, now: DateTime<Utc>) -> Self {
        if let Some(until) = self.valid_until
            && Self::expired_at(self.status, self.valid_until, now)
        {
            self.status = QuoteStatus::Expired;
            self.updated_at = self.updated_at.max(until);
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;
    use rust_decimal::Decimal;

    use super::*;

    /// A pending quote of supplier 7 made at `at`.
    fn pending(at: DateTime<Utc>) -> Quote {
        Quote::builder()
            .id(QuoteId::new(1))
            .account_id(AccountId::new(7))
            .variant_id(VariantId::new(2))
            .product_id(ProductId::new(3))
            .title("مروحة".into())
            .label("صغير".into())
            .unit_price(Decimal::new(4550, 2))
            .quantity(10)
            .status(QuoteStatus::Pending)
            .created_at(at)
            .updated_at(at)
            .build()
    }

    /// A quote whose product moved to another supplier since it was made is ended as the
    /// move ends it, whatever the decision asked (never accepted); its own supplier's quote is
    /// decided as asked.
    #[test]
    fn a_quote_of_a_moved_product_is_ended_not_accepted() {
        let made = Utc.with_ymd_and_hms(2026, 11, 1, 10, 0, 0).unwrap();
        let now = made + chrono::Duration::hours(1);
        let accept = QuoteDecision::Accept { note: None };
        let mut moved = pending(made);
        let taken = moved.decide_as_supplied(&accept, Some(AccountId::new(8)), now);
        assert!(matches!(taken, Ok(false)), "{taken:?}");
        assert_eq!(moved.status, QuoteStatus::Withdrawn);
        assert_eq!(moved.decision_note.as_deref(), Some(MOVED_PRODUCT_NOTE));
        let mut supplierless = pending(made);
        assert!(matches!(
            supplierless.decide_as_supplied(&accept, None, now),
            Ok(false)
        ));
        let mut own = pending(made);
        let taken = own.decide_as_supplied(&accept, Some(AccountId::new(7)), now);
        assert!(matches!(taken, Ok(true)), "{taken:?}");
        assert_eq!(own.status, QuoteStatus::Accepted);
    }
}
