//! The HTTP conformance suite: every endpoint and error case, written once, run through any
//! integration (the bare engine, the axum router, the warp filter) over any store.
//!
//! In the style of juniper's `HttpIntegration`: an integration is anything that turns an
//! `http::Request<Bytes>` into an `http::Response<Bytes>`. [`Harness`] seeds the sandbox on a
//! store with a [`ManualClock`](crate::clock::ManualClock), mounts the engine with the
//! integration, and each case drives it with real requests.
//! [`http_conformance_tests!`](crate::http_conformance_tests) expands to one `#[tokio::test]`
//! per case:
//!
//! ```ignore
//! use std::sync::Arc;
//! use commerce_core::store::MemoryStore;
//! use commerce_core::testing::http::Harness;
//!
//! commerce_core::http_conformance_tests!(Harness::bare(Arc::new(MemoryStore::new())));
//! ```
//!
//! The factory may also produce an `Option<Harness>` (see [`IntoHarness`]): `None` skips the
//! test, for a database that is not configured; such a test still counts as passed, so a
//! suite that needs a database is better given a leading
//! `#[cfg_attr(not(...), ignore = "...")]`, which the macro puts on every test, so that cargo
//! reports it as ignored. A harness built with
//! [`Harness::with_cleanup`] runs its clean-up (e.g. dropping a PostgreSQL schema) once the
//! case is over, whether it passed or panicked.
//!
//! # The cases
//!
//! [`HTTP_CASES`] names every case. The cases live in one file per concern (authentication and
//! pipeline, catalogue, input rules, shipping, orders, wallet and meter, races) and are all
//! re-exported here. They are listed once, in
//! [`for_each_http_case!`](crate::for_each_http_case): the macro, the re-exports and
//! [`HTTP_CASES`] all expand from that list, and a unit test fails if a `pub async fn` taking a
//! harness in this module's files is missing from it. A new case is a `pub async fn` in the
//! file of its concern plus one line in that list.

pub mod adapters;
mod bounded;
mod catalog;
mod catalog_changes;
mod catalog_removals;
mod catalogue_edits;
mod fixtures;
mod harness;
mod input;
mod operator;
mod orders;
mod owner;
mod owner_checks;
mod owner_pages;
pub mod pages_client;
mod pipeline;
mod races;
pub mod receiver;
mod rendered;
mod request_ids;
mod sandbox;
mod shipping;
mod statement;
mod supplier_webhooks;
pub(crate) mod supply;
mod wallet;
mod webhook_limits;
mod webhook_urls;
mod webhooks;

pub use harness::{
    Harness, HttpIntegration, IntoHarness, TestResponse, build_request, run_case, start_instant,
};

