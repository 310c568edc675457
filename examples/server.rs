//! The sandbox server: the whole API on 127.0.0.1:8080 over an in-memory store seeded with the
//! demo platform (decisions 13).
//!
//! ```text
//! cargo run --example server                      # 127.0.0.1:8080
//! cargo run --example server -- --addr 0.0.0.0:9000
//! COMMERCE_ADDR=127.0.0.1:9000 cargo run --example server
//! ```

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::Response;
use commerce::store::MemoryStore;
use commerce::{Engine, sandbox};

const DEFAULT_ADDR: &str = "127.0.0.1:8080";

fn listen_address() -> Result<SocketAddr, String> {
    let mut args = std::env::args().skip(1);
    let mut addr = std::env::var("COMMERCE_ADDR").ok();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--addr" => addr = Some(args.next().ok_or("--addr needs HOST:PORT")?),
            other if other.starts_with("--addr=") => {
                addr = Some(other["--addr=".len()..].to_owned())
            }
            "-h" | "--help" => {
                println!(
                    "usage: server [--addr HOST:PORT]   (or COMMERCE_ADDR; default {DEFAULT_ADDR})"
                );
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    let text = addr.unwrap_or_else(|| DEFAULT_ADDR.to_owned());
    text.parse().map_err(|e| format!("bad address {text}: {e}"))
}

/// Logs method, path, status and time of each request; never headers, so never a key.
async fn log_request(request: Request, next: Next) -> Response {
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let started = Instant::now();
    let response = next.run(request).await;
    tracing::info!(%method, %path, status = response.status().as_u16(), elapsed_ms = started.elapsed().as_secs_f64() * 1000.0, "request");
    response
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();
    let addr = listen_address()?;

    let engine = Engine::new(Arc::new(MemoryStore::new()));
    let fixture = sandbox::seed(&engine).await?;

    let app = commerce::axum::router(engine).layer(middleware::from_fn(log_request));
    let listener = tokio::net::TcpListener::bind(addr).await?;

    println!("Sandbox API on http://{addr}/api/v1 (in-memory store; data is lost on exit)\n");
    println!("Demo keys:");
    for (key, what) in sandbox::DEMO_KEYS {
        println!("  {key:<22} {what}");
    }
    println!(
        "\nFeatured product {} (variants {:?}, warranties {:?}); standard shipping {}, Cairo {}.",
        fixture.featured_product,
        fixture.featured_variants,
        fixture.featured_warranties,
        fixture.standard_shipping,
        fixture.cairo
    );
    println!(
        "\nTry:\n  curl -s http://{addr}/api/v1/me -H 'Authorization: Bearer sk_demo_marketer'\n"
    );

    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
            tracing::info!("shutting down");
        })
        .await?;
    Ok(())
}
