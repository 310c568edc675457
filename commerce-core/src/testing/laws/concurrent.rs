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
                let lines: Vec<(i64, i64)> = (0..rng.random_range(1..=2))
                    .map(|_| {
                        let v = shared.variants[rng.random_range(0..shared.variants.len())];
                        (v, rng.random_range(1..=3))
                    })
                    .collect();
                let _ = place(&h, &shared, marketer, &lines).await;
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
                let whole = rng.random_bool(0.5);
                withdraw(&h, &shared, who, whole).await;
            }
            _ => decide_a_withdrawal(&h, &shared, &mut rng, 0.5).await,
        }
    }
}

/// Places an order of `lines` (variant, pieces) for `marketer`: its id, or the answer when
/// it was not placed.
async fn place(
    h: &Harness,
    shared: &Shared,
    marketer: usize,
    lines: &[(i64, i64)],
) -> Result<i64, String> {
    let lines: Vec<Value> = lines
        .iter()
        .map(|(v, q)| json!({"variant_id": v, "quantity": q, "profit": "12.35"}))
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
    let id = r.json()["data"]["id"]
        .as_i64()
        .ok_or_else(|| format!("{} {}", r.status, String::from_utf8_lossy(&r.body)))?;
    shared.orders.lock().expect("orders").push((id, marketer));
    Ok(id)
}

/// Account `who` asks for its whole ready money (`whole`) or for 100.00.
async fn withdraw(h: &Harness, shared: &Shared, who: usize, whole: bool) {
    let r = h.get(&shared.keys[who], "/api/v1/wallet").await;
    shared.note("wallet", &r);
    let amount = if whole {
        money(&r.json()["data"]["ready"])
    } else {
        Decimal::from(100)
    };
    let (c, id) = adapter::request_withdrawal(&h.engine, shared.ids[who], amount).await;
    shared.called("withdraw", c);
    if let Some(id) = id {
        shared.withdrawals.lock().expect("withdrawals").push(id);
    }
}

/// The platform pays (with probability `pay`) or rejects a withdrawal asked for in the run
/// and not yet decided (as far as this task knows: another may decide it first).
async fn decide_a_withdrawal(h: &Harness, shared: &Shared, rng: &mut StdRng, pay: f64) {
    let Some(id) = Shared::pick(&shared.withdrawals, rng) else {
        return;
    };
    let c = adapter::decide_withdrawal(&h.engine, id, rng.random_bool(pay)).await;
    if shared.called("decide withdrawal", c) {
        shared
            .withdrawals
            .lock()
            .expect("withdrawals")
            .retain(|w| *w != id);
    }
}

/// Moves an order from pending to delivered, as the platform does; whether every move passed.
async fn deliver(h: &Harness, shared: &Shared, marketer: usize, id: i64) -> bool {
    for to in ["order_confirmed", "order_shipped", "order_delivered"] {
        let r = h
            .post(
                &shared.keys[marketer],
                &format!("/api/v1/sandbox/orders/{id}/status"),
                &json!({"status": to}),
            )
            .await;
        shared.note("move", &r);
        if r.status != 200 {
            return false;
        }
    }
    shared
        .settled
        .lock()
        .expect("settled")
        .insert(id, "delivered");
    true
}

/// The supplier-money race's start: `orders` orders of 4 pieces of the supplier's variants delivered
/// and made ready by the clock (the first `orders` of `shared.orders`, the ones the race
/// corrects), then as many delivered and held. Answers the held money, which the race never
/// touches.
async fn ready_and_held_money(h: &Harness, shared: &Shared, orders: usize) -> Decimal {
    const PIECES: i64 = 4;
    assert!(
        !shared.supplier_variants.is_empty(),
        "the supplier-money race needs variants of the seed's supplier"
    );
    let placed = |round: usize| async move {
        let v = shared.supplier_variants[round % shared.supplier_variants.len()];
        let id = match place(h, shared, 0, &[(v, PIECES)]).await {
            Ok(id) => id,
            Err(answer) => panic!("the race's order of variant {v} was not placed: {answer}"),
        };
        assert!(
            deliver(h, shared, 0, id).await,
            "the race's order {id} is delivered"
        );
    };
    // Stock for the race's orders (2 pieces each, the ready ones and the held ones).
    for v in &shared.supplier_variants {
        let pieces = 2 * PIECES * orders.div_ceil(shared.supplier_variants.len()) as i64;
        assert!(
            shared.called(
                "stock delta",
                adapter::adjust_stock(&h.engine, *v, pieces).await
            ),
            "stock for the race's orders of variant {v}"
        );
    }
    for round in 0..orders {
        placed(round).await;
    }
    // Every delivery so far ready (the hold is counted in days; a week more to spare).
    let hold = h.engine.config().hold_days;
    h.clock.advance(chrono::Duration::days(hold + 8));
    for round in 0..orders {
        placed(round).await;
    }
    let wallet = h.get(&shared.keys[2], "/api/v1/wallet").await.json()["data"].clone();
    money(&wallet["held"]["amount"])
}

