//! Reading a request body for the second phase of the pipeline: under the body limit, within
//! the body timeout, with each way of failing mapped to its API error.

use std::error::Error;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, LengthLimitError, Limited};

use crate::config::Config;
use crate::error::{ApiError, ErrorCode};
use crate::web::routes::Endpoint;

/// The body limit of `endpoint`: [`Config::order_body_limit`] for `POST /orders`,
/// [`Config::body_limit`] for every other.
pub(crate) fn limit(config: &Config, endpoint: Endpoint) -> usize {
    match endpoint {
        Endpoint::CreateOrder => config.order_body_limit,
        _ => config.body_limit,
    }
}

/// The whole of `body`: at most `limit` bytes (413 beyond), within `timeout` (408 after it);
/// a body the connection could not deliver (a broken chunked encoding, a cut connection) is a
/// 400 `bad_request`.
pub(crate) async fn read<B>(
    body: B,
    limit: usize,
    timeout: Option<Duration>,
) -> Result<Bytes, ApiError>
where
    B: http_body::Body + Send,
    B::Data: Send,
    B::Error: Into<Box<dyn Error + Send + Sync>>,
{
    let collect = Limited::new(body, limit).collect();
    // A timer needs a runtime; outside one the body is read as long as it lasts.
    let timeout = timeout.filter(|_| tokio::runtime::Handle::try_current().is_ok());
    let collected = match timeout {
        Some(timeout) => tokio::time::timeout(timeout, collect)
            .await
            .map_err(|_| ApiError::new(ErrorCode::RequestTimeout))?,
        None => collect.await,
    };
    match collected {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(error) if error.is::<LengthLimitError>() => Err(ApiError::payload_too_large(limit)),
        Err(_) => Err(ApiError::new(ErrorCode::BadRequest)),
    }
}
