# Upgrading from 0.1 (README, "Upgrading"): CREATE EXTENSION abtree VERSION
# '0.1' from the frozen 0.1 install script, data and indexes under it, then
# ALTER EXTENSION abtree UPDATE.
#  - The updated extension's objects are a fresh 0.2 install's, object by
#    object (pg_dump --binary-upgrade dumps extension members one by one;
#    the blocks are compared as sets, so creation order does not matter).
#  - Indexes, sketches, statistics objects and chll values made before the
#    update keep working after it; a chll value stored in format 1 (as the
#    0.1 library wrote them) is read, and written back in format 2.
#  - An index whose metapage says on-disk version 1 (a 0.1 library's build:
#    simulated by writing the version into the metapage) is refused by
#    scans, inserts and VACUUM with a REINDEX hint, and works after REINDEX.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use AbtreeCheck;

my $node = abtree_node('abt_upgrade');

is($node->safe_psql('postgres',
	q{SELECT string_agg(version, ',' ORDER BY version) FROM pg_available_extension_versions
	   WHERE name = 'abtree'}), '0.1,0.2', 'versions 0.1 and 0.2 are installable');
is($node->safe_psql('postgres',
	q{SELECT string_agg(path::text, ';') FROM pg_extension_update_paths('abtree')
	   WHERE source = '0.1' AND target = '0.2'}), '0.1--0.2', 'an update path from 0.1 to 0.2');

# ---- the catalog: 0.1 updated against a fresh 0.2 ----
$node->safe_psql('postgres', q{
CREATE DATABASE fresh;
CREATE DATABASE updated;
CREATE DATABASE old;
});
$node->safe_psql('fresh', 'CREATE EXTENSION abtree');
$node->safe_psql('updated', q{CREATE EXTENSION abtree VERSION '0.1'});
is($node->safe_psql('updated', q{SELECT extversion FROM pg_extension WHERE extname = 'abtree'}),
	'0.1', 'installed as 0.1');
$node->safe_psql('updated', 'ALTER EXTENSION abtree UPDATE');
is($node->safe_psql('updated', q{SELECT extversion FROM pg_extension WHERE extname = 'abtree'}),
	'0.2', 'updated to 0.2');

