-- Who set an account's API status: 'team' (the platform's team, or the registration) or
-- 'owner' (the owner's pages). A suspension by the team is lifted by the team only; the rows
-- of before are the team's.
ALTER TABLE accounts ADD COLUMN api_status_by TEXT NOT NULL DEFAULT 'team';
-- An account's keys newest first, a page at a time (the owner's keys page), and its live keys
-- counted under the account's lock when a key is added (at most 20 live).
CREATE INDEX api_keys_account_id ON api_keys (account_id, id);
DROP INDEX api_keys_account;
