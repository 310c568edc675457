//! The laws of stock and money, checked against a reference model.
//!
//! [`check_laws`] draws scripts of operations (orders placed, cancelled and moved with
//! random outcome counts, corrections, quotes made, replayed, withdrawn and decided, stock
//! deltas and compare-and-sets near the bounds, products moved to another supplier,
//! withdrawals on both sides, the clock moved across holds) with proptest, runs each on a
//! fresh seeded engine, and after every step compares everything observable with the model
//! (`model.rs`): each variant's `available` and its stock history, each line's counts, each
//! wallet, each supplier's statement, each quote. A broken law fails the case with the shrunk
//! script as a numbered list, the law's name and what was expected and found.
//!
//! Settings, read from the environment when the test starts:
//! - `LAWS_CASES`, `LAWS_STEPS`: cases and the most steps per case;
//! - `LAWS_SKIP`: laws to leave unchecked, comma-separated names or prefixes (say
//!   `stock.history` while the history law is known broken, to find the next break);
//! - `LAWS_WITHOUT`: kinds of operations never drawn, comma-separated (`place`, `cancel`,
//!   `move`, `correct`, `quote`, `replay`, `withdraw_quote`, `decide_quote`, `stock`,
//!   `set_stock`, `move_product`, `withdraw`, `decide_withdrawal`, `advance`), and
//!   `early_counts`: counts are sent only with the moves that may carry them, and
//!   corrections only of settled orders; `over_price`: no quote priced over the bound;
//! - `LAWS_SHRINK`: the most shrink iterations.
//!
//! [`check_laws_concurrently`] is the second part: tasks running operations at once, the laws
//! that must hold whatever the interleaving checked on the end state.

use std::future::Future;

use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};

use crate::testing::http::{Harness, IntoHarness};

mod adapter;
mod checks;
mod concurrent;
mod model;
mod ops;
mod plans;
mod runner;
mod runner_supply;

pub use concurrent::{Race, check_laws_concurrently, check_laws_racing};

/// The laws' names, as a failure and `LAWS_SKIP` name them.
mod law {
    pub const NO_5XX: &str = "answers.no_5xx";
    pub const NO_PANIC: &str = "answers.no_panic";
    pub const AS_PREDICTED: &str = "answers.as_predicted";
    pub const EARLY_COUNTS: &str = "moves.counts_only_when_settling_422_on_lines";
    pub const REPLAY: &str = "quotes.replay_answers_the_first_response";
    pub const QUOTE_STATUS: &str = "quotes.status";
    pub const AVAILABLE: &str = "stock.available";
    pub const BOUNDS: &str = "stock.bounds";
    pub const HISTORY_SUM: &str = "stock.history_sum_is_available";
    pub const ORDER_ENTRIES: &str = "stock.history_reservation_and_release";
    pub const RESTOCK: &str = "stock.history_restock_is_returned_count";
    pub const RECEIVED: &str = "stock.history_received_is_quote_quantity";
    pub const STATUS: &str = "orders.status";
    pub const COUNTS: &str = "lines.completed_counts";
    pub const WALLET_SUM: &str = "money.ready_plus_held_is_earnings_less_withdrawals";
    pub const NONNEGATIVE: &str = "money.no_negative_balance";
    pub const WITHDRAWALS: &str = "money.withdrawals_received_and_pending";
    pub const STATEMENT_BALANCE: &str = "money.statement_balance";
    pub const RECONCILES: &str = "money.statement_balance_is_ready_plus_held";
    pub const ORDER_CREDITS: &str = "money.statement_order_entries_are_supply_x_delivered";
    pub const TAKE_BACK: &str = "stock.correction_takes_back_at_most_available";
    pub const AT_MOST_READY: &str = "money.withdrawal_at_most_ready";
    pub const UNIT_PRICE: &str = "bounds.quote_unit_price";
    pub const COUNTS_SUM: &str = "lines.counts_within_quantity";
    pub const CORRECTION_UNSETTLED: &str = "lines.corrections_only_of_settled_orders";

    /// The law an operation accepted against the model's refusal broke, from the model's
    /// reason (the answer law when it is none of these).
    pub fn of_refusal(why: &str) -> &'static str {
        let laws = [
            ("outside 0..=", BOUNDS),
            ("takes back", TAKE_BACK),
            ("balance", NONNEGATIVE),
            ("counts on a move", EARLY_COUNTS),
            ("a correction of an order", CORRECTION_UNSETTLED),
            ("over ready", AT_MOST_READY),
            ("unit_price", UNIT_PRICE),
            ("over the line's", COUNTS_SUM),
            ("negative count", COUNTS_SUM),
        ];
        laws.iter()
            .find(|(text, _)| why.contains(text))
            .map_or(AS_PREDICTED, |(_, law)| law)
    }
}

/// A law found broken: its name and what was expected and found.
#[derive(Debug, Clone, PartialEq)]
struct Break {
    law: &'static str,
    detail: String,
}

