//! Store-level conformance cases: every [`Store`](crate::store::Store) implementation must pass all of them.
//!
//! Each case is a `pub async fn` that builds its own fixture through the trait's `insert_*`
//! methods, so cases are independent and can run on a fresh store each. Most take
//! `&dyn Store`; the concurrency cases race real tokio tasks and take `Arc<dyn Store>`.
//!
//! A store crate runs them all with [`store_conformance_tests!`](crate::store_conformance_tests),
//! which expands to one `#[tokio::test]` per case:
//!
//! ```ignore
//! use std::sync::Arc;
//! use commerce_core::store::{MemoryStore, Store};
//!
//! async fn fresh_store() -> Arc<dyn Store> {
//!     Arc::new(MemoryStore::new())
//! }
//!
//! commerce_core::store_conformance_tests!(fresh_store());
//! ```
//!
//! The factory expression is evaluated once per test and must produce a future whose output
//! implements [`IntoTestStore`]: an `Arc<dyn Store>`, a [`TestStore`] (a store with a clean-up
//! step, e.g. dropping a PostgreSQL schema), or an `Option` of either, where `None` skips the
//! test (a database that is not configured). A skipped test still counts as passed; a leading
//! `#[cfg_attr(not(...), ignore = "...")]`, which the macro puts on every test, makes cargo
//! report it as ignored instead.
//!
//! The cases, one module per concern, are listed once, in [`__with_store_cases!`]: the macro
//! expands from that list, and so does [`STORE_CASES`]; a unit test fails on a case that is
//! not in it.
//!
//! [`__with_store_cases!`]: crate::__with_store_cases

mod accounts;
mod back_office;
mod back_office_payouts;
mod catalog;
mod catalog_changes;
mod catalog_edits;
mod catalog_events;
pub(crate) mod fixtures;
mod harness;
mod idempotency;
mod key_limits;
mod meter;
mod moves;
mod order_reads;
mod outcome_races;
mod placing;
mod product_versions;
mod quote_idempotency;
mod quote_moves;
mod quotes;
mod races;
mod removals;
mod shipping;
mod statement;
mod statement_races;
mod stock;
mod supply_events;
mod webhook_claims;
mod webhook_fair_claims;
mod webhook_limits;
mod webhook_outbox;
mod webhooks;
mod withdrawals;

