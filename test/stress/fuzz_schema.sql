-- The database sqlsmith fuzzes (test/stress/sqlsmith.py), loaded by the
-- role that sqlsmith connects as (not a superuser).  sqlsmith builds
-- queries from the catalog: it calls functions whose argument types it can
-- fill from columns and constants, and queries tables and views.  Our SQL
-- functions take regclass, chll, anyelement and text arguments, so the
-- tables below hold values of those types (index names as regclass, sketches
-- as chll); TABLESAMPLE swr is reached through views, since sqlsmith only
-- writes BERNOULLI and SYSTEM samples itself.
CREATE TABLE fz_t (id int, k int, w int NOT NULL, s text, f float8, d date, b bool);
INSERT INTO fz_t SELECT i, (i * 7919) % 503, 1 + i % 9, md5(i::text), i / 7.0,
       date '2020-01-01' + i % 400, i % 3 = 0
  FROM generate_series(1, 3000) i;
CREATE INDEX fz_t_k ON fz_t USING abtree (k);
CREATE INDEX fz_t_kw ON fz_t USING abtree (k, s) INCLUDE (w) WITH (weight_column = 'w');
CREATE INDEX fz_t_sd ON fz_t USING abtree (s DESC, d NULLS FIRST);
CREATE INDEX fz_t_f ON fz_t USING abtree (f) WITH (fillfactor = 20);

CREATE TABLE fz_u (id bigint, k bigint, t text, ts timestamptz, u uuid);
INSERT INTO fz_u SELECT i, i % 97, repeat(chr(65 + i % 26), 1 + i % 30),
       timestamptz '2024-01-01' + i * interval '1 minute', md5(i::text)::uuid
  FROM generate_series(1, 2000) i;
INSERT INTO fz_u VALUES (NULL, NULL, NULL, NULL, NULL);
CREATE INDEX fz_u_k ON fz_u USING abtree (k);
CREATE INDEX fz_u_tts ON fz_u USING abtree (t, ts);
CREATE INDEX fz_u_u ON fz_u USING abtree (u);
DELETE FROM fz_u WHERE id % 5 = 0;

CREATE TABLE fz_empty (k int, w smallint NOT NULL);
CREATE INDEX fz_empty_kw ON fz_empty USING abtree (k) INCLUDE (w) WITH (weight_column = 'w');

-- partitioned, with a partitioned abtree index
CREATE TABLE fz_p (k int, v text) PARTITION BY RANGE (k);
CREATE TABLE fz_p1 PARTITION OF fz_p FOR VALUES FROM (0) TO (500);
CREATE TABLE fz_p2 PARTITION OF fz_p FOR VALUES FROM (500) TO (1000);
INSERT INTO fz_p SELECT i % 1000, i::text FROM generate_series(1, 2000) i;
CREATE INDEX fz_p_k ON fz_p USING abtree (k);

-- values sqlsmith can pass to our functions
CREATE TABLE fz_idx (i regclass, t regclass, col int, n int, seed float8, method text);
INSERT INTO fz_idx VALUES
  ('fz_t_k', 'fz_t', 1, 10, 0.5, 'gee'),
  ('fz_t_kw', 'fz_t', 2, 100, 0.25, 'bc'),
  ('fz_t_sd', 'fz_t', 1, 0, 0.75, 'scgee'),
  ('fz_t_f', 'fz_t', 1, 5, NULL, 'scbc'),
  ('fz_u_k', 'fz_u', 1, 50, 0.1, 'scbc'),
  ('fz_u_tts', 'fz_u', 2, 1, 0.9, 'bogus'),
  ('fz_u_u', 'fz_u', 1, 20, 0.3, 'gee'),
  ('fz_empty_kw', 'fz_empty', 1, 3, 0.2, 'bc'),
  ('fz_p_k', 'fz_p', 1, 30, 0.4, 'scbc'),
  ('fz_p1', 'fz_p1', 0, -1, 0.6, NULL);

CREATE TABLE fz_chll (id int, h chll, c text[]);
INSERT INTO fz_chll
SELECT g, (SELECT chll_agg(k) FROM fz_t WHERE id % 10 = g), ARRAY['k', 's']
  FROM generate_series(0, 9) g;
INSERT INTO fz_chll VALUES (10, chll_create(16), ARRAY['s']), (11, chll_create(), ARRAY['k', 'w', 'd']),
  (12, NULL, NULL), (13, (SELECT chll_agg(s, 64) FROM fz_t), ARRAY['nope']);

