//! Checkout: order lines and a shipping choice checked against the catalogue and the shipping
//! table exactly as checkout does, then priced. Shared by the quote, order placement and the
//! operator API.

use std::borrow::Borrow;
use std::collections::{HashMap, HashSet};

use rust_decimal::Decimal;

use crate::domain::pricing::{self, LineInput, Priced, WarrantyTerms};
use crate::model::{
    AccountId, GovernorateId, LineWarranty, NewOrderLine, PricedFrom, Product, ProductId,
    ShippingOption, ShippingOptionId, ShippingRate, Variant, VariantId, Warranty, WarrantyId,
};
use crate::model::{FieldProblem, Problem};
use crate::store::{Store, StoreError};

pub use crate::limits::{MAX_LINES, MAX_QUANTITY, MAX_WARRANTIES};

/// One line asked for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LineRequest {
    /// The variant.
    pub variant_id: VariantId,
    /// Pieces (1 to [`MAX_QUANTITY`]).
    pub quantity: i64,
    /// The marketer's profit per piece.
    pub profit: Decimal,
    /// Warranties chosen (at most [`MAX_WARRANTIES`]).
    pub warranty_ids: Vec<WarrantyId>,
}

/// Lines and a shipping choice, as a quote or an order asks for them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CheckoutRequest {
    /// The shipping option.
    pub shipping_option_id: ShippingOptionId,
    /// The governorate shipped to.
    pub governorate_id: GovernorateId,
    /// The lines (1 to [`MAX_LINES`]).
    pub lines: Vec<LineRequest>,
}

/// Why a checkout could not be resolved.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum CheckoutError {
    /// The request breaks the catalogue's or the shipping table's rules: every problem found.
    #[error("{} checkout problem(s), first on {}", .0.len(), .0.first().map_or("?", |p| p.field.as_str()))]
    Invalid(Vec<FieldProblem>),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A line checked against the catalogue.
#[derive(Debug, Clone)]
pub(crate) struct ResolvedLine {
    /// The line as asked.
    pub request: LineRequest,
    /// The product's title.
    pub title: String,
    /// The product's supplier.
    pub supplier_id: Option<AccountId>,
    /// The variant, as sold now.
    pub variant: Variant,
    /// The warranties chosen, as offered now.
    pub warranties: Vec<Warranty>,
    /// What the line is priced from (the variant's price, its product's revision).
    pub priced_from: PricedFrom,
}

/// A checkout request checked against the catalogue and the shipping table.
#[derive(Debug, Clone)]
pub(crate) struct Resolved {
    /// The shipping option (offered now).
    pub option: ShippingOption,
    /// Its rate for the governorate.
    pub rate: ShippingRate,
    /// The lines, in request order.
    pub lines: Vec<ResolvedLine>,
}

/// Checks the shipping choice, every variant (sold now), every warranty (the product's and
/// offered now) and the stock (lines of one variant add up). Every problem is reported, each
/// naming its field.
pub(crate) async fn resolve(
    store: &dyn Store,
    request: &CheckoutRequest,
) -> Result<Resolved, CheckoutError> {
    let options = store.shipping_options().await?;
    let variant_ids: Vec<VariantId> = request.lines.iter().map(|l| l.variant_id).collect();
    let products = store.products_of_variants(&variant_ids).await?;
    resolve_from(&options, &products, request).map_err(CheckoutError::Invalid)
}

