//! `sqlx::migrate!` embeds the migration files at compile time: rebuild when they change.
//!
//! The PostgreSQL tests need a server: `cfg(commerce_postgres_tests)` is set when
//! `COMMERCE_TEST_POSTGRES_URL` names one (only that name: a `DATABASE_URL` set for another
//! project is not taken for ours), and without it they are marked
//! ignored, so cargo reports them as skipped rather than passed.
fn main() {
    println!("cargo::rerun-if-changed=migrations");
    println!("cargo::rustc-check-cfg=cfg(commerce_postgres_tests)");
    println!("cargo::rerun-if-env-changed=COMMERCE_TEST_POSTGRES_URL");
    let configured =
        std::env::var("COMMERCE_TEST_POSTGRES_URL").is_ok_and(|url| !url.trim().is_empty());
    if configured {
        println!("cargo::rustc-cfg=commerce_postgres_tests");
    }
}
