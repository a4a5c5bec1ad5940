# Statement cancel (pg_cancel_backend) and backend termination
# (pg_terminate_backend) of an insert parked in its weight pass
# (abtree.debug_pass_pause, as in test/isolation/specs/abtree_weight_pass.spec),
# on each level of a three-level tree, while another session inserts around
# it: the victim gets a clean error, the server stays up, the stored
# weights only overcount (abtree_verify exact => false) until VACUUM, and
# after VACUUM every index verifies exact and complete and no weight is
# lost (the weighted index sums the live rows' weights).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use AbtreeCheck;
use AbtreeBg;

my $node = abtree_node('abt_cancel', protocol => 'safe_page');
my $dir = $node->basedir;
$node->safe_psql('postgres', q{
CREATE FUNCTION wp_pad(i int) RETURNS text IMMUTABLE LANGUAGE sql AS
  $$ SELECT string_agg(md5(i::text || '-' || j::text), '') FROM generate_series(1, 20) j $$;
CREATE TABLE t (k int, w int NOT NULL, pad text);
CREATE INDEX t_kp ON t USING abtree (k, pad);
CREATE INDEX t_kw ON t USING abtree (k) INCLUDE (w) WITH (weight_column = 'w');
INSERT INTO t SELECT i * 1000, 1 + i % 9, wp_pad(i * 1000) FROM generate_series(1, 300) i;
});
is($node->safe_psql('postgres', "SELECT height FROM abtree_stats('t_kp')"), '3',
	'the wide-key index has three levels');
my $start_time = $node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');

my $cycle = 0;
for my $how ('cancel', 'terminate')
{
	for my $level (0, 1)
	{
		$cycle++;
		# the holder keeps advisory lock 4242 until the release file appears
		my $holder = bg_hold_advisory($node, $cycle, $dir, 4242);
		ok(bg_wait_file("$dir/held$cycle"), "$how/level $level: the lock is held");
		my $key = 1000 * $cycle + 500;
		my $victim = bg_psql($node, "victim$cycle", qq{
SET application_name = 'victim$cycle';
SET abtree.debug_pass_pause = 4242;
SET abtree.debug_pass_pause_level = $level;
INSERT INTO t VALUES ($key, 7, wp_pad($key));
SELECT 'survived';
});
		ok(wait_for_sql($node, qq{SELECT count(*) = 1 FROM pg_stat_activity
  WHERE application_name = 'victim$cycle' AND wait_event_type = 'Lock' AND wait_event = 'advisory'}),
			"$how/level $level: the insert waits in its weight pass");
		# others insert around it (splits near the parked pass)
		$node->safe_psql('postgres', qq{INSERT INTO t
  SELECT $key + i, 1 + i % 5, wp_pad($key + i) FROM generate_series(1, 40) i});
		my $fn = $how eq 'cancel' ? 'pg_cancel_backend' : 'pg_terminate_backend';
		is($node->safe_psql('postgres', qq{SELECT $fn(pid) FROM pg_stat_activity
  WHERE application_name = 'victim$cycle'}), 't', "$how/level $level: $fn");
		bg_finish($victim, 60);
		if ($how eq 'cancel')
		{
			like($victim->{err}, qr/ERROR:  57014/, "cancel/level $level: the insert is canceled (57014)");
			like($victim->{out}, qr/survived/, "cancel/level $level: the session goes on");
		}
		else
		{
			like($victim->{err}, qr/FATAL:  57P01|server closed the connection/,
				"terminate/level $level: the backend is terminated (57P01)");
			unlike($victim->{out}, qr/survived/, "terminate/level $level: the session is gone");
		}
		PostgreSQL::Test::Utils::append_to_file("$dir/release$cycle", '');
		bg_finish($holder, 60);
		is($node->safe_psql('postgres', 'SELECT 1'), '1', "$how/level $level: the server is up");
		# before VACUUM the weights may only overcount
		for my $idx (qw(t_kp t_kw))
		{
			my ($ret, $out, $err) = $node->psql('postgres',
				"SELECT abtree_verify('$idx', exact => false)");
			is($ret, 0, "$how/level $level: $idx never undercounts") or diag($err);
		}
		$node->safe_psql('postgres', 'VACUUM (INDEX_CLEANUP ON) t');
		for my $idx (qw(t_kp t_kw))
		{
			my ($ret, $out, $err) = $node->psql('postgres',
				"SELECT abtree_verify('$idx', heapallindexed => true, exact => true)");
			is($ret, 0, "$how/level $level: $idx exact and complete after VACUUM") or diag($err);
		}
		is($node->safe_psql('postgres', q{SELECT (SELECT total_weight FROM abtree_stats('t_kw')) = sum(w)
  AND (SELECT total_weight FROM abtree_stats('t_kp')) = count(*) FROM t}), 't',
			"$how/level $level: no weight lost, none left over");
		is($node->safe_psql('postgres', "SELECT count(*) FROM t WHERE k = $key"), '0',
			"$how/level $level: the interrupted row is not there");
	}
}
is($node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()'), $start_time,
	'no crash restart in any cycle');
ok(!$node->log_contains('terminated by signal|TRAP|PANIC'), 'no backend crashed');
my $rows = $node->safe_psql('postgres', 'SELECT count(*) FROM t');
note("$cycle cycles, rows checked: $rows");

done_testing();
