//! The runner: applies each operation to a real engine (HTTP as a client would, the operator
//! through [`adapter`](super::adapter)), compares the answer with the model's expectation,
//! and keeps the model in step.

use bytes::Bytes;
use chrono::Duration;
use http::Method;
use rust_decimal::Decimal;
use serde_json::{Value, json};

use super::adapter::{self, Called, Report};
use super::model::{self, Counts, Expect, Model};
use super::ops::{CountSpec, LineSpec, Op, Target};
use super::{Break, law};
use crate::model::Ability;
use crate::testing::http::{Harness, TestResponse};

/// A `POST /quotes` sent with an `Idempotency-Key`, and its first answer.
pub(super) struct Keyed {
    pub(super) key: String,
    pub(super) supplier: usize,
    pub(super) body: String,
    pub(super) status: u16,
    pub(super) answer: Bytes,
    pub(super) at: chrono::DateTime<chrono::Utc>,
}

/// The engine under test, its keys and the model.
pub(super) struct World<'h> {
    /// The harness.
    pub h: &'h Harness,
    /// Keys of [`ACCOUNTS`](super::ops::ACCOUNTS).
    pub keys: Vec<String>,
    /// Ids of [`ACCOUNTS`](super::ops::ACCOUNTS).
    pub ids: Vec<i64>,
    /// The model.
    pub model: Model,
    pub(super) keyed: Vec<Keyed>,
    pub(super) replay_window: Duration,
    pub(super) extra: Vec<Break>,
    /// What the last operation resolved to (ids), for the script.
    pub note: String,
    /// `LAWS_WITHOUT`: `early_counts` sends no counts with a move that does not settle.
    pub without: Vec<String>,
}

/// What an operation got.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Got {
    /// Accepted.
    Done,
    /// Refused: the status and code (or the operator's error).
    Refused(String),
    /// A 5xx, a store failure or a panic.
    Broken(String),
    /// Not sent (the model skipped it).
    NotSent,
}

impl std::fmt::Display for Got {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Got::Done => write!(f, "accepted"),
            Got::Refused(why) => write!(f, "refused ({why})"),
            Got::Broken(why) => write!(f, "BROKEN ({why})"),
            Got::NotSent => write!(f, "not sent"),
        }
    }
}

pub(super) fn got_http(r: &TestResponse) -> Got {
    match r.status.as_u16() {
        200..=299 => Got::Done,
        400..=499 => Got::Refused(format!("{} {}", r.status.as_u16(), r.error_code())),
        _ => Got::Broken(format!(
            "{}: {}",
            r.status,
            String::from_utf8_lossy(&r.body)
        )),
    }
}

pub(super) fn got_call(c: Called) -> Got {
    match c {
        Called::Done => Got::Done,
        Called::Refused(why) => Got::Refused(why),
        Called::Broken(why) => Got::Broken(why),
    }
}

const MARKETER: [Ability; 4] = [
    Ability::CatalogRead,
    Ability::OrdersRead,
    Ability::OrdersWrite,
    Ability::WalletRead,
];
const SUPPLIER: [Ability; 4] = [
    Ability::QuotesRead,
    Ability::QuotesWrite,
    Ability::StatementRead,
    Ability::WalletRead,
];

fn money(v: &Value) -> Decimal {
    v.as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or(Decimal::MIN)
}

/// The last page's entries of the statement, newest first (every page).
pub(super) async fn statement(h: &Harness, key: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for page in 1.. {
        let r = h
            .get(key, &format!("/api/v1/statement?per_page=100&page={page}"))
            .await;
        let items = r.json()["data"].as_array().cloned().unwrap_or_default();
        let n = items.len();
        out.extend(items);
        if n < 100 {
            break;
        }
    }
    out
}

