//! The operations a script is made of, drawn by proptest, and their readable form.
//!
//! An operation names things by position (the 2nd order placed, the 3rd variant of the
//! sandbox's list), resolved against the model when it runs (modulo how many there are), so
//! that a shrunk script still reads and runs.

use std::fmt;

use proptest::prelude::*;

/// Who acts: marketers A and B, the sandbox's supplier and a second one.
pub(super) const ACCOUNTS: [&str; 4] = ["marketer A", "marketer B", "supplier 1", "supplier 2"];

/// A line of an order to place.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct LineSpec {
    /// Index into the model's variants.
    pub variant: usize,
    /// Pieces.
    pub quantity: i64,
    /// Profit per piece, as sent.
    pub profit: &'static str,
    /// A warranty: index into the model's warranties.
    pub warranty: Option<usize>,
}

/// Counts reported for one line (index into the order's lines; past them: a line the order
/// does not have).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct CountSpec {
    /// The line.
    pub line: usize,
    /// delivered, returned, damaged, lost, destroyed.
    pub counts: [Option<i64>; 5],
}

/// Where a move goes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Target {
    /// The natural next status from where the order is (the choice picks among several).
    Next(u8),
    /// A status key, whatever the order's status.
    Status(&'static str),
}

/// How much a withdrawal asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Amount {
    /// A fixed amount.
    Fixed(&'static str),
    /// Everything `ready` shows.
    AllReady,
    /// `ready` and one piastre more.
    OverReady,
}

/// One operation of a script.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Op {
    /// `POST /orders` by a marketer.
    Place {
        /// 0 or 1.
        marketer: usize,
        /// Lines.
        lines: Vec<LineSpec>,
    },
    /// `POST /orders/{id}/cancel` by its marketer.
    Cancel {
        /// The nth order placed.
        order: usize,
    },
    /// The platform's move (`POST /sandbox/orders/{id}/status`).
    Move {
        /// The nth order placed.
        order: usize,
        /// Where to.
        to: Target,
        /// Counts sent with it (`lines`).
        counts: Vec<CountSpec>,
    },
    /// The operator's correction (`set_line_outcomes`).
    Correct {
        /// The nth order placed.
        order: usize,
        /// Counts.
        counts: Vec<CountSpec>,
    },
    /// `POST /quotes` by a supplier.
    Quote {
        /// 0 or 1 (supplier 1 or 2).
        supplier: usize,
        /// Index into the model's variants.
        variant: usize,
        /// `unit_price` as sent.
        price: &'static str,
        /// Pieces.
        quantity: i64,
        /// `valid_until` in hours from now.
        valid_hours: Option<i64>,
        /// With an `Idempotency-Key`.
        keyed: bool,
    },
    /// The same `POST /quotes` again with its key and body.
    ReplayQuote {
        /// The nth keyed quote request.
        nth: usize,
    },
    /// `POST /quotes/{id}/withdraw` by its supplier.
    WithdrawQuote {
        /// The nth quote known.
        quote: usize,
    },
    /// The operator accepts or rejects a quote.
    DecideQuote {
        /// The nth quote known.
        quote: usize,
        /// Accept (else reject).
        accept: bool,
    },
    /// An operator stock delta.
    Stock {
        /// Index into the model's variants.
        variant: usize,
        /// Delta.
        delta: i64,
    },
    /// An operator compare-and-set of a variant's stock.
    SetStock {
        /// Index into the model's variants.
        variant: usize,
        /// Offset of the expected quantity from the true one (0: up to date).
        stale_by: i64,
        /// The new quantity.
        new: i64,
    },
    /// The operator moves a product to another supplier.
    MoveProduct {
        /// Index into the model's products.
        product: usize,
        /// Supplier 1 or 2, or none (the platform's own).
        to: Option<usize>,
    },
    /// A withdrawal request on an account's wallet page.
    Withdraw {
        /// Index into [`ACCOUNTS`].
        account: usize,
        /// How much.
        amount: Amount,
    },
    /// The platform pays or rejects a withdrawal.
    DecideWithdrawal {
        /// The nth withdrawal requested.
        nth: usize,
        /// Pay (else reject).
        pay: bool,
    },
    /// The clock moves forward.
    Advance {
        /// Seconds.
        seconds: i64,
    },
}

