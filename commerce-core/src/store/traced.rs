//! [`Traced`]: the engine's tracing layer over its store.

use std::future::Future;
use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::delegate::forward_store;
use super::*;
use crate::domain::earnings::WalletTotals;
use crate::model::*;

/// The engine's tracing layer over a store: every operation in a `commerce.store` span
/// ([`observe::STORE_SPAN`](crate::observe::STORE_SPAN), level `DEBUG`, fields `concern` and
/// `operation`), a child of the request's span, and an `INFO` event when an order is placed or
/// moved when a withdrawal is requested or decided, and when a quote is decided ([`events`]).
///
/// Why here: every store call of the engine and its operator goes through one
/// `Arc<dyn Store>`, so wrapping it once covers them all without touching a handler or a
/// backend. What it costs when no subscriber wants the span: one more boxed future and virtual
/// call per store operation, and a disabled span (one relaxed atomic load of the callsite's
/// interest).
#[derive(Clone)]
pub(crate) struct Traced {
    inner: Arc<dyn Store>,
}

impl Traced {
    /// `store` behind the tracing layer.
    pub(crate) fn new(inner: Arc<dyn Store>) -> Self {
        Self { inner }
    }

    /// Runs one operation in its span, then reports what a committed operation returned.
    async fn around<T, E: From<StoreError>>(
        &self,
        op: Operation,
        event: impl FnOnce(&T) + Send,
        call: impl Future<Output = Result<T, E>> + Send,
    ) -> Result<T, E> {
        let span = tracing::debug_span!(
            "commerce.store",
            concern = op.concern.name(),
            operation = op.name
        );
        let result = crate::observe::in_span(call, span).await;
        if let Ok(value) = &result {
            event(value);
        }
        result
    }
}

forward_store!(impl for Traced => inner);

/// The events of the moves the platform reports (named by `[event]` in the delegation list):
/// each takes the operation's arguments and returns what to report of its result.
pub(crate) mod events {
    use chrono::{DateTime, Utc};

    use crate::model::WithdrawalId;
    use crate::model::{NewOrder, NewWithdrawal, Order, Withdrawal, WithdrawalDecision};
    use crate::observe;
    use crate::store::StatusChange;

    /// `place_order`: "order placed".
    pub(crate) fn order_placed(_: &NewOrder) -> impl FnOnce(&Order) + Send + use<> {
        observe::order_placed
    }

    /// `change_order_status`: "order moved", by the API (a change scoped to an account) or
    /// the platform.
    pub(crate) fn order_moved(change: &StatusChange) -> impl FnOnce(&Order) + Send + use<> {
        let by = if change.account_id.is_some() {
            "api"
        } else {
            "platform"
        };
        move |order| observe::order_moved(order, by)
    }

    /// `request_withdrawal`: "withdrawal requested".
    pub(crate) fn withdrawal_requested(
        _: &NewWithdrawal,
        _: &DateTime<Utc>,
        _: &DateTime<Utc>,
    ) -> impl FnOnce(&Withdrawal) + Send + use<> {
        |withdrawal| observe::withdrawal(withdrawal, "withdrawal requested")
    }

    /// `decide_quote`: "quote decided".
    pub(crate) fn quote_decided(
        _: &Option<crate::model::AccountId>,
        _: &crate::model::QuoteId,
        _: &crate::model::QuoteDecision,
        _: &DateTime<Utc>,
    ) -> impl FnOnce(&crate::model::Quote) + Send + use<> {
        observe::quote_decided
    }

    /// `decide_withdrawal`: "withdrawal decided".
    pub(crate) fn withdrawal_decided(
        _: &WithdrawalId,
        _: &WithdrawalDecision,
        _: &DateTime<Utc>,
    ) -> impl FnOnce(&Withdrawal) + Send + use<> {
        |withdrawal| observe::withdrawal(withdrawal, "withdrawal decided")
    }
}
