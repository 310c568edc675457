-- `catalog.changed` is derived from the catalogue change feed, not written with each change:
-- every 10 seconds an instance's runner sends it to each enabled marketer endpoint that
-- receives it and was last sent a position the feed's head has passed (at most one every 10
-- seconds per endpoint). Each endpoint keeps what it was last sent: the feed position (two
-- numbers, compared in order), when, and the event id, which marks the endpoints of one
-- round for the insert of their deliveries in the same transaction. NULL: never sent.
ALTER TABLE webhook_endpoints ADD COLUMN catalog_sent_high BIGINT;
ALTER TABLE webhook_endpoints ADD COLUMN catalog_sent_low BIGINT;
ALTER TABLE webhook_endpoints ADD COLUMN catalog_sent_at BIGINT;
ALTER TABLE webhook_endpoints ADD COLUMN catalog_event_id TEXT;
