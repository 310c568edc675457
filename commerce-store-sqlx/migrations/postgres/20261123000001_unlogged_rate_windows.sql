-- Rate-limit windows, rebuilt (they only ever hold the current minute):
--
-- * UNLOGGED: every authenticated request writes a count, and an unlogged table writes no WAL,
--   so that commit waits for no WAL flush (it was the one durable write of every read
--   request). The cost, accepted: after a crash of the database server (not of an application
--   instance) the table starts empty, so a key may be allowed up to twice its limit within the
--   minute of the crash; replicas do not carry it, so after a fail-over the windows start empty.
-- * Split in slots: a key's count is spread over up to 8 rows (`slot`), each allowed its share
--   of the limit, so that the concurrent requests of one key do not all queue on one row lock;
--   the shares add up to the limit, so counts stay exact (see `src/rate_slots.rs`).
DROP TABLE rate_limit_windows;
CREATE UNLOGGED TABLE rate_limit_windows (
    key_id         BIGINT NOT NULL,
    window_minute  BIGINT NOT NULL,
    slot           INTEGER NOT NULL,
    used           BIGINT NOT NULL,
    PRIMARY KEY (key_id, window_minute, slot)
);
