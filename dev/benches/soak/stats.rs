//! What the soak's clients saw: latency histograms and counts per kind of request.

use std::collections::BTreeMap;

use rand::Rng;
use rand::rngs::StdRng;

/// Latencies in microseconds, in buckets of about 3% (32 per power of two): constant memory
/// however long the run.
#[derive(Clone)]
pub(super) struct Histogram {
    pub(super) counts: Vec<u64>,
    pub(super) total: u64,
}

impl Histogram {
    const SUB_BITS: u32 = 5;
    const SUB: usize = 1 << Self::SUB_BITS;

    fn new() -> Self {
        Self {
            counts: vec![0; 64 * Self::SUB],
            total: 0,
        }
    }

    fn index(value: u64) -> usize {
        let exp = 63 - value.max(1).leading_zeros();
        if exp < Self::SUB_BITS {
            return value as usize;
        }
        let mantissa = (value >> (exp - Self::SUB_BITS)) as usize - Self::SUB;
        (exp - Self::SUB_BITS + 1) as usize * Self::SUB + mantissa
    }

    /// The smallest value of bucket `index`.
    fn lowest(index: usize) -> u64 {
        if index < Self::SUB {
            return index as u64;
        }
        let exp = (index / Self::SUB - 1) as u32 + Self::SUB_BITS;
        ((index % Self::SUB + Self::SUB) as u64) << (exp - Self::SUB_BITS)
    }

    pub(super) fn record(&mut self, micros: u64) {
        self.counts[Self::index(micros)] += 1;
        self.total += 1;
    }

    /// The `q` quantile in microseconds (the lowest value of its bucket).
    pub(super) fn quantile(&self, q: f64) -> u64 {
        let rank = ((self.total as f64 * q).ceil() as u64).max(1);
        let mut seen = 0;
        for (index, count) in self.counts.iter().enumerate() {
            seen += count;
            if seen >= rank {
                return Self::lowest(index);
            }
        }
        0
    }
}

/// What the clients send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Products,
    Product,
    Categories,
    ShippingOptions,
    Quote,
    Order,
    KeyedOrder,
    Resolve,
    Cancel,
    Orders,
    Wallet,
    Me,
}

impl Kind {
    /// The request kinds drawn each turn, with their weights (`Resolve` is not drawn: it is
    /// sent for each disconnected order).
    const MIX: [(Kind, u32); 11] = [
        (Kind::Products, 14),
        (Kind::Product, 10),
        (Kind::Categories, 7),
        (Kind::ShippingOptions, 7),
        (Kind::Quote, 8),
        (Kind::Order, 12),
        (Kind::KeyedOrder, 12),
        (Kind::Cancel, 8),
        (Kind::Orders, 8),
        (Kind::Wallet, 7),
        (Kind::Me, 7),
    ];

    pub(super) fn label(self) -> &'static str {
        match self {
            Kind::Products => "GET /products?per_page=25",
            Kind::Product => "GET /products/{id}",
            Kind::Categories => "GET /categories",
            Kind::ShippingOptions => "GET /shipping/options",
            Kind::Quote => "POST /shipping/quote",
            Kind::Order => "POST /orders",
            Kind::KeyedOrder => "POST /orders (Idempotency-Key)",
            Kind::Resolve => "POST /orders (key again after disconnect)",
            Kind::Cancel => "POST /orders/{id}/cancel",
            Kind::Orders => "GET /orders?per_page=25",
            Kind::Wallet => "GET /wallet",
            Kind::Me => "GET /me",
        }
    }

    pub(super) fn draw(rng: &mut StdRng) -> Kind {
        let total: u32 = Self::MIX.iter().map(|(_, w)| w).sum();
        let mut roll = rng.random_range(0..total);
        for (kind, weight) in Self::MIX {
            if roll < weight {
                return kind;
            }
            roll -= weight;
        }
        Kind::Me
    }
}

/// What the clients saw, all connections together.
#[derive(Default)]
pub(super) struct Stats {
    pub(super) latency: BTreeMap<&'static str, Histogram>,
    pub(super) statuses: BTreeMap<(&'static str, u16), u64>,
    pub(super) disconnects: BTreeMap<&'static str, u64>,
    pub(super) io_errors: u64,
}

impl Stats {
    pub(super) fn record(&mut self, kind: Kind, status: u16, micros: u64) {
        self.latency
            .entry(kind.label())
            .or_insert_with(Histogram::new)
            .record(micros);
        *self.statuses.entry((kind.label(), status)).or_default() += 1;
    }
}
