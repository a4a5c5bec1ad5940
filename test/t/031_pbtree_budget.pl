# The buffer budget that all pbtree indexes of a server share
# (src/pbtree/pbtbudget.c), on a cluster of its own: in an installcheck
# cluster other pbtree indexes, in any database, count against the same
# budget, so these checks cannot live in the regress suite.
#  - One index under the budget does not seal; a second one that takes the
#    sum over it seals, in another database too.
#  - A dropped index, and the indexes of a dropped database, stop counting
#    at once.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use AbtreeCheck;

my $node = abtree_node('pbt_budget', conf => "abtree.pbtree_merge_threshold = 0\n");
$node->safe_psql('postgres', 'CREATE DATABASE other');
$node->safe_psql('other', 'CREATE EXTENSION abtree');
for my $db (qw(postgres other))
{
	$node->safe_psql($db, q{
CREATE TABLE pbd1 (k int4);
CREATE TABLE pbd2 (k int4);
CREATE TABLE pbd3 (k int4);
CREATE INDEX pbd1_k ON pbd1 USING pbtree (k);
CREATE INDEX pbd2_k ON pbd2 USING pbtree (k);
CREATE INDEX pbd3_k ON pbd3 USING pbtree (k);
});
}

# 3000 ascending keys fill 9 leaf pages of a mutable partition (the last
# leaf splits at the fillfactor, 90%; 2000 keys made 9 pages while it split
# in the middle)
my $fill = q{SET abtree.pbtree_buffer_budget = 12;
INSERT INTO %s SELECT g FROM generate_series(1, 3000) g;
SELECT string_agg(state || ':' || leaf_pages, ',' ORDER BY state) FROM pbtree_stats('%s_k')};
sub fill
{
	my ($db, $table) = @_;
	return $node->safe_psql($db, sprintf($fill, $table, $table));
}

is(fill('postgres', 'pbd1'), 'mutable:9', 'alone under the budget of 12 pages: no seal');
like(fill('postgres', 'pbd2'), qr/sealed/, '9 + 9 pages are over 12: the second index seals');
$node->safe_psql('postgres', 'DROP TABLE pbd1, pbd2');
is(fill('postgres', 'pbd3'), 'mutable:9', 'dropped indexes stop counting at once');

# pbd3 of postgres holds 9 pages: an index of another database goes over
like(fill('other', 'pbd1'), qr/sealed/, 'indexes of another database share the budget');
$node->safe_psql('other', 'DROP TABLE pbd1');
$node->safe_psql('postgres', 'DROP DATABASE other');
$node->safe_psql('postgres', q{CREATE TABLE pbd4 (k int4);
CREATE INDEX pbd4_k ON pbd4 USING pbtree (k);});
# 9 (pbd3) + 9 is over 12 again: the larger or fair-share one seals; pbd4
# is the one inserting, and holds its fair share
like(fill('postgres', 'pbd4'), qr/sealed/, 'two indexes of one database over the budget');

$node->safe_psql('postgres', q{CREATE DATABASE gone;});
$node->safe_psql('gone', q{CREATE EXTENSION abtree; CREATE TABLE g (k int4);
CREATE INDEX g_k ON g USING pbtree (k);});
$node->safe_psql('postgres', 'DROP TABLE pbd4, pbd3');
$node->safe_psql('gone', q{SET abtree.pbtree_buffer_budget = 12;
INSERT INTO g SELECT g FROM generate_series(1, 3000) g});
$node->safe_psql('postgres', 'DROP DATABASE gone');
$node->safe_psql('postgres', q{CREATE TABLE pbd5 (k int4);
CREATE INDEX pbd5_k ON pbd5 USING pbtree (k);});
is(fill('postgres', 'pbd5'), 'mutable:9', 'a dropped database\'s indexes stop counting at once');

$node->stop;
done_testing();
