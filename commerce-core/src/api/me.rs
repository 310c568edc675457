//! `GET /me`.

use bytes::Bytes;
use http::Response;

use super::Ctx;
use crate::error::ApiError;
use crate::web::wire::AccountView;

pub(super) fn show(ctx: &Ctx<'_>) -> Result<Response<Bytes>, ApiError> {
    super::ok_data(&AccountView::new(&ctx.caller.account, &ctx.caller.key))
}
