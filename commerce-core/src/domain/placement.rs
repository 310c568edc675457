//! Placing an order: the one way an order is registered, by `POST /orders` and by the
//! platform alike.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use rand::Rng;

use super::checkout::{self, CheckoutRequest, Resolved};
use super::kept::KeptProducts;
use crate::config::Config;
use crate::model::*;
use crate::model::{FieldProblem, Problem};
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
    /// The catalogue changed under the order twice: priced from the kept records, then again
    /// from the store, the order's stock write found what it was priced from changed both
    /// times. Nothing was written; the client may retry.
    #[error("the catalogue changed while the order was placed")]
    CatalogueChanged,
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

/// The products of `variants` read from the store (not from the kept records), and kept.
async fn read_products(
    store: &dyn Store,
    kept: &KeptProducts,
    variants: &[VariantId],
) -> Result<Vec<Arc<Product>>, StoreError> {
    let products: Vec<Arc<Product>> = store
        .products_of_variants(variants)
        .await?
        .into_iter()
        .map(Arc::new)
        .collect();
    kept.forget(variants);
    kept.keep(&products);
    Ok(products)
}

/// The checkout resolved against the kept records of its products, or against the store's
/// when `fresh` is set, when they are not all kept, or when the kept ones refuse it (a refusal
/// is never decided on a kept record).
async fn resolve(
    store: &dyn Store,
    kept: &KeptProducts,
    options: &[ShippingOption],
    request: &CheckoutRequest,
    variants: &[VariantId],
    fresh: bool,
) -> Result<Resolved, PlaceError> {
    if !fresh
        && let Some(products) = kept.of(variants)
        && let Ok(resolved) = checkout::resolve_from(options, &products, request)
    {
        return Ok(resolved);
    }
    let products = read_products(store, kept, variants).await?;
    checkout::resolve_from(options, &products, request).map_err(PlaceError::Invalid)
}

/// Registers an order exactly as checkout does: refuses a repeated `external_reference`,
/// checks the lines against the catalogue, prices them, and writes the order, the stock
/// reservation and the billing entry in one store operation. Shared by `POST /orders` and the
/// operator API.
///
/// The lines are priced from the engine's kept product records ([`KeptProducts`]), and the
/// order carries what they were priced from ([`NewOrder::priced_from`]): the store's stock
/// write takes the pieces only while each variant's price and its product's revision are
/// still those. A write that finds them changed ([`PlaceOrderError::Stale`]) wrote nothing:
/// the products are read from the store, kept, the order priced again and written again,
/// once. A second change in that short time is answered with
/// [`PlaceError::CatalogueChanged`] (a 409 the client may retry): an order is never
/// registered at a price that was not current at its stock write.
pub(crate) async fn place(
    store: &dyn Store,
    kept: &KeptProducts,
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
    let options = store.shipping_options().await?;
    let variants: Vec<VariantId> = request
        .checkout
        .lines
        .iter()
        .map(|l| l.variant_id)
        .collect();
    let resolved = resolve(store, kept, &options, &request.checkout, &variants, false).await?;
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
        priced_from: resolved.priced_from(),
    };
    let mut repriced = false;
    const NUMBER_ATTEMPTS: usize = 8;
    for _ in 0..NUMBER_ATTEMPTS {
        match store.place_order(new.clone()).await {
            Ok(order) => return Ok(order),
            Err(PlaceOrderError::NumberTaken) => new.number = generate_number(),
            Err(PlaceOrderError::Stale { .. }) if !repriced => {
                repriced = true;
                let resolved =
                    resolve(store, kept, &options, &request.checkout, &variants, true).await?;
                let priced = resolved.price(config.commission_percent);
                new.lines = resolved.order_lines(&priced);
                new.totals = priced.totals;
                new.priced_from = resolved.priced_from();
            }
            Err(PlaceOrderError::Stale { .. }) => {
                kept.forget(&variants);
                return Err(PlaceError::CatalogueChanged);
            }
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
