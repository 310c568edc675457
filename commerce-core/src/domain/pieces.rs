//! Where a line's pieces are: the laws of stock that every store and every figure of money
//! follow (docs/stock-and-money.md).
//!
//! - **Counted once.** A line's `quantity` pieces are with the order, delivered, returned,
//!   damaged, lost or destroyed, never in two places: outcome counts add up to at most the
//!   quantity ([`OutcomeReport::merged_onto`], checked arithmetic), and they are accepted only
//!   where the order is being settled ([`accepts_outcomes`]).
//! - **Completed.** A settled order's uncounted pieces are delivered (delivered family) or
//!   returned (returned family): [`completed`] is the one function that says so, and the
//!   marketer's earnings, the supplier's statement, the restock and the rendering of a line
//!   all read it.
//! - **Explained by history.** Every change of `available` an order write makes is one of
//!   [`stock_moves`]: the reservation of placing, the release of a cancellation, the restock
//!   of returned pieces (by the difference of the completed returned counts, exactly, so that
//!   a line's restocks always sum to its final returned count).

use std::collections::BTreeMap;

use crate::model::{
    Family, LineOutcome, Order, OrderLine, OrderStatus, StockAdjustment, StockReason, VariantId,
};

/// The most pieces a variant may hold: a delta or a receipt past it is refused.
pub const MAX_AVAILABLE: i64 = 1_000_000_000;

/// How a settled order ended: its pieces reached the customer, or came back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settlement {
    /// Delivered or partially delivered (also once archived): uncounted pieces are delivered.
    Delivered,
    /// Returned (also once archived): uncounted pieces are returned.
    Returned,
}

impl Settlement {
    /// How an order whose status is `status` and whose timeline holds `timeline` (in order,
    /// the status included) is settled: by its family, or for an archived order by the last
    /// family it had before the archive; `None` while it is with the order (pending,
    /// confirmed, shipping) and once cancelled.
    pub fn of_statuses(
        status: OrderStatus,
        timeline: impl DoubleEndedIterator<Item = OrderStatus>,
    ) -> Option<Self> {
        let family = match status.family() {
            Family::Archived => timeline
                .rev()
                .map(OrderStatus::family)
                .find(|f| *f != Family::Archived)?,
            family => family,
        };
        match family {
            Family::Delivered => Some(Settlement::Delivered),
            Family::Returned => Some(Settlement::Returned),
            _ => None,
        }
    }

    /// How `order` is settled ([`of_statuses`](Self::of_statuses)).
    pub fn of(order: &Order) -> Option<Self> {
        Self::of_statuses(order.status, order.timeline.iter().map(|t| t.status))
    }
}

/// A line's pieces, every one counted: what a settled line renders and what money and stock
/// follow.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CompletedCounts {
    /// Delivered to the customer.
    pub delivered: i64,
    /// Back in the warehouse.
    pub returned: i64,
    /// Damaged.
    pub damaged: i64,
    /// Lost.
    pub lost: i64,
    /// Destroyed.
    pub destroyed: i64,
}

/// The counts of a line of `quantity` pieces with `outcome`, completed for `settlement`: the
/// pieces no count names are delivered on a delivered order, returned on a returned one.
/// `None` while the order is not settled (its pieces are with the order).
pub fn completed(
    quantity: i64,
    outcome: &LineOutcome,
    settlement: Option<Settlement>,
) -> Option<CompletedCounts> {
    let settlement = settlement?;
    let mut counts = CompletedCounts {
        delivered: outcome.delivered_quantity.unwrap_or(0),
        returned: outcome.returned_quantity.unwrap_or(0),
        damaged: outcome.damaged_quantity,
        lost: outcome.lost_quantity,
        destroyed: outcome.destroyed_quantity,
    };
    let counted = counted(outcome).unwrap_or(quantity);
    let uncounted = quantity.saturating_sub(counted).max(0);
    match settlement {
        Settlement::Delivered => counts.delivered = counts.delivered.saturating_add(uncounted),
        Settlement::Returned => counts.returned = counts.returned.saturating_add(uncounted),
    }
    Some(counts)
}

/// The completed counts of `line` on `order` ([`completed`]).
pub fn completed_line(order: &Order, line: &OrderLine) -> Option<CompletedCounts> {
    completed(line.quantity, &line.outcome, Settlement::of(order))
}

