-- Rate-limit windows, rebuilt with a `slot` column (they only ever hold the current minute).
-- SQLite counts in one slot (its writes are serialised anyway); the column keeps the SQL of
-- both databases the same (see `src/rate_slots.rs`).
DROP TABLE rate_limit_windows;
CREATE TABLE rate_limit_windows (
    key_id         BIGINT NOT NULL,
    window_minute  BIGINT NOT NULL,
    slot           INTEGER NOT NULL,
    used           BIGINT NOT NULL,
    PRIMARY KEY (key_id, window_minute, slot)
);
