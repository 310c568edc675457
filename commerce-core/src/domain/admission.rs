//! What a store admits: a withdrawal request against the ready balance
//! ([`NewWithdrawal::admit`]) and the platform's decision on it ([`Withdrawal::decide`]), a
//! stock adjustment ([`NewStockAdjustment::decide`]) and a retried idempotency key
//! ([`IdempotencyRecord::decide`]), a category's new parent ([`CategoryPatch::check_parent`]);
//! a supplier's quote is admitted by the supply side's rules
//! (`domain::supply`). Each store reads what the rule needs inside the write's own atomic
//! operation, then applies the rule here.

use chrono::{DateTime, Utc};

use crate::domain::earnings::{WalletTotals, Withdrawn};
use crate::domain::edits::parent_allowed;
use crate::domain::pieces::MAX_AVAILABLE;
use crate::model::*;
use crate::store::{
    IdempotencyBegin, IdempotencyDecision, IdempotencyRecord, PlaceOrderError, QueueDeliveryError,
    StatusChange, StatusChangeError, StatusMove, StockError, StoreError, WithdrawalRequestError,
    next_updated_at,
};

impl NewWithdrawal {
    /// The rule of [`WithdrawalStore::request_withdrawal`](crate::store::WithdrawalStore::request_withdrawal): the amount must not exceed the
    /// ready balance of `wallet` and `withdrawn`.
    pub fn admit(
        &self,
        wallet: &WalletTotals,
        withdrawn: Withdrawn,
    ) -> Result<(), WithdrawalRequestError> {
        let ready = wallet.ready(withdrawn);
        if self.amount > ready {
            return Err(WithdrawalRequestError::OverReadyBalance {
                requested: self.amount,
                ready,
            });
        }
        Ok(())
    }
}

impl IdempotencyRecord {
    /// The rule of [`IdempotencyStore::begin_idempotent`](crate::store::IdempotencyStore::begin_idempotent) for the record found under the key
    /// (`None`: no record). A record created before `expires_before` counts as absent; a live
    /// one with another fingerprint is a mismatch; a finished one is replayed; an in-flight
    /// one is in flight until `stale_before`, after which its request is taken to have died:
    /// recovered when it had registered its order or quote ([`created`](Self::created)),
    /// started afresh otherwise.
    pub fn decide(
        record: Option<&IdempotencyRecord>,
        fingerprint: &str,
        expires_before: DateTime<Utc>,
        stale_before: DateTime<Utc>,
    ) -> IdempotencyDecision {
        let Some(record) = record.filter(|r| r.created_at >= expires_before) else {
            return IdempotencyDecision::Start;
        };
        if record.fingerprint != fingerprint {
            return IdempotencyDecision::Answer(IdempotencyBegin::Mismatch);
        }
        if let Some(response) = &record.response {
            return IdempotencyDecision::Answer(IdempotencyBegin::Replay(response.clone()));
        }
        if record.created_at >= stale_before {
            return IdempotencyDecision::Answer(IdempotencyBegin::InFlight);
        }
        match record.created() {
            Some(created) => IdempotencyDecision::Recover(created),
            None => IdempotencyDecision::Start,
        }
    }
}

impl NewStockAdjustment {
    /// The rule of [`CatalogStore::adjust_stock`](crate::store::CatalogStore::adjust_stock), applied
    /// to the variant's `available` read under the operation's lock and the pieces its orders
    /// `held` (reserved and not given back: [`held_by_orders`](crate::domain::pieces::held_by_orders)): `available` after the
    /// adjustment, or the refusal (a compare-and-set whose expected quantity is not
    /// `available`: [`StockError::Conflict`]; a result below zero:
    /// [`StockError::Insufficient`]; a result that, with the pieces the orders may still give
    /// back, would pass [`MAX_AVAILABLE`]: [`StockError::AboveMaximum`]). So `available` never
    /// passes the bound, whatever is released or restocked later.
    pub fn decide(&self, available: i64, held: i64) -> Result<i64, StockError> {
        if let Some(expected) = self.expected_available
            && expected != available
        {
            return Err(StockError::Conflict {
                expected,
                available,
            });
        }
        // In i128: no delta, however large, wraps or saturates into a wrong answer.
        let after = i128::from(available) + i128::from(self.delta);
        if after < 0 {
            return Err(StockError::Insufficient {
                available,
                shortfall: i64::try_from(-after).unwrap_or(i64::MAX),
            });
        }
        let max = MAX_AVAILABLE.saturating_sub(held.max(0));
        if self.delta > 0 && after > i128::from(max) {
            return Err(StockError::AboveMaximum { available, max });
        }
        // Within 0..=available or 0..=MAX_AVAILABLE, so the sum did not overflow.
        Ok(available + self.delta)
    }
}

