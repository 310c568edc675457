//! A supplier's quotes (offers of pieces at a price) and the supplier's view of its variants.
//!
//! A quote is stored `pending` until it is decided (`accepted`, `rejected`) or withdrawn. A
//! pending quote whose `valid_until` has passed is `expired`: that status is derived when the
//! quote is read ([`Quote::as_of`]), so it holds from the instant `valid_until` passes without
//! a job that writes it; a store may also write it (the insert of a new quote on the same
//! variant does), and both readings agree, `updated_at` included (an expired quote was last
//! updated when it expired, at its `valid_until`).

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;

use super::*;

string_enum! {
    /// The state of a quote.
    QuoteStatus {
        /// Awaiting the platform's decision.
        Pending => "pending",
        /// Accepted: the pieces were received into stock at the quote's price.
        Accepted => "accepted",
        /// Refused by the platform.
        Rejected => "rejected",
        /// Withdrawn by the supplier.
        Withdrawn => "withdrawn",
        /// Pending past its `valid_until`: can no longer be decided or withdrawn.
        Expired => "expired",
    }
}

/// A supplier's offer of `quantity` pieces of one variant at `unit_price` each.
#[derive(Debug, Clone, PartialEq, bon::Builder)]
#[non_exhaustive]
pub struct Quote {
    /// Id.
    pub id: QuoteId,
    /// The supplier that made it.
    pub account_id: AccountId,
    /// The variant offered.
    pub variant_id: VariantId,
    /// The variant's product.
    pub product_id: ProductId,
    /// The product's title now.
    pub title: String,
    /// The variant's label now.
    pub label: String,
    /// Price per piece offered.
    pub unit_price: Decimal,
    /// Pieces offered.
    pub quantity: i64,
    /// State (as of the read: see [`Quote::as_of`]).
    pub status: QuoteStatus,
    /// The offer's end, if any.
    pub valid_until: Option<DateTime<Utc>>,
    /// The supplier's note.
    pub note: Option<String>,
    /// The platform's note on its decision.
    pub decision_note: Option<String>,
    /// When it was accepted, rejected or withdrawn.
    pub decided_at: Option<DateTime<Utc>>,
    /// Creation instant.
    pub created_at: DateTime<Utc>,
    /// Last change.
    pub updated_at: DateTime<Utc>,
}

impl Quote {
    /// Whether a quote stored with `status` and `valid_until` is expired at `now`: pending
    /// with its `valid_until` at or before `now`. The SQL stores' filters say the same.
    pub fn expired_at(
        status: QuoteStatus,
        valid_until: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) -> bool {
        status == QuoteStatus::Pending && valid_until.is_some_and(|until| until <= now)
    }
}

/// A new quote: `NewQuote::builder()`, with the supplier, the variant, the price per piece
/// and the pieces; no end and no note unless given.
#[derive(Debug, Clone, PartialEq, bon::Builder)]
#[non_exhaustive]
pub struct NewQuote {
    /// The supplier making it.
    pub account_id: AccountId,
    /// The variant offered (one of the supplier's).
    pub variant_id: VariantId,
    /// Price per piece.
    pub unit_price: Decimal,
    /// Pieces.
    pub quantity: i64,
    /// The offer's end, if any.
    pub valid_until: Option<DateTime<Utc>>,
    /// The supplier's note.
    pub note: Option<String>,
}

impl NewQuote {
    /// The quote as registered with `id` at `now` (pending), on the variant of `product`
    /// titled `title`, labelled `label`: what a store inserts once
    /// [`NewQuote::admit`] admitted it.
    pub fn into_quote(
        self,
        id: QuoteId,
        product: ProductId,
        title: String,
        label: String,
        now: DateTime<Utc>,
    ) -> Quote {
        Quote {
            id,
            account_id: self.account_id,
            variant_id: self.variant_id,
            product_id: product,
            title,
            label,
            unit_price: self.unit_price,
            quantity: self.quantity,
            status: QuoteStatus::Pending,
            valid_until: self.valid_until,
            note: self.note,
            decision_note: None,
            decided_at: None,
            created_at: now,
            updated_at: now,
        }
    }
}

