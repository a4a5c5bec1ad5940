# Sketches of other bucket counts than 512 (reloption sketch_buckets,
# src/abtree/README "Sketches"): redo, crash recovery and a standby.
#  - 2,048 buckets on (a, b, c): three column sketches and the key sketch,
#    19 pages each, so every insert locks narrowly and VACUUM removes one
#    entry per record; the overflow array is capped at what the head page
#    holds (1,016 entries) and is full after the load, so inserts promote
#    and demote entries at the cap.
#  - 1,024 buckets on (a): wide locking, a capped array too.
#  - 16 buckets on (b): one chunk, one set page.
#  - VACUUM rebuilding a sketch that gave its set up (abtsketchrebuild.c),
#    at 512 and at 2,048 buckets: one record of page images per sketch.
# The inserts, deletes and VACUUM after the load run with
# wal_consistency_checking on; the primary then crashes (immediate stop)
# before any checkpoint and replays them.  Both nodes must verify exactly
# (the sketches counting the valid entries) and hold the same sketches.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use AbtreeCheck;

my $node = abtree_node('abt_buckets', init => { allows_streaming => 1 },
	conf => "max_wal_size = '4GB'\nwal_keep_size = '4GB'\ncheckpoint_timeout = '1h'\n");
$node->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('abt_buckets_standby');
$standby->init_from_backup($node, 'b', has_streaming => 1);
$standby->start;

$node->safe_psql('postgres', q{
CREATE TABLE sb (a int, b int, c text) WITH (autovacuum_enabled = off);
CREATE INDEX sb_2048 ON sb USING abtree (a, b, c) WITH (sketch_buckets = 2048);
CREATE INDEX sb_1024 ON sb USING abtree (a) WITH (sketch_buckets = 1024);
CREATE INDEX sb_16 ON sb USING abtree (b) WITH (sketch_buckets = 16);
INSERT INTO sb SELECT g % 1200, g % 7, (g % 1500)::text FROM generate_series(1, 162000) g;
CREATE TABLE rb (a int, b int) WITH (autovacuum_enabled = off);
CREATE INDEX rb_512 ON rb USING abtree (a);
CREATE INDEX rb_2048 ON rb USING abtree (b) WITH (sketch_buckets = 2048);
INSERT INTO rb SELECT g % 3000, g % 9000 FROM generate_series(1, 18000) g;
});
is($node->safe_psql('postgres', q{
SELECT string_agg(format('%s/%s', (x).buckets, (x).overflow_capacity), ',' ORDER BY i)
  FROM (SELECT i, chll_info(abtree_sketch('sb_2048', i)) AS x FROM generate_series(0, 3) i) s}),
	'2048/1016,2048/1016,2048/1016,2048/1016', 'four sketches of 2,048 buckets, 1,016 entries');
is($node->safe_psql('postgres', q{
SELECT (chll_info(abtree_sketch('sb_2048', 1))).overflow_used,
       (chll_info(abtree_sketch('sb_1024', 1))).overflow_capacity}),
	'1016|1016', "column a's capped array is full after the load; 1,024 buckets have 1,016 entries too");

is($node->safe_psql('postgres', q{
SELECT (chll_info(abtree_sketch('rb_512', 1))).exact_distinct,
       (chll_info(abtree_sketch('rb_2048', 1))).exact_distinct}),
	'f|f', 'the sketches of rb gave their sets up');

my $checks = q{
SELECT bool_and(abtree_verify(i, heapallindexed => true, exact => true) IS NOT NULL)
  FROM unnest('{sb_2048,sb_1024,sb_16,rb_512,rb_2048}'::regclass[]) i};
my $sketches = q{
SELECT string_agg(md5(s::bytea), ',') FROM (
  SELECT abtree_sketch('sb_2048', i) AS s FROM generate_series(0, 3) i
  UNION ALL SELECT abtree_sketch('sb_1024', 1) UNION ALL SELECT abtree_sketch('sb_16', 1)
  UNION ALL SELECT abtree_sketch('rb_512', 1) UNION ALL SELECT abtree_sketch('rb_2048', 1)) x};
my $rebuilt = q{
SELECT (chll_info(abtree_sketch('rb_512', 1))).exact_distinct
   AND chll_estimate(abtree_sketch('rb_512', 1)) = (SELECT count(DISTINCT a) FROM rb)
   AND (chll_info(abtree_sketch('rb_2048', 1))).exact_distinct
   AND chll_estimate(abtree_sketch('rb_2048', 1)) = (SELECT count(DISTINCT b) FROM rb)};

my ($ret, $out, $err) = $node->psql('postgres', q{
SET wal_consistency_checking = 'abtree';
INSERT INTO sb SELECT g % 1200, g % 11, (g % 1700)::text FROM generate_series(1, 600) g;
INSERT INTO sb SELECT 5000 + g, g % 3, 'new' FROM generate_series(1, 300) g;
DELETE FROM sb WHERE c = 'new' OR (a % 97 = 0 AND b = 1);
VACUUM (INDEX_CLEANUP ON) sb;
INSERT INTO sb SELECT g % 40, g % 13, 'after' FROM generate_series(1, 400) g;
DELETE FROM rb WHERE a >= 400;
VACUUM rb;
});
is($ret, 0, 'inserts at the cap, deletes and VACUUM under wal_consistency_checking') or diag($err);
is($node->safe_psql('postgres', $checks), 't', 'the primary verifies exactly');
is($node->safe_psql('postgres', $rebuilt), 't', 'VACUUM rebuilt both sketches of rb with exact sets');
my $before = $node->safe_psql('postgres', $sketches);
is($node->safe_psql('postgres', q{
SELECT chll_estimate(abtree_sketch('sb_2048', 1)) = (SELECT count(DISTINCT a) FROM sb)
   AND (chll_info(abtree_sketch('sb_2048', 1))).exact_distinct}),
	't', "column a's sketch still counts its distinct values exactly (the set)");

# crash before any checkpoint: redo replays every record since the backup
$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres', $checks), 't', 'after crash recovery the indexes verify exactly');
is($node->safe_psql('postgres', $sketches), $before, 'and hold the same sketches, byte for byte');
is($node->safe_psql('postgres', $rebuilt), 't', 'the rebuilt sketches survive the crash');

$node->wait_for_catchup($standby, 'replay');
($ret, $out, $err) = $standby->psql('postgres', q{
SELECT bool_and(abtree_verify(i, exact => true) IS NOT NULL)
  FROM unnest('{sb_2048,sb_1024,sb_16}'::regclass[]) i});
is($ret, 0, 'the standby verifies') or diag($err);
is($standby->safe_psql('postgres', $sketches), $before, 'the standby has the same sketches');
$standby->stop;
unlike(slurp_file($standby->logfile), qr/inconsistent page found|PANIC/,
	'wal_consistency_checking found nothing on the standby');
unlike(slurp_file($node->logfile), qr/inconsistent page found|PANIC/,
	'nor on the primary during crash recovery');
$node->stop;
done_testing();
