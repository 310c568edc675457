//! After every step: everything observable compared with the model, each law on its own.

use std::collections::BTreeMap;

use rust_decimal::Decimal;
use serde_json::Value;

use super::adapter;
use super::model::{self, MOST_STOCK};
use super::ops::ACCOUNTS;
use super::runner::{World, statement};
use super::{Break, law};

fn money(v: &Value) -> Option<Decimal> {
    v.as_str().and_then(|s| s.parse().ok())
}

fn count_text(c: Option<i64>) -> String {
    c.map_or("null".into(), |c| c.to_string())
}

impl World<'_> {
    /// Compares everything observable with the model; records each account's `ready` in the
    /// model for the next step's withdrawals.
    pub async fn check(&mut self) -> Vec<Break> {
        let mut breaks = Vec::new();
        self.check_stock(&mut breaks).await;
        self.check_orders(&mut breaks).await;
        self.check_money(&mut breaks).await;
        self.check_quotes(&mut breaks).await;
        breaks
    }

    async fn check_stock(&self, breaks: &mut Vec<Break>) {
        let m = &self.model;
        let ids: Vec<i64> = m.variants.iter().map(|v| v.id).collect();
        let facts = match adapter::variants(&self.h.engine, &ids).await {
            Ok(f) => f,
            Err(e) => return breaks.push(Break::new(law::NO_5XX, e)),
        };
        for (v, fact) in m.variants.iter().zip(&facts) {
            if fact.available != v.available {
                breaks.push(Break::new(
                    law::AVAILABLE,
                    format!(
                        "variant {}: available {}, expected {}",
                        v.id, fact.available, v.available
                    ),
                ));
            }
            if !(0..=MOST_STOCK).contains(&fact.available) {
                breaks.push(Break::new(
                    law::BOUNDS,
                    format!(
                        "variant {}: available {} outside 0..={MOST_STOCK}",
                        v.id, fact.available
                    ),
                ));
            }
            let history = match adapter::history(&self.h.engine, v.id).await {
                Ok(h) => h,
                Err(e) => {
                    breaks.push(Break::new(law::NO_5XX, e));
                    continue;
                }
            };
            let sum: i64 = history.iter().map(|e| e.delta).sum();
            if sum != fact.available {
                breaks.push(Break::new(
                    law::HISTORY_SUM,
                    format!(
                        "variant {}: history sums to {sum} ({} entries), available {}",
                        v.id,
                        history.len(),
                        fact.available
                    ),
                ));
            }
            let of = |reason: &str, order: Option<i64>, quote: Option<i64>| -> i64 {
                history
                    .iter()
                    .filter(|e| e.reason == reason && (order.is_none() || e.order == order))
                    .filter(|e| quote.is_none() || e.quote == quote)
                    .map(|e| e.delta)
                    .sum()
            };
            for o in &m.orders {
                let pieces: i64 = o
                    .lines
                    .iter()
                    .filter(|l| l.variant == v.id)
                    .map(|l| l.quantity)
                    .sum();
                if pieces == 0 {
                    continue;
                }
                let (reserved, released) = (
                    of("reservation", Some(o.id), None),
                    of("release", Some(o.id), None),
                );
                let want_released = if o.cancelled { pieces } else { 0 };
                if reserved != -pieces || released != want_released {
                    breaks.push(Break::new(
                        law::ORDER_ENTRIES,
                        format!(
                            "order {} on variant {}: reservation entries {reserved} (expected {}), release entries {released} (expected {want_released})",
                            o.id, v.id, -pieces
                        ),
                    ));
                }
                let restocked = of("restock", Some(o.id), None);
                let want = m.restocked(o).get(&v.id).copied().unwrap_or(0);
                if restocked != want {
                    breaks.push(Break::new(
                        law::RESTOCK,
                        format!("order {} on variant {}: restock entries sum to {restocked}, its returned count is {want}", o.id, v.id),
                    ));
                }
            }
            for q in m
                .quotes
                .iter()
                .filter(|q| q.variant == v.id && q.status == "accepted")
            {
                let received = of("received", None, Some(q.id));
                if received != q.quantity {
                    breaks.push(Break::new(
                        law::RECEIVED,
                        format!(
                            "quote {} accepted: received entries {received}, quantity {}",
                            q.id, q.quantity
                        ),
                    ));
                }
            }
        }
    }

    async fn check_orders(&self, breaks: &mut Vec<Break>) {
        const NAMES: [&str; 5] = [
            "delivered_quantity",
            "returned_quantity",
            "damaged_quantity",
            "lost_quantity",
            "destroyed_quantity",
        ];
        for o in &self.model.orders {
            let key = &self.keys[self.ids.iter().position(|a| *a == o.marketer).unwrap_or(0)];
            let r = self.h.get(key, &format!("/api/v1/orders/{}", o.id)).await;
            if r.status != 200 {
                breaks.push(Break::new(
                    law::NO_5XX,
                    format!("GET /orders/{}: {}", o.id, r.status),
                ));
                continue;
            }
            let data = r.json()["data"].clone();
            if data["status"]["key"] != o.status {
                breaks.push(Break::new(
                    law::STATUS,
                    format!(
                        "order {}: status {}, expected {}",
                        o.id, data["status"]["key"], o.status
                    ),
                ));
            }
            for line in &o.lines {
                let Ok(want) = model::rendered(line, o.settled) else {
                    continue;
                };
                let shown = data["lines"]
                    .as_array()
                    .and_then(|ls| ls.iter().find(|l| l["id"] == line.id))
                    .cloned()
                    .unwrap_or(Value::Null);
                let got: Vec<Option<i64>> = NAMES.iter().map(|n| shown[*n].as_i64()).collect();
                if got != want {
                    let text = |c: &[Option<i64>]| {
                        NAMES
                            .iter()
                            .zip(c)
                            .map(|(n, c)| {
                                format!("{}={}", n.trim_end_matches("_quantity"), count_text(*c))
                            })
                            .collect::<Vec<_>>()
                            .join(" ")
                    };
                    breaks.push(Break::new(
                        law::COUNTS,
                        format!(
                            "order {} ({}) line {} of {} pieces: shows {}, expected {}",
                            o.id,
                            o.status,
                            line.id,
                            line.quantity,
                            text(&got),
                            text(&want)
                        ),
                    ));
                }
            }
        }
    }

    async fn check_money(&mut self, breaks: &mut Vec<Break>) {
        let mut ready_seen = BTreeMap::new();
        for (i, account) in self.model.accounts.iter().enumerate() {
            let who = format!("{} (account {})", ACCOUNTS[i], account.id);
            let r = self.h.get(&self.keys[i], "/api/v1/wallet").await;
            let w = r.json()["data"].clone();
            let (Some(ready), Some(held)) = (money(&w["ready"]), money(&w["held"]["amount"]))
            else {
                breaks.push(Break::new(
                    law::NO_5XX,
                    format!("{who}: wallet {}", r.status),
                ));
                continue;
            };
            ready_seen.insert(account.id, ready);
            let expected = self.model.balance(account.id);
            if ready + held != expected {
                breaks.push(Break::new(
                    law::WALLET_SUM,
                    format!("{who}: ready {ready} + held {held} = {}, expected {expected} (earnings of settled orders - withdrawals pending or paid)", ready + held),
                ));
            }
            if ready < Decimal::ZERO || held < Decimal::ZERO {
                breaks.push(Break::new(
                    law::NONNEGATIVE,
                    format!("{who}: ready {ready}, held {held}"),
                ));
            }
            let (received, pending) = (
                money(&w["received"]),
                money(&w["pending_withdrawals"]["amount"]),
            );
            let want = (
                Some(account.base_received + account.paid),
                Some(account.base_pending + account.pending),
            );
            if (received, pending) != want {
                breaks.push(Break::new(
                    law::WITHDRAWALS,
                    format!(
                        "{who}: received {received:?}, pending {pending:?}; expected {:?}, {:?}",
                        want.0, want.1
                    ),
                ));
            }
            if !account.supplier {
                continue;
            }
            let entries = statement(self.h, &self.keys[i]).await;
            let newest = entries
                .first()
                .and_then(|e| money(&e["balance"]))
                .unwrap_or(Decimal::ZERO);
            let want = account.base_balance + self.model.earned(account.id)
                - account.pending
                - account.paid;
            if newest != want {
                breaks.push(Break::new(
                    law::STATEMENT_BALANCE,
                    format!("{who}: newest statement balance {newest}, expected {want}"),
                ));
            }
            if newest != ready + held {
                breaks.push(Break::new(
                    law::RECONCILES,
                    format!("{who}: newest balance {newest} != ready {ready} + held {held}"),
                ));
            }
            if newest < Decimal::ZERO {
                breaks.push(Break::new(
                    law::NONNEGATIVE,
                    format!("{who}: statement balance {newest}"),
                ));
            }
            for o in &self.model.orders {
                let sum: Decimal = entries
                    .iter()
                    .filter(|e| e["order"]["id"] == o.id)
                    .map(|e| {
                        let amount = money(&e["amount"]).unwrap_or_default();
                        if e["direction"] == "debit" {
                            -amount
                        } else {
                            amount
                        }
                    })
                    .sum();
                let want = self
                    .model
                    .earnings(o)
                    .get(&account.id)
                    .copied()
                    .unwrap_or_default();
                if sum != want {
                    breaks.push(Break::new(
                        law::ORDER_CREDITS,
                        format!("{who}: order {}'s entries sum to {sum}, expected {want} (supply price x delivered)", o.id),
                    ));
                }
            }
        }
        self.model.observed_ready = ready_seen;
    }

    async fn check_quotes(&self, breaks: &mut Vec<Break>) {
        for q in &self.model.quotes {
            let i = self.ids.iter().position(|a| *a == q.supplier).unwrap_or(2);
            let r = self
                .h
                .get(&self.keys[i], &format!("/api/v1/quotes/{}", q.id))
                .await;
            let want = self.model.quote_status(q);
            let got = r.json()["data"]["status"]["key"].clone();
            if got != want {
                breaks.push(Break::new(
                    law::QUOTE_STATUS,
                    format!(
                        "quote {} (variant {}): status {got} ({}), expected {want}",
                        q.id, q.variant, r.status
                    ),
                ));
            }
        }
    }
}
