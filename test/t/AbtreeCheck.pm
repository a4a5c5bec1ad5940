# Checks shared by the abtree TAP suites.
package AbtreeCheck;
use strict;
use warnings;
use Test::More;
use Exporter 'import';
our @EXPORT = qw(verify_at_rest);

# VACUUM t, then: each index exact and complete (heapallindexed), and the
# weighted index t_kw summing the live rows' weights.
sub verify_at_rest
{
	my ($node, $label, @indexes) = @_;
	$node->safe_psql('postgres', 'VACUUM (INDEX_CLEANUP ON) t');
	for my $idx (@indexes)
	{
		my ($ret, $out, $err) = $node->psql('postgres',
			"SELECT abtree_verify('$idx', heapallindexed => true)");
		is($ret, 0, "$label: $idx exact and complete after VACUUM") or diag($err);
	}
	is($node->safe_psql('postgres', "SELECT total_weight FROM abtree_stats('t_kw')"),
	   $node->safe_psql('postgres', 'SELECT coalesce(sum(w), 0) FROM t'),
	   "$label: the weighted index sums the live rows' weights");
	return;
}

1;
