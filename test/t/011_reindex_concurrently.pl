# REINDEX INDEX CONCURRENTLY and REINDEX TABLE CONCURRENTLY of abtree
# indexes while another session inserts (and deletes) in many small
# transactions: afterwards each index is valid, verifies exact and
# complete (every live row found), the weighted one sums the live weights,
# and index scans find every row.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use AbtreeCheck;
use AbtreeBg;

my $node = abtree_node('abt_reidx');
create_stress_table($node);
$node->safe_psql('postgres', q{
CREATE INDEX t_k ON t USING abtree (k);
INSERT INTO t (k, w, pad) SELECT i % 5000, i % 10, md5(i::text) FROM generate_series(1, 100000) i;
});
my $dir = $node->basedir;
my $cycles = 3;

# The writer: small transactions until the stop file appears (at most
# 3000), some deletes, one aborted batch per round.
my $writer = bg_psql($node, 'writer', qq{
CREATE TEMP TABLE writer_n (n int);
DO \$\$
DECLARE n int := 0;
BEGIN
  WHILE pg_stat_file('$dir/stop', true) IS NULL AND n < 3000 LOOP
    INSERT INTO t (k, w, pad)
      SELECT (random() * 5000)::int, (random() * 10)::int, md5(random()::text)
      FROM generate_series(1, 20);
    IF n % 10 = 0 THEN
      DELETE FROM t WHERE id IN (SELECT id FROM t ORDER BY random() LIMIT 5);
    END IF;
    COMMIT;
    n := n + 1;
  END LOOP;
  INSERT INTO writer_n VALUES (n);
END
\$\$;
SELECT 'writer transactions: ' || n FROM writer_n;
});

my $reindexed = 0;
for my $c (1 .. $cycles)
{
	for my $stmt ('REINDEX INDEX CONCURRENTLY t_k', 'REINDEX INDEX CONCURRENTLY t_kw',
		'REINDEX TABLE CONCURRENTLY t')
	{
		my ($ret, $out, $err) = $node->psql('postgres', $stmt);
		is($ret, 0, "cycle $c: $stmt while inserts go on") or diag($err);
		$reindexed++ if $ret == 0;
	}
}
PostgreSQL::Test::Utils::append_to_file("$dir/stop", '');
is(bg_finish($writer, 300), 0, 'the writer ran to its end')
  or diag($writer->{err});
is($writer->{err}, '', 'the writer had no errors');
my ($txns) = $writer->{out} =~ /writer transactions: (\d+)/;
$txns //= 0;
note("writer committed $txns transactions during $reindexed REINDEX CONCURRENTLY runs");
ok($txns > 0, "the writer committed during the reindexes ($txns transactions)");

is($node->safe_psql('postgres', q{SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
  WHERE i.indrelid = 't'::regclass AND (NOT i.indisvalid OR NOT i.indisready OR c.relname LIKE '%ccnew%' OR c.relname LIKE '%ccold%')}),
	'0', 'no invalid or leftover indexes');

# exact and complete without VACUUM first (no insert in flight), then at rest
for my $idx (qw(t_k t_kw t_pad))
{
	my ($ret, $out, $err) = $node->psql('postgres',
		"SELECT abtree_verify('$idx', heapallindexed => true, exact => true)");
	is($ret, 0, "$idx exact and complete after concurrent reindexes") or diag($err);
}
verify_at_rest($node, 'after REINDEX CONCURRENTLY', qw(t_k t_kw t_pad));

my $seq = $node->safe_psql('postgres', q{SET enable_indexscan = off; SET enable_bitmapscan = off;
SELECT count(*), sum(k), sum(w) FROM t WHERE k >= 0});
for my $scan ('SET enable_seqscan = off; SET enable_bitmapscan = off',
	'SET enable_seqscan = off; SET enable_indexscan = off')
{
	is($node->safe_psql('postgres', "$scan; SET abtree.range_selectivity = off;
SELECT count(*), sum(k), sum(w) FROM t WHERE k >= 0"), $seq,
		"index scans find every row ($scan)");
}
my $rows = $node->safe_psql('postgres', 'SELECT count(*) FROM t');
note("rows checked: $rows");
is($node->safe_psql('postgres', q{SET abtree.swr_index = 't_k';
SELECT count(*) FROM t TABLESAMPLE swr(1000)}), '1000', 'sampling works through the rebuilt index');

done_testing();
