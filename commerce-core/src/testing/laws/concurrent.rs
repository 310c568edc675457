//! The laws under concurrency: tasks run random operations at once on one engine; what must
//! hold whatever the interleaving is checked on the end state (no model of the order of
//! events is needed for these).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rust_decimal::Decimal;
use serde_json::{Value, json};

use super::adapter::{self, Called, Report};
use super::model::{family, next_status, round_money};
use super::runner::{World, statement};
use crate::testing::http::{Harness, IntoHarness, TestResponse};

/// What the tasks share: keys, ids, the orders placed and the answers seen.
struct Shared {
    keys: Vec<String>,
    ids: Vec<i64>,
    variants: Vec<i64>,
    supplier_variants: Vec<i64>,
    orders: Mutex<Vec<(i64, usize)>>,
    settled: Mutex<BTreeMap<i64, &'static str>>,
    quotes: Mutex<Vec<i64>>,
    withdrawals: Mutex<Vec<i64>>,
    answers: Mutex<BTreeMap<String, u64>>,
    broken: Mutex<Vec<String>>,
}

impl Shared {
    fn note(&self, what: &str, r: &TestResponse) {
        let status = r.status.as_u16();
        *self
            .answers
            .lock()
            .expect("answers")
            .entry(format!("{what} {status}"))
            .or_insert(0) += 1;
        if status >= 500 {
            self.broken.lock().expect("broken").push(format!(
                "{what}: {status} {}",
                String::from_utf8_lossy(&r.body)
            ));
        }
    }

    fn called(&self, what: &str, c: Called) -> bool {
        let key = match &c {
            Called::Done => "done",
            Called::Refused(_) => "refused",
            Called::Broken(_) => "BROKEN",
        };
        *self
            .answers
            .lock()
            .expect("answers")
            .entry(format!("{what} {key}"))
            .or_insert(0) += 1;
        if let Called::Broken(why) = &c {
            self.broken
                .lock()
                .expect("broken")
                .push(format!("{what}: {why}"));
        }
        c == Called::Done
    }

    fn pick<T: Copy>(list: &Mutex<Vec<T>>, rng: &mut StdRng) -> Option<T> {
        let list = list.lock().expect("list");
        (!list.is_empty()).then(|| list[rng.random_range(0..list.len())])
    }
}

fn money(v: &Value) -> Decimal {
    v.as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or(Decimal::MIN)
}

