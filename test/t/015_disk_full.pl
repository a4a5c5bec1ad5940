# A full disk under an abtree index: a tablespace on a small tmpfs
# (scripts/test.sh mounts one and passes its path in ABTREE_TEST_SMALL_FS;
# without it the test is skipped).  CREATE INDEX that does not fit fails
# with a clean ERROR (53100 disk full) and leaves no index; inserts that
# need a new index page fail the same way, and the index stays whole and
# usable; once space is freed, inserts go on and everything verifies.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use File::Path qw(rmtree);
use FindBin;
use lib $FindBin::Bin;
use AbtreeCheck;

my $fs = $ENV{ABTREE_TEST_SMALL_FS};
plan skip_all => 'ABTREE_TEST_SMALL_FS is not set (scripts/test.sh mounts a small tmpfs)'
  unless $fs && -d $fs && -w $fs;

my $node = abtree_node('abt_full');
my $start_time = $node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');
my $loc = "$fs/ts_" . $$;
mkdir $loc or die "mkdir $loc: $!";
$node->safe_psql('postgres', qq{CREATE TABLESPACE small LOCATION '$loc'});
# filler: a table in the small tablespace that takes most of it
$node->safe_psql('postgres', q{
CREATE TABLE t (id bigserial, k int, w int NOT NULL, pad text);
INSERT INTO t (k, w, pad) SELECT i, 1 + i % 3, repeat(md5(i::text), 4) FROM generate_series(1, 60000) i;
CREATE TABLE filler (x text) TABLESPACE small;
INSERT INTO filler SELECT repeat('x', 1000) FROM generate_series(1, 1000);
});
my $free = sub { my $df = `df -Pk $fs | tail -1`; (split ' ', $df)[3] };
note("free on the small file system: " . $free->() . " kB");

# 1. CREATE INDEX that does not fit
my ($ret, $out, $err) = $node->psql('postgres', q{
\set VERBOSITY verbose
CREATE INDEX t_big ON t USING abtree (pad, k) TABLESPACE small});
isnt($ret, 0, 'CREATE INDEX on a full disk fails');
like($err, qr/ERROR:  53100/, 'with ERROR 53100 (disk full)');
unlike($err, qr/XX000|PANIC|server closed/, 'and nothing worse');
is($node->safe_psql('postgres', q{SELECT count(*) FROM pg_class WHERE relname = 't_big'}),
	'0', 'the index is absent afterwards');
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'the server is up');

# 2. inserts into an index that fills the disk
$node->safe_psql('postgres', q{
CREATE TABLE s (id bigserial, k int, w int NOT NULL, pad text);
CREATE INDEX s_pk ON s USING abtree (pad, k) TABLESPACE small;
CREATE INDEX s_kw ON s USING abtree (k) INCLUDE (w) WITH (weight_column = 'w');
});
my ($errors, $batches, $rows) = (0, 0, 0);
for my $b (1 .. 200)
{
	($ret, $out, $err) = $node->psql('postgres', qq{
\\set VERBOSITY verbose
INSERT INTO s (k, w, pad) SELECT i, 1 + i % 3, repeat(md5(($b * 1000 + i)::text), 4)
  FROM generate_series(1, 1000) i});
	$batches++;
	if ($ret == 0) { $rows += 1000; next; }
	$errors++;
	like($err, qr/ERROR:  53100/, "insert batch $b: ERROR 53100 (disk full)");
	unlike($err, qr/XX000|PANIC|server closed/, "insert batch $b: nothing worse");
	last if $errors >= 3;
}
ok($errors > 0, "inserts ran into the full disk ($rows rows in, then $errors failed batches)");
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'the server is up');
is($node->safe_psql('postgres', 'SELECT count(*) FROM s'), $rows, 'the committed rows are there');
for my $idx (qw(s_pk s_kw))
{
	($ret, $out, $err) = $node->psql('postgres', "SELECT abtree_verify('$idx', true)");
	is($ret, 0, "$idx is whole while the disk is full") or diag($err);
}
is($node->safe_psql('postgres', q{SET enable_seqscan = off; SELECT count(*) FROM s WHERE pad > ''}),
	$rows, 'the index finds every row while the disk is full');
is($node->safe_psql('postgres', q{SELECT count(*) FROM abtree_sample_tids('s_pk', 100)}),
	'100', 'and samples');
# a checkpoint writes the dirty pages of the full file system's files
($ret, $out, $err) = $node->psql('postgres', 'CHECKPOINT');
is($ret, 0, 'a checkpoint succeeds (the pages were allocated at extension)') or diag($err);

# 3. free space: drop the filler
$node->safe_psql('postgres', 'DROP TABLE filler; CHECKPOINT');
note("free after dropping the filler: " . $free->() . " kB");
($ret, $out, $err) = $node->psql('postgres', q{
INSERT INTO s (k, w, pad) SELECT i, 1 + i % 3, md5(i::text) FROM generate_series(1, 500) i});
is($ret, 0, 'inserts succeed again') or diag($err);
$rows += 500;
$node->safe_psql('postgres', 'VACUUM (INDEX_CLEANUP ON) s');
for my $idx (qw(s_pk s_kw))
{
	($ret, $out, $err) = $node->psql('postgres', "SELECT abtree_verify('$idx', true)");
	is($ret, 0, "$idx exact and complete after the disk had room again") or diag($err);
}
is($node->safe_psql('postgres', q{SELECT (SELECT total_weight FROM abtree_stats('s_kw')) = sum(w)
  AND count(*) = } . $rows . q{ FROM s}), 't', 'no row and no weight lost');
is($node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()'), $start_time, 'no crash restart');
ok(!$node->log_contains('TRAP|PANIC|terminated by signal'), 'no crash');
note("rows checked: $rows");

$node->safe_psql('postgres', 'DROP TABLE s, t; DROP TABLESPACE small');
$node->stop;
rmtree($loc);

done_testing();
