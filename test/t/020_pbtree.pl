# pbtree under crashes and on a standby.
#
# The primary writes with wal_consistency_checking = 'abtree' (every pbtree
# record carries page images the standby compares with its replay) and a
# tiny buffer budget, so that inserting sessions seal all the time, the
# merge worker merges, a session merges and seals by hand and another
# deletes and VACUUMs (freeing partitions, whose pages are reused).  The
# primary is stopped immediately at random moments, often in the middle of
# a seal or a merge, restarted, and checked: the index verifies (directory,
# trees, filters, no entry twice, every heap tuple indexed), index scans of
# every kind answer like a sequential scan, and after a VACUUM nothing is
# left half-built.  Then the standby catches up: it verifies, answers like
# the primary and found no inconsistent page; promoted, it takes inserts.
# PBTREE_CRASH_CYCLES sets the number of cycles (default 4).
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

my $cycles = $ENV{PBTREE_CRASH_CYCLES} // 4;
srand($ENV{PBTREE_CRASH_SEED} // 2020);

my $primary = abtree_node('pbt_primary',
	init => { allows_streaming => 1, extra => ['--data-checksums'] },
	conf => q{
max_connections = 30
wal_consistency_checking = 'abtree'
abtree.pbtree_buffer_budget = 6
abtree.pbtree_merge_threshold = 4
});
$primary->safe_psql('postgres', q{
CREATE TABLE p (id bigserial, k int, s text);
INSERT INTO p (k, s) SELECT (random() * 100000)::int, md5(i::text) FROM generate_series(1, 5000) i;
CREATE INDEX p_k ON p USING pbtree (k);
CREATE INDEX p_sk ON p USING pbtree (s, k DESC) INCLUDE (id);
CREATE UNLOGGED TABLE u (k int);
CREATE INDEX u_k ON u USING pbtree (k);
INSERT INTO u SELECT generate_series(1, 2000);
});
$primary->safe_psql('postgres', "SELECT pg_create_physical_replication_slot('standby', true)");
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('pbt_standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->append_conf('postgresql.conf', "primary_slot_name = 'standby'");
$standby->start;

my %scripts = (
	'ins.sql@6' => q{
INSERT INTO p (k, s) SELECT (random() * 100000)::int, md5(random()::text) FROM generate_series(1, 20);
},
	'reorg.sql@1' => q{
SELECT pbtree_seal('p_k');
SELECT pbtree_merge('p_sk', 3);
},
	'delete.sql@1' => q{
DELETE FROM p WHERE id % 50 = (random() * 49)::int AND id < (SELECT max(id) - 500 FROM p);
VACUUM p;
},
	'read.sql@2' => q{
SET enable_seqscan = off;
SELECT count(*) FROM p WHERE k BETWEEN 1000 AND 3000;
SELECT k FROM p WHERE k < 5000 ORDER BY k DESC LIMIT 20;
},
);
my @args;
for my $name (sort keys %scripts)
{
	my ($file, $weight) = split /@/, $name;
	my $path = $primary->basedir . "/$file";
	append_to_file($path, $scripts{$name});
	push @args, '-f', "$path\@$weight";
}

my $same = q{
SELECT (SELECT count(*) || ':' || coalesce(sum(k), 0) FROM p WHERE k BETWEEN 20000 AND 60000)
};

sub check_node
{
	my ($node, $label) = @_;
	for my $idx (qw(p_k p_sk))
	{
		my ($ret, $out, $err) = $node->psql('postgres',
			"SELECT pbtree_verify('$idx', heapallindexed => true)");
		is($ret, 0, "$label: $idx verifies, every heap tuple indexed") or diag($err);
	}
	my $seq = $node->safe_psql('postgres', "SET enable_indexscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off; $same");
	for my $mode (qw(indexscan bitmapscan indexonlyscan))
	{
		is($node->safe_psql('postgres',
			"SET enable_seqscan = off; SET enable_indexscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off; SET enable_$mode = on; $same"),
		   $seq, "$label: $mode answers like a sequential scan");
	}
}

my $seals_seen = 0;
for my $cycle (1 .. $cycles)
{
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[ 'pgbench', '-n', '-c', '4', '-j', '2', '-T', '60', @args,
		  '-h', $primary->host, '-p', $primary->port, 'postgres' ],
		'>', \$out, '2>', \$err);
	usleep(int((1 + rand(3)) * 1_000_000));
	$primary->stop('immediate');
	$h->finish;
	$primary->start;
	check_node($primary, "cycle $cycle after recovery");
	$primary->safe_psql('postgres', 'VACUUM p');
	is($primary->safe_psql('postgres',
		"SELECT count(*) FROM pbtree_stats('p_sk') WHERE state IN ('building', 'closed')"),
	   '0', "cycle $cycle: VACUUM leaves no partition half-built or uncompacted");
	$seals_seen = $primary->safe_psql('postgres',
		"SELECT max(partition) FROM pbtree_stats('p_k')");
}
ok($seals_seen > 10, "partitions came and went ($seals_seen numbers given out)");
is($primary->safe_psql('postgres', 'SELECT count(*) FROM u'), '0',
	'the unlogged table is empty after the crashes');
$primary->safe_psql('postgres', 'INSERT INTO u SELECT generate_series(1, 700)');
is($primary->safe_psql('postgres', "SELECT pbtree_verify('u_k', true)"), '700',
	'the unlogged index was reset from its init fork and works');

$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
for my $idx (qw(p_k p_sk))
{
	my ($ret, $out, $err) = $standby->psql('postgres', "SELECT pbtree_verify('$idx')");
	is($ret, 0, "standby: $idx verifies") or diag($err);
}
is($standby->safe_psql('postgres', "SET enable_seqscan = off; $same"),
   $primary->safe_psql('postgres', "SET enable_seqscan = off; $same"),
   'standby answers like the primary');
my $log = slurp_file($standby->logfile);
unlike($log, qr/inconsistent page found|PANIC|TRAP/, 'standby: wal_consistency_checking found nothing');
# Freeing partitions on the primary cancels the standby queries that may
# still read them (nothing of the standby's holds back the primary, which
# may now reuse the pages), as nbtree does for deleted pages.  An
# insert-only table, so that no heap record conflicts instead.
$standby->append_conf('postgresql.conf', 'max_standby_streaming_delay = 0');
$standby->reload;
$primary->safe_psql('postgres', q{
CREATE TABLE q (k int);
INSERT INTO q SELECT generate_series(1, 3000);
CREATE INDEX q_k ON q USING pbtree (k);
INSERT INTO q SELECT generate_series(3001, 6000);
SELECT pbtree_seal('q_k');
INSERT INTO q SELECT generate_series(6001, 9000);
SELECT pbtree_seal('q_k');
});
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
my $started = $standby->basedir . '/rr_started';
my $bg = bg_psql($standby, 'rr', qq{
BEGIN ISOLATION LEVEL REPEATABLE READ;
SET enable_seqscan = off;
SELECT count(*) FROM q WHERE k < 5000;
\\! touch $started
SELECT pg_sleep(60);
SELECT 'survived';
});
ok(bg_wait_file($started), 'standby: a repeatable-read session reads q through pbtree');
$primary->safe_psql('postgres', q{SELECT pbtree_merge('q_k')});
$primary->safe_psql('postgres', q{INSERT INTO q VALUES (0)});	# an xid: the drops age
$primary->safe_psql('postgres', q{SELECT pbtree_merge('q_k')});
is($primary->safe_psql('postgres', q{SELECT count(*) FROM pbtree_stats('q_k') WHERE state = 'dropped'}),
   '0', 'primary: the merged partitions are freed');
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
bg_finish($bg, 120);
unlike($bg->{out}, qr/survived/, 'standby: the session reading freed partitions was cancelled');
ok($standby->log_contains(qr/conflict with recovery/),
   'standby: the cancel is a recovery conflict') or diag($bg->{err});
is($standby->safe_psql('postgres', 'SET enable_seqscan = off; SELECT count(*) FROM q WHERE k < 5000'),
   '5000', 'standby: a new query reads the merged partition');

$standby->promote;
$standby->safe_psql('postgres',
	"INSERT INTO p (k, s) SELECT i, 'promoted' FROM generate_series(1, 3000) i");
my ($ret, $out, $err) = $standby->psql('postgres', "SELECT pbtree_verify('p_k', true)");
is($ret, 0, 'promoted standby takes inserts and verifies') or diag($err);
$standby->stop;
$primary->stop;
done_testing();
