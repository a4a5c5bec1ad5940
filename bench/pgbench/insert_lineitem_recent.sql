-- One new lineitem row with paper 000's recent-date skew (section 5.4): 99% of ship dates in
-- the 183 days up to 1998-12-01, 1% uniform over 1992-01-02 .. 1998-12-01.  Order keys come
-- from a sequence: CREATE SEQUENCE lineitem_new_orderkey START 1000000000.  bench/run's
-- generator of the same rows is `bench/datagen lineitem-inserts`.
\set r random(1, 100)
\if :r <= 99
\set ship_ago random(0, 182)
\else
\set ship_ago random(0, 2525)
\endif
\set order_ago random(1, 121)
\set commit_after random(30, 90)
\set receipt_after random(1, 30)
\set partkey random(1, 200000)
\set suppkey random(1, 10000)
\set qty random(1, 50)
\set disc random(0, 10)
\set tax random(0, 8)
INSERT INTO lineitem
SELECT nextval('lineitem_new_orderkey'), :partkey::int4, :suppkey::int4, 1, :qty::numeric,
       :qty::numeric * ((90000 + (:partkey::int4 / 10) % 20001 + 100 * (:partkey::int4 % 1000)) / 100.0),
       :disc::numeric / 100, :tax::numeric / 100,
       CASE WHEN ship + :receipt_after::int > date '1995-06-17' THEN 'N' ELSE 'R' END,
       CASE WHEN ship > date '1995-06-17' THEN 'O' ELSE 'F' END,
       ship, ship - :order_ago::int + :commit_after::int, ship + :receipt_after::int,
       'NONE', 'TRUCK', 'pgbench insert'
FROM (SELECT date '1998-12-01' - :ship_ago::int AS ship) s;
