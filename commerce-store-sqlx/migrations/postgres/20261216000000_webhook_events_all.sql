-- An endpoint registered without `events` takes every event type of its side, types added in
-- later versions included: it is stored as '*' from this version on. Earlier versions stored
-- the list of that day's types instead, which no later type would reach; the endpoints whose
-- list is that whole list become '*' (a list that named every type by hand cannot be told
-- apart from one that named none, and is taken as every type too).
UPDATE webhook_endpoints SET events = '*'
WHERE events IN ('order.created,order.status_changed', 'order.status_changed,order.created');
