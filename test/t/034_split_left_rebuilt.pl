# A leaf's SPLIT record carries its left half as the split offset and the
# half's high key, not as an image (issue 22: that image was half of a
# split's WAL); redo builds the half from the page as WAL left it
# (abt_split_fill_left).  The left half is still an image where the split
# is the page's first change after a checkpoint, and always for internal
# pages, whose downlinks carry adds that WAL never saw.
#
# The primary runs with wal_consistency_checking = 'abtree' (every record
# carries the primary's images; replay is compared with them) and data
# checksums.  Random inserts (with NULL keys, and 2.2-2.7 kB keys in an
# index of their own) split leaves many times; a streaming standby
# replays them, then the primary crashes after more of them and recovery
# replays those from the last checkpoint.  Each time, the
# index verifies and no page differs.  A build whose redo built the left
# half one item short failed here: "inconsistent page found" on the
# standby.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use AbtreeCheck;
use AbtreeGdb qw(index_wal);

my ($primary, $standby) = abtree_checked_pair('split', '', q{
CREATE TABLE t (id bigserial, k int, w int NOT NULL, pad text);
CREATE INDEX t_k ON t USING abtree (k, pad);
CREATE INDEX t_kw ON t USING abtree (k DESC) INCLUDE (w) WITH (weight_column = 'w');
CREATE TABLE wide (a text);
CREATE INDEX wide_a ON wide USING abtree (a);
});

my $insert = q{
INSERT INTO t (k, w, pad)
SELECT CASE WHEN i % 50 <> 0 THEN (random() * 1e6)::int END, 1 + i % 5, md5(i::text)
  FROM generate_series(1, 5000) i};
# keys of 2.2-2.7 kB (few to a page; a leaf may split at the new entry,
# whose pivot is then the left half's high key) in random order
my $wide = q{
INSERT INTO wide
SELECT (SELECT string_agg(md5(g::text || '-' || i), '') FROM generate_series(1, n) i)
  FROM generate_series(1, 100) g, (VALUES (70), (76), (83)) v(n) ORDER BY random()};
my $start = $primary->lsn('insert');
$primary->safe_psql('postgres', "$insert; $wide; $insert");
my $end = $primary->lsn('insert');

# pg_waldump names the custom SPLIT record "UNKNOWN (70)"; an image that
# redo applies is "FPW", one that only checks redo's result is not
my ($wal, $err) = index_wal($primary, 't_k', $start, $end);
my @splits = grep { /UNKNOWN \(70\)/ } split(/\n/, $wal);
my $rebuilt = grep { /blkref #1: rel \S+ blk \d+ FPW for WAL verification/ } @splits;
my $imaged = grep { /blkref #1: rel \S+ blk \d+ FPW,/ } @splits;
cmp_ok(scalar(@splits), '>=', 50, 'the inserts split t_k often') or diag($err);
note($splits[0]) if @splits;
cmp_ok($rebuilt, '>=', 40, 'most left halves are rebuilt by redo, not imaged');
$primary->safe_psql('postgres', "CHECKPOINT; $insert");
note("SPLIT records: " . scalar(@splits) . ", left half rebuilt $rebuilt, imaged $imaged");

$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
verify_standby_like_primary($primary, $standby, 200000, 300000, qw(t_k t_kw wide_a));

# a crash after more splits: recovery replays them from the checkpoint
$primary->safe_psql('postgres', "CHECKPOINT; $insert; $wide; $insert");
$primary->stop('immediate');
$primary->start;
is($primary->safe_psql('postgres', 'SELECT count(*) FROM t'), '25000',
	'after the crash: every committed row is there');
verify_exact_on_both($primary, $standby, 't', 't_k');
verify_exact_on_both($primary, $standby, 't', 't_kw');
verify_exact_on_both($primary, $standby, 'wide', 'wide_a');

for my $node ($primary, $standby)
{
	ok(!$node->log_contains(qr/inconsistent page found/),
		$node->name . ': wal_consistency_checking found no inconsistent page');
}
done_testing();
