//! The reference model: the laws of stock and money recomputed from first principles, in
//! plain maps and integers. It knows nothing of the engine's code; it says what each
//! operation must do (accepted, refused, or either where the laws leave it open) and what
//! every figure must read afterwards.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use rust_decimal::{Decimal, RoundingStrategy};

/// The most a variant may hold.
pub(super) const MOST_STOCK: i64 = 1_000_000_000;
/// Pieces of an order line: 1 to this.
const MOST_LINE_QUANTITY: i64 = 999;

/// What the model says an operation must do.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Expect {
    /// Accepted (2xx), with the model's change.
    Accepted,
    /// Refused (4xx), nothing written: why.
    Refused(String),
    /// The laws allow either: why. The model follows what happened.
    Either(String),
    /// The laws do not say what it does: not sent.
    Skip(String),
}

/// Where an order's pieces settled: the family whose count takes the uncounted pieces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Settled {
    /// `order_delivered` or `order_partially_delivered`: uncounted pieces are delivered.
    Delivered,
    /// `order_returned`: uncounted pieces are returned.
    Returned,
}

/// The five counts, in this order: delivered, returned, damaged, lost, destroyed.
pub(super) type Counts = [Option<i64>; 5];

/// A variant.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Variant {
    /// Id.
    pub id: i64,
    /// Its product.
    pub product: i64,
    /// Pieces available.
    pub available: i64,
    /// What a supplier is paid per piece on a new order.
    pub supply_price: Decimal,
    /// The warranties of its product.
    pub warranties: Vec<i64>,
    /// Pieces the orders of the seed held when the run began (and may give back).
    pub held_before: i64,
}

/// An order line.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Line {
    /// Id.
    pub id: i64,
    /// Variant.
    pub variant: i64,
    /// Pieces.
    pub quantity: i64,
    /// Profit per piece.
    pub profit: Decimal,
    /// Supply price per piece, kept at placement.
    pub supply_price: Decimal,
    /// The supplier, kept at placement.
    pub supplier: Option<i64>,
    /// Counts as reported (merged).
    pub reported: Counts,
}

/// An order.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Order {
    /// Id.
    pub id: i64,
    /// The marketer's account.
    pub marketer: i64,
    /// Status key.
    pub status: &'static str,
    /// Where its pieces settled, once they did.
    pub settled: Option<Settled>,
    /// Whether it was cancelled (its reservation released).
    pub cancelled: bool,
    /// Lines.
    pub lines: Vec<Line>,
}

/// A quote.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Quote {
    /// Id.
    pub id: i64,
    /// The supplier that made it.
    pub supplier: i64,
    /// Variant.
    pub variant: i64,
    /// Pieces.
    pub quantity: i64,
    /// Price per piece.
    pub unit_price: Decimal,
    /// `pending`, `accepted`, `rejected`, `withdrawn` (or `expired` as stored at the start).
    pub status: &'static str,
    /// End of the offer.
    pub valid_until: Option<DateTime<Utc>>,
}

/// An account's money as the model knows it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Account {
    /// Id.
    pub id: i64,
    /// A supplier (else a marketer).
    pub supplier: bool,
    /// `ready + held` at the start (the seed's orders), trusted.
    pub base: Decimal,
    /// `received` at the start.
    pub base_received: Decimal,
    /// `pending_withdrawals.amount` at the start.
    pub base_pending: Decimal,
    /// The newest statement balance at the start (suppliers).
    pub base_balance: Decimal,
    /// Withdrawals requested in the run and still pending.
    pub pending: Decimal,
    /// Withdrawals requested in the run and paid.
    pub paid: Decimal,
}

/// A withdrawal requested in the run.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Withdrawal {
    /// Id.
    pub id: i64,
    /// The account.
    pub account: i64,
    /// Amount.
    pub amount: Decimal,
    /// Still pending.
    pub pending: bool,
}

