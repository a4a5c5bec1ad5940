# A streaming standby replays abtree's WAL: inserts with leaf, internal and
# root splits, deletes and VACUUM.  The primary runs with
# wal_consistency_checking = 'abtree' (so replay is compared with the
# primary's page images, record by record) and data checksums.  After
# catch-up the standby's index verifies (in at-least mode: a standby cannot
# take the ShareLock of exact mode), answers like the primary, and has the
# primary's exact weights; a promoted standby takes new inserts.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use AbtreeCheck;

my $primary = PostgreSQL::Test::Cluster->new('abt_primary');
$primary->init(allows_streaming => 1, extra => ['--data-checksums']);
$primary->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'abtree'
wal_consistency_checking = 'abtree'
});
$primary->start;
# wal_consistency_checking puts a page image into every record: keep the WAL
$primary->safe_psql('postgres', "SELECT pg_create_physical_replication_slot('standby', true)");
$primary->safe_psql('postgres', q{
CREATE EXTENSION abtree;
CREATE TABLE t (id serial, k int, w int NOT NULL, pad text);
CREATE INDEX t_k ON t USING abtree (k);
CREATE INDEX t_kw ON t USING abtree (k) INCLUDE (w) WITH (weight_column = 'w');
});
$primary->backup('bkp');
my $standby = PostgreSQL::Test::Cluster->new('abt_standby');
$standby->init_from_backup($primary, 'bkp', has_streaming => 1);
$standby->append_conf('postgresql.conf', "primary_slot_name = 'standby'");
$standby->start;

# an empty index gets its first root, then splits up to several levels
$primary->safe_psql('postgres', q{
CREATE INDEX t_pad ON t USING abtree (pad, id) WITH (fillfactor = 20);
INSERT INTO t (k, w, pad) SELECT (random() * 1000)::int, 1 + i % 9, repeat(md5(i::text), 6)
  FROM generate_series(1, 15000) i;
DELETE FROM t WHERE k < 300;
VACUUM (INDEX_CLEANUP ON) t;
INSERT INTO t (k, w, pad) SELECT (random() * 1000)::int, 2, md5(i::text)
  FROM generate_series(1, 3000) i;
CREATE UNLOGGED TABLE u (k int);
CREATE INDEX u_k ON u USING abtree (k);
INSERT INTO u SELECT generate_series(1, 1000);
});
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));

ok($primary->safe_psql('postgres', "SELECT height FROM abtree_stats('t_pad')") >= 3,
	'the test index has at least three levels');
verify_standby_like_primary($primary, $standby, 400, 700, qw(t_k t_kw t_pad));
is($standby->safe_psql('postgres', q{SELECT count(*) FROM abtree_sample_tids('t_kw', 100, 1)}),
	'100', 'standby samples');
ok(!$standby->log_contains(qr/inconsistent page found/),
	'wal_consistency_checking found no inconsistent page');

$standby->promote;
$standby->safe_psql('postgres',
	q{INSERT INTO t (k, w, pad) SELECT i, 1, 'after promotion' FROM generate_series(1, 2000) i});
my ($ret, $stdout, $stderr) = $standby->psql('postgres',
	"SELECT abtree_verify('t_kw', heapallindexed => true)");
is($ret, 0, 'promoted standby takes inserts and verifies exactly') or diag($stderr);
is($standby->safe_psql('postgres', q{SELECT count(*) FROM u}), '0',
	'the unlogged table is empty after promotion');
$standby->safe_psql('postgres', q{INSERT INTO u SELECT generate_series(1, 500)});
($ret, $stdout, $stderr) = $standby->psql('postgres', "SELECT abtree_verify('u_k', true)");
is($ret, 0, 'the unlogged index was reset to its init fork and works') or diag($stderr);

$standby->stop;
$primary->stop;
done_testing();
