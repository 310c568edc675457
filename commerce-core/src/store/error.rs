//! The errors of store operations: storage failures and the domain outcomes of the two
//! order writes.

use rust_decimal::Decimal;

use crate::model::{AccountId, OrderId, OrderStatus, VariantId};

/// A storage failure that is not a domain outcome (connection lost, constraint broken, ...).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The record named does not exist.
    #[error("record not found")]
    NotFound,
    /// The write would break a rule of the store (a unique slug, a wrong parent, ...).
    #[error("invalid write: {0}")]
    Invalid(String),
    /// A value that must be unique among its records is taken already (a category slug, an
    /// account email, a governorate name): nothing was written.
    #[error("{0} already used")]
    Duplicate(Unique),
    /// A correction of delivered pieces would take a supplier's balance below zero (the
    /// money was withdrawn already): nothing was written
    /// ([`SupplierTotals::book`](crate::model::SupplierTotals::book)).
    #[error("supplier {supplier}'s balance is {shortfall} short of the correction")]
    SupplierShortfall {
        /// The supplier.
        supplier: AccountId,
        /// How much the balance lacks.
        shortfall: Decimal,
    },
    /// A correction of a delivered order would take from its marketer earnings that were
    /// withdrawn already (paid or pending): nothing was written
    /// ([`shortfall`](crate::domain::earnings::shortfall)).
    #[error("account {account}'s earnings are {shortfall} short of the correction")]
    MarketerShortfall {
        /// The marketer's account.
        account: AccountId,
        /// How much its earnings lack.
        shortfall: Decimal,
    },
    /// An order write would take back from a variant more pieces than it has (a correction
    /// returning fewer pieces than recorded, after those pieces were ordered again): nothing
    /// was written ([`stock_moves`](crate::domain::pieces::stock_moves)).
    #[error("variant {variant} has {available} pieces, {shortfall} short of the correction")]
    StockShortfall {
        /// The variant.
        variant: VariantId,
        /// Its pieces now.
        available: i64,
        /// Pieces missing.
        shortfall: i64,
    },
    /// The order changed since the caller read it (its `updated_at` moved past the one the
    /// write was decided on: another write came between): nothing was written. Read it
    /// again, decide again, and write again
    /// ([`OrderStore::set_line_outcomes`](super::OrderStore::set_line_outcomes),
    /// [`StatusChange::read_at`](super::StatusChange::read_at)).
    #[error("the order changed since it was read")]
    Changed,
    /// The backend failed.
    #[error("storage backend failed: {0}")]
    Backend(#[from] Box<dyn std::error::Error + Send + Sync>),
}

/// A value that is unique among the records of its kind, in every store: a repeat is refused
/// with [`StoreError::Duplicate`] (and [`Conflict::Duplicate`](crate::operator::Conflict::Duplicate)
/// from the operator API), so that a set-up run twice creates nothing twice. Compared exactly
/// (case and spaces included).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Unique {
    /// A category's `slug`, across all categories.
    CategorySlug,
    /// An account's `email`, across all accounts (deleted ones included).
    AccountEmail,
    /// A governorate's `name`, across the platform.
    GovernorateName,
    /// A product's `slug`, across all products (removed ones included).
    ProductSlug,
}

impl Unique {
    /// The field that holds the value (`slug`, `email`, `name`).
    pub fn field(self) -> &'static str {
        match self {
            Unique::CategorySlug | Unique::ProductSlug => "slug",
            Unique::AccountEmail => "email",
            Unique::GovernorateName => "name",
        }
    }
}

impl std::fmt::Display for Unique {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Unique::CategorySlug => "category slug",
            Unique::AccountEmail => "account email",
            Unique::GovernorateName => "governorate name",
            Unique::ProductSlug => "product slug",
        })
    }
}

impl StoreError {
    /// Wraps any backend error.
    pub fn backend(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        StoreError::Backend(Box::new(error))
    }
}

/// Why [`OrderStore::place_order`](super::OrderStore::place_order) registered nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlaceOrderError {
    /// The account already has an order with this `external_reference`.
    #[error("external_reference already used by order {existing_id}")]
    DuplicateExternalReference {
        /// The order already registered.
        existing_id: OrderId,
        /// Its number.
        existing_number: String,
    },
    /// A line asks for more pieces than are available.
    #[error("line {line_index} asks for more than the {available} available")]
    InsufficientStock {
        /// Index of the line in the request.
        line_index: usize,
        /// Pieces available now.
        available: i64,
    },
    /// The generated number is taken; the engine draws another.
    #[error("order number already taken")]
    NumberTaken,
    /// The order's idempotency record is gone or held by another request (this one outlived
    /// the stale time and a retry took the record over): the retry places the key's order.
    #[error("idempotency record held by another request")]
    IdempotencyLost,
    /// What a variant was priced from ([`NewOrder::priced_from`](crate::model::NewOrder)) is
    /// no longer current: its price or its product's revision changed, or it is gone. Nothing
    /// was written; the engine reads the products again, prices again and retries.
    #[error("variant {variant_id} changed since it was priced")]
    Stale {
        /// The first variant found changed.
        variant_id: VariantId,
    },
    /// The storage failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Why [`OrderStore::change_order_status`](super::OrderStore::change_order_status) changed nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StatusChangeError {
    /// No such order (or it belongs to another account).
    #[error("order not found")]
    NotFound,
    /// The order's current status does not allow the move.
    #[error("order is {current} and cannot move to {requested}")]
    NotAllowed {
        /// Status now.
        current: OrderStatus,
        /// Status asked for.
        requested: OrderStatus,
    },
    /// The storage failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}
