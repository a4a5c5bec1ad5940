# The multi-version weight store (src/mvstore/README):
#
# 1. A sampler holding an old REPEATABLE READ snapshot while other sessions
#    insert in hundreds of transactions (plus an abort and subtransactions)
#    draws only rows it can see, uniformly (chi-square over 20 key ranges,
#    19 degrees of freedom, critical value 43.82: a 0.1% false-alarm rate),
#    and, weighing pages as it sees them (abtree.draw_stored_share = 1),
#    accepts nearly every draw; drawing by the stored weights (the setting
#    at 0: it sees about 1/6 of them, which the automatic choice takes that
#    way on PostgreSQL 15 and 16, and weighs from 17 on), the draws are as
#    uniform; with abtree.mvstore off the same snapshot rejects most
#    draws.  abtree_mvstore_check finds no downlink below its child for
#    that snapshot.
# 2. Once the snapshot ends, the collector frees the versions.
# 3. A store too small for the inserts falls back: it says so once in the
#    log and in the view, sampling stays exact, and it recovers.
# 4. After a crash the store starts empty.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use AbtreeCheck;
use Time::HiRes qw(usleep);

my $node = abtree_node('abt_mvs', conf => "abtree.mvstore_gc_interval = 100\n");
$node->safe_psql('postgres', q{
CREATE TABLE t (k int, pad text);
CREATE INDEX t_k ON t USING abtree (k);
INSERT INTO t SELECT i, md5(i::text) FROM generate_series(1, 2000) i;
});

my $dir = $node->basedir;

# Inserts of every kind, each row with a key above the old ones.
sub insert_many
{
	my ($txns, $label) = @_;
	$label //= 'new';
	$node->safe_psql('postgres', qq{
DO \$\$ BEGIN
  FOR i IN 1..$txns LOOP
    INSERT INTO t SELECT 2000 + (random() * 1e6)::int, '$label' FROM generate_series(1, 20);
    COMMIT;
  END LOOP;
END \$\$;
BEGIN; INSERT INTO t SELECT 2000 + g, 'aborted' FROM generate_series(1, 3000) g; ROLLBACK;
BEGIN;
INSERT INTO t SELECT 5000 + g, 'sub' FROM generate_series(1, 500) g;
SAVEPOINT a; INSERT INTO t SELECT 6000 + g, 'sub' FROM generate_series(1, 500) g; ROLLBACK TO a;
COMMIT;
});
}

# A psql session that takes a snapshot, signals, waits for the go file,
# then runs $work inside the same transaction.
sub old_snapshot_session
{
	my ($tag, $work) = @_;
	my $script = qq{
\\set ON_ERROR_STOP 1
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT 'seen', count(*) FROM t;
\\! touch $dir/$tag.taken
DO \$\$ BEGIN
  WHILE pg_stat_file('$dir/$tag.go', true) IS NULL LOOP PERFORM pg_sleep(0.05); END LOOP;
END \$\$;
$work
COMMIT;
};
	my ($out, $err) = ('', '');
	PostgreSQL::Test::Utils::append_to_file("$dir/$tag.sql", $script);
	my $h = IPC::Run::start(
		[ 'psql', '-XAtq', '-F', '|', '-h', $node->host, '-p', $node->port,
		  '-f', "$dir/$tag.sql", 'postgres' ],
		'>', \$out, '2>', \$err);
	for (my $i = 0; !-e "$dir/$tag.taken"; $i++)
	{
		die "session $tag did not start: $err" if $i > 600;
		usleep(100_000);
	}
	return ($h, \$out, \$err);
}

# draws from the old snapshot: chi-square over 20 ranges of the old keys,
# rows outside them, and the acceptance of the draws from abtree_status
my $draw = q{
SELECT sum(value::bigint) FILTER (WHERE item = 'rows') AS r0,
       sum(value::bigint) FILTER (WHERE item <> 'scans') AS a0
  FROM abtree_status() WHERE component = 'swr' \gset
WITH s AS (SELECT k FROM t TABLESAMPLE swr(20000) REPEATABLE (11)),
     d AS (SELECT width_bucket(k, 1, 2001, 20) AS b FROM s WHERE k <= 2000),
     c AS (SELECT b, count(*) AS o FROM generate_series(1, 20) b LEFT JOIN d USING (b) GROUP BY b)
SELECT 'draw', round(sum((o - 1000.0) ^ 2 / 1000.0)::numeric, 2), sum(o),
       (SELECT count(*) FROM s WHERE k > 2000)
  FROM c;
SELECT 'accept', round((sum(value::bigint) FILTER (WHERE item = 'rows') - :r0)::numeric /
                       (sum(value::bigint) FILTER (WHERE item <> 'scans') - :a0), 4)
  FROM abtree_status() WHERE component = 'swr';
};

