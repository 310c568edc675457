//! The platform's side of webhooks (its API keys page): the same endpoints and rules as
//! `/api/v1/webhooks`, for any account.

use super::{Operator, OperatorError, OperatorResult};
use crate::api::Cursor;
use crate::domain::webhooks::{self, WebhookInput};
use crate::limits::CATALOG_CHANGED_SECONDS;
use crate::model::*;
use crate::store::MAX_WEBHOOKS_PER_ACCOUNT;

impl Operator {
    /// Registers an endpoint for `account` by the rules of `POST /api/v1/webhooks` (URL,
    /// event types, description, at most 10 per account). The answer holds the new secret,
    /// to show once. An account that does not exist is [`OperatorError::NotFound`].
    pub async fn create_webhook(
        &self,
        account: AccountId,
        input: WebhookInput,
    ) -> OperatorResult<Webhook> {
        let policy = self.shared.config.webhook_urls;
        // Every store answers alike: `insert_webhook` need not check the account (the
        // memory store does not), so it is read first; its side chooses the event types.
        let side = self.side_of(account).await?;
        Ok(webhooks::register(self.store(), policy, (account, side), input, self.now()).await?)
    }

    /// One endpoint, of any account.
    pub async fn webhook(&self, id: WebhookId) -> OperatorResult<Webhook> {
        self.store()
            .webhook(None, id)
            .await?
            .ok_or(OperatorError::NotFound)
    }

    /// An account's endpoints (at most [`MAX_WEBHOOKS_PER_ACCOUNT`]), oldest first.
    pub async fn webhooks(&self, account: AccountId) -> OperatorResult<Vec<Webhook>> {
        let page = const {
            PageRequest::new(1, MAX_WEBHOOKS_PER_ACCOUNT as u32).expect("at most 100 endpoints")
        };
        Ok(self.store().webhooks(account, page).await?.items)
    }

    /// Changes an endpoint by the rules of `PATCH /api/v1/webhooks/{id}`.
    pub async fn update_webhook(
        &self,
        id: WebhookId,
        input: WebhookInput,
    ) -> OperatorResult<Webhook> {
        let policy = self.shared.config.webhook_urls;
        let side = self.side_of(self.webhook(id).await?.account_id).await?;
        Ok(webhooks::update(self.store(), policy, (None, side), id, input, self.now()).await?)
    }

    /// Sends `catalog.changed` to the marketers' endpoints due for it: each enabled one that
    /// receives it and was last sent a position the feed's newest change has passed, at most
    /// one every 10 seconds per endpoint, with the cursor of that change (`data.cursor`: what
    /// `GET /catalog/changes` would end on now). The event is derived from the feed, not
    /// written with each change: the feed is read once, for its newest change
    /// ([`CatalogStore::newest_catalog_change`](crate::store::CatalogStore::newest_catalog_change)),
    /// and the store compares
    /// each endpoint with it
    /// ([`WebhookStore::queue_catalog_changed`](crate::store::WebhookStore::queue_catalog_changed)),
    /// so the work grows with the endpoints, never with the changes. The instance runner calls
    /// it every 10 seconds ([`Engine::run_background`](crate::Engine::run_background)). Returns
    /// how many endpoints were sent one (none while the feed is empty).
    pub async fn send_catalog_changed(&self) -> OperatorResult<u64> {
        let now = self.now();
        let Some(head) = self.store().newest_catalog_change().await? else {
            return Ok(0);
        };
        let every = chrono::TimeDelta::seconds(CATALOG_CHANGED_SECONDS as i64);
        let event = NewEvent::catalog_changed(Cursor::at(head, now).encode(), now);
        Ok(self
            .store()
            .queue_catalog_changed(head, event, now - every)
            .await?)
    }

    /// The side of `account` (whose event types its endpoints take);
    /// [`OperatorError::NotFound`] when there is no such account.
    async fn side_of(&self, account: AccountId) -> OperatorResult<Side> {
        let found = self.store().account(account).await?;
        Ok(found.ok_or(OperatorError::NotFound)?.side)
    }

    /// Deletes an endpoint and its deliveries.
    pub async fn delete_webhook(&self, id: WebhookId) -> OperatorResult<()> {
        match self.store().delete_webhook(None, id).await? {
            true => Ok(()),
            false => Err(OperatorError::NotFound),
        }
    }

    /// Gives an endpoint a new secret (returned, to show once); the old one keeps signing for
    /// 24 hours.
    pub async fn rotate_webhook_secret(&self, id: WebhookId) -> OperatorResult<Webhook> {
        Ok(webhooks::rotate_secret(self.store(), None, id, self.now()).await?)
    }

    /// Queues a `ping` for an endpoint: [`Conflict::WebhookDisabled`](super::Conflict) for a
    /// disabled one, [`Conflict::WebhookBusy`](super::Conflict) while 10 pings and
    /// redeliveries wait for it.
    pub async fn ping_webhook(&self, id: WebhookId) -> OperatorResult<Delivery> {
        Ok(webhooks::ping(self.store(), None, id, self.now()).await?)
    }

    /// An endpoint's deliveries, newest first, optionally of one status.
    pub async fn webhook_deliveries(
        &self,
        id: WebhookId,
        status: Option<DeliveryStatus>,
        page: PageRequest,
    ) -> OperatorResult<Page<Delivery>> {
        self.store()
            .deliveries(None, id, status, page)
            .await?
            .ok_or(OperatorError::NotFound)
    }

    /// Queues a delivery's event again, now (refused as a ping is).
    pub async fn redeliver(
        &self,
        webhook: WebhookId,
        delivery: DeliveryId,
    ) -> OperatorResult<Delivery> {
        Ok(webhooks::redeliver(self.store(), None, webhook, delivery, self.now()).await?)
    }

    /// Deletes the delivery history older than 30 days (pending deliveries stay, except those
    /// of an endpoint disabled for 30 days: they expire, failed with `last_error` "expired",
    /// and go with it); run it hourly, with [`purge_idempotency`](Self::purge_idempotency).
    /// Returns how many were deleted.
    pub async fn purge_webhook_deliveries(&self) -> OperatorResult<u64> {
        let before = self.now() - chrono::TimeDelta::days(30);
        Ok(self.store().purge_deliveries(before).await?)
    }
}
