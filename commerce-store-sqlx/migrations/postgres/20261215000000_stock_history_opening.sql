-- From this version on, a variant's stock is the sum of its history: its first stock
-- ('initial'), every order's reservation, release and restock, every receipt and the
-- operator's adjustments. A database written by an earlier version kept only some of these,
-- so each variant whose history does not add up to its stock gets one opening entry of the
-- difference, dated when this runs (reason 'initial', with a note saying so). Orders placed
-- before it have no 'reservation' entry: the pieces they hold are not counted against the
-- bound of 1,000,000,000 pieces that an operator's delta or a receipt is checked against, and
-- their settled lines keep what was booked for them then (a later correction books the
-- difference from the completed counts).
INSERT INTO stock_adjustments (variant_id, delta, reason, note, available_after, at)
SELECT v.id, v.available - COALESCE(h.total, 0), 'initial',
       'the stock when its history began to explain it', v.available, CAST(EXTRACT(EPOCH FROM now()) * 1000000000 AS BIGINT)
FROM variants v
LEFT JOIN (SELECT variant_id, SUM(delta) AS total FROM stock_adjustments GROUP BY variant_id) h
       ON h.variant_id = v.id
WHERE v.available <> COALESCE(h.total, 0);
