//! Orders: placing, status moves, line outcomes, reads and the wallet sums.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::{PlaceOrderError, StatusChangeError, StoreError};
use crate::domain::earnings::WalletTotals;
use crate::model::*;

/// A move of an order to another status.
#[derive(Debug, Clone, PartialEq, bon::Builder)]
#[non_exhaustive]
pub struct StatusChange {
    /// Only an order of this account (API calls); `None` for the platform. The builder asks
    /// for it (`account_id(None)` for the platform): a move that forgets it would reach any
    /// account's order.
    #[builder(required)]
    pub account_id: Option<AccountId>,
    /// The order.
    pub order_id: OrderId,
    /// Status to enter.
    pub to: OrderStatus,
    /// Statuses the order must be in now (besides the lifecycle rule of
    /// [`OrderStatus::can_move_to`]); empty means any.
    pub only_from: Vec<OrderStatus>,
    /// Reason shown in the timeline.
    pub reason: Option<String>,
    /// What became of lines' pieces, recorded with the move (each named line's
    /// [`LineOutcome`] replaced); empty for none. The caller checks the counts against the
    /// lines before the move (the operator does, with the rules of `domain::moves`).
    pub outcomes: Vec<(LineId, LineOutcome)>,
    /// The order's `updated_at` when the caller read it to decide `outcomes` (each merged
    /// onto the outcome it read): when given and the order's `updated_at` is another now,
    /// nothing is written ([`StoreError::Changed`], in [`StatusChangeError::Store`]), so
    /// that a write that came between is never overwritten with what was read before it.
    /// `None`: no such check (the builder asks for it).
    #[builder(required)]
    pub read_at: Option<DateTime<Utc>>,
    /// When.
    pub at: DateTime<Utc>,
    /// Billing month to record one order operation in (`None`: not billed; the builder
    /// asks for it).
    #[builder(required)]
    pub bill_month: Option<BillingMonth>,
    /// What its `order.status_changed` webhook event keeps for its rendering.
    pub events: EventContext,
}

/// One state of an order: its id and its `updated_at`, which every write of the order moves
/// forward ([`next_updated_at`](super::next_updated_at) on every store, and on the SQL stores
/// by the database itself whatever the writers' clocks), so two reads with the same version saw
/// the same order. What [`OrderStore::order_versions`] lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct OrderVersion {
    /// The order.
    pub id: OrderId,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
}

impl OrderVersion {
    /// The version of `id` as of `updated_at`.
    pub fn new(id: OrderId, updated_at: DateTime<Utc>) -> Self {
        Self { id, updated_at }
    }

    /// The version of `order` as it is.
    pub fn of(order: &Order) -> Self {
        Self::new(order.id, order.updated_at)
    }
}