impl Op {
    /// The operation's kind, as `LAWS_WITHOUT` names it.
    pub fn kind(&self) -> &'static str {
        match self {
            Op::Place { .. } => "place",
            Op::Cancel { .. } => "cancel",
            Op::Move { .. } => "move",
            Op::Correct { .. } => "correct",
            Op::Quote { .. } => "quote",
            Op::ReplayQuote { .. } => "replay",
            Op::WithdrawQuote { .. } => "withdraw_quote",
            Op::DecideQuote { .. } => "decide_quote",
            Op::Stock { .. } => "stock",
            Op::SetStock { .. } => "set_stock",
            Op::MoveProduct { .. } => "move_product",
            Op::Withdraw { .. } => "withdraw",
            Op::DecideWithdrawal { .. } => "decide_withdrawal",
            Op::Advance { .. } => "advance",
        }
    }
}

fn count_text(c: &CountSpec) -> String {
    const NAMES: [&str; 5] = ["delivered", "returned", "damaged", "lost", "destroyed"];
    let given: Vec<String> = c
        .counts
        .iter()
        .zip(NAMES)
        .filter_map(|(n, name)| n.map(|n| format!("{name} {n}")))
        .collect();
    let given = if given.is_empty() {
        "nothing".to_owned()
    } else {
        given.join(", ")
    };
    format!("line {}: {given}", c.line + 1)
}

fn counts_text(counts: &[CountSpec]) -> String {
    if counts.is_empty() {
        String::new()
    } else {
        let parts: Vec<String> = counts.iter().map(count_text).collect();
        format!(" with [{}]", parts.join("; "))
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Op::Place { marketer, lines } => {
                let lines: Vec<String> = lines
                    .iter()
                    .map(|l| {
                        let warranty = l
                            .warranty
                            .map_or(String::new(), |w| format!(" with warranty #{}", w + 1));
                        format!(
                            "variant #{} x{} profit {}{warranty}",
                            l.variant + 1,
                            l.quantity,
                            l.profit
                        )
                    })
                    .collect();
                write!(
                    f,
                    "{} places an order: {}",
                    ACCOUNTS[*marketer],
                    lines.join(" + ")
                )
            }
            Op::Cancel { order } => write!(f, "marketer cancels order #{}", order + 1),
            Op::Move { order, to, counts } => {
                let to = match to {
                    Target::Next(c) => format!("its next status (choice {c})"),
                    Target::Status(s) => (*s).to_owned(),
                };
                write!(
                    f,
                    "move order #{} to {to}{}",
                    order + 1,
                    counts_text(counts)
                )
            }
            Op::Correct { order, counts } => {
                write!(f, "correct order #{}{}", order + 1, counts_text(counts))
            }
            Op::Quote {
                supplier,
                variant,
                price,
                quantity,
                valid_hours,
                keyed,
            } => {
                let until = valid_hours.map_or(String::new(), |h| format!(", valid {h} h"));
                let keyed = if *keyed { ", with Idempotency-Key" } else { "" };
                write!(
                    f,
                    "{} quotes variant #{} x{quantity} at {price}{until}{keyed}",
                    ACCOUNTS[2 + supplier],
                    variant + 1
                )
            }
            Op::ReplayQuote { nth } => write!(f, "replay keyed quote request #{}", nth + 1),
            Op::WithdrawQuote { quote } => write!(f, "supplier withdraws quote #{}", quote + 1),
            Op::DecideQuote { quote, accept } => write!(
                f,
                "operator {} quote #{}",
                if *accept { "accepts" } else { "rejects" },
                quote + 1
            ),
            Op::Stock { variant, delta } => {
                write!(
                    f,
                    "operator stock delta {delta:+} on variant #{}",
                    variant + 1
                )
            }
            Op::SetStock {
                variant,
                stale_by,
                new,
            } if *variant >= 8 => write!(
                f,
                "operator sets the stock of the first line of the {} newest order to {new} \
                 (expected off by {stale_by})",
                variant - 7
            ),
            Op::SetStock {
                variant,
                stale_by,
                new,
            } => write!(
                f,
                "operator sets variant #{} stock to {new} (expected off by {stale_by})",
                variant + 1
            ),
            Op::MoveProduct { product, to } => write!(
                f,
                "operator moves product #{} to {}",
                product + 1,
                to.map_or("the platform", |s| ACCOUNTS[2 + s])
            ),
            Op::Withdraw { account, amount } => {
                let amount = match amount {
                    Amount::Fixed(a) => (*a).to_owned(),
                    Amount::AllReady => "all of ready".to_owned(),
                    Amount::OverReady => "ready + 0.01".to_owned(),
                };
                write!(f, "{} asks to withdraw {amount}", ACCOUNTS[*account])
            }
            Op::DecideWithdrawal { nth, pay } => write!(
                f,
                "operator {} withdrawal #{}",
                if *pay { "pays" } else { "rejects" },
                nth + 1
            ),
            Op::Advance { seconds } => {
                write!(f, "clock advances {}", duration_text(*seconds))
            }
        }
    }
}

