//! The supply side (docs/suppliers.md): `GET /supply/variants`, `POST /quotes`, `GET /quotes`,
//! `GET /quotes/{id}`, `POST /quotes/{id}/withdraw`, and test mode's
//! `POST /sandbox/quotes/{id}/decision`. Suppliers only (the dispatch table's sides).

use bytes::Bytes;
use http::{HeaderMap, Response};
use serde_json::{Map, Value};

use crate::api::Ctx;
use crate::api::idempotency;
use crate::error::{ApiError, ConflictReason, FieldErrors};
use crate::limits::{MAX_QUOTE_NOTE, MAX_QUOTE_QUANTITY, MAX_QUOTE_UNIT_PRICE};
use crate::model::*;
use crate::render::messages;
use crate::render::wire::{self, SupplierQuoteView, SupplyVariantView};
use crate::store::{InsertQuoteError, QuoteDecisionError};
use crate::web::input::{Fields, Query, json_object};

/// `GET /supply/variants`: the supplier's variants, by id; filter `updated_since`.
pub(in crate::api) async fn variants(
    ctx: &Ctx<'_>,
    raw_query: Option<&str>,
) -> Result<Response<Bytes>, ApiError> {
    let mut query = Query::parse(raw_query);
    let page = query.page();
    let updated_since = query.timestamp("updated_since");
    query.finish()?;
    let found = ctx
        .store()
        .supply_variants(ctx.caller.account.id, updated_since, page, ctx.now)
        .await
        .map_err(|e| ApiError::from_store(e, "supply_variants"))?;
    let views: Vec<SupplyVariantView<'_>> = found.items.iter().map(Into::into).collect();
    crate::api::ok_list(&views, page, found.total)
}

/// `GET /quotes`: the supplier's quotes, newest first; filters `status`, `variant_id`,
/// `updated_since`.
pub(in crate::api) async fn list(
    ctx: &Ctx<'_>,
    raw_query: Option<&str>,
) -> Result<Response<Bytes>, ApiError> {
    let mut query = Query::parse(raw_query);
    let page = query.page();
    let filter = QuoteFilter {
        status: query.one_of("status", QuoteStatus::parse),
        variant_id: query.integer("variant_id", 1, i64::MAX).map(VariantId::new),
        updated_since: query.timestamp("updated_since"),
    };
    query.finish()?;
    let found = ctx
        .store()
        .quotes(ctx.caller.account.id, &filter, page, ctx.now)
        .await
        .map_err(|e| ApiError::from_store(e, "quotes"))?;
    let views: Vec<SupplierQuoteView<'_>> =
        found.items.iter().map(SupplierQuoteView::new).collect();
    crate::api::ok_list(&views, page, found.total)
}

/// `GET /quotes/{id}`: one of the supplier's quotes (another account's is 404).
pub(in crate::api) async fn show(ctx: &Ctx<'_>, id: QuoteId) -> Result<Response<Bytes>, ApiError> {
    let quote = ctx
        .store()
        .quote(Some(ctx.caller.account.id), id, ctx.now)
        .await
        .map_err(|e| ApiError::from_store(e, "quote"))?
        .ok_or_else(ApiError::not_found)?;
    crate::api::ok_data(&SupplierQuoteView::new(&quote))
}

/// The body of `POST /quotes`, checked (docs/suppliers.md): `unit_price` money above zero
/// and at most [`MAX_QUOTE_UNIT_PRICE`], `quantity` 1 to [`MAX_QUOTE_QUANTITY`], `note` up
/// to [`MAX_QUOTE_NOTE`] characters. `valid_until` is checked against the clock when the
/// quote is made ([`NewQuote::check_validity`]), not here: a replay of the same request answers the
/// first response whatever the time now.
fn read_quote(object: &Map<String, Value>, account: AccountId) -> Result<NewQuote, ApiError> {
    let mut errors = FieldErrors::new();
    let mut f = Fields::new(object, String::new(), &mut errors);
    let variant = f.required_integer("variant_id", 1, i64::MAX);
    let unit_price = f.money("unit_price", true);
    if unit_price.is_some_and(|price| price <= rust_decimal::Decimal::ZERO) {
        f.fail("unit_price", messages::MUST_BE_POSITIVE);
    }
    if unit_price.is_some_and(|price| price > rust_decimal::Decimal::from(MAX_QUOTE_UNIT_PRICE)) {
        f.fail("unit_price", messages::QUOTE_PRICE_TOO_HIGH);
    }
    let quantity = f.required_integer("quantity", 1, MAX_QUOTE_QUANTITY);
    let valid_until = f.optional_timestamp("valid_until");
    let note = f.optional_text("note", MAX_QUOTE_NOTE);
    match (variant, unit_price, quantity) {
        (Some(variant), Some(price), Some(quantity)) if errors.is_empty() => {
            Ok(NewQuote::builder()
                .account_id(account)
                .variant_id(VariantId::new(variant))
                .unit_price(price)
                .quantity(quantity)
                .maybe_valid_until(valid_until)
                .maybe_note(note)
                .build())
        }
        _ => Err(ApiError::validation(errors)),
    }
}

