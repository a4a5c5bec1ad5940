-- Paper 000's TPC-H query (Fig. 16): average price over a random one-year ship date range from
-- n samples; 90% of ranges start in the last two years of the data, 10% anywhere.
-- Needs TABLESAMPLE swr and an abtree index on lineitem(l_shipdate); set n with -D n=10000.
\set r random(1, 100)
\if :r <= 90
\set start_ago random(365, 730)
\else
\set start_ago random(365, 2525)
\endif
SELECT avg(l_extendedprice) FROM lineitem TABLESAMPLE swr(:n)
 WHERE l_shipdate >= date '1998-12-01' - :start_ago::int
   AND l_shipdate < date '1998-12-01' - :start_ago::int + 365;