my ($h, $out, $err) = old_snapshot_session('s1', qq{
SET abtree.draw_stored_share = 1;
$draw
SELECT 'check', violations, versioned > 0, visible_weight FROM abtree_mvstore_check('t_k');
SET abtree.mvstore = off;
$draw
SET abtree.mvstore = on;
SET abtree.draw_stored_share = 0;
$draw
});
insert_many(300);
my $during = $node->safe_psql('postgres', 'SELECT versions FROM abtree_mvstore');
ok($during > 0, "the store holds versions while the old snapshot lives ($during)");
PostgreSQL::Test::Utils::append_to_file("$dir/s1.go", '');
$h->finish or die "old snapshot session failed: $$err";
note($$out);

my @draws = ($$out =~ /^draw\|([\d.]+)\|(\d+)\|(\d+)$/mg);
my @accepts = ($$out =~ /^accept\|([\d.]+)$/mg);
my ($violations, $versioned, $weight) = ($$out =~ /^check\|(\d+)\|(\w)\|(\d+)$/m);
is($$out =~ /^seen\|2000$/m ? 1 : 0, 1, 'the old snapshot sees the 2000 old rows');
cmp_ok($draws[0], '<', 43.82, "store on: draws uniform over the old rows (chi-square $draws[0])");
is($draws[1], 20000, 'store on: all 20000 draws are old rows');
is($draws[2], 0, 'store on: no draw of a row inserted after the snapshot');
cmp_ok($accepts[0], '>=', 0.99, "store on: acceptance $accepts[0] >= 0.99");
is($violations, 0, 'no downlink weighs less than its child for the old snapshot');
is($versioned, 't', 'the old snapshot subtracts versions');
is($weight, 2000, 'the root weighs exactly the 2000 rows the old snapshot sees');
cmp_ok($draws[3], '<', 43.82, "store off: draws still uniform (chi-square $draws[3])");
is($draws[5], 0, 'store off: no draw of a row inserted after the snapshot either');
cmp_ok($draws[6], '<', 43.82,
	"stored weights: draws uniform too (chi-square $draws[6])");
is($draws[7], 20000, 'stored weights: all 20000 draws are old rows');
is($draws[8], 0, 'stored weights: no draw of a row inserted after the snapshot');
cmp_ok($accepts[2], '<', 0.5,
	"stored weights: the snapshot sees about 1/6 of the weight, the rest is rejected ($accepts[2])");
cmp_ok($accepts[1], '<', 0.5, "store off: acceptance $accepts[1] is low (most draws rejected)");

# 2. the snapshot is gone: the collector drops every version
ok($node->poll_query_until('postgres', 'SELECT versions = 0 AND entries = 0 FROM abtree_mvstore'),
	'the collector frees all versions once no snapshot needs them');

# 3. a store far too small: fallbacks, said once, sampling stays exact
$node->append_conf('postgresql.conf', "abtree.mvstore_size = 64\n");
$node->restart;
my $logstart = -s $node->logfile;
($h, $out, $err) = old_snapshot_session('s2', qq{
SELECT 'sample', count(*), count(*) FILTER (WHERE pad = 'late') FROM t TABLESAMPLE swr(5000) REPEATABLE (5);
SELECT 'check', violations, visible_weight FROM abtree_mvstore_check('t_k');
});
insert_many(600, 'late');
my ($full, $fallbacks) = split /\|/,
  $node->safe_psql('postgres', 'SELECT is_full, fallbacks FROM abtree_mvstore');
is($full, 't', 'the view says the store is full');
cmp_ok($fallbacks, '>', 0, "inserts fell back to not versioning ($fallbacks)");
PostgreSQL::Test::Utils::append_to_file("$dir/s2.go", '');
$h->finish or die "old snapshot session failed: $$err";
like($$out, qr/^sample\|5000\|0$/m, 'a full store still gives exactly n rows, none inserted after the snapshot');
like($$out, qr/^check\|0\|\d+$/m, 'a full store keeps every downlink above its child');
ok($node->poll_query_until('postgres', 'SELECT NOT is_full FROM abtree_mvstore'),
	'the store recovers once the snapshot ends');
my $log = substr(slurp_file($node->logfile), $logstart);
my @said = ($log =~ /abtree weight store is full/g);
is(scalar(@said), 1, 'the log says once that the store is full');
like($log, qr/abtree weight store has room again/, 'and that it has room again');

# 4. a crash empties the store; nothing survives that could need it
($h, $out, $err) = old_snapshot_session('s3', 'SELECT 1;');
insert_many(50);
my $before = $node->safe_psql('postgres', 'SELECT entries FROM abtree_mvstore');
$node->stop('immediate');
$h->finish;
$node->start;
is($node->safe_psql('postgres', 'SELECT entries || \'|\' || versions FROM abtree_mvstore'),
	'0|0', "after a crash the store starts empty (it held $before entries)");
is($node->safe_psql('postgres',
		q{SELECT violations || '|' || (visible_weight = (SELECT count(*) FROM t)) FROM abtree_mvstore_check('t_k')}),
	'0|false', 'after the crash the weights cover the rows (aborted rows still counted until VACUUM)');
$node->safe_psql('postgres', 'VACUUM t');
is($node->safe_psql('postgres',
		q{SELECT violations || '|' || (visible_weight = (SELECT count(*) FROM t)) FROM abtree_mvstore_check('t_k')}),
	'0|true', 'and after VACUUM they are exact');

done_testing();
