# Samples drawn while other sessions insert are uniform over the rows the
# sampler's snapshot sees.  The table starts with keys 1..20000; inserters
# (all three abtree.weight_protocol values) add keys above 20000 as fast as
# they can while TABLESAMPLE swr draws; the draws that land on the old keys
# are counted in 20 equal key ranges and tested with chi-square (19 degrees
# of freedom, critical value 43.82 at a 0.1% false-alarm rate per test;
# three tests, so about 0.3% per run).  A weight pass that let a range's
# weight drop below its rows (an undercount) would starve that range.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use AbtreeCheck;

my $node = abtree_node('abt_sui');
$node->safe_psql('postgres', q{
CREATE TABLE u (k int, pad text);
CREATE INDEX u_k ON u USING abtree (k) WITH (fillfactor = 50);
INSERT INTO u SELECT i, md5(i::text) FROM generate_series(1, 20000) i;
});

my @args;
for my $proto (qw(safe_page page_exclusive path_exclusive))
{
	my $path = $node->basedir . "/ins_$proto.sql";
	PostgreSQL::Test::Utils::append_to_file($path, qq{
SET abtree.weight_protocol = $proto;
INSERT INTO u SELECT 20001 + (random() * 1000000)::int, md5(random()::text) FROM generate_series(1, 20);
});
	push @args, '-f', $path;
}
my ($out, $err) = ('', '');
my $h = IPC::Run::start(
	[ 'pgbench', '-n', '-c', '3', '-j', '1', '-T', '60', @args,
	  '-h', $node->host, '-p', $node->port, 'postgres' ],
	'>', \$out, '2>', \$err);
# let the inserts get going
$node->poll_query_until('postgres', 'SELECT count(*) > 25000 FROM u')
  or die 'inserts did not start';

for my $seed (1 .. 3)
{
	my ($chi2, $n, $during) = split /\|/, $node->safe_psql('postgres', qq{
WITH s AS (SELECT k FROM u TABLESAMPLE swr(60000) REPEATABLE ($seed)),
     old AS (SELECT width_bucket(k, 1, 20001, 20) AS b FROM s WHERE k <= 20000),
     counts AS (SELECT b, count(*) AS o FROM generate_series(1, 20) b LEFT JOIN old USING (b) GROUP BY b),
     tot AS (SELECT sum(o) AS n FROM counts)
SELECT round(sum((o - n / 20.0) ^ 2 / (n / 20.0))::numeric, 2), n,
       (SELECT count(*) FROM u) - 20000
  FROM counts, tot GROUP BY n;
});
	note("seed $seed: chi-square $chi2 over $n draws of old keys, $during new rows so far");
	# the share of old keys shrinks as fast as the inserters go; 2000 draws
	# leave 100 expected per range, plenty for the chi-square
	ok($n >= 2000, "seed $seed: enough draws of old keys to test ($n)");
	cmp_ok($chi2, '<', 43.82, "seed $seed: old keys drawn uniformly while inserts run");
}

$h->kill_kill;
$h->finish;
$node->safe_psql('postgres', 'VACUUM (INDEX_CLEANUP ON) u');
my ($ret, $stdout, $stderr) = $node->psql('postgres',
	"SELECT abtree_verify('u_k', heapallindexed => true)");
is($ret, 0, 'exact and complete afterwards') or diag($stderr);
$node->stop;
done_testing();
