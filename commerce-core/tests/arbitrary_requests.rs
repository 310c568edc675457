//! Arbitrary requests through the engine (a slice of what the fuzz target in `fuzz/` runs):
//! methods, paths from a vocabulary of the API's segments and odd ones, query strings, the
//! demo keys and broken `Authorization` headers, other headers, and bodies spliced from JSON
//! fragments. Every answer holds `commerce_core::testing::arbitrary::check_answer`: no 5xx,
//! every error the JSON error shape.

use std::sync::{Arc, OnceLock};

use chrono::Duration;
use commerce_core::Engine;
use commerce_core::clock::ManualClock;
use commerce_core::testing::arbitrary::{
    AUTHORIZATIONS, HEADER_NAMES, HEADER_VALUES, METHODS, RequestSpec, check_answer, sandbox_engine,
};
use proptest::prelude::*;
use proptest::sample::select;

/// One runtime and one seeded engine for every case (state carries over, as on a server).
fn engine() -> &'static (tokio::runtime::Runtime, Engine, Arc<ManualClock>) {
    static ENGINE: OnceLock<(tokio::runtime::Runtime, Engine, Arc<ManualClock>)> = OnceLock::new();
    ENGINE.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime");
        let (engine, clock) = runtime.block_on(sandbox_engine());
        (runtime, engine, clock)
    })
}

/// A body: none, a JSON-ish object, a valid order with one field broken, or raw bytes.
fn body() -> impl Strategy<Value = Vec<u8>> {
    let pairs = prop::collection::vec((0..64usize, 0..64usize), 0..7);
    prop_oneof![
        Just(Vec::new()),
        pairs.prop_map(|p| RequestSpec::object_from(&p).into_bytes()),
        (0..64usize, 0..64usize).prop_map(|(f, v)| RequestSpec::order_with(f, v).into_bytes()),
        prop::collection::vec(any::<u8>(), 0..48),
    ]
}

fn request() -> impl Strategy<Value = RequestSpec> {
    // An endpoint with its own method mostly; else another method, or a path of odd segments.
    let line = prop_oneof![
        6 => (0..64usize, 0..64usize).prop_map(|(route, id)| RequestSpec::route(route, id)),
        1 => (select(METHODS), 0..64usize, 0..64usize)
            .prop_map(|(method, route, id)| (method, RequestSpec::route(route, id).1)),
        1 => (select(METHODS), any::<bool>(), prop::collection::vec(0..64usize, 0..4))
            .prop_map(|(method, under_api, segments)| {
                (method, RequestSpec::path_from(under_api, &segments))
            }),
    ];
    let query = prop::collection::vec((0..64usize, 0..64usize), 0..3)
        .prop_map(|pairs| RequestSpec::query_from(&pairs));
    let authorizations = prop_oneof![
        6 => Just(vec![AUTHORIZATIONS[0]]),
        3 => select(AUTHORIZATIONS).prop_map(|a| vec![a]),
        1 => prop::collection::vec(select(AUTHORIZATIONS), 0..3),
    ];
    let headers = prop::collection::vec((select(HEADER_NAMES), select(HEADER_VALUES)), 0..3);
    (line, query, authorizations, headers, body()).prop_map(
        |((method, path), query, authorizations, headers, body)| {
            let target = match query {
                Some(query) => format!("{path}?{query}"),
                None => path,
            };
            let headers = authorizations
                .into_iter()
                .map(|a| ("authorization".to_owned(), a.as_bytes().to_vec()))
                .chain(headers.into_iter().map(|(n, v)| (n.to_owned(), v.to_vec())))
                .collect();
            RequestSpec::new(method.to_owned(), target, headers, body)
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn every_answer_is_a_4xx_json_error_or_a_json_success(
        spec in request(),
        through_serve in any::<bool>(),
    ) {
        let Some(request) = spec.build() else {
            // `http` refuses it: no server would hand it to the engine.
            return Ok(());
        };
        let (runtime, engine, clock) = engine();
        // A new rate window for every case.
        clock.advance(Duration::seconds(61));
        let response = runtime.block_on(async {
            if through_serve {
                engine.serve(request.map(http_body_util::Full::new)).await
            } else {
                engine.handle(request).await
            }
        });
        let verdict = check_answer(&response);
        prop_assert!(verdict.is_ok(), "{:?} for {:?}", verdict, spec);
    }
}
