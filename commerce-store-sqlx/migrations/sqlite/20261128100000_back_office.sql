-- The back office's queries across accounts (`Operator::find_orders`, `find_accounts`,
-- `find_withdrawals`, `find_webhooks`): an index per filter that leads the query's order, so
-- that a page (and its count, which stops at the query's limit) reads the page's rows, not the
-- table. The per-account indexes of the API's lists serve the same queries for one account.

-- When an account's API status last changed: the approval queue's order (oldest request
-- first). Accounts stored before this migration date it from their registration.
ALTER TABLE accounts ADD COLUMN api_status_at BIGINT NOT NULL DEFAULT 0;
UPDATE accounts SET api_status_at = created_at;
CREATE INDEX accounts_newest ON accounts (created_at, id);
CREATE INDEX accounts_state ON accounts (state, created_at, id);
CREATE INDEX accounts_side ON accounts (side, created_at, id);
CREATE INDEX accounts_api_status ON accounts (api_status, api_status_at, id);

-- Orders of every account: newest or oldest first, by status, by family, by last change,
-- one by number or external reference.
CREATE INDEX orders_all_newest ON orders (created_at, id);
CREATE INDEX orders_all_status ON orders (status, created_at, id);
CREATE INDEX orders_all_family ON orders (family, created_at, id);
CREATE INDEX orders_all_updated ON orders (updated_at, id);
CREATE INDEX orders_all_number ON orders (number_normalized);
CREATE INDEX orders_all_legacy_number ON orders (legacy_number)
    WHERE legacy_number IS NOT NULL;
CREATE INDEX orders_all_external_reference ON orders (external_reference)
    WHERE external_reference IS NOT NULL;

-- Withdrawals of every account: the payout queue (pending, oldest first) and the lists.
CREATE INDEX withdrawals_status ON withdrawals (status, created_at, id);
CREATE INDEX withdrawals_newest ON withdrawals (created_at, id);

-- Webhook endpoints: attempts in a row that failed (0 after a delivery), for the failing
-- endpoints' list, and the disabled ones by reason.
ALTER TABLE webhook_endpoints ADD COLUMN failed_attempts BIGINT NOT NULL DEFAULT 0;
CREATE INDEX webhook_endpoints_failing ON webhook_endpoints (failed_attempts, id)
    WHERE failed_attempts > 0;
CREATE INDEX webhook_endpoints_disabled ON webhook_endpoints (enabled, disabled_reason, id);
