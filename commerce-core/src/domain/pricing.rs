//! The one pricing function (docs/money-and-time.md), used by the quote, order creation and the benches.
//!
//! Per line, with `sale = price + profit` per piece:
//! - line products = `sale × quantity`
//! - warranty unit price = round(`admin_fee + sale × percent / 100`), total = unit × quantity
//! - line profit = `profit × quantity`
//!
//! Per order: `goods = products + warranties`;
//! `delivery_charge = round(base × (1 + shipping_tax/100) + goods × total_due_tax/100)`;
//! `customer_total = goods + delivery_charge`; `income_tax = round(profit × commission/100)`;
//! `net_profit = profit − income_tax`. Rounding is half away from zero, to the piastre.

use rust_decimal::Decimal;

use crate::model::{ShippingRate, Totals, Warranty};
use crate::money::round_money;

/// The price terms of a warranty.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct WarrantyTerms {
    /// Fixed fee.
    pub admin_fee: Decimal,
    /// Percent of the per-piece sale price.
    pub percent: Decimal,
}

impl WarrantyTerms {
    /// A `WarrantyTerms` of its fields, in their order.
    pub fn new(admin_fee: Decimal, percent: Decimal) -> Self {
        Self { admin_fee, percent }
    }
}

impl From<&Warranty> for WarrantyTerms {
    fn from(w: &Warranty) -> Self {
        Self {
            admin_fee: w.admin_fee,
            percent: w.percent,
        }
    }
}

/// The shipping terms of one governorate under one option.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct ShippingTerms {
    /// Base delivery charge.
    pub base: Decimal,
    /// Tax on the base charge, percent.
    pub shipping_tax_percent: Decimal,
    /// Percent of the goods added to the charge.
    pub total_due_tax_percent: Decimal,
}

impl ShippingTerms {
    /// A `ShippingTerms` of its fields, in their order.
    pub fn new(
        base: Decimal,
        shipping_tax_percent: Decimal,
        total_due_tax_percent: Decimal,
    ) -> Self {
        Self {
            base,
            shipping_tax_percent,
            total_due_tax_percent,
        }
    }
}

impl From<&ShippingRate> for ShippingTerms {
    fn from(r: &ShippingRate) -> Self {
        Self {
            base: r.delivery_charge,
            shipping_tax_percent: r.shipping_tax_percent,
            total_due_tax_percent: r.total_due_tax_percent,
        }
    }
}

/// One line to price.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct LineInput<'a> {
    /// Variant price (the marketer's cost) per piece.
    pub price: Decimal,
    /// The marketer's profit per piece.
    pub profit: Decimal,
    /// Pieces.
    pub quantity: i64,
    /// Warranties chosen on the line.
    pub warranties: &'a [WarrantyTerms],
}

impl<'a> LineInput<'a> {
    /// A `LineInput` of its fields, in their order.
    pub fn new(
        price: Decimal,
        profit: Decimal,
        quantity: i64,
        warranties: &'a [WarrantyTerms],
    ) -> Self {
        Self {
            price,
            profit,
            quantity,
            warranties,
        }
    }
}

/// A priced line.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct LinePrice {
    /// Sale price per piece.
    pub sale: Decimal,
    /// Sale price times quantity.
    pub products: Decimal,
    /// Warranty totals of the line.
    pub warranties: Decimal,
    /// Profit times quantity.
    pub profit: Decimal,
}

impl LinePrice {
    /// A `LinePrice` of its fields, in their order.
    pub fn new(sale: Decimal, products: Decimal, warranties: Decimal, profit: Decimal) -> Self {
        Self {
            sale,
            products,
            warranties,
            profit,
        }
    }
}

/// The priced order or quote.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Priced {
    /// Lines in input order.
    pub lines: Vec<LinePrice>,
    /// Money of the whole.
    pub totals: Totals,
}

impl Priced {
    /// A `Priced` of its fields, in their order.
    pub fn new(lines: Vec<LinePrice>, totals: Totals) -> Self {
        Self { lines, totals }
    }
}

