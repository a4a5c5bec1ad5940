# A new (all-zero) page in an abtree index: a split extends the index and
# the crash can come before the split's record, leaving the page unused
# (abtree_stats counts no such page).  Every scan of the index's blocks
# must skip it.  The sketch rebuild of VACUUM (abtsketchrebuild.c) took the
# page's special space before asking whether the page was new: an
# assertion failure in an assert-enabled build (interleave.py --seed 2002
# --checksums on PostgreSQL 18, after a crash step).  Here the page is
# appended by hand, and VACUUM rebuilds a sketch whose exact set came back
# within reach; then statistics, verification, freezing and inserts.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use AbtreeCheck;

my $node = abtree_node('newpage');
$node->safe_psql('postgres', q{
CREATE TABLE bl (id int, k int4);
CREATE INDEX bl_k ON bl USING abtree (k);
INSERT INTO bl SELECT g, hashint4(g) FROM generate_series(1, 60000) g;
DELETE FROM bl WHERE id > 100;
CHECKPOINT;
});
is($node->safe_psql('postgres', q{SELECT (chll_info(abtree_sketch('bl_k', 1))).exact_distinct}),
	'f', 'the sketch lost its exact set');
my $file = $node->data_dir . '/' . $node->safe_psql('postgres', q{SELECT pg_relation_filepath('bl_k')});
my $blocks = $node->safe_psql('postgres', q{SELECT pg_relation_size('bl_k') / 8192});
$node->stop;
open(my $fh, '>>', $file) or die "cannot open $file: $!";
binmode $fh;
print $fh "\0" x 8192;
close $fh;
$node->start;
is($node->safe_psql('postgres', q{SELECT pg_relation_size('bl_k') / 8192}), $blocks + 1,
	'the index has a new page at its end');

my ($ret, $out, $err) = $node->psql('postgres', 'SET vacuum_freeze_min_age = 0; VACUUM bl');
is($ret, 0, 'VACUUM, with its sketch rebuild and freezing, skips the new page') or diag($err);
is($node->safe_psql('postgres', q{SELECT (chll_info(abtree_sketch('bl_k', 1))).exact_distinct,
  round(chll_estimate(abtree_sketch('bl_k', 1)))}), 't|100',
	'the rebuilt sketch counts the 100 rows left exactly');
is($node->safe_psql('postgres', q{SELECT entries, total_weight FROM abtree_stats('bl_k')}), '100|100',
	'abtree_stats skips the new page');
($ret, $out, $err) = $node->psql('postgres',
	q{SELECT abtree_verify('bl_k', heapallindexed => true, exact => true)});
is($ret, 0, 'the index verifies') or diag($err);
$node->safe_psql('postgres', q{INSERT INTO bl SELECT g, hashint4(g) FROM generate_series(1, 5000) g});
is($node->safe_psql('postgres', q{SELECT count(*) FROM bl TABLESAMPLE swr(50) REPEATABLE (1)}), '50',
	'inserts and draws go on');
done_testing();
