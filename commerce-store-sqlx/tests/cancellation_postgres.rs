//! The cancellation suite (requests and store operations dropped at random points) through
//! the engine on PostgreSQL, each test in a fresh schema seeded with the sandbox. Afterwards no
//! session of the test's pool may sit `idle in transaction` (`pg_stat_activity`).
//!
//! Runs when `COMMERCE_TEST_POSTGRES_URL` (or `DATABASE_URL`) is set; ignored otherwise.

mod pg;

commerce_core::cancellation_tests!(
    #[cfg_attr(
        not(commerce_postgres_tests),
        ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
    )]
    pg::harness()
);
