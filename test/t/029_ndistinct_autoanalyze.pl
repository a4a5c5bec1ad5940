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
# table t (a, b) with 700 combinations, autovacuum off, an abtree on a, and
# their count stored into the frozen statistics object t_s
sub stored_table
{
	my ($t) = @_;
	$node->safe_psql('postgres', qq{
CREATE TABLE $t (a int, b int) WITH (autovacuum_enabled = off);
CREATE INDEX ${t}_a ON $t USING abtree (a);
INSERT INTO $t SELECT g % 100, g % 7 FROM generate_series(1, 20000) g;
CREATE STATISTICS ${t}_s (ndistinct) ON a, b FROM $t;
SELECT abtree_ndistinct_store('${t}_s', seed => 0.5);
});
	return qq{SELECT substring(n_distinct::text FROM ': ([0-9]+)')::int FROM pg_stats_ext WHERE statistics_name = '${t}_s'};
}

# autovacuum refreshed t_s to about $truth combinations (the store's sample
# estimate, within a factor 1.5), and it stays frozen
sub refreshed
{
	my ($t, $nd, $truth, $label) = @_;
	# the counters may come before the refresh's transaction commits
	wait_for_sql($node, "SELECT ($nd) >= $truth / 1.5", 60);
	my $after = $node->safe_psql('postgres', $nd);
	cmp_ok($after, '>=', $truth / 1.5, "$label refreshed the object: $after combinations ($truth)");
	cmp_ok($after, '<=', $truth * 1.5, 'not an overestimate either');
	is($node->safe_psql('postgres', "SELECT stxstattarget FROM pg_statistic_ext WHERE stxname = '${t}_s'"),
		'0', 'the object stays frozen');
	like(slurp_file($node->logfile), qr/filled statistics object public\.${t}_s again/,
		'the server log says so');
	return;
}

my $nd = stored_table('nd');
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
refreshed('nd', $nd, 30700, 'auto-analyze');

# A table with dead rows as well as changes gets autovacuum's combined
# VACUUM and ANALYZE, which makes no analyze-only call: the VACUUM notes
# the table and the ANALYZE's transaction refreshes the object as it
# commits.  Without that, the object kept 700.
my $nd2 = stored_table('nd2');
$node->safe_psql('postgres', q{
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
ok(wait_for_sql($node, q{SELECT coalesce(autoanalyze_count, 0) > 0 AND coalesce(autovacuum_count, 0) > 0
  FROM pg_stat_user_tables WHERE relname = 'nd2'}, 120), 'autovacuum vacuumed and analyzed nd2');
my $log = slurp_file($node->logfile);
my ($vpid) = $log =~ /\[(\d+)\] LOG:  automatic vacuum of table "postgres\.public\.nd2"/;
my ($apid) = $log =~ /\[(\d+)\] LOG:  automatic analyze of table "postgres\.public\.nd2"/;
ok(defined $vpid && defined $apid && $vpid == $apid, 'in one run of one worker (combined)')
	or diag($log);
# 30,630 combinations remain
refreshed('nd2', $nd2, 30630, 'the combined run');

# an ANALYZE from SQL keeps a stored value (it fills only empty objects)
$node->safe_psql('postgres', q{ALTER TABLE nd SET (autovacuum_enabled = off)});
$node->safe_psql('postgres', q{SELECT abtree_ndistinct_store('nd_s', seed => 0.5)});
my $stored = $node->safe_psql('postgres', $nd);
$node->safe_psql('postgres', 'ANALYZE nd');
is($node->safe_psql('postgres', $nd), $stored, 'a manual ANALYZE keeps the stored value');

$node->stop;
done_testing();
