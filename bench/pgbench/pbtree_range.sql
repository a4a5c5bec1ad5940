-- A short range scan of P(id, k): the keys in [lo, lo + :span], with the heap tuples read
-- (count(id)). With k uniform over 0..2^31-1, span = keys * 2^31 / rows gives about `keys`
-- rows per scan.
\set lo random(0, 2147483647 - :span)
\set hi :lo + :span
SELECT count(id) FROM p WHERE k BETWEEN :lo AND :hi;
