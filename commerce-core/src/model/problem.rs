//! What can be wrong with one field of an input, whoever checks it: the API's readers and
//! the operator's drafts report the same [`FieldProblem`]s (Arabic only at the HTTP edge).

use rust_decimal::Decimal;

/// What is wrong with one field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Problem {
    /// A required field is absent or blank.
    Required,
    /// Longer than `max` characters (after trimming).
    TooLong {
        /// The limit.
        max: usize,
    },
    /// Holds a control character or a bidirectional override; `multi_line` fields allow tab,
    /// CR and LF.
    NotPrintable {
        /// Whether the field is one that may hold line breaks.
        multi_line: bool,
    },
    /// Not an Egyptian mobile number (`01` and 9 digits; `+20`/`0020` accepted).
    InvalidPhone,
    /// Not an http or https URL with a host.
    InvalidUrl,
    /// A URL that is not `https` where only `https` is allowed.
    NotHttps,
    /// A URL whose host is, or resolves to, a non-public address, or whose host name does not
    /// resolve (one answer for both: registering URLs must not tell which internal names exist).
    NotPublicAddress,
    /// Not one of the values allowed.
    UnknownValue,
    /// Not an amount of zero or more with at most two decimals (and at most
    /// [`MAX_AMOUNT`](crate::money::MAX_AMOUNT)).
    InvalidAmount,
    /// An integer outside `min..=max`.
    OutOfRange {
        /// Smallest allowed.
        min: i64,
        /// Largest allowed.
        max: i64,
    },
    /// Shorter than `min` characters.
    TooShort {
        /// The least.
        min: usize,
    },
    /// Not a percent from 0 to 100 with at most two decimals.
    InvalidPercent,
    /// Below the least amount allowed.
    BelowMinimum {
        /// The least amount.
        minimum: Decimal,
    },
    /// An instant that must be later than now (a key's expiry).
    NotInFuture,
    /// An instant further ahead than allowed (a quote's `valid_until` more than
    /// `MAX_QUOTE_DAYS` days ahead).
    TooFarAhead,
    /// Not 1 to [`MAX_LINES`](crate::domain::checkout::MAX_LINES) lines.
    LineCount,
    /// More than [`MAX_WARRANTIES`](crate::domain::checkout::MAX_WARRANTIES) warranties on one line.
    TooManyWarranties,
    /// No active shipping option with this id.
    ShippingOptionNotFound,
    /// The option does not serve the governorate.
    GovernorateNotServed,
    /// No variant with this id on sale now.
    VariantNotAvailable,
    /// A warranty listed twice on one line.
    DuplicateWarranty,
    /// Not a warranty of the line's product offered now.
    WarrantyNotAvailable,
    /// More pieces than are left (for this line, after the earlier lines of its variant).
    InsufficientStock {
        /// Pieces left for the line.
        available: i64,
    },
    /// A stock adjustment that would take the pieces available below zero.
    StockShortfall {
        /// Pieces available now.
        available: i64,
        /// Pieces missing.
        shortfall: i64,
    },
    /// Not an account of the supplier side.
    NotASupplier,
    /// Outcome counts on a move that does not settle the order (only a delivery, a return,
    /// the archive of a settled order and a correction of one record them).
    OutcomesNotAccepted,
    /// Delivered pieces on an order settled as returned.
    DeliveredOnReturn,
    /// The count of the family an order settles in given with pieces left uncounted.
    Uncounted {
        /// The line's quantity: the counts must add up to it.
        quantity: i64,
    },
}

/// A problem and the field it belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FieldProblem {
    /// The field's path, as the API names it and as the fields of [`OrderDraft`](crate::domain::fields::OrderDraft) are named:
    /// `phone`, `lines.2.quantity` (the third line's `quantity`).
    pub field: String,
    /// What is wrong.
    pub problem: Problem,
}

impl FieldProblem {
    /// A `FieldProblem` of its fields, in their order.
    pub fn new(field: String, problem: Problem) -> Self {
        Self { field, problem }
    }
}

impl std::fmt::Display for FieldProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {:?}", self.field, self.problem)
    }
}
