//! The storage format of an event's snapshot: the `snapshot` column of `webhook_deliveries`
//! (migration `20261213000000_event_snapshots`), a JSON document of this crate's own that
//! keeps an [`EventSnapshot`] as data. The store never renders an event: the dispatcher
//! renders the body from the snapshot when it sends (`commerce_core::webhooks::render_event`).
//!
//! The document is written by these types only, so the format is this crate's to keep (the
//! model's records have no serde form to follow):
//!
//! - an order event: `{"order": {...}, "previous": "order_confirmed" | null, "hold_days": 14}`,
//!   the order with every field the model's [`Order`] has, its statuses in their storage
//!   spelling, its amounts as decimal strings (exact, their scale kept) and its instants in
//!   nanoseconds since the Unix epoch, as the rest of the store keeps them;
//! - a `quote.updated` event: `{"quote": {...}, "previous": "pending"}`, the quote with every
//!   field the model's [`Quote`] has (amounts, statuses and instants as for an order);
//! - a `withdrawal.updated` event: `{"withdrawal": {...}, "previous": "pending"}`, likewise;
//! - a `catalog.changed` event: `{"cursor": "...", "at": 1800000000000000000}`;
//! - a ping: `{"ping": 7, "at": 1800000000000000000}`.
//!
//! A row written before the migration has no snapshot and the body rendered then in
//! `payload`: it is read as [`EventSnapshot::Rendered`] and sent as it is. A row written
//! since has an empty `payload` (the column stays `NOT NULL` on both databases).

use std::sync::Arc;

use commerce_core::model::*;
use commerce_core::store::StoreError;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::*;

/// The `snapshot` column of an event: `None` for a body rendered by a caller (a `Rendered`
/// snapshot is stored in `payload`, as rows written before the column were).
pub(crate) fn snapshot_json(snapshot: &EventSnapshot) -> Result<Option<String>, StoreError> {
    let stored = match snapshot {
        EventSnapshot::Order {
            order,
            previous,
            context,
        } => Stored::Order {
            order: Box::new(StoredOrder::of(order)?),
            previous: previous.map(|s| s.as_str().to_owned()),
            hold_days: context.hold_days,
        },
        EventSnapshot::Quote { quote, previous } => Stored::Quote {
            quote: StoredQuote::of(quote)?,
            previous: previous.as_str().to_owned(),
        },
        EventSnapshot::Withdrawal {
            withdrawal,
            previous,
        } => Stored::Withdrawal {
            withdrawal: StoredWithdrawal::of(withdrawal)?,
            previous: previous.as_str().to_owned(),
        },
        EventSnapshot::CatalogChanged { cursor, at } => Stored::CatalogChanged {
            cursor: cursor.clone(),
            at: nanos(*at)?,
        },
        EventSnapshot::Ping { webhook_id, at } => Stored::Ping {
            ping: webhook_id.get(),
            at: nanos(*at)?,
        },
        EventSnapshot::Rendered(_) => return Ok(None),
        other => {
            return Err(StoreError::Invalid(format!(
                "an event snapshot this store cannot keep: {other:?}"
            )));
        }
    };
    serde_json::to_string(&stored)
        .map(Some)
        .map_err(|e| StoreError::Invalid(format!("event snapshot: {e}")))
}

/// The `payload` column of an event: the body of a `Rendered` snapshot, else empty.
pub(crate) fn payload_column(snapshot: &EventSnapshot) -> String {
    match snapshot {
        EventSnapshot::Rendered(body) => body.clone(),
        _ => String::new(),
    }
}

/// The snapshot of a delivery's row: its `snapshot` column read back, or (`None`, a row
/// written before the column) the body in its `payload`.
pub(crate) fn parse_snapshot(
    delivery: i64,
    snapshot: Option<&str>,
    payload: String,
) -> Result<EventSnapshot, StoreError> {
    let Some(json) = snapshot else {
        return Ok(EventSnapshot::Rendered(payload));
    };
    let bad = |e: String| corrupt(format!("snapshot of delivery {delivery}: {e}"));
    let stored: Stored = serde_json::from_str(json).map_err(|e| bad(e.to_string()))?;
    Ok(match stored {
        Stored::Order {
            order,
            previous,
            hold_days,
        } => EventSnapshot::Order {
            order: Arc::new(order.into_order()?),
            previous: previous.as_deref().map(status).transpose()?,
            context: EventContext::new(hold_days),
        },
        Stored::Quote { quote, previous } => EventSnapshot::Quote {
            quote: Arc::new(quote.into_quote()?),
            previous: parse(&previous, QuoteStatus::parse, "quote status")?,
        },
        Stored::Withdrawal {
            withdrawal,
            previous,
        } => EventSnapshot::Withdrawal {
            withdrawal: Arc::new(withdrawal.into_withdrawal()?),
            previous: parse(&previous, WithdrawalStatus::parse, "withdrawal status")?,
        },
        Stored::CatalogChanged { cursor, at } => EventSnapshot::CatalogChanged {
            cursor,
            at: instant(at),
        },
        Stored::Ping { ping, at } => EventSnapshot::Ping {
            webhook_id: WebhookId::new(ping),
            at: instant(at),
        },
    })
}

