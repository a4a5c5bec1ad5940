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
\echo '== 4. The built-in samplers cannot give exactly n rows'
\echo '   BERNOULLI(0.1) returns about 1000 rows, a different number each time.'
SELECT (SELECT count(*) FROM orders TABLESAMPLE BERNOULLI (0.1)) AS bernoulli_1,
	   (SELECT count(*) FROM orders TABLESAMPLE BERNOULLI (0.1)) AS bernoulli_2,
	   (SELECT count(*) FROM orders TABLESAMPLE BERNOULLI (0.1)) AS bernoulli_3;

\echo
\echo '== 5. An abtree index: an ordered index whose downlinks carry subtree weights'
\echo '   (weighted by quantity; a btree on the same column for comparison)'
\timing on
CREATE INDEX orders_placed_btree ON orders (placed_at);
CREATE INDEX orders_placed_abtree ON orders USING abtree (placed_at) INCLUDE (quantity)
	WITH (weight_column = 'quantity');
\timing off
SELECT pg_size_pretty(pg_relation_size('orders_placed_btree')) AS btree_size,
	   pg_size_pretty(pg_relation_size('orders_placed_abtree')) AS abtree_size;
SELECT * FROM abtree_stats('orders_placed_abtree');
DROP INDEX orders_placed_btree;
\echo '   It is a complete ordered index:'
EXPLAIN (COSTS OFF)
SELECT order_id, placed_at FROM orders WHERE placed_at >= '2025-12-24' ORDER BY placed_at LIMIT 3;
SELECT order_id, placed_at FROM orders WHERE placed_at >= '2025-12-24' ORDER BY placed_at LIMIT 3;

\echo
\echo '== 6. Weighted random draws, one root-to-leaf descent each'
\echo '   50000 orders drawn with probability proportional to quantity: the mean'
\echo '   amount of the draws estimates the amount per item sold.'
\timing on
WITH draw AS (
	SELECT o.amount FROM abtree_sample_tids('orders_placed_abtree', 50000, 0.42) t
	JOIN orders o ON o.ctid = t)
SELECT count(*) AS draws, round(avg(amount), 2) AS estimate,
	   round(1.96 * stddev(amount) / sqrt(count(*))::numeric, 2) AS ci95_half_width,
	   (SELECT round(sum(amount * quantity) / sum(quantity), 2) FROM orders) AS exact
  FROM draw;
\timing off
\echo '   The same within a key range: orders placed in December 2025.'
WITH draw AS (
	SELECT o.placed_at FROM abtree_sample_tids_range('orders_placed_abtree', 1000, 7,
		timestamptz '2025-12-01', timestamptz '2025-12-31 23:59:59') t
	JOIN orders o ON o.ctid = t)
SELECT count(*) AS draws, min(placed_at)::date AS first, max(placed_at)::date AS last FROM draw;
\echo '   TABLESAMPLE swr takes the range from WHERE and draws again for rows that'
\echo '   fail the rest of it: exactly 1000 delivered orders of December 2025.'
\echo '   EXPLAIN ANALYZE shows the index, the key range and why draws were redrawn.'
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT * FROM orders TABLESAMPLE swr(1000) REPEATABLE (7)
 WHERE placed_at >= '2025-12-01' AND placed_at < '2026-01-01' AND status = 'delivered';
SELECT count(*) AS rows, min(placed_at)::date AS first, max(placed_at)::date AS last,
	   bool_and(status = 'delivered') AS all_delivered
  FROM orders TABLESAMPLE swr(1000) REPEATABLE (7)
 WHERE placed_at >= '2025-12-01' AND placed_at < '2026-01-01' AND status = 'delivered';
SELECT index, scans, draws, rows_returned, rejected_by_filter, acceptance
  FROM abtree_swr_stats;

\echo
\echo '== 7. Inserts and deletes keep the weights exact; abtree_verify checks it'
INSERT INTO orders (customer_id, placed_at, status, amount, quantity)
SELECT 1, timestamptz '2025-06-01' + i * interval '1 minute', 'new', 10, 3
  FROM generate_series(1, 50000) i;
DELETE FROM orders WHERE status = 'cancelled';
VACUUM (INDEX_CLEANUP ON) orders;
SELECT abtree_verify('orders_placed_abtree', heapallindexed => true) AS verified,
	   (SELECT total_weight FROM abtree_stats('orders_placed_abtree')) AS index_total_weight,
	   (SELECT sum(quantity) FROM orders) AS table_total_quantity;
-- each insert added its weight above it in a second pass under share locks
-- (abtree.weight_protocol = safe_page); what the passes met since start:
SELECT item, value FROM abtree_status() WHERE component = 'weights';

\echo
\echo '== 8. abtree writes WAL records of its own (resource manager "abtree")'
CREATE EXTENSION pg_walinspect;
SELECT pg_current_wal_insert_lsn() AS start_lsn \gset
INSERT INTO orders (customer_id, placed_at, status, amount, quantity)
VALUES (7, now(), 'new', 99.50, 2);
SELECT abtree_wal_probe('hello from the abtree demo') AS end_lsn \gset
SELECT resource_manager, record_type, description
  FROM pg_get_wal_records_info(:'start_lsn', :'end_lsn')
 WHERE resource_manager = 'abtree';

