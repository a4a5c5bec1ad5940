# Hot standby readers against split replay (lock order).  abtree_verify's
# at-least mode, and a draw that finds a child heavier than its downlink
# (abt_downlink_caught_up), lock a child and then its parent, as the
# primary's writers do.  The redo of a SPLIT record used to lock the parent
# first and then the halves: a standby reader holding a half and waiting
# for the parent, and the startup process holding the parent and waiting
# for that half, waited for each other for ever (buffer locks have no
# deadlock detection), and replay stopped.  Here the primary splits leaves
# all the time while standby sessions verify in a loop; replay must keep
# up and every verify must end.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $primary = PostgreSQL::Test::Cluster->new('abt_slo_primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', "shared_preload_libraries = 'abtree'");
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION abtree');
# The rounds write more WAL than the test cluster's max_wal_size (128MB):
# without a slot, a standby that lagged behind on a busy machine found its
# next segment removed and never caught up, which looked like stuck replay.
$primary->safe_psql('postgres', "SELECT pg_create_physical_replication_slot('abt_slo')");
$primary->backup('bkp');
my $standby = PostgreSQL::Test::Cluster->new('abt_slo_standby');
$standby->init_from_backup($primary, 'bkp', has_streaming => 1);
$standby->append_conf('postgresql.conf', "primary_slot_name = 'abt_slo'");
$standby->start;

sub pgbench
{
	my ($node, $clients, $seconds, $sql) = @_;
	my $file = $node->basedir . "/bench_$clients.sql";
	PostgreSQL::Test::Utils::append_to_file($file, $sql);
	my %run = (out => '', err => '');
	$run{h} = IPC::Run::start(
		[ 'pgbench', '-n', '-c', $clients, '-j', $clients, '-T', $seconds,
		  '-f', $file, '-h', $node->host, '-p', $node->port, 'postgres' ],
		'>', \$run{out}, '2>', \$run{err});
	return \%run;
}

# 450-byte keys (below the index's compression threshold): 16 to a leaf,
# so nearly every insert statement splits a leaf.  A reader meets the
# split of the leaf it holds about as often as splits happen over the
# leaves it walks, so each round starts a new, empty index; the verifiers
# always take the newest one.
my $ver = pgbench($standby, 2, 1000, q{
SELECT abtree_verify(c.oid, exact => false) FROM pg_class c
 WHERE relname LIKE 'r%\_k' ORDER BY oid DESC LIMIT 1;
});
my $rounds_ok = 0;
for my $round (1 .. 8)
{
	$primary->safe_psql('postgres', qq{
CREATE TABLE r$round (k text);
CREATE INDEX r${round}_k ON r$round USING abtree (k);
});
	my $ins = pgbench($primary, 2, 4,
		"INSERT INTO r$round SELECT repeat(md5(random()::text), 14) FROM generate_series(1, 20);\n");
	$ins->{h}->finish;
	$rounds_ok++ if $ins->{h}->result(0) == 0;
}
is($rounds_ok, 8, 'the inserts ran');

# replay stuck on a buffer lock never catches up: give it a minute
my $lsn = $primary->lsn('insert');
my $caught_up = 0;
for (my $i = 0; $i < 60 && !$caught_up; $i++)
{
	$caught_up = $primary->safe_psql('postgres',
		"SELECT coalesce(replay_lsn >= '$lsn', false) FROM pg_stat_replication") eq 't';
	sleep 1 unless $caught_up;
}
ok($caught_up, 'replay kept up with the splits')
  or diag($standby->safe_psql('postgres', q{
SELECT string_agg(backend_type || ': ' || coalesce(wait_event_type || '/' || wait_event, 'running'), ', ')
  FROM pg_stat_activity WHERE backend_type IN ('startup', 'client backend') AND pid <> pg_backend_pid()}));

# every verify ends: end the sessions between or inside statements
my $deadline = time + 30;
while ($ver->{h}->pumpable && time < $deadline)
{
	$standby->safe_psql('postgres', q{
SELECT pg_terminate_backend(pid) FROM pg_stat_activity
 WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()}) if $caught_up;
	$ver->{h}->pump_nb;
	sleep 1;
}
my $ended = !$ver->{h}->pumpable;
$ended ? $ver->{h}->finish : $ver->{h}->kill_kill;
ok($ended, 'every standby verify ended');
unlike($ver->{err}, qr/ERROR:/, 'and none failed') or diag($ver->{err});
like($ver->{out}, qr/number of transactions actually processed: [1-9]/,
	'the standby verified while the primary split') or diag($ver->{out});
note($ver->{out});

# leave no stuck startup process behind
$standby->stop('immediate') unless $caught_up;
done_testing();
