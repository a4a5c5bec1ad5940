# Posting tuples and VACUUM (issue 22, src/abtree/README "Posting tuples"):
# a VACUUM record that replaces posting tuples by what is left of them
# carries an image of the leaf, which redo restores; the record's other
# parts (the path above, the sketch pages) are as for removed entries.
#
# The primary runs with wal_consistency_checking = 'abtree' and data
# checksums, a standby streams from it.  After a checkpoint VACUUM runs
# twice, so that the second touches leaves that already have an image in
# this checkpoint's WAL: only the forced image carries the shrunk tuples
# then (a build without it replays a leaf whose tuples keep their dead
# TIDs: the standby's check of the page fails, and so do the counts after
# the crash).  The primary then crashes in the middle of a slow VACUUM of
# many posting leaves, and once more right after one.  Each time every
# committed row is found through the index once, the index counts the live
# rows and no more, and the weights are exact after VACUUM.
#
# The VACUUMs whose result is counted are FREEZE: a plain VACUUM that
# cannot get a heap page's cleanup lock (another process holds a pin: the
# background writer writing it, say) leaves that page's dead rows, and
# their entries, for the next one ("tuples missed ... due to cleanup lock
# contention"), which failed this test once in CI on 18 (8 entries more
# than rows, one page's worth); an aggressive VACUUM waits for the lock.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use AbtreeCheck;
use AbtreeBg;
use AbtreeGdb qw(index_wal);

my $timeout = 120;

# 300 days, a second column of 3 values, 60,000 rows: posting tuples of up
# to about 220 TIDs, several per key; an INCLUDE index folds too
my ($primary, $standby) = abtree_checked_pair('posting_vacuum',
	"full_page_writes = on\ncheckpoint_timeout = '1h'\n", q{
CREATE TABLE p (id int, day date, g int, pad text) WITH (autovacuum_enabled = off);
INSERT INTO p SELECT i, date '2024-01-01' + i % 300, i % 3, repeat('p', 40)
  FROM generate_series(1, 60000) i;
CREATE INDEX p_day ON p USING abtree (day);
CREATE INDEX p_day_g ON p USING abtree (day, g) INCLUDE (id);
});
my $dir = $primary->basedir;
my @indexes = qw(p_day p_day_g);

cmp_ok($primary->safe_psql('postgres', q{SELECT leaf_pages FROM abtree_stats('p_day')}),
	'<', 100, 'p_day is built of posting tuples (under 100 leaves for 60,000 rows)');

# What the index has must be what the table has: every row found once
# through it, its entries and weight the row count, verified.
sub check_counts
{
	my ($node, $label, $exact) = @_;
	my $rows = $node->safe_psql('postgres', 'SELECT count(*) FROM p');
	for my $idx (@indexes)
	{
		is($node->safe_psql('postgres', "SELECT entries || ' ' || total_weight FROM abtree_stats('$idx')"),
			"$rows $rows", "$label: $idx counts the $rows live rows");
		my ($ret, $out, $err) = $node->psql('postgres',
			"SELECT abtree_verify('$idx', heapallindexed => $exact, exact => $exact)");
		is($ret, 0, "$label: $idx verifies") or diag($err);
	}
	check_scan($node, $label);
	return;
}

# Every row found once through each index (at-least verification: dead
# TIDs may still be there), by index scans and by index-only scans.
sub check_scan
{
	my ($node, $label) = @_;
	for my $idx (@indexes)
	{
		my ($ret, $out, $err) = $node->psql('postgres',
			"SELECT abtree_verify('$idx', exact => false)");
		is($ret, 0, "$label: $idx verifies in at-least mode") or diag($err);
	}
	my $all = $node->safe_psql('postgres', q{SELECT count(*) || ' ' || sum(id) FROM p});
	is($node->safe_psql('postgres', q{SET enable_seqscan = off; SET enable_bitmapscan = off;
		SELECT count(*) || ' ' || sum(id) FROM p WHERE day >= '2024-01-01'}),
	   $all, "$label: an index scan finds every row once");
	is($node->safe_psql('postgres', q{SET enable_seqscan = off; SET enable_bitmapscan = off;
		SELECT count(*) || ' ' || sum(id) FROM p WHERE day >= '2024-01-01' AND g >= 0}),
	   $all, "$label: so does a scan of the INCLUDE index");
	return;
}

# two VACUUMs after a checkpoint, the second on leaves already imaged
$primary->safe_psql('postgres', 'CHECKPOINT');
my $start = $primary->lsn('insert');
$primary->safe_psql('postgres', q{DELETE FROM p WHERE id % 7 = 0; VACUUM (FREEZE) p});
$primary->safe_psql('postgres', q{DELETE FROM p WHERE id % 11 = 0 OR id % 300 = 1; VACUUM (FREEZE) p});
my $end = $primary->lsn('insert');
my ($wal, $err) = index_wal($primary, 'p_day', $start, $end);
my $vacuums = () = $wal =~ /UNKNOWN \(40\).*FPW/g;
cmp_ok($vacuums, '>', 0, "VACUUM records carry leaf images ($vacuums)") or diag($err);
check_counts($primary, 'primary after two VACUUMs', 'true');
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
check_counts($standby, 'standby after two VACUUMs', 'false');