/// `POST /quotes`: a pending quote, under the idempotency protocol of `POST /orders`
/// ([`idempotency::run`]).
pub(in crate::api) async fn create(
    ctx: &Ctx<'_>,
    mount: &str,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<Response<Bytes>, ApiError> {
    let parse = |object: &Map<String, Value>| read_quote(object, ctx.caller.account.id);
    let place = ("/api/v1/quotes", "quotes", mount);
    let (create, new) = idempotency::Create::read(place, headers, body, parse)?;
    // The quote is linked to its key's record in its insert: a retry after a first request
    // that died past its insert answers with that quote as it is now.
    let perform = |claim: Option<IdempotencyClaim>| insert(ctx, mount, new, claim);
    let recover = |id| async move {
        let quote = ctx
            .store()
            .quote(Some(ctx.caller.account.id), id, ctx.now)
            .await
            .map_err(|e| ApiError::from_store(e, "quote"))?
            .ok_or_else(ApiError::server)?;
        Ok(created_response(&quote, mount))
    };
    idempotency::run(ctx, create, perform, recover).await
}

/// 201 with the quote and its `Location`.
fn created_response(quote: &Quote, mount: &str) -> Response<Bytes> {
    let body = wire::data_body(&SupplierQuoteView::new(quote));
    idempotency::created(mount, "quotes", quote.id.get(), body)
}

async fn insert(
    ctx: &Ctx<'_>,
    mount: &str,
    new: NewQuote,
    claim: Option<IdempotencyClaim>,
) -> Result<Response<Bytes>, ApiError> {
    new.check_validity(ctx.now)
        .map_err(|problem| crate::api::checkout::invalid(vec![problem]))?;
    let quote = match ctx.store().insert_quote(new, claim.as_ref(), ctx.now).await {
        Ok(quote) => quote,
        Err(InsertQuoteError::NotSuppliers) => {
            return Err(ApiError::field(
                "variant_id",
                messages::NOT_SUPPLIERS_VARIANT,
            ));
        }
        Err(InsertQuoteError::Pending { existing }) => {
            return Err(
                ApiError::conflict(ConflictReason::QuotePending, messages::QUOTE_PENDING)
                    .with_extra("existing_quote_id", existing.get()),
            );
        }
        // A retry took the key over while this request stalled: it answers as the retry's
        // first request would have been answered while in flight.
        Err(InsertQuoteError::IdempotencyLost) => return Err(idempotency::in_flight()),
        Err(InsertQuoteError::Store(error)) => {
            return Err(ApiError::from_store(error, "insert_quote"));
        }
    };
    Ok(created_response(&quote, mount))
}

/// Decides one of the caller's quotes; a quote that is not pending is a 409 of `reason`.
async fn decide(
    ctx: &Ctx<'_>,
    id: QuoteId,
    decision: QuoteDecision,
    refused: (ConflictReason, &'static str),
) -> Result<Response<Bytes>, ApiError> {
    match ctx
        .store()
        .decide_quote(Some(ctx.caller.account.id), id, decision, ctx.now)
        .await
    {
        Ok(quote) => crate::api::ok_data(&SupplierQuoteView::new(&quote)),
        Err(QuoteDecisionError::NotFound) => Err(ApiError::not_found()),
        Err(QuoteDecisionError::NotPending { .. }) => Err(ApiError::conflict(refused.0, refused.1)),
        Err(QuoteDecisionError::AboveMaximum { .. }) => {
            Err(ApiError::field("decision", messages::STOCK_ABOVE_MAXIMUM))
        }
        Err(QuoteDecisionError::Store(error)) => Err(ApiError::from_store(error, "decide_quote")),
    }
}

/// `POST /quotes/{id}/withdraw`: a pending quote is withdrawn; otherwise 409
/// `not_withdrawable`.
pub(in crate::api) async fn withdraw(
    ctx: &Ctx<'_>,
    id: QuoteId,
) -> Result<Response<Bytes>, ApiError> {
    let refused = (ConflictReason::NotWithdrawable, messages::NOT_WITHDRAWABLE);
    decide(ctx, id, QuoteDecision::Withdraw, refused).await
}

/// `POST /sandbox/quotes/{id}/decision` (test mode): `{decision: accept|reject, note}` on one
/// of the caller's quotes, as the platform would decide it; a quote that is not pending is
/// 409 `move_not_allowed`.
pub(in crate::api) async fn sandbox_decision(
    ctx: &Ctx<'_>,
    id: QuoteId,
    body: &Bytes,
) -> Result<Response<Bytes>, ApiError> {
    let object = json_object(body, false)?;
    let mut errors = FieldErrors::new();
    let mut f = Fields::new(&object, String::new(), &mut errors);
    let accept = match f.raw("decision").map(|v| v.as_str()) {
        None => {
            f.fail("decision", messages::REQUIRED);
            None
        }
        Some(Some("accept")) => Some(true),
        Some(Some("reject")) => Some(false),
        Some(_) => {
            f.fail("decision", messages::UNKNOWN_VALUE);
            None
        }
    };
    let note = f.optional_text("note", MAX_QUOTE_NOTE);
    let (Some(accept), true) = (accept, errors.is_empty()) else {
        return Err(ApiError::validation(errors));
    };
    let decision = if accept {
        QuoteDecision::Accept { note }
    } else {
        QuoteDecision::Reject { note }
    };
    let refused = (ConflictReason::MoveNotAllowed, messages::QUOTE_NOT_PENDING);
    decide(ctx, id, decision, refused).await
}
