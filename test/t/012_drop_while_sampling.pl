# DROP INDEX and DROP EXTENSION abtree CASCADE while other sessions sample
# in a loop (TABLESAMPLE swr and abtree_sample_tids, one statement per
# transaction): the samplers get clean errors (undefined table, undefined
# function, no abtree index: never an internal error), the server does not
# crash, and afterwards the index and the extension can be created again
# and sampled.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use FindBin;
use lib $FindBin::Bin;
use AbtreeCheck;
use AbtreeBg;

my $node = abtree_node('abt_drop');
my $setup = q{
CREATE INDEX t_k ON t USING abtree (k);
CREATE INDEX t_kw ON t USING abtree (k) INCLUDE (w) WITH (weight_column = 'w');
};
$node->safe_psql('postgres', q{
CREATE TABLE t (k int, w int);
INSERT INTO t SELECT i, 1 + i % 5 FROM generate_series(1, 50000) i;
} . $setup);
my $start_time = $node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');

# Each sampler runs $n statements, each its own transaction, with a short
# sleep between; prints one line per successful sample.
my $n = 400;
sub samplers
{
	my ($cycle) = @_;
	my %q = (
		swr => q{SET abtree.swr_index = 't_k';
SELECT 'swr', count(*) FROM t TABLESAMPLE swr(100);},
		swr_w => q{SET abtree.swr_index = 't_kw';
SELECT 'swr', count(*) FROM t TABLESAMPLE swr(100);},
		tids => q{SELECT 'tids', count(*) FROM abtree_sample_tids('t_k', 100);},
		tids_w => q{SELECT 'tids', count(*) FROM abtree_sample_tids('t_kw', 100, 0.5) s JOIN t ON t.ctid = s;},
	);
	my @s;
	for my $tag (sort keys %q)
	{
		push @s, bg_psql($node, "${tag}_$cycle",
			join('', map { "$q{$tag}\nSELECT pg_sleep(0.01);\n" } 1 .. $n),
			verbosity => 'verbose');
	}
	return @s;
}

# Clean errors only: 42P01 (the index is gone), 42883 / 42704 (the
# function or the tablesample method is gone), 55000 (the table has no
# abtree index for a moment), 40P01: DROP EXTENSION ... CASCADE locks an
# index before its table (PostgreSQL's dependency walk), a query the table
# before the index, and the deadlock detector picks one.  And one XX000
# from PostgreSQL itself: queries take no lock on the functions they call,
# so a DROP EXTENSION between planning and execution makes the executor's
# look-up of the dropped function fail ("cache lookup failed for function
# N"); any extension's or user's function does the same.
my %allowed = map { $_ => 1 } qw(42P01 42883 42704 55000 40P01);
sub clean_error
{
	my ($code, $msg) = @_;
	return 1 if $allowed{$code};
	return 1 if $code eq 'XX000' && $msg =~ /^cache lookup failed for function \d+$/;
	return 0;
}
my $cycles = 3;
my ($ok_samples, $errors) = (0, 0);
my %seen;
for my $c (1 .. $cycles)
{
	my @s = samplers($c);
	usleep(500_000);
	$node->safe_psql('postgres', 'DROP INDEX t_k');
	usleep(300_000);
	$node->safe_psql('postgres', 'DROP INDEX CONCURRENTLY t_kw');
	usleep(300_000);
	$node->safe_psql('postgres', $setup);
	usleep(300_000);
	$node->safe_psql('postgres', 'DROP EXTENSION abtree CASCADE');
	usleep(500_000);
	$node->safe_psql('postgres', 'CREATE EXTENSION abtree');
	$node->safe_psql('postgres', $setup);
	my $bad = 0;
	for my $s (@s)
	{
		bg_finish($s, 300);
		$ok_samples += () = $s->{out} =~ /^(?:swr|tids)\|100$/mg;
		for my $line (split /\n/, $s->{err})
		{
			# the first line of each message (others are DETAIL and so on)
			next unless $line =~ /(?:ERROR|FATAL|PANIC|WARNING):|server closed|connection to server/;
			if ($line =~ /ERROR:  (\w{5}): (.*)$/)
			{
				$seen{$1}++;
				$errors++;
				next if clean_error($1, $2);
			}
			$bad++;
			diag("$s->{tag}: unexpected: $line");
		}
		# a sample that answered, answered in full
		my @short = grep { /^(?:swr|tids)\|/ && !/\|100$/ } split /\n/, $s->{out};
		$bad += @short;
		diag("$s->{tag}: short samples: @short") if @short;
	}
	is($bad, 0, "cycle $c: the samplers saw only clean errors and full samples");
	is($node->safe_psql('postgres', 'SELECT 1'), '1', "cycle $c: the server is up");
}
note("samples answered: $ok_samples; errors: $errors ("
	  . join(', ', map { "$_ x$seen{$_}" } sort keys %seen) . ')');
ok($errors > 0, 'the samplers did run into the drops');
ok($ok_samples > 0, 'and sampled between them');
is($node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()'), $start_time,
	'no crash restart');
ok(!$node->log_contains('terminated by signal|was terminated|TRAP|PANIC'),
	'no backend died');

# afterwards: the recreated indexes are whole and sample
for my $idx (qw(t_k t_kw))
{
	my ($ret, $out, $err) = $node->psql('postgres', "SELECT abtree_verify('$idx', true)");
	is($ret, 0, "recreated $idx verifies") or diag($err);
}
is($node->safe_psql('postgres', q{SET abtree.swr_index = 't_kw';
SELECT count(*) FROM t TABLESAMPLE swr(1000)}), '1000', 'sampling works after re-creation');

done_testing();
