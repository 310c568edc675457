-- The pending deliveries in the order the dispatcher's claim takes them (due first, then by
-- id): the claim reads this index from its start and stops at its batch, instead of sorting
-- the whole backlog on every pass.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id)
    WHERE status = 'pending';
