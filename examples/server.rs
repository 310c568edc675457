//! The sandbox server from a checkout: `cargo run --example server` (docs/sandbox.md). The
//! server itself is the binary `commerce-sandbox` (`src/bin/commerce-sandbox.rs`, feature
//! `sandbox-server`), installable with
//! `cargo install --path . --features sandbox-server --bin commerce-sandbox`; this example
//! runs the same code.

#[path = "../src/bin/commerce-sandbox.rs"]
mod sandbox_server;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    sandbox_server::main()
}