/// Calls `$callback! { $($args)* [ (module::case), ... ] }` with every HTTP conformance case:
/// the one list of them.
///
/// `module` is the file under `testing/http/` that holds the case.
/// [`http_conformance_tests!`](crate::http_conformance_tests), the re-exports of
/// [`http`](crate::testing::http) and [`HTTP_CASES`] all expand from it.
#[doc(hidden)]
#[macro_export]
macro_rules! for_each_http_case {
    ([$($callback:tt)*] $($args:tt)*) => {
        $($callback)*! { $($args)* [
            (pipeline::me_returns_account_token_and_rate_headers),
            (pipeline::supplier_sees_me_and_wallet_but_not_the_catalogue),
            (pipeline::bad_keys_are_unauthenticated),
            (pipeline::account_api_status_and_ability_errors),
            (pipeline::unknown_paths_and_wrong_methods),
            (pipeline::rate_limit_counts_down_then_refuses),
            (pipeline::messages_and_labels_are_arabic),
            (request_ids::every_answer_carries_its_request_id),
            (pipeline::the_document_names_the_mounted_prefix),
            (catalog::categories_are_listed_with_meta),
            (catalog::products_paginate_and_hide_stopped_products),
            (catalog::product_detail_has_every_field),
            (catalog::products_filter_by_category_and_title),
            (catalog::products_sync_with_updated_since),
            (catalog::updated_since_far_past_and_future_are_served),
            (rendered::rendered_products_are_never_stale),
            (rendered::rendered_orders_are_never_stale),
            (rendered::rendered_me_is_never_stale),
            (bounded::body_limits_are_per_endpoint),
            (bounded::an_unknown_key_costs_one_store_query),
            (bounded::keys_stored_after_a_miss_work),
            (catalog::updated_since_accepts_every_offset_form),
            (input::invalid_query_parameters_are_422),
            (input::empty_query_values_are_422),
            (input::control_characters_in_text_are_422),
            (input::hostile_bodies_get_a_4xx),
            (input::blank_and_malformed_input_is_named),
            (input::odd_encodings_and_repeated_headers),
            (shipping::shipping_options_show_rates_and_example),
            (shipping::quote_computes_to_the_piastre),
            (shipping::quote_validates_like_checkout),
            (orders::order_creation_matches_the_quote_and_reserves_stock),
            (orders::order_input_rules_are_enforced),
            (orders::order_above_stock_is_refused_whole),
            (orders::duplicate_external_reference_is_409_with_the_existing_order),
            (orders::idempotency_key_replays_byte_for_byte),
            (orders::idempotency_key_expires_after_24_hours),
            (orders::orders_list_and_filters),
            (orders::other_accounts_orders_are_not_found),
            (orders::cancel_only_while_pending_and_release_stock),
            (wallet::wallet_matches_the_orders),
            (wallet::partial_delivery_earns_on_delivered_pieces),
            (wallet::billing_meter_counts_what_the_spec_bills),
            (statement::supplier_statement_follows_deliveries_and_withdrawals),
            (statement::statement_pages_and_filters_by_cairo_day),
            (statement::a_partial_delivery_pays_and_restocks_each_piece_once),
            (operator::operator_orders_follow_the_api_rules),
            (operator::operator_refuses_an_inverted_suggested_range),
            (races::race_one_idempotency_key_makes_one_order),
            (races::race_no_oversell),
            (races::race_rate_limit_is_exact),
            (races::race_places_and_cancels_never_deadlock),
            (races::race_account_state_and_api_status_both_stick),
            (races::race_orders_are_priced_at_their_stock_write),
            (operator::race_withdrawals_never_overdraw),
            (webhooks::webhooks_deliver_every_event_signed),
            (webhooks::webhook_failures_retry_on_schedule_then_fail),
            (webhooks::webhook_timeouts_are_retried),
            (webhooks::webhook_gone_disables_and_rotation_signs_with_both),
            (webhooks::webhook_events_of_one_order_arrive_in_order),
            (webhooks::webhook_registration_rules),
            (supplier_webhooks::each_side_subscribes_to_its_own_event_types),
            (supplier_webhooks::a_supplier_receives_its_quote_and_withdrawal_events),
            (supplier_webhooks::a_marketer_receives_catalog_changed_at_most_every_10_seconds),
            (webhook_limits::webhook_manual_deliveries_are_bounded),
            (webhook_limits::webhook_order_data_needs_orders_read),
            (webhook_urls::webhook_urls_sandbox_allows_loopback_only),
            (sandbox::sandbox_moves_orders_through_every_status),
            (sandbox::sandbox_clock_moves_forward_only),
            (sandbox::sandbox_clock_stops_ten_years_ahead),
            (sandbox::sandbox_paths_are_unknown_to_a_production_engine),
            (catalog_removals::removed_products_are_listed_for_sync),
            (catalog_changes::catalog_changes_follow_the_catalogue_from_a_cursor),
            (catalogue_edits::marketer_answers_never_show_the_supply_side),
            (catalogue_edits::catalogue_edits_reach_the_sync),
            (catalogue_edits::product_creation_refuses_what_an_edit_refuses),
            (catalogue_edits::category_and_warranty_creation_refuse_what_an_edit_refuses),
            (catalogue_edits::returned_pieces_come_back_to_available),
            (owner::owner_operator_and_pages_refuse_the_same_input_alike),
            (owner::owner_moves_api_access_as_the_specification_allows),
            (owner::race_owner_withdrawals_never_overdraw),
            (owner_checks::owner_keys_are_capped_and_paged),
            (owner_checks::owner_flows_follow_the_account_state_and_the_teams_suspension),
            (owner_pages::owner_pages_onboarding_from_login_to_me),
            (owner_pages::owner_pages_refuse_forms_without_their_csrf_token),
            (owner_pages::owner_pages_escape_names_and_hide_other_accounts_keys),
            (owner_pages::owner_pages_show_errors_next_to_their_fields),
            (owner_pages::owner_pages_wallet_and_withdrawals),
            (owner_pages::owner_pages_cookies_are_secure_when_served_over_https),
            (supply::supply_endpoints_are_for_suppliers_only),
            (supply::a_quote_is_made_accepted_and_received),
            (supply::quote_input_rules_are_enforced),
            (supply::quote_idempotency_replays_byte_for_byte),
            (supply::a_quote_replay_ignores_the_clock),
            (supply::quotes_are_withdrawn_once_and_expire),
            (supply::each_side_sees_only_its_own),
        ] }
    };
}

