//! Why an operator call changed nothing: [`OperatorError`], its [`Conflict`]s, and the
//! conversions from the store's and the domain's errors.

use rust_decimal::Decimal;

use crate::domain::moves::MoveError;
use crate::domain::placement::PlaceError;
use crate::domain::webhooks::WebhookError;
use crate::model::*;
use crate::model::{FieldProblem, Problem};
use crate::store::{
    InsertKeyError, StatusChangeError, StockError, StoreError, Unique, WithdrawalRequestError,
};

/// Why an operator call changed nothing. Match on it: each variant says what the caller can
/// do about it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OperatorError {
    /// No such record.
    #[error("not found")]
    NotFound,
    /// The input breaks a field rule: every problem found, each naming its field (an
    /// [`OrderDraft`](super::OrderDraft) is checked by the rules of `POST /orders`).
    #[error("invalid input: {}", list_problems(.0))]
    Invalid(Vec<FieldProblem>),
    /// The records as they stand do not allow it (an order's status, a reference already
    /// used, the ready balance, a decision already taken).
    #[error(transparent)]
    Conflict(#[from] Conflict),
    /// The store failed.
    #[error(transparent)]
    Store(StoreError),
}

/// What in the stored records stood in the way of an operator call.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Conflict {
    /// The order's status does not allow the move.
    #[error("order is {current} and cannot move to {requested}")]
    MoveNotAllowed {
        /// Status now.
        current: OrderStatus,
        /// Status asked for.
        requested: OrderStatus,
    },
    /// The account already has an order with this `external_reference`.
    #[error("external_reference already used by order {existing_id}")]
    DuplicateExternalReference {
        /// The order already registered.
        existing_id: OrderId,
        /// Its number.
        existing_number: String,
    },
    /// The ordered products' prices or warranties changed twice while the order was being
    /// placed: nothing was registered; placing it again prices it from the catalogue as it is.
    #[error("the catalogue changed while the order was placed")]
    CatalogueChanged,
    /// A withdrawal asks for more than the account's ready balance.
    #[error("{requested} is more than the ready balance of {ready}")]
    OverReadyBalance {
        /// The amount asked for.
        requested: Decimal,
        /// The ready balance.
        ready: Decimal,
    },
    /// The account's API access cannot move from its status to the one asked for
    /// ([`ApiStatus::owner_may_move_to`]).
    #[error("API access is {current} and cannot become {requested}")]
    ApiStatusNotAllowed {
        /// API status now.
        current: ApiStatus,
        /// API status asked for.
        requested: ApiStatus,
    },
    /// A key asked for while the account's API access is not approved.
    #[error("API access is {current}, not approved")]
    ApiAccessNotApproved {
        /// API status now.
        current: ApiStatus,
    },
    /// A key asked for while the account has this many live keys already
    /// ([`MAX_LIVE_KEYS`](crate::operator::MAX_LIVE_KEYS)): revoke one first.
    #[error("the account has {limit} live keys already")]
    KeyLimit {
        /// The limit.
        limit: usize,
    },
    /// The owner tried to move API access away from a suspension the platform's team made:
    /// the team's suspension is lifted by the team only
    /// ([`Account::owner_may_move_api_to`]).
    #[error("API access was suspended by the team, which alone may lift it")]
    ApiSuspendedByTeam,
    /// The owner asked for API access, a key or a withdrawal while the account is not active
    /// (suspended, deleted, or its registration incomplete).
    #[error("the account is {state}, not active")]
    AccountNotActive {
        /// The account's state now.
        state: AccountState,
    },
    /// A withdrawal requested outside the withdrawal window (Sunday and Thursday, Cairo).
    #[error("the withdrawal window is closed until {opens_at}")]
    WithdrawalWindowClosed {
        /// When the next window opens.
        opens_at: chrono::DateTime<chrono::Utc>,
    },
    /// A correction of an order's delivered pieces would take a supplier's balance below
    /// zero (what it paid was withdrawn already): the platform settles the shortfall outside
    /// the API, then records the correction.
    #[error("supplier {supplier}'s balance is {shortfall} short of the correction")]
    SupplierShortfall {
        /// The supplier.
        supplier: AccountId,
        /// How much its balance lacks.
        shortfall: Decimal,
    },
    /// A correction of an order's delivered pieces would take from the marketer earnings it
    /// withdrew already (paid or pending): the platform settles it outside the API first.
    #[error("account {account}'s earnings are {shortfall} short of the correction")]
    MarketerShortfall {
        /// The marketer's account.
        account: AccountId,
        /// How much its earnings lack.
        shortfall: Decimal,
    },
    /// A correction of an order's returned pieces would take back more pieces than its
    /// variant has (they were ordered again since they came back): the platform counts the
    /// shelf, then records the correction.
    #[error("variant {variant} has {available} pieces, {shortfall} short of the correction")]
    StockShortfall {
        /// The variant.
        variant: VariantId,
        /// Its pieces now.
        available: i64,
        /// Pieces missing.
        shortfall: i64,
    },
    /// A ping or redelivery to a disabled webhook endpoint.
    #[error("the webhook is disabled")]
    WebhookDisabled,
    /// A ping or redelivery while the endpoint has this many of them pending.
    #[error("the webhook has {limit} manual deliveries pending already")]
    WebhookBusy {
        /// The limit.
        limit: usize,
    },
    /// The quote is not pending (accepted, rejected, withdrawn or expired): it cannot be
    /// decided.
    #[error("the quote is {status}, not pending")]
    QuoteNotPending {
        /// Its status now.
        status: QuoteStatus,
    },
    /// A value that must be unique is taken already (a category slug, an account email, a
    /// governorate name): look the record up instead of creating it again.
    #[error("{0} already used")]
    Duplicate(Unique),
    /// A compare-and-set of a variant's stock ([`Operator::set_stock`](super::Operator::set_stock))
    /// found another quantity than the one expected: read the stock again and decide anew.
    #[error("available is {available}, not the expected {expected}")]
    StockChanged {
        /// The quantity the caller expected.
        expected: i64,
        /// The quantity now.
        available: i64,
    },
    /// The store refused the write as it stands (a key hash already stored, a parent
    /// category or governorate that does not exist, a withdrawal already decided).
    #[error("refused by the store: {0}")]
    Refused(String),
}

