# Out of memory in the multi-version weight store: a tiny
# abtree.mvstore_size and many concurrent open transactions inserting.  As
# src/mvstore/README says ("Memory full"), inserts do not fail: passes that
# cannot record fall back (rule 2), the view and the log say the store is
# full, and sampling stays exact: draws from the main session return only
# committed rows, and every downlink stays above its child for its
# snapshot.  After the transactions end (some commit, some roll back), the
# indexes verify exact and complete and the store has room again.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use AbtreeCheck;
use AbtreeBg;
use Time::HiRes qw(usleep);

my $node = abtree_node('abt_mvsfull',
	conf => "abtree.mvstore_size = 64\nabtree.mvstore_gc_interval = 100\nmax_connections = 40\n");
my $dir = $node->basedir;
$node->safe_psql('postgres', q{
CREATE TABLE t (k int, w int NOT NULL, tag text);
CREATE INDEX t_k ON t USING abtree (k);
CREATE INDEX t_kw ON t USING abtree (k) INCLUDE (w) WITH (weight_column = 'w');
INSERT INTO t SELECT i, 1 + i % 4, 'old' FROM generate_series(1, 20000) i;
});
# the load itself may fill the store; it has room again once it is collected
ok($node->poll_query_until('postgres', 'SELECT NOT is_full FROM abtree_mvstore'),
	'the store has room before the test');
my $logstart = -s $node->logfile;

my $nsessions = 12;
my $rows_each = 3000;
my @s;
for my $i (1 .. $nsessions)
{
	my $end = $i % 4 == 0 ? 'ROLLBACK' : 'COMMIT';
	push @s, bg_psql($node, "w$i", qq{
BEGIN;
INSERT INTO t SELECT (random() * 40000)::int, 1 + g % 4, 'new$i' FROM generate_series(1, @{[$rows_each / 3]}) g;
INSERT INTO t SELECT (random() * 40000)::int, 1 + g % 4, 'new$i' FROM generate_series(1, @{[$rows_each / 3]}) g;
SAVEPOINT a;
INSERT INTO t SELECT (random() * 40000)::int, 1 + g % 4, 'new$i' FROM generate_series(1, @{[$rows_each / 3]}) g;
\\! touch $dir/open$i
DO \$\$ BEGIN
  WHILE pg_stat_file('$dir/go', true) IS NULL LOOP PERFORM pg_sleep(0.05); END LOOP;
END \$\$;
$end;
SELECT 'done';
});
}
my $open = 0;
for my $i (1 .. $nsessions) { $open++ if bg_wait_file("$dir/open$i", 120); }
is($open, $nsessions, "$nsessions transactions are open with their inserts");

my ($full, $fallbacks) = split /\|/,
  $node->safe_psql('postgres', 'SELECT is_full, fallbacks FROM abtree_mvstore');
is($full, 't', 'the store is full');
cmp_ok($fallbacks, '>', 0, "passes fell back to not recording ($fallbacks)");

# sampling from outside the open transactions: only committed rows, exactly n
for my $idx (qw(t_k t_kw))
{
	is($node->safe_psql('postgres', qq{SET abtree.swr_index = '$idx';
SELECT count(*) || '|' || count(*) FILTER (WHERE tag <> 'old') FROM t TABLESAMPLE swr(3000) REPEATABLE (7)}),
		'3000|0', "$idx: a full store still draws exactly n committed rows");
	is($node->safe_psql('postgres', "SELECT violations FROM abtree_mvstore_check('$idx')"), '0',
		"$idx: no downlink below its child for this snapshot");
	my ($ret, $out, $err) = $node->psql('postgres', "SELECT abtree_verify('$idx', exact => false)");
	is($ret, 0, "$idx: weights cover the entries while the transactions are open") or diag($err);
}
# a sample through the weighted index is proportional to w among old rows:
# w = 4 rows carry 4/10 of the weight (chi-square not needed: 3000 draws,
# 5 standard deviations of slack)
my $w4 = $node->safe_psql('postgres', q{SET abtree.swr_index = 't_kw';
SELECT count(*) FILTER (WHERE w = 4) FROM t TABLESAMPLE swr(3000) REPEATABLE (8)});
ok(abs($w4 - 1200) < 5 * sqrt(3000 * 0.4 * 0.6), "weighted draws stay proportional ($w4 of 3000, expected 1200)");

PostgreSQL::Test::Utils::append_to_file("$dir/go", '');
my $ok = 0;
for my $s (@s)
{
	bg_finish($s, 300);
	$ok++ if $s->{out} =~ /done/ && $s->{err} eq '';
	diag("$s->{tag}: $s->{err}") if $s->{err} ne '';
}
is($ok, $nsessions, 'every insert succeeded (none failed for the full store)');

my $expected_new = ($nsessions - int($nsessions / 4)) * $rows_each;
is($node->safe_psql('postgres', q{SELECT count(*) FROM t WHERE tag <> 'old'}), $expected_new,
	"the committed transactions' rows are there ($expected_new)");
for my $idx (qw(t_k t_kw))
{
	my ($ret, $out, $err) = $node->psql('postgres', "SELECT abtree_verify('$idx', exact => true)");
	is($ret, 0, "$idx exact once the transactions ended") or diag($err);
	is($node->safe_psql('postgres', "SELECT violations FROM abtree_mvstore_check('$idx')"), '0',
		"$idx: no violations afterwards");
}
$node->safe_psql('postgres', 'VACUUM (INDEX_CLEANUP ON) t');
for my $idx (qw(t_k t_kw))
{
	my ($ret, $out, $err) = $node->psql('postgres', "SELECT abtree_verify('$idx', true)");
	is($ret, 0, "$idx exact and complete after VACUUM") or diag($err);
}
is($node->safe_psql('postgres', q{SELECT (SELECT total_weight FROM abtree_stats('t_kw')) = sum(w) FROM t}),
	't', 'the weighted index sums the live weights');
ok($node->poll_query_until('postgres', 'SELECT NOT is_full FROM abtree_mvstore'),
	'the store has room again');
# Once per time the store filled, not once per pass that fell back: the
# collector can make room between the first session's inserts, before the
# others open, and the store fills again (CI, 2026-12-03: full, room, full,
# room), so each "full" must be followed by one "room again".  The
# collector logs that just after is_full turns false: read the log until
# it is there.
my (@said, @room);
for (my $try = 0; $try < 100; $try++)
{
	my $log = substr(slurp_file($node->logfile), $logstart);
	@said = ($log =~ /abtree weight store is full/g);
	@room = ($log =~ /abtree weight store has room again/g);
	last if @room >= @said;
	usleep(100_000);
}
cmp_ok(scalar(@said), '>=', 1, 'the log says the store is full');
is(scalar(@room), scalar(@said), 'and that it has room again, once per time it was full');
cmp_ok(scalar(@said), '<', $fallbacks, 'not once per pass that fell back (' . scalar(@said) . " times, $fallbacks fallbacks)");
ok(!$node->log_contains('TRAP|PANIC|terminated by signal'), 'no crash');
my $rows = $node->safe_psql('postgres', 'SELECT count(*) FROM t');
note("$nsessions open transactions, $fallbacks fallbacks, rows checked: $rows");

done_testing();