-- TABLESAMPLE swr through views
CREATE VIEW fz_swr_t AS SELECT * FROM fz_t TABLESAMPLE swr(25);
CREATE VIEW fz_swr_t_rep AS SELECT * FROM fz_t TABLESAMPLE swr(10) REPEATABLE (7) WHERE k BETWEEN 10 AND 300;
CREATE VIEW fz_swr_u AS SELECT * FROM fz_u TABLESAMPLE swr(15);
CREATE VIEW fz_swr_p AS SELECT * FROM fz_p TABLESAMPLE swr(20);
CREATE VIEW fz_swr_lat AS
  SELECT i.n, s.* FROM fz_idx i, LATERAL (SELECT * FROM fz_t TABLESAMPLE swr(greatest(i.n, 0)) REPEATABLE (i.col)) s;
CREATE VIEW fz_swr_est AS
  SELECT (swr_avg(f)).*, (swr_count(b, 3000)).estimate AS cnt FROM fz_t TABLESAMPLE swr(200);
CREATE VIEW fz_sketches AS SELECT * FROM abtree_column_ndistinct;
CREATE VIEW fz_swr_stats AS SELECT * FROM abtree_swr_stats;

-- sqlsmith does not call functions with polymorphic arguments (anyelement,
-- anyarray): these wrappers with concrete types let it reach them.
CREATE FUNCTION fz_range_weight(i regclass, lo int, hi int, vis bool) RETURNS numeric
  LANGUAGE sql AS $$ SELECT abtree_range_weight(i, lo, hi, visible_only => vis) $$;
CREATE FUNCTION fz_range_weight_t(i regclass, lo text, hi text, loi bool) RETURNS numeric
  LANGUAGE sql AS $$ SELECT abtree_range_weight(i, lo, hi, loi, NOT loi) $$;
CREATE FUNCTION fz_range_weight_b(i regclass, lo bigint, hi bigint) RETURNS numeric
  LANGUAGE sql AS $$ SELECT abtree_range_weight(i, lo, hi) $$;
CREATE FUNCTION fz_chll_add(h chll, v int) RETURNS chll LANGUAGE sql AS $$ SELECT chll_add(h, v) $$;
CREATE FUNCTION fz_chll_add_t(h chll, v text) RETURNS chll LANGUAGE sql AS $$ SELECT chll_add(h, v) $$;
CREATE FUNCTION fz_chll_remove(h chll, v int) RETURNS chll LANGUAGE sql AS $$ SELECT chll_remove(h, v) $$;
CREATE FUNCTION fz_chll_add_all(h chll, v text[]) RETURNS chll LANGUAGE sql AS $$ SELECT chll_add_all(h, v) $$;
CREATE FUNCTION fz_chll_remove_all(h chll, v text[]) RETURNS chll LANGUAGE sql AS $$ SELECT chll_remove_all(h, v) $$;
CREATE FUNCTION fz_chll_hash(v text) RETURNS bigint LANGUAGE sql AS $$ SELECT chll_hash(v) $$;
CREATE FUNCTION fz_chll_hash_i(v int) RETURNS bigint LANGUAGE sql AS $$ SELECT chll_hash(v) $$;
CREATE FUNCTION fz_chll_of(v int, buckets int) RETURNS chll
  LANGUAGE sql AS $$ SELECT chll_agg(x, buckets) FROM generate_series(1, least(abs(v), 5000)) x $$;
CREATE FUNCTION fz_ndistinct(t regclass, cols text[], n int, method text, seed float8) RETURNS float8
  LANGUAGE sql AS $$ SELECT estimate FROM abtree_ndistinct(t, cols, n, method, seed) $$;
CREATE FUNCTION fz_ndistinct_freq(t regclass, cols text[], alg text) RETURNS bigint[]
  LANGUAGE sql AS $$ SELECT abtree_ndistinct_freq(t, cols, alg) $$;
CREATE FUNCTION fz_sample(i regclass, n int, seed float8) RETURNS SETOF tid
  LANGUAGE sql AS $$ SELECT abtree_sample_tids(i, n % 10000, seed) $$;
CREATE FUNCTION fz_sample_range(i regclass, n int, seed float8, lo int, hi int) RETURNS SETOF tid
  LANGUAGE sql AS $$ SELECT abtree_sample_tids_range(i, n % 10000, seed, lo, hi) $$;
CREATE FUNCTION fz_swr(n int, seed float8) RETURNS SETOF fz_u
  LANGUAGE sql AS $$ SELECT * FROM fz_u TABLESAMPLE swr(n % 10000) REPEATABLE (seed) $$;
CREATE FUNCTION fz_swr_where(n int, lo int, hi int) RETURNS SETOF fz_p
  LANGUAGE sql AS $$ SELECT * FROM fz_p TABLESAMPLE swr(n % 10000) WHERE k BETWEEN lo AND hi $$;
CREATE FUNCTION fz_verify(i regclass, h bool) RETURNS void
  LANGUAGE sql AS $$ SELECT abtree_verify(i, heapallindexed => h, exact => h) $$;
ANALYZE;
