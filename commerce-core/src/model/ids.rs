//! Ids: one type per record, so that a product id cannot be passed where an order id is
//! wanted. Each wraps the `i64` it is stored as (SQL `BIGINT`), is written as that number in
//! JSON (`serde(transparent)`) and, with the feature `sqlx`, binds and decodes as one. From
//! outside an id is made only with `new`: no parsing, no deserializing, no `From<i64>`.

/// Declares the id types.
macro_rules! id_types {
    ($($(#[$doc:meta])* $name:ident),+ $(,)?) => {$(
        $(#[$doc])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord,
            serde::Serialize,
        )]
        #[serde(transparent)]
        #[cfg_attr(feature = "sqlx", derive(sqlx::Type), sqlx(transparent))]
        pub struct $name(i64);

        impl $name {
            /// The largest id (a bound for ranges over ids).
            pub const MAX: Self = Self(i64::MAX);

            /// The id with this number (as stored: positive for a stored record).
            pub const fn new(id: i64) -> Self {
                Self(id)
            }

            /// The number.
            pub const fn get(self) -> i64 {
                self.0
            }
        }

        /// In the OpenAPI document: a positive 64-bit integer.
        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                utoipa::openapi::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::Integer)
                    .format(Some(utoipa::openapi::SchemaFormat::KnownFormat(
                        utoipa::openapi::KnownFormat::Int64,
                    )))
                    .minimum(Some(1))
                    .into()
            }
        }

        impl utoipa::ToSchema for $name {}

        impl From<$name> for i64 {
            fn from(id: $name) -> i64 {
                id.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.fmt(f)
            }
        }

        impl PartialEq<i64> for $name {
            fn eq(&self, other: &i64) -> bool {
                self.0 == *other
            }
        }

        impl PartialEq<$name> for i64 {
            fn eq(&self, other: &$name) -> bool {
                *self == other.0
            }
        }

    )+};
}

/// Calls `$callback! { ... }` with every id type, each with its doc comment: the one list
/// that [`id_types!`] and other crates' per-id code (the sqlx store's bounds) expand from.
#[doc(hidden)]
#[macro_export]
macro_rules! __with_id_types {
    ($callback:ident) => {
        $callback! {
            /// Id of an account.
            AccountId,
            /// Id of an API key.
            KeyId,
            /// Id of a category.
            CategoryId,
            /// Id of a product.
            ProductId,
            /// Id of a variant (the `variant_id` of orders and quotes).
            VariantId,
            /// Id of a product warranty.
            WarrantyId,
            /// Id of a governorate.
            GovernorateId,
            /// Id of a shipping option.
            ShippingOptionId,
            /// Id of an order.
            OrderId,
            /// Id of an order line.
            LineId,
            /// Id of a withdrawal request.
            WithdrawalId,
            /// Id of a webhook endpoint.
            WebhookId,
            /// Id of a webhook delivery (one event for one endpoint).
            DeliveryId,
            /// Id of a supplier's quote (an offer of pieces of a variant at a price).
            QuoteId,
            /// Id of a stock adjustment (one change of a variant's `available`, kept).
            StockAdjustmentId,
            /// Id of an entry of a supplier's statement.
            StatementEntryId,
        }
    };
}

crate::__with_id_types!(id_types);