impl<'h> World<'h> {
    /// Sets the world up on a seeded harness: a second supplier, keys that never hit a rate
    /// limit, and the model read from what the seed left (trusted as the starting point).
    pub async fn new(h: &'h Harness) -> World<'h> {
        let f = &h.fixture;
        let engine = &h.engine;
        let s2 = adapter::add_supplier(engine).await;
        let ids = vec![f.marketer_a.get(), f.marketer_b.get(), f.supplier.get(), s2];
        let mut keys = Vec::new();
        for (i, id) in ids.iter().enumerate() {
            let abilities: &[Ability] = if i < 2 { &MARKETER } else { &SUPPLIER };
            keys.push(adapter::key(engine, *id, abilities).await);
        }
        let mut variant_ids = adapter::supplier_variants(engine, f.supplier.get()).await;
        variant_ids.push(f.plain_variant.get());
        let facts = adapter::variants(engine, &variant_ids)
            .await
            .expect("the variants");
        let mut products: Vec<(i64, Option<i64>)> = Vec::new();
        for v in &facts {
            if !products.iter().any(|(p, _)| *p == v.product) {
                products.push((v.product, v.supplier));
            }
        }
        let mut warranties = Vec::new();
        for w in f.featured_warranties.iter().chain([&f.foreign_warranty]) {
            if let Some(v) = facts.iter().find(|v| v.warranties.contains(&w.get())) {
                warranties.push((w.get(), v.product));
            }
        }
        let quotes = adapter::quotes(engine)
            .await
            .into_iter()
            .map(|q| model::Quote {
                id: q.id,
                supplier: q.supplier,
                variant: q.variant,
                quantity: q.quantity,
                unit_price: q.unit_price,
                status: match q.status.as_str() {
                    "pending" => "pending",
                    "accepted" => "accepted",
                    "rejected" => "rejected",
                    "withdrawn" => "withdrawn",
                    _ => "expired",
                },
                valid_until: q.valid_until,
            })
            .filter(|q| variant_ids.contains(&q.variant))
            .collect();
        let (commission_percent, minimum, replay_window) = adapter::rules(engine);
        let mut accounts = Vec::new();
        for (i, id) in ids.iter().enumerate() {
            let wallet = h.get(&keys[i], "/api/v1/wallet").await.json()["data"].clone();
            let base_balance = if i >= 2 {
                statement(h, &keys[i])
                    .await
                    .first()
                    .map_or(Decimal::ZERO, |e| money(&e["balance"]))
            } else {
                Decimal::ZERO
            };
            accounts.push(model::Account {
                id: *id,
                supplier: i >= 2,
                base: money(&wallet["ready"]) + money(&wallet["held"]["amount"]),
                base_received: money(&wallet["received"]),
                base_pending: money(&wallet["pending_withdrawals"]["amount"]),
                base_balance,
                pending: Decimal::ZERO,
                paid: Decimal::ZERO,
            });
        }
        // What the seed's orders hold, from each variant's history.
        let mut held_before = std::collections::BTreeMap::new();
        for v in &facts {
            let history = adapter::history(&h.engine, v.id).await.expect("history");
            let held: i64 = history
                .iter()
                .filter(|e| matches!(e.reason.as_str(), "reservation" | "release" | "restock"))
                .map(|e| -e.delta)
                .sum();
            held_before.insert(v.id, held);
        }
        let model = Model {
            now: h.clock.now_utc(),
            commission_percent,
            minimum,
            variants: facts
                .iter()
                .map(|v| model::Variant {
                    id: v.id,
                    product: v.product,
                    available: v.available,
                    supply_price: v.supply_price,
                    warranties: v.warranties.clone(),
                    held_before: held_before.get(&v.id).copied().unwrap_or(0),
                })
                .collect(),
            products,
            warranties,
            orders: Vec::new(),
            quotes,
            accounts,
            withdrawals: Vec::new(),
            observed_ready: Default::default(),
        };
        World {
            h,
            keys,
            ids,
            model,
            keyed: Vec::new(),
            replay_window,
            extra: Vec::new(),
            note: String::new(),
            without: Vec::new(),
        }
    }

    fn marketer_key(&self, account: i64) -> &str {
        let i = self.ids.iter().position(|a| *a == account).unwrap_or(0);
        &self.keys[i]
    }

    fn supplier_key(&self, account: i64) -> &str {
        let i = self.ids.iter().position(|a| *a == account).unwrap_or(2);
        &self.keys[i]
    }

    /// Counts by line index, first mention of a line kept.
    fn counts(specs: &[CountSpec]) -> Vec<(usize, Counts)> {
        let mut out: Vec<(usize, Counts)> = Vec::new();
        for s in specs {
            if !out.iter().any(|(l, _)| *l == s.line) {
                out.push((s.line, s.counts));
            }
        }
        out
    }

    fn line_id(&self, order: usize, line: usize) -> i64 {
        self.model.orders[order]
            .lines
            .get(line)
            .map_or(999_999_999, |l| l.id)
    }

    /// Runs one operation: what the model expected, what the engine did, and the breaks of
    /// the answer laws. The model follows an accepted operation.
    pub async fn step(&mut self, op: &Op) -> (Expect, Got, Vec<Break>) {
        let (expect, got, next) = self.run(op).await;
        let mut breaks = std::mem::take(&mut self.extra);
        match (&expect, &got) {
            (_, Got::Broken(why)) => breaks.push(Break::new(law::NO_5XX, why.clone())),
            (Expect::Accepted, Got::Refused(why)) => breaks.push(Break::new(
                law::AS_PREDICTED,
                format!("expected accepted, got refused: {why}"),
            )),
            (Expect::Refused(why), Got::Done) => breaks.push(Break::new(
                law::of_refusal(why),
                format!("expected refused ({why}), got accepted"),
            )),
            _ => {}
        }
        if got == Got::Done
            && let Some(next) = next
        {
            let ready = std::mem::take(&mut self.model.observed_ready);
            self.model = next;
            self.model.observed_ready = ready;
        }
        (expect, got, breaks)
    }

    async fn run(&mut self, op: &Op) -> (Expect, Got, Option<Model>) {
        self.note = self.resolve(op);
        let skip = |why: &str| (Expect::Skip(why.into()), Got::NotSent, None);
        let orders = self.model.orders.len();
        match op {
            Op::Place { marketer, lines } => self.place(*marketer, lines).await,
            Op::Cancel { .. } | Op::Move { .. } | Op::Correct { .. } if orders == 0 => {
                skip("no order yet")
            }
            Op::Cancel { order } => {
                let i = order % orders;
                let (expect, next) = self.model.plan_cancel(i);
                let o = &self.model.orders[i];
                let key = self.marketer_key(o.marketer).to_owned();
                let path = format!("/api/v1/orders/{}/cancel", o.id);
                let r = self.h.post(&key, &path, &json!({})).await;
                (expect, got_http(&r), next)
            }
            Op::Move { order, to, counts } => self.move_order(order % orders, *to, counts).await,
            Op::Correct { order, counts } => {
                let i = order % orders;
                let counts = Self::counts(counts);
                let early = self.model.orders[i].settled.is_none();
                if early && self.without.iter().any(|w| w == "early_counts") {
                    return skip("LAWS_WITHOUT=early_counts: the order is not settled");
                }
                let (expect, next) = self.model.plan_correction(i, &counts);
                if let Expect::Skip(_) = expect {
                    return (expect, Got::NotSent, None);
                }
                let reports: Vec<(i64, Report)> = counts
                    .iter()
                    .map(|(line, c)| {
                        let report = Report {
                            delivered: c[0],
                            returned: c[1],
                            damaged: c[2],
                            lost: c[3],
                            destroyed: c[4],
                        };
                        (self.line_id(i, *line), report)
                    })
                    .collect();
                let id = self.model.orders[i].id;
                let got = got_call(adapter::correct(&self.h.engine, id, &reports).await);
                (expect, got, next)
            }
            Op::Quote {
                supplier,
                variant,
                price,
                quantity,
                valid_hours,
                keyed,
            } => {
                self.quote(*supplier, *variant, price, *quantity, *valid_hours, *keyed)
                    .await
            }
            Op::ReplayQuote { nth } => self.replay(*nth).await,
            Op::WithdrawQuote { .. } | Op::DecideQuote { .. } if self.model.quotes.is_empty() => {
                skip("no quote yet")
            }
            Op::WithdrawQuote { quote } => {
                let i = quote % self.model.quotes.len();
                let (expect, next) = self.model.plan_quote_end(i, false, "withdrawn");
                let q = &self.model.quotes[i];
                let key = self.supplier_key(q.supplier).to_owned();
                let path = format!("/api/v1/quotes/{}/withdraw", q.id);
                let r = self
                    .h
                    .request(Method::POST, Some(&key), &path, Bytes::new(), &[])
                    .await;
                (expect, got_http(&r), next)
            }
            Op::DecideQuote { quote, accept } => {
                let i = quote % self.model.quotes.len();
                let (expect, next) = self.model.plan_quote_end(i, *accept, "rejected");
                let id = self.model.quotes[i].id;
                let got = got_call(adapter::decide_quote(&self.h.engine, id, *accept).await);
                (expect, got, next)
            }
            Op::Stock { variant, delta } => {
                let v = self.model.variants[variant % self.model.variants.len()].id;
                let (expect, next) = self.model.plan_stock(v, *delta);
                let got = got_call(adapter::adjust_stock(&self.h.engine, v, *delta).await);
                (expect, got, next)
            }
            Op::SetStock {
                variant,
                stale_by,
                new,
            } => {
                let v = &self.model.variants[self.model.shelf(*variant)];
                let (id, expected) = (v.id, v.available + stale_by);
                let (expect, next) = self.model.plan_set_stock(id, expected, *new);
                let got = got_call(adapter::set_stock(&self.h.engine, id, expected, *new).await);
                (expect, got, next)
            }
            Op::MoveProduct { product, to } => {
                let i = product % self.model.products.len();
                let to = to.map(|s| self.ids[2 + s]);
                let (expect, next) = self.model.plan_product_move(i, to);
                if let Expect::Skip(_) = expect {
                    return (expect, Got::NotSent, None);
                }
                let id = self.model.products[i].0;
                let got = got_call(adapter::move_product(&self.h.engine, id, to).await);
                (expect, got, next)
            }
            Op::Withdraw { account, amount } => self.withdraw(*account, *amount).await,
            Op::DecideWithdrawal { .. } if self.model.withdrawals.is_empty() => {
                skip("no withdrawal yet")
            }
            Op::DecideWithdrawal { nth, pay } => {
                let i = nth % self.model.withdrawals.len();
                let (expect, next) = self.model.plan_withdrawal_decision(i, *pay);
                let id = self.model.withdrawals[i].id;
                let got = got_call(adapter::decide_withdrawal(&self.h.engine, id, *pay).await);
                (expect, got, next)
            }
            Op::Advance { seconds } => {
                self.h.clock.advance(Duration::seconds(*seconds));
                let mut next = self.model.clone();
                next.advance(*seconds);
                (Expect::Accepted, Got::Done, Some(next))
            }
        }
    }

    /// The ids an operation names, resolved against the model.
    fn resolve(&self, op: &Op) -> String {
        let m = &self.model;
        let pick = |n: usize, len: usize| (len > 0).then(|| n % len);
        match op {
            Op::Cancel { order } | Op::Move { order, .. } | Op::Correct { order, .. } => {
                pick(*order, m.orders.len()).map_or(String::new(), |i| {
                    format!("order {} ({})", m.orders[i].id, m.orders[i].status)
                })
            }
            Op::WithdrawQuote { quote } | Op::DecideQuote { quote, .. } => {
                pick(*quote, m.quotes.len()).map_or(String::new(), |i| {
                    let q = &m.quotes[i];
                    format!(
                        "quote {} of variant {} ({})",
                        q.id,
                        q.variant,
                        m.quote_status(q)
                    )
                })
            }
            Op::SetStock { variant, .. } => {
                let v = &m.variants[m.shelf(*variant)];
                format!("variant {} holding {}", v.id, v.available)
            }
            Op::Stock { variant, .. } | Op::Quote { variant, .. } => {
                let v = &m.variants[variant % m.variants.len()];
                format!("variant {} holding {}", v.id, v.available)
            }
            Op::Place { lines, .. } => {
                let ids: Vec<String> = lines
                    .iter()
                    .map(|l| m.variants[l.variant % m.variants.len()].id.to_string())
                    .collect();
                format!("variants {}", ids.join(", "))
            }
            Op::MoveProduct { product, .. } => {
                let (p, s) = m.products[product % m.products.len()];
                format!("product {p} of supplier {s:?}")
            }
            Op::DecideWithdrawal { nth, .. } => {
                pick(*nth, m.withdrawals.len()).map_or(String::new(), |i| {
                    let w = &m.withdrawals[i];
                    format!(
                        "withdrawal {} of {} by account {}",
                        w.id, w.amount, w.account
                    )
                })
            }
            Op::Withdraw { account, .. } => format!(
                "ready {}",
                m.observed_ready
                    .get(&self.ids[*account])
                    .copied()
                    .unwrap_or_default()
            ),
            Op::ReplayQuote { .. } | Op::Advance { .. } => String::new(),
        }
    }

    async fn place(&mut self, marketer: usize, lines: &[LineSpec]) -> (Expect, Got, Option<Model>) {
        let m = &self.model;
        let resolved: Vec<(i64, i64, Decimal, Option<i64>)> = lines
            .iter()
            .map(|l| {
                let v = m.variants[l.variant % m.variants.len()].id;
                let w = l.warranty.map(|w| m.warranties[w % m.warranties.len()].0);
                (v, l.quantity, l.profit.parse().expect("a profit"), w)
            })
            .collect();
        let expect = m.plan_place(&resolved);
        let f = &self.h.fixture;
        let body = json!({
            "full_name": "سارة حسن",
            "phone": "+201112223334",
            "address": "12 شارع النصر، مدينة نصر",
            "governorate_id": f.cairo,
            "shipping_option_id": f.standard_shipping,
            "lines": lines.iter().zip(&resolved).map(|(l, (v, q, _, w))| json!({
                "variant_id": v, "quantity": q, "profit": l.profit,
                "warranty_ids": w.iter().collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        });
        let r = self
            .h
            .post(&self.keys[marketer], "/api/v1/orders", &body)
            .await;
        let got = got_http(&r);
        let mut next = None;
        if got == Got::Done {
            let data = r.json()["data"].clone();
            let line_ids: Vec<i64> = data["lines"]
                .as_array()
                .map(|ls| ls.iter().filter_map(|l| l["id"].as_i64()).collect())
                .unwrap_or_default();
            let mut after = self.model.clone();
            let id = data["id"].as_i64().unwrap_or_default();
            after.place(id, self.ids[marketer], &resolved, &line_ids);
            next = Some(after);
        }
        (expect, got, next)
    }

    async fn move_order(
        &mut self,
        i: usize,
        to: Target,
        specs: &[CountSpec],
    ) -> (Expect, Got, Option<Model>) {
        let order = &self.model.orders[i];
        let to = match to {
            Target::Status(s) => s,
            Target::Next(choice) => match model::next_status(order.status, choice) {
                Some(s) => s,
                None => return (Expect::Skip("no next status".into()), Got::NotSent, None),
            },
        };
        let mut counts = Self::counts(specs);
        let counting = matches!(model::family(to), "delivered" | "returned")
            || (to == "order_archived" && order.settled.is_some());
        if !counting && self.without.iter().any(|w| w == "early_counts") {
            counts.clear();
        }
        let (expect, next) = self.model.plan_move(i, to, &counts);
        if let Expect::Skip(_) = expect {
            return (expect, Got::NotSent, None);
        }
        const NAMES: [&str; 5] = [
            "delivered_quantity",
            "returned_quantity",
            "damaged_quantity",
            "lost_quantity",
            "destroyed_quantity",
        ];
        let mut body = json!({"status": to});
        if !counts.is_empty() {
            let lines: Vec<Value> = counts
                .iter()
                .map(|(line, c)| {
                    let mut entry = json!({"id": self.line_id(i, *line)});
                    for (name, n) in NAMES.iter().zip(c) {
                        if let Some(n) = n {
                            entry[*name] = json!(n);
                        }
                    }
                    entry
                })
                .collect();
            body["lines"] = json!(lines);
        }
        let key = self.marketer_key(order.marketer).to_owned();
        let path = format!("/api/v1/sandbox/orders/{}/status", order.id);
        let r = self.h.post(&key, &path, &body).await;
        let got = got_http(&r);
        // The law of early counts: a 422 naming `lines`, not any refusal.
        if let (Expect::Refused(why), Got::Refused(_)) = (&expect, &got) {
            let on_lines = r.error_fields().iter().any(|f| f.starts_with("lines"));
            if why.starts_with("counts on a move") && !(r.status == 422 && on_lines) {
                self.extra.push(Break::new(
                    law::EARLY_COUNTS,
                    format!(
                        "{why}; got {} {} on {:?}",
                        r.status.as_u16(),
                        r.error_code(),
                        r.error_fields()
                    ),
                ));
            }
        }
        (expect, got, next)
    }
}
