//! Placing an order: the one way an order is registered, by `POST /orders` and by the
//! platform alike.

use chrono::{DateTime, Utc};
use rand::Rng;

use super::checkout::{self, CheckoutError, CheckoutRequest, FieldProblem, Problem};
use crate::config::Config;
use crate::model::*;
use crate::store::{PlaceOrderError, Store, StoreError};

/// Why no order was registered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum PlaceError {
    /// The request breaks the catalogue's, the shipping table's or the stock's rules: every
    /// problem found, each naming its field.
    #[error("order refused: {} problem(s)", .0.len())]
    Invalid(Vec<FieldProblem>),
    /// The account already has an order with this `external_reference`.
    #[error("external_reference already used by order {existing_id}")]
    DuplicateExternalReference {
        /// The order already registered.
        existing_id: OrderId,
        /// Its number.
        existing_number: String,
    },
    /// Every order number drawn was taken (practically never: 36^8 numbers).
    #[error("no free order number")]
    NoFreeNumber,
    /// The request's idempotency record was taken over by a retry while this request stalled
    /// past the stale time: the order was not placed (the retry places the key's order).
    #[error("idempotency record held by another request")]
    IdempotencyLost,
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// An order asked for: its own fields and its checkout (lines and shipping choice).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct OrderRequest {
    /// The marketer's own order number (unique per account).
    pub external_reference: Option<String>,
    /// Customer name.
    pub full_name: String,
    /// Customer mobile, normalised.
    pub phone: String,
    /// Second mobile, normalised.
    pub second_phone: Option<String>,
    /// Address.
    pub address: String,
    /// The marketer's store name.
    pub store_name: Option<String>,
    /// The marketer's store link.
    pub store_link: Option<String>,
    /// Note to the platform.
    pub note: Option<String>,
    /// Lines and shipping choice.
    pub checkout: CheckoutRequest,
    /// Number from before reference numbers (operator imports only).
    pub legacy_number: Option<String>,
    /// Whether the billing meter counts it (API calls).
    pub billed: bool,
}

/// A new random order number: `EG-` and 8 characters from `A-Z0-9`.
pub(crate) fn generate_number() -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let mut rng = rand::rng();
    let tail: String = (0..8)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect();
    format!("EG-{tail}")
}

/// Registers an order exactly as checkout does: refuses a repeated `external_reference`,
/// checks the lines against the catalogue, prices them, and writes the order, the stock
/// reservation and the billing entry in one store operation. Shared by `POST /orders` and the
/// operator API.
pub(crate) async fn place(
    store: &dyn Store,
    account_id: AccountId,
    request: OrderRequest,
    now: DateTime<Utc>,
    config: &Config,
    idempotency: Option<IdempotencyClaim>,
) -> Result<Order, PlaceError> {
    if let Some(reference) = &request.external_reference {
        let filter = OrderFilter {
            external_reference: Some(reference.clone()),
            ..OrderFilter::default()
        };
        let page = const { PageRequest::new(1, 1).expect("a valid page") };
        if let Some(existing) = store
            .orders(account_id, &filter, page)
            .await?
            .items
            .into_iter()
            .next()
        {
            return Err(PlaceError::DuplicateExternalReference {
                existing_id: existing.id,
                existing_number: existing.number,
            });
        }
    }
    let resolved =
        checkout::resolve(store, &request.checkout)
            .await
            .map_err(|error| match error {
                CheckoutError::Invalid(problems) => PlaceError::Invalid(problems),
                CheckoutError::Store(error) => PlaceError::Store(error),
            })?;
    let priced = resolved.price(config.commission_percent);
    let mut new = NewOrder {
        account_id,
        number: generate_number(),
        legacy_number: request.legacy_number,
        external_reference: request.external_reference,
        status: OrderStatus::Pending,
        customer: Customer {
            name: request.full_name,
            phone: request.phone,
            second_phone: request.second_phone,
            address: request.address,
            governorate_id: resolved.rate.governorate_id,
            governorate_name: resolved.rate.governorate_name.clone(),
        },
        shipping_option_id: resolved.option.id,
        shipping_option_name: resolved.option.name.clone(),
        store_name: request.store_name,
        store_link: request.store_link,
        note: request.note,
        lines: resolved.order_lines(&priced),
        totals: priced.totals,
        created_at: now,
        bill_month: request.billed.then(|| BillingMonth::of(now)),
        idempotency,
        events: config.event_context(),
    };
    const NUMBER_ATTEMPTS: usize = 8;
    for _ in 0..NUMBER_ATTEMPTS {
        match store.place_order(new.clone()).await {
            Ok(order) => return Ok(order),
            Err(PlaceOrderError::NumberTaken) => new.number = generate_number(),
            Err(PlaceOrderError::DuplicateExternalReference {
                existing_id,
                existing_number,
            }) => {
                return Err(PlaceError::DuplicateExternalReference {
                    existing_id,
                    existing_number,
                });
            }
            Err(PlaceOrderError::InsufficientStock {
                line_index,
                available,
            }) => {
                return Err(PlaceError::Invalid(vec![FieldProblem {
                    field: format!("lines.{line_index}.quantity"),
                    problem: Problem::InsufficientStock { available },
                }]));
            }
            Err(PlaceOrderError::IdempotencyLost) => return Err(PlaceError::IdempotencyLost),
            Err(PlaceOrderError::Store(error)) => return Err(PlaceError::Store(error)),
        }
    }
    tracing::error!("no free order number after {NUMBER_ATTEMPTS} attempts");
    Err(PlaceError::NoFreeNumber)
}
