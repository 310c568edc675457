//! [`OrderStore`] for [`MemoryStore`]: placing and moving orders, their reads and the wallet sums.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::indexes::OrderKeys;
use super::{MemoryStore, State};
use crate::domain::earnings::WalletTotals;
use crate::domain::pieces::stock_moves;
use crate::model::*;
use crate::store::*;

#[async_trait]
impl OrderStore for MemoryStore {
    async fn place_order(&self, new: NewOrder) -> Result<Order, PlaceOrderError> {
        let mut s = self.lock();
        let same_reference = new.external_reference.as_ref().and_then(|reference| {
            let existing = s
                .external_references
                .get(&(new.account_id, reference.clone()))?;
            s.orders.get(existing)
        });
        // The pieces fit (checked here); what is written is the order's reservations.
        new.check_placement(
            same_reference,
            s.numbers.contains(&new.number),
            |claim| s.idempotency.holds(claim),
            |id| s.catalog.product(id),
            |variant| s.catalog.variant(variant).map_or(0, |v| v.available),
        )?;
        // Everything is checked and the event taken before the first write, as `lock`
        // promises: the ids are the ones the counters give next.
        let id = s.peek_id("orders", 1);
        let line_ids: Vec<LineId> = (1..=new.lines.len() as i64)
            .map(|ahead| LineId::new(s.peek_id("order_lines", ahead)))
            .collect();
        let idempotency = new.idempotency.clone();
        let bill_month = new.bill_month.clone();
        let (created_at, events) = (new.created_at, new.events);
        let order = new.into_order(OrderId::new(id), line_ids);
        let event = s.order_event(EventType::OrderCreated, &order, None, events);
        let supply = s
            .supply
            .check(SupplyBooking::of_order_write(None, &order, created_at))?;

        s.catalog
            .move_order_stock(order.id, stock_moves(None, &order), created_at);
        s.next_id("orders");
        for _ in &order.lines {
            s.next_id("order_lines");
        }
        s.queue_outbox_event(event);
        s.supply.write(supply);
        if let Some(reference) = &order.external_reference {
            s.external_references
                .insert((order.account_id, reference.clone()), OrderId::new(id));
        }
        if let Some(claim) = &idempotency {
            s.idempotency.link(claim, OrderId::new(id));
        }
        s.meter
            .bill_order_operation(order.account_id, bill_month.as_ref());
        s.numbers.insert(order.number.clone());
        s.orders_by_account
            .entry(order.account_id)
            .or_default()
            .insert(&order);
        s.orders.insert(OrderId::new(id), order.clone());
        Ok(order)
    }

    async fn change_order_status(&self, change: StatusChange) -> Result<Order, StatusChangeError> {
        let mut s = self.lock();
        let order = s
            .orders
            .get(&change.order_id)
            .ok_or(StatusChangeError::NotFound)?;
        let account = order.account_id;
        // The moved order and its event, before the first write (see `lock`).
        let moved = change.applied_to(order)?;
        let before = (order.updated_at, order.status.family());
        let previous = order.status;
        let event = s.order_event(
            EventType::OrderStatusChanged,
            &moved,
            Some(previous),
            change.events,
        );
        // The refusals in the order the SQL stores meet them: the marketer, stock, suppliers.
        let stock = s.check_order_write(order, &moved)?;
        let supply = s.supply.check(SupplyBooking::of_order_write(
            Some(order),
            &moved,
            change.at,
        ))?;

        s.catalog.move_order_stock(moved.id, stock, change.at);
        s.meter
            .bill_order_operation(account, change.bill_month.as_ref());
        s.orders.insert(moved.id, moved.clone());
        s.reindex_order(moved.id, before);
        s.queue_outbox_event(event);
        s.supply.write(supply);
        Ok(moved)
    }

    async fn set_line_outcomes(
        &self,
        order: OrderId,
        outcomes: Vec<(LineId, LineOutcome)>,
        read_at: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) -> Result<Order, StoreError> {
        let mut s = self.lock();
        let order = s.orders.get(&order).ok_or(StoreError::NotFound)?;
        let changed = order.with_outcomes(&outcomes, read_at, now)?;
        let before = (order.updated_at, order.status.family());
        // The refusals in the order the SQL stores meet them: the marketer, stock, suppliers.
        let stock = s.check_order_write(order, &changed)?;
        let supply = s
            .supply
            .check(SupplyBooking::of_order_write(Some(order), &changed, now))?;
        // Everything is checked: the writes.
        s.catalog.move_order_stock(changed.id, stock, now);
        s.orders.insert(changed.id, changed.clone());
        s.reindex_order(changed.id, before);
        s.supply.write(supply);
        Ok(changed)
    }