/// The document: an order, quote or withdrawal event or a ping, told apart by their keys.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Stored {
    Order {
        order: Box<StoredOrder>,
        previous: Option<String>,
        hold_days: i64,
    },
    Quote {
        quote: StoredQuote,
        previous: String,
    },
    Withdrawal {
        withdrawal: StoredWithdrawal,
        previous: String,
    },
    CatalogChanged {
        cursor: String,
        at: i64,
    },
    Ping {
        ping: i64,
        at: i64,
    },
}

fn amount(text: &str) -> Result<Decimal, StoreError> {
    text.parse()
        .map_err(|_| corrupt(format!("amount {text:?} in an event snapshot")))
}

/// `[status, at, reason]`, as the orders' `timeline` column keeps an entry.
type StoredEntry = (String, i64, Option<String>);

#[derive(Serialize, Deserialize)]
struct StoredOrder {
    id: i64,
    account_id: i64,
    number: String,
    legacy_number: Option<String>,
    external_reference: Option<String>,
    tracking_url: Option<String>,
    status: String,
    customer: StoredCustomer,
    shipping_option_id: i64,
    shipping_option_name: String,
    store_name: Option<String>,
    store_link: Option<String>,
    note: Option<String>,
    lines: Vec<StoredLine>,
    /// `products, warranties, delivery_charge, customer_total, profit, income_tax,
    /// net_profit, income_tax_percent`.
    totals: [String; 8],
    timeline: Vec<StoredEntry>,
    created_at: i64,
    updated_at: i64,
    confirmed_at: Option<i64>,
    delivered_at: Option<i64>,
}

#[derive(Serialize, Deserialize)]
struct StoredCustomer {
    name: String,
    phone: String,
    second_phone: Option<String>,
    address: String,
    governorate_id: i64,
    governorate_name: String,
}

#[derive(Serialize, Deserialize)]
struct StoredLine {
    id: i64,
    variant_id: i64,
    product_id: i64,
    title: String,
    variant_label: String,
    quantity: i64,
    sell_price: String,
    profit: String,
    commission_on: bool,
    warranties: Vec<StoredWarranty>,
    /// `delivered, returned, damaged, lost, destroyed`.
    outcome: (Option<i64>, Option<i64>, i64, i64, i64),
    supplier_id: Option<i64>,
    supply_price: String,
}

#[derive(Serialize, Deserialize)]
struct StoredWarranty {
    warranty_id: i64,
    name: String,
    unit_price: String,
    quantity: i64,
    total: String,
    duration_days: i32,
    terms: String,
}

impl StoredOrder {
    fn of(o: &Order) -> Result<Self, StoreError> {
        let t = &o.totals;
        Ok(Self {
            id: o.id.get(),
            account_id: o.account_id.get(),
            number: o.number.clone(),
            legacy_number: o.legacy_number.clone(),
            external_reference: o.external_reference.clone(),
            tracking_url: o.tracking_url.clone(),
            status: o.status.as_str().to_owned(),
            customer: StoredCustomer {
                name: o.customer.name.clone(),
                phone: o.customer.phone.clone(),
                second_phone: o.customer.second_phone.clone(),
                address: o.customer.address.clone(),
                governorate_id: o.customer.governorate_id.get(),
                governorate_name: o.customer.governorate_name.clone(),
            },
            shipping_option_id: o.shipping_option_id.get(),
            shipping_option_name: o.shipping_option_name.clone(),
            store_name: o.store_name.clone(),
            store_link: o.store_link.clone(),
            note: o.note.clone(),
            lines: o.lines.iter().map(StoredLine::of).collect(),
            totals: t.amounts().map(|amount| amount.to_string()),
            timeline: o
                .timeline
                .iter()
                .map(|e| Ok((e.status.as_str().to_owned(), nanos(e.at)?, e.reason.clone())))
                .collect::<Result<_, StoreError>>()?,
            created_at: nanos(o.created_at)?,
            updated_at: nanos(o.updated_at)?,
            confirmed_at: o.confirmed_at.map(nanos).transpose()?,
            delivered_at: o.delivered_at.map(nanos).transpose()?,
        })
    }

