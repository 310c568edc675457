//! The HTTP conformance suite (every endpoint, every error and the `race_*` cases) through the
//! bare engine on SQLite: a temporary database file per test, seeded with the sandbox.

mod sqlite_file;

commerce_core::http_conformance_tests!(sqlite_file::harness("http"));
