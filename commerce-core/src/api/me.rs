//! `GET /me`.

use bytes::Bytes;
use http::{Response, StatusCode};

use super::Ctx;
use crate::error::ApiError;
use crate::render::wire;

/// The account as seen through the request's key, its body kept with the records it was
/// rendered from ([`RenderedMe`](crate::cache::rendered_me::RenderedMe)).
pub(super) fn show(ctx: &Ctx<'_>) -> Result<Response<Bytes>, ApiError> {
    let body = ctx
        .shared
        .rendered_me
        .body(&ctx.caller.account, &ctx.caller.key);
    Ok(wire::json_response(StatusCode::OK, body))
}