/// What is done with a pending quote.
#[derive(Debug, Clone, PartialEq)]
// Exhaustive on purpose: a backend carries out every decision, so a new one is a change of the store contract.
pub enum QuoteDecision {
    /// The platform accepts it: the variant's `supply_price` becomes the quote's
    /// `unit_price` and its `available` grows by the quote's `quantity` (a stock adjustment
    /// of reason `received` naming the quote).
    Accept {
        /// The platform's note.
        note: Option<String>,
    },
    /// The platform refuses it.
    Reject {
        /// The platform's note.
        note: Option<String>,
    },
    /// The supplier withdraws it.
    Withdraw,
}

impl QuoteDecision {
    /// The status the decision gives.
    pub fn status(&self) -> QuoteStatus {
        match self {
            QuoteDecision::Accept { .. } => QuoteStatus::Accepted,
            QuoteDecision::Reject { .. } => QuoteStatus::Rejected,
            QuoteDecision::Withdraw => QuoteStatus::Withdrawn,
        }
    }

    /// The decision's note.
    pub fn note(&self) -> Option<&str> {
        match self {
            QuoteDecision::Accept { note } | QuoteDecision::Reject { note } => note.as_deref(),
            QuoteDecision::Withdraw => None,
        }
    }
}

/// What a supplier's list of quotes keeps (`GET /quotes`); every filter is optional.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct QuoteFilter {
    /// Only this status (as of the read: `expired` finds pending quotes past their end).
    pub status: Option<QuoteStatus>,
    /// Only quotes of this variant.
    pub variant_id: Option<VariantId>,
    /// Only quotes updated at or after this instant (as of the read).
    pub updated_since: Option<DateTime<Utc>>,
}

impl QuoteFilter {
    /// Whether `quote` (as of the read) passes the filter.
    pub fn keeps(&self, quote: &Quote) -> bool {
        self.status.is_none_or(|s| quote.status == s)
            && self.variant_id.is_none_or(|v| quote.variant_id == v)
            && self
                .updated_since
                .is_none_or(|since| quote.updated_at >= since)
    }
}

/// The platform's list of quotes (the operator's): pending first, then the others, each
/// oldest first; every filter is optional.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct QuoteQuery {
    /// Only this supplier's.
    pub account_id: Option<AccountId>,
    /// Only this status (as of the read).
    pub status: Option<QuoteStatus>,
    /// Only quotes of this variant.
    pub variant_id: Option<VariantId>,
}

impl QuoteQuery {
    /// Whether `quote` (as of the read) passes the query's filters.
    pub fn keeps(&self, quote: &Quote) -> bool {
        self.account_id.is_none_or(|a| quote.account_id == a)
            && self.status.is_none_or(|s| quote.status == s)
            && self.variant_id.is_none_or(|v| quote.variant_id == v)
    }

    /// The order of the list: pending quotes first, then by id (oldest first).
    pub fn sort_key(quote: &Quote) -> (bool, QuoteId) {
        (quote.status != QuoteStatus::Pending, quote.id)
    }
}

/// One of a supplier's variants as the supplier sees it (`GET /supply/variants`).
#[derive(Debug, Clone, PartialEq, bon::Builder)]
#[non_exhaustive]
pub struct SupplyVariant {
    /// The variant.
    pub id: VariantId,
    /// Its product.
    pub product_id: ProductId,
    /// The product's title.
    pub product_title: String,
    /// The variant's label.
    pub label: String,
    /// What the supplier is paid per delivered piece.
    pub supply_price: Decimal,
    /// Pieces that can be ordered now (exact).
    pub available: i64,
    /// The variant's pending quote (not expired), if any.
    pub pending_quote_id: Option<QuoteId>,
}

impl SupplyVariant {
    /// A supplier's view of `variant` of `product` ([`SupplyStore::supply_variants`](crate::store::SupplyStore::supply_variants)),
    /// with the quote pending on it.
    pub fn of(product: &Product, variant: &Variant, pending_quote: Option<QuoteId>) -> Self {
        SupplyVariant::builder()
            .id(variant.id)
            .product_id(product.id)
            .product_title(product.title.clone())
            .label(variant.label.clone())
            .supply_price(variant.supply_price)
            .available(variant.available)
            .maybe_pending_quote_id(pending_quote)
            .build()
    }
}
