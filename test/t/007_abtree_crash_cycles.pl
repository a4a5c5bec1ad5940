# Crash cycles under concurrent weight maintenance: inserting sessions (the
# three abtree.weight_protocol values at once), samplers, deletes with
# VACUUM and at-least verification run against small-fanout indexes; the
# primary is stopped immediately at a random moment, restarted, and checked:
#   - right after recovery, every downlink is at least its subtree (W1);
#   - after one VACUUM, the weights are exact (W2), every visible row is in
#     every index (heapallindexed), and the weighted index sums the weights
#     of the live rows.
# Once without and once with data checksums; the first primary writes with
# wal_consistency_checking = abtree and has a streaming standby that
# compares every abtree page it replays with the record's image, verified
# at the end.  ABTREE_CRASH_CYCLES sets the number of cycles per primary (default
# 3, for CI); for a long run: ABTREE_CRASH_CYCLES=100 prove ...
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use AbtreeCheck;
use Time::HiRes qw(usleep);

my $cycles = $ENV{ABTREE_CRASH_CYCLES} // 3;
srand($ENV{ABTREE_CRASH_SEED} // 4242);

my %scripts = (
	'ins_safe.sql@4' => q{
SET abtree.weight_protocol = safe_page;
INSERT INTO t (k, w, pad) SELECT (random() * 100000)::int, 1 + (random() * 9)::int, repeat(md5(random()::text), 12)
  FROM generate_series(1, 10);
},
	'ins_page.sql@2' => q{
SET abtree.weight_protocol = page_exclusive;
INSERT INTO t (k, w, pad) SELECT (random() * 100000)::int, 1 + (random() * 9)::int, repeat(md5(random()::text), 12)
  FROM generate_series(1, 10);
},
	'ins_path.sql@1' => q{
SET abtree.weight_protocol = path_exclusive;
INSERT INTO t (k, w, pad) SELECT (random() * 100000)::int, 1 + (random() * 9)::int, repeat(md5(random()::text), 12)
  FROM generate_series(1, 10);
},
	'sample.sql@2' => q{
SELECT count(*) FROM abtree_sample_tids('t_kw', 50);
SELECT abtree_verify('t_pad', exact => false);
},
	'delete.sql@1' => q{
DELETE FROM t WHERE id % 40 = (random() * 39)::int AND id < (SELECT max(id) - 300 FROM t);
VACUUM (INDEX_CLEANUP ON) t;
},
);

sub write_scripts
{
	my ($node) = @_;
	my @args;
	for my $name (sort keys %scripts)
	{
		my ($file, $weight) = split /@/, $name;
		my $path = $node->basedir . "/$file";
		PostgreSQL::Test::Utils::append_to_file($path, $scripts{$name})
		  unless -e $path;
		push @args, '-f', "$path\@$weight";
	}
	return @args;
}

# W1 right after recovery, then W2 and completeness after one VACUUM.
sub check_after_restart
{
	my ($node, $label) = @_;
	for my $idx (qw(t_pad t_kw))
	{
		my ($ret, $out, $err) = $node->psql('postgres',
			"SELECT abtree_verify('$idx', exact => false)");
		is($ret, 0, "$label: $idx at least its subtrees after recovery") or diag($err);
	}
	verify_at_rest($node, $label, qw(t_pad t_kw));
}

sub run_cycles
{
	my ($node, $name) = @_;
	my @args = write_scripts($node);
	for my $cycle (1 .. $cycles)
	{
		my ($out, $err) = ('', '');
		my $h = IPC::Run::start(
			[ 'pgbench', '-n', '-c', '5', '-j', '2', '-T', '60', @args,
			  '-h', $node->host, '-p', $node->port, 'postgres' ],
			'>', \$out, '2>', \$err);
		usleep(int((1 + rand(3)) * 1_000_000));
		$node->stop('immediate');
		$h->finish;
		$node->start;
		check_after_restart($node, "$name cycle $cycle");
	}
	my ($height, $rows) = split /\|/, $node->safe_psql('postgres',
		"SELECT height, (SELECT count(*) FROM t) FROM abtree_stats('t_pad')");
	note("$name: t_pad height $height, $rows rows after $cycles cycles");
	ok($height >= 3, "$name: the small-fanout index has at least three levels");
}

sub new_primary
{
	my ($name, $conf, @extra) = @_;
	my $node = abtree_node($name,
		init => { allows_streaming => 1, extra => [@extra] },
		conf => "max_connections = 30\n$conf");
	create_stress_table($node);
	$node->safe_psql('postgres', q{
INSERT INTO t (k, w, pad) SELECT (random() * 100000)::int, 1 + (random() * 9)::int, repeat(md5(random()::text), 12)
  FROM generate_series(1, 3000);
});
	return $node;
}

# without checksums, with a standby checking every abtree record: the
# primary adds a page image to each (wal_consistency_checking is read where
# the WAL is written; on the standby alone it would check nothing)
my $primary = new_primary('abt_cc_primary', "wal_consistency_checking = 'abtree'\n");
# a slot: the images make much WAL, which must wait for a standby that lags.
# It reserves WAL when created (true): unreserved, it would hold nothing until
# the walreceiver first connects, and a checkpoint in the first cycle could
# remove the segment the base backup's standby asks for.  wal_keep_size
# covers what a crash can take back: a slot's restart_lsn is saved only at
# checkpoints, and a release without the fix for that race may remove WAL
# past the saved position ("requested WAL segment ... has already been
# removed" after a restart, seen once in CI on 15).
$primary->append_conf('postgresql.conf', "wal_keep_size = '1GB'\n");
$primary->reload;
$primary->safe_psql('postgres', "SELECT pg_create_physical_replication_slot('standby', true)");
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('abt_cc_standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->append_conf('postgresql.conf', "primary_slot_name = 'standby'\n");
$standby->start;
run_cycles($primary, 'no checksums');
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
for my $idx (qw(t_pad t_kw))
{
	my ($ret, $out, $err) = $standby->psql('postgres',
		"SELECT abtree_verify('$idx', heapallindexed => true)");
	is($ret, 0, "standby: $idx exact and complete") or diag($err);
}
is($standby->safe_psql('postgres', "SELECT count(*) FROM abtree_sample_tids('t_kw', 100)"),
   '100', 'standby: sampling works');
my $log = slurp_file($standby->logfile);
unlike($log, qr/inconsistent page found|PANIC/, 'standby: wal_consistency_checking found nothing');
$standby->stop;
$primary->stop;

# with data checksums
my $ck = new_primary('abt_cc_checksums', '', '--data-checksums');
is($ck->safe_psql('postgres', 'SHOW data_checksums'), 'on', 'checksums are on');
run_cycles($ck, 'checksums');
$ck->stop;

done_testing();
