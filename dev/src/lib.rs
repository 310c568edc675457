//! The workspace's development package (never published): the benches, and the tests whose
//! dependencies are heavy (criterion, the WebDriver client, the JSON Schema validator, the
//! conformance suites of `commerce-core`'s `testing` feature). Kept out of the `commerce`
//! package so that `cargo run --example server` on a fresh clone builds none of them. This
//! library is empty: the package is its `benches/` and `tests/`.
