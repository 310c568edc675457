//! `Engine::handle` on a sandbox-seeded `MemoryStore` (key `sk_demo_bench`, 1,000,000 requests
//! a minute) for `GET /api/v1/me`, `GET /api/v1/products?per_page=25`, `POST /api/v1/shipping/quote` and
//! `POST /api/v1/orders`, each against a baseline that only does the JSON work with serde_json:
//! parse the request body (when there is one) and serialise the same response from a pre-built
//! `serde_json::Value`. Both sides build the same `http::Request` per iteration.
//!
//! ```text
//! cargo bench -p commerce-dev --bench engine -- --warm-up-time 1 --measurement-time 3
//! ```
//!
//! Goal (BENCHMARKS.md): `handle` for GET /products ≤ 3× its serde-only baseline; GET /me and
//! the two POSTs are reported only. After criterion's output the bench prints one `ratio` line per request.
//!
//! For a profile, `ENGINE_LOOP=get_products_25:1000` skips criterion and sends that case's
//! request that many times (under `valgrind --tool=callgrind` or `perf record`).

mod common;

use std::hint::black_box;
use std::sync::Arc;

use bytes::Bytes;
use commerce_core::store::MemoryStore;
use commerce_core::{Engine, sandbox};
use common::report::{Goal, run_criterion};
use criterion::{Criterion, criterion_group};
use http::{Method, Request};
use serde_json::{Value, json};

/// One request of the bench.
struct Case {
    name: &'static str,
    method: Method,
    uri: &'static str,
    body: Bytes,
    status: u16,
}

impl Case {
    fn request(&self) -> Request<Bytes> {
        let mut builder = Request::builder()
            .method(self.method.clone())
            .uri(self.uri)
            .header("authorization", "Bearer sk_demo_bench")
            .header("accept", "application/json");
        if !self.body.is_empty() {
            builder = builder.header("content-type", "application/json");
        }
        builder.body(self.body.clone()).expect("valid request")
    }
}

fn bench_engine(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let engine = Engine::new(Arc::new(MemoryStore::new()));
    let fixture = rt.block_on(sandbox::seed(&engine)).expect("sandbox seeds");
    // Orders must never run out of stock however many iterations criterion picks.
    rt.block_on(common::endless_stock(&engine, fixture.plain_variant));

    let quote = json!({
        "shipping_option_id": fixture.standard_shipping,
        "governorate_id": fixture.cairo,
        "lines": [{"variant_id": fixture.featured_variants[0], "quantity": 2, "profit": "50.01",
                   "warranty_ids": [fixture.featured_warranties[0]]}],
    });
    let cases = [
        Case {
            name: "get_me",
            method: Method::GET,
            uri: "/api/v1/me",
            body: Bytes::new(),
            status: 200,
        },
        Case {
            name: "get_products_25",
            method: Method::GET,
            uri: "/api/v1/products?per_page=25",
            body: Bytes::new(),
            status: 200,
        },
        Case {
            name: "post_shipping_quote",
            method: Method::POST,
            uri: "/api/v1/shipping/quote",
            body: Bytes::from(serde_json::to_vec(&quote).expect("json")),
            status: 200,
        },
        Case {
            name: "post_orders",
            method: Method::POST,
            uri: "/api/v1/orders",
            body: Bytes::from(common::order_body(&fixture)),
            status: 201,
        },
    ];

    if let Ok(spec) = std::env::var("ENGINE_LOOP") {
        let (name, times) = spec.split_once(':').expect("ENGINE_LOOP=<case>:<times>");
        let case = cases.iter().find(|c| c.name == name).expect("a case name");
        let times: usize = times.parse().expect("a count");
        rt.block_on(async {
            for _ in 0..times {
                black_box(engine.handle(case.request()).await);
            }
        });
        return;
    }

    let mut group = c.benchmark_group("engine");
    for case in &cases {
        // The engine answers as expected, and its answer is the baseline's pre-built value.
        let response = rt.block_on(engine.handle(case.request()));
        assert_eq!(
            response.status().as_u16(),
            case.status,
            "{}: {}",
            case.name,
            String::from_utf8_lossy(response.body())
        );
        let response_value: Value = serde_json::from_slice(response.body()).expect("json body");

        group.bench_function(format!("{}/handle", case.name), |b| {
            b.to_async(&rt).iter(|| async {
                let response = engine.handle(case.request()).await;
                debug_assert_eq!(response.status().as_u16(), case.status);
                black_box(response)
            })
        });
        group.bench_function(format!("{}/serde_baseline", case.name), |b| {
            b.iter(|| {
                let request = case.request();
                if !request.body().is_empty() {
                    let parsed: Value = serde_json::from_slice(request.body()).expect("json");
                    black_box(parsed);
                }
                black_box(serde_json::to_vec(black_box(&response_value)).expect("serialises"))
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench_engine
}

fn main() {
    if std::env::var("ENGINE_LOOP").is_ok() {
        return bench_engine(&mut Criterion::default());
    }
    let estimates = run_criterion(&[benches]);
    for (name, label, goal) in [
        ("get_me", "GET /me", Goal::None),
        (
            "get_products_25",
            "GET /products?per_page=25",
            Goal::AtMost(3.0),
        ),
        ("post_shipping_quote", "POST /shipping/quote", Goal::None),
        ("post_orders", "POST /orders", Goal::None),
    ] {
        estimates.ratio(
            &format!("engine/serde-only {label}"),
            "engine",
            &format!("{name}/handle"),
            &format!("{name}/serde_baseline"),
            goal,
        );
    }
}
