//! A plain hyper 1 server over the engine's own tower `Service` (no web framework): the
//! body is collected under the engine's limit with http-body-util, then the request goes to
//! `Engine` as `http::Request<Bytes>`.
//!
//! ```text
//! cargo run --example hyper_service                   # 127.0.0.1:3003
//! curl -s localhost:3003/api/v1/me -H 'Authorization: Bearer sk_demo_marketer'
//! ```

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use commerce::store::MemoryStore;
use commerce::{ApiError, Engine, ErrorCode, sandbox};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tower::{Service, ServiceExt};

/// One request: collect the body under the limit, then call the engine as a tower service.
async fn serve(
    engine: Engine,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let limit = engine.config().body_limit;
    let (parts, body) = request.into_parts();
    let response = match Limited::new(body, limit).collect().await {
        Ok(collected) => {
            let request = Request::from_parts(parts, collected.to_bytes());
            let mut service = engine;
            service.ready().await?.call(request).await?
        }
        Err(_) => ApiError::new(ErrorCode::PayloadTooLarge).into_response(),
    };
    Ok(response.map(Full::new))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr: SocketAddr = std::env::var("EMBED_ADDR")
        .unwrap_or_else(|_| "127.0.0.1:3003".into())
        .parse()?;

    let engine = Engine::new(Arc::new(MemoryStore::new()));
    sandbox::seed(&engine).await?;

    let listener = tokio::net::TcpListener::bind(addr).await?;
    println!("hyper_service on http://{addr}/api/v1 (key sk_demo_marketer)");
    loop {
        let (stream, _) = listener.accept().await?;
        let engine = engine.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| serve(engine.clone(), request));
            if let Err(error) = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await
            {
                eprintln!("connection error: {error}");
            }
        });
    }
}
