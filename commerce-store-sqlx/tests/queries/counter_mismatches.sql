-- Rows where the order counters and earnings sums (account_order_counts) differ from COUNT(*)
-- and the sums of the booked earnings over the orders of each account and family: 0 when they
-- are in step. Every SQL test runs it after its work.
SELECT COUNT(*) FROM
    (SELECT account_id, family, COUNT(*) AS n, SUM(earnings_net) AS net,
            SUM(earnings_commission) AS commission
     FROM orders GROUP BY account_id, family) AS o
FULL JOIN account_order_counts AS c ON c.account_id = o.account_id AND c.family = o.family
WHERE COALESCE(o.n, 0) <> COALESCE(c.count, 0)
   OR COALESCE(o.net, 0) <> COALESCE(c.net, 0)
   OR COALESCE(o.commission, 0) <> COALESCE(c.commission, 0)