impl Withdrawal {
    /// The rule of [`WithdrawalStore::decide_withdrawal`](crate::store::WithdrawalStore::decide_withdrawal): only a pending withdrawal is
    /// decided (`StoreError::Invalid` otherwise); completing keeps the transfer reference and
    /// receipt, rejecting keeps the notes when given; either way `decided_at` is `now`.
    pub fn decide(
        &mut self,
        decision: WithdrawalDecision,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        if self.status != WithdrawalStatus::Pending {
            return Err(StoreError::Invalid(format!(
                "withdrawal {} is already decided",
                self.id
            )));
        }
        match decision {
            WithdrawalDecision::Complete {
                transfer_reference,
                receipt_url,
            } => {
                self.status = WithdrawalStatus::Completed;
                self.transfer_reference = Some(transfer_reference);
                self.receipt_url = receipt_url;
            }
            WithdrawalDecision::Reject { notes } => {
                self.status = WithdrawalStatus::Rejected;
                if notes.is_some() {
                    self.notes = notes;
                }
            }
        }
        self.decided_at = Some(now);
        Ok(())
    }
}

impl StatusMove {
    /// Checks `change` against an order of `owner` now in status `current`: `NotFound` when
    /// the change is limited to another account, `NotAllowed` when `current` is not among
    /// its `only_from` statuses or the lifecycle forbids the move
    /// ([`OrderStatus::can_move_to`]); otherwise the move's effects.
    pub fn check(
        change: &StatusChange,
        owner: AccountId,
        current: OrderStatus,
    ) -> Result<StatusMove, StatusChangeError> {
        if change.account_id.is_some_and(|account| account != owner) {
            return Err(StatusChangeError::NotFound);
        }
        let allowed_from = change.only_from.is_empty() || change.only_from.contains(&current);
        if !allowed_from || !current.can_move_to(change.to) {
            return Err(StatusChangeError::NotAllowed {
                current,
                requested: change.to,
            });
        }
        let at = change.at;
        Ok(StatusMove {
            to: change.to,
            at,
            releases_stock: change.to.family() == Family::Cancelled
                && current.family() != Family::Cancelled,
            confirmed_at: (change.to == OrderStatus::Confirmed).then_some(at),
            delivered_at: matches!(
                change.to,
                OrderStatus::Delivered | OrderStatus::PartiallyDelivered
            )
            .then_some(at),
            timeline_entry: TimelineEntry {
                status: change.to,
                at,
                reason: change.reason.clone(),
            },
            outcomes: change.outcomes.clone(),
        })
    }

    /// Whether an outcome names a line that is not among `lines` (the order's): the move is
    /// then refused with `NotFound`, writing nothing.
    pub fn names_unknown_line(&self, lines: &[OrderLine]) -> bool {
        self.outcomes
            .iter()
            .any(|(id, _)| !lines.iter().any(|line| line.id == *id))
    }

    /// Applies the move to an order held in memory (a backend that stores whole orders).
    pub fn apply(self, order: &mut Order) {
        for (id, outcome) in self.outcomes {
            if let Some(line) = order.lines.iter_mut().find(|line| line.id == id) {
                line.outcome = outcome;
            }
        }
        order.status = self.to;
        order.updated_at = next_updated_at(order.updated_at, self.at);
        if self.confirmed_at.is_some() {
            order.confirmed_at = self.confirmed_at;
        }
        if self.delivered_at.is_some() {
            order.delivered_at = self.delivered_at;
        }
        order.timeline.push(self.timeline_entry);
    }
}

