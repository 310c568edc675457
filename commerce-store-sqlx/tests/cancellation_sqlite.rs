//! The cancellation suite (requests and store operations dropped at random points) through
//! the engine on SQLite: a temporary database file per test, seeded with the sandbox.

mod sqlite_file;

commerce_core::cancellation_tests!(sqlite_file::harness("cancellation"));
