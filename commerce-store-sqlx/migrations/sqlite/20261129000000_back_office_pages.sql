-- Webhook endpoints in the back office's order (by id) for its two fixed filters, so that a
-- page of disabled or failing endpoints is an index range read of the page's rows, however
-- few of the endpoints match (`find_webhooks` writes `enabled = FALSE` as a literal so that
-- both planners match the predicate).
CREATE INDEX webhook_endpoints_disabled_ids ON webhook_endpoints (id) WHERE enabled = FALSE;
CREATE INDEX webhook_endpoints_failing_ids ON webhook_endpoints (id) WHERE failed_attempts > 0;