/// The whole model.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Model {
    /// The clock.
    pub now: DateTime<Utc>,
    /// Commission percent on a marketer's profit.
    pub commission_percent: Decimal,
    /// Smallest withdrawal.
    pub minimum: Decimal,
    /// Variants used by the run, in the script's order.
    pub variants: Vec<Variant>,
    /// Products and their suppliers, in the script's order.
    pub products: Vec<(i64, Option<i64>)>,
    /// Warranties: id and product, in the script's order.
    pub warranties: Vec<(i64, i64)>,
    /// Orders placed in the run.
    pub orders: Vec<Order>,
    /// Quotes (the seed's and the run's), by id.
    pub quotes: Vec<Quote>,
    /// The accounts, in [`ACCOUNTS`](super::ops::ACCOUNTS) order.
    pub accounts: Vec<Account>,
    /// Withdrawals requested in the run.
    pub withdrawals: Vec<Withdrawal>,
    /// `ready` as last read, per account (a withdrawal takes at most that).
    pub observed_ready: BTreeMap<i64, Decimal>,
}

/// Money rounded to piastres, half away from zero.
pub(super) fn round_money(amount: Decimal) -> Decimal {
    amount.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero)
}

/// The family of a status key.
pub(super) fn family(status: &str) -> &'static str {
    match status {
        "order_pending" => "pending",
        "order_confirmed" | "order_preparing" => "confirmed",
        "order_shipped" => "shipping",
        "order_delivered" | "order_partially_delivered" => "delivered",
        "order_returned" => "returned",
        "order_archived" => "archived",
        _ => "cancelled",
    }
}

/// Whether the platform may move an order from `from` to `to` (docs/orders.md).
fn may_move(from: &str, to: &str) -> bool {
    matches!(
        (from, to),
        (
            "order_pending",
            "order_confirmed" | "rejected_by_customer" | "order_cancelled"
        ) | (
            "order_confirmed",
            "order_preparing" | "order_shipped" | "order_cancelled"
        ) | ("order_preparing", "order_shipped" | "order_cancelled")
            | (
                "order_shipped",
                "order_delivered" | "order_partially_delivered" | "order_returned"
            )
            | (
                "order_delivered"
                    | "order_partially_delivered"
                    | "order_returned"
                    | "rejected_by_Marketer"
                    | "rejected_by_customer"
                    | "order_cancelled",
                "order_archived"
            )
    )
}

/// The natural next status from `from`, `choice` picking among several.
pub(super) fn next_status(from: &str, choice: u8) -> Option<&'static str> {
    let options: &[&'static str] = match from {
        "order_pending" => &[
            "order_confirmed",
            "order_confirmed",
            "order_confirmed",
            "order_cancelled",
            "rejected_by_customer",
        ],
        "order_confirmed" => &[
            "order_shipped",
            "order_shipped",
            "order_preparing",
            "order_cancelled",
        ],
        "order_preparing" => &["order_shipped", "order_shipped", "order_cancelled"],
        "order_shipped" => &[
            "order_delivered",
            "order_partially_delivered",
            "order_returned",
            "order_delivered",
        ],
        "order_archived" => &[],
        _ => &["order_archived"],
    };
    (!options.is_empty()).then(|| options[usize::from(choice) % options.len()])
}

/// A line's counts as `GET /orders/{id}` must render them: the completed counts once settled
/// (integers), the reported ones before. `Err` when the laws do not say (the family's own
/// count was given and leaves pieces uncounted; delivered pieces on a returned order).
pub(super) fn rendered(line: &Line, settled: Option<Settled>) -> Result<Counts, String> {
    let Some(settled) = settled else {
        let r = line.reported;
        return Ok([
            r[0],
            r[1],
            Some(r[2].unwrap_or(0)),
            Some(r[3].unwrap_or(0)),
            Some(r[4].unwrap_or(0)),
        ]);
    };
    let fill = match settled {
        Settled::Delivered => 0,
        Settled::Returned => 1,
    };
    if settled == Settled::Returned && line.reported[0].is_some_and(|d| d > 0) {
        return Err("delivered pieces on a returned order".into());
    }
    let others: i64 = (0..5)
        .filter(|i| *i != fill)
        .map(|i| line.reported[i].unwrap_or(0))
        .sum();
    let mut out = line.reported.map(|c| Some(c.unwrap_or(0)));
    match line.reported[fill] {
        Some(given) if given + others != line.quantity => {
            return Err(format!(
                "the {} count is given ({given}) and {} pieces are left uncounted",
                ["delivered", "returned"][fill],
                line.quantity - given - others
            ));
        }
        Some(_) => {}
        None => out[fill] = Some(line.quantity - others),
    }
    Ok(out)
}