pub use accounts::{
    a_rate_window_never_goes_back, accounts_round_trip_and_change_state,
    key_terms_replace_expiry_and_limit, keys_are_found_by_hash_and_id,
    keys_are_listed_with_the_minute_last_used,
    rate_limit_counts_exactly_up_to_the_limit_per_window,
    repeated_slugs_emails_and_governorate_names_are_refused,
    revoking_a_key_keeps_the_first_revocation_instant,
};
pub use back_office::{
    accounts_are_searched_filtered_and_queued, orders_across_accounts_filter_sort_page_and_count,
};
pub use back_office_payouts::{
    webhooks_across_accounts_by_state_and_failing_streak,
    withdrawals_across_accounts_queue_and_totals,
};
pub use catalog::{
    categories_round_trip_with_parents_and_activity, money_amounts_round_trip_to_the_piastre,
    product_listing_filters_and_paginates, product_round_trips_with_variants_and_warranties,
    products_of_variants_returns_each_owner_once, stopping_a_warranty_keeps_it_on_the_product,
    update_variant_patches_fields_and_bumps_product,
};
pub use catalog_changes::{
    an_order_moves_its_products_stamp_and_later_edits_move_past_it,
    every_path_that_changes_a_product_names_it_in_the_feed,
    the_change_feed_misses_no_change_of_concurrent_writers,
    the_change_feed_pages_from_its_start_and_coalesces,
};
pub use catalog_edits::{
    category_edits_keep_the_tree_and_mark_renamed_products,
    concurrent_category_moves_never_make_a_cycle, placed_orders_keep_what_they_were_placed_with,
    product_edits_change_fields_and_mark_the_product_changed, repeated_product_slugs_are_refused,
};
pub use catalog_events::catalog_changed_is_derived_once_per_endpoint_and_interval;
pub use fixtures::base_time;
pub use harness::{Cleanup, IntoTestStore, TestStore, run_case};
pub use idempotency::{
    a_request_that_lost_its_record_can_neither_abandon_nor_finish_it,
    a_request_that_outlived_the_stale_time_places_nothing,
    abandon_removes_only_unanswered_unlinked_records,
    idempotency_stale_record_is_taken_over_or_recovered,
    idempotency_start_in_flight_mismatch_replay_expiry,
    purge_deletes_only_older_records_and_counts,
};
pub use key_limits::{
    api_status_moves_record_who_and_hold_their_origin,
    concurrent_key_creations_never_exceed_the_cap, keys_are_paged_newest_first,
    live_keys_are_capped_per_account,
};
pub use meter::pulls_are_counted_once_per_product_and_month;
pub use moves::{
    a_move_records_its_outcomes_or_nothing, cancelling_releases_stock_exactly_once,
    line_outcomes_and_tracking_url_are_recorded, status_change_respects_ownership_and_rules,
    status_change_sets_dates_and_appends_timeline, updated_at_never_decreases_when_clocks_disagree,
};
pub use order_reads::{
    order_versions_list_the_page_of_orders, orders_filter_by_every_field,
    orders_list_newest_first_with_pagination, wallet_totals_follow_every_order_move,
};
pub use outcome_races::{
    a_write_decided_on_an_older_read_is_refused,
    an_outcome_write_another_came_before_is_decided_again,
    corrections_made_at_once_each_keep_the_others_counts,
};
pub use placing::{
    an_order_priced_from_a_changed_product_is_stale_and_writes_nothing,
    duplicate_external_reference_is_refused_per_account, insufficient_stock_writes_nothing,
    lines_of_one_variant_add_up_against_stock, order_operations_are_billed_only_with_a_month,
    place_order_links_the_idempotency_record, place_order_round_trips_and_reserves_stock,
    taken_number_is_refused_and_writes_nothing,
};
pub use product_versions::product_versions_list_the_page_of_products;
pub use quote_idempotency::{
    a_product_moved_to_another_supplier_ends_the_old_ones_pending_quotes,
    a_quote_under_a_lost_claim_inserts_nothing, abandon_keeps_a_record_linked_to_a_quote,
    concurrent_takeover_and_late_quote_insert_one_quote, insert_quote_links_the_idempotency_record,
    supply_variants_are_the_suppliers_own,
};
pub use quote_moves::a_quote_racing_its_products_move_never_blocks_the_new_supplier;
pub use quotes::{
    a_quote_past_its_end_is_expired_and_frees_its_variant,
    a_quote_withdrawn_while_accepted_has_one_outcome, a_refused_accept_writes_nothing,
    accepting_a_quote_receives_its_pieces_at_its_price,
    concurrent_accepts_of_one_quote_accept_once,
    concurrent_quotes_on_one_variant_leave_one_pending,
    quote_acceptance_and_concurrent_orders_keep_stock_exact,
    quotes_are_inserted_one_pending_per_variant, quotes_are_listed_newest_first_and_pending_first,
    rejecting_and_withdrawing_move_no_stock,
};
pub use races::{
    concurrent_begin_idempotent_starts_once, concurrent_cancels_release_stock_once,
    concurrent_orders_never_oversell, concurrent_rate_limit_allows_exactly_the_limit,
    concurrent_rate_limit_with_a_high_limit_allows_exactly_the_limit,
    concurrent_same_external_reference_registers_one_order,
    concurrent_takeover_and_late_placement_place_one_order, concurrent_withdrawals_never_overdraw,
};
pub use removals::{
    an_edit_of_a_product_moves_its_removal_only_when_it_sets_active,
    removed_products_are_listed_newest_first_since,
};
pub use shipping::shipping_rates_are_set_replaced_and_named;
pub use statement::{
    a_correction_below_zero_is_refused_and_writes_nothing,
    a_correction_never_takes_withdrawn_marketer_earnings,
    deliveries_and_corrections_are_booked_on_the_supplier_statement,
};
pub use statement_races::{
    a_supplier_withdrawal_never_takes_ready_money_a_racing_correction_took,
    concurrent_moves_and_supplier_withdrawals_reconcile,
};
pub use stock::{
    a_cancelled_order_is_not_restocked_twice, adjusting_below_zero_is_refused_and_writes_nothing,
    concurrent_adjustments_and_orders_keep_stock_exact,
    order_lines_keep_the_supplier_and_supply_price_they_were_placed_with,
    returned_pieces_are_restocked_once, stock_history_is_listed_newest_first_with_its_cause,
    stock_moves_by_deltas_and_keeps_reservations,
};
pub use supply_events::{
    a_webhook_without_events_receives_types_added_later,
    expired_and_ended_quotes_queue_their_event_once,
    quote_decisions_queue_their_event_for_the_supplier,
    withdrawal_decisions_queue_their_event_for_the_account,
};
pub use webhook_claims::{
    a_failing_endpoint_is_disabled_by_the_outcome,
    an_open_breaker_holds_its_endpoints_deliveries_until_its_wait,
    claims_are_due_exclusive_and_leased, claims_keep_each_endpoint_within_its_in_flight_limit,
    claims_keep_each_orders_events_in_order, concurrent_claims_keep_the_per_endpoint_limit,
    concurrent_claims_never_share_a_delivery, purging_deletes_only_old_finished_deliveries,
    webhook_backlog_counts_due_leased_and_open_breakers,
};
pub use webhook_fair_claims::{
    claims_serve_the_accounts_with_the_fewest_in_flight_first,
    concurrent_claims_keep_the_per_account_limit,
};
pub use webhook_limits::{
    a_url_change_ends_the_pending_deliveries, concurrent_manual_deliveries_never_exceed_the_limit,
    manual_deliveries_are_bounded_per_endpoint,
    pending_deliveries_of_a_long_disabled_endpoint_expire,
};
pub use webhook_outbox::{
    a_delivery_keeps_its_order_as_the_change_left_it,
    order_changes_queue_one_delivery_per_subscribed_endpoint, refused_order_changes_queue_nothing,
};
pub use webhooks::{
    concurrent_webhook_registrations_never_exceed_the_limit,
    deleting_a_webhook_drops_its_deliveries, rotating_a_secret_keeps_the_previous_one_for_a_day,
    webhook_patch_enables_disables_and_changes_fields,
    webhooks_register_to_the_limit_and_belong_to_their_account,
};
pub use withdrawals::{
    a_withdrawal_never_exceeds_the_ready_balance, withdrawals_are_listed_and_decided_once,
};

