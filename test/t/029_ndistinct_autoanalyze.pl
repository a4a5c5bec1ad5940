# Issue 24, item 3: multi-column distinct counts that abtree_ndistinct_store
# wrote into a statistics object are kept current by autovacuum.  The store
# freezes the object (statistics target 0) so that ANALYZE does not
# overwrite it with its own estimate; then nothing refreshed it.  An
# auto-analyze (ANALYZE without VACUUM) calls each index AM's
# amvacuumcleanup with analyze_only, and there abtree refreshes the table's
# frozen ndistinct objects (src/stats/chll_refill.c).  Here the table's
# (a, b) combinations grow from 700 to about 31,000 and only autovacuum
# runs: the object must follow, and stay frozen.  Without the refresh it
# kept 700.  Then the same through autovacuum's combined VACUUM and
# ANALYZE, which makes no analyze-only call (the VACUUM notes the table,
# the ANALYZE's transaction refreshes as it commits).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use AbtreeCheck;
use AbtreeBg;

my $node = abtree_node('abt_nd_auto',
	conf => "autovacuum = on\nautovacuum_naptime = 1\nlog_autovacuum_min_duration = 0\n");

# autovacuum stays away until the table is ready; then only its ANALYZE
# fires (the VACUUM thresholds are out of reach: a combined VACUUM and
# ANALYZE makes no analyze-only call into the index AM)
$node->safe_psql('postgres', q{
CREATE TABLE nd (a int, b int) WITH (autovacuum_enabled = off);
CREATE INDEX nd_a ON nd USING abtree (a);
INSERT INTO nd SELECT g % 100, g % 7 FROM generate_series(1, 20000) g;
CREATE STATISTICS nd_s (ndistinct) ON a, b FROM nd;
SELECT abtree_ndistinct_store('nd_s', seed => 0.5);
});
my $nd = q{SELECT substring(n_distinct::text FROM ': ([0-9]+)')::int FROM pg_stats_ext WHERE statistics_name = 'nd_s'};
my $before = $node->safe_psql('postgres', $nd);
cmp_ok(abs($before - 700), '<=', 70, "stored: $before combinations of (a, b) (700)");

$node->safe_psql('postgres', q{
INSERT INTO nd SELECT 1000 + g % 3000, g % 11 FROM generate_series(1, 30000) g;
ALTER TABLE nd SET (autovacuum_enabled = on, autovacuum_analyze_threshold = 100,
  autovacuum_analyze_scale_factor = 0, autovacuum_vacuum_threshold = 2000000000,
  autovacuum_vacuum_scale_factor = 100, autovacuum_vacuum_insert_threshold = -1);
});
ok(wait_for_sql($node, q{SELECT coalesce(autoanalyze_count, 0) > 0 FROM pg_stat_user_tables WHERE relname = 'nd'}, 120),
	'autovacuum analyzed the table');
is($node->safe_psql('postgres', q{SELECT coalesce(autovacuum_count, 0) FROM pg_stat_user_tables WHERE relname = 'nd'}),
	'0', 'and did not vacuum it');
# the counter may come before the refresh's transaction commits: wait for it
wait_for_sql($node, "SELECT ($nd) >= 30700 / 1.5", 60);
my $after = $node->safe_psql('postgres', $nd);
# 30,700 combinations; the store's sample estimate, within a factor 1.5
cmp_ok($after, '>=', 30700 / 1.5, "auto-analyze refreshed the object: $after combinations (30,700)");
cmp_ok($after, '<=', 30700 * 1.5, 'not an overestimate either');
is($node->safe_psql('postgres', q{SELECT stxstattarget FROM pg_statistic_ext WHERE stxname = 'nd_s'}),
	'0', 'the object stays frozen');
like(slurp_file($node->logfile), qr/filled statistics object public\.nd_s again/,
	'the server log says so');

# A table with dead rows as well as changes gets autovacuum's combined
# VACUUM and ANALYZE, which makes no analyze-only call: the VACUUM notes
# the table and the ANALYZE's transaction refreshes the object as it
# commits.  Without that, the object kept 700.
$node->safe_psql('postgres', q{
CREATE TABLE nd2 (a int, b int) WITH (autovacuum_enabled = off);
CREATE INDEX nd2_a ON nd2 USING abtree (a);
INSERT INTO nd2 SELECT g % 100, g % 7 FROM generate_series(1, 20000) g;
CREATE STATISTICS nd2_s (ndistinct) ON a, b FROM nd2;
SELECT abtree_ndistinct_store('nd2_s', seed => 0.5);
INSERT INTO nd2 SELECT 1000 + g % 3000, g % 11 FROM generate_series(1, 30000) g;
DELETE FROM nd2 WHERE a < 100 AND a % 10 = 0;
});
# both thresholds crossed in the statistics before autovacuum may look, so
# that its first look finds both (else it could analyze, then vacuum)
ok(wait_for_sql($node, q{SELECT n_dead_tup >= 100 AND n_mod_since_analyze >= 100
  FROM pg_stat_user_tables WHERE relname = 'nd2'}, 60), 'nd2 has dead rows and changes');
$node->safe_psql('postgres', q{
ALTER TABLE nd2 SET (autovacuum_enabled = on, autovacuum_analyze_threshold = 100,
  autovacuum_analyze_scale_factor = 0, autovacuum_vacuum_threshold = 100,
  autovacuum_vacuum_scale_factor = 0);
});
my $nd2 = q{SELECT substring(n_distinct::text FROM ': ([0-9]+)')::int FROM pg_stats_ext WHERE statistics_name = 'nd2_s'};
ok(wait_for_sql($node, q{SELECT coalesce(autoanalyze_count, 0) > 0 AND coalesce(autovacuum_count, 0) > 0
  FROM pg_stat_user_tables WHERE relname = 'nd2'}, 120), 'autovacuum vacuumed and analyzed nd2');
my $log = slurp_file($node->logfile);
my ($vpid) = $log =~ /\[(\d+)\] LOG:  automatic vacuum of table "postgres\.public\.nd2"/;
my ($apid) = $log =~ /\[(\d+)\] LOG:  automatic analyze of table "postgres\.public\.nd2"/;
ok(defined $vpid && defined $apid && $vpid == $apid, 'in one run of one worker (combined)')
	or diag($log);
# 30,630 combinations remain; the store's sample estimate, within 1.5
wait_for_sql($node, "SELECT ($nd2) >= 30630 / 1.5", 60);
my $after2 = $node->safe_psql('postgres', $nd2);
cmp_ok($after2, '>=', 30630 / 1.5, "the combined run refreshed the object: $after2 combinations (30,630)");
cmp_ok($after2, '<=', 30630 * 1.5, 'not an overestimate either');
is($node->safe_psql('postgres', q{SELECT stxstattarget FROM pg_statistic_ext WHERE stxname = 'nd2_s'}),
	'0', 'the object stays frozen');
like(slurp_file($node->logfile), qr/filled statistics object public\.nd2_s again/,
	'the server log says so');

# an ANALYZE from SQL keeps a stored value (it fills only empty objects)
$node->safe_psql('postgres', q{ALTER TABLE nd SET (autovacuum_enabled = off)});
$node->safe_psql('postgres', q{SELECT abtree_ndistinct_store('nd_s', seed => 0.5)});
my $stored = $node->safe_psql('postgres', $nd);
$node->safe_psql('postgres', 'ANALYZE nd');
is($node->safe_psql('postgres', $nd), $stored, 'a manual ANALYZE keeps the stored value');

$node->stop;
done_testing();