fn completed(line: &Line, settled: Option<Settled>) -> [i64; 5] {
    match (settled, rendered(line, settled)) {
        (Some(_), Ok(counts)) => counts.map(|c| c.unwrap_or(0)),
        _ => [0; 5],
    }
}

impl Model {
    /// The variant (an index into `variants`) a count of the shelf names by `index`: below
    /// 8, the variant at that index; from 8, the first line's variant of one of the run's
    /// settled orders (the newest for 8), so that counts often empty a shelf an order's
    /// returned pieces went back to.
    pub fn shelf(&self, index: usize) -> usize {
        let settled: Vec<&Order> = self.orders.iter().filter(|o| o.settled.is_some()).collect();
        let of_order = index
            .checked_sub(8)
            .filter(|_| !settled.is_empty())
            .map(|back| settled[settled.len() - 1 - back % settled.len()])
            .and_then(|o| o.lines.first())
            .and_then(|l| self.variants.iter().position(|v| v.id == l.variant));
        of_order.unwrap_or(index % self.variants.len())
    }

    /// The variant with this id.
    pub fn variant_mut(&mut self, id: i64) -> &mut Variant {
        self.variants
            .iter_mut()
            .find(|v| v.id == id)
            .expect("a variant of the model")
    }

    /// The variant with this id.
    pub fn variant(&self, id: i64) -> &Variant {
        self.variants
            .iter()
            .find(|v| v.id == id)
            .expect("a variant of the model")
    }

    /// The supplier of a product.
    pub fn supplier_of(&self, product: i64) -> Option<i64> {
        self.products
            .iter()
            .find(|(p, _)| *p == product)
            .and_then(|(_, s)| *s)
    }

    /// What an order has earned, per account: the marketer's net profit on the delivered
    /// pieces (commission on the order's profit sum) and each supplier's supply price times
    /// its delivered pieces. Nothing before the order settled.
    pub fn earnings(&self, order: &Order) -> BTreeMap<i64, Decimal> {
        let mut out = BTreeMap::new();
        if order.settled.is_none() {
            return out;
        }
        let mut profit = Decimal::ZERO;
        for line in &order.lines {
            let delivered = Decimal::from(completed(line, order.settled)[0]);
            profit += line.profit * delivered;
            if let Some(supplier) = line.supplier {
                *out.entry(supplier).or_insert(Decimal::ZERO) += line.supply_price * delivered;
            }
        }
        let profit = round_money(profit);
        let commission = round_money(profit * self.commission_percent / Decimal::ONE_HUNDRED);
        *out.entry(order.marketer).or_insert(Decimal::ZERO) += profit - commission;
        out
    }

    /// Pieces returned to stock by an order, per variant (its completed returned counts).
    pub fn restocked(&self, order: &Order) -> BTreeMap<i64, i64> {
        let mut out = BTreeMap::new();
        for line in &order.lines {
            *out.entry(line.variant).or_insert(0) += completed(line, order.settled)[1];
        }
        out
    }

    /// Pieces of `variant` its orders hold and may still give back (a release, a restock):
    /// reserved by orders never cancelled, less what came back already, the seed's included.
    /// An operator's delta or a receipt is refused when `available` plus these would pass
    /// [`MOST_STOCK`], so that nothing given back later takes `available` past it.
    pub fn held_by_orders(&self, variant: i64) -> i64 {
        self.variant(variant).held_before
            + self
                .orders
                .iter()
                .filter(|o| !o.cancelled)
                .map(|o| {
                    let reserved: i64 = o
                        .lines
                        .iter()
                        .filter(|l| l.variant == variant)
                        .map(|l| l.quantity)
                        .sum::<i64>();
                    reserved - self.restocked(o).get(&variant).copied().unwrap_or(0)
                })
                .sum::<i64>()
    }

    /// Earnings of the run's settled orders for an account.
    pub fn earned(&self, account: i64) -> Decimal {
        self.orders
            .iter()
            .filter_map(|o| self.earnings(o).get(&account).copied())
            .sum()
    }

