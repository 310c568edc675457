//! Row types shared by both backends, decoded by column name ([`FromDbRow`]), and their
//! conversion into domain records.

use chrono::{DateTime, Utc};
use commerce_core::model::*;
use commerce_core::money::to_piastres;
use commerce_core::store::StoreError;
use rust_decimal::Decimal;

/// Data read back from the database that does not fit the domain (a bug or manual edit).
#[derive(Debug, thiserror::Error)]
#[error("corrupt row: {0}")]
pub(crate) struct CorruptRow(pub String);

pub(crate) fn corrupt(what: impl Into<String>) -> StoreError {
    StoreError::backend(CorruptRow(what.into()))
}

pub(crate) fn backend(error: sqlx::Error) -> StoreError {
    StoreError::backend(error)
}

/// [`StoreError::NotFound`] when a write of one row by its id touched none: the one way the
/// SQL store says an id it was asked to change is unknown.
pub(crate) fn found(rows_affected: u64) -> Result<(), StoreError> {
    if rows_affected == 0 {
        Err(StoreError::NotFound)
    } else {
        Ok(())
    }
}

/// An amount with at most two decimals as integer piastres.
pub(crate) fn cents(amount: Decimal) -> Result<i64, StoreError> {
    to_piastres(amount).ok_or_else(|| {
        StoreError::Invalid(format!(
            "amount {amount} has more than two decimals or is out of range"
        ))
    })
}

/// An instant as nanoseconds since the Unix epoch (UTC).
pub(crate) fn nanos(at: DateTime<Utc>) -> Result<i64, StoreError> {
    at.timestamp_nanos_opt()
        .ok_or_else(|| StoreError::Invalid(format!("instant {at} is out of the storable range")))
}

/// A filter bound (`updated_since`) as nanoseconds since the Unix epoch, saturating instead of
/// failing: every valid instant is served (docs/pagination.md). A bound before the storable range
/// (1677-09-21) is `i64::MIN`, at or before every stored instant, so the filter keeps
/// everything; one after it (2262-04-11) is `i64::MAX`, after every stored instant (bar one
/// stored at exactly that nanosecond), so the filter keeps nothing. Values that are stored go
/// through the strict [`nanos`].
pub(crate) fn bound_nanos(at: DateTime<Utc>) -> i64 {
    at.timestamp_nanos_opt()
        .unwrap_or(if at < DateTime::UNIX_EPOCH {
            i64::MIN
        } else {
            i64::MAX
        })
}

pub(crate) fn opt_nanos(at: Option<DateTime<Utc>>) -> Result<Option<i64>, StoreError> {
    at.map(nanos).transpose()
}

pub(crate) fn instant(nanos: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_nanos(nanos)
}

/// `text` read with `parse`; a text it does not read is corrupt data (naming `what`).
pub(crate) fn parse<T>(
    text: &str,
    parse: impl Fn(&str) -> Option<T>,
    what: &str,
) -> Result<T, StoreError> {
    parse(text).ok_or_else(|| corrupt(format!("unknown {what} {text:?}")))
}

pub(crate) fn side(text: &str) -> Result<Side, StoreError> {
    parse(text, Side::parse, "account side")
}

pub(crate) fn status(text: &str) -> Result<OrderStatus, StoreError> {
    parse(text, OrderStatus::parse, "order status")
}

pub(crate) fn json_list(items: &[String]) -> String {
    serde_json::Value::from(items.to_vec()).to_string()
}

fn parse_json_list(text: &str) -> Result<Vec<String>, StoreError> {
    serde_json::from_str(text).map_err(|e| corrupt(format!("bad JSON list: {e}")))
}

