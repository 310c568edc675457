//! Pricing of 1, 10 and 100 lines (two warranties each) through
//! `commerce_core::domain::pricing::price`, against a baseline doing the same Decimal arithmetic inline
//! (same rounding: `round_dp_with_strategy(2, MidpointAwayFromZero)`) with no structure around it.
//!
//! ```text
//! cargo bench -p commerce-dev --bench pricing -- --warm-up-time 1 --measurement-time 3
//! ```
//!
//! Goal (BENCHMARKS.md): `price` ≤ 1.25× the inline arithmetic, at every size. After criterion's
//! output the bench prints one `ratio` line per size.
//!
//! Times on a busy machine are noisy; instruction counts are not. With `PRICING_LOOP=price:N`
//! (or `inline:N`) the bench skips criterion and runs `N` pricings of every size, for
//! `valgrind --tool=callgrind` to count:
//!
//! ```text
//! cargo bench -p commerce-dev --bench pricing --no-run   # then, with the binary it names:
//! PRICING_LOOP=price:1000:10 valgrind --tool=callgrind target/release/deps/pricing-* --bench
//! ```

mod common;

use std::hint::black_box;

use commerce_core::domain::pricing::{LineInput, ShippingTerms, WarrantyTerms, price};
use common::report::{Goal, run_criterion};
use criterion::{BenchmarkId, Criterion, criterion_group};
use rust_decimal::{Decimal, RoundingStrategy};

/// The sizes measured, in lines.
const SIZES: [usize; 3] = [1, 10, 100];

/// Round to the piastre, half away from zero, written out as the baseline does it.
fn round(d: Decimal) -> Decimal {
    d.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero)
}

/// One raw line: price, profit, quantity.
type RawLine = (Decimal, Decimal, i64);

/// The inputs: `n` lines, each with the same two warranties.
fn inputs(n: usize) -> (Vec<RawLine>, [WarrantyTerms; 2]) {
    let lines = (0..n)
        .map(|i| {
            (
                Decimal::new(24_999 + 137 * i as i64, 2),
                Decimal::new(5_001 + 13 * i as i64, 2),
                1 + (i as i64 % 7),
            )
        })
        .collect();
    let warranties = [
        WarrantyTerms::new(Decimal::new(1_500, 2), Decimal::new(5, 0)),
        WarrantyTerms::new(Decimal::new(2_500, 2), Decimal::new(85, 1)),
    ];
    (lines, warranties)
}

fn shipping() -> ShippingTerms {
    ShippingTerms::new(
        Decimal::new(4_500, 2),
        Decimal::new(1_400, 2),
        Decimal::new(100, 2),
    )
}

/// The baseline: the pricing formula (docs/money-and-time.md) computed inline, totals only, no per-line records, no vectors.
fn inline(
    lines: &[RawLine],
    warranties: &[WarrantyTerms],
    shipping: ShippingTerms,
    commission_percent: Decimal,
) -> [Decimal; 7] {
    let hundred = Decimal::ONE_HUNDRED;
    let mut products = Decimal::ZERO;
    let mut warranty_total = Decimal::ZERO;
    let mut profit = Decimal::ZERO;
    for &(price, line_profit, quantity) in lines {
        let quantity = Decimal::from(quantity);
        let sale = price + line_profit;
        products += sale * quantity;
        for w in warranties {
            warranty_total += round(w.admin_fee + sale * w.percent / hundred) * quantity;
        }
        profit += line_profit * quantity;
    }
    let goods = products + warranty_total;
    let delivery = round(
        shipping.base * (Decimal::ONE + shipping.shipping_tax_percent / hundred)
            + goods * shipping.total_due_tax_percent / hundred,
    );
    let income_tax = round(profit * commission_percent / hundred);
    [
        round(products),
        round(warranty_total),
        delivery,
        round(goods + delivery),
        round(profit),
        income_tax,
        round(profit - income_tax),
    ]
}

/// The raw lines as `price` takes them, each with the same warranties.
fn line_inputs<'a>(raw: &[RawLine], warranties: &'a [WarrantyTerms]) -> Vec<LineInput<'a>> {
    raw.iter()
        .map(|&(price, profit, quantity)| LineInput::new(price, profit, quantity, warranties))
        .collect()
}

fn bench_pricing(c: &mut Criterion) {
    let commission = Decimal::from(4);
    let mut group = c.benchmark_group("pricing");
    for n in SIZES {
        let (raw, warranties) = inputs(n);
        let lines = line_inputs(&raw, &warranties);
        // Both paths agree to the piastre before anything is timed.
        let priced = price(&lines, shipping(), commission);
        let t = &priced.totals;
        let expected = inline(&raw, &warranties, shipping(), commission);
        assert_eq!(
            [
                t.products,
                t.warranties,
                t.delivery_charge,
                t.customer_total,
                t.profit,
                t.income_tax,
                t.net_profit
            ],
            expected
        );
        group.bench_with_input(BenchmarkId::new("price", n), &lines, |b, lines| {
            b.iter(|| {
                price(
                    black_box(lines),
                    black_box(shipping()),
                    black_box(commission),
                )
            })
        });
        group.bench_with_input(BenchmarkId::new("inline_baseline", n), &raw, |b, raw| {
            b.iter(|| {
                inline(
                    black_box(raw),
                    black_box(&warranties),
                    black_box(shipping()),
                    black_box(commission),
                )
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench_pricing
}

/// Runs `n` pricings of every size (or of the one named) by one of the two paths
/// (`PRICING_LOOP=price:N[:LINES]` or `inline:N[:LINES]`).
fn run_loop(spec: &str) {
    let mut parts = spec.split(':');
    let path = parts.next().unwrap_or("price");
    let n: usize = parts.next().and_then(|n| n.parse().ok()).expect("a count");
    let only: Option<usize> = parts.next().and_then(|size| size.parse().ok());
    let commission = Decimal::from(4);
    for size in SIZES
        .into_iter()
        .filter(|size| only.is_none_or(|o| o == *size))
    {
        let (raw, warranties) = inputs(size);
        let lines = line_inputs(&raw, &warranties);
        for _ in 0..n {
            match path {
                "price" => {
                    black_box(price(black_box(&lines), shipping(), commission));
                }
                _ => {
                    black_box(inline(black_box(&raw), &warranties, shipping(), commission));
                }
            }
        }
    }
}

fn main() {
    if let Ok(spec) = std::env::var("PRICING_LOOP") {
        return run_loop(&spec);
    }
    let estimates = run_criterion(&[benches]);
    for n in SIZES {
        estimates.ratio(
            &format!("price/inline {n} line{}", if n == 1 { "" } else { "s" }),
            "pricing",
            &format!("price/{n}"),
            &format!("inline_baseline/{n}"),
            Goal::AtMost(1.25),
        );
    }
}