# a crash in the middle of a slow VACUUM of many posting leaves
$primary->safe_psql('postgres', q{DELETE FROM p WHERE id % 5 = 0 OR id % 300 = 2});
my $vac = bg_psql($primary, 'vac', q{
SET application_name = 'slow_vac';
SET vacuum_cost_delay = '20ms';
SET vacuum_cost_limit = 1;
VACUUM (INDEX_CLEANUP ON) p;
});
ok(wait_for_sql($primary, q{SELECT count(*) = 1 FROM pg_stat_progress_vacuum v
	JOIN pg_stat_activity a USING (pid)
	WHERE a.application_name = 'slow_vac' AND v.phase = 'vacuuming indexes'}, $timeout),
	'VACUUM is vacuuming the indexes');
sleep(1);
$primary->stop('immediate');
bg_finish($vac, $timeout);
$primary->start;
# the leaves VACUUM did not reach keep their dead TIDs until the next one
check_scan($primary, 'after a crash in VACUUM');
$primary->safe_psql('postgres', 'VACUUM (FREEZE, INDEX_CLEANUP ON) p');
check_counts($primary, 'after a crash in VACUUM and one more', 'true');

# a crash right after a VACUUM: recovery replays its records
$primary->safe_psql('postgres', q{CHECKPOINT; DELETE FROM p WHERE id % 13 = 0; VACUUM (FREEZE) p});
$primary->safe_psql('postgres', q{DELETE FROM p WHERE id % 17 = 0; VACUUM (FREEZE) p});
$primary->stop('immediate');
$primary->start;
check_counts($primary, 'after a crash after VACUUM', 'false');
$primary->safe_psql('postgres', 'VACUUM (FREEZE, INDEX_CLEANUP ON) p');
check_counts($primary, 'and after one more VACUUM', 'true');
is($primary->safe_psql('postgres', q{
SELECT count(*) FROM abtree_sample_tids('p_day', 20000, 0.5) t
 WHERE NOT EXISTS (SELECT FROM p WHERE ctid = t)}), '0', 'every draw is a live row');

# Inserts fold full leaves (src/abtree/README, "Posting tuples"): each
# fold is a full-page image of the leaf (an XLOG FPI record).  Many
# committed statements of rows of few keys fill the leaves with entries
# that every snapshot sees; the standby replays the images and the records
# after them under wal_consistency_checking.  Then the primary crashes in
# the middle of such inserts, and once right after them.
my $fold_sql = q{
DO $$ BEGIN
  FOR i IN 1..60 LOOP
    INSERT INTO p SELECT 100000 + i * 1000 + g, date '2024-01-01' + g % 7, g % 3, 'f'
      FROM generate_series(1, 500) g;
    COMMIT;
  END LOOP;
END $$;
};
# the load's rows of each key come in heap order: leaves split where a
# key ends and 96% left where one key grows (src/abtree/README, "Where to
# split"), so the standby replays those splits' high keys too
my $split_sql = q{SELECT string_agg(value, ',' ORDER BY item DESC) FROM abtree_status()
 WHERE item IN ('split_value_end', 'split_single_value')};
my ($end0, $single0) = split /,/, $primary->safe_psql('postgres', $split_sql);
$primary->safe_psql('postgres', 'CHECKPOINT');
$start = $primary->lsn('insert');
$primary->safe_psql('postgres', $fold_sql);
$end = $primary->lsn('insert');
my ($end1, $single1) = split /,/, $primary->safe_psql('postgres', $split_sql);
cmp_ok($end1, '>', $end0, 'leaves split where a key ends (' . ($end1 - $end0) . ')');
cmp_ok($single1, '>', $single0, 'leaves of one key split 96% left (' . ($single1 - $single0) . ')');
($wal, $err) = index_wal($primary, 'p_day', $start, $end);
my $folds = () = $wal =~ /desc: FPI /g;
cmp_ok($folds, '>', 0, "inserts fold leaves, each logged as an image ($folds)") or diag($err);
cmp_ok($primary->safe_psql('postgres', q{SELECT leaf_pages FROM abtree_stats('p_day')}),
	'<', 150, 'p_day stays small (30,000 rows of 7 days folded as they came)');
check_counts($primary, 'primary after folding inserts', 'true');
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
check_counts($standby, 'standby after folding inserts', 'false');

my $before = $primary->safe_psql('postgres', 'SELECT count(*) FROM p');
my $ins = bg_psql($primary, 'ins', $fold_sql);
ok(wait_for_sql($primary, "SELECT count(*) > $before + 10000 FROM p", $timeout),
	'folding inserts are under way');
$primary->stop('immediate');
bg_finish($ins, $timeout);
$primary->start;
# the crashed statement's entries made valid by a flush stay until VACUUM
check_scan($primary, 'after a crash in folding inserts');
$primary->safe_psql('postgres', $fold_sql);
$primary->stop('immediate');
$primary->start;
check_scan($primary, 'after a crash after folding inserts');
$primary->safe_psql('postgres', 'VACUUM (FREEZE, INDEX_CLEANUP ON) p');
check_counts($primary, 'and after VACUUM', 'true');

$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
check_counts($standby, 'standby at the end', 'false');
for my $node ($primary, $standby)
{
	ok(!$node->log_contains(qr/inconsistent page found/),
		$node->name . ': wal_consistency_checking found no inconsistent page');
}
done_testing();