async fn task(h: Harness, shared: Arc<Shared>, seed: u64, operations: usize) {
    let mut rng = StdRng::seed_from_u64(seed);
    for _ in 0..operations {
        let roll = rng.random_range(0..100);
        let marketer = rng.random_range(0..2usize);
        match roll {
            0..=24 => {
                let lines: Vec<Value> = (0..rng.random_range(1..=2))
                    .map(|_| {
                        let v = shared.variants[rng.random_range(0..shared.variants.len())];
                        json!({"variant_id": v, "quantity": rng.random_range(1..=3), "profit": "12.35"})
                    })
                    .collect();
                let f = &h.fixture;
                let body = json!({
                    "full_name": "سارة حسن", "phone": "+201112223334",
                    "address": "12 شارع النصر، مدينة نصر", "governorate_id": f.cairo,
                    "shipping_option_id": f.standard_shipping, "lines": lines,
                });
                let r = h
                    .post(&shared.keys[marketer], "/api/v1/orders", &body)
                    .await;
                shared.note("place", &r);
                if let Some(id) = r.json()["data"]["id"].as_i64() {
                    shared.orders.lock().expect("orders").push((id, marketer));
                }
            }
            25..=29 => {
                let Some((id, m)) = Shared::pick(&shared.orders, &mut rng) else {
                    continue;
                };
                let r = h
                    .post(
                        &shared.keys[m],
                        &format!("/api/v1/orders/{id}/cancel"),
                        &json!({}),
                    )
                    .await;
                shared.note("cancel", &r);
            }
            30..=59 => {
                let Some((id, m)) = Shared::pick(&shared.orders, &mut rng) else {
                    continue;
                };
                let key = &shared.keys[m];
                let now = h.get(key, &format!("/api/v1/orders/{id}")).await;
                shared.note("read order", &now);
                let data = now.json()["data"].clone();
                let status = data["status"]["key"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                let Some(to) = next_status(&status, rng.random()) else {
                    continue;
                };
                let mut body = json!({"status": to});
                let settles = matches!(family(to), "delivered" | "returned");
                if settles && rng.random_bool(0.5) {
                    let line = &data["lines"][0];
                    let count = rng.random_range(0..=line["quantity"].as_i64().unwrap_or(1));
                    let name = if to == "order_returned" {
                        "damaged_quantity"
                    } else {
                        "returned_quantity"
                    };
                    body["lines"] = json!([{"id": line["id"], name: count}]);
                }
                let r = h
                    .post(key, &format!("/api/v1/sandbox/orders/{id}/status"), &body)
                    .await;
                shared.note("move", &r);
                if r.status == 200 && settles {
                    shared
                        .settled
                        .lock()
                        .expect("settled")
                        .insert(id, family(to));
                }
            }
            60..=67 => {
                let Some((id, _)) = Shared::pick(&shared.orders, &mut rng) else {
                    continue;
                };
                let settled = shared.settled.lock().expect("settled").get(&id).copied();
                let Ok(lines) = adapter::kept_lines(&h.engine, id).await else {
                    continue;
                };
                let count = Some(rng.random_range(0..=1));
                let report = if settled == Some("returned") {
                    Report {
                        damaged: count,
                        ..Report::default()
                    }
                } else {
                    Report {
                        returned: count,
                        ..Report::default()
                    }
                };
                let c = adapter::correct(&h.engine, id, &[(lines[0].id, report)]).await;
                shared.called("correct", c);
            }
            68..=72 => {
                let v =
                    shared.supplier_variants[rng.random_range(0..shared.supplier_variants.len())];
                let body = json!({"variant_id": v, "unit_price": "37.25", "quantity": rng.random_range(1..=50)});
                let r = h.post(&shared.keys[2], "/api/v1/quotes", &body).await;
                shared.note("quote", &r);
                if let Some(id) = r.json()["data"]["id"].as_i64() {
                    shared.quotes.lock().expect("quotes").push(id);
                }
            }
            73..=77 => {
                let Some(id) = Shared::pick(&shared.quotes, &mut rng) else {
                    continue;
                };
                let c = adapter::decide_quote(&h.engine, id, rng.random_bool(0.7)).await;
                shared.called("decide quote", c);
            }
            78..=82 => {
                let v = shared.variants[rng.random_range(0..shared.variants.len())];
                let c = adapter::adjust_stock(&h.engine, v, rng.random_range(-20..=20)).await;
                shared.called("stock delta", c);
            }
            83..=92 => {
                let who = rng.random_range(0..3usize);
                let r = h.get(&shared.keys[who], "/api/v1/wallet").await;
                shared.note("wallet", &r);
                let ready = money(&r.json()["data"]["ready"]);
                let amount = if rng.random_bool(0.5) {
                    ready
                } else {
                    Decimal::from(100)
                };
                let (c, id) = adapter::request_withdrawal(&h.engine, shared.ids[who], amount).await;
                shared.called("withdraw", c);
                if let Some(id) = id {
                    shared.withdrawals.lock().expect("withdrawals").push(id);
                }
            }
            _ => {
                let Some(id) = Shared::pick(&shared.withdrawals, &mut rng) else {
                    continue;
                };
                let c = adapter::decide_withdrawal(&h.engine, id, rng.random_bool(0.5)).await;
                shared.called("decide withdrawal", c);
            }
        }
    }
}

/// Earnings of an account at the start: `ready + held + received + pending`.
async fn earnings_now(h: &Harness, key: &str) -> (Decimal, Decimal, Decimal) {
    let w = h.get(key, "/api/v1/wallet").await.json()["data"].clone();
    let (ready, held) = (money(&w["ready"]), money(&w["held"]["amount"]));
    let withdrawn = money(&w["received"]) + money(&w["pending_withdrawals"]["amount"]);
    (ready, held, withdrawn)
}

/// Runs `tasks` tasks of `operations` random operations each at once on the harness
/// `factory` makes (`None` skips), then checks the end state: no 5xx; each variant's history
/// sums to its `available`; no negative balance; each supplier's newest statement balance is
/// its `ready + held.amount`; what was withdrawn (pending or paid) never exceeds what was
/// earned, and `ready + held` is the difference; each settled order's statement entries sum to
/// its lines' supply price times their delivered pieces. Panics with every break found and the
/// answers seen. Call it from a plain `#[test]`: it runs its own multi-threaded runtime.
pub fn check_laws_concurrently<F, Fut, H>(tasks: usize, operations: usize, seed: u64, factory: F)
where
    F: FnOnce() -> Fut,
    Fut: Future<Output = H>,
    H: IntoHarness,
{
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async move {
        let Some(h) = factory().await.into_harness() else { return };
        let world = World::new(&h).await;
        let mut start = Vec::new();
        for key in &world.keys {
            start.push(earnings_now(&h, key).await);
        }
        let shared = Arc::new(Shared {
            keys: world.keys.clone(),
            ids: world.ids.clone(),
            variants: world.model.variants.iter().map(|v| v.id).collect(),
            supplier_variants: adapter::supplier_variants(&h.engine, world.ids[2]).await,
            orders: Mutex::default(),
            settled: Mutex::default(),
            quotes: Mutex::default(),
            withdrawals: Mutex::default(),
            answers: Mutex::default(),
            broken: Mutex::default(),
        });
        let commission = world.model.commission_percent;
        let handles: Vec<_> = (0..tasks)
            .map(|t| tokio::spawn(task(h.clone_handle(), shared.clone(), seed + t as u64, operations)))
            .collect();
        for handle in handles {
            if let Err(e) = handle.await {
                shared.broken.lock().expect("broken").push(format!("a task panicked: {e}"));
            }
        }
        let mut breaks: Vec<String> = shared.broken.lock().expect("broken").clone();
        for v in &shared.variants {
            let available = adapter::variants(&h.engine, &[*v]).await.map(|f| f[0].available);
            let sum: Option<i64> = adapter::history(&h.engine, *v).await.ok().map(|e| e.iter().map(|e| e.delta).sum());
            if available.as_ref().ok().copied() != sum {
                breaks.push(format!("stock.history_sum_is_available: variant {v}: history sums to {sum:?}, available {available:?}"));
            }
        }
        // What each account earned in the run, from the orders as they read now.
        let mut earned: BTreeMap<i64, Decimal> = BTreeMap::new();
        let orders = shared.orders.lock().expect("orders").clone();
        let settled = shared.settled.lock().expect("settled").clone();
        let mut statements = Vec::new();
        for i in 2..shared.keys.len() {
            statements.push((i, statement(&h, &shared.keys[i]).await));
        }
        for (id, m) in &orders {
            let Some(fam) = settled.get(id) else { continue };
            let data = h.get(&shared.keys[*m], &format!("/api/v1/orders/{id}")).await.json()["data"].clone();
            let kept = adapter::kept_lines(&h.engine, *id).await.unwrap_or_default();
            let mut profit = Decimal::ZERO;
            let mut supply: BTreeMap<i64, Decimal> = BTreeMap::new();
            for line in data["lines"].as_array().cloned().unwrap_or_default() {
                let delivered = line["delivered_quantity"].as_i64().unwrap_or_else(|| {
                    breaks.push(format!("lines.completed_counts: settled order {id} line {} shows delivered_quantity null", line["id"]));
                    let others: i64 = ["returned_quantity", "damaged_quantity", "lost_quantity", "destroyed_quantity"]
                        .iter()
                        .map(|n| line[*n].as_i64().unwrap_or(0))
                        .sum();
                    line["quantity"].as_i64().unwrap_or(0) - others
                });
                let delivered = if *fam == "returned" { 0 } else { delivered };
                profit += money(&line["profit"]) * Decimal::from(delivered);
                if let Some(k) = kept.iter().find(|k| line["id"] == k.id)
                    && let Some(s) = k.supplier {
                        *supply.entry(s).or_default() += k.supply_price * Decimal::from(delivered);
                    }
            }
            let profit = round_money(profit);
            *earned.entry(shared.ids[*m]).or_default() += profit - round_money(profit * commission / Decimal::ONE_HUNDRED);
            for (s, amount) in &supply {
                *earned.entry(*s).or_default() += *amount;
            }
            for (i, entries) in &statements {
                let sum: Decimal = entries.iter().filter(|e| e["order"]["id"] == *id).map(|e| {
                    let a = money(&e["amount"]);
                    if e["direction"] == "debit" { -a } else { a }
                }).sum();
                let want = supply.get(&shared.ids[*i]).copied().unwrap_or_default();
                if sum != want {
                    breaks.push(format!("money.statement_order_entries_are_supply_x_delivered: supplier {} order {id}: entries sum to {sum}, supply price x delivered is {want}", shared.ids[*i]));
                }
            }
        }
        for (i, key) in shared.keys.iter().enumerate() {
            let (ready, held, withdrawn) = earnings_now(&h, key).await;
            let (r0, h0, w0) = start[i];
            let total = r0 + h0 + w0 + earned.get(&shared.ids[i]).copied().unwrap_or_default();
            if ready < Decimal::ZERO || held < Decimal::ZERO {
                breaks.push(format!("money.no_negative_balance: account {}: ready {ready}, held {held}", shared.ids[i]));
            }
            if withdrawn > total {
                breaks.push(format!("money.withdrawals_within_earnings: account {}: withdrawn {withdrawn}, earned {total}", shared.ids[i]));
            }
            if ready + held != total - withdrawn {
                breaks.push(format!("money.ready_plus_held_is_earnings_less_withdrawals: account {}: ready {ready} + held {held}, expected {}", shared.ids[i], total - withdrawn));
            }
            if i >= 2 {
                let newest = statement(&h, key).await.first().map_or(Decimal::ZERO, |e| money(&e["balance"]));
                if newest != ready + held {
                    breaks.push(format!("money.statement_balance_is_ready_plus_held: account {}: newest balance {newest}, ready {ready} + held {held}", shared.ids[i]));
                }
                if newest < Decimal::ZERO {
                    breaks.push(format!("money.no_negative_balance: account {}: statement balance {newest}", shared.ids[i]));
                }
            }
        }
        let answers = shared.answers.lock().expect("answers").clone();
        drop(world);
        h.finish().await;
        assert!(
            breaks.is_empty(),
            "laws broken under concurrency ({tasks} tasks x {operations} operations, seed {seed}):\n  {}\nanswers seen: {answers:?}",
            breaks.join("\n  ")
        );
    });
}
