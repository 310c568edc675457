//! The operator's side of suppliers' quotes: the list (pending first, oldest first), accept
//! and reject.

use crate::domain::fields::{TextKind, clean_text};
use crate::limits::MAX_QUOTE_NOTE;
use crate::model::*;
use crate::store::QuoteDecisionError;

use super::{Conflict, Operator, OperatorError, OperatorResult};

impl Operator {
    /// The quotes `query` keeps (any supplier's, or one's), pending first, then the others,
    /// each oldest first; a quote past its `valid_until` is `expired`. One page and how many
    /// match.
    pub async fn quotes(
        &self,
        query: &QuoteQuery,
        page: PageRequest,
    ) -> OperatorResult<Page<Quote>> {
        Ok(self.store().find_quotes(query, page, self.now()).await?)
    }

    /// One quote, as of now.
    pub async fn quote(&self, id: QuoteId) -> OperatorResult<Quote> {
        self.store()
            .quote(None, id, self.now())
            .await?
            .ok_or(OperatorError::NotFound)
    }

    /// Accepts a pending quote, in one atomic operation: the quote `accepted` (with the
    /// note), the variant's `supply_price` its `unit_price`, its `quantity` added to the
    /// variant's `available` as a stock adjustment of reason `received` naming the quote,
    /// the product's `updated_at` bumped (marketers' sync sees the new stock). A quote that is
    /// not pending (decided, withdrawn, expired) is [`Conflict::QuoteNotPending`].
    pub async fn accept_quote(&self, id: QuoteId, note: Option<String>) -> OperatorResult<Quote> {
        let note = decision_note(note)?;
        self.decide_quote(id, QuoteDecision::Accept { note }).await
    }

    /// Rejects a pending quote with a note (at most 500 characters); otherwise as
    /// [`accept_quote`](Self::accept_quote).
    pub async fn reject_quote(&self, id: QuoteId, note: Option<String>) -> OperatorResult<Quote> {
        let note = decision_note(note)?;
        self.decide_quote(id, QuoteDecision::Reject { note }).await
    }

    /// Writes `expired` the quotes stored pending past their `valid_until` (at most 1,000 a
    /// call, oldest first), each with its `quote.updated` event to its
    /// supplier ([`SupplyStore::expire_quotes`](crate::store::SupplyStore::expire_quotes)).
    /// Every read already answers such a quote `expired`; this sends the move. The instance
    /// runner calls it every 10 seconds ([`Engine::run_background`](crate::Engine::run_background)).
    /// Returns how many.
    pub async fn expire_quotes(&self) -> OperatorResult<u64> {
        Ok(self.store().expire_quotes(self.now(), EXPIRY_BATCH).await?)
    }

    async fn decide_quote(&self, id: QuoteId, decision: QuoteDecision) -> OperatorResult<Quote> {
        Ok(self
            .store()
            .decide_quote(None, id, decision, self.now())
            .await?)
    }
}

/// The most quotes [`Operator::expire_quotes`] writes in one call.
pub(crate) const EXPIRY_BATCH: usize = 1000;

/// A decision's note: printable text of at most [`MAX_QUOTE_NOTE`] characters; blank is none.
fn decision_note(note: Option<String>) -> OperatorResult<Option<String>> {
    match note {
        None => Ok(None),
        Some(text) => clean_text(&text, MAX_QUOTE_NOTE, TextKind::MultiLine)
            .map_err(|problem| OperatorError::field("note", problem)),
    }
}

impl From<QuoteDecisionError> for OperatorError {
    fn from(error: QuoteDecisionError) -> Self {
        match error {
            QuoteDecisionError::NotFound => OperatorError::NotFound,
            QuoteDecisionError::NotPending { status } => {
                Conflict::QuoteNotPending { status }.into()
            }
            QuoteDecisionError::AboveMaximum { available, max } => OperatorError::field(
                "quantity",
                Problem::OutOfRange {
                    min: 1,
                    max: max - available,
                },
            ),
            QuoteDecisionError::Store(error) => error.into(),
        }
    }
}