impl Conflict {
    /// The API's reason for the same conflict, for an application that answers it as a 409
    /// (`None`: the API has no such conflict).
    pub fn reason(&self) -> Option<crate::ConflictReason> {
        use crate::ConflictReason as R;
        match self {
            Conflict::MoveNotAllowed { .. } => Some(R::MoveNotAllowed),
            Conflict::DuplicateExternalReference { .. } => Some(R::DuplicateExternalReference),
            Conflict::WebhookDisabled => Some(R::WebhookDisabled),
            Conflict::WebhookBusy { .. } => Some(R::WebhookBusy),
            Conflict::QuoteNotPending { .. } => Some(R::MoveNotAllowed),
            Conflict::KeyLimit { .. } => Some(R::KeyLimit),
            Conflict::CatalogueChanged => Some(R::CatalogueChanged),
            Conflict::AccountNotActive { .. }
            | Conflict::ApiSuspendedByTeam
            | Conflict::OverReadyBalance { .. }
            | Conflict::ApiStatusNotAllowed { .. }
            | Conflict::ApiAccessNotApproved { .. }
            | Conflict::WithdrawalWindowClosed { .. }
            | Conflict::SupplierShortfall { .. }
            | Conflict::StockShortfall { .. }
            | Conflict::MarketerShortfall { .. }
            | Conflict::Duplicate(_)
            | Conflict::StockChanged { .. }
            | Conflict::Refused(_) => None,
        }
    }
}

fn list_problems(problems: &[FieldProblem]) -> String {
    let list: Vec<String> = problems.iter().map(ToString::to_string).collect();
    list.join(", ")
}

impl OperatorError {
    /// One problem on one field.
    pub(super) fn field(field: &str, problem: Problem) -> Self {
        OperatorError::Invalid(vec![FieldProblem {
            field: field.to_owned(),
            problem,
        }])
    }
}