    fn into_order(self) -> Result<Order, StoreError> {
        let [
            products,
            warranties,
            delivery_charge,
            customer_total,
            profit,
            income_tax,
            net_profit,
            income_tax_percent,
        ] = self.totals;
        let c = self.customer;
        Ok(Order::builder()
            .id(OrderId::new(self.id))
            .account_id(AccountId::new(self.account_id))
            .number(self.number)
            .maybe_legacy_number(self.legacy_number)
            .maybe_external_reference(self.external_reference)
            .maybe_tracking_url(self.tracking_url)
            .status(status(&self.status)?)
            .customer(
                Customer::builder()
                    .name(c.name)
                    .phone(c.phone)
                    .maybe_second_phone(c.second_phone)
                    .address(c.address)
                    .governorate_id(GovernorateId::new(c.governorate_id))
                    .governorate_name(c.governorate_name)
                    .build(),
            )
            .shipping_option_id(ShippingOptionId::new(self.shipping_option_id))
            .shipping_option_name(self.shipping_option_name)
            .maybe_store_name(self.store_name)
            .maybe_store_link(self.store_link)
            .maybe_note(self.note)
            .lines(
                self.lines
                    .into_iter()
                    .map(StoredLine::into_line)
                    .collect::<Result<_, _>>()?,
            )
            .totals(
                Totals::builder()
                    .products(amount(&products)?)
                    .warranties(amount(&warranties)?)
                    .delivery_charge(amount(&delivery_charge)?)
                    .customer_total(amount(&customer_total)?)
                    .profit(amount(&profit)?)
                    .income_tax(amount(&income_tax)?)
                    .net_profit(amount(&net_profit)?)
                    .income_tax_percent(amount(&income_tax_percent)?)
                    .build(),
            )
            .timeline(
                self.timeline
                    .into_iter()
                    .map(|(text, at, reason)| {
                        Ok(TimelineEntry::new(status(&text)?, instant(at), reason))
                    })
                    .collect::<Result<_, StoreError>>()?,
            )
            .created_at(instant(self.created_at))
            .updated_at(instant(self.updated_at))
            .maybe_confirmed_at(self.confirmed_at.map(instant))
            .maybe_delivered_at(self.delivered_at.map(instant))
            .build())
    }
}

impl StoredLine {
    fn of(l: &OrderLine) -> Self {
        let o = &l.outcome;
        Self {
            id: l.id.get(),
            variant_id: l.variant_id.get(),
            product_id: l.product_id.get(),
            title: l.title.clone(),
            variant_label: l.variant_label.clone(),
            quantity: l.quantity,
            sell_price: l.sell_price.to_string(),
            profit: l.profit.to_string(),
            commission_on: l.commission_on,
            warranties: l
                .warranties
                .iter()
                .map(|w| StoredWarranty {
                    warranty_id: w.warranty_id.get(),
                    name: w.name.clone(),
                    unit_price: w.unit_price.to_string(),
                    quantity: w.quantity,
                    total: w.total.to_string(),
                    duration_days: w.duration_days,
                    terms: w.terms.clone(),
                })
                .collect(),
            outcome: (
                o.delivered_quantity,
                o.returned_quantity,
                o.damaged_quantity,
                o.lost_quantity,
                o.destroyed_quantity,
            ),
            supplier_id: l.supplier_id.map(AccountId::get),
            supply_price: l.supply_price.to_string(),
        }
    }

    fn into_line(self) -> Result<OrderLine, StoreError> {
        let (delivered, returned, damaged, lost, destroyed) = self.outcome;
        let warranties = self
            .warranties
            .into_iter()
            .map(|w| {
                Ok(LineWarranty::builder()
                    .warranty_id(WarrantyId::new(w.warranty_id))
                    .name(w.name)
                    .unit_price(amount(&w.unit_price)?)
                    .quantity(w.quantity)
                    .total(amount(&w.total)?)
                    .duration_days(w.duration_days)
                    .terms(w.terms)
                    .build())
            })
            .collect::<Result<_, StoreError>>()?;
        Ok(OrderLine::builder()
            .id(LineId::new(self.id))
            .variant_id(VariantId::new(self.variant_id))
            .product_id(ProductId::new(self.product_id))
            .title(self.title)
            .variant_label(self.variant_label)
            .quantity(self.quantity)
            .sell_price(amount(&self.sell_price)?)
            .profit(amount(&self.profit)?)
            .commission_on(self.commission_on)
            .warranties(warranties)
            .outcome(
                LineOutcome::builder()
                    .maybe_delivered_quantity(delivered)
                    .maybe_returned_quantity(returned)
                    .damaged_quantity(damaged)
                    .lost_quantity(lost)
                    .destroyed_quantity(destroyed)
                    .build(),
            )
            .maybe_supplier_id(self.supplier_id.map(AccountId::new))
            .supply_price(amount(&self.supply_price)?)
            .build())
    }
}

