# Tall trees with four sketched columns: the narrow sketch locking of
# inserts and the one-entry VACUUM records (src/abtree/README, "Sketches",
# tall trees).  A MARK_VALID record names the leaf, its path to the root
# and the sketch pages it changes; with 13 levels and four sketched
# columns the wide form (head, chunks and set pages of every column) would
# pass XLR_MAX_BLOCK_ID, so inserts lock only their own chunk and set page
# per column, and VACUUM removes one entry per record.  Keys of about
# 2.6 kB (fanout about two) make 13 levels from 40,000 rows.  The last
# inserts, the deletes and VACUUM run with wal_consistency_checking on
# (only then: it images every page of every record), and a standby
# replays everything; the sketches must still count exactly the valid
# entries (abtree_verify with heapallindexed compares them) on both.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use AbtreeCheck;

my $node = abtree_node('abt_tall', init => { allows_streaming => 1 },
	conf => "max_wal_size = '2GB'\n");
$node->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('abt_tall_standby');
$standby->init_from_backup($node, 'b', has_streaming => 1);
$standby->start;

$node->safe_psql('postgres', q{
CREATE TABLE tall (k text, a int, b int, c int);
CREATE INDEX tall_idx ON tall USING abtree (k, a, b, c);
CREATE FUNCTION tall_key(g int) RETURNS text IMMUTABLE LANGUAGE sql AS
  $$ SELECT left(string_agg(md5((g::bigint * 7919 % 1000003)::text || j::text), ''), 2640)
       FROM generate_series(1, 84) j $$;
INSERT INTO tall SELECT tall_key(g), g % 7, g % 11, g % 13 FROM generate_series(1, 40000) g;
});
my $height = $node->safe_psql('postgres', q{SELECT height FROM abtree_stats('tall_idx')});
cmp_ok($height, '>=', 13, "tall_idx has $height levels: inserts lock the sketches narrowly");
is($node->safe_psql('postgres', q{SELECT count(abtree_sketch('tall_idx', i)) FROM generate_series(1, 4) i}),
	'4', 'four sketched columns');

my ($ret, $out, $err) = $node->psql('postgres', q{
SET wal_consistency_checking = 'abtree';
INSERT INTO tall SELECT tall_key(g), g % 17, g % 19, g % 23 FROM generate_series(40001, 40200) g;
DELETE FROM tall WHERE a = 3;
VACUUM (INDEX_CLEANUP ON) tall;
});
is($ret, 0, 'narrow inserts, deletes and one-entry VACUUM records') or diag($err);

($ret, $out, $err) = $node->psql('postgres',
	"SELECT abtree_verify('tall_idx', heapallindexed => true, exact => true)");
is($ret, 0, 'exact, complete, sketches counting the valid entries') or diag($err);
is($node->safe_psql('postgres', q{
SELECT (chll_info(abtree_sketch('tall_idx', 2))).exact_distinct
   AND chll_estimate(abtree_sketch('tall_idx', 2)) = (SELECT count(DISTINCT a) FROM tall)}),
	't', "column a's sketch is exact after the deletes and VACUUM");

$node->wait_for_catchup($standby, 'replay');
($ret, $out, $err) = $standby->psql('postgres', "SELECT abtree_verify('tall_idx', exact => true)");
is($ret, 0, 'the standby replays the same tree') or diag($err);
my $sketches = q{SELECT string_agg(md5(abtree_sketch('tall_idx', i)::bytea), ',') FROM generate_series(1, 4) i};
is($standby->safe_psql('postgres', $sketches), $node->safe_psql('postgres', $sketches),
	'and the same sketches, byte for byte');
$standby->stop;
unlike(slurp_file($standby->logfile), qr/inconsistent page found|PANIC/,
	'wal_consistency_checking found nothing on the standby');
$node->stop;
done_testing();
