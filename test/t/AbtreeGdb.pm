# gdb attached to a backend, for the TAP suites that stop a backend at an
# exact point (023, 032): driven through its standard input under
# IPC::Run.  No debug information needed: breakpoints go on function
# addresses (break *name), conditions read the argument registers.  Also
# the pieces around it: a session that waits to be let go, and the WAL of
# an index.
package AbtreeGdb;
use strict;
use warnings;
use Config;
use IPC::Run;
use PostgreSQL::Test::Utils;
use Time::HiRes qw(usleep);
use AbtreeBg;
use Exporter 'import';
our @EXPORT = qw(gdb_skip_reason gdb_arg_regs gdb_start gdb_cmd gdb_stop gdb_wait_hit
  go_session go index_wal index_wal_kinds);

my $gdb_bin;
for my $d (split(/:/, $ENV{PATH} // ''), '/usr/bin')
{
	if (-x "$d/gdb") { $gdb_bin = "$d/gdb"; last; }
}

# The registers of the first two integer arguments at a function's entry
my %regs = (x86_64 => [ '$rdi', '$rsi' ], aarch64 => [ '$x0', '$x1' ]);
my ($arch) = $Config{archname} =~ /^([^-]+)/;

# Why these tests cannot run here, or undef
sub gdb_skip_reason
{
	return 'gdb is not installed' unless $gdb_bin;
	return "argument registers of $Config{archname} unknown" unless $regs{$arch};
	return undef;
}

# ($first, $second): the registers of a function's first two arguments
sub gdb_arg_regs
{
	return @{ $regs{$arch} };
}

sub gdb_start
{
	my ($pid) = @_;
	my %g = (in => '', out => '');
	$g{h} = IPC::Run::start([ $gdb_bin, '-q', '-nx', '-p', $pid ],
		'<', \$g{in}, '>', \$g{out}, '2>&1', IPC::Run::timeout(300));
	return \%g;
}

# send commands, then wait until the output matches $re (at most $secs)
sub gdb_cmd
{
	my ($g, $cmds, $re, $secs) = @_;
	$g->{in} .= $cmds;
	my $deadline = time + ($secs // 60);
	for (;;)
	{
		eval { $g->{h}->pump_nb; 1 } or last;
		return 1 if !defined $re || $g->{out} =~ $re;
		last if !$g->{h}->pumpable || time >= $deadline;
		usleep(50_000);
	}
	return defined $re ? $g->{out} =~ $re : 1;
}

# Wait until gdb's output matches $re (a breakpoint hit), at most $secs;
# false if it did not, or the session $bg ended first
sub gdb_wait_hit
{
	my ($g, $bg, $re, $secs) = @_;
	my $deadline = time + $secs;
	while (time < $deadline)
	{
		gdb_cmd($g, '', undef, 0);
		return 1 if $g->{out} =~ $re;
		$bg->{h}->pump_nb;
		return 0 unless $bg->{h}->pumpable;
		usleep(50_000);
	}
	return 0;
}

# detach, letting the backend go on
sub gdb_stop
{
	my ($g) = @_;
	return unless $g && $g->{h};
	if ($g->{h}->pumpable)
	{
		# a running inferior (no breakpoint hit): interrupt it first
		if ($g->{out} =~ /Continuing\./ && $g->{out} !~ /(Temporary breakpoint|Breakpoint) \d+,/)
		{
			$g->{h}->signal('INT');
			gdb_cmd($g, '', qr/SIGINT|signal SIGINT|Interrupt/, 10);
		}
		gdb_cmd($g, "delete\ndetach\nquit\n", undef, 1);
		my $deadline = time + 10;
		while ($g->{h}->pumpable && time < $deadline)
		{
			eval { $g->{h}->pump_nb };
			usleep(50_000);
		}
	}
	if ($g->{h}->pumpable) { $g->{h}->kill_kill; }
	else { eval { $g->{h}->finish }; }
	return;
}

# A background session named $app that waits for go($node, $app) and then
# runs $sql: returns the session and its backend's pid (undef if it did
# not connect within $secs)
sub go_session
{
	my ($node, $app, $sql, $secs) = @_;
	my $dir = $node->basedir;
	my $bg = bg_psql($node, $app, qq{
SET application_name = '$app';
DO \$\$ BEGIN
  WHILE pg_stat_file('$dir/go_$app', true) IS NULL LOOP PERFORM pg_sleep(0.05); END LOOP;
END \$\$;
$sql});
	return ($bg, undef)
	  unless wait_for_sql($node,
		qq{SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = '$app'}, $secs);
	return ($bg, $node->safe_psql('postgres',
		qq{SELECT pid FROM pg_stat_activity WHERE application_name = '$app'}));
}

sub go
{
	my ($node, $app) = @_;
	PostgreSQL::Test::Utils::append_to_file($node->basedir . "/go_$app", '');
	return;
}

# pg_waldump's output for the index $idx from $start to $end (LSNs), and
# its errors; the segment is switched first, so that the dump reaches $end
sub index_wal
{
	my ($node, $idx, $start, $end) = @_;
	my $rel = $node->safe_psql('postgres', qq{
SELECT coalesce(nullif(reltablespace, 0), (SELECT dattablespace FROM pg_database WHERE datname = current_database()))
       || '/' || (SELECT oid FROM pg_database WHERE datname = current_database()) || '/' || pg_relation_filenode(oid)
  FROM pg_class WHERE relname = '$idx'});
	$node->safe_psql('postgres', 'SELECT pg_switch_wal()');
	my ($out, $err) = ('', '');
	IPC::Run::run([ 'pg_waldump', '-p', $node->data_dir . '/pg_wal', '-s', $start, '-e', $end,
		'--relation', $rel ], '>', \$out, '2>', \$err);
	return ($out, $err);
}

# How many records of each kind (hex, as pg_waldump prints a custom
# record it cannot name: "UNKNOWN (a0)") the index $idx got from $start to
# $end: a hash by kind, and pg_waldump's errors.
sub index_wal_kinds
{
	my ($node, $idx, $start, $end, @kinds) = @_;
	my ($wal, $err) = index_wal($node, $idx, $start, $end);
	my %n;
	for my $kind (@kinds)
	{
		$n{$kind} = () = $wal =~ /UNKNOWN \($kind\)/g;
	}
	return (\%n, $err);
}

1;
