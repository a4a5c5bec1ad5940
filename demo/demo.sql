-- The abtree demo, run by scripts/demo.sh on a throwaway cluster that has
-- shared_preload_libraries = 'abtree'.  Later features add their sections.
\set ON_ERROR_STOP on
\pset footer off
\timing off

\echo
\echo '== 1. abtree is preloaded, and CREATE EXTENSION installs its SQL interface'
SHOW shared_preload_libraries;
CREATE EXTENSION abtree;
\dx abtree

\echo
\echo '== 2. What abtree has registered in this server'
\echo '   (its WAL resource manager, shared memory, parameters and counters)'
SELECT * FROM abtree_status();
SELECT name, setting, context, short_desc FROM pg_settings WHERE name LIKE 'abtree.%';

\echo
\echo '== 3. A realistic table: one million orders (skewed customers, log-normal amounts)'
SELECT setseed(0.42);
CREATE TABLE orders (
	order_id    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	customer_id integer NOT NULL,
	placed_at   timestamptz NOT NULL,
	status      text NOT NULL,
	amount      numeric(10, 2) NOT NULL,
	quantity    integer NOT NULL
);
\timing on
INSERT INTO orders (customer_id, placed_at, status, amount, quantity)
SELECT
	-- a few customers order a lot: the square skews towards small ids
	1 + floor(50000 * power(random(), 2))::int,
	timestamptz '2024-01-01' + random() * interval '730 days',
	(ARRAY['delivered', 'delivered', 'delivered', 'delivered', 'shipped',
		   'shipped', 'paid', 'cancelled', 'returned', 'new'])[1 + floor(random() * 10)::int],
	round(exp(3.5 + 1.1 * sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()))::numeric, 2),
	1 + floor(-ln(1 - random()) * 2)::int
FROM generate_series(1, 1000000);
\timing off
ANALYZE orders;
SELECT count(*) AS orders,
	   count(DISTINCT customer_id) AS customers,
	   pg_size_pretty(pg_total_relation_size('orders')) AS size,
	   round(avg(amount), 2) AS avg_amount,
	   min(placed_at)::date AS first_order,
	   max(placed_at)::date AS last_order
  FROM orders;
SELECT status, count(*), round(100.0 * count(*) / sum(count(*)) OVER (), 1) AS pct
  FROM orders GROUP BY status ORDER BY count(*) DESC;

\echo
\echo '== 4. Why abtree: the built-in samplers cannot give exactly n rows'
\echo '   BERNOULLI(0.1) returns about 1000 rows, a different number each time;'
\echo '   TABLESAMPLE swr(1000) (coming with the abtree index) returns exactly 1000,'
\echo '   drawn independently, with replacement, optionally weighted.'
SELECT (SELECT count(*) FROM orders TABLESAMPLE BERNOULLI (0.1)) AS bernoulli_1,
	   (SELECT count(*) FROM orders TABLESAMPLE BERNOULLI (0.1)) AS bernoulli_2,
	   (SELECT count(*) FROM orders TABLESAMPLE BERNOULLI (0.1)) AS bernoulli_3;

\echo
\echo '== 5. abtree writes WAL records of its own (resource manager "abtree")'
CREATE EXTENSION pg_walinspect;
SELECT pg_current_wal_insert_lsn() AS start_lsn \gset
SELECT abtree_wal_probe('hello from the abtree demo') AS end_lsn \gset
SELECT resource_manager, record_type, description
  FROM pg_get_wal_records_info(:'start_lsn', :'end_lsn')
 WHERE resource_manager = 'abtree';
