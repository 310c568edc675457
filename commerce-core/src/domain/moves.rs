//! The platform's moves of an order (confirmation, shipping, delivery with what became of
//! each line's pieces, returns, cancellations): what the [`Operator`](crate::Operator) and the
//! sandbox's test mode (`POST /sandbox/orders/{id}/status`) both apply.

use chrono::{DateTime, Utc};

use super::fields::{FieldProblem, Problem};
use crate::config::Config;
use crate::model::*;
use crate::store::{StatusChange, StatusChangeError, Store, StoreError};

/// Why a move changed nothing.
#[derive(Debug)]
pub(crate) enum MoveError {
    /// No such order (of the account, when one is named).
    NotFound,
    /// The `index`-th outcome names a line the order does not have.
    UnknownLine {
        /// Its position in the outcomes given.
        index: usize,
    },
    /// An outcome's counts are negative or add up to more than the line's quantity.
    Invalid(FieldProblem),
    /// The order's status does not allow the move ([`OrderStatus::can_move_to`]).
    NotAllowed {
        /// Status now.
        current: OrderStatus,
        /// Status asked for.
        requested: OrderStatus,
    },
    /// The store failed.
    Store(StoreError),
}

impl From<StatusChangeError> for MoveError {
    fn from(error: StatusChangeError) -> Self {
        match error {
            StatusChangeError::NotFound => MoveError::NotFound,
            StatusChangeError::NotAllowed { current, requested } => {
                MoveError::NotAllowed { current, requested }
            }
            StatusChangeError::Store(e) => MoveError::Store(e),
        }
    }
}

impl From<StoreError> for MoveError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::NotFound => MoveError::NotFound,
            other => MoveError::Store(other),
        }
    }
}

/// Checks outcomes against the order's lines: each names one of its lines, no count is
/// negative and the counts of a line add up to at most its quantity. A problem is reported
/// under `{field}.{index}`.
pub(crate) fn check_outcomes(
    order: &Order,
    outcomes: &[(LineId, LineOutcome)],
    field: &str,
) -> Result<(), MoveError> {
    for (index, (line_id, outcome)) in outcomes.iter().enumerate() {
        let line = order
            .lines
            .iter()
            .find(|l| l.id == *line_id)
            .ok_or(MoveError::UnknownLine { index })?;
        let counts = [
            outcome.delivered_quantity.unwrap_or(0),
            outcome.returned_quantity.unwrap_or(0),
            outcome.damaged_quantity,
            outcome.lost_quantity,
            outcome.destroyed_quantity,
        ];
        let counted: i64 = counts.iter().sum();
        if counts.iter().any(|q| *q < 0) || counted > line.quantity {
            return Err(MoveError::Invalid(FieldProblem {
                field: format!("{field}.{index}"),
                problem: Problem::OutOfRange {
                    min: 0,
                    max: line.quantity,
                },
            }));
        }
    }
    Ok(())
}

/// A move of an order, as the platform makes it.
#[derive(Debug, Clone)]
pub(crate) struct Move {
    /// Only an order of this account (the sandbox's test mode); `None` for the platform.
    pub account_id: Option<AccountId>,
    /// The order.
    pub order_id: OrderId,
    /// The status to enter.
    pub to: OrderStatus,
    /// The reason shown in the timeline.
    pub reason: Option<String>,
    /// What became of lines' pieces, recorded before the move (may be empty).
    pub outcomes: Vec<(LineId, LineOutcome)>,
    /// When.
    pub at: DateTime<Utc>,
}

/// Moves an order: checks the move is allowed and the outcomes fit its lines, then records
/// the outcomes (when any) and changes its status in one store operation (timeline,
/// `updated_at`, stock, earnings and the `order.status_changed` event, as
/// [`OrderStore::change_order_status`] does; not billed): a refused move writes nothing.
/// Returns the order after the move.
///
/// [`OrderStore::change_order_status`]: crate::store::OrderStore::change_order_status
pub(crate) async fn apply(
    store: &dyn Store,
    change: Move,
    config: &Config,
    field: &str,
) -> Result<Order, MoveError> {
    let order = store
        .order(change.account_id, change.order_id)
        .await?
        .ok_or(MoveError::NotFound)?;
    if !order.status.can_move_to(change.to) {
        return Err(MoveError::NotAllowed {
            current: order.status,
            requested: change.to,
        });
    }
    check_outcomes(&order, &change.outcomes, field)?;
    let status = StatusChange {
        account_id: change.account_id,
        order_id: order.id,
        to: change.to,
        only_from: Vec::new(),
        reason: change.reason,
        outcomes: change.outcomes,
        at: change.at,
        bill_month: None,
        events: config.event_context(),
    };
    Ok(store.change_order_status(status).await?)
}
