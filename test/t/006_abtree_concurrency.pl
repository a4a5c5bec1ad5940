# Concurrent writers, samplers, verifiers and VACUUM on abtree indexes with
# small fanout (many splits at every level, root splits included).  The
# at-least verification (W1) must hold at every moment it runs, no client
# may fail, and at rest the weights must be exact (W2).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use AbtreeCheck;

my $seconds = $ENV{ABTREE_STRESS_SECONDS} // 15;

my $node = abtree_node('abt_conc');
create_stress_table($node);

my %scripts = (
	'insert.sql@6' => q{
INSERT INTO t (k, w, pad) SELECT (random() * 100000)::int, 1 + (random() * 9)::int, repeat(md5(random()::text), 12)
  FROM generate_series(1, 20);
},
	'sample.sql@2' => q{
SELECT count(*) FROM abtree_sample_tids('t_kw', 50);
SELECT count(*) FROM abtree_sample_tids_range('t_pad', 20, NULL, 'a'::text, 'b'::text);
},
	'verify.sql@1' => q{
SELECT abtree_verify('t_pad', exact => false);
SELECT abtree_verify('t_kw', exact => false);
},
	'scan.sql@2' => q{
SELECT count(*) FROM t WHERE pad BETWEEN 'a' AND 'b';
},
	'delete.sql@1' => q{
DELETE FROM t WHERE id % 7 = (random() * 6)::int AND id < (SELECT max(id) - 500 FROM t);
VACUUM (INDEX_CLEANUP ON) t;
},
);
my @args;
for my $name (sort keys %scripts)
{
	my ($file, $weight) = split /@/, $name;
	my $path = $node->basedir . "/$file";
	PostgreSQL::Test::Utils::append_to_file($path, $scripts{$name});
	push @args, '-f', "$path\@$weight";
}

my ($out, $err) = ('', '');
my $ok = IPC::Run::run(
	[ 'pgbench', '-n', '-c', '4', '-j', '2', '-T', $seconds, @args,
	  '-h', $node->host, '-p', $node->port, 'postgres' ],
	'>', \$out, '2>', \$err);
ok($ok, 'pgbench with inserters, samplers, verifiers, scans and VACUUM ran clean')
  or diag("stdout:\n$out\nstderr:\n$err");
unlike($err, qr/aborted|ERROR/, 'no client failed') or diag($err);

my ($height, $rows) = split /\|/, $node->safe_psql('postgres', "SELECT height, (SELECT count(*) FROM t) FROM abtree_stats('t_pad')");
note("t_pad: height $height, $rows rows");
ok($height >= 3,
	'the small-fanout index grew to at least three levels');
verify_at_rest($node, 'at rest', qw(t_pad t_kw));

$node->stop;
done_testing();
