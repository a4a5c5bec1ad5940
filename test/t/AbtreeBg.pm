# Background psql sessions for the reliability TAP suites (010-015): a
# script run by psql in the background (IPC::Run), whose output and errors
# the test reads when it ends.  Works with the PostgreSQL::Test modules of
# 15 and 18 alike (BackgroundPsql.pm is 16+).
package AbtreeBg;
use strict;
use warnings;
use IPC::Run;
use PostgreSQL::Test::Utils;
use Time::HiRes qw(usleep);
use Exporter 'import';
our @EXPORT = qw(bg_psql bg_finish bg_wait_file wait_for_sql bg_hold_advisory);

my $seq = 0;

# bg_psql($node, $tag, $script, db => 'postgres', verbosity => 'sqlstate'):
# start psql on the script (unaligned, tuples only, errors as SQLSTATEs
# unless another VERBOSITY is asked for); returns a handle.
sub bg_psql
{
	my ($node, $tag, $script, %opts) = @_;
	my $file = $node->basedir . "/bg_${tag}_" . ++$seq . '.sql';
	PostgreSQL::Test::Utils::append_to_file($file,
		"\\set VERBOSITY " . ($opts{verbosity} // 'sqlstate') . "\n" . $script);
	my %bg = (tag => $tag, out => '', err => '');
	$bg{h} = IPC::Run::start(
		[ 'psql', '-XAtq', '-h', $node->host, '-p', $node->port,
		  '-f', $file, $opts{db} // 'postgres' ],
		'<', \undef, '>', \$bg{out}, '2>', \$bg{err});
	return \%bg;
}

# Wait for the session to end (at most $timeout seconds, then kill it);
# returns its exit status (0: the script ran to its end).
sub bg_finish
{
	my ($bg, $timeout) = @_;
	my $deadline = time + ($timeout // $PostgreSQL::Test::Utils::timeout_default);
	while ($bg->{h}->pumpable && time < $deadline)
	{
		$bg->{h}->pump_nb;
		usleep(50_000);
	}
	if ($bg->{h}->pumpable)
	{
		$bg->{h}->kill_kill;
		return -1;
	}
	$bg->{h}->finish;
	return $bg->{h}->result(0);
}

# Wait until a file exists (a session's \! touch), at most $timeout seconds.
sub bg_wait_file
{
	my ($file, $timeout) = @_;
	$timeout //= $PostgreSQL::Test::Utils::timeout_default;
	for (my $i = 0; !-e $file; $i++)
	{
		return 0 if $i > $timeout * 10;
		usleep(100_000);
	}
	return 1;
}

# bg_hold_advisory($node, $tag, $dir, $key): a session that takes advisory
# lock $key, touches "$dir/held$tag", and keeps the lock until the file
# "$dir/release$tag" appears (what abtree.debug_pass_pause waits for).
# Returns its handle; wait for the held file before relying on the lock.
sub bg_hold_advisory
{
	my ($node, $tag, $dir, $key) = @_;
	return bg_psql($node, "hold$tag", qq{
SELECT pg_advisory_lock($key);
\\! touch $dir/held$tag
DO \$\$ BEGIN
  WHILE pg_stat_file('$dir/release$tag', true) IS NULL LOOP PERFORM pg_sleep(0.05); END LOOP;
END \$\$;
SELECT pg_advisory_unlock($key);
});
}

# Poll until the query returns 't' (at most $timeout seconds).
sub wait_for_sql
{
	my ($node, $sql, $timeout) = @_;
	$timeout //= $PostgreSQL::Test::Utils::timeout_default;
	for (my $i = 0; $i < $timeout * 10; $i++)
	{
		return 1 if $node->safe_psql('postgres', $sql) eq 't';
		usleep(100_000);
	}
	return 0;
}

1;
