//! `Engine::handle` on arbitrary requests over the sandbox: method, path, query, headers and
//! body come from the fuzzer, partly through the vocabularies of
//! `commerce_core::testing::arbitrary` (so that requests reach past routing and the key) and
//! partly as raw bytes. Every answer must hold `check_answer`: no panic, no 5xx, every error
//! the JSON error shape.

#![no_main]

use std::sync::{Arc, OnceLock};

use arbitrary::Arbitrary;
use commerce_core::Engine;
use commerce_core::clock::ManualClock;
use commerce_core::testing::arbitrary::{
    AUTHORIZATIONS, HEADER_NAMES, HEADER_VALUES, METHODS, RequestSpec, check_answer, sandbox_engine,
};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
enum Line {
    /// An endpoint with its own method.
    Route { route: u8, id: u8 },
    /// An endpoint's path with any method of the vocabulary.
    Method { method: u8, route: u8, id: u8 },
    /// Segments of the vocabulary, under `/api/v1` or not.
    Segments {
        method: u8,
        under_api: bool,
        segments: Vec<u8>,
    },
    /// Anything.
    Raw { method: String, target: String },
}

#[derive(Arbitrary, Debug)]
enum Query {
    None,
    Pairs(Vec<(u8, u8)>),
    Raw(String),
}

#[derive(Arbitrary, Debug)]
enum Header {
    Authorization(u8),
    Known { name: u8, value: u8 },
    Raw { name: String, value: Vec<u8> },
}

#[derive(Arbitrary, Debug)]
enum Body {
    Empty,
    Object(Vec<(u8, u8)>),
    BrokenOrder { field: u8, value: u8 },
    Raw(Vec<u8>),
}

#[derive(Arbitrary, Debug)]
struct Input {
    line: Line,
    query: Query,
    /// Most requests carry marketer A's key: the others are in `headers`.
    keyed: bool,
    headers: Vec<Header>,
    body: Body,
}

fn pick<T: Copy>(list: &[T], i: u8) -> T {
    list[usize::from(i) % list.len()]
}

impl Input {
    fn spec(self) -> RequestSpec {
        let (method, path) = match self.line {
            Line::Route { route, id } => {
                let (method, path) = RequestSpec::route(route.into(), id.into());
                (method.to_owned(), path)
            }
            Line::Method { method, route, id } => (
                pick(METHODS, method).to_owned(),
                RequestSpec::route(route.into(), id.into()).1,
            ),
            Line::Segments {
                method,
                under_api,
                segments,
            } => {
                let segments: Vec<usize> = segments.iter().map(|&s| s.into()).collect();
                (
                    pick(METHODS, method).to_owned(),
                    RequestSpec::path_from(under_api, &segments),
                )
            }
            Line::Raw { method, target } => (method, target),
        };
        let target = match self.query {
            Query::None => path,
            Query::Pairs(pairs) => {
                let pairs: Vec<(usize, usize)> =
                    pairs.iter().map(|&(n, v)| (n.into(), v.into())).collect();
                match RequestSpec::query_from(&pairs) {
                    Some(query) => format!("{path}?{query}"),
                    None => path,
                }
            }
            Query::Raw(query) => format!("{path}?{query}"),
        };
        let mut headers = Vec::new();
        if self.keyed {
            headers.push((
                "authorization".to_owned(),
                AUTHORIZATIONS[0].as_bytes().to_vec(),
            ));
        }
        for header in self.headers {
            headers.push(match header {
                Header::Authorization(i) => (
                    "authorization".to_owned(),
                    pick(AUTHORIZATIONS, i).as_bytes().to_vec(),
                ),
                Header::Known { name, value } => (
                    pick(HEADER_NAMES, name).to_owned(),
                    pick(HEADER_VALUES, value).to_vec(),
                ),
                Header::Raw { name, value } => (name, value),
            });
        }
        let body = match self.body {
            Body::Empty => Vec::new(),
            Body::Object(pairs) => {
                let pairs: Vec<(usize, usize)> =
                    pairs.iter().map(|&(f, v)| (f.into(), v.into())).collect();
                RequestSpec::object_from(&pairs).into_bytes()
            }
            Body::BrokenOrder { field, value } => {
                RequestSpec::order_with(field.into(), value.into()).into_bytes()
            }
            Body::Raw(bytes) => bytes,
        };
        RequestSpec::new(method, target, headers, body)
    }
}

/// One runtime and one seeded engine for the whole run (state carries over, as on a server).
fn engine() -> &'static (tokio::runtime::Runtime, Engine, Arc<ManualClock>) {
    static ENGINE: OnceLock<(tokio::runtime::Runtime, Engine, Arc<ManualClock>)> = OnceLock::new();
    ENGINE.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let (engine, clock) = runtime.block_on(sandbox_engine());
        (runtime, engine, clock)
    })
}

fuzz_target!(|input: Input| {
    let spec = input.spec();
    let Some(request) = spec.build() else {
        return;
    };
    let (runtime, engine, clock) = engine();
    // A new rate window for every request, so that the keys are never all rate limited.
    clock.advance(chrono::Duration::seconds(61));
    let response = runtime.block_on(engine.handle(request));
    if let Err(problem) = check_answer(&response) {
        panic!("{problem} for {spec:?}");
    }
});