fn duration_text(seconds: i64) -> String {
    if seconds % 86_400 == 0 {
        format!("{} days", seconds / 86_400)
    } else if seconds % 3_600 == 0 {
        format!("{} hours", seconds / 3_600)
    } else {
        format!("{seconds} s")
    }
}

/// A script: its `Debug` is the numbered list proptest prints as the minimal input.
#[derive(Clone, PartialEq)]
pub(super) struct Script(pub Vec<Op>);

impl fmt::Debug for Script {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f)?;
        for (i, op) in self.0.iter().enumerate() {
            writeln!(f, "  {}. {op}", i + 1)?;
        }
        Ok(())
    }
}

const PROFITS: [&str; 5] = ["0.00", "10.00", "12.35", "33.33", "150.00"];
const PRICES: [&str; 9] = [
    "37.25",
    "0.01",
    "1000000.00",
    "1000000.01",
    "0",
    "12.345",
    "99999999999999999999999",
    "250.00",
    "-5.00",
];
const STATUSES: [&str; 10] = [
    "order_confirmed",
    "order_preparing",
    "order_shipped",
    "order_delivered",
    "order_partially_delivered",
    "order_returned",
    "order_archived",
    "order_cancelled",
    "rejected_by_customer",
    "order_pending",
];
const DELTAS: [i64; 12] = [
    1,
    -1,
    25,
    -30,
    -600,
    999_999_000,
    1_000_000_000,
    -1_000_000_000,
    i64::MAX,
    i64::MIN,
    0,
    500,
];
const NEW_STOCK: [i64; 7] = [0, 7, 480, 999_999_999, 1_000_000_000, 1_000_000_001, -1];
const WITHDRAWALS: [&str; 5] = ["100.00", "150.55", "99.99", "1000000.00", "100.001"];
const ADVANCES: [i64; 6] = [
    3_600,
    86_400,
    7 * 86_400,
    15 * 86_400,
    31 * 86_400,
    95 * 3_600,
];

fn count() -> impl Strategy<Value = Option<i64>> {
    prop_oneof![
        5 => Just(None),
        3 => (0i64..=3).prop_map(Some),
        1 => prop_oneof![Just(Some(-1)), Just(Some(5)), Just(Some(1_000))],
    ]
}

fn counts() -> impl Strategy<Value = Vec<CountSpec>> {
    let spec = (0usize..4, proptest::array::uniform5(count()))
        .prop_map(|(line, counts)| CountSpec { line, counts });
    prop_oneof![
        2 => Just(Vec::new()),
        3 => prop::collection::vec(spec, 1..=2),
    ]
}

fn line() -> impl Strategy<Value = LineSpec> {
    (
        0usize..8,
        prop_oneof![6 => 1i64..=4, 1 => Just(41i64), 1 => Just(1_000i64)],
        prop::sample::select(PROFITS.to_vec()),
        prop_oneof![3 => Just(None), 1 => (0usize..3).prop_map(Some)],
    )
        .prop_map(|(variant, quantity, profit, warranty)| LineSpec {
            variant,
            quantity,
            profit,
            warranty,
        })
}

fn target() -> impl Strategy<Value = Target> {
    prop_oneof![
        6 => any::<u8>().prop_map(Target::Next),
        2 => prop::sample::select(STATUSES.to_vec()).prop_map(Target::Status),
    ]
}

