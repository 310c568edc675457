-- Rate-limit windows are per-minute counters that every authenticated request writes. As an
-- UNLOGGED table they write no WAL, so the commit of that write waits for no WAL flush (it
-- was the one durable write of every read request). The cost, accepted: after a crash of the
-- database server (not of an application instance) the table starts empty, so a key may be
-- allowed up to twice its limit within the minute of the crash; replicas do not carry it, so
-- after a fail-over the windows start empty too. Counts stay exact under concurrency.
ALTER TABLE rate_limit_windows SET UNLOGGED;
