# The pbtree merge worker holds no snapshot while it merges.
#
# A merge copies index entries and never reads the heap.  Were the worker to
# hold a snapshot (or a catalog snapshot) during a long merge, its xmin would
# hold back every VACUUM's horizon for that long, like a long query, and the
# partitions the merge drops could not be freed until the next merge.  The
# test builds five sealed partitions of 250K entries, lets a seal start the
# worker, and watches pg_stat_activity (in a procedure that commits after
# every look, so that each look reads fresh backend states) until the worker
# is gone: it must have been seen, never with an xid, and with an xmin only
# while it starts (reading catalogs), at most one look in ten.  Then one
# VACUUM frees the merged partitions' pages.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use AbtreeBg;
use AbtreeCheck;

my $node = abtree_node('pbt_merge_worker', conf => q{
abtree.pbtree_merge_threshold = 4
log_min_messages = log
});

# Loading sessions set the threshold to 0: no worker until we ask.
$node->safe_psql('postgres', q{
SET abtree.pbtree_merge_threshold = 0;
CREATE TABLE m (k int4);
CREATE INDEX m_k ON m USING pbtree (k);
});
for my $i (0 .. 4)
{
	$node->safe_psql('postgres', qq{
SET abtree.pbtree_merge_threshold = 0;
INSERT INTO m SELECT (hashint4(g) & 2147483647) FROM generate_series($i * 250000 + 1, ($i + 1) * 250000) g;
SELECT pbtree_seal('m_k');
});
}
is($node->safe_psql('postgres',
		"SELECT count(*) FROM pbtree_stats('m_k') WHERE state = 'sealed'"),
	'5', 'five sealed partitions');

$node->safe_psql('postgres', q{
CREATE PROCEDURE watch_merge(INOUT seen int, INOUT with_xmin int, INOUT with_xid int)
LANGUAGE plpgsql AS $$
DECLARE
	n int;
	x int;
	y int;
	started timestamptz := clock_timestamp();
BEGIN
	seen := 0;
	with_xmin := 0;
	with_xid := 0;
	LOOP
		SELECT count(*), count(*) FILTER (WHERE backend_xmin IS NOT NULL),
		       count(*) FILTER (WHERE backend_xid IS NOT NULL)
		  INTO n, x, y
		  FROM pg_stat_activity WHERE backend_type = 'abtree pbtree merge';
		seen := seen + n;
		with_xmin := with_xmin + x;
		with_xid := with_xid + y;
		COMMIT;
		EXIT WHEN (seen > 0 AND n = 0) OR clock_timestamp() - started > interval '120 s';
		PERFORM pg_sleep(0.005);
	END LOOP;
END $$;
});

# The seal's compaction sees 6 sealed partitions, over the threshold of 4,
# and starts the worker.  The watch runs in a session of its own, started
# before the seal: begun after it, it once found the worker done already
# (a merge of 0.2 s) and saw it in none of its looks.  (The CALL is a
# statement of its own: a procedure cannot COMMIT inside a multi-statement
# string.)
my $watching = $node->basedir . '/watching';
my $watch = bg_psql($node, 'watch', "\\! touch $watching\nCALL watch_merge(0, 0, 0);\n");
bg_wait_file($watching) or die 'the watching session did not start';
$node->safe_psql('postgres', q{
INSERT INTO m SELECT g FROM generate_series(1, 1000) g;
SELECT pbtree_seal('m_k');
});
bg_finish($watch, 180) == 0 or die "the watch failed: $watch->{err}";
chomp(my $watched = $watch->{out});
my ($seen, $with_xmin, $with_xid) = split /\|/, $watched;
cmp_ok($seen, '>', 0, "the merge worker was seen running ($seen looks)");
# (starting up, the worker reads catalogs, which takes a snapshot for a
# moment; before the fix, every look saw an xmin)
cmp_ok($with_xmin * 10, '<=', $seen,
	"the merge worker had an xmin in at most a tenth of the looks ($with_xmin of $seen)");
is($with_xid, '0', 'the merge worker never had an xid');

ok($node->wait_for_log(qr/merged \d+ partitions of pbtree index "m_k"/),
	'the worker merged');
# (a DROPPED partition is freed once the oldest xmin has passed the next xid
# at its drop: some transaction must take an xid first, as for nbtree's pages)
$node->safe_psql('postgres', 'SELECT txid_current()');
$node->safe_psql('postgres', 'VACUUM m');
is($node->safe_psql('postgres',
		"SELECT count(*) FROM pbtree_stats('m_k') WHERE state IN ('dropped', 'building', 'closed')"),
	'0', 'one VACUUM after the merge frees the merged partitions');
is($node->safe_psql('postgres', "SELECT pbtree_verify('m_k', true)"), '1251000',
	'the index verifies, every row indexed once');
is($node->safe_psql('postgres', q{
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT count(*) FROM m WHERE k >= 0}), '1251000', 'every row through the index');

$node->stop;
done_testing();
