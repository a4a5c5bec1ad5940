# Freezing leaf entries' xids (src/abtree/README, "Freezing"): a valid
# entry keeps the xid that made it valid, and snapshots compare xids modulo
# 2^32, so an entry 2^31 transactions old looked like one of a transaction
# in the future: every draw that reached it was rejected as invisible, and
# the rows inserted after the index's build were never sampled again (by
# hand, before the FREEZE record: 0 of 2,000 draws, 1,036 before the jump).
#
# VACUUM now freezes xids older than vacuum_freeze_min_age before the
# oldest snapshot, with one FREEZE record per leaf.  Here: a primary with
# data checksums and wal_consistency_checking = 'abtree' and a standby
# replay the records; a crash after them is replayed; then pg_resetwal
# moves the primary's next xid 2^31 + 3M ahead (VACUUM FREEZE froze the
# heap first), and the same REPEATABLE sample draws the same rows as
# before the jump.  A table VACUUM did not freeze shows what the jump does
# to entries left unfrozen: its rows inserted after the build are no
# longer drawn.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use AbtreeCheck;

my ($primary, $standby) = abtree_checked_pair('freeze', '', q{
CREATE TABLE t (id serial, k int, w int NOT NULL);
INSERT INTO t (k, w) SELECT g, 1 + g % 3 FROM generate_series(1, 1000) g;
CREATE INDEX t_k ON t USING abtree (k);
CREATE INDEX t_kw ON t USING abtree (k) INCLUDE (w) WITH (weight_column = 'w');
CREATE TABLE u (k int) WITH (autovacuum_enabled = off);
INSERT INTO u SELECT g FROM generate_series(1, 1000) g;
CREATE INDEX u_k ON u USING abtree (k);
});

# rows after the builds: their entries carry their xids (a build's are frozen)
$primary->safe_psql('postgres', q{
INSERT INTO t (k, w) SELECT g, 1 + g % 3 FROM generate_series(1001, 2000) g;
INSERT INTO u SELECT g FROM generate_series(1001, 2000) g;
});
# of 2,000 draws (a fixed seed) through an index, those of rows after the build
sub late
{
	my ($node, $idx) = @_;
	my $table = substr($idx, 0, 1);
	return $node->safe_psql('postgres', qq{SET abtree.swr_index = '$idx';
SELECT count(*) FILTER (WHERE k > 1000) FROM $table TABLESAMPLE swr(2000) REPEATABLE (1)});
}
my $late_t = late($primary, 't_k');
my $late_tw = late($primary, 't_kw');
my $late_u = late($primary, 'u_k');
cmp_ok($late_t, '>', 800, "rows inserted after the build are drawn ($late_t of 2000)");
cmp_ok($late_u, '>', 800, "in u too ($late_u of 2000)");

my $frozen = q{SELECT value::bigint FROM abtree_status() WHERE item = 'entries_frozen'};
is($primary->safe_psql('postgres', $frozen), '0', 'nothing frozen yet');
# a VACUUM with the default vacuum_freeze_min_age leaves young xids alone
$primary->safe_psql('postgres', 'VACUUM t');
is($primary->safe_psql('postgres', $frozen), '0', 'young entries stay as they are');
$primary->safe_psql('postgres', 'SET vacuum_freeze_min_age = 0; VACUUM FREEZE t');
is($primary->safe_psql('postgres', $frozen), '2000', 'VACUUM froze the 1000 new entries of each index');

# the standby replays the FREEZE records (wal_consistency_checking compares
# each page with the primary's image) and draws as the primary does
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
verify_standby_like_primary($primary, $standby, 1, 2000, qw(t_k t_kw));
is(late($standby, 't_k'), $late_t,
	'the standby draws the same sample after the freeze');

# a crash after the records: recovery replays them
$primary->safe_psql('postgres', q{
INSERT INTO t (k, w) SELECT g, 1 FROM generate_series(2001, 2100) g;
SET vacuum_freeze_min_age = 0; VACUUM FREEZE t});
$primary->stop('immediate');
$primary->start;
verify_exact_on_both($primary, $standby, 't', $_) for qw(t_k t_kw);
no_inconsistent_pages($primary, $standby);
$primary->safe_psql('postgres', 'DELETE FROM t WHERE k > 2000; VACUUM (INDEX_CLEANUP ON) t');
is(late($primary, 't_k'), $late_t,
	'the same sample after the crash');
$standby->stop;

# 2^31 transactions later: freeze every heap, catalogs included (t's
# entries were frozen above; INDEX_CLEANUP OFF keeps VACUUM out of u's
# index), and move the next xid ahead with pg_resetwal, with a pg_xact
# segment for it
$primary->safe_psql('postgres', q{
SET vacuum_freeze_min_age = 0;
VACUUM (FREEZE, INDEX_CLEANUP OFF);
CHECKPOINT;
});
my $next = 2**31 + 3_000_000;
$primary->stop;
my $seg = sprintf('%s/pg_xact/%04X', $primary->data_dir, int($next / 1048576));
open(my $fh, '>', $seg) or die "cannot create $seg: $!";
binmode $fh;
print $fh "\0" x (32 * 8192);
close $fh;
command_ok([ 'pg_resetwal', '-x', $next, '-u', $next - 1000, '-D', $primary->data_dir ],
	'pg_resetwal moves the next xid 2^31 + 3M ahead');
$primary->start;
cmp_ok($primary->safe_psql('postgres', 'SELECT txid_current() % 4294967296'), '>=', $next,
	'the xid counter moved');

is($primary->safe_psql('postgres', 'SELECT count(*) FROM t'), '2000', 't keeps its rows');
is(late($primary, 't_k'), $late_t,
	'frozen entries: the same REPEATABLE sample as before the jump');
is(late($primary, 't_kw'),
	$late_tw, 'and through the weighted index');
my ($ret, $out, $err) = $primary->psql('postgres',
	"SELECT abtree_verify('t_k', heapallindexed => true, exact => true)");
is($ret, 0, 't_k verifies after the jump') or diag($err);

# u's entries were not frozen (its VACUUM skipped the index): what the jump
# does to them; a VACUUM that reaches the index now cannot tell their age
my $late_u_after = late($primary, 'u_k');
note("u, entries not frozen: $late_u_after of 2000 draws reach the rows inserted after the build");
cmp_ok($late_u_after, '<', $late_u, 'unfrozen entries are lost to draws after 2^31 transactions');

done_testing();