    async fn set_tracking_url(
        &self,
        order: OrderId,
        url: Option<String>,
        now: DateTime<Utc>,
    ) -> Result<Order, StoreError> {
        let mut s = self.lock();
        let order = s.order_mut(order)?;
        let before = (order.updated_at, order.status.family());
        order.tracking_url = url;
        order.updated_at = next_updated_at(order.updated_at, now);
        let order = order.clone();
        s.reindex_order(order.id, before);
        Ok(order)
    }

    async fn order(
        &self,
        account: Option<AccountId>,
        id: OrderId,
    ) -> Result<Option<Order>, StoreError> {
        let s = self.lock();
        Ok(s.orders
            .get(&id)
            .filter(|o| account.is_none_or(|a| a == o.account_id))
            .cloned())
    }

    async fn find_orders(
        &self,
        query: &OrderQuery,
        page: PageRequest,
    ) -> Result<Listing<Order>, StoreError> {
        let s = self.lock();
        let found = query.select(s.orders.values());
        Ok(Listing::of_selected(found, page, query.count_limit))
    }

    async fn order_status_counts(
        &self,
        query: &OrderQuery,
    ) -> Result<Vec<(OrderStatus, Count)>, StoreError> {
        Ok(query.status_counts(self.lock().orders.values()))
    }

    async fn orders(
        &self,
        account: AccountId,
        filter: &OrderFilter,
        page: PageRequest,
    ) -> Result<Page<Order>, StoreError> {
        let s = self.lock();
        Ok(orders_page(&s, account, filter, page).cloned())
    }

    async fn order_versions(
        &self,
        account: AccountId,
        filter: &OrderFilter,
        page: PageRequest,
    ) -> Result<Page<OrderVersion>, StoreError> {
        let s = self.lock();
        let found = orders_page(&s, account, filter, page);
        Ok(Page {
            items: found.items.into_iter().map(OrderVersion::of).collect(),
            total: found.total,
        })
    }

    async fn wallet_totals(
        &self,
        account: AccountId,
        held_after: DateTime<Utc>,
    ) -> Result<WalletTotals, StoreError> {
        let s = self.lock();
        Ok(s.wallet_totals(account, held_after))
    }

    async fn statement(
        &self,
        supplier: AccountId,
        filter: &StatementFilter,
        page: PageRequest,
    ) -> Result<Page<StatementEntry>, StoreError> {
        Ok(self.lock().supply.page(supplier, filter, page))
    }
}

/// The orders of `account` on `page` of those matching `filter`, newest first, and how many
/// match ([`OrderStore::orders`]), as references into the store's state.
fn orders_page<'s>(
    s: &'s State,
    account: AccountId,
    filter: &OrderFilter,
    page: PageRequest,
) -> Page<&'s Order> {
    let Some(index) = s.orders_by_account.get(&account) else {
        return Page {
            items: Vec::new(),
            total: 0,
        };
    };
    // Fast path for the common exact lookups.
    if let Some(reference) = &filter.external_reference {
        let found = s
            .external_references
            .get(&(account, reference.clone()))
            .map(|id| &s.orders[id])
            .filter(|o| o.matches(filter));
        return Page::of_items(found, page);
    }
    // The smallest index that holds every match: the family's when the filter names one.
    let empty = OrderKeys::new();
    let family = filter.family.or(filter.status.map(OrderStatus::family));
    let base = match family {
        Some(family) => index.by_family.get(&family).unwrap_or(&empty),
        None => &index.by_created,
    };
    if filter.updated_since.is_none() && filter.number.is_none() {
        if filter.status.is_none() {
            // Every key of `base` matches: count it, take the page only.
            let items = base
                .iter()
                .rev()
                .skip(usize::try_from(page.offset()).unwrap_or(usize::MAX))
                .take(page.per_page() as usize)
                .map(|(_, id)| &s.orders[id])
                .collect();
            return Page {
                items,
                total: base.len() as u64,
            };
        }
    } else if let Some(since) = filter.updated_since {
        // Sync: the orders changed since `since` are usually few; gather them from the
        // `updated_at` index and sort them into list order, unless they are most of `base`.
        let changed = index.by_updated.range((since, OrderId::new(i64::MIN))..);
        if changed.clone().count() < base.len() / 4 {
            let mut keys: Vec<(DateTime<Utc>, OrderId)> = changed
                .map(|(_, id)| &s.orders[id])
                .filter(|o| o.matches(filter))
                .map(|o| (o.created_at, o.id))
                .collect();
            keys.sort_unstable_by(|a, b| b.cmp(a));
            return Page::of_items(keys.iter().map(|(_, id)| &s.orders[id]), page);
        }
    }
    let matching = base
        .iter()
        .rev()
        .map(|(_, id)| &s.orders[id])
        .filter(|o| o.matches(filter));
    Page::of_items(matching, page)
}
