//! Reading the lines and the shipping choice of a quote or an order from JSON, and the
//! answers to checkout problems.

use rust_decimal::Decimal;
use serde_json::{Map, Value};

use crate::domain::checkout::{
    CheckoutError, CheckoutRequest, LineRequest, MAX_LINES, MAX_QUANTITY, MAX_WARRANTIES,
};
use crate::error::{ApiError, FieldErrors};
use crate::model::{FieldProblem, VariantId, WarrantyId};
use crate::render::messages;
use crate::web::input::Fields;

/// Who reads the lines: a quote may leave `profit` out (it is then 0), an order may not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Purpose {
    Quote,
    Order,
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
        shipping_option_id: crate::model::ShippingOptionId::new(shipping_option_id?),
        governorate_id: crate::model::GovernorateId::new(governorate_id?),
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
                variant_id: VariantId::new(variant_id),
                quantity,
                profit: profit.unwrap_or(Decimal::ZERO),
                warranty_ids: warranty_ids.into_iter().map(WarrantyId::new).collect(),
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

/// The 422 of checkout problems, each with its message under its field.
pub(crate) fn invalid(problems: Vec<FieldProblem>) -> ApiError {
    let mut errors = FieldErrors::new();
    for FieldProblem { field, problem } in problems {
        let message = messages::problem(problem);
        errors.entry(field).or_default().push(message);
    }
    ApiError::validation(errors)
}

impl From<CheckoutError> for ApiError {
    fn from(error: CheckoutError) -> Self {
        match error {
            CheckoutError::Invalid(problems) => invalid(problems),
            CheckoutError::Store(error) => ApiError::from_store(error, "checkout"),
        }
    }
}
