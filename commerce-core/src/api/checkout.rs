//! What the quote and order creation share: reading the lines and the shipping choice,
//! checking them against the catalogue exactly as checkout does, and pricing them.

use std::collections::{HashMap, HashSet};

use rust_decimal::Decimal;
use serde_json::{Map, Value};

use crate::error::{ApiError, FieldErrors};
use crate::input::Fields;
use crate::messages;
use crate::model::{LineWarranty, NewOrderLine, ShippingOption, ShippingRate, Variant, Warranty};
use crate::pricing::{self, LineInput, Priced, WarrantyTerms};
use crate::store::Store;

/// Most lines in one order or quote.
pub const MAX_LINES: usize = 100;
/// Largest quantity of one line.
pub const MAX_QUANTITY: i64 = 999;
/// Most warranties on one line.
pub const MAX_WARRANTIES: usize = 10;

/// Who reads the lines: a quote may leave `profit` out (it is then 0), an order may not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Purpose {
    Quote,
    Order,
}

#[derive(Debug, Clone)]
pub(crate) struct LineRequest {
    pub variant_id: i64,
    pub quantity: i64,
    pub profit: Decimal,
    pub warranty_ids: Vec<i64>,
}

#[derive(Debug, Clone)]
pub(crate) struct CheckoutRequest {
    pub shipping_option_id: i64,
    pub governorate_id: i64,
    pub lines: Vec<LineRequest>,
}

/// Reads `shipping_option_id`, `governorate_id` and `lines`, adding messages to `errors`.
pub(crate) fn read(
    object: &Map<String, Value>,
    purpose: Purpose,
    errors: &mut FieldErrors,
) -> Option<CheckoutRequest> {
    let mut fields = Fields::new(object, String::new(), errors);
    let shipping_option_id = fields.required_integer("shipping_option_id", 1, i64::MAX);
    let governorate_id = fields.required_integer("governorate_id", 1, i64::MAX);
    let lines = match object.get("lines").filter(|v| !v.is_null()) {
        None => {
            fields.fail("lines", messages::REQUIRED);
            None
        }
        Some(Value::Array(items)) if (1..=MAX_LINES).contains(&items.len()) => Some(items),
        Some(Value::Array(_)) => {
            fields.fail("lines", messages::LINES_COUNT);
            None
        }
        Some(_) => {
            fields.fail("lines", messages::MUST_BE_ARRAY);
            None
        }
    };
    let lines = lines.and_then(|items| read_lines(items, purpose, errors));
    Some(CheckoutRequest {
        shipping_option_id: shipping_option_id?,
        governorate_id: governorate_id?,
        lines: lines?,
    })
}

fn read_lines(
    items: &[Value],
    purpose: Purpose,
    errors: &mut FieldErrors,
) -> Option<Vec<LineRequest>> {
    let mut lines = Vec::with_capacity(items.len());
    let mut complete = true;
    for (index, item) in items.iter().enumerate() {
        let Some(object) = item.as_object() else {
            errors
                .entry(format!("lines.{index}"))
                .or_default()
                .push(messages::MUST_BE_OBJECT.into());
            complete = false;
            continue;
        };
        let mut fields = Fields::new(object, format!("lines.{index}."), errors);
        let variant_id = fields.required_integer("variant_id", 1, i64::MAX);
        let quantity = fields.required_integer("quantity", 1, MAX_QUANTITY);
        let profit = fields.money("profit", purpose == Purpose::Order);
        let profit_ok =
            profit.is_some() || (purpose == Purpose::Quote && fields.raw("profit").is_none());
        let warranty_ids = fields.integer_list(
            "warranty_ids",
            MAX_WARRANTIES,
            messages::TOO_MANY_WARRANTIES,
        );
        let warranties_ok = !fields.has_error("warranty_ids");
        match (variant_id, quantity, profit_ok && warranties_ok) {
            (Some(variant_id), Some(quantity), true) => lines.push(LineRequest {
                variant_id,
                quantity,
                profit: profit.unwrap_or(Decimal::ZERO),
                warranty_ids,
            }),
            _ => complete = false,
        }
    }
    complete.then_some(lines)
}

