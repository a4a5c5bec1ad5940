-- A point lookup of a key that P(id, k) holds: k of a random id in 1..:maxid (the rows
-- loaded and inserted so far; k = hash of id, as in pbtree_insert.sql).
\set i random(1, :maxid)
SELECT id FROM p WHERE k = (hashint8extended(:i::int8, 1) & 2147483647)::int4;