# A binary-upgrade schema dump, as a sorted list of its TOC blocks without
# the OIDs it preserves: what the database's objects are, not their order.
sub catalog_blocks
{
	my ($db) = @_;
	my $dump;
	IPC::Run::run([ 'pg_dump', '--schema-only', '--binary-upgrade', '-d', $node->connstr($db) ],
		'>', \$dump)
	  or die "pg_dump of $db failed";
	my @blocks;
	for my $block (split /\n--\n-- (?=Name: |TOC entry )/, $dump)
	{
		$block = join "\n",
		  grep { !/binary_upgrade_set_next|binary_upgrade_set_record_init_privs|^\\(?:un)?restrict |^-- Dumped|^SET |^SELECT pg_catalog\.set_config/ }
		  split /\n/, $block;
		$block =~ s/\n+$//;
		push @blocks, $block if $block =~ /\S/;
	}
	return sort @blocks;
}
my @fresh = catalog_blocks('fresh');
my @updated = catalog_blocks('updated');
my %in_fresh = map { $_ => 1 } @fresh;
my %in_updated = map { $_ => 1 } @updated;
my @missing = grep { !$in_updated{$_} } @fresh;
my @extra = grep { !$in_fresh{$_} } @updated;
ok(@fresh > 100, scalar(@fresh) . ' objects in a fresh install');
is(scalar(@missing), 0, 'the update creates everything a fresh 0.2 install has')
  or diag("missing after the update:\n" . join("\n----\n", @missing[0 .. ($#missing < 5 ? $#missing : 5)]));
is(scalar(@extra), 0, 'and nothing else')
  or diag("only after the update:\n" . join("\n----\n", @extra[0 .. ($#extra < 5 ? $#extra : 5)]));

# The flat bytes of a chll value's text form (packed: src/hll/README,
# "Packed form"): the header without the packed flag, then the runs of
# zero bytes and literal bytes.
sub chll_flat
{
	my ($text) = @_;
	my $b = pack('H*', substr($text, 2));
	my $flat = substr($b, 0, 24);
	my $p = 24;
	my $varint = sub {
		my ($v, $shift) = (0, 0);
		while (1)
		{
			my $c = ord(substr($b, $p++, 1));
			$v |= ($c & 0x7f) << $shift;
			return $v if $c < 0x80;
			$shift += 7;
		}
	};
	substr($flat, 2, 1) = chr(ord(substr($flat, 2, 1)) & 0x7f);
	while ($p < length($b))
	{
		my $zeros = $varint->();
		my $nlit = $varint->();
		$flat .= ("\0" x $zeros) . substr($b, $p, $nlit);
		$p += $nlit;
	}
	return $flat;
}

# ---- data and indexes made under 0.1, used after the update ----
$node->safe_psql('old', q{
CREATE EXTENSION abtree VERSION '0.1';
CREATE TABLE t (id int, k int, w int NOT NULL, g text);
INSERT INTO t SELECT i, i % 997, i % 13, 'g' || (i % 50) FROM generate_series(1, 20000) i;
CREATE INDEX t_k ON t USING abtree (k);
CREATE INDEX t_kw ON t USING abtree (k) INCLUDE (w) WITH (weight_column = 'w');
CREATE INDEX t_old ON t USING abtree (id);
CREATE INDEX t_pb ON t USING pbtree (g, k);
CREATE TABLE sk (g text PRIMARY KEY, c chll);
INSERT INTO sk SELECT g, chll_agg(k) FROM t GROUP BY g;
CREATE STATISTICS t_st (ndistinct) ON k, g FROM t;
ANALYZE t;
SET abtree.swr_index = 't_k';
SELECT abtree_ndistinct_store('t_st', 5000, 0.5);
});
# a chll value as the 0.1 library stored it: format 1, the first 22552
# bytes of 512 buckets (no exact set), version byte 1, no set flag (0.1 has
# no cast from bytea to chll: this one forges its bytes)
my $v1 = substr(chll_flat($node->safe_psql('old', 'SELECT chll_agg(k) FROM t WHERE k < 300')), 0, 22552);
substr($v1, 0, 1) = chr(1);
substr($v1, 2, 1) = chr(ord(substr($v1, 2, 1)) & 1);
$node->safe_psql('old', "CREATE CAST (bytea AS chll) WITHOUT FUNCTION;
INSERT INTO sk VALUES ('v1', decode('" . unpack('H*', $v1) . "', 'hex')::chll);
DROP CAST (bytea AS chll);");
my $answers = q{
SET enable_seqscan = off;
SELECT count(*), sum(k) FROM t WHERE k BETWEEN 100 AND 300;
SELECT abtree_range_weight('t_k', 10, 20), abtree_range_weight('t_kw', 10, 20);
SELECT entries, total_weight FROM abtree_stats('t_kw');
SELECT round(chll_estimate(abtree_sketch('t_k', 1)));
SELECT string_agg(g || '=' || round(chll_estimate(c)), ',' ORDER BY g) FROM sk;
SELECT count(*) FROM t WHERE g = 'g7' AND k > 500;
SELECT n_distinct FROM pg_stats_ext WHERE statistics_name = 't_st';
SET abtree.swr_index = 't_k';
SELECT count(*) FROM t TABLESAMPLE swr(500) REPEATABLE (1);
};
my $before = $node->safe_psql('old', $answers);
my $meta = $node->safe_psql('old', q{SELECT pg_relation_filepath('t_old')});

$node->safe_psql('old', 'ALTER EXTENSION abtree UPDATE');
is($node->safe_psql('old', $answers), $before,
	'queries, weights, sketches, chll values and statistics answer as before the update');
is($node->safe_psql('old', q{SELECT octet_length(c::bytea) || ' ' || (chll_info(c)).exact_distinct
	FROM sk WHERE g = 'v1'}), '22552 false', 'the stored format-1 value is read as it is');
is($node->safe_psql('old', q{SELECT chll_estimate(c) = (SELECT chll_estimate_counters(chll_agg(k))
	FROM t WHERE k < 300) FROM sk WHERE g = 'v1'}), 't', 'its estimate is its counters\' estimate');
$node->safe_psql('old', q{UPDATE sk SET c = chll_add(c, 12345) WHERE g = 'v1'});
is($node->safe_psql('old', q{SELECT get_byte(c::bytea, 0) || ' ' || (chll_info(c)).bytes || ' '
	|| (chll_info(c)).items FROM sk WHERE g = 'v1'}), '2 38592 6061',
	'an update writes it back in format 2');
$node->safe_psql('old', q{
INSERT INTO t SELECT i, i % 997, i % 13, 'g' || (i % 50) FROM generate_series(20001, 21000) i;
DELETE FROM t WHERE id % 100 = 0;
VACUUM (INDEX_CLEANUP ON) t;
});
for my $idx (qw(t_k t_kw t_old))
{
	my ($ret, $out, $err) = $node->psql('old',
		"SELECT abtree_verify('$idx', heapallindexed => true, exact => true)");
	is($ret, 0, "$idx, built before the update, verifies after writes") or diag($err);
}
my ($ret, $out, $err) = $node->psql('old', q{SELECT pbtree_verify('t_pb', true)});
is($ret, 0, 'the pbtree index verifies') or diag($err);

# ---- indexes of other on-disk versions ----
my $checksums = $node->safe_psql('old', 'SHOW data_checksums') eq 'on';

# Write version $v into the metapage of the index whose file is $path, and
# with $log2m defined, the sketches' bucket count (0 in versions before 4).
sub write_meta_version
{
	my ($path, $v, $log2m) = @_;
	my $pgdata = $node->data_dir;
	$node->stop;
	command_ok([ 'pg_checksums', '--disable', '-D', $pgdata ],
		'checksums off to write the metapage')
	  if $checksums;
	open(my $fh, '+<:raw', "$pgdata/$path") or die "open $path: $!";
	# the metapage's version: page header (24 bytes), then magic, then version
	sysseek($fh, 24 + 4, 0) or die;
	syswrite($fh, pack('V', $v), 4) == 4 or die;
	# sketch_log2m: after root, level, flags, weight_attno, sketch_mask and
	# sketch_start (AbtMetaPageData)
	if (defined $log2m)
	{
		sysseek($fh, 24 + 28, 0) or die;
		syswrite($fh, pack('C', $log2m), 1) == 1 or die;
	}
	close($fh);
	command_ok([ 'pg_checksums', '--enable', '-D', $pgdata ], 'checksums back on') if $checksums;
	$node->start;
}

write_meta_version($meta, 1);
($ret, $out, $err) = $node->psql('old', q{SET enable_seqscan = off; SELECT count(*) FROM t WHERE id = 5});
isnt($ret, 0, 'a version-1 index is refused');
like($err, qr/index "t_old" has abtree version 1, this library reads versions 2 to 5/, 'with its version');
like($err, qr/HINT:  REINDEX the index/, 'and a REINDEX hint');
($ret, $out, $err) = $node->psql('old', q{INSERT INTO t VALUES (30000, 1, 1, 'x')});
like($err, qr/has abtree version 1/, 'inserts are refused too, not written into it');
$node->safe_psql('old', q{DELETE FROM t WHERE id % 100 = 1});
($ret, $out, $err) = $node->psql('old', q{VACUUM t});
like($err, qr/has abtree version 1/, 'and VACUUM');
$node->safe_psql('old', 'REINDEX INDEX t_old');
is($node->safe_psql('old', q{SET enable_seqscan = off; SELECT count(*) FROM t WHERE id = 5}),
	'1', 'after REINDEX it answers');
($ret, $out, $err) = $node->psql('old',
	q{SELECT abtree_verify('t_old', heapallindexed => true, exact => true)});
is($ret, 0, 'and verifies') or diag($err);

# Version 2 (before key sketches) reads as it was; a version newer than the
# library's is refused, as a version-2 library refuses version 3 (an index
# with key sketches), rather than take a key sketch for a fourth column, and
# a version-3 library refuses version 4 (sketch pages it would misplace),
# and a version-4 library refuses version 5 (posting tuples it would take
# for single entries).
$meta = $node->safe_psql('old', q{SELECT pg_relation_filepath('t_old')});
write_meta_version($meta, 2);
is($node->safe_psql('old', q{SET enable_seqscan = off; SELECT count(*) FROM t WHERE id = 5}),
	'1', 'a version-2 index is read');
($ret, $out, $err) = $node->psql('old',
	q{SELECT abtree_verify('t_old', heapallindexed => true, exact => true)});
is($ret, 0, 'and verifies') or diag($err);
# Version 3 (before sketch_buckets) had 512 buckets and a zero byte where
# version 4 keeps the count
write_meta_version($meta, 3, 0);
is($node->safe_psql('old', q{SELECT (chll_info(abtree_sketch('t_old', 1))).buckets}),
	'512', 'a version-3 index has sketches of 512 buckets');
($ret, $out, $err) = $node->psql('old',
	q{SELECT abtree_verify('t_old', heapallindexed => true, exact => true)});
is($ret, 0, 'and verifies') or diag($err);
# Version 4 (before posting tuples) reads as it was: it has none
write_meta_version($meta, 4, 9);
($ret, $out, $err) = $node->psql('old',
	q{SELECT abtree_verify('t_old', heapallindexed => true, exact => true)});
is($ret, 0, 'a version-4 index verifies') or diag($err);
write_meta_version($meta, 6);
($ret, $out, $err) = $node->psql('old', q{SET enable_seqscan = off; SELECT count(*) FROM t WHERE id = 5});
like($err, qr/index "t_old" has abtree version 6, this library reads versions 2 to 5/,
	'a newer version is refused');
$node->safe_psql('old', 'REINDEX INDEX t_old');

$node->stop;
done_testing();
