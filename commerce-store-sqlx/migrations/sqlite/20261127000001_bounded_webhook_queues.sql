-- Bounded webhook queues. A key can queue deliveries on request (pings, redeliveries): at most
-- 10 of those pending per endpoint, counted under the endpoint's row lock (`manual` marks
-- them; the partial index keeps the count to those few rows). The pending deliveries of an
-- endpoint disabled for 30 days expire at the history purge: `disabled_at` is when it was
-- disabled (`updated_at` moves with any later change, so it cannot tell).

ALTER TABLE webhook_endpoints ADD COLUMN disabled_at BIGINT;
-- Endpoints disabled before this migration: their last change is the closest known instant.
UPDATE webhook_endpoints SET disabled_at = updated_at WHERE NOT enabled;

ALTER TABLE webhook_deliveries ADD COLUMN manual BOOLEAN NOT NULL DEFAULT FALSE;
CREATE INDEX webhook_deliveries_manual ON webhook_deliveries (endpoint_id)
    WHERE status = 'pending' AND manual;
