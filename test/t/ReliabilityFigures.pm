# Figures files of the reliability suites (format in test/RELIABILITY.md;
# test/reliability-report turns them into that file).
#
#   use ReliabilityFigures;
#   write_figures(suite => '010_pg_dump', title => 'pg_dump and restore',
#                 pg => $node->safe_psql('postgres', 'SHOW server_version'),
#                 status => 'pass', describe => ['what it does'],
#                 figures => [['rows checked', 1234], ['dumps restored', 3]],
#                 notes => []);
#
# The file goes to $ENV{ABTREE_FIGURES_DIR}, else figures/ in the working
# directory (the build directory under make check-tap).
package ReliabilityFigures;
use strict;
use warnings;
use File::Path qw(make_path);
use POSIX qw(strftime);
use Exporter 'import';
our @EXPORT = qw(write_figures);

sub write_figures
{
	my (%a) = @_;
	my $dir = $ENV{ABTREE_FIGURES_DIR} // 'figures';
	make_path($dir);
	my ($pg) = split / /, $a{pg};
	my ($major) = split /\./, $pg;
	my $path = "$dir/$a{suite}.pg$major.txt";
	open(my $fh, '>', $path) or die "$path: $!";
	print $fh "suite: $a{suite}\ntitle: $a{title}\npg: $pg\n";
	print $fh 'date: ', strftime('%Y-%m-%dT%H:%M:%SZ', gmtime), "\n";
	print $fh "status: $a{status}\n";
	print $fh "describe: $_\n" for @{ $a{describe} // [] };
	print $fh "figure: $_->[0] = $_->[1]\n" for @{ $a{figures} // [] };
	for my $note (@{ $a{notes} // [] })
	{
		(my $n = $note) =~ s/\n/ /g;
		print $fh "note: $n\n";
	}
	close $fh;
	return $path;
}

1;
