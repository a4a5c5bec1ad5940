# Batched validation (issue 22, src/abtree/README "Batched validation"):
# under abtree.weight_protocol = batched an insert's entry goes in not
# valid (INSERT_LEAF) and waits in its backend; a flush (a full list, a
# read of the index by that backend, the commit) makes up to a record's
# worth of waiting entries valid with one VALID_BATCH record: their leaves,
# the pages above them up to the root, the sketch pages.
#
# The primary runs with wal_consistency_checking = 'abtree' and data
# checksums, with safe_page inserts mixed in.  Checked: the records (a
# build without VALID_BATCH writes none), a streaming standby that replays
# them and has the primary's weights, entries and sketches, and three
# crashes: (a) while a transaction's entries wait (their INSERT_LEAF
# records in WAL, no VALID_BATCH): they come back not valid and weigh
# nothing; (b) after a flush but before the commit: valid entries of dead
# rows, an overcount that VACUUM removes; (c) after commits: every
# committed row valid.  Each time the indexes verify exactly and no page
# differs from the primary's images.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use AbtreeBg;
use AbtreeCheck;
use AbtreeGdb qw(index_wal_kinds);

my ($primary, $standby, $insert) = protocol_pair('batched', 'batched');
my $insert_safe = "SET abtree.weight_protocol = safe_page; $insert";
my $rows = 0;

my $start = $primary->lsn('insert');
$primary->safe_psql('postgres', $insert);
$rows += 2500;
my $end = $primary->lsn('insert');

# pg_waldump names the custom records by number: INSERT_LEAF (10),
# MARK_VALID (50), INSERT_VALID (90), VALID_BATCH (a0)
my ($n, $err) = index_wal_kinds($primary, 't_k', $start, $end, qw(10 50 90 a0));
my %n = %$n;
note("t_k: INSERT_LEAF $n{10}, VALID_BATCH $n{a0}, MARK_VALID $n{50}, INSERT_VALID $n{90}");
is($n{10}, 2500, 'one INSERT_LEAF per row') or diag($err);
is($n{50} + $n{90}, 0, 'no MARK_VALID or INSERT_VALID');
cmp_ok($n{a0}, '>', 0, 'VALID_BATCH records');
cmp_ok($n{a0}, '<=', 2500 / 5, 'at least five entries per VALID_BATCH on average');
cmp_ok($primary->safe_psql('postgres',
		"SELECT value::bigint FROM abtree_status() WHERE item = 'batch_entries'"),
	'>=', 3 * 2500 * 0.9, 'abtree_status counts the entries made valid in batches');

# both protocols, then a standby that replayed them all
$primary->safe_psql('postgres', "$insert; $insert_safe; $insert");
$rows += 7500;
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
verify_standby_like_primary($primary, $standby, 200000, 300000, qw(t_k t_kw t_pad));
same_sketches($primary, $standby, 'standby', qw(t_k t_pad));

# A sketch at its overflow array's cap: a promotion demotes an entry of
# another bucket.  A flush's record carries each changed bucket's bytes
# against that bucket as the view kept it before its first change
# (chll's touch_bucket), the demoted buckets too: a bucket changed before
# it was kept would replay wrong, and wal_consistency_checking stops the
# standby.  1,000 values, 150 rows each: every value's slot counts past
# 128 and wants an entry, and 512 buckets hold 512.
$primary->safe_psql('postgres', q{
CREATE TABLE lc (a int) WITH (autovacuum_enabled = off);
CREATE INDEX lc_a ON lc USING abtree (a);
INSERT INTO lc SELECT g % 1000 FROM generate_series(1, 150000) g;
INSERT INTO lc SELECT g % 1100 FROM generate_series(1, 20000) g;});
is($primary->safe_psql('postgres', q{
SELECT (x).overflow_used = (x).overflow_capacity
  FROM (SELECT chll_info(abtree_sketch('lc_a', 1)) AS x) s}), 't',
	'the overflow array is full');
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
same_sketches($primary, $standby, 'standby at the cap', qw(lc_a));

# A session inserts 30 rows (fewer than a flush) in a transaction it keeps
# open, after $then; a committed insert after it puts its INSERT_LEAF
# records on disk; then the primary crashes.
sub crash_with_open_insert
{
	my ($tag, $then) = @_;
	my $flag = $primary->basedir . "/$tag.ready";
	my $bg = bg_psql($primary, $tag, qq{
BEGIN;
INSERT INTO t (k, w, pad) SELECT 7000000 + g, 1, '$tag' FROM generate_series(1, 30) g;
$then
\\! touch $flag
SELECT pg_sleep(600);
});
	ok(bg_wait_file($flag), "$tag: the open transaction has inserted");
	$primary->safe_psql('postgres', "INSERT INTO t (k, w, pad) VALUES (1, 1, 'flush')");
	$rows += 1;
	$primary->stop('immediate');
	bg_finish($bg, 10);
	$primary->start;
	is($primary->safe_psql('postgres', 'SELECT count(*) FROM t'), $rows,
		"$tag: after the crash, the committed rows and none of the open transaction's");
	for my $idx (qw(t_k t_kw t_pad))
	{
		my ($ret, $out, $e) = $primary->psql('postgres',
			"SELECT abtree_verify('$idx', exact => true)");
		is($ret, 0, "$tag: $idx exact before any VACUUM") or diag($e);
	}
	return;
}

# (a) the entries were still waiting: in the tree, not valid, weighing nothing
crash_with_open_insert('waiting', '');
is($primary->safe_psql('postgres',
		"SELECT entries - $rows || ' ' || (total_weight - $rows) FROM abtree_stats('t_k')"),
	'30 0', 'waiting: the entries are in the tree and weigh nothing');

# (b) the backend read the index, which made them valid before the crash
crash_with_open_insert('flushed', "SELECT total_weight FROM abtree_stats('t_k');");
is($primary->safe_psql('postgres',
		"SELECT total_weight - $rows FROM abtree_stats('t_k')"),
	'30', 'flushed: the dead rows\' valid entries overcount until VACUUM');
$primary->safe_psql('postgres', 'VACUUM (INDEX_CLEANUP ON) t');
is($primary->safe_psql('postgres', "SELECT total_weight FROM abtree_stats('t_k')"),
	$rows, 'flushed: VACUUM takes them out');

# (c) a crash after more commits, both protocols: recovery replays them
$primary->safe_psql('postgres', "CHECKPOINT; $insert; $insert_safe; $insert");
$rows += 7500;
$primary->stop('immediate');
$primary->start;
is($primary->safe_psql('postgres', 'SELECT count(*) FROM t'), $rows,
	'after the crash: every committed row is there');
is($primary->safe_psql('postgres', "SELECT total_weight FROM abtree_stats('t_k')"),
	$rows, 'and every committed entry is valid');
verify_exact_on_both($primary, $standby, 't', $_) for qw(t_k t_kw t_pad);
same_sketches($primary, $standby, 'standby after the crashes', qw(t_k t_pad));

no_inconsistent_pages($primary, $standby);
done_testing();
