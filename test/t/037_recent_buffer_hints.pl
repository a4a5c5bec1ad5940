# Where a block was last seen (issue 21, src/abtree/abtrecent.c): before
# PostgreSQL 17 the buffer each leaf and heap block was read in is kept in a
# table of hints in shared memory, and with read-ahead on a block is read
# from its hinted buffer.  A hint is only a hint: here shared buffers are
# tiny (64), so almost every hint is stale by the next query (the buffer
# now holds another block, of the same file or of another), sessions come
# and go and find each other's hints, a partitioned table of 20 partitions
# is sampled, and VACUUM FULL and TRUNCATE give the files new numbers.  The
# samples (REPEATABLE) must be exactly those drawn with read-ahead off
# (effective_io_concurrency = 0, where no hint is used ahead), and EXPLAIN
# must count every read once.  A build that trusts a stale hint fails here
# ("index ... contains corrupted page").  Inserts read their pages through
# the hints too, two clients at once, and the indexes must verify after.
# On 17+ the same checks run the read streams instead.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('hints');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'abtree'
shared_buffers = 512kB
autovacuum = off
});
$node->start;

$node->safe_psql('postgres', q{
CREATE EXTENSION abtree;
CREATE TABLE p (id int4, y int4, pad text) PARTITION BY HASH (id);
SELECT format('CREATE TABLE p%s PARTITION OF p FOR VALUES WITH (MODULUS 20, REMAINDER %s)', i, i)
  FROM generate_series(0, 19) i \gexec
INSERT INTO p SELECT g, (g * 7919) % 100003, repeat('x', 200) FROM generate_series(1, 60000) g;
CREATE INDEX p_y ON p USING abtree (y);
CREATE TABLE one (id int4, y int4, pad text) WITH (fillfactor = 50);
INSERT INTO one SELECT g, (g::int8 * 104729) % 65537, repeat('y', 100) FROM generate_series(1, 40000) g;
CREATE INDEX one_y ON one USING abtree (y);
UPDATE one SET pad = 'u' WHERE id % 3 = 0;
CREATE TABLE churn AS SELECT g, repeat('z', 500) AS pad FROM generate_series(1, 5000) g;
CREATE INDEX ON churn (g);
});

# In one session (the hints are the backend's): the rows of q with
# read-ahead off, then three times with it on (16), each time after an
# index scan of the churn table, which evicts most of what q read last
# time.  The first round on fills the hints, the later ones use them, or
# find them stale.  With $before, the session first samples $q with
# read-ahead on (filling the hints) and runs $before.
sub same_samples
{
	my ($q, $name, $before) = @_;
	my $churn = q{
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT count(pad) FROM churn WHERE g > 0;
RESET enable_seqscan; RESET enable_bitmapscan;};
	my $sample = qq{SELECT md5(string_agg(s::text, ',')) FROM ($q) s;};
	my $first = $before ? "SET effective_io_concurrency = 16; $sample $before;" : '';
	my @out = split /\n/, $node->safe_psql('postgres',
		"$first SET effective_io_concurrency = 0; $churn $sample"
		  . "SET effective_io_concurrency = 16;"
		  . "$churn $sample" x 3);
	my @md5 = grep { /^[0-9a-f]{32}$/ } @out;
	shift @md5 if $before;
	is(scalar(@md5), 4, "$name: four samples");
	for my $round (1 .. 3)
	{
		is($md5[$round], $md5[0], "$name: round $round, read-ahead on = off");
	}
	return;
}

same_samples('SELECT id, pad FROM one TABLESAMPLE swr(5000) REPEATABLE (1)', 'one table');
same_samples('SELECT id FROM p TABLESAMPLE swr(5000) REPEATABLE (2)', '20 partitions');
same_samples(q{SELECT id FROM one TABLESAMPLE swr(500) REPEATABLE (3) WHERE y < 20000}, 'key range');
same_samples(q{SELECT t FROM abtree_sample_tids('one_y', 5000, 0.5) t}, 'abtree_sample_tids');

# Every read counted once with hints as without: the shared blocks hit
# or read of one query in EXPLAIN (BUFFERS), at 0 and at 16, after a churn.
sub buffers
{
	my $explain = q{
SELECT count(pad) FROM churn WHERE g > 0;
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, FORMAT JSON)
  SELECT id FROM one TABLESAMPLE swr(3000) REPEATABLE (4);};
	my $plans = $node->safe_psql('postgres',
		"SET enable_seqscan = off; SET enable_bitmapscan = off;"
		  . "SET effective_io_concurrency = 0; $explain $explain"
		  . "SET effective_io_concurrency = 16;"
		  . $explain x 3);
	# the top node's counts come first in each plan (its children's and
	# planning's later)
	my @counts;
	for my $plan (split /^\[/m, $plans)
	{
		my ($hit) = $plan =~ /"Shared Hit Blocks": (\d+)/ or next;
		my ($read) = $plan =~ /"Shared Read Blocks": (\d+)/;
		push @counts, $hit + $read;
	}
	# the first query of a session also reads the metapage (then cached)
	shift @counts;
	return @counts;
}
my @counts = buffers();
is(scalar(@counts), 4, 'four plans');
cmp_ok($counts[0], '>', 0, 'the query reads buffers');
is($counts[$_], $counts[0], "EXPLAIN counts the same buffers, round $_ at 16 as at 0")
  for 1 .. 3;

# New file numbers: the hints of the old files can never match.
same_samples('SELECT id, pad FROM one TABLESAMPLE swr(5000) REPEATABLE (5)',
	'after VACUUM FULL', 'VACUUM FULL one');
same_samples('SELECT id, pad FROM one TABLESAMPLE swr(5000) REPEATABLE (6)',
	'after TRUNCATE', q{
TRUNCATE one;
INSERT INTO one SELECT g, (g * 31) % 1009, 'v' FROM generate_series(1, 30000) g});

# Writers read through the hints too (issue 22: abt_read_hinted): the
# descents, the weight passes and the sketch pages of inserts, in two
# clients at once that churn the buffers between statements.  A build that
# pins a stale hint writes into the wrong page; abtree_verify below checks
# the weights, the entries and the sketches against the rows.
$node->safe_psql('postgres', 'CREATE SEQUENCE ins_seq');
my $script = $node->basedir . '/ins.sql';
PostgreSQL::Test::Utils::append_to_file($script, q{
SELECT nextval('ins_seq') AS n \gset
INSERT INTO one SELECT g, (g * 13) % 30011, 'w' FROM generate_series(:n * 200, :n * 200 + 199) g;
INSERT INTO p SELECT g, (g * 17) % 100003, 'w' FROM generate_series(:n * 200, :n * 200 + 199) g;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(pad) FROM churn WHERE g > :n % 2000;
});
$node->command_ok([ 'pgbench', '-n', '-c', '2', '-j', '2', '-t', '40', '-f', $script,
	'-h', $node->host, '-p', $node->port, 'postgres' ], 'two clients insert while the buffers churn');
is($node->safe_psql('postgres', 'SELECT count(*) FROM one WHERE pad = \'w\''), '16000',
	'every insert is there');

# The indexes are exact and complete (hints only ever read).
is($node->safe_psql('postgres', q{
SELECT count(abtree_verify(c.oid, heapallindexed => true)) FROM pg_class c
  JOIN pg_am a ON a.oid = c.relam WHERE a.amname = 'abtree' AND c.relkind = 'i'}),
	'21', 'the indexes verify');

$node->stop;
done_testing();
