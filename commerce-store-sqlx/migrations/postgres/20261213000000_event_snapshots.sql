-- A delivery keeps its event as data, not as a rendered body: the `snapshot` column holds the
-- event's snapshot (the order as it stood after the change, the status it left, the payout
-- hold; or a ping's endpoint and instant) in the store's own JSON format
-- (commerce-store-sqlx/src/rows/snapshot.rs), and the dispatcher renders the body when it
-- sends. A row written before this migration has no snapshot and keeps the body rendered then
-- in `payload`, sent as it is; a row written since has an empty `payload`.
ALTER TABLE webhook_deliveries ADD COLUMN snapshot TEXT;
-- 2 to 4 KB of JSON on the path of every order change, as the payload was.
ALTER TABLE webhook_deliveries ALTER COLUMN snapshot SET COMPRESSION lz4;