impl From<StoreError> for OperatorError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::NotFound => OperatorError::NotFound,
            StoreError::Invalid(text) => Conflict::Refused(text).into(),
            StoreError::Changed => Conflict::Refused(
                "the order kept changing while this write was decided: try again".into(),
            )
            .into(),
            StoreError::Duplicate(unique) => Conflict::Duplicate(unique).into(),
            StoreError::SupplierShortfall {
                supplier,
                shortfall,
            } => Conflict::SupplierShortfall {
                supplier,
                shortfall,
            }
            .into(),
            StoreError::MarketerShortfall { account, shortfall } => {
                Conflict::MarketerShortfall { account, shortfall }.into()
            }
            StoreError::StockShortfall {
                variant,
                available,
                shortfall,
            } => Conflict::StockShortfall {
                variant,
                available,
                shortfall,
            }
            .into(),
            other => OperatorError::Store(other),
        }
    }
}

impl From<StockError> for OperatorError {
    fn from(error: StockError) -> Self {
        match error {
            StockError::NotFound => OperatorError::NotFound,
            StockError::Insufficient {
                available,
                shortfall,
            } => OperatorError::field(
                "delta",
                Problem::StockShortfall {
                    available,
                    shortfall,
                },
            ),
            StockError::AboveMaximum { available, max } => OperatorError::field(
                "delta",
                Problem::OutOfRange {
                    min: -available,
                    max: max - available,
                },
            ),
            StockError::Conflict {
                expected,
                available,
            } => Conflict::StockChanged {
                expected,
                available,
            }
            .into(),
            StockError::Store(e) => e.into(),
        }
    }
}

impl From<StatusChangeError> for OperatorError {
    fn from(error: StatusChangeError) -> Self {
        match error {
            StatusChangeError::NotFound => OperatorError::NotFound,
            StatusChangeError::NotAllowed { current, requested } => {
                Conflict::MoveNotAllowed { current, requested }.into()
            }
            StatusChangeError::Store(e) => e.into(),
        }
    }
}

impl From<MoveError> for OperatorError {
    fn from(error: MoveError) -> Self {
        match error {
            MoveError::NotFound | MoveError::UnknownLine { .. } => OperatorError::NotFound,
            MoveError::Invalid(problem) => OperatorError::Invalid(vec![problem]),
            MoveError::NotAllowed { current, requested } => {
                Conflict::MoveNotAllowed { current, requested }.into()
            }
            MoveError::Store(e) => e.into(),
        }
    }
}

impl From<PlaceError> for OperatorError {
    fn from(error: PlaceError) -> Self {
        match error {
            PlaceError::Invalid(problems) => OperatorError::Invalid(problems),
            PlaceError::DuplicateExternalReference {
                existing_id,
                existing_number,
            } => Conflict::DuplicateExternalReference {
                existing_id,
                existing_number,
            }
            .into(),
            PlaceError::CatalogueChanged => Conflict::CatalogueChanged.into(),
            // The operator places without an idempotency key: never lost.
            error @ (PlaceError::NoFreeNumber | PlaceError::IdempotencyLost) => {
                OperatorError::Store(StoreError::Invalid(error.to_string()))
            }
            PlaceError::Store(error) => error.into(),
        }
    }
}

impl From<WithdrawalRequestError> for OperatorError {
    fn from(error: WithdrawalRequestError) -> Self {
        match error {
            WithdrawalRequestError::OverReadyBalance { requested, ready } => {
                Conflict::OverReadyBalance { requested, ready }.into()
            }
            WithdrawalRequestError::Store(error) => error.into(),
        }
    }
}

impl From<InsertKeyError> for OperatorError {
    fn from(error: InsertKeyError) -> Self {
        match error {
            InsertKeyError::TooMany { limit } => Conflict::KeyLimit { limit }.into(),
            InsertKeyError::Store(error) => error.into(),
        }
    }
}

impl From<WebhookError> for OperatorError {
    fn from(error: WebhookError) -> Self {
        match error {
            WebhookError::NotFound => OperatorError::NotFound,
            WebhookError::Invalid(problems) => OperatorError::Invalid(problems),
            WebhookError::TooMany(limit) => {
                Conflict::Refused(format!("the account has {limit} webhooks already")).into()
            }
            WebhookError::Disabled => Conflict::WebhookDisabled.into(),
            WebhookError::Busy(limit) => Conflict::WebhookBusy { limit }.into(),
            WebhookError::Store(error) => error.into(),
        }
    }
}

/// Result of an operator call.
pub type OperatorResult<T> = Result<T, OperatorError>;
