//! The model's plans for quotes, stock, products, withdrawals and the clock (the orders'
//! are in `model.rs`).

use chrono::Duration;
use rust_decimal::Decimal;

use super::model::{Expect, MOST_STOCK, Model};

/// The most a quote's unit price may be.
const MOST_UNIT_PRICE: i64 = 1_000_000;
/// Pieces of a quote: 1 to this.
const MOST_QUOTE_QUANTITY: i64 = 100_000;
/// How far ahead a quote's `valid_until` may be.
const MOST_VALID_HOURS: i64 = 90 * 24;

impl Model {
    /// A supplier's new quote.
    pub fn plan_quote(
        &self,
        supplier: i64,
        variant: i64,
        price: &str,
        quantity: i64,
        valid_hours: Option<i64>,
    ) -> Expect {
        let product = self.variant(variant).product;
        if self.supplier_of(product) != Some(supplier) {
            return Expect::Refused(format!("variant {variant} is not supplier {supplier}'s"));
        }
        let price_ok = price.parse::<Decimal>().ok().filter(|p| {
            *p > Decimal::ZERO && p.normalize().scale() <= 2 && *p <= Decimal::from(MOST_UNIT_PRICE)
        });
        if price_ok.is_none() {
            return Expect::Refused(format!("unit_price {price}"));
        }
        if !(1..=MOST_QUOTE_QUANTITY).contains(&quantity) {
            return Expect::Refused(format!("quantity {quantity}"));
        }
        if let Some(h) = valid_hours
            && (h <= 0 || h > MOST_VALID_HOURS)
        {
            return Expect::Refused(format!("valid_until {h} h ahead"));
        }
        if let Some(q) = self
            .quotes
            .iter()
            .find(|q| q.variant == variant && self.quote_status(q) == "pending")
        {
            return Expect::Refused(format!("quote {} is pending on variant {variant}", q.id));
        }
        Expect::Accepted
    }

    /// A decision on (or the supplier's withdrawal of) quote `index`: `accept`, or else it
    /// ends as `status`.
    pub fn plan_quote_end(
        &self,
        index: usize,
        accept: bool,
        status: &'static str,
    ) -> (Expect, Option<Model>) {
        let quote = &self.quotes[index];
        let now = self.quote_status(quote);
        if now != "pending" {
            return (
                Expect::Refused(format!("quote {} is {now}", quote.id)),
                None,
            );
        }
        let mut next = self.clone();
        if accept {
            let held = self.held_by_orders(quote.variant);
            let v = next.variant_mut(quote.variant);
            v.available += quote.quantity;
            v.supply_price = quote.unit_price;
            if v.available + held > MOST_STOCK {
                return (
                    Expect::Refused(format!(
                        "variant {} would hold {} with {held} on orders",
                        v.id, v.available
                    )),
                    None,
                );
            }
            next.quotes[index].status = "accepted";
        } else {
            next.quotes[index].status = status;
        }
        (Expect::Accepted, Some(next))
    }

    /// The operator moves product `index` to `to`: the old supplier's pending quotes on its
    /// variants end as `withdrawn`.
    pub fn plan_product_move(&self, index: usize, to: Option<i64>) -> (Expect, Option<Model>) {
        let (product, old) = self.products[index];
        if old == to {
            return (
                Expect::Skip("the product already has this supplier".into()),
                None,
            );
        }
        let mut next = self.clone();
        next.products[index].1 = to;
        for i in 0..next.quotes.len() {
            let q = &next.quotes[i];
            let of_product = next.variant(q.variant).product == product;
            if of_product && Some(q.supplier) == old && next.quote_status(q) == "pending" {
                next.quotes[i].status = "withdrawn";
            }
        }
        (Expect::Accepted, Some(next))
    }

    /// A stock delta.
    pub fn plan_stock(&self, variant: i64, delta: i64) -> (Expect, Option<Model>) {
        let available = self.variant(variant).available;
        match available.checked_add(delta) {
            _ if delta == 0 => (Expect::Either("a zero delta".into()), Some(self.clone())),
            Some(after)
                if after >= 0
                    && (delta < 0
                        || after.saturating_add(self.held_by_orders(variant)) <= MOST_STOCK) =>
            {
                let mut next = self.clone();
                next.variant_mut(variant).available = after;
                (Expect::Accepted, Some(next))
            }
            _ => (
                Expect::Refused(format!("{available} {delta:+} is outside 0..={MOST_STOCK}")),
                None,
            ),
        }
    }

    /// A compare-and-set of a variant's stock.
    pub fn plan_set_stock(&self, variant: i64, expected: i64, new: i64) -> (Expect, Option<Model>) {
        let available = self.variant(variant).available;
        if expected != available {
            return (
                Expect::Refused(format!("expected {expected}, {available} available")),
                None,
            );
        }
        let held = self.held_by_orders(variant);
        if new < 0 || (new > available && new.saturating_add(held) > MOST_STOCK) {
            return (
                Expect::Refused(format!(
                    "{new} is outside 0..={MOST_STOCK} with {held} on orders"
                )),
                None,
            );
        }
        let mut next = self.clone();
        next.variant_mut(variant).available = new;
        let expect = if new == available {
            Expect::Either("a set to the same quantity".into())
        } else {
            Expect::Accepted
        };
        (expect, Some(next))
    }

    /// A withdrawal request of `amount` (`None`: not a valid amount).
    pub fn plan_withdrawal(&self, account: i64, amount: Option<Decimal>) -> Expect {
        let Some(amount) = amount.filter(|a| a.normalize().scale() <= 2) else {
            return Expect::Refused("not an amount in piastres".into());
        };
        if amount < self.minimum {
            return Expect::Refused(format!("{amount} is below the minimum {}", self.minimum));
        }
        let ready = self
            .observed_ready
            .get(&account)
            .copied()
            .unwrap_or_default();
        if amount > ready {
            return Expect::Refused(format!("{amount} is over ready {ready}"));
        }
        Expect::Accepted
    }

    /// A decision on withdrawal `index`.
    pub fn plan_withdrawal_decision(&self, index: usize, pay: bool) -> (Expect, Option<Model>) {
        let w = &self.withdrawals[index];
        if !w.pending {
            return (
                Expect::Refused(format!("withdrawal {} is decided", w.id)),
                None,
            );
        }
        let mut next = self.clone();
        next.withdrawals[index].pending = false;
        let a = next
            .accounts
            .iter_mut()
            .find(|a| a.id == w.account)
            .expect("account");
        a.pending -= w.amount;
        if pay {
            a.paid += w.amount;
        }
        (Expect::Accepted, Some(next))
    }

    /// The clock moves.
    pub fn advance(&mut self, seconds: i64) {
        self.now += Duration::seconds(seconds);
    }
}