/// Re-exports every listed case here (a case left out of the list is not reachable).
macro_rules! reexport_http_cases {
    ([$(($module:ident :: $case:ident)),* $(,)?]) => {
        $(pub use $module::$case;)*
    };
}
crate::for_each_http_case!([reexport_http_cases]);

/// Names the listed cases.
macro_rules! http_case_names {
    ([$(($module:ident :: $case:ident)),* $(,)?]) => {
        &[$(stringify!($case)),*]
    };
}

/// The name of every HTTP conformance case, which is also the name of its test, in the order
/// [`http_conformance_tests!`](crate::http_conformance_tests) generates them.
pub const HTTP_CASES: &[&str] = crate::for_each_http_case!([http_case_names]);

/// Expands to one `#[tokio::test]` per HTTP case (the names in
/// [`HTTP_CASES`](crate::testing::http::HTTP_CASES)); `$harness` is an expression evaluating
/// to a future of an [`IntoHarness`] (a [`Harness`], or an `Option` of one where `None` skips
/// the test), evaluated once per test.
///
/// Outer attributes written before the expression are put on every generated test, e.g. to
/// report the tests as ignored (not passed) when their database is not configured:
/// `http_conformance_tests!(#[cfg_attr(not(db_tests), ignore = "needs DB_URL")] harness())`.
#[macro_export]
macro_rules! http_conformance_tests {
    (@cases $attrs:tt $harness:expr; [$(($module:ident :: $case:ident)),* $(,)?]) => {
        $(
            $crate::http_conformance_tests!(@one $attrs $harness; $case);
        )*
    };
    (@one [$(#[$attr:meta])*] $harness:expr; $case:ident) => {
        $(#[$attr])*
        #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
        async fn $case() {
            $crate::testing::http::run_case($harness.await, |harness| async move {
                $crate::testing::http::$case(&harness).await
            })
            .await;
        }
    };
    (@attrs $attrs:tt $harness:expr) => {
        $crate::for_each_http_case!([$crate::http_conformance_tests] @cases $attrs $harness;);
    };
    ($($input:tt)+) => {
        $crate::__gather_attrs!([$crate::http_conformance_tests] [] $($input)+);
    };
}

#[cfg(test)]
mod tests {
    use super::HTTP_CASES;

    /// Every file of `testing/http/`, with its source.
    const SOURCES: &[(&str, &str)] = &[
        ("mod.rs", include_str!("mod.rs")),
        ("harness.rs", include_str!("harness.rs")),
        ("adapters.rs", include_str!("adapters.rs")),
        ("bounded.rs", include_str!("bounded.rs")),
        ("fixtures.rs", include_str!("fixtures.rs")),
        ("pipeline.rs", include_str!("pipeline.rs")),
        ("catalog.rs", include_str!("catalog.rs")),
        ("catalog_changes.rs", include_str!("catalog_changes.rs")),
        ("input.rs", include_str!("input.rs")),
        ("shipping.rs", include_str!("shipping.rs")),
        ("orders.rs", include_str!("orders.rs")),
        ("operator.rs", include_str!("operator.rs")),
        ("owner.rs", include_str!("owner.rs")),
        ("owner_checks.rs", include_str!("owner_checks.rs")),
        ("owner_pages.rs", include_str!("owner_pages.rs")),
        ("pages_client.rs", include_str!("pages_client.rs")),
        ("wallet.rs", include_str!("wallet.rs")),
        ("statement.rs", include_str!("statement.rs")),
        ("races.rs", include_str!("races.rs")),
        ("receiver.rs", include_str!("receiver.rs")),
        ("rendered.rs", include_str!("rendered.rs")),
        ("sandbox.rs", include_str!("sandbox.rs")),
        ("catalog_removals.rs", include_str!("catalog_removals.rs")),
        ("catalogue_edits.rs", include_str!("catalogue_edits.rs")),
        ("request_ids.rs", include_str!("request_ids.rs")),
        ("webhooks.rs", include_str!("webhooks.rs")),
        ("webhook_limits.rs", include_str!("webhook_limits.rs")),
        ("webhook_urls.rs", include_str!("webhook_urls.rs")),
        ("supply.rs", include_str!("supply.rs")),
        ("supplier_webhooks.rs", include_str!("supplier_webhooks.rs")),
    ];

    /// The names of the `pub async fn`s of `source` that take a harness (`&Harness`): the
    /// conformance cases it defines.
    fn cases_defined_in(source: &str) -> Vec<&str> {
        let mut cases = Vec::new();
        for (start, _) in source.match_indices("\npub async fn ") {
            let rest = &source[start + "\npub async fn ".len()..];
            let name_end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .expect("a name");
            let params = &rest[name_end..];
            let params = &params[..params.find(')').expect("a parameter list")];
            if params.contains("&Harness") {
                cases.push(&rest[..name_end]);
            }
        }
        cases
    }

    #[test]
    fn every_http_case_is_listed_once() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/testing/http");
        for entry in std::fs::read_dir(dir).expect("the http directory") {
            let name = entry.expect("a directory entry").file_name();
            let name = name.to_str().expect("a UTF-8 file name");
            assert!(
                !name.ends_with(".rs") || SOURCES.iter().any(|(file, _)| *file == name),
                "testing/http/{name} is not read by this test: add it to SOURCES"
            );
        }

        let mut defined: Vec<&str> = SOURCES
            .iter()
            .flat_map(|(_, source)| cases_defined_in(source))
            .collect();
        for case in &defined {
            assert!(
                HTTP_CASES.contains(case),
                "HTTP case `{case}` is not listed in for_each_http_case!, so no integration runs it"
            );
        }

        let mut listed = HTTP_CASES.to_vec();
        listed.sort_unstable();
        listed.dedup();
        assert_eq!(
            listed.len(),
            HTTP_CASES.len(),
            "an HTTP case is listed twice"
        );
        defined.sort_unstable();
        assert_eq!(listed, defined, "the list and the definitions differ");
    }

    #[test]
    fn the_case_finder_sees_only_cases() {
        let source = "\n/// Doc.\npub async fn a_case(h: &Harness) {}\n\
                      pub async fn run_case<F>(harness: impl IntoHarness, case: F) {}\n\
                      pub(super) async fn helper(h: &Harness) {}\n";
        assert_eq!(cases_defined_in(source), ["a_case"]);
    }
}
