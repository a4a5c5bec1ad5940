# A streaming standby replays abtree records, refuses to write them, and
# takes over after promotion.  The primary runs with
# wal_consistency_checking = 'abtree', which must accept our resource manager.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'abtree'
wal_consistency_checking = 'abtree'
});
$primary->start;
$primary->backup('backup');

my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'backup', has_streaming => 1);
$standby->start;

$primary->safe_psql('postgres', 'CREATE EXTENSION abtree');
$primary->safe_psql('postgres', "SELECT abtree_wal_probe('to the standby 1')");
my $lsn = $primary->safe_psql('postgres', "SELECT abtree_wal_probe('to the standby 2')");
$primary->wait_for_catchup($standby, 'replay', $lsn);

is($standby->safe_psql('postgres',
		"SELECT value FROM abtree_status() WHERE item = 'probes_replayed'"),
	'2', 'standby replayed both probes');
ok($standby->log_contains(qr/abtree: replayed WAL probe "to the standby 2"/),
	'standby log shows the replayed probe');

my ($ret, $stdout, $stderr) =
  $standby->psql('postgres', "SELECT abtree_wal_probe('from the standby')");
isnt($ret, 0, 'standby cannot write a probe');
like($stderr, qr/ERROR:  cannot write an abtree WAL probe during recovery/,
	'standby says why');
like($stderr, qr/HINT:  Call abtree_wal_probe\(\) on the primary/, 'and what to do');

$standby->promote;
like($standby->safe_psql('postgres', "SELECT abtree_wal_probe('promoted')"),
	qr/^[0-9A-F]+\/[0-9A-F]+$/, 'promoted standby writes probes');

$standby->stop;
$primary->stop;
done_testing();
