//! What a store admits: a withdrawal request against the ready balance
//! ([`NewWithdrawal::admit`]), a supplier's quote ([`NewQuote::admit`]) and the platform's
//! decision on it ([`Quote::decide`]). Each store reads what the rule needs inside the write's
//! own atomic operation, then applies the rule here.

use chrono::{DateTime, Utc};

use crate::domain::earnings::{WalletTotals, Withdrawn};
use crate::model::{
    AccountId, NewQuote, NewWithdrawal, Quote, QuoteDecision, QuoteId, QuoteStatus,
};
use crate::store::{InsertQuoteError, QuoteDecisionError, WithdrawalRequestError, next_updated_at};

impl NewWithdrawal {
    /// The rule of [`WithdrawalStore::request_withdrawal`](crate::store::WithdrawalStore::request_withdrawal): the amount must not exceed the
    /// ready balance of `wallet` and `withdrawn`.
    pub fn admit(
        &self,
        wallet: &WalletTotals,
        withdrawn: Withdrawn,
    ) -> Result<(), WithdrawalRequestError> {
        let ready = wallet.ready(withdrawn);
        if self.amount > ready {
            return Err(WithdrawalRequestError::OverReadyBalance {
                requested: self.amount,
                ready,
            });
        }
        Ok(())
    }
}

impl NewQuote {
    /// The rule of [`SupplyStore::insert_quote`](crate::store::SupplyStore::insert_quote), given what the store read in the insert's
    /// own atomic operation: the supplier of the variant's product (`None` for a variant
    /// that does not exist or a product of no supplier) and the variant's pending quote, if
    /// any (expired ones do not count).
    pub fn admit(
        &self,
        supplier: Option<AccountId>,
        pending: Option<QuoteId>,
    ) -> Result<(), InsertQuoteError> {
        if supplier != Some(self.account_id) {
            return Err(InsertQuoteError::NotSuppliers);
        }
        if let Some(existing) = pending {
            return Err(InsertQuoteError::Pending { existing });
        }
        Ok(())
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
}

/// The decision note of a quote withdrawn because its product moved to another supplier.
pub const MOVED_PRODUCT_NOTE: &str = "المنتج اتنقل لمورد تاني، فالعرض اتسحب.";
