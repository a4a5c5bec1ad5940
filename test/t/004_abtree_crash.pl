# abtree survives crashes in the middle of inserts, splits, deletes and
# VACUUM: after each stop('immediate') and restart, the index verifies in
# at-least mode at once (W1), every committed row is found through it, and
# after one VACUUM the weights verify exactly (W2).  With data checksums
# and full_page_writes, so torn-page protection is exercised too.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use AbtreeCheck;

my $cycles = $ENV{ABTREE_CRASH_CYCLES} // 4;

my $node = abtree_node('abt_crash', init => { extra => ['--data-checksums'] },
	conf => "full_page_writes = on\ncheckpoint_timeout = 30s\n");
$node->safe_psql('postgres', q{
CREATE TABLE t (id bigserial, k int, w int NOT NULL, pad text);
CREATE INDEX t_k ON t USING abtree (k);
CREATE INDEX t_pad ON t USING abtree (pad, id) WITH (fillfactor = 30);
CREATE INDEX t_kw ON t USING abtree (k) INCLUDE (w) WITH (weight_column = 'w');
INSERT INTO t (k, w, pad) SELECT (random() * 100000)::int, 1 + i % 5, md5(i::text)
  FROM generate_series(1, 20000) i;
});

my $ins = $node->basedir . '/insert.sql';
PostgreSQL::Test::Utils::append_to_file($ins, q{
INSERT INTO t (k, w, pad) SELECT (random() * 100000)::int, 1 + (random() * 4)::int, repeat(md5(random()::text), 4)
  FROM generate_series(1, 50);
});
my $del = $node->basedir . '/delete.sql';
PostgreSQL::Test::Utils::append_to_file($del, q{
DELETE FROM t WHERE k < (random() * 5000)::int;
VACUUM (INDEX_CLEANUP ON) t;
});

my @indexes = qw(t_k t_pad t_kw);
for my $cycle (1 .. $cycles)
{
	# two inserting clients and one deleting/vacuuming client, then a crash
	my @load;
	for my $script ($ins, $ins, $del)
	{
		my ($out, $err) = ('', '');
		push @load, IPC::Run::start(
			[ 'pgbench', '-n', '-T', '20', '-f', $script,
			  '-h', $node->host, '-p', $node->port, 'postgres' ],
			'>', \$out, '2>', \$err);
	}
	sleep(1 + $cycle % 3);
	$node->stop('immediate');
	$_->finish for @load;
	$node->start;

	for my $idx (@indexes)
	{
		my ($ret, $stdout, $stderr) = $node->psql('postgres',
			"SELECT abtree_verify('$idx', exact => false)");
		is($ret, 0, "cycle $cycle: $idx verifies (at least) right after recovery")
		  or diag($stderr);
	}
	is($node->safe_psql('postgres', q{
		SET enable_seqscan = off; SET enable_bitmapscan = off;
		SELECT count(*) FROM t WHERE k >= 0}),
	   $node->safe_psql('postgres', 'SELECT count(*) FROM t WHERE k >= 0'),
	   "cycle $cycle: every committed row is found through the index");

	$node->safe_psql('postgres', 'VACUUM (INDEX_CLEANUP ON) t');
	for my $idx (@indexes)
	{
		my ($ret, $stdout, $stderr) = $node->psql('postgres',
			"SELECT abtree_verify('$idx', heapallindexed => true)");
		is($ret, 0, "cycle $cycle: $idx verifies exactly after VACUUM") or diag($stderr);
	}
	is($node->safe_psql('postgres',
			"SELECT total_weight FROM abtree_stats('t_kw')"),
	   $node->safe_psql('postgres', 'SELECT sum(w) FROM t'),
	   "cycle $cycle: the weighted index sums the weights of the live rows");
}

$node->stop;
done_testing();
