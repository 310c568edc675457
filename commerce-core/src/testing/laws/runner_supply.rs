//! The runner's quotes and withdrawals (the rest is in `runner.rs`).

use chrono::Duration;
use http::Method;
use rust_decimal::Decimal;
use serde_json::json;

use super::adapter;
use super::model::{self, Expect, Model};
use super::ops::Amount;
use super::runner::{Got, Keyed, World, got_call, got_http};
use super::{Break, law};

impl World<'_> {
    pub(super) async fn quote(
        &mut self,
        supplier: usize,
        variant: usize,
        price: &str,
        quantity: i64,
        valid_hours: Option<i64>,
        keyed: bool,
    ) -> (Expect, Got, Option<Model>) {
        let v = self.model.variants[variant % self.model.variants.len()].id;
        let account = self.ids[2 + supplier];
        let over = price
            .parse::<Decimal>()
            .is_ok_and(|p| p > Decimal::from(1_000_000));
        if over && self.without.iter().any(|w| w == "over_price") {
            return (
                Expect::Skip("LAWS_WITHOUT=over_price".into()),
                Got::NotSent,
                None,
            );
        }
        let expect = self
            .model
            .plan_quote(account, v, price, quantity, valid_hours);
        let mut body = json!({"variant_id": v, "unit_price": price, "quantity": quantity});
        let until = valid_hours.map(|h| self.model.now + Duration::hours(h));
        if let Some(until) = until {
            body["valid_until"] = json!(crate::time::cairo_timestamp(until));
        }
        let body = body.to_string();
        let key = format!("laws-quote-{}", self.keyed.len() + 1);
        let headers: Vec<(&str, &str)> = if keyed {
            vec![("idempotency-key", key.as_str())]
        } else {
            Vec::new()
        };
        let r = self
            .h
            .request(
                Method::POST,
                Some(&self.keys[2 + supplier]),
                "/api/v1/quotes",
                body.clone(),
                &headers,
            )
            .await;
        if keyed {
            self.keyed.push(Keyed {
                key,
                supplier,
                body,
                status: r.status.as_u16(),
                answer: r.body.clone(),
                at: self.model.now,
            });
        }
        let got = got_http(&r);
        let mut next = None;
        if got == Got::Done {
            let mut after = self.model.clone();
            after.quotes.push(model::Quote {
                id: r.json()["data"]["id"].as_i64().unwrap_or_default(),
                supplier: account,
                variant: v,
                quantity,
                unit_price: price.parse().unwrap_or_default(),
                status: "pending",
                valid_until: until,
            });
            next = Some(after);
        }
        (expect, got, next)
    }

    pub(super) async fn replay(&mut self, nth: usize) -> (Expect, Got, Option<Model>) {
        if self.keyed.is_empty() {
            return (
                Expect::Skip("no keyed quote yet".into()),
                Got::NotSent,
                None,
            );
        }
        let k = &self.keyed[nth % self.keyed.len()];
        if k.status != 201 {
            return (
                Expect::Skip(format!("the first answer was {}", k.status)),
                Got::NotSent,
                None,
            );
        }
        if self.model.now - k.at >= self.replay_window {
            return (
                Expect::Skip("past the replay window".into()),
                Got::NotSent,
                None,
            );
        }
        let r = self
            .h
            .request(
                Method::POST,
                Some(&self.keys[2 + k.supplier]),
                "/api/v1/quotes",
                k.body.clone(),
                &[("idempotency-key", k.key.as_str())],
            )
            .await;
        let got = got_http(&r);
        if !(r.status.as_u16() == k.status && r.body == k.answer) {
            self.extra.push(Break::new(
                law::REPLAY,
                format!(
                    "answered {} {} instead of the first answer {} {}",
                    r.status.as_u16(),
                    String::from_utf8_lossy(&r.body),
                    k.status,
                    String::from_utf8_lossy(&k.answer)
                ),
            ));
        }
        (Expect::Either("a replay".into()), got, None)
    }

    pub(super) async fn withdraw(
        &mut self,
        account: usize,
        amount: Amount,
    ) -> (Expect, Got, Option<Model>) {
        let id = self.ids[account];
        let ready = self
            .model
            .observed_ready
            .get(&id)
            .copied()
            .unwrap_or_default();
        let amount = match amount {
            Amount::Fixed(a) => a.parse::<Decimal>().ok(),
            Amount::AllReady => Some(ready),
            Amount::OverReady => Some(ready + Decimal::new(1, 2)),
        };
        let expect = self.model.plan_withdrawal(id, amount);
        let Some(amount) = amount else {
            return (expect, Got::NotSent, None);
        };
        let (called, wid) = adapter::request_withdrawal(&self.h.engine, id, amount).await;
        let got = got_call(called);
        let mut next = None;
        if let (Got::Done, Some(wid)) = (&got, wid) {
            let mut after = self.model.clone();
            after.withdrawals.push(model::Withdrawal {
                id: wid,
                account: id,
                amount,
                pending: true,
            });
            let a = after
                .accounts
                .iter_mut()
                .find(|a| a.id == id)
                .expect("account");
            a.pending += amount;
            next = Some(after);
        }
        (expect, got, next)
    }
}