/// [`resolve`] against `options` and `products` already read (the products of the request's
/// variants; a variant of none of them is not available): every problem found, or the
/// resolved checkout.
pub(crate) fn resolve_from<P: Borrow<Product>>(
    options: &[ShippingOption],
    products: &[P],
    request: &CheckoutRequest,
) -> Result<Resolved, Vec<FieldProblem>> {
    let mut problems = Vec::new();
    let mut fail = |field: String, problem: Problem| problems.push(FieldProblem { field, problem });

    let option = options
        .iter()
        .find(|o| o.id == request.shipping_option_id && o.active)
        .cloned();
    let rate = match &option {
        None => {
            fail("shipping_option_id".into(), Problem::ShippingOptionNotFound);
            None
        }
        Some(option) => {
            let rate = option
                .rate(crate::model::GovernorateId::new(
                    request.governorate_id.into(),
                ))
                .cloned();
            if rate.is_none() {
                fail("governorate_id".into(), Problem::GovernorateNotServed);
            }
            rate
        }
    };

    let mut wanted: HashMap<VariantId, i64> = HashMap::new();
    let mut lines = Vec::with_capacity(request.lines.len());
    for (index, line) in request.lines.iter().enumerate() {
        let found = products
            .iter()
            .map(Borrow::borrow)
            .filter(|p: &&Product| p.active)
            .find_map(|p| {
                p.variants
                    .iter()
                    .find(|v| v.id == line.variant_id)
                    .map(|v| (p, v))
            });
        let Some((product, variant)) = found else {
            fail(
                format!("lines.{index}.variant_id"),
                Problem::VariantNotAvailable,
            );
            continue;
        };
        let mut warranties = Vec::with_capacity(line.warranty_ids.len());
        let mut seen = HashSet::new();
        for id in &line.warranty_ids {
            if !seen.insert(*id) {
                fail(
                    format!("lines.{index}.warranty_ids"),
                    Problem::DuplicateWarranty,
                );
                continue;
            }
            match product.warranties.iter().find(|w| w.id == *id && w.active) {
                Some(w) => warranties.push(w.clone()),
                None => fail(
                    format!("lines.{index}.warranty_ids"),
                    Problem::WarrantyNotAvailable,
                ),
            }
        }
        let total = wanted.entry(variant.id).or_default();
        let left = (variant.available - *total).max(0);
        *total += line.quantity;
        if line.quantity > left {
            fail(
                format!("lines.{index}.quantity"),
                Problem::InsufficientStock { available: left },
            );
        }
        lines.push(ResolvedLine {
            request: line.clone(),
            title: product.title.clone(),
            supplier_id: product.supplier_id,
            variant: variant.clone(),
            warranties,
            priced_from: PricedFrom::of(product, variant),
        });
    }
    match (option, rate) {
        (Some(option), Some(rate)) if problems.is_empty() => Ok(Resolved {
            option,
            rate,
            lines,
        }),
        _ => Err(problems),
    }
}

impl Resolved {
    /// Prices the lines with the one pricing function.
    pub fn price(&self, commission_percent: Decimal) -> Priced {
        let terms: Vec<Vec<WarrantyTerms>> = self
            .lines
            .iter()
            .map(|l| l.warranties.iter().map(WarrantyTerms::from).collect())
            .collect();
        let inputs: Vec<LineInput> = self
            .lines
            .iter()
            .zip(&terms)
            .map(|(l, warranties)| LineInput {
                price: l.variant.price,
                profit: l.request.profit,
                quantity: l.request.quantity,
                warranties,
            })
            .collect();
        pricing::price(&inputs, (&self.rate).into(), commission_percent)
    }

    /// What the lines are priced from, one entry per variant (what
    /// [`NewOrder::priced_from`](crate::model::NewOrder::priced_from) carries).
    pub fn priced_from(&self) -> Vec<PricedFrom> {
        let mut entries: Vec<PricedFrom> = Vec::with_capacity(self.lines.len());
        for line in &self.lines {
            if !entries
                .iter()
                .any(|e| e.variant_id == line.priced_from.variant_id)
            {
                entries.push(line.priced_from);
            }
        }
        entries
    }

    /// The distinct products of the lines.
    pub fn product_ids(&self) -> Vec<ProductId> {
        let mut ids: Vec<ProductId> = self.lines.iter().map(|l| l.variant.product_id).collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// The order lines, priced.
    pub fn order_lines(&self, priced: &Priced) -> Vec<NewOrderLine> {
        self.lines
            .iter()
            .zip(&priced.lines)
            .map(|(line, price)| NewOrderLine {
                variant_id: line.variant.id,
                product_id: line.variant.product_id,
                title: line.title.clone(),
                variant_label: line.variant.label.clone(),
                quantity: line.request.quantity,
                sell_price: price.sale,
                profit: line.request.profit,
                commission_on: true,
                supplier_id: line.supplier_id,
                supply_price: line.variant.supply_price,
                warranties: line
                    .warranties
                    .iter()
                    .map(|w| {
                        let unit_price = pricing::warranty_unit_price(price.sale, w.into());
                        LineWarranty {
                            warranty_id: w.id,
                            name: w.name.clone(),
                            unit_price,
                            quantity: line.request.quantity,
                            total: unit_price * Decimal::from(line.request.quantity),
                            duration_days: w.duration_days,
                            terms: w.terms.clone(),
                        }
                    })
                    .collect(),
            })
            .collect()
    }
}