/// The one list of store cases: calls `$crate::$callback!` with `$args`, then
/// `@list ref [...] arc [...]` (the cases over `&dyn Store`, then those over
/// `Arc<dyn Store>`, which race tasks). Used by
/// [`store_conformance_tests!`](crate::store_conformance_tests) and [`STORE_CASES`].
#[doc(hidden)]
#[macro_export]
macro_rules! __with_store_cases {
    ($callback:ident $($args:tt)*) => {
        $crate::$callback! { $($args)* @list
            ref [
                accounts_round_trip_and_change_state,
                repeated_slugs_emails_and_governorate_names_are_refused,
                keys_are_found_by_hash_and_id,
                revoking_a_key_keeps_the_first_revocation_instant,
                key_terms_replace_expiry_and_limit,
                keys_are_listed_with_the_minute_last_used,
                live_keys_are_capped_per_account,
                keys_are_paged_newest_first,
                api_status_moves_record_who_and_hold_their_origin,
                rate_limit_counts_exactly_up_to_the_limit_per_window,
                a_rate_window_never_goes_back,
                categories_round_trip_with_parents_and_activity,
                product_round_trips_with_variants_and_warranties,
                product_listing_filters_and_paginates,
                update_variant_patches_fields_and_bumps_product,
                stopping_a_warranty_keeps_it_on_the_product,
                products_of_variants_returns_each_owner_once,
                product_versions_list_the_page_of_products,
                every_path_that_changes_a_product_names_it_in_the_feed,
                an_order_moves_its_products_stamp_and_later_edits_move_past_it,
                the_change_feed_pages_from_its_start_and_coalesces,
                catalog_changed_is_derived_once_per_endpoint_and_interval,
                removed_products_are_listed_newest_first_since,
                an_edit_of_a_product_moves_its_removal_only_when_it_sets_active,
                money_amounts_round_trip_to_the_piastre,
                shipping_rates_are_set_replaced_and_named,
                place_order_round_trips_and_reserves_stock,
                lines_of_one_variant_add_up_against_stock,
                insufficient_stock_writes_nothing,
                an_order_priced_from_a_changed_product_is_stale_and_writes_nothing,
                duplicate_external_reference_is_refused_per_account,
                taken_number_is_refused_and_writes_nothing,
                order_operations_are_billed_only_with_a_month,
                place_order_links_the_idempotency_record,
                status_change_respects_ownership_and_rules,
                status_change_sets_dates_and_appends_timeline,
                cancelling_releases_stock_exactly_once,
                updated_at_never_decreases_when_clocks_disagree,
                line_outcomes_and_tracking_url_are_recorded,
                a_move_records_its_outcomes_or_nothing,
                orders_list_newest_first_with_pagination,
                order_versions_list_the_page_of_orders,
                orders_filter_by_every_field,
                wallet_totals_follow_every_order_move,
                idempotency_start_in_flight_mismatch_replay_expiry,
                idempotency_stale_record_is_taken_over_or_recovered,
                abandon_removes_only_unanswered_unlinked_records,
                purge_deletes_only_older_records_and_counts,
                a_request_that_outlived_the_stale_time_places_nothing,
                a_request_that_lost_its_record_can_neither_abandon_nor_finish_it,
                pulls_are_counted_once_per_product_and_month,
                withdrawals_are_listed_and_decided_once,
                a_withdrawal_never_exceeds_the_ready_balance,
                deliveries_and_corrections_are_booked_on_the_supplier_statement,
                a_correction_below_zero_is_refused_and_writes_nothing,
                a_correction_never_takes_withdrawn_marketer_earnings,
                webhooks_register_to_the_limit_and_belong_to_their_account,
                webhook_patch_enables_disables_and_changes_fields,
                deleting_a_webhook_drops_its_deliveries,
                rotating_a_secret_keeps_the_previous_one_for_a_day,
                order_changes_queue_one_delivery_per_subscribed_endpoint,
                refused_order_changes_queue_nothing,
                a_delivery_keeps_its_order_as_the_change_left_it,
                claims_are_due_exclusive_and_leased,
                claims_keep_each_orders_events_in_order,
                a_failing_endpoint_is_disabled_by_the_outcome,
                purging_deletes_only_old_finished_deliveries,
                manual_deliveries_are_bounded_per_endpoint,
                pending_deliveries_of_a_long_disabled_endpoint_expire,
                a_url_change_ends_the_pending_deliveries,
                claims_keep_each_endpoint_within_its_in_flight_limit,
                claims_serve_the_accounts_with_the_fewest_in_flight_first,
                an_open_breaker_holds_its_endpoints_deliveries_until_its_wait,
                webhook_backlog_counts_due_leased_and_open_breakers,
                orders_across_accounts_filter_sort_page_and_count,
                accounts_are_searched_filtered_and_queued,
                withdrawals_across_accounts_queue_and_totals,
                webhooks_across_accounts_by_state_and_failing_streak,
                a_product_moved_to_another_supplier_ends_the_old_ones_pending_quotes,
                quotes_are_inserted_one_pending_per_variant,
                a_quote_past_its_end_is_expired_and_frees_its_variant,
                quote_decisions_queue_their_event_for_the_supplier,
                expired_and_ended_quotes_queue_their_event_once,
                withdrawal_decisions_queue_their_event_for_the_account,
                a_webhook_without_events_receives_types_added_later,
                quotes_are_listed_newest_first_and_pending_first,
                accepting_a_quote_receives_its_pieces_at_its_price,
                a_refused_accept_writes_nothing,
                rejecting_and_withdrawing_move_no_stock,
                supply_variants_are_the_suppliers_own,
                insert_quote_links_the_idempotency_record,
                a_quote_under_a_lost_claim_inserts_nothing,
                abandon_keeps_a_record_linked_to_a_quote,
                stock_moves_by_deltas_and_keeps_reservations,
                adjusting_below_zero_is_refused_and_writes_nothing,
                stock_history_is_listed_newest_first_with_its_cause,
                order_lines_keep_the_supplier_and_supply_price_they_were_placed_with,
                returned_pieces_are_restocked_once,
                a_cancelled_order_is_not_restocked_twice,
                product_edits_change_fields_and_mark_the_product_changed,
                category_edits_keep_the_tree_and_mark_renamed_products,
                repeated_product_slugs_are_refused,
                placed_orders_keep_what_they_were_placed_with,
                a_write_decided_on_an_older_read_is_refused,
            ]
            arc [
                concurrent_orders_never_oversell,
                concurrent_begin_idempotent_starts_once,
                concurrent_takeover_and_late_placement_place_one_order,
                concurrent_takeover_and_late_quote_insert_one_quote,
                concurrent_rate_limit_with_a_high_limit_allows_exactly_the_limit,
                concurrent_rate_limit_allows_exactly_the_limit,
                concurrent_key_creations_never_exceed_the_cap,
                concurrent_same_external_reference_registers_one_order,
                concurrent_cancels_release_stock_once,
                concurrent_withdrawals_never_overdraw,
                concurrent_moves_and_supplier_withdrawals_reconcile,
                a_supplier_withdrawal_never_takes_ready_money_a_racing_correction_took,
                corrections_made_at_once_each_keep_the_others_counts,
                an_outcome_write_another_came_before_is_decided_again,
                concurrent_webhook_registrations_never_exceed_the_limit,
                concurrent_claims_never_share_a_delivery,
                concurrent_manual_deliveries_never_exceed_the_limit,
                concurrent_claims_keep_the_per_endpoint_limit,
                concurrent_claims_keep_the_per_account_limit,
                concurrent_accepts_of_one_quote_accept_once,
                a_quote_withdrawn_while_accepted_has_one_outcome,
                concurrent_quotes_on_one_variant_leave_one_pending,
                a_quote_racing_its_products_move_never_blocks_the_new_supplier,
                quote_acceptance_and_concurrent_orders_keep_stock_exact,
                concurrent_adjustments_and_orders_keep_stock_exact,
                concurrent_category_moves_never_make_a_cycle,
                the_change_feed_misses_no_change_of_concurrent_writers,
            ]
        }
    };
}