#[derive(Serialize, Deserialize)]
struct StoredQuote {
    id: i64,
    account_id: i64,
    variant_id: i64,
    product_id: i64,
    title: String,
    label: String,
    unit_price: String,
    quantity: i64,
    status: String,
    valid_until: Option<i64>,
    note: Option<String>,
    decision_note: Option<String>,
    decided_at: Option<i64>,
    created_at: i64,
    updated_at: i64,
}

impl StoredQuote {
    fn of(q: &Quote) -> Result<Self, StoreError> {
        Ok(Self {
            id: q.id.get(),
            account_id: q.account_id.get(),
            variant_id: q.variant_id.get(),
            product_id: q.product_id.get(),
            title: q.title.clone(),
            label: q.label.clone(),
            unit_price: q.unit_price.to_string(),
            quantity: q.quantity,
            status: q.status.as_str().to_owned(),
            valid_until: opt_nanos(q.valid_until)?,
            note: q.note.clone(),
            decision_note: q.decision_note.clone(),
            decided_at: opt_nanos(q.decided_at)?,
            created_at: nanos(q.created_at)?,
            updated_at: nanos(q.updated_at)?,
        })
    }

    fn into_quote(self) -> Result<Quote, StoreError> {
        Ok(Quote::builder()
            .id(QuoteId::new(self.id))
            .account_id(AccountId::new(self.account_id))
            .variant_id(VariantId::new(self.variant_id))
            .product_id(ProductId::new(self.product_id))
            .title(self.title)
            .label(self.label)
            .unit_price(amount(&self.unit_price)?)
            .quantity(self.quantity)
            .status(parse(&self.status, QuoteStatus::parse, "quote status")?)
            .maybe_valid_until(self.valid_until.map(instant))
            .maybe_note(self.note)
            .maybe_decision_note(self.decision_note)
            .maybe_decided_at(self.decided_at.map(instant))
            .created_at(instant(self.created_at))
            .updated_at(instant(self.updated_at))
            .build())
    }
}

#[derive(Serialize, Deserialize)]
struct StoredWithdrawal {
    id: i64,
    account_id: i64,
    amount: String,
    supply_amount: String,
    status: String,
    wallet_number: String,
    wallet_description: String,
    notes: Option<String>,
    transfer_reference: Option<String>,
    receipt_url: Option<String>,
    created_at: i64,
    decided_at: Option<i64>,
}

impl StoredWithdrawal {
    fn of(w: &Withdrawal) -> Result<Self, StoreError> {
        Ok(Self {
            id: w.id.get(),
            account_id: w.account_id.get(),
            amount: w.amount.to_string(),
            supply_amount: w.supply_amount.to_string(),
            status: w.status.as_str().to_owned(),
            wallet_number: w.wallet_number.clone(),
            wallet_description: w.wallet_description.clone(),
            notes: w.notes.clone(),
            transfer_reference: w.transfer_reference.clone(),
            receipt_url: w.receipt_url.clone(),
            created_at: nanos(w.created_at)?,
            decided_at: opt_nanos(w.decided_at)?,
        })
    }

    fn into_withdrawal(self) -> Result<Withdrawal, StoreError> {
        Ok(Withdrawal::builder()
            .id(WithdrawalId::new(self.id))
            .account_id(AccountId::new(self.account_id))
            .amount(amount(&self.amount)?)
            .supply_amount(amount(&self.supply_amount)?)
            .status(parse(
                &self.status,
                WithdrawalStatus::parse,
                "withdrawal status",
            )?)
            .wallet_number(self.wallet_number)
            .wallet_description(self.wallet_description)
            .maybe_notes(self.notes)
            .maybe_transfer_reference(self.transfer_reference)
            .maybe_receipt_url(self.receipt_url)
            .created_at(instant(self.created_at))
            .maybe_decided_at(self.decided_at.map(instant))
            .build())
    }
}
