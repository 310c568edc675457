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

pub use account::*;
pub use catalog::*;
pub use catalog_edits::*;
pub use changes::*;
pub use delivery::*;
pub use idempotency::*;
pub use ids::*;
pub use listing::*;
pub use meter::*;
pub use order::*;
pub use page::*;
pub use problem::*;
pub use queries::*;
pub use quote::*;
pub use shipping::*;
pub use statement::*;
pub use stock::*;
pub use webhook::*;
pub use withdrawal::*;
