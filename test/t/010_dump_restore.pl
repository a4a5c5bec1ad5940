# pg_dump / pg_restore of a database with abtree indexes (weighted and
# unweighted, sketch on and off, sketch_buckets, fillfactor, multi-column with DESC,
# INCLUDE, partial), pbtree indexes of several partitions, a chll column and a CREATE STATISTICS object filled by
# abtree_ndistinct_store (filled again by the first ANALYZE after the
# restore): restored into a fresh database, every index
# verifies exact and complete, the reloptions survive, queries return what
# they returned in the source, and sampling and the statistics work.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use AbtreeCheck;

my $node = abtree_node('abt_dump');
$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql('src', q{
CREATE EXTENSION abtree;
CREATE TABLE t (id int, k int, w int NOT NULL, g text, c chll);
INSERT INTO t SELECT i, i % 997, i % 13, 'g' || (i % 50), NULL
  FROM generate_series(1, 20000) i;
CREATE INDEX t_k ON t USING abtree (k);
CREATE INDEX t_kw ON t USING abtree (k) INCLUDE (w) WITH (weight_column = 'w', fillfactor = 50);
CREATE INDEX t_gk ON t USING abtree (g, k DESC) WITH (sketch = off);
CREATE INDEX t_id ON t USING abtree (id) INCLUDE (g, w) WITH (weight_column = 'w', sketch = on);
CREATE INDEX t_part ON t USING abtree (k) WHERE w > 6;
CREATE INDEX t_wg ON t USING abtree (w, g) WITH (sketch_buckets = 2048);
-- rows after the build, so that inserted entries are dumped too
INSERT INTO t SELECT i, i % 997, i % 13, 'g' || (i % 50), NULL
  FROM generate_series(20001, 21000) i;
DELETE FROM t WHERE id % 100 = 0;
-- dead entries count in weights until VACUUM; a restore has none
VACUUM (INDEX_CLEANUP ON) t;
CREATE TABLE sk (g text PRIMARY KEY, c chll);
INSERT INTO sk SELECT g, chll_agg(k) FROM t GROUP BY g;
INSERT INTO sk VALUES ('empty', chll_create(16)), ('null', NULL);
CREATE STATISTICS t_st (ndistinct) ON k, g, w FROM t;
SET abtree.swr_index = 't_k';
ANALYZE t;
SELECT abtree_ndistinct_store('t_st', 5000, 0.5);
-- pbtree: several sealed partitions (one merged) and a mutable one
CREATE TABLE pb (id int, k int, s text);
INSERT INTO pb SELECT i, (i * 7919) % 5000, md5(i::text) FROM generate_series(1, 6000) i;
CREATE INDEX pb_k ON pb USING pbtree (k);
CREATE INDEX pb_sk ON pb USING pbtree (s, k DESC) INCLUDE (id);
INSERT INTO pb SELECT i, (i * 7919) % 5000, md5(i::text) FROM generate_series(6001, 9000) i;
SELECT pbtree_seal('pb_k'), pbtree_seal('pb_sk');
INSERT INTO pb SELECT i, (i * 7919) % 5000, md5(i::text) FROM generate_series(9001, 10000) i;
SELECT pbtree_merge('pb_k', 2);
-- weight columns renamed after the build: pg_dump prints the table's
-- column names, so weight_column must follow the rename
CREATE TABLE rn (k int, w int NOT NULL);
INSERT INTO rn SELECT i, i % 7 + 1 FROM generate_series(1, 3000) i;
CREATE INDEX rn_kw ON rn USING abtree (k) INCLUDE (w) WITH (weight_column = 'w');
ALTER TABLE rn RENAME COLUMN w TO weight;
CREATE TABLE rp (k int, w int NOT NULL) PARTITION BY RANGE (k);
CREATE TABLE rp1 PARTITION OF rp FOR VALUES FROM (0) TO (1500);
CREATE TABLE rp2 PARTITION OF rp FOR VALUES FROM (1500) TO (3001);
CREATE INDEX rp_kw ON rp USING abtree (k) INCLUDE (w) WITH (weight_column = 'w');
INSERT INTO rp SELECT i, i % 5 + 1 FROM generate_series(1, 3000) i;
ALTER TABLE rp RENAME COLUMN w TO weight;
-- pg_dump writes ALTER TABLE ... CLUSTER ON for these
ALTER TABLE t CLUSTER ON t_gk;
ALTER TABLE pb CLUSTER ON pb_k;
});

