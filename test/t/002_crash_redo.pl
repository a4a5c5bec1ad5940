# The abtree resource manager replays its records after a crash
# (stop('immediate')): the redo routine runs, logs what it replays when
# abtree.debug_redo is on, and counts in freshly initialised shared memory.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('crash');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'abtree'
abtree.debug_redo = on
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION abtree');

sub status
{
	my ($item) = @_;
	return $node->safe_psql('postgres',
		"SELECT value FROM abtree_status() WHERE item = '$item'");
}

# Everything before the checkpoint is not replayed; the three probes are.
$node->safe_psql('postgres', "SELECT abtree_wal_probe('before checkpoint'); CHECKPOINT");
$node->safe_psql('postgres', "SELECT abtree_wal_probe('crash-$_')") for 1 .. 3;
is(status('probes_written'), '4', 'four probes written');

my $log_offset = -s $node->logfile;
$node->stop('immediate');
$node->start;

for my $i (1 .. 3)
{
	ok($node->log_contains(qr/abtree: replayed WAL probe "crash-$i"/, $log_offset),
		"probe crash-$i replayed");
}
ok(!$node->log_contains(qr/replayed WAL probe "before checkpoint"/, $log_offset),
	'probe before the checkpoint not replayed');
ok($node->log_contains(qr/abtree redo PROBE at [0-9A-F]+\/[0-9A-F]+: message "crash-1"/,
		$log_offset),
	'abtree.debug_redo logs record type, LSN and description');
is(status('probes_replayed'), '3', 'shared memory counts the three replays');
is(status('probes_written'), '0', 'shared memory was reinitialised');

# A clean restart replays nothing.
$node->restart;
is(status('probes_replayed'), '0', 'clean restart replays nothing');

$node->stop;
done_testing();
