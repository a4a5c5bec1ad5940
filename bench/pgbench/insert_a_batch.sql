-- :batch random rows into A(x, y) in one statement and transaction (set it with -D batch=100).
-- The rows come from pgbench's seeded random number and a hash, so --random-seed makes
-- them reproducible; batching keeps client round trips out of an index insert benchmark
-- (the paper's clients committed once per 10K rows).
\set base random(0, 2147483647)
INSERT INTO a
SELECT (hashint8extended(:base::int8 * 65536 + g, 1) & 2147483647)::int4,
       (hashint8extended(:base::int8 * 65536 + g, 2) & 2147483647)::int4
FROM generate_series(1, :batch) g;