my @indexes = qw(t_k t_kw t_gk t_id t_part t_wg rn_kw rp1_k_w_idx rp2_k_w_idx);
my @pbt_indexes = qw(pb_k pb_sk);
my $reloptions = q{SELECT string_agg(c.relname || ':' || coalesce(array_to_string(c.reloptions, ','), '') ||
  ':' || pg_get_indexdef(c.oid), E'\n' ORDER BY c.relname)
  FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE a.amname = 'abtree'};
# answers that must not change: counts, sums, weights, index scans, sketches
my $answers = q{
SET enable_seqscan = off;
SELECT count(*), sum(k) FROM t WHERE k BETWEEN 100 AND 300;
SELECT count(*) FROM t WHERE g = 'g7' AND k > 500;
SELECT array_agg(id ORDER BY id) FROM t WHERE id BETWEEN 5000 AND 5010;
SELECT array_agg(k ORDER BY k DESC) FROM (SELECT k FROM t WHERE k < 3 ORDER BY k DESC LIMIT 5) s;
SELECT abtree_range_weight('t_k', 10, 20), abtree_range_weight('t_kw', 10, 20);
SELECT entries, total_weight FROM abtree_stats('t_kw');
SELECT entries, total_weight FROM abtree_stats('t_part');
SELECT abtree_range_weight('rn_kw', NULL::int, NULL), abtree_range_weight('rp_kw', NULL::int, NULL);
SELECT abtree_sketch('t_gk', 1) IS NULL, round(chll_estimate(abtree_sketch('t_k', 1)));
SELECT (chll_info(s)).buckets, (chll_info(s)).overflow_capacity, round(chll_estimate(s))
  FROM abtree_sketch('t_wg', 0) s;
SELECT string_agg(g || '=' || coalesce(round(chll_estimate(c))::text, 'null'), ',' ORDER BY g) FROM sk;
SELECT md5(string_agg(coalesce(c::text, '-'), ',' ORDER BY g)) FROM sk;
SET enable_bitmapscan = off;
SELECT count(*), sum(id) FROM pb WHERE k BETWEEN 100 AND 900;
SELECT array_agg(k ORDER BY k DESC) FROM (SELECT k FROM pb WHERE k > 4990 ORDER BY k DESC) s;
SELECT id FROM pb WHERE s = md5('4242') AND k = (4242 * 7919) % 5000;
};

my $src_answers = $node->safe_psql('src', $answers);
my $src_relopts = $node->safe_psql('src', $reloptions);
my $dumpfile = $node->basedir . '/src.dump';
$node->command_ok([ 'pg_dump', '-Fc', '-f', $dumpfile, '-d', $node->connstr('src') ],
	'pg_dump -Fc of a database with abtree indexes');
$node->safe_psql('postgres', 'CREATE DATABASE dst');
$node->command_ok([ 'pg_restore', '--exit-on-error', '-d', $node->connstr('dst'), $dumpfile ],
	'pg_restore into a fresh database');

for my $idx (@indexes)
{
	my ($ret, $out, $err) = $node->psql('dst',
		"SELECT abtree_verify('$idx', heapallindexed => true, exact => true)");
	is($ret, 0, "restored $idx verifies exact and complete") or diag($err);
}
for my $idx (@pbt_indexes)
{
	my ($ret, $out, $err) = $node->psql('dst', "SELECT pbtree_verify('$idx', true)");
	is($ret, 0, "restored pbtree $idx verifies, every row indexed") or diag($err);
}
is($node->safe_psql('dst', q{SELECT pg_get_indexdef('pb_sk'::regclass)}),
	$node->safe_psql('src', q{SELECT pg_get_indexdef('pb_sk'::regclass)}),
	'the pbtree definition survives');
is($node->safe_psql('dst', $reloptions), $src_relopts,
	'reloptions and definitions of the abtree indexes survive');
is($node->safe_psql('dst', $answers), $src_answers,
	'queries, weights and sketches answer as in the source');

# the clustering marks survive, and CLUSTER orders by them in the restored database
my $clustered = q{SELECT string_agg(indexrelid::regclass::text, ',' ORDER BY 1)
  FROM pg_index WHERE indisclustered};
is($node->safe_psql('dst', $clustered), 'pb_k,t_gk', 'ALTER TABLE ... CLUSTER ON survives');
$node->safe_psql('dst', 'CLUSTER t; CLUSTER pb');
is($node->safe_psql('dst', q{SELECT bool_and(pos = want) FROM
  (SELECT row_number() OVER (ORDER BY ctid) pos, row_number() OVER (ORDER BY g, k DESC, ctid) want FROM t) s}),
	't', 'CLUSTER on the restored abtree index orders the table by it');
