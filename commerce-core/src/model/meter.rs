//! What the billing meter holds, and the month it counts in.

use std::cell::RefCell;

use chrono::{DateTime, Datelike, Offset, Utc};
use chrono_tz::Africa::Cairo;

/// What the billing meter holds for an account and month.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct MeterReading {
    /// Distinct products pulled.
    pub pulled_products: u64,
    /// Order operations executed.
    pub order_operations: u64,
}

impl MeterReading {
    /// `pulled_products` distinct products pulled and `order_operations` executed.
    pub fn new(pulled_products: u64, order_operations: u64) -> Self {
        Self {
            pulled_products,
            order_operations,
        }
    }
}

/// A billing month: a calendar month in Cairo time, spelled `YYYY-MM` (as the meter stores it).
///
/// Made from an instant with [`BillingMonth::of`], or read back from storage with
/// [`BillingMonth::parse`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BillingMonth(String);

impl BillingMonth {
    /// The billing month of an instant: its calendar month in Cairo time.
    ///
    /// Cairo's offset from UTC is a whole number of hours (since 1900) and changes, as the
    /// month does, at a local midnight: every instant of one UTC hour has the same month. So
    /// each thread keeps the month of the last hour it worked out (an instant whose offset is
    /// not whole hours is worked out every time), which a request asks for once or twice.
    pub fn of(at: DateTime<Utc>) -> Self {
        thread_local! {
            static LAST: RefCell<Option<(i64, BillingMonth)>> = const { RefCell::new(None) };
        }
        let hour = at.timestamp().div_euclid(3600);
        let kept = LAST.with_borrow(|last| {
            last.as_ref()
                .filter(|(kept_hour, _)| *kept_hour == hour)
                .map(|(_, month)| month.clone())
        });
        if let Some(month) = kept {
            return month;
        }
        let month = Self::worked_out(at);
        let offset = at.with_timezone(&Cairo).offset().fix().local_minus_utc();
        if offset % 3600 == 0 {
            LAST.set(Some((hour, month.clone())));
        }
        month
    }

    /// The month of `at` in Cairo, worked out from the time zone's rules.
    fn worked_out(at: DateTime<Utc>) -> Self {
        let local = at.with_timezone(&Cairo);
        Self(format!("{:04}-{:02}", local.year(), local.month()))
    }

    /// Parses `YYYY-MM` (four digits, a dash, a month from `01` to `12`); `None` otherwise.
    pub fn parse(text: &str) -> Option<Self> {
        let (year, month) = text.split_once('-')?;
        let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
        let valid =
            digits(year, 4) && digits(month, 2) && matches!(month.parse::<u8>(), Ok(1..=12));
        valid.then(|| Self(text.to_owned()))
    }

    /// The month as `YYYY-MM` (how the stores keep it).
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for BillingMonth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn every_instant_of_an_hour_has_the_month_worked_out_for_it() {
        // 2022 to 2025: Egypt's clocks moved again from 2023 (last Friday of April and of
        // October), so this spans offsets +2 and +3 and their changes.
        let start = Utc
            .with_ymd_and_hms(2022, 1, 1, 0, 0, 0)
            .unwrap()
            .timestamp();
        let end = Utc
            .with_ymd_and_hms(2026, 1, 1, 0, 0, 0)
            .unwrap()
            .timestamp();
        for hour in (start..end).step_by(3600) {
            for second in [0, 1799, 3599] {
                let at = Utc.timestamp_opt(hour + second, 0).unwrap();
                assert_eq!(BillingMonth::of(at), BillingMonth::worked_out(at), "{at}");
            }
        }
        // Going back to an earlier hour works it out again.
        let early = Utc.with_ymd_and_hms(2024, 1, 31, 21, 59, 59).unwrap();
        assert_eq!(BillingMonth::of(early).as_str(), "2024-01");
        assert_eq!(
            BillingMonth::of(early + chrono::Duration::seconds(1)).as_str(),
            "2024-02"
        );
    }

    #[test]
    fn billing_month_follows_cairo_midnight() {
        // 22:30 UTC on 31 Jan is already 1 Feb in Cairo.
        let at = Utc.with_ymd_and_hms(2026, 1, 31, 22, 30, 0).unwrap();
        assert_eq!(BillingMonth::of(at).as_str(), "2026-02");
        assert_eq!(BillingMonth::of(at).to_string(), "2026-02");
    }

    #[test]
    fn billing_month_writes_four_digit_years_and_two_digit_months() {
        for (year, month, text) in [
            (2026, 12, "2026-12"),
            (999, 3, "0999-03"),
            (10, 10, "0010-10"),
            (9_999, 6, "9999-06"),
            (12_345, 6, "12345-06"),
        ] {
            let at = Utc.with_ymd_and_hms(year, month, 15, 12, 0, 0).unwrap();
            assert_eq!(BillingMonth::of(at).as_str(), text);
        }
    }

    #[test]
    fn parse_takes_only_year_and_month() {
        assert_eq!(BillingMonth::parse("2026-03").unwrap().as_str(), "2026-03");
        for bad in [
            "2026-13",
            "2026-00",
            "2026-3",
            "26-03",
            "2026/03",
            "2026-03-01",
            "",
            "abcd-ef",
        ] {
            assert_eq!(BillingMonth::parse(bad), None, "{bad}");
        }
    }
}