/// Defines [`STORE_CASES`] from the list.
#[doc(hidden)]
#[macro_export]
macro_rules! __store_case_names {
    (@list ref [$($ref_case:ident),+ $(,)?] arc [$($arc_case:ident),+ $(,)?]) => {
        /// The name of every store conformance case, in the order the macro runs them (each
        /// is a `pub fn` of this module, and the name of its generated test).
        pub const STORE_CASES: &[&str] = &[$(stringify!($ref_case),)+ $(stringify!($arc_case),)+];
    };
}

crate::__with_store_cases!(__store_case_names);

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::STORE_CASES;

    /// The source of every module that holds cases.
    const SOURCES: &[&str] = &[
        include_str!("accounts.rs"),
        include_str!("key_limits.rs"),
        include_str!("catalog.rs"),
        include_str!("shipping.rs"),
        include_str!("placing.rs"),
        include_str!("moves.rs"),
        include_str!("order_reads.rs"),
        include_str!("idempotency.rs"),
        include_str!("meter.rs"),
        include_str!("withdrawals.rs"),
        include_str!("statement.rs"),
        include_str!("statement_races.rs"),
        include_str!("outcome_races.rs"),
        include_str!("races.rs"),
        include_str!("removals.rs"),
        include_str!("webhooks.rs"),
        include_str!("webhook_limits.rs"),
        include_str!("webhook_outbox.rs"),
        include_str!("webhook_claims.rs"),
        include_str!("webhook_fair_claims.rs"),
        include_str!("back_office.rs"),
        include_str!("back_office_payouts.rs"),
        include_str!("quotes.rs"),
        include_str!("quote_moves.rs"),
        include_str!("quote_idempotency.rs"),
        include_str!("stock.rs"),
        include_str!("catalog_edits.rs"),
        include_str!("product_versions.rs"),
        include_str!("catalog_changes.rs"),
        include_str!("supply_events.rs"),
        include_str!("catalog_events.rs"),
    ];

    /// The public async functions of `source` that take a store: the cases it defines.
    fn cases_in(source: &str) -> Vec<String> {
        source
            .split("\npub async fn ")
            .skip(1)
            .filter_map(|rest| {
                let (name, args) = rest.split_once('(')?;
                args.trim_start()
                    .starts_with("store:")
                    .then(|| name.to_owned())
            })
            .collect()
    }

    #[test]
    fn every_case_is_in_the_one_list_and_runs_once() {
        let defined: BTreeSet<String> = SOURCES.iter().flat_map(|s| cases_in(s)).collect();
        let listed: BTreeSet<String> = STORE_CASES.iter().map(|s| s.to_string()).collect();
        assert_eq!(listed.len(), STORE_CASES.len(), "a case is listed twice");
        assert_eq!(defined, listed, "defined cases and the list differ");
    }

    #[test]
    fn the_scan_finds_cases_and_only_cases() {
        let source = "\npub async fn a_case(store: &dyn Store) {}\npub async fn helper(x: u8) {}\npub async fn race(\n    store: Arc<dyn Store>,\n) {}";
        assert_eq!(cases_in(source), ["a_case", "race"]);
    }
}