pub(crate) fn abilities_text(abilities: &[Ability]) -> String {
    abilities
        .iter()
        .map(|a| a.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

pub(crate) fn u32_of(value: i64, what: &str) -> Result<u32, StoreError> {
    u32::try_from(value).map_err(|_| corrupt(format!("{what} {value} out of range")))
}

// `updated_at = ` the later of the parameter `$now` (the writer's clock, in nanoseconds) and
// the stored stamp plus one microsecond: `commerce_core::store::next_updated_at` in SQL, so
// an order's or a product's `updated_at` never decreases when instances' clocks disagree.
macro_rules! updated_at_after {
    ($now:literal) => {
        concat!(
            "updated_at = CASE WHEN updated_at + 1000 > ",
            $now,
            " THEN updated_at + 1000 ELSE ",
            $now,
            " END"
        )
    };
}

// Column lists, as macros so that `concat!` can build `&'static str` statements.
macro_rules! account_cols {
    () => {
        "id, name, store_name, email, phone, side, state, api_status, api_status_at, \
         api_status_by, created_at"
    };
}
/// The account's columns as `AuthRow` reads them (table alias `a`).
macro_rules! account_aliases {
    () => {
        "a.id AS a_id, a.name AS a_name, a.store_name AS a_store_name, a.email AS a_email, \
         a.phone AS a_phone, a.side AS a_side, a.state AS a_state, \
         a.api_status AS a_api_status, a.api_status_at AS a_api_status_at, \
         a.api_status_by AS a_api_status_by, a.created_at AS a_created_at"
    };
}
macro_rules! key_cols {
    () => {
        "id, account_id, name, hash, abilities, expires_at, revoked_at, rate_limit, created_at"
    };
}
macro_rules! category_cols {
    () => {
        "id, name, slug, parent_id, active"
    };
}
/// A product's `updated_at` as read, from `products`: the stamp of its row in the catalogue
/// change feed (`catalog_changes.at`, every change of what it renders, an order's stock
/// included, which PostgreSQL's checkout moves without writing the product's row), else the
/// row's own.
macro_rules! product_stamp {
    () => {
        "COALESCE((SELECT c.at FROM catalog_changes c WHERE c.product_id = products.id), \
         products.updated_at)"
    };
}
macro_rules! product_cols {
    () => {
        concat!(
            "id, title, slug, category_id, description, images, files, video_url, \
             marketing_files_url, url, active, ",
            product_stamp!(),
            " AS updated_at, supplier_id, revision"
        )
    };
}
macro_rules! variant_cols {
    () => {
        "id, product_id, label, price, suggested_min, suggested_max, available, supply_price"
    };
}
macro_rules! warranty_cols {
    () => {
        "id, product_id, name, admin_fee, percent, price_from, duration_days, terms, icon_url, \
         active"
    };
}
macro_rules! order_cols {
    () => {
        "id, account_id, number, legacy_number, external_reference, tracking_url, status, \
         customer_name, customer_phone, customer_second_phone, customer_address, \
         governorate_id, governorate_name, shipping_option_id, shipping_option_name, \
         store_name, store_link, note, products, warranties, delivery_charge, customer_total, \
         profit, income_tax, net_profit, income_tax_percent, created_at, updated_at, \
         confirmed_at, delivered_at, timeline"
    };
}
/// The lines' columns with their warranties' (`l` and `w` aliases), for `LineAndWarrantyRow`.
macro_rules! line_and_warranty_cols {
    () => {
        "l.id, l.order_id, l.variant_id, l.product_id, l.title, l.variant_label, l.quantity, \
         l.sell_price, l.profit, l.commission_on, l.delivered_quantity, l.returned_quantity, \
         l.damaged_quantity, l.lost_quantity, l.destroyed_quantity, l.supplier_id, \
         l.supply_price, \
         w.warranty_id AS w_warranty_id, w.name AS w_name, w.unit_price AS w_unit_price, \
         w.quantity AS w_quantity, w.total AS w_total, w.duration_days AS w_duration_days, \
         w.terms AS w_terms"
    };
}
macro_rules! withdrawal_cols {
    () => {
        "id, account_id, amount, supply_amount, status, wallet_number, wallet_description, \
         notes, transfer_reference, receipt_url, created_at, decided_at"
    };
}
macro_rules! statement_entry_cols {
    () => {
        "id, supplier_id, kind, order_id, order_number, variant_id, quantity, unit_price, \
         amount, direction, balance, delivered_at, withdrawal_id, at"
    };
}
macro_rules! webhook_cols {
    () => {
        "id, account_id, url, events, description, enabled, disabled_reason, secret, \
         previous_secret, previous_secret_until, failing_since, breaker_failures, \
         breaker_open_until, created_at, updated_at, disabled_at, failed_attempts"
    };
}
macro_rules! delivery_cols {
    () => {
        "id, endpoint_id, event_id, event_type, order_id, payload, snapshot, status, \
         attempts, next_attempt_at, last_attempt_at, last_status_code, last_error, created_at, \
         manual"
    };
}
pub(crate) use {
    account_aliases, account_cols, category_cols, delivery_cols, key_cols, line_and_warranty_cols,
    order_cols, product_cols, product_stamp, statement_entry_cols, updated_at_after, variant_cols,
    warranty_cols, webhook_cols, withdrawal_cols,
};

/// Declares a row type and its decoding ([`FromDbRow`](crate::dialect::FromDbRow)): each field from the column of its
/// name, looked for first at the field's place (a leading `@flatten` field, decoded from the
/// same row by its own type, takes the first places), then by name.
macro_rules! db_row {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $(@flatten $flat_vis:vis $flat:ident: $flat_ty:ty,)?
            $($(#[$field_meta:meta])* $field_vis:vis $field:ident: $ty:ty),* $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $($flat_vis $flat: $flat_ty,)?
            $($(#[$field_meta])* $field_vis $field: $ty),*
        }

        impl $name {
            /// Decodes the row from its column `first` on: each field from the column of its
            /// name, looked for first at the field's place (the columns in the order of the
            /// fields, as the column lists above give them); and the place after the last.
            fn from_columns<DB: $crate::dialect::Dialect>(
                row: &DB::Row,
                first: usize,
            ) -> Result<(Self, usize), sqlx::Error> {
                let at = first;
                $(let ($flat, at) = <$flat_ty>::from_columns::<DB>(row, at)?;)?
                $(
                    let $field = $crate::dialect::col_at::<DB, _>(row, at, stringify!($field))?;
                    let at = at + 1;
                )*
                Ok((Self { $($flat,)? $($field),* }, at))
            }
        }

        impl<DB: $crate::dialect::Dialect> $crate::dialect::FromDbRow<DB> for $name {
            type Output = Self;
            fn from_db_row(row: &DB::Row) -> Result<Self, sqlx::Error> {
                Ok(Self::from_columns::<DB>(row, 0)?.0)
            }
        }
    };
}

mod accounts;
mod catalog;
mod orders;
mod records;
mod snapshot;
mod stock;
mod webhooks;

pub(crate) use accounts::*;
pub(crate) use catalog::*;
pub(crate) use orders::*;
pub(crate) use records::*;
pub(crate) use snapshot::*;
pub(crate) use stock::*;
pub(crate) use webhooks::*;

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    db_row! {
        #[derive(Debug, PartialEq)]
        struct Pair {
            a: i64,
            b: i64,
        }
    }

    db_row! {
        #[derive(Debug, PartialEq)]
        struct PairAndText {
            @flatten pair: Pair,
            text: Option<String>,
        }
    }

    /// Columns are looked for at their field's place first, but a statement whose columns are
    /// in another order (two of the same type swapped, a flattened row's after the others, an
    /// extra column first) still decodes each field from the column of its name.
    #[cfg(feature = "sqlite")]
    #[tokio::test]
    async fn rows_decode_by_name_whatever_the_column_order() {
        use crate::dialect::query_as;
        let pool = sqlx::SqlitePool::connect("sqlite::memory:")
            .await
            .expect("in-memory SQLite");
        let expected = PairAndText {
            pair: Pair { a: 1, b: 2 },
            text: Some("نص".into()),
        };
        for sql in [
            "SELECT 1 AS a, 2 AS b, 'نص' AS text",
            "SELECT 2 AS b, 1 AS a, 'نص' AS text",
            "SELECT 'نص' AS text, 2 AS b, 1 AS a",
            "SELECT 7 AS extra, 1 AS a, 2 AS b, 'نص' AS text",
        ] {
            let row = query_as::<sqlx::Sqlite, PairAndText>(sql)
                .fetch_one(&pool)
                .await
                .expect("decodes");
            assert_eq!(row, expected, "{sql}");
        }
    }

    #[test]
    fn filter_bounds_saturate_where_stored_instants_fail() {
        let early = Utc.with_ymd_and_hms(1500, 1, 1, 0, 0, 0).unwrap();
        let late = Utc.with_ymd_and_hms(9999, 12, 31, 23, 59, 59).unwrap();
        assert_eq!(bound_nanos(early), i64::MIN);
        assert_eq!(bound_nanos(late), i64::MAX);
        assert!(nanos(early).is_err() && nanos(late).is_err());
        for at in [
            DateTime::UNIX_EPOCH,
            Utc.with_ymd_and_hms(2026, 11, 22, 8, 0, 0).unwrap(),
            instant(i64::MIN),
            instant(i64::MAX),
        ] {
            assert_eq!(Some(bound_nanos(at)), nanos(at).ok(), "{at}");
        }
    }
}
