//! `GET /shipping/options` and `POST /shipping/quote`.

use bytes::Bytes;
use http::Response;

use super::Ctx;
use super::checkout;
use crate::error::ApiError;
use crate::render::wire::{QuoteView, ShippingOptionView};

pub(super) async fn options(ctx: &Ctx<'_>) -> Result<Response<Bytes>, ApiError> {
    let options = ctx
        .store()
        .shipping_options()
        .await
        .map_err(|e| ApiError::from_store(e, "shipping_options"))?;
    let views: Vec<ShippingOptionView> = options
        .iter()
        .filter(|o| o.active)
        .map(ShippingOptionView::from)
        .collect();
    super::ok_data(&views)
}

pub(super) async fn quote(ctx: &Ctx<'_>, body: &Bytes) -> Result<Response<Bytes>, ApiError> {
    let object = crate::web::input::json_object(body, false)?;
    let request = checkout::parse(&object, checkout::Purpose::Quote)?;
    let resolved = crate::domain::checkout::resolve(ctx.store(), &request).await?;
    let priced = resolved.price(ctx.config().commission_percent);
    let products = resolved.product_ids();
    super::catalog::bill_pulls(ctx, &products).await?;
    super::ok_data(&QuoteView {
        shipping_option_id: resolved.option.id,
        governorate_id: resolved.rate.governorate_id,
        figures: (&priced.totals).into(),
    })
}
