//! The HTTP conformance suite (every endpoint, every error and the `race_*` cases) through the
//! bare engine on PostgreSQL, each test in a fresh schema seeded with the sandbox (dropped
//! afterwards). Afterwards no session of the test's pool may sit `idle in transaction`.
//!
//! Runs when `COMMERCE_TEST_POSTGRES_URL` (or `DATABASE_URL`) is set; without it every test
//! is reported as ignored (see `build.rs`).

mod pg;

commerce_core::http_conformance_tests!(
    #[cfg_attr(
        not(commerce_postgres_tests),
        ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
    )]
    pg::harness()
);
