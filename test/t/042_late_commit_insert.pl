# Inserts after abtree's commit flush (src/abtree/README, "Batched
# validation"): under abtree.weight_protocol = batched an entry goes in not
# valid and waits in its backend's list; abtree's transaction callback makes
# the list valid at PRE_COMMIT (PRE_PREPARE).  PostgreSQL calls the
# callbacks newest first, so an extension preloaded before abtree has its
# callback called after abtree's, and any entry it inserts there comes after
# the flush.  test/modules/abt_late_insert.c is such an extension.  Before
# the fix the list was forgotten at COMMIT with that entry in it: a visible
# row whose entry weighed nothing, never drawn and missing from the index's
# weight, with no error.  Checked after COMMIT, after COMMIT PREPARED, and
# after a crash: the weights, TABLESAMPLE swr and abtree_verify with
# heapallindexed.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use File::Copy;
use FindBin;

my $node = PostgreSQL::Test::Cluster->new('late');
$node->init(extra => ['--data-checksums']);

# the library, built with the PGXS of the server under test
my $dir = PostgreSQL::Test::Utils::tempdir;
my $pg_config = $node->config_data('--bindir') . '/pg_config';
copy("$FindBin::Bin/../modules/abt_late_insert.c", $dir) or die "copy: $!";
open(my $mk, '>', "$dir/Makefile") or die "Makefile: $!";
print $mk "MODULES = abt_late_insert\nPG_CONFIG = $pg_config\n"
  . "PGXS := \$(shell \$(PG_CONFIG) --pgxs)\ninclude \$(PGXS)\n";
close($mk);
my ($out, $err);
my $built = IPC::Run::run([ 'make', '-s', '-C', $dir ], '>', \$out, '2>', \$err);
ok($built, 'test library abt_late_insert builds') or diag("$out\n$err");

$node->append_conf('postgresql.conf',
	"shared_preload_libraries = '$dir/abt_late_insert, abtree'\n"
	  . "autovacuum = off\nmax_prepared_transactions = 2\n");
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION abtree;
CREATE TABLE t (k int);
CREATE INDEX t_k ON t USING abtree (k);
CREATE TABLE late (k int, w int);
CREATE INDEX late_k ON late USING abtree (k);
CREATE INDEX late_kw ON late USING abtree (k) INCLUDE (w) WITH (weight_column = 'w');
});

my $late = q{SET LOCAL abt_late_insert.sql = 'INSERT INTO late SELECT g, 2 FROM generate_series(1, 100) g'};

# The index's weight against the rows, draws and verify, for each index.
sub check_late
{
	my ($when, $rows) = @_;
	is($node->safe_psql('postgres', 'SELECT count(*) FROM late'), $rows, "$when: $rows rows");
	is($node->safe_psql('postgres', q{SELECT abtree_range_weight('late_k', NULL::int, NULL::int)}),
		$rows, "$when: late_k weighs one per row");
	is($node->safe_psql('postgres', q{SELECT abtree_range_weight('late_kw', NULL::int, NULL::int)}),
		2 * $rows, "$when: late_kw weighs w per row");
	# 5,000 draws among at most 300 rows miss a given row with probability
	# (1 - 1/300)^5000 < 6e-8: every row is drawn unless it weighs nothing
	# (a false alarm below 2e-5 per check; the seed fixes the draws anyway)
	is($node->safe_psql('postgres', q{
		SET abtree.swr_index = 'late_k';
		SELECT count(DISTINCT ctid) FROM late TABLESAMPLE swr(5000) REPEATABLE (7)}),
		$rows, "$when: swr draws every row");
	for my $ix (qw(late_k late_kw))
	{
		my ($ret, $o, $e) = $node->psql('postgres',
			"SELECT abtree_verify('$ix', heapallindexed => true)");
		is($ret, 0, "$when: $ix verifies with heapallindexed") or diag($e);
	}
}

# the transaction has batched entries of its own, then the late ones
$node->safe_psql('postgres',
	"BEGIN; $late; INSERT INTO t SELECT generate_series(1, 1000); COMMIT;");
check_late('after COMMIT', 100);

# the late insert is the transaction's only one
$node->safe_psql('postgres', "BEGIN; $late; COMMIT;");
check_late('late insert alone', 200);

# PREPARE TRANSACTION: the callback runs at PRE_PREPARE
$node->safe_psql('postgres',
	"BEGIN; $late; INSERT INTO t SELECT generate_series(1, 1000); PREPARE TRANSACTION 'p';");
$node->safe_psql('postgres', "COMMIT PREPARED 'p'");
check_late('after COMMIT PREPARED', 300);

# the late entries were made valid in WAL before the commit record
$node->stop('immediate');
$node->start;
check_late('after a crash', 300);

$node->stop;
done_testing();