/// A task of the supplier-money race: the supplier withdraws its whole ready money while
/// the platform corrects its ready deliveries (a returned piece taken back from its money,
/// or given back) and decides the withdrawals (mostly rejected, so there is money to race
/// for again).
async fn supplier_money_task(
    h: Harness,
    shared: Arc<Shared>,
    seed: u64,
    operations: usize,
    correctable: usize,
) {
    let mut rng = StdRng::seed_from_u64(seed);
    for _ in 0..operations {
        match rng.random_range(0..10) {
            0..=2 => withdraw(&h, &shared, 2, true).await,
            3..=6 => {
                let (id, _) =
                    shared.orders.lock().expect("orders")[rng.random_range(0..correctable)];
                let Ok(lines) = adapter::kept_lines(&h.engine, id).await else {
                    continue;
                };
                let report = Report {
                    returned: Some(rng.random_range(0..=1)),
                    ..Report::default()
                };
                let c = adapter::correct(&h.engine, id, &[(lines[0].id, report)]).await;
                shared.called("correct", c);
            }
            _ => decide_a_withdrawal(&h, &shared, &mut rng, 0.2).await,
        }
    }
}

/// What the racing tasks do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Race {
    /// Every kind of operation: orders, cancels, moves, corrections, quotes and their
    /// decisions, stock deltas, withdrawals on both sides and their decisions.
    Everything,
    /// A supplier's money: deliveries made ready by the clock and others still held, then
    /// withdrawals of the whole ready money against corrections of the ready deliveries and
    /// decisions. Besides the end state's laws, every withdrawal of the race must have left
    /// at least the held money (a withdrawal takes only ready money). That law compares each
    /// withdrawal with one figure, the held money read before the race: it holds because the
    /// race corrects only ready deliveries and never moves the clock (a race that did either
    /// would need the held money at each withdrawal, which the statement does not show).
    SupplierMoney,
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
    check_laws_racing(tasks, operations, seed, Race::Everything, factory);
}

/// [`check_laws_concurrently`] with the tasks doing what `race` says.
pub fn check_laws_racing<F, Fut, H>(
    tasks: usize,
    operations: usize,
    seed: u64,
    race: Race,
    factory: F,
) where
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
        // The race's supplier money: the held money, and the newest statement entry before it.
        let mut held_in_race = None;
        let handles: Vec<_> = match race {
            Race::Everything => (0..tasks)
                .map(|t| tokio::spawn(task(h.clone_handle(), shared.clone(), seed + t as u64, operations)))
                .collect(),
            Race::SupplierMoney => {
                const ORDERS: usize = 6;
                let before = statement(&h, &shared.keys[2]).await.first().and_then(|e| e["id"].as_i64()).unwrap_or(0);
                held_in_race = Some((ready_and_held_money(&h, &shared, ORDERS).await, before));
                (0..tasks)
                    .map(|t| tokio::spawn(supplier_money_task(h.clone_handle(), shared.clone(), seed + t as u64, operations, ORDERS)))
                    .collect()
            }
        };
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
        if let Some((held, before)) = held_in_race {
            let mut raced = 0;
            for e in statement(&h, &shared.keys[2]).await {
                if e["type"] != "withdrawal" || e["id"].as_i64().unwrap_or(0) <= before {
                    continue;
                }
                raced += 1;
                let balance = money(&e["balance"]);
                if balance < held {
                    breaks.push(format!("money.withdrawal_takes_only_ready_money: supplier {}: withdrawal entry {} of {} left {balance}, below the {held} held", shared.ids[2], e["id"], e["amount"]));
                }
            }
            // Not vacuous: the race made withdrawals and corrections.
            let corrected = answers.get("correct done").copied().unwrap_or(0);
            if raced == 0 || corrected == 0 {
                breaks.push(format!("the race ran nothing to check: {raced} withdrawals, {corrected} corrections"));
            }
        }
        // Shown with `--nocapture`: what the tasks did, to see that the race was run.
        println!("seed {seed}: answers seen: {answers:?}");
        // Before the harness's own end checks, which would hide these if they failed too.
        assert!(
            breaks.is_empty(),
            "laws broken under concurrency ({tasks} tasks x {operations} operations, seed {seed}):\n  {}\nanswers seen: {answers:?}",
            breaks.join("\n  ")
        );
        drop(world);
        h.finish().await;
    });
}