/// One operation, weighted toward what moves money and stock.
pub(super) fn op() -> impl Strategy<Value = Op> {
    let index = 0usize..64;
    prop_oneof![
        10 => (0usize..2, prop::collection::vec(line(), 1..=3))
            .prop_map(|(marketer, lines)| Op::Place { marketer, lines }),
        3 => index.clone().prop_map(|order| Op::Cancel { order }),
        // Moves and corrections most: an order needs three moves to settle, and the laws
        // break where settling and correcting meet.
        40 => (index.clone(), target(), counts())
            .prop_map(|(order, to, counts)| Op::Move { order, to, counts }),
        12 => (index.clone(), counts()).prop_map(|(order, counts)| Op::Correct { order, counts }),
        6 => (
            0usize..2,
            0usize..8,
            prop::sample::select(PRICES.to_vec()),
            prop_oneof![Just(1i64), Just(40), Just(100_000), Just(100_001), Just(0)],
            prop_oneof![Just(None), Just(Some(1i64)), Just(Some(48)), Just(Some(24 * 91)), Just(Some(-1))],
            any::<bool>(),
        )
            .prop_map(|(supplier, variant, price, quantity, valid_hours, keyed)| Op::Quote {
                supplier,
                variant,
                price,
                quantity,
                valid_hours,
                keyed,
            }),
        2 => index.clone().prop_map(|nth| Op::ReplayQuote { nth }),
        2 => index.clone().prop_map(|quote| Op::WithdrawQuote { quote }),
        4 => (index.clone(), any::<bool>())
            .prop_map(|(quote, accept)| Op::DecideQuote { quote, accept }),
        4 => (0usize..8, prop::sample::select(DELTAS.to_vec()))
            .prop_map(|(variant, delta)| Op::Stock { variant, delta }),
        // Often a shelf counted empty: returned pieces then sold out, where a correction
        // that takes them back must be refused.
        4 => (
            0usize..12,
            prop_oneof![3 => Just(0i64), 1 => Just(1)],
            prop_oneof![1 => Just(0i64), 1 => prop::sample::select(NEW_STOCK.to_vec())],
        )
            .prop_map(|(variant, stale_by, new)| Op::SetStock { variant, stale_by, new }),
        2 => (0usize..3, prop_oneof![Just(None), Just(Some(0usize)), Just(Some(1))])
            .prop_map(|(product, to)| Op::MoveProduct { product, to }),
        6 => (
            0usize..4,
            prop_oneof![
                2 => prop::sample::select(WITHDRAWALS.to_vec()).prop_map(Amount::Fixed),
                2 => Just(Amount::AllReady),
                1 => Just(Amount::OverReady),
            ],
        )
            .prop_map(|(account, amount)| Op::Withdraw { account, amount }),
        4 => (index.clone(), any::<bool>()).prop_map(|(nth, pay)| Op::DecideWithdrawal { nth, pay }),
        4 => prop::sample::select(ADVANCES.to_vec()).prop_map(|seconds| Op::Advance { seconds }),
    ]
}

/// One operation of a script that settles, empties shelves and corrects: few orders, many
/// moves and corrections, and shelves of the orders' variants counted empty, so that a
/// correction taking back returned pieces that were sold out comes within a few steps.
pub(super) fn settling_op() -> impl Strategy<Value = Op> {
    let index = 0usize..64;
    // Plain lines of a few pieces, and counts that name them and fit them, mostly.
    let line = (0usize..8, 1i64..=4).prop_map(|(variant, quantity)| LineSpec {
        variant,
        quantity,
        profit: PROFITS[1],
        warranty: None,
    });
    // Half of them name returned pieces only: on a delivered order the rest are delivered,
    // so a correction moves pieces between the shelf and the customer, both ways.
    let any_counts = proptest::array::uniform5(prop_oneof![
        3 => Just(None),
        2 => (0i64..=2).prop_map(Some),
    ]);
    let returned_only = (0i64..=2).prop_map(|n| [None, Some(n), None, None, None]);
    let spec = (0usize..2, prop_oneof![any_counts, returned_only])
        .prop_map(|(line, counts)| CountSpec { line, counts });
    let counts = prop_oneof![1 => Just(Vec::new()), 3 => prop::collection::vec(spec, 1..=2)];
    prop_oneof![
        2 => (0usize..2, prop::collection::vec(line, 1..=2))
            .prop_map(|(marketer, lines)| Op::Place { marketer, lines }),
        1 => index.clone().prop_map(|order| Op::Cancel { order }),
        // Plain steps forward, and settling moves with counts.
        8 => (index.clone(), any::<u8>()).prop_map(|(order, choice)| Op::Move {
            order,
            to: Target::Next(choice),
            counts: Vec::new(),
        }),
        4 => (
            index.clone(),
            prop::sample::select(STATUSES[3..6].to_vec()),
            counts.clone(),
        )
            .prop_map(|(order, to, counts)| Op::Move {
                order,
                to: Target::Status(to),
                counts,
            }),
        6 => (index.clone(), counts).prop_map(|(order, counts)| Op::Correct { order, counts }),
        3 => (8usize..12).prop_map(|variant| Op::SetStock { variant, stale_by: 0, new: 0 }),
    ]
}

/// Scripts of 1 to `steps` operations, none of the kinds in `without`.
pub(super) fn scripts(
    steps: usize,
    without: Vec<String>,
    settling: bool,
) -> impl Strategy<Value = Script> {
    let op = match settling {
        false => op().boxed(),
        true => settling_op().boxed(),
    }
    .prop_filter("a kind left out by LAWS_WITHOUT", move |op| {
        !without.iter().any(|k| k == op.kind())
    });
    // Every script starts with an order: most operations need one.
    let first = (0usize..2, prop::collection::vec(line(), 1..=3))
        .prop_map(|(marketer, lines)| Op::Place { marketer, lines });
    (first, prop::collection::vec(op, 0..steps.max(1))).prop_map(|(first, mut rest)| {
        rest.insert(0, first);
        Script(rest)
    })
}