/// Orders and what they book: stock, counters, billing, earnings.
#[async_trait]
pub trait OrderStore: Send + Sync {
    /// Registers an order. Everything below happens in one atomic operation (one lock, one
    /// transaction), or nothing does:
    ///
    /// 1. **Refusals**, writing nothing: a repeated `external_reference` of the account
    ///    ([`PlaceOrderError::DuplicateExternalReference`], naming the order that has it); a
    ///    `number` any order has ([`PlaceOrderError::NumberTaken`]; the engine draws another);
    ///    when `idempotency` names a claim, a record that is gone or no longer held by the
    ///    claim's token ([`PlaceOrderError::IdempotencyLost`]: the request outlived the stale
    ///    time and a retry took its key over); a variant of
    ///    [`priced_from`](NewOrder::priced_from) that is no longer what the order was priced
    ///    from ([`NewOrder::first_stale`]; [`PlaceOrderError::Stale`]), decided before the stock and
    ///    against the variant's price and its product's revision as the stock write sees
    ///    them: in the statement (or under the lock) that takes the variant's pieces, and
    ///    for the product in the statement that stamps it, so that no catalogue edit can
    ///    come between the check and the write (the SQL stores: `UPDATE variants ... WHERE
    ///    price = $p`, `UPDATE products ... WHERE revision = $r`); a line asking for more
    ///    pieces than are available ([`NewOrder::pieces_to_reserve`];
    ///    [`PlaceOrderError::InsufficientStock`]).
    /// 2. **The order**: [`NewOrder::into_order`] with a new order id and line ids unique
    ///    across orders, findable by its `external_reference` from then on.
    /// 3. **Stock**: each line's pieces taken from its variant and kept in its history as a
    ///    `reservation` naming the order ([`stock_moves`](crate::domain::pieces::stock_moves)
    ///    of no order before it); each product whose stock changed gets `updated_at`
    ///    [`next_updated_at`](super::next_updated_at) of `created_at`.
    /// 4. **The idempotency link**: when `idempotency` is set, the record under the claim's
    ///    key is linked to the new order ([`IdempotencyRecord::order_id`](super::IdempotencyRecord)),
    ///    so a retry of a request that died after this point answers with this order.
    /// 5. **The meter**: when `bill_month` is set, one order operation counted for the
    ///    account in that month ([`MeterStore::meter`](super::MeterStore::meter)).
    /// 6. **Earnings**: the order's [`OrderEarnings`](crate::domain::earnings::OrderEarnings) booked
    ///    into the account's totals that [`wallet_totals`](OrderStore::wallet_totals) answers
    ///    (a backend that computes the wallet from the orders books nothing more).
    /// 7. **The suppliers' expected figures**: what [`SupplyBooking::of_order_write`](super::SupplyBooking::of_order_write) books for
    ///    the new order (`None` before it), applied with [`SupplierTotals::book`].
    /// 8. **The outbox**: for each enabled webhook endpoint of the account that receives
    ///    `order.created` ([`Webhook::receives`]), one pending delivery
    ///    ([`Delivery::queued`]) of the event [`NewEvent::order`]`(OrderCreated, &order,
    ///    None, events)` (one event, the same id for every endpoint; its snapshot kept, not
    ///    rendered); none when no endpoint receives it.
    ///
    /// Returns the order as registered.
    async fn place_order(&self, order: NewOrder) -> Result<Order, PlaceOrderError>;
    /// Moves an order to another status. Everything below happens in one atomic operation,
    /// or nothing does:
    ///
    /// 1. **Refusals**, writing nothing: no such order ([`StatusChangeError::NotFound`]),
    ///    and what [`StatusMove::check`] refuses (an order of another account when
    ///    `account_id` is set: `NotFound`; a move the order's status does not allow:
    ///    `NotAllowed`). Check against the status read under the operation's lock, so
    ///    concurrent moves of one order apply one after the other.
    ///    An outcome naming a line the order does not have is `NotFound` too
    ///    ([`StatusMove::names_unknown_line`]). With [`StatusChange::read_at`], an order
    ///    whose `updated_at` is another now is refused with [`StoreError::Changed`].
    /// 2. **The move**: [`StatusMove::apply`] on the order (the lines' outcomes, status,
    ///    `updated_at`, `confirmed_at`/`delivered_at`, the timeline entry).
    /// 3. **Stock**: what [`stock_moves`](crate::domain::pieces::stock_moves) of the order
    ///    before and after the move says, each move kept in its variant's history naming the
    ///    order (a `release` when it enters the cancelled family, once; a `restock` of the
    ///    completed returned pieces, by the difference), variants in id order, each product
    ///    changed at `at`. A negative move that finds fewer pieces than it takes refuses the
    ///    move ([`StoreError::StockShortfall`]), as does one that takes from the marketer
    ///    earnings it withdrew ([`StoreError::MarketerShortfall`],
    ///    [`shortfall`](crate::domain::earnings::shortfall)); nothing is written.
    /// 4. **The meter**: when `bill_month` is set, one order operation counted.
    /// 5. **Earnings**: the order's earnings booked again (its status, delivery and
    ///    outcomes changed them).
    /// 6. **The suppliers' statements**: what [`SupplyBooking::of_order_write`](super::SupplyBooking::of_order_write) books for the
    ///    order before and after the move, applied with [`SupplierTotals::book`] (a refusal,
    ///    [`StoreError::SupplierShortfall`], writes nothing).
    /// 7. **The outbox**: as for [`place_order`](OrderStore::place_order), the event
    ///    [`NewEvent::order`]`(OrderStatusChanged, &order, Some(previous status), events)`
    ///    for each enabled endpoint of the account that receives `order.status_changed`.
    ///
    /// Returns the order after the move.
    async fn change_order_status(&self, change: StatusChange) -> Result<Order, StatusChangeError>;
    /// Records what became of lines' pieces (each line's [`LineOutcome`] replaced), sets the
    /// order's `updated_at` to [`next_updated_at`](super::next_updated_at) of `now` and books
    /// its earnings again (the outcomes change them) and its suppliers' corrections
    /// ([`SupplyBooking::of_order_write`](super::SupplyBooking::of_order_write), [`SupplierTotals::book`]), in one atomic operation;
    /// `NotFound` (writing nothing) when the order or any line is not found,
    /// [`StoreError::SupplierShortfall`] (writing nothing) when a correction would take a
    /// supplier's balance below zero. Stock moves as for a move
    /// ([`stock_moves`](crate::domain::pieces::stock_moves): a restock by the difference of
    /// the completed returned pieces, [`StoreError::StockShortfall`] when they were sold
    /// since), and a correction that takes from the marketer earnings it withdrew is
    /// [`StoreError::MarketerShortfall`]. No meter entry, no webhook event. With `read_at`
    /// (the order's `updated_at` when the caller read the outcomes it merged its reports
    /// onto), an order whose `updated_at` is another now is refused with
    /// [`StoreError::Changed`], writing nothing: two corrections decided on one read never
    /// overwrite each other's counts.
    async fn set_line_outcomes(
        &self,
        order: OrderId,
        outcomes: Vec<(LineId, LineOutcome)>,
        read_at: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) -> Result<Order, StoreError>;
    /// Sets the courier tracking URL (`None` clears it) and the order's `updated_at` to
    /// [`next_updated_at`](super::next_updated_at) of `now`; `NotFound` when there is no such
    /// order. No stock, meter, earnings or webhook event. One atomic write of the order's
    /// row: the URL and the new `updated_at` together, so a reader that keeps a version
    /// ([`OrderVersion`]) sees the change.
    async fn set_tracking_url(
        &self,
        order: OrderId,
        url: Option<String>,
        now: DateTime<Utc>,
    ) -> Result<Order, StoreError>;
    /// One order; with `account`, only if it belongs to that account (`None` for an order of
    /// another account, as for one that does not exist). One read, not one snapshot: the SQL
    /// stores read the order's row (status, timeline, `updated_at`), then its lines, which
    /// change only in their outcomes and never lag the row's version.
    async fn order(
        &self,
        account: Option<AccountId>,
        id: OrderId,
    ) -> Result<Option<Order>, StoreError>;
    /// An account's orders matching the filter ([`Order::matches`]), newest first
    /// (`created_at` then `id`, descending), one page. One read, not one snapshot: the SQL
    /// stores read the page with its `total` in one statement, then the orders' lines.
    /// Provided: the back office's [`find_orders`](OrderStore::find_orders) of the same
    /// orders ([`OrderQuery::of_account`]), every match counted; the memory and SQL stores
    /// override it with the account's own index.
    async fn orders(
        &self,
        account: AccountId,
        filter: &OrderFilter,
        page: PageRequest,
    ) -> Result<Page<Order>, StoreError> {
        let found = self
            .find_orders(&OrderQuery::of_account(account, filter), page)
            .await?;
        Ok(Page::new(found.items, found.total.value))
    }
    /// The page [`orders`](OrderStore::orders) answers for the same account, filter and
    /// page, each order as its [`OrderVersion`] (id and `updated_at`), with the same `total`:
    /// a plain listing for a reader that keeps orders or what it made of them (the engine
    /// keeps their JSON) and reads the whole orders only when a version is not one it has.
    /// The provided version reads the page with [`orders`](OrderStore::orders); a backend
    /// that can list the page's rows alone (the memory and SQL stores) overrides it, so that a
    /// page costs its rows, not their lines.
    async fn order_versions(
        &self,
        account: AccountId,
        filter: &OrderFilter,
        page: PageRequest,
    ) -> Result<Page<OrderVersion>, StoreError> {
        let found = self.orders(account, filter, page).await?;
        let items = found.items.iter().map(OrderVersion::of).collect();
        Ok(Page::new(items, found.total))
    }
    /// The orders of any account that `query` matches ([`OrderQuery::select`]: its filters
    /// and order), one page, with how many match counted up to the query's `count_limit`
    /// ([`Listing::of_selected`]): the back office's order lists. A page costs what the
    /// page's rows and the count's limit read, not the number of orders. One read, not one
    /// snapshot: the SQL stores read the page and the count in separate statements.
    async fn find_orders(
        &self,
        query: &OrderQuery,
        page: PageRequest,
    ) -> Result<Listing<Order>, StoreError>;
    /// How many orders `query` matches in each status ([`OrderQuery::status_counts`]: every
    /// status, each counted up to the query's `count_limit`), in one operation (one
    /// statement on the SQL stores): a dashboard's figures.
    async fn order_status_counts(
        &self,
        query: &OrderQuery,
    ) -> Result<Vec<(OrderStatus, Count)>, StoreError>;
    /// A supplier's statement entries written in the filter's period, newest first (by id,
    /// descending), one page, with how many match. Costs the page, not the statement: the
    /// total of an unfiltered page is the kept count ([`SupplierTotals::entries`]). One read:
    /// the page and its total from one statement on the SQL stores, so they agree whatever is
    /// booked meanwhile (past the last page, the total is read on its own).
    async fn statement(
        &self,
        supplier: AccountId,
        filter: &StatementFilter,
        page: PageRequest,
    ) -> Result<Page<StatementEntry>, StoreError>;
    /// An account's wallet sums: the [`EarningsTotals`](crate::domain::earnings::EarningsTotals) the
    /// store keeps, updated in the same atomic operation as every write that changes an
    /// order's [`OrderEarnings`](crate::domain::earnings::OrderEarnings) (placing it, moving it,
    /// recording line outcomes), plus the net earnings and earliest delivery of the settled
    /// orders delivered after `held_after`. Costs the orders in their hold period, not every
    /// order of the account. The answer equals
    /// [`WalletTotals::of_orders`](crate::domain::earnings::WalletTotals::of_orders) over the account's
    /// orders (which a small backend may simply compute; the conformance suite compares them),
    /// [`and`](WalletTotals::and) the account's supplier sums
    /// ([`SupplierTotals::wallet`] of its kept totals, `held` the signed amounts of its
    /// statement entries delivered after `held_after`: the entries in their hold period, not
    /// the whole statement). One read, not one snapshot: on the SQL stores, the order sums and
    /// the hold period's orders from one statement, the supplier sums from another.
    async fn wallet_totals(
        &self,
        account: AccountId,
        held_after: DateTime<Utc>,
    ) -> Result<WalletTotals, StoreError>;
}

