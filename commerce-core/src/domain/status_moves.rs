//! The lifecycle of an order: which status may follow which ([`OrderStatus::can_move_to`]),
//! the one rule the platform's moves ([`Operator`](crate::operator::Operator), the sandbox's test mode)
//! and every store's status change apply.

use crate::model::OrderStatus;

impl OrderStatus {
    /// Whether the platform may move an order from `self` to `to`.
    ///
    /// The lifecycle: pending -> confirmed -> preparing -> shipped -> delivered, partially
    /// delivered or returned -> archived. Before shipping, an order can be cancelled (by the
    /// team, or refused by the customer while pending). Cancelled orders can be archived.
    pub fn can_move_to(self, to: OrderStatus) -> bool {
        use OrderStatus::*;
        matches!(
            (self, to),
            (
                Pending,
                Confirmed | RejectedByCustomer | Cancelled | RejectedByMarketer
            ) | (Confirmed, Preparing | Shipped | Cancelled)
                | (Preparing, Shipped | Cancelled)
                | (Shipped, Delivered | PartiallyDelivered | Returned)
                | (
                    Delivered
                        | PartiallyDelivered
                        | Returned
                        | RejectedByMarketer
                        | RejectedByCustomer
                        | Cancelled,
                    Archived
                )
        )
    }
}
