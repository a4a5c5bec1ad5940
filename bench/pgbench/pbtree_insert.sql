-- :batch new rows into P(id int8, k int4) in one statement and transaction (-D batch=100).
-- ids come from the sequence p_id, and k is a hash of the id, so the keys arrive in random
-- order, are reproducible whatever the number of clients, and an existing key can be
-- recomputed from its id (pbtree_lookup_hit.sql). Paper 001's insert-only index workload.
INSERT INTO p
SELECT i, (hashint8extended(i, 1) & 2147483647)::int4
FROM (SELECT nextval('p_id') AS i FROM generate_series(1, :batch)) s;