/// `amount × percent / 100`, exactly. Dividing by 100 is moving the decimal point two places,
/// which is what raising the scale by 2 does without Decimal's general division; a product
/// already at the largest scale is divided.
fn percent_of(amount: Decimal, percent: Decimal) -> Decimal {
    let mut product = amount * percent;
    match product.set_scale(product.scale() + 2) {
        Ok(()) => product,
        Err(_) => amount * percent / Decimal::ONE_HUNDRED,
    }
}

/// Unit price of a warranty on a piece sold at `sale`.
pub fn warranty_unit_price(sale: Decimal, terms: WarrantyTerms) -> Decimal {
    round_money(terms.admin_fee + percent_of(sale, terms.percent))
}

/// The delivery charge for goods worth `goods`.
pub fn delivery_charge(terms: ShippingTerms, goods: Decimal) -> Decimal {
    round_money(
        terms.base
            + percent_of(terms.base, terms.shipping_tax_percent)
            + percent_of(goods, terms.total_due_tax_percent),
    )
}

/// The commission on a profit.
pub fn commission(profit: Decimal, percent: Decimal) -> Decimal {
    round_money(percent_of(profit, percent))
}

/// Prices lines under shipping terms and a commission percent.
pub fn price(
    lines: &[LineInput<'_>],
    shipping: ShippingTerms,
    commission_percent: Decimal,
) -> Priced {
    let mut products = Decimal::ZERO;
    let mut warranties = Decimal::ZERO;
    let mut profit = Decimal::ZERO;
    let priced: Vec<LinePrice> = lines
        .iter()
        .map(|line| {
            let quantity = Decimal::from(line.quantity);
            let sale = line.price + line.profit;
            let line_warranties: Decimal = line
                .warranties
                .iter()
                .map(|w| warranty_unit_price(sale, *w) * quantity)
                .sum();
            let priced = LinePrice {
                sale,
                products: sale * quantity,
                warranties: line_warranties,
                profit: line.profit * quantity,
            };
            products += priced.products;
            warranties += priced.warranties;
            profit += priced.profit;
            priced
        })
        .collect();
    let goods = products + warranties;
    let delivery = delivery_charge(shipping, goods);
    let income_tax = commission(profit, commission_percent);
    Priced {
        lines: priced,
        totals: Totals {
            products: round_money(products),
            warranties: round_money(warranties),
            delivery_charge: delivery,
            customer_total: round_money(goods + delivery),
            profit: round_money(profit),
            income_tax,
            net_profit: round_money(profit - income_tax),
            income_tax_percent: round_money(commission_percent),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::str::FromStr;

    fn d(s: &str) -> Decimal {
        Decimal::from_str(s).unwrap()
    }

    fn cairo_express() -> ShippingTerms {
        ShippingTerms {
            base: d("50.00"),
            shipping_tax_percent: d("14.00"),
            total_due_tax_percent: d("1.00"),
        }
    }

    #[test]
    fn worked_example_to_the_piastre() {
        let warranty = [WarrantyTerms {
            admin_fee: d("10.00"),
            percent: d("5.00"),
        }];
        let lines = [
            LineInput {
                price: d("200.00"),
                profit: d("45.50"),
                quantity: 2,
                warranties: &warranty,
            },
            LineInput {
                price: d("99.99"),
                profit: d("0.01"),
                quantity: 3,
                warranties: &[],
            },
        ];
        let priced = price(&lines, cairo_express(), d("4"));
        let t = &priced.totals;
        // sale 245.50 x 2 = 491.00; 100.00 x 3 = 300.00
        assert_eq!(t.products.to_string(), "791.00");
        // warranty unit = 10 + 245.50 x 5% = 22.275 -> 22.28; x2 = 44.56
        assert_eq!(t.warranties.to_string(), "44.56");
        // delivery = 50 x 1.14 + 835.56 x 1% = 57 + 8.3556 = 65.3556 -> 65.36
        assert_eq!(t.delivery_charge.to_string(), "65.36");
        assert_eq!(t.customer_total.to_string(), "900.92");
        // profit = 91.00 + 0.03 = 91.03; commission 3.6412 -> 3.64
        assert_eq!(t.profit.to_string(), "91.03");
        assert_eq!(t.income_tax.to_string(), "3.64");
        assert_eq!(t.net_profit.to_string(), "87.39");
        assert_eq!(t.income_tax_percent.to_string(), "4.00");
    }

    #[test]
    fn commission_rounds_half_away_from_zero() {
        // 12.50 x 4% = 0.50 exactly; 0.125 -> 0.13 (banker's would give 0.12)
        assert_eq!(commission(d("3.125"), d("4")).to_string(), "0.13");
        assert_eq!(commission(d("0.625"), d("4")).to_string(), "0.03");
    }

    #[test]
    fn example_at_500_matches_formula() {
        assert_eq!(
            delivery_charge(cairo_express(), d("500.00")).to_string(),
            "62.00"
        );
    }

    fn money() -> impl Strategy<Value = Decimal> {
        (0i64..=10_000_000).prop_map(|p| Decimal::new(p, 2))
    }

    fn percent() -> impl Strategy<Value = Decimal> {
        (0i64..=5_000).prop_map(|p| Decimal::new(p, 2))
    }

    prop_compose! {
        fn line()(price in money(), profit in money(), quantity in 1i64..=999,
                  warranties in prop::collection::vec((money(), percent()), 0..=10)) -> (Decimal, Decimal, i64, Vec<WarrantyTerms>) {
            (price, profit, quantity, warranties.into_iter().map(|(admin_fee, percent)| WarrantyTerms { admin_fee, percent }).collect())
        }
    }

    proptest! {
        #[test]
        fn invariants_hold_for_all_inputs(
            raw in prop::collection::vec(line(), 1..=20),
            base in money(), tax in percent(), due in percent(), commission_percent in percent(),
        ) {
            let lines: Vec<LineInput> = raw.iter().map(|(price, profit, quantity, w)| LineInput {
                price: *price, profit: *profit, quantity: *quantity, warranties: w,
            }).collect();
            let shipping = ShippingTerms { base, shipping_tax_percent: tax, total_due_tax_percent: due };
            let priced = price(&lines, shipping, commission_percent);
            let t = &priced.totals;
            let sum = |f: fn(&LinePrice) -> Decimal| priced.lines.iter().map(f).sum::<Decimal>();
            prop_assert_eq!(t.products, sum(|l| l.products));
            prop_assert_eq!(t.warranties, sum(|l| l.warranties));
            prop_assert_eq!(t.profit, sum(|l| l.profit));
            prop_assert_eq!(t.customer_total, t.products + t.warranties + t.delivery_charge);
            prop_assert_eq!(t.net_profit + t.income_tax, t.profit);
            for amount in [t.products, t.warranties, t.delivery_charge, t.customer_total, t.profit, t.income_tax, t.net_profit] {
                prop_assert!(!amount.is_sign_negative() || amount.is_zero());
                prop_assert_eq!(amount.scale(), 2);
            }
            // Each line's products are exactly sale x quantity, warranty units are whole piastres.
            for (line, input) in priced.lines.iter().zip(&lines) {
                prop_assert_eq!(line.products, (input.price + input.profit) * Decimal::from(input.quantity));
                for w in input.warranties {
                    let unit = warranty_unit_price(line.sale, *w);
                    prop_assert_eq!(unit, round_money(unit));
                }
            }
            // Commission never exceeds the profit when the percent is at most 100.
            prop_assert!(t.income_tax <= t.profit);
        }

        #[test]
        fn pricing_is_deterministic(raw in prop::collection::vec(line(), 1..=5), base in money()) {
            let lines: Vec<LineInput> = raw.iter().map(|(price, profit, quantity, w)| LineInput {
                price: *price, profit: *profit, quantity: *quantity, warranties: w,
            }).collect();
            let shipping = ShippingTerms { base, shipping_tax_percent: Decimal::ZERO, total_due_tax_percent: Decimal::ZERO };
            prop_assert_eq!(price(&lines, shipping, Decimal::from(4)), price(&lines, shipping, Decimal::from(4)));
        }
    }
}