impl NewOrder {
    /// The refusals of [`OrderStore::place_order`](crate::store::OrderStore::place_order) for
    /// a backend that holds whole records, in the order every store meets them, nothing
    /// written: the account's order of the same external reference (`same_reference`:
    /// [`PlaceOrderError::DuplicateExternalReference`]), a number another order has
    /// (`number_taken`: [`PlaceOrderError::NumberTaken`]), an idempotency claim the request no
    /// longer holds (`holds`: [`PlaceOrderError::IdempotencyLost`]), a price no longer current
    /// ([`first_stale`](Self::first_stale): [`PlaceOrderError::Stale`]), then the pieces
    /// ([`pieces_to_reserve`](Self::pieces_to_reserve)), whose answer it returns.
    pub fn check_placement<'a>(
        &self,
        same_reference: Option<&Order>,
        number_taken: bool,
        holds: impl FnOnce(&IdempotencyClaim) -> bool,
        product: impl FnMut(ProductId) -> Option<&'a Product>,
        available: impl FnMut(VariantId) -> i64,
    ) -> Result<Vec<(VariantId, i64)>, PlaceOrderError> {
        if let Some(existing) = same_reference {
            return Err(PlaceOrderError::DuplicateExternalReference {
                existing_id: existing.id,
                existing_number: existing.number.clone(),
            });
        }
        if number_taken {
            return Err(PlaceOrderError::NumberTaken);
        }
        if self.idempotency.as_ref().is_some_and(|claim| !holds(claim)) {
            return Err(PlaceOrderError::IdempotencyLost);
        }
        if let Some(variant_id) = self.first_stale(product) {
            return Err(PlaceOrderError::Stale { variant_id });
        }
        self.pieces_to_reserve(available)
    }

    /// The version rule of [`OrderStore::place_order`](crate::store::OrderStore::place_order):
    /// the first entry of `priced_from` whose variant is no longer what it was priced from
    /// ([`PricedFrom::is_current`]) or is gone, as `product` answers the stored product of an
    /// id; `None` when every entry is current (or there is none). A backend that holds whole
    /// products applies it under the operation's lock.
    pub fn first_stale<'a>(
        &self,
        mut product: impl FnMut(ProductId) -> Option<&'a Product>,
    ) -> Option<VariantId> {
        self.priced_from
            .iter()
            .find(|entry| {
                let current = product(entry.product_id).and_then(|p| {
                    let variant = p.variants.iter().find(|v| v.id == entry.variant_id)?;
                    Some(entry.is_current(p, variant))
                });
                current != Some(true)
            })
            .map(|entry| entry.variant_id)
    }

    /// The stock rule of [`OrderStore::place_order`](crate::store::OrderStore::place_order):
    /// every line checked against the stock, lines of one variant adding up, before anything
    /// is taken. Returns the pieces to take per variant, by variant id (the order in which a
    /// store locks them), or the first line that asks for more than is left
    /// ([`PlaceOrderError::InsufficientStock`], with what was left for it). `available`
    /// answers a variant's stock now (0 for an unknown variant).
    pub fn pieces_to_reserve(
        &self,
        mut available: impl FnMut(VariantId) -> i64,
    ) -> Result<Vec<(VariantId, i64)>, PlaceOrderError> {
        let mut wanted: std::collections::BTreeMap<VariantId, (i64, i64)> = Default::default();
        for (line_index, line) in self.lines.iter().enumerate() {
            let (stock, total) = wanted
                .entry(line.variant_id)
                .or_insert_with(|| (available(line.variant_id), 0));
            *total += line.quantity;
            if *total > *stock {
                return Err(PlaceOrderError::InsufficientStock {
                    line_index,
                    available: (*stock - (*total - line.quantity)).max(0),
                });
            }
        }
        Ok(wanted
            .into_iter()
            .map(|(v, (_, total))| (v, total))
            .collect())
    }
}

