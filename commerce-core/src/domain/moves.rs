//! The platform's moves of an order (confirmation, shipping, delivery with what became of
//! each line's pieces, returns, cancellations): what the [`Operator`](crate::operator::Operator) and the
//! sandbox's test mode (`POST /sandbox/orders/{id}/status`) both apply.

use chrono::{DateTime, Utc};

use super::pieces::{self, OutcomeProblem, OutcomeReport, Settlement};
use crate::config::Config;
use crate::model::*;
use crate::model::{FieldProblem, Problem};
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
    /// The outcomes are refused ([`resolve_outcomes`]).
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

/// The lines' outcomes after `reports` are recorded on `order` as it moves to `to` (`None`: a
/// correction without a move): each report merged onto its line's outcome
/// ([`OutcomeReport::merged_onto`]), then checked ([`pieces::check_outcome`]). Refused, with
/// the problem under `{field}` or `{field}.{index}`: counts on a move that does not settle the
/// order ([`pieces::accepts_outcomes`]), a line the order does not have, a count below zero or
/// counts adding up to more than the line's quantity, delivered pieces on a returned order.
pub(crate) fn resolve_outcomes(
    order: &Order,
    to: Option<OrderStatus>,
    reports: &[(LineId, OutcomeReport)],
    field: &str,
) -> Result<Vec<(LineId, LineOutcome)>, MoveError> {
    if reports.is_empty() {
        return Ok(Vec::new());
    }
    if !pieces::accepts_outcomes(order, to) {
        return Err(MoveError::Invalid(FieldProblem {
            field: field.to_owned(),
            problem: Problem::OutcomesNotAccepted,
        }));
    }
    let settlement = match to {
        Some(to) => {
            Settlement::of_statuses(to, order.timeline.iter().map(|t| t.status).chain([to]))
        }
        None => Settlement::of(order),
    };
    let mut resolved: Vec<(LineId, LineOutcome)> = Vec::with_capacity(reports.len());
    for (index, (line_id, report)) in reports.iter().enumerate() {
        let line = order
            .lines
            .iter()
            .find(|l| l.id == *line_id)
            .ok_or(MoveError::UnknownLine { index })?;
        // A line named twice: the later report merges onto the earlier one.
        let previous = resolved
            .iter()
            .rev()
            .find(|(id, _)| id == line_id)
            .map_or(&line.outcome, |(_, o)| o);
        let outcome = report.merged_onto(previous);
        let problem = match pieces::check_outcome(line.quantity, &outcome, settlement) {
            Ok(()) => None,
            Err(OutcomeProblem::OverQuantity { quantity }) => Some(Problem::OutOfRange {
                min: 0,
                max: quantity,
            }),
            Err(OutcomeProblem::DeliveredOnReturn) => Some(Problem::DeliveredOnReturn),
            Err(OutcomeProblem::Uncounted { quantity }) => Some(Problem::Uncounted { quantity }),
        };
        if let Some(problem) = problem {
            return Err(MoveError::Invalid(FieldProblem {
                field: format!("{field}.{index}"),
                problem,
            }));
        }
        resolved.retain(|(id, _)| id != line_id);
        resolved.push((*line_id, outcome));
    }
    Ok(resolved)
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
    /// What became of lines' pieces, recorded with the move (may be empty): each report
    /// merged onto its line's outcome.
    pub outcomes: Vec<(LineId, OutcomeReport)>,
    /// When.
    pub at: DateTime<Utc>,
}

/// Moves an order: checks the move is allowed and the outcomes fit its lines
/// ([`resolve_outcomes`]), then records the outcomes (when any) and changes its status in one store operation (timeline,
/// `updated_at`, stock, earnings and the `order.status_changed` event, as
/// [`OrderStore::change_order_status`](crate::store::OrderStore::change_order_status) does; not billed): a refused move writes nothing.
/// Returns the order after the move.
///
pub(crate) async fn apply(
    store: &dyn Store,
    change: Move,
    config: &Config,
    field: &str,
) -> Result<Order, MoveError> {
    let mut attempts = 0;
    loop {
        attempts += 1;
        match apply_once(store, &change, config, field).await {
            // Another write came between the read the outcomes were merged onto and the move:
            // read again and merge again.
            Err(MoveError::Store(StoreError::Changed)) if attempts < WRITE_ATTEMPTS => continue,
            done => return done,
        }
    }
}

/// How often a write decided on a read is tried when other writes of the order keep coming
/// between ([`StoreError::Changed`]); then the last refusal is the answer.
pub(crate) const WRITE_ATTEMPTS: usize = 8;

async fn apply_once(
    store: &dyn Store,
    change: &Move,
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
    let outcomes = resolve_outcomes(&order, Some(change.to), &change.outcomes, field)?;
    // Outcomes merged onto what was read are written only onto the order as it was read.
    let read_at = (!outcomes.is_empty()).then_some(order.updated_at);
    let status = StatusChange {
        account_id: change.account_id,
        order_id: order.id,
        to: change.to,
        only_from: Vec::new(),
        reason: change.reason.clone(),
        outcomes,
        read_at,
        at: change.at,
        bill_month: None,
        events: config.event_context(),
    };
    Ok(store.change_order_status(status).await?)
}