/// The pieces of `line` that reached the customer: its completed delivered count, 0 while the
/// order is not settled (or was cancelled) and on a returned order. What the marketer's profit
/// and the supplier's statement count.
pub fn delivered_pieces(order: &Order, line: &OrderLine) -> i64 {
    match Settlement::of(order) {
        Some(Settlement::Delivered) => completed_line(order, line).map_or(0, |c| c.delivered),
        _ => 0,
    }
}

/// The pieces all of an outcome's counts name, `None` when the sum overflows.
fn counted(outcome: &LineOutcome) -> Option<i64> {
    counts(outcome).into_iter().try_fold(0i64, i64::checked_add)
}

/// Every count of an outcome, an absent delivered or returned count as 0.
fn counts(outcome: &LineOutcome) -> [i64; 5] {
    [
        outcome.delivered_quantity.unwrap_or(0),
        outcome.returned_quantity.unwrap_or(0),
        outcome.damaged_quantity,
        outcome.lost_quantity,
        outcome.destroyed_quantity,
    ]
}

/// Whether an order whose timeline holds `statuses` (after the write) ever left the
/// warehouse (shipped, delivered or returned) without being cancelled: only then do its
/// returned pieces come back to stock (a cancelled order gave all its pieces back then).
pub fn left_the_warehouse(statuses: impl IntoIterator<Item = OrderStatus>) -> bool {
    let mut left = false;
    for status in statuses {
        match status.family() {
            Family::Cancelled => return false,
            Family::Shipping | Family::Delivered | Family::Returned => left = true,
            _ => {}
        }
    }
    left
}

/// The pieces of `line` back on the shelf because of `order`: its completed returned count
/// once the order left the warehouse and is settled, else 0.
pub fn restocked_pieces(order: &Order, line: &OrderLine) -> i64 {
    if !left_the_warehouse(order.timeline.iter().map(|t| t.status)) {
        return 0;
    }
    completed_line(order, line).map_or(0, |c| c.returned)
}

/// Whether outcome counts may be recorded on `order` as it moves to `to` (`None`: a
/// correction without a move): on a move into the delivered or returned
/// family, on the archive of a settled order, and on a correction of a settled order. Counts
/// anywhere else would put pieces in two places (with the order and delivered).
pub fn accepts_outcomes(order: &Order, to: Option<OrderStatus>) -> bool {
    match to {
        Some(to) => match to.family() {
            Family::Delivered | Family::Returned => true,
            Family::Archived => Settlement::of(order).is_some(),
            _ => false,
        },
        None => Settlement::of(order).is_some(),
    }
}

/// What a caller reports of a line's pieces: each count given replaces the line's, each
/// count left out keeps the line's ([`merged_onto`](Self::merged_onto)). Built with
/// `OutcomeReport::builder()`, one setter per count given; `OutcomeReport::default()` names
/// none.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, bon::Builder)]
#[non_exhaustive]
pub struct OutcomeReport {
    /// Pieces delivered.
    pub delivered: Option<i64>,
    /// Pieces returned.
    pub returned: Option<i64>,
    /// Pieces damaged.
    pub damaged: Option<i64>,
    /// Pieces lost.
    pub lost: Option<i64>,
    /// Pieces destroyed.
    pub destroyed: Option<i64>,
}

impl OutcomeReport {
    /// The line's outcome after this report: each given count replaces `previous`'s.
    pub fn merged_onto(&self, previous: &LineOutcome) -> LineOutcome {
        LineOutcome {
            delivered_quantity: self.delivered.or(previous.delivered_quantity),
            returned_quantity: self.returned.or(previous.returned_quantity),
            damaged_quantity: self.damaged.unwrap_or(previous.damaged_quantity),
            lost_quantity: self.lost.unwrap_or(previous.lost_quantity),
            destroyed_quantity: self.destroyed.unwrap_or(previous.destroyed_quantity),
        }
    }
}

impl From<&LineOutcome> for OutcomeReport {
    /// Every count of `outcome` (an absent delivered or returned count stays absent).
    fn from(outcome: &LineOutcome) -> Self {
        Self {
            delivered: outcome.delivered_quantity,
            returned: outcome.returned_quantity,
            damaged: Some(outcome.damaged_quantity),
            lost: Some(outcome.lost_quantity),
            destroyed: Some(outcome.destroyed_quantity),
        }
    }
}