impl CategoryPatch {
    /// The parent rule of [`CatalogStore::update_category`](crate::store::CatalogStore::update_category),
    /// against the categories as the store reads them in the operation (`parent_of`: a
    /// category's parent, `None` for a category that does not exist): `Invalid` when the new
    /// parent does not exist, then when it is the category `id` itself or one of its
    /// descendants ([`parent_allowed`]). A patch that keeps the parent passes.
    pub fn check_parent(
        &self,
        id: CategoryId,
        parent_of: impl Fn(CategoryId) -> Option<Option<CategoryId>>,
    ) -> Result<(), StoreError> {
        let Some(parent) = self.parent_id else {
            return Ok(());
        };
        if let Some(parent) = parent
            && parent_of(parent).is_none()
        {
            return Err(StoreError::Invalid(format!("no parent category {parent}")));
        }
        if !parent_allowed(id, parent, |c| parent_of(c).flatten()) {
            return Err(StoreError::Invalid(format!(
                "category {id} cannot be its own ancestor"
            )));
        }
        Ok(())
    }
}

impl Account {
    /// Whether the account's endpoints receive `catalog.changed`: a marketer that may read
    /// the change feed now (active, its API approved).
    pub fn follows_the_catalog(&self) -> bool {
        self.side == Side::Marketer
            && self.state == AccountState::Active
            && self.api_status == ApiStatus::Approved
    }
}

impl Webhook {
    /// The rule of [`WebhookStore::queue_catalog_changed`](crate::store::WebhookStore::queue_catalog_changed)
    /// for one endpoint that receives the event, has none of it pending and whose account
    /// [follows the catalogue](Account::follows_the_catalog): due when it was never sent one,
    /// or was last sent one (`sent`: the feed's head then, and when) before `head` and at or
    /// before `sent_before`.
    pub fn catalog_changed_due(
        &self,
        sent: Option<&(ChangePosition, DateTime<Utc>)>,
        head: ChangePosition,
        sent_before: DateTime<Utc>,
    ) -> bool {
        self.receives(EventType::CatalogChanged)
            && sent.is_none_or(|(position, at)| *position < head && *at <= sent_before)
    }

    /// Whether a purge at `before` ends its pending deliveries as expired: it was disabled
    /// before `before`.
    pub fn expired_by(&self, before: DateTime<Utc>) -> bool {
        !self.enabled && self.disabled_at.is_some_and(|at| at < before)
    }

    /// The rule of a manual delivery ([`WebhookStore::queue_event`](crate::store::WebhookStore::queue_event),
    /// [`redeliver`](crate::store::WebhookStore::redeliver)) to this endpoint, which has
    /// `pending_manual` manual deliveries pending: `NotFound` without an event to send,
    /// `Disabled` when the endpoint is, `Busy` at `limit`; else the event to queue.
    pub fn admit_manual(
        &self,
        event: Option<NewEvent>,
        pending_manual: usize,
        limit: usize,
    ) -> Result<NewEvent, QueueDeliveryError> {
        let event = event.ok_or(QueueDeliveryError::NotFound)?;
        if !self.enabled {
            return Err(QueueDeliveryError::Disabled);
        }
        if pending_manual >= limit {
            return Err(QueueDeliveryError::Busy { limit });
        }
        Ok(event)
    }
}

