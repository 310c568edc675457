//! The domain records the engine and the stores exchange.
//!
//! Ids are one type per record ([`OrderId`], [`ProductId`], ...), each wrapping the `i64` it is
//! stored as (SQL `BIGINT`). Money is [`Decimal`](rust_decimal::Decimal) with two decimals.
//! Instants are UTC; they are rendered in Egypt time only on the wire.

/// Declares a string-backed enum with `as_str` and `parse`.
macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The wire and storage spelling.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            /// Parses the wire and storage spelling (exact, case-sensitive).
            pub fn parse(text: &str) -> Option<Self> {
                match text {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        /// In the OpenAPI document: a string, one of the wire spellings.
        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                utoipa::openapi::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::String)
                    .enum_values(Some(Self::ALL.iter().map(|v| v.as_str())))
                    .into()
            }
        }

        impl utoipa::ToSchema for $name {}
    };
}
pub(crate) use string_enum;

mod account;
mod catalog;
mod catalog_edits;
mod changes;
mod delivery;
mod idempotency;
mod ids;
mod listing;
mod meter;
mod order;
mod page;
mod problem;
mod queries;
mod quote;
mod shipping;
mod statement;
mod stock;
mod webhook;
mod withdrawal;

pub use account::{
    Ability, Account, AccountBuilder, AccountPatch, AccountState, ApiKey, ApiKeyBuilder, ApiStatus,
    ChangedBy, KeyHash, KeyListing, NewAccount, NewAccountBuilder, NewKeyRecord,
    NewKeyRecordBuilder, RateWindow, Side,
};
pub use catalog::{
    Category, CategoryBuilder, NewCategory, NewProduct, NewProductBuilder, NewVariant,
    NewVariantBuilder, NewWarranty, NewWarrantyBuilder, Product, ProductBuilder, ProductFilter,
    RemovedProduct, Variant, VariantBuilder, VariantPatch, Warranty, WarrantyBuilder,
};
pub use catalog_edits::{CategoryPatch, ProductPatch, WarrantyPatch};
pub use changes::{CatalogChange, CatalogChanges, ChangeKind, ChangePosition};
pub use delivery::{
    AttemptOutcome, AttemptOutcomeBuilder, AttemptResult, Breaker, ClaimedDelivery,
    DEFAULT_HOLD_DAYS, Delivery, DeliveryBuilder, EXPIRED, EventContext, EventSnapshot, LeaseToken,
    NewEvent, NewEventBuilder, URL_CHANGED, WebhookBacklog, new_event_id,
};
pub(crate) use delivery::{RANDOM_ID_LEN, push_random_id};
pub use idempotency::{IdempotencyClaim, IdempotencyScope, IdempotencyToken, StoredResponse};
pub use ids::{
    AccountId, CategoryId, DeliveryId, GovernorateId, KeyId, LineId, OrderId, ProductId, QuoteId,
    ShippingOptionId, StatementEntryId, StockAdjustmentId, VariantId, WarrantyId, WebhookId,
    WithdrawalId,
};
pub use listing::{
    Count, DEFAULT_COUNT_LIMIT, Listing, SortOrder, TimeRange, contains_folded, fold_case,
};
pub use meter::{BillingMonth, MeterReading};
pub use order::{
    Customer, CustomerBuilder, Family, LineOutcome, LineOutcomeBuilder, LineWarranty,
    LineWarrantyBuilder, NewOrder, NewOrderBuilder, NewOrderLine, NewOrderLineBuilder, Order,
    OrderBuilder, OrderFilter, OrderFilterBuilder, OrderLine, OrderLineBuilder, OrderStatus,
    PayoutState, PricedFrom, TimelineEntry, Totals, TotalsBuilder, normalize_order_number,
};
pub use page::{Page, PageRequest};
pub use problem::{FieldProblem, Problem};
pub use queries::{
    AccountQuery, AccountSort, OrderQuery, WebhookQuery, WithdrawalQuery, WithdrawalTotals,
};
pub use quote::{
    NewQuote, NewQuoteBuilder, Quote, QuoteBuilder, QuoteDecision, QuoteFilter, QuoteQuery,
    QuoteStatus, SupplyVariant, SupplyVariantBuilder,
};
pub use shipping::{Governorate, RateTerms, ShippingOption, ShippingRate, ShippingRateBuilder};
pub use statement::{
    Direction, NewStatementEntry, StatementEntry, StatementEntryBuilder, StatementEntryType,
    StatementFilter, SupplierTotals,
};
pub use stock::{
    NewStockAdjustment, NewStockAdjustmentBuilder, StockAdjustment, StockAdjustmentBuilder,
    StockReason,
};
pub use webhook::{
    DeliveryStatus, DisabledReason, EventSelection, EventType, NewWebhook, NewWebhookBuilder,
    Webhook, WebhookBuilder, WebhookPatch, WebhookSecret,
};
pub use withdrawal::{
    NewWithdrawal, NewWithdrawalBuilder, Withdrawal, WithdrawalBuilder, WithdrawalDecision,
    WithdrawalStatus,
};