/// Reads and validates, failing with a 422 on any message.
pub(crate) fn parse(
    object: &Map<String, Value>,
    purpose: Purpose,
) -> Result<CheckoutRequest, ApiError> {
    let mut errors = FieldErrors::new();
    let request = read(object, purpose, &mut errors);
    match request {
        Some(request) if errors.is_empty() => Ok(request),
        _ => Err(ApiError::validation(errors)),
    }
}

/// A line checked against the catalogue.
#[derive(Debug, Clone)]
pub(crate) struct ResolvedLine {
    pub request: LineRequest,
    pub title: String,
    pub variant: Variant,
    pub warranties: Vec<Warranty>,
}

/// A checkout request checked against the catalogue and the shipping table.
#[derive(Debug, Clone)]
pub(crate) struct Resolved {
    pub option: ShippingOption,
    pub rate: ShippingRate,
    pub lines: Vec<ResolvedLine>,
}

/// Checks the shipping choice, every variant (sold now), every warranty (the product's and
/// offered now) and the stock (lines of one variant add up). Any failure is a 422 naming the field.
pub(crate) async fn resolve(
    store: &dyn Store,
    request: &CheckoutRequest,
) -> Result<Resolved, ApiError> {
    let mut errors = FieldErrors::new();
    let mut fail = |key: String, message: String| errors.entry(key).or_default().push(message);

    let options = store.shipping_options().await?;
    let option = options
        .into_iter()
        .find(|o| o.id == request.shipping_option_id && o.active);
    let rate = match &option {
        None => {
            fail(
                "shipping_option_id".into(),
                messages::SHIPPING_OPTION_NOT_FOUND.into(),
            );
            None
        }
        Some(option) => {
            let rate = option.rate(request.governorate_id).cloned();
            if rate.is_none() {
                fail(
                    "governorate_id".into(),
                    messages::GOVERNORATE_NOT_SERVED.into(),
                );
            }
            rate
        }
    };

    let variant_ids: Vec<i64> = request.lines.iter().map(|l| l.variant_id).collect();
    let products = store.products_of_variants(&variant_ids).await?;
    let mut wanted: HashMap<i64, i64> = HashMap::new();
    let mut lines = Vec::with_capacity(request.lines.len());
    for (index, line) in request.lines.iter().enumerate() {
        let found = products.iter().filter(|p| p.active).find_map(|p| {
            p.variants
                .iter()
                .find(|v| v.id == line.variant_id)
                .map(|v| (p, v))
        });
        let Some((product, variant)) = found else {
            fail(
                format!("lines.{index}.variant_id"),
                messages::VARIANT_NOT_AVAILABLE.into(),
            );
            continue;
        };
        let mut warranties = Vec::with_capacity(line.warranty_ids.len());
        let mut seen = HashSet::new();
        for id in &line.warranty_ids {
            if !seen.insert(*id) {
                fail(
                    format!("lines.{index}.warranty_ids"),
                    messages::DUPLICATE_WARRANTY.into(),
                );
                continue;
            }
            match product.warranties.iter().find(|w| w.id == *id && w.active) {
                Some(w) => warranties.push(w.clone()),
                None => fail(
                    format!("lines.{index}.warranty_ids"),
                    messages::WARRANTY_NOT_AVAILABLE.into(),
                ),
            }
        }
        let total = wanted.entry(variant.id).or_default();
        let left = (variant.available - *total).max(0);
        *total += line.quantity;
        if line.quantity > left {
            fail(
                format!("lines.{index}.quantity"),
                messages::insufficient_stock(left),
            );
        }
        lines.push(ResolvedLine {
            request: line.clone(),
            title: product.title.clone(),
            variant: variant.clone(),
            warranties,
        });
    }
    match (option, rate) {
        (Some(option), Some(rate)) if errors.is_empty() => Ok(Resolved {
            option,
            rate,
            lines,
        }),
        _ => Err(ApiError::validation(errors)),
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

    /// The distinct products of the lines.
    pub fn product_ids(&self) -> Vec<i64> {
        let mut ids: Vec<i64> = self.lines.iter().map(|l| l.variant.product_id).collect();
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
