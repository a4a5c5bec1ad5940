# gdb attached to a backend, for the TAP suites that stop a backend at an
# exact point (023, 032): driven through its standard input under
# IPC::Run.  No debug information needed: breakpoints go on function
# addresses (break *name), conditions read the argument registers.
package AbtreeGdb;
use strict;
use warnings;
use Config;
use IPC::Run;
use Time::HiRes qw(usleep);
use Exporter 'import';
our @EXPORT = qw(gdb_skip_reason gdb_arg_regs gdb_start gdb_cmd gdb_stop);

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

1;