/// The check of a write decided on a read ([`StatusChange::read_at`],
/// [`OrderStore::set_line_outcomes`]'s `read_at`): [`StoreError::Changed`] when `read_at` is
/// given and the order's `updated_at` (as the store holds it now, under the write's lock) is
/// another instant.
pub fn unchanged_since(
    read_at: Option<DateTime<Utc>>,
    updated_at: DateTime<Utc>,
) -> Result<(), StoreError> {
    match read_at {
        Some(read) if read != updated_at => Err(StoreError::Changed),
        _ => Ok(()),
    }
}

/// What a [`StatusChange`] does to an order, decided by [`StatusMove::check`]: the one rule
/// every backend applies inside [`OrderStore::change_order_status`], so that a backend only
/// persists.
#[derive(Debug, Clone, PartialEq, bon::Builder)]
#[non_exhaustive]
pub struct StatusMove {
    /// Status entered.
    pub to: OrderStatus,
    /// When: the order's new `updated_at` and its timeline entry's instant.
    pub at: DateTime<Utc>,
    /// Whether the order's pieces go back to stock (it enters the cancelled family from
    /// outside it: exactly once per order).
    pub releases_stock: bool,
    /// `confirmed_at` to set (entering `confirmed`).
    pub confirmed_at: Option<DateTime<Utc>>,
    /// `delivered_at` to set (entering `delivered` or `partially_delivered`).
    pub delivered_at: Option<DateTime<Utc>>,
    /// The entry appended to the timeline.
    pub timeline_entry: TimelineEntry,
    /// The lines' outcomes recorded with the move ([`StatusChange::outcomes`]).
    pub outcomes: Vec<(LineId, LineOutcome)>,
}
