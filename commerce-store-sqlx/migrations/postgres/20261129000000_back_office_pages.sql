-- Webhook endpoints in the back office's order (by id) for its two fixed filters, so that a
-- page of enabled or disabled endpoints, or of failing ones, is an index range read of the
-- page's rows in order, however few of the endpoints match: the equality column first, then
-- the sort key (`find_webhooks` writes `enabled = FALSE` / `TRUE` as a literal).
CREATE INDEX webhook_endpoints_enabled_ids ON webhook_endpoints (enabled, id);
CREATE INDEX webhook_endpoints_failing_ids ON webhook_endpoints (id) WHERE failed_attempts > 0;
