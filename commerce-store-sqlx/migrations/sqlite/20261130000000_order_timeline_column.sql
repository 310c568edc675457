-- Each order's timeline on the order's row: a JSON array of [status, at, reason] (`at` in
-- nanoseconds since the Unix epoch), in entry order. A page of orders is then one plain read
-- of its rows (the timeline no longer needs a subquery per order), and a move writes the
-- order's status and its new entry in one statement. The entries of `order_timeline` are
-- copied in id order, then the table is dropped. The copy rewrites every order's row once.
ALTER TABLE orders ADD COLUMN timeline TEXT NOT NULL DEFAULT '[]';
UPDATE orders SET timeline = (
    SELECT json_group_array(json_array(status, at, reason))
    FROM (SELECT status, at, reason FROM order_timeline t WHERE t.order_id = orders.id ORDER BY t.id)
)
WHERE EXISTS (SELECT 1 FROM order_timeline t WHERE t.order_id = orders.id);
DROP TABLE order_timeline;