impl From<LineOutcome> for OutcomeReport {
    /// Every count of `outcome` ([`From<&LineOutcome>`](#impl-From%3C%26LineOutcome%3E-for-OutcomeReport)).
    fn from(outcome: LineOutcome) -> Self {
        Self::from(&outcome)
    }
}

/// Why an outcome cannot be recorded on a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutcomeProblem {
    /// A count is negative, or the counts add up to more than the line's `quantity`.
    OverQuantity {
        /// The line's quantity.
        quantity: i64,
    },
    /// Delivered pieces on a returned order (its pieces all came back or were lost).
    DeliveredOnReturn,
    /// The count of the family the order settles in is given, yet pieces are left uncounted:
    /// whether they were delivered or came back is not said (name every piece).
    Uncounted {
        /// The line's quantity.
        quantity: i64,
    },
}

/// Checks a line's outcome after a write: no count negative, their sum (checked: no wrap)
/// at most `quantity`, nothing delivered on an order settled as returned, and every piece
/// counted when the count of the family the order settles in is given (`delivered_quantity`
/// on a delivered order, `returned_quantity` on a returned one): "1 delivered" of 3 does not
/// say where the other 2 are, so it is refused rather than read as 3 delivered.
pub fn check_outcome(
    quantity: i64,
    outcome: &LineOutcome,
    settlement: Option<Settlement>,
) -> Result<(), OutcomeProblem> {
    if counts(outcome).iter().any(|c| *c < 0) || counted(outcome).is_none_or(|sum| sum > quantity) {
        return Err(OutcomeProblem::OverQuantity { quantity });
    }
    if settlement == Some(Settlement::Returned) && outcome.delivered_quantity.unwrap_or(0) > 0 {
        return Err(OutcomeProblem::DeliveredOnReturn);
    }
    let own_count = match settlement {
        Some(Settlement::Delivered) => outcome.delivered_quantity,
        Some(Settlement::Returned) => outcome.returned_quantity,
        None => None,
    };
    if own_count.is_some() && counted(outcome) != Some(quantity) {
        return Err(OutcomeProblem::Uncounted { quantity });
    }
    Ok(())
}

/// One change of a variant's stock that an order write makes, kept in its history naming the
/// order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct StockMove {
    /// The variant.
    pub variant_id: VariantId,
    /// Pieces added (negative: taken).
    pub delta: i64,
    /// Why: [`StockReason::Reservation`], [`StockReason::Release`] or
    /// [`StockReason::Restock`].
    pub reason: StockReason,
}

/// The stock a write of an order moves, from the order before it (`None`: it is being placed)
/// and after it, by variant id (the order every store locks variants in), zero moves left
/// out:
///
/// - placing reserves every line's pieces ([`StockReason::Reservation`]);
/// - entering the cancelled family releases them ([`StockReason::Release`], once: a
///   cancelled order cannot be cancelled again);
/// - the pieces back on the shelf ([`restocked_pieces`]) move by their difference
///   ([`StockReason::Restock`]): a correction returning fewer pieces takes them back.
///
/// A store applies them in the write's atomic operation; a negative move that finds fewer
/// pieces than it takes refuses the write (the pieces were sold again since).
pub fn stock_moves(before: Option<&Order>, after: &Order) -> Vec<StockMove> {
    let mut moves: BTreeMap<(VariantId, u8), i64> = BTreeMap::new();
    let mut add = |variant: VariantId, reason: StockReason, by: i64| {
        let rank = match reason {
            StockReason::Reservation => 0,
            StockReason::Release => 1,
            _ => 2,
        };
        *moves.entry((variant, rank)).or_default() += by;
    };
    let was_cancelled = before.is_some_and(|o| o.status.family() == Family::Cancelled);
    let cancelled = after.status.family() == Family::Cancelled;
    for line in &after.lines {
        let previous = before.and_then(|o| o.lines.iter().find(|l| l.id == line.id));
        if before.is_none() {
            add(line.variant_id, StockReason::Reservation, -line.quantity);
        }
        if cancelled && !was_cancelled && before.is_some() {
            add(line.variant_id, StockReason::Release, line.quantity);
        }
        let restocked_before = match (before, previous) {
            (Some(order), Some(l)) => restocked_pieces(order, l),
            _ => 0,
        };
        let by = restocked_pieces(after, line) - restocked_before;
        if by != 0 {
            add(line.variant_id, StockReason::Restock, by);
        }
    }
    moves
        .into_iter()
        .filter(|(_, delta)| *delta != 0)
        .map(|((variant_id, rank), delta)| StockMove {
            variant_id,
            delta,
            reason: match rank {
                0 => StockReason::Reservation,
                1 => StockReason::Release,
                _ => StockReason::Restock,
            },
        })
        .collect()
}

