-- Fairness between endpoints. Each endpoint's circuit breaker (`commerce_core::model::Breaker`):
-- unreachable attempts in a row, and until when its deliveries are not claimed.
ALTER TABLE webhook_endpoints ADD COLUMN breaker_failures BIGINT NOT NULL DEFAULT 0;
ALTER TABLE webhook_endpoints ADD COLUMN breaker_open_until BIGINT;
-- The deliveries under a lease (in flight), for the claim's per-endpoint limit. A delivery
-- gets an entry when claimed, not when queued: the outbox's insert pays nothing for it.
CREATE INDEX webhook_deliveries_leased ON webhook_deliveries (lease_until, endpoint_id)
    WHERE lease_until IS NOT NULL;