\echo
\echo '== 9. A sampler on an old snapshot: the multi-version weight store'
\echo '   This transaction keeps its snapshot while another session (dblink)'
\echo '   inserts 20000 orders in 200 transactions.  Each insert recorded in'
\echo '   shared memory the weight it added to each downlink; the sampler'
\echo '   subtracts what its snapshot cannot see, so its draws are not wasted'
\echo '   on rows it would have to reject.  With abtree.mvstore off, most are.'
CREATE EXTENSION dblink;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*) AS orders_this_snapshot_sees FROM orders;
SELECT dblink_exec(format('dbname=%s host=%s port=%s', current_database(),
						  split_part(current_setting('unix_socket_directories'), ',', 1),
						  current_setting('port')),
	$outer$DO $$ BEGIN
	  FOR t IN 1..200 LOOP
	    INSERT INTO orders (customer_id, placed_at, status, amount, quantity)
	    SELECT 2, timestamptz '2025-07-01' + i * interval '1 second', 'new', 5, 100
	      FROM generate_series(1, 100) i;
	    COMMIT;
	  END LOOP;
	END $$$outer$) AS other_session;
SELECT versions, bytes_used FROM abtree_mvstore;
-- rows TABLESAMPLE swr returned and draws it redrew, server-wide so far
CREATE FUNCTION pg_temp.swr_counts(OUT rows bigint, OUT redrawn bigint) LANGUAGE sql AS $$
  SELECT sum(value::bigint) FILTER (WHERE item = 'rows'),
         sum(value::bigint) FILTER (WHERE item IN ('tree_rejects', 'invisible'))
    FROM abtree_status() WHERE component = 'swr' $$;
SELECT * FROM pg_temp.swr_counts() \gset before_
SELECT count(*) AS rows_drawn FROM orders TABLESAMPLE swr(20000) REPEATABLE (9);
SELECT round(100.0 * (rows - :before_rows) / (rows - :before_rows + redrawn - :before_redrawn), 1)
	   AS accepted_percent_store_on
  FROM pg_temp.swr_counts();
SET LOCAL abtree.mvstore = off;
SELECT * FROM pg_temp.swr_counts() \gset before_
SELECT count(*) AS rows_drawn FROM orders TABLESAMPLE swr(20000) REPEATABLE (9);
SELECT round(100.0 * (rows - :before_rows) / (rows - :before_rows + redrawn - :before_redrawn), 1)
	   AS accepted_percent_store_off
  FROM pg_temp.swr_counts();
COMMIT;

\echo
\echo '== 10. Distinct counts the index keeps current (counting HyperLogLog sketches)'
\echo '   Every abtree index keeps a sketch of its key columns; inserts and VACUUM'
\echo '   update it in their own WAL records.  20000 orders from new customers'
\echo '   arrive after ANALYZE: the sketch follows them, ANALYZE''s number does not.'
CREATE INDEX orders_customer ON orders USING abtree (customer_id, status);
INSERT INTO orders (customer_id, placed_at, status, amount, quantity)
SELECT 100000 + g, now(), 'new', 10, 1 FROM generate_series(1, 20000) g;
SELECT attname, sketch_ndistinct, analyze_ndistinct, used_by_planner
  FROM abtree_column_ndistinct WHERE indexname = 'orders_customer';
SELECT count(DISTINCT customer_id) AS true_customers FROM orders;
\echo '   The planner''s GROUP BY estimate comes from the sketch (abtree.sketch_ndistinct):'
EXPLAIN (COSTS ON) SELECT customer_id, count(*) FROM orders GROUP BY customer_id;
\echo '   Column pairs: the index on exactly (customer_id, status) also sketches'
\echo '   its whole keys and counts the pairs itself (method key_sketch); a pair'
\echo '   without such an index gets SCBC from a 30000-row swr sample and the'
\echo '   column sketches'
SET abtree.swr_index = 'orders_customer';
SELECT round(estimate) AS estimate, method, column_source
  FROM abtree_ndistinct('orders', '{customer_id, status}', seed => 1);
SELECT round(chll_estimate(abtree_sketch('orders_customer', 0))) AS key_sketch;
SELECT count(*) AS true_pairs FROM (SELECT DISTINCT customer_id, status FROM orders) s;
RESET abtree.swr_index;

\echo
\echo '== 11. A partitioned B-tree (pbtree) for insert-heavy tables'
\echo '   Inserts go to one small mutable partition; past the buffer budget it is'
\echo '   sealed (written once, in order, with a Bloom filter) and a new one takes'
\echo '   over; a background worker merges sealed partitions.  A tiny budget here'
\echo '   makes it seal while 60000 events arrive:'
CREATE TABLE events (id bigserial, device int, at timestamptz, reading float8);
CREATE INDEX events_device ON events USING pbtree (device, at);
SET abtree.pbtree_buffer_budget = 40;
INSERT INTO events (device, at, reading)
SELECT (random() * 5000)::int, now() - random() * interval '30 days', random()
  FROM generate_series(1, 60000);
RESET abtree.pbtree_buffer_budget;
SELECT state, count(*) AS partitions, sum(entries) AS entries,
       round(max(key_filter_fpr)::numeric, 4) AS worst_filter_fpr
  FROM pbtree_stats('events_device') GROUP BY state ORDER BY state;
\echo '   A device''s latest readings: the filters skip partitions without it,'
\echo '   the rest are merged in key order (no Sort node):'
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT at, reading FROM events WHERE device = 42 ORDER BY device, at DESC LIMIT 5;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT pbtree_merge('events_device') AS partitions_merged;
SELECT pbtree_verify('events_device', heapallindexed => true) AS entries_verified;