    /// An account.
    pub fn account(&self, id: i64) -> &Account {
        self.accounts
            .iter()
            .find(|a| a.id == id)
            .expect("an account of the model")
    }

    /// `ready + held.amount` as it must read: earnings less withdrawals pending or paid.
    pub fn balance(&self, id: i64) -> Decimal {
        let a = self.account(id);
        a.base + self.earned(id) - a.pending - a.paid
    }

    /// A quote's status as it reads now (a pending one past its end is `expired`).
    pub fn quote_status(&self, quote: &Quote) -> &'static str {
        match (quote.status, quote.valid_until) {
            ("pending", Some(until)) if self.now >= until => "expired",
            (status, _) => status,
        }
    }

    /// Checks the change of one order from `before` to `after` against stock and money: the
    /// pieces it takes back from stock must be there, and no balance may go below zero.
    fn settle_change(&mut self, before: &Order, after: &Order) -> Expect {
        for line in &after.lines {
            if let Err(why) = rendered(line, after.settled) {
                return Expect::Skip(format!("the laws do not say: {why}"));
            }
        }
        let mut either = None;
        let (old, new) = (self.restocked(before), self.restocked(after));
        for (variant, pieces) in &new {
            let delta = pieces - old.get(variant).copied().unwrap_or(0);
            let available = self.variant(*variant).available;
            if available + delta < 0 {
                return Expect::Refused(format!(
                    "takes back {} returned pieces of variant {variant}, {available} available",
                    -delta
                ));
            }
            if available + delta > MOST_STOCK {
                either = Some(format!(
                    "variant {variant} would hold {}",
                    available + delta
                ));
            }
            self.variant_mut(*variant).available += delta;
        }
        let (old, new) = (self.earnings(before), self.earnings(after));
        for account in old.keys().chain(new.keys()) {
            let diff = new.get(account).copied().unwrap_or_default()
                - old.get(account).copied().unwrap_or_default();
            if diff >= Decimal::ZERO {
                continue;
            }
            let balance = self.balance(*account);
            if balance + diff < Decimal::ZERO {
                return Expect::Refused(format!(
                    "account {account}'s balance {balance} would fall by {}",
                    -diff
                ));
            }
            let ready = self
                .observed_ready
                .get(account)
                .copied()
                .unwrap_or_default();
            if -diff > ready {
                either = Some(format!(
                    "account {account} loses {} with {ready} ready (held money may cover it)",
                    -diff
                ));
            }
        }
        either.map_or(Expect::Accepted, Expect::Either)
    }

    /// Merges `counts` (line index, counts) onto `order`'s lines: `Err` (refused) for a line
    /// it does not have, a negative count, or counts over a line's quantity.
    fn merged(order: &Order, counts: &[(usize, Counts)]) -> Result<Order, String> {
        let mut after = order.clone();
        for (index, given) in counts {
            let line = after
                .lines
                .get_mut(*index)
                .ok_or_else(|| format!("line {} is not the order's", index + 1))?;
            for (slot, count) in line.reported.iter_mut().zip(given) {
                if let Some(count) = count {
                    if *count < 0 {
                        return Err(format!("a negative count ({count})"));
                    }
                    *slot = Some(*count);
                }
            }
            let sum: i64 = line.reported.iter().map(|c| c.unwrap_or(0)).sum();
            if sum > line.quantity {
                return Err(format!("counts {sum} over the line's {}", line.quantity));
            }
        }
        Ok(after)
    }

    /// A platform move of order `index` to `to` with `counts`: the expectation, and the model
    /// after it (when it may be accepted).
    pub fn plan_move(
        &self,
        index: usize,
        to: &'static str,
        counts: &[(usize, Counts)],
    ) -> (Expect, Option<Model>) {
        let order = &self.orders[index];
        if !may_move(order.status, to) {
            return (
                Expect::Refused(format!("{} cannot move to {to}", order.status)),
                None,
            );
        }
        let settles = matches!(family(to), "delivered" | "returned");
        let counting = settles || (to == "order_archived" && order.settled.is_some());
        let any_count = counts.iter().any(|(_, c)| c.iter().any(Option::is_some));
        if any_count && !counting {
            return (
                Expect::Refused(format!("counts on a move to {to}: 422 on lines")),
                None,
            );
        }
        let empty_lines = !counts.is_empty() && !counting;
        let counts = if counting { counts } else { &[] };
        let mut after = match Self::merged(order, counts) {
            Ok(after) => after,
            Err(why) => return (Expect::Refused(why), None),
        };
        after.status = to;
        if settles {
            after.settled = Some(if to == "order_returned" {
                Settled::Returned
            } else {
                Settled::Delivered
            });
        }
        let mut next = self.clone();
        if family(to) == "cancelled" {
            after.cancelled = true;
            for line in &after.lines {
                next.variant_mut(line.variant).available += line.quantity;
            }
        }
        let mut expect = next.settle_change(order, &after);
        if empty_lines && expect == Expect::Accepted {
            expect = Expect::Either(format!("lines without counts on a move to {to}"));
        }
        next.orders[index] = after;
        (expect, Some(next))
    }

    /// The operator's correction of order `index`'s lines.
    pub fn plan_correction(
        &self,
        index: usize,
        counts: &[(usize, Counts)],
    ) -> (Expect, Option<Model>) {
        let order = &self.orders[index];
        if !counts.iter().any(|(_, c)| c.iter().any(Option::is_some)) {
            return (
                Expect::Either("a correction with no counts".into()),
                Some(self.clone()),
            );
        }
        if order.settled.is_none() {
            return (
                Expect::Refused(format!("a correction of an order {}", order.status)),
                None,
            );
        }
        let after = match Self::merged(order, counts) {
            Ok(after) => after,
            Err(why) => return (Expect::Refused(why), None),
        };
        let mut next = self.clone();
        let expect = next.settle_change(order, &after);
        next.orders[index] = after;
        (expect, Some(next))
    }

    /// A marketer's cancel of order `index`.
    pub fn plan_cancel(&self, index: usize) -> (Expect, Option<Model>) {
        let order = &self.orders[index];
        if order.status != "order_pending" {
            return (
                Expect::Refused(format!("not cancellable: {}", order.status)),
                None,
            );
        }
        let mut next = self.clone();
        for line in &order.lines {
            next.variant_mut(line.variant).available += line.quantity;
        }
        next.orders[index].status = "rejected_by_Marketer";
        next.orders[index].cancelled = true;
        (Expect::Accepted, Some(next))
    }

    /// Placing lines (variant id, quantity, profit, warranty id).
    pub fn plan_place(&self, lines: &[(i64, i64, Decimal, Option<i64>)]) -> Expect {
        let mut wanted: BTreeMap<i64, i64> = BTreeMap::new();
        for (variant, quantity, _, warranty) in lines {
            if !(1..=MOST_LINE_QUANTITY).contains(quantity) {
                return Expect::Refused(format!("quantity {quantity}"));
            }
            if let Some(w) = warranty
                && !self.variant(*variant).warranties.contains(w)
            {
                return Expect::Refused(format!(
                    "warranty {w} is not of variant {variant}'s product"
                ));
            }
            *wanted.entry(*variant).or_insert(0) += quantity;
        }
        for (variant, pieces) in wanted {
            let available = self.variant(variant).available;
            if pieces > available {
                return Expect::Refused(format!(
                    "{pieces} pieces of variant {variant}, {available} available"
                ));
            }
        }
        Expect::Accepted
    }

    /// Records an order placed: its pieces reserved, each line keeping its variant's supplier
    /// and supply price.
    pub fn place(
        &mut self,
        id: i64,
        marketer: i64,
        lines: &[(i64, i64, Decimal, Option<i64>)],
        line_ids: &[i64],
    ) {
        let mut kept = Vec::new();
        for ((variant, quantity, profit, _), line_id) in lines.iter().zip(line_ids) {
            let v = self.variant(*variant).clone();
            kept.push(Line {
                id: *line_id,
                variant: *variant,
                quantity: *quantity,
                profit: *profit,
                supply_price: v.supply_price,
                supplier: self.supplier_of(v.product),
                reported: [None; 5],
            });
            self.variant_mut(*variant).available -= quantity;
        }
        self.orders.push(Order {
            id,
            marketer,
            status: "order_pending",
            settled: None,
            cancelled: false,
            lines: kept,
        });
    }
}