/// The pieces of a variant that its orders hold and may still give back (by a release or a
/// restock), from its history: the negated sum of its `reservation`, `release` and `restock`
/// entries.
pub fn held_by_orders<'a>(history: impl IntoIterator<Item = &'a StockAdjustment>) -> i64 {
    -history
        .into_iter()
        .filter(|a| a.reason.moves_with_an_order())
        .map(|a| a.delta)
        .sum::<i64>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uncounted_pieces_complete_by_settlement() {
        let two_back = LineOutcome {
            returned_quantity: Some(2),
            ..LineOutcome::default()
        };
        let done = completed(3, &two_back, Some(Settlement::Delivered)).unwrap();
        assert_eq!((done.delivered, done.returned), (1, 2));
        let done = completed(3, &LineOutcome::default(), Some(Settlement::Returned)).unwrap();
        assert_eq!((done.delivered, done.returned), (0, 3));
        assert_eq!(completed(3, &two_back, None), None);
    }

    #[test]
    fn an_archive_is_settled_as_what_came_before_it() {
        use OrderStatus::*;
        let of = |statuses: &[OrderStatus]| {
            Settlement::of_statuses(*statuses.last().unwrap(), statuses.iter().copied())
        };
        assert_eq!(
            of(&[Pending, Confirmed, Shipped, PartiallyDelivered, Archived]),
            Some(Settlement::Delivered)
        );
        assert_eq!(
            of(&[Pending, Confirmed, Shipped, Returned, Archived]),
            Some(Settlement::Returned)
        );
        assert_eq!(of(&[Pending, Cancelled, Archived]), None);
        assert_eq!(of(&[Pending, Confirmed, Shipped]), None);
    }

    #[test]
    fn a_report_keeps_what_it_does_not_name_and_sums_never_wrap() {
        let previous = LineOutcome {
            returned_quantity: Some(2),
            damaged_quantity: 1,
            ..LineOutcome::default()
        };
        let merged = OutcomeReport::builder()
            .delivered(1)
            .build()
            .merged_onto(&previous);
        assert_eq!(merged.returned_quantity, Some(2));
        assert_eq!(merged.damaged_quantity, 1);
        assert_eq!(merged.delivered_quantity, Some(1));
        let huge = LineOutcome {
            delivered_quantity: Some(i64::MAX),
            returned_quantity: Some(i64::MAX),
            damaged_quantity: 2,
            ..LineOutcome::default()
        };
        assert_eq!(
            check_outcome(3, &huge, Some(Settlement::Delivered)),
            Err(OutcomeProblem::OverQuantity { quantity: 3 })
        );
        let delivered_on_return = LineOutcome::delivered(1);
        assert_eq!(
            check_outcome(3, &delivered_on_return, Some(Settlement::Returned)),
            Err(OutcomeProblem::DeliveredOnReturn)
        );
        // "1 delivered" of 3 on a delivery says nothing of the other 2: refused, not read
        // as 3 delivered; with the rest counted, or with no delivered count, it is whole.
        assert_eq!(
            check_outcome(3, &LineOutcome::delivered(1), Some(Settlement::Delivered)),
            Err(OutcomeProblem::Uncounted { quantity: 3 })
        );
        let two_back = LineOutcome::partly_delivered(1, 2);
        assert_eq!(
            check_outcome(3, &two_back, Some(Settlement::Delivered)),
            Ok(())
        );
        let only_returned = LineOutcome {
            returned_quantity: Some(2),
            ..LineOutcome::default()
        };
        assert_eq!(
            check_outcome(3, &only_returned, Some(Settlement::Delivered)),
            Ok(())
        );
        assert_eq!(
            check_outcome(3, &only_returned, Some(Settlement::Returned)),
            Err(OutcomeProblem::Uncounted { quantity: 3 })
        );
    }
}