is($node->safe_psql('dst', $answers), $src_answers, 'queries answer as in the source after CLUSTER');

# sampling in the restored database
is($node->safe_psql('dst', q{SET abtree.swr_index = 't_kw';
SELECT count(*) FROM t TABLESAMPLE swr(500) REPEATABLE (1)}), '500',
	'TABLESAMPLE swr draws from a restored weighted index');
is($node->safe_psql('dst', q{SELECT count(*) FROM abtree_sample_tids('t_id', 300) s
  JOIN t ON t.ctid = s WHERE t.w > 0}), '300',
	'abtree_sample_tids draws only rows of positive weight');
is($node->safe_psql('dst', q{SELECT count(*) FROM abtree_sample_tids('t_gk', 200) s
  JOIN t ON t.ctid = s}), '200', 'abtree_sample_tids on a multi-column index');

# the statistics object comes back frozen and without data (pg_dump does
# not dump pg_statistic_ext_data), which ANALYZE alone would never change;
# after an ANALYZE abtree fills it again (issue 25, item 5)
is($node->safe_psql('dst', q{SELECT stxstattarget FROM pg_statistic_ext WHERE stxname = 't_st'}),
	'0', 'the statistics object is restored, frozen');
is($node->safe_psql('dst', q{SELECT count(*) FROM pg_stats_ext WHERE statistics_name = 't_st'}),
	'0', 'the restored statistics object has no data');
$node->safe_psql('dst', 'ANALYZE t');
is($node->safe_psql('dst', q{SELECT (SELECT count(*) FROM regexp_matches(n_distinct::text, ': ', 'g'))
  FROM pg_stats_ext WHERE statistics_name = 't_st'}), '4',
	'ANALYZE after the restore fills it again (4 combinations)');
# and abtree_ndistinct_store with the source's sample agrees with the source
is($node->safe_psql('dst', q{SET abtree.swr_index = 't_k';
SELECT abtree_ndistinct_store('t_st', 5000, 0.5)}), '4',
	'abtree_ndistinct_store fills the restored statistics object (4 combinations)');
my $nd = $node->safe_psql('dst', q{SELECT n_distinct FROM pg_stats_ext WHERE statistics_name = 't_st'});
like($nd, qr/"\d+, \d+": \d+/, 'pg_stats_ext shows the stored counts');
my ($src_kg) = $node->safe_psql('src', q{SELECT (regexp_match(n_distinct::text, '"2, 4": (\d+)'))[1]
  FROM pg_stats_ext WHERE statistics_name = 't_st'});
my ($dst_kg) = $node->safe_psql('dst', q{SELECT (regexp_match(n_distinct::text, '"2, 4": (\d+)'))[1]
  FROM pg_stats_ext WHERE statistics_name = 't_st'});
ok($src_kg > 0 && abs($dst_kg - $src_kg) <= 0.1 * $src_kg,
	"the restored (k, g) estimate is within 10% of the source's ($dst_kg vs $src_kg)");

# the restored indexes keep working: inserts, VACUUM, verification
$node->safe_psql('dst', q{
INSERT INTO t SELECT i, i % 997, i % 13, 'g' || (i % 50) FROM generate_series(30001, 33000) i;
DELETE FROM t WHERE id % 7 = 0;
VACUUM (INDEX_CLEANUP ON) t;
});
for my $idx (@indexes)
{
	my ($ret, $out, $err) = $node->psql('dst', "SELECT abtree_verify('$idx', true)");
	is($ret, 0, "$idx verifies after inserts, deletes and VACUUM in the restored database")
	  or diag($err);
}
is($node->safe_psql('dst', q{SELECT (SELECT total_weight FROM abtree_stats('t_kw')) = sum(w) FROM t}),
	't', 'the weighted index sums the live weights');

# a plain-text dump restores through psql as well
my $sql = $node->basedir . '/src.sql';
$node->command_ok([ 'pg_dump', '-f', $sql, '-d', $node->connstr('src') ], 'plain pg_dump');
$node->safe_psql('postgres', 'CREATE DATABASE dst2');
$node->command_ok([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f', $sql, '-d', $node->connstr('dst2') ],
	'plain dump restores with psql');
is($node->safe_psql('dst2', $answers), $src_answers, 'the plain restore answers as the source');

done_testing();