impl Break {
    fn new(law: &'static str, detail: impl Into<String>) -> Self {
        Self {
            law,
            detail: detail.into(),
        }
    }
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

/// A comma-separated list from the environment.
fn env_list(name: &str) -> Vec<String> {
    std::env::var(name)
        .unwrap_or_default()
        .split(',')
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

fn checked(breaks: Vec<Break>, skip: &[String]) -> Vec<Break> {
    breaks
        .into_iter()
        .filter(|b| !skip.iter().any(|s| b.law.starts_with(s.as_str())))
        .collect()
}

/// Runs one script on `h`: `Err` with the readable report at the first step that breaks a
/// law (or before the first, when the seeded start already breaks one).
async fn run_script(h: &Harness, script: &[ops::Op], skip: &[String]) -> Result<(), String> {
    use futures_util::FutureExt;
    use std::panic::AssertUnwindSafe;

    let mut world = runner::World::new(h).await;
    world.without = env_list("LAWS_WITHOUT");
    let mut lines = Vec::new();
    let report = |lines: &[String], step: usize, breaks: &[Break]| {
        let mut text = String::new();
        for b in breaks {
            text.push_str(&format!("\nLAW BROKEN {}: {}", b.law, b.detail));
        }
        let when = if step == 0 {
            "on the seeded start, before any step".to_owned()
        } else {
            format!("after step {step}")
        };
        format!("{text}\n  ({when}; script as run:)\n{}", lines.join("\n"))
    };
    let first = checked(world.check().await, skip);
    if !first.is_empty() {
        return Err(report(&lines, 0, &first));
    }
    for (i, op) in script.iter().enumerate() {
        let ran = AssertUnwindSafe(async {
            let (expect, got, mut breaks) = world.step(op).await;
            if got != runner::Got::NotSent {
                breaks.extend(world.check().await);
            }
            (expect, got, breaks)
        })
        .catch_unwind()
        .await;
        let (expect, got, breaks) = match ran {
            Ok(done) => done,
            Err(panic) => {
                let what = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default();
                lines.push(format!("  {}. {op} -> PANIC", i + 1));
                return Err(report(&lines, i + 1, &[Break::new(law::NO_PANIC, what)]));
            }
        };
        let expect = match expect {
            model::Expect::Accepted => "accepted".to_owned(),
            model::Expect::Refused(why) => format!("refused: {why}"),
            model::Expect::Either(why) => format!("either: {why}"),
            model::Expect::Skip(why) => format!("skipped: {why}"),
        };
        let note = if world.note.is_empty() {
            String::new()
        } else {
            format!(" [{}]", world.note)
        };
        lines.push(format!(
            "  {}. {op}{note} -> {got}   (model: {expect})",
            i + 1
        ));
        let breaks = checked(breaks, skip);
        if !breaks.is_empty() {
            return Err(report(&lines, i + 1, &breaks));
        }
    }
    Ok(())
}

/// Draws `LAWS_CASES` scripts (default `cases`) of up to `LAWS_STEPS` operations (default
/// `steps`), runs each on the harness `factory` makes (a fresh seeded engine per case; `None`
/// skips the test) and panics with the shrunk script and the broken law when one breaks.
/// Call it from a plain `#[test]`: it runs its own tokio runtime.
pub fn check_laws<F, Fut, H>(cases: u32, steps: usize, factory: F)
where
    F: Fn() -> Fut,
    Fut: Future<Output = H>,
    H: IntoHarness,
{
    check_laws_of(cases, steps, Scripts::Everything, factory);
}

/// What a run's scripts are made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scripts {
    /// Every kind of operation.
    Everything,
    /// Settling, counting shelves empty and correcting, most of all: where returned pieces
    /// are sold out and a correction takes them back.
    Settling,
}

/// [`check_laws`] with scripts of the kind `scripts` says.
pub fn check_laws_of<F, Fut, H>(cases: u32, steps: usize, scripts: Scripts, factory: F)
where
    F: Fn() -> Fut,
    Fut: Future<Output = H>,
    H: IntoHarness,
{
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let cases = env_number("LAWS_CASES", u64::from(cases)) as u32;
    let steps = env_number("LAWS_STEPS", steps as u64) as usize;
    let shrink = env_number("LAWS_SHRINK", 4_000) as u32;
    let skip = env_list("LAWS_SKIP");
    // One case first: a factory that skips (no database) skips the whole test.
    let Some(probe) = runtime.block_on(factory()).into_harness() else {
        return;
    };
    runtime.block_on(probe.finish());
    let mut runner = TestRunner::new(Config {
        cases,
        max_shrink_iters: shrink,
        failure_persistence: None,
        ..Config::default()
    });
    let settling = scripts == Scripts::Settling;
    let result = runner.run(
        &ops::scripts(steps, env_list("LAWS_WITHOUT"), settling),
        |script| {
            runtime.block_on(async {
                let h = factory()
                    .await
                    .into_harness()
                    .expect("the factory made a harness once");
                let outcome = run_script(&h, &script.0, &skip).await;
                h.finish().await;
                outcome.map_err(TestCaseError::fail)
            })
        },
    );
    match result {
        Ok(()) => {}
        Err(TestError::Fail(reason, script)) => {
            panic!("a law of stock and money broke:{reason}\n\nminimal script:{script:?}")
        }
        Err(TestError::Abort(reason)) => panic!("the laws run aborted: {reason}"),
    }
}
