//! Money helpers: every amount is a [`Decimal`] in Egyptian pounds.
//!
//! Rounding is always to two decimals, half away from zero
//! ([`MidpointAwayFromZero`](rust_decimal::RoundingStrategy::MidpointAwayFromZero)); rendering
//! always shows exactly two decimals.
//! Stores that keep integer piastres convert with [`to_piastres`] and [`from_piastres`].

use rust_decimal::Decimal;

/// Rounds to whole piastres (two decimals), half away from zero, and fixes the scale at 2.
///
/// One `rescale(2)` does both: to a smaller scale it rounds with
/// [`MidpointAwayFromZero`](rust_decimal::RoundingStrategy::MidpointAwayFromZero), to a larger one it adds zeros (a test holds it
/// to `round_dp_with_strategy` for any amount).
pub(crate) fn round_money(amount: Decimal) -> Decimal {
    let mut rounded = amount;
    rounded.rescale(2);
    rounded
}

/// Renders an amount as the wire's money string: exactly two decimals (`"125.00"`).
pub fn money_string(amount: Decimal) -> String {
    round_money(amount).to_string()
}

/// Converts an amount with at most two decimals to integer piastres.
///
/// Returns `None` when the amount has more than two decimals or does not fit in an `i64`.
pub fn to_piastres(amount: Decimal) -> Option<i64> {
    let scaled = amount.checked_mul(Decimal::ONE_HUNDRED)?;
    if !scaled.fract().is_zero() {
        return None;
    }
    i64::try_from(scaled).ok()
}

/// Converts integer piastres back to pounds with scale 2.
pub fn from_piastres(piastres: i64) -> Decimal {
    Decimal::new(piastres, 2)
}

/// Largest amount an input may hold (so that arithmetic on inputs can never overflow).
pub const MAX_AMOUNT: Decimal = Decimal::from_parts(1_000_000_000, 0, 0, false, 0);

/// An amount as an input may hold it: zero or more, at most two decimals, at most
/// [`MAX_AMOUNT`]; returned with scale 2. `None` for anything else.
pub(crate) fn accepted_amount(amount: Decimal) -> Option<Decimal> {
    if amount.is_sign_negative() && !amount.is_zero() {
        return None;
    }
    if amount.normalize().scale() > 2 || amount > MAX_AMOUNT {
        return None;
    }
    Some(round_money(amount.abs()))
}

/// Parses a money input (a JSON number or a numeric string) by the rule of
/// [`accepted_amount`]. Returns `None` for anything else.
pub(crate) fn parse_money_input(value: &serde_json::Value) -> Option<Decimal> {
    let amount = match value {
        serde_json::Value::Number(n) => n.to_string().parse::<Decimal>().ok().or_else(|| {
            // Exponent notation such as 1e2.
            Decimal::from_scientific(&n.to_string()).ok()
        })?,
        // Plain decimal notation only: the parser would also take `1_000` or `1e3`.
        serde_json::Value::String(s) => {
            let s = s.trim();
            let plain = s
                .strip_prefix(['-', '+'])
                .unwrap_or(s)
                .bytes()
                .all(|b| b.is_ascii_digit() || b == b'.');
            if !plain {
                return None;
            }
            s.parse::<Decimal>().ok()?
        }
        _ => return None,
    };
    accepted_amount(amount)
}

/// Serde helper: serialises a [`Decimal`] as a two-decimal money string.
pub(crate) mod serde_money {
    use rust_decimal::Decimal;
    use serde::Serializer;

    /// Serialises `amount` with exactly two decimals.
    pub fn serialize<S: Serializer>(amount: &Decimal, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&super::money_string(*amount))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal::RoundingStrategy;
    use std::str::FromStr;

    fn d(s: &str) -> Decimal {
        Decimal::from_str(s).unwrap()
    }

    #[test]
    fn rounds_half_away_from_zero_not_bankers() {
        assert_eq!(money_string(d("0.125")), "0.13");
        assert_eq!(money_string(d("0.135")), "0.14");
        assert_eq!(money_string(d("2.345")), "2.35");
        assert_eq!(money_string(d("2.344999")), "2.34");
        assert_eq!(money_string(d("125")), "125.00");
        assert_eq!(money_string(d("0.5")), "0.50");
    }

    proptest::proptest! {
        /// The one-step rounding is the documented rule, for amounts of any scale and sign.
        #[test]
        fn round_money_is_half_away_from_zero_at_scale_2(
            mantissa in -10_000_000_000_000_000i64..10_000_000_000_000_000i64,
            scale in 0u32..12,
        ) {
            let amount = Decimal::new(mantissa, scale);
            let mut expected =
                amount.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero);
            expected.rescale(2);
            let rounded = round_money(amount);
            proptest::prop_assert_eq!(rounded, expected);
            proptest::prop_assert_eq!(rounded.scale(), 2);
        }
    }

    #[test]
    fn piastres_round_trip_and_reject_fractions_of_a_piastre() {
        assert_eq!(to_piastres(d("125.40")), Some(12540));
        assert_eq!(to_piastres(d("0.001")), None);
        assert_eq!(from_piastres(12540).to_string(), "125.40");
    }

    #[test]
    fn money_input_accepts_numbers_and_numeric_strings_only() {
        use serde_json::json;
        assert_eq!(parse_money_input(&json!(12.5)), Some(d("12.50")));
        assert_eq!(parse_money_input(&json!("12.50")), Some(d("12.50")));
        assert_eq!(parse_money_input(&json!(0)), Some(d("0.00")));
        assert_eq!(parse_money_input(&json!(-1)), None);
        assert_eq!(parse_money_input(&json!("1.234")), None);
        assert_eq!(parse_money_input(&json!("abc")), None);
        assert_eq!(parse_money_input(&json!(true)), None);
        assert_eq!(parse_money_input(&json!(1e300)), None);
    }
}