impl Delivery {
    /// Whether a purge at `before` keeps the delivery: it is pending, or was created at or
    /// after `before`.
    pub fn kept_by_purge(&self, before: DateTime<Utc>) -> bool {
        self.status == DeliveryStatus::Pending || self.created_at >= before
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;
    use crate::model::VariantId;

    #[test]
    fn a_delta_never_takes_stock_below_zero_and_a_set_compares_first() {
        let take = NewStockAdjustment::builder()
            .variant_id(VariantId::new(1))
            .delta(-5)
            .reason(StockReason::Damaged)
            .build();
        assert_eq!(take.decide(5, 0).unwrap(), 0);
        assert!(matches!(
            take.decide(3, 0),
            Err(StockError::Insufficient {
                available: 3,
                shortfall: 2
            })
        ));
        let count = NewStockAdjustment::cycle_count(VariantId::new(1), 10, 4, None);
        assert_eq!(count.delta, -6);
        assert_eq!(count.decide(10, 0).unwrap(), 4);
        let past_the_top = NewStockAdjustment::builder()
            .variant_id(VariantId::new(1))
            .delta(i64::MAX)
            .reason(StockReason::Other)
            .build();
        assert!(matches!(
            past_the_top.decide(1, 0),
            Err(StockError::AboveMaximum {
                available: 1,
                max: MAX_AVAILABLE
            })
        ));
        let past_the_bottom = NewStockAdjustment::builder()
            .variant_id(VariantId::new(1))
            .delta(i64::MIN)
            .reason(StockReason::Other)
            .build();
        assert!(matches!(
            past_the_bottom.decide(0, 0),
            Err(StockError::Insufficient {
                available: 0,
                shortfall: i64::MAX
            })
        ));
        // Pieces the orders hold count against the bound.
        let in_bound = NewStockAdjustment::builder()
            .variant_id(VariantId::new(1))
            .delta(10)
            .reason(StockReason::Received)
            .build();
        assert!(matches!(
            in_bound.decide(MAX_AVAILABLE - 15, 6),
            Err(StockError::AboveMaximum { max, .. }) if max == MAX_AVAILABLE - 6
        ));
        assert_eq!(
            in_bound.decide(MAX_AVAILABLE - 15, 5).unwrap(),
            MAX_AVAILABLE - 5
        );
        assert_eq!(
            in_bound.decide(MAX_AVAILABLE - 15, 0).unwrap(),
            MAX_AVAILABLE - 5
        );
        assert!(matches!(
            count.decide(9, 0),
            Err(StockError::Conflict {
                expected: 10,
                available: 9
            })
        ));
    }

    fn change(to: OrderStatus, account: Option<AccountId>) -> StatusChange {
        StatusChange {
            account_id: account,
            order_id: OrderId::new(1),
            to,
            only_from: Vec::new(),
            reason: Some("why".into()),
            outcomes: Vec::new(),
            read_at: None,
            at: Utc.with_ymd_and_hms(2026, 3, 1, 10, 0, 0).unwrap(),
            bill_month: None,
            events: Default::default(),
        }
    }

    #[test]
    fn another_accounts_order_is_not_found() {
        let refused = StatusMove::check(
            &change(OrderStatus::RejectedByMarketer, Some(AccountId::new(2))),
            AccountId::new(1),
            OrderStatus::Pending,
        );
        assert!(matches!(refused, Err(StatusChangeError::NotFound)));
    }

    #[test]
    fn only_from_and_the_lifecycle_both_limit_a_move() {
        let mut from_pending = change(OrderStatus::RejectedByMarketer, None);
        from_pending.only_from = vec![OrderStatus::Pending];
        assert!(matches!(
            StatusMove::check(&from_pending, AccountId::new(1), OrderStatus::Confirmed),
            Err(StatusChangeError::NotAllowed {
                current: OrderStatus::Confirmed,
                ..
            })
        ));
        assert!(matches!(
            StatusMove::check(
                &change(OrderStatus::Pending, None),
                AccountId::new(1),
                OrderStatus::Delivered
            ),
            Err(StatusChangeError::NotAllowed { .. })
        ));
    }

    #[test]
    fn entering_the_cancelled_family_releases_stock_once() {
        let cancel = change(OrderStatus::RejectedByMarketer, Some(AccountId::new(1)));
        let first = StatusMove::check(&cancel, AccountId::new(1), OrderStatus::Pending).unwrap();
        assert!(first.releases_stock);
        assert_eq!(first.confirmed_at, None);
        let confirm = StatusMove::check(
            &change(OrderStatus::Confirmed, None),
            AccountId::new(1),
            OrderStatus::Pending,
        )
        .unwrap();
        assert!(!confirm.releases_stock);
        assert_eq!(confirm.confirmed_at, Some(confirm.at));
        assert_eq!(confirm.timeline_entry.reason.as_deref(), Some("why"));
    }
}
