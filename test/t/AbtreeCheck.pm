# Checks shared by the abtree TAP suites.
package AbtreeCheck;
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use Test::More;
use Exporter 'import';
our @EXPORT = qw(abtree_node abtree_checked_pair create_stress_table verify_at_rest
  verify_exact_on_both verify_standby_like_primary protocol_pair same_sketches
  no_inconsistent_pages);

# A started node with abtree preloaded, autovacuum off (tests VACUUM when
# they mean to), the extension created in postgres.  %opts: init => the
# arguments of PostgreSQL::Test::Cluster::init, conf => more
# postgresql.conf lines, protocol => abtree.weight_protocol (the suites
# that pause or fail a weight pass on purpose ask for safe_page, whose
# pass it is; the default, batched, makes none).
sub abtree_node
{
	my ($name, %opts) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(%{ $opts{init} // {} });
	$node->append_conf('postgresql.conf',
		"shared_preload_libraries = 'abtree'\nautovacuum = off\n" . ($opts{conf} // '')
		  . ($opts{protocol} ? "abtree.weight_protocol = $opts{protocol}\n" : ''));
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION abtree');
	return $node;
}

# A primary with data checksums and wal_consistency_checking = 'abtree'
# (more postgresql.conf lines in $conf), $sql run on it, and a standby
# streaming from it through a slot, started from a backup taken after $sql.
# Returns (primary, standby), named $name_primary and $name_standby.
sub abtree_checked_pair
{
	my ($name, $conf, $sql) = @_;
	my $primary = abtree_node("${name}_primary",
		init => { allows_streaming => 1, extra => ['--data-checksums'] },
		conf => "wal_consistency_checking = 'abtree'\nwal_keep_size = '1GB'\n"
		  . "max_wal_size = '2GB'\n" . ($conf // ''));
	$primary->safe_psql('postgres',
		"SELECT pg_create_physical_replication_slot('standby')");
	$primary->safe_psql('postgres', $sql);
	$primary->backup('bkp');
	my $standby = PostgreSQL::Test::Cluster->new("${name}_standby");
	$standby->init_from_backup($primary, 'bkp', has_streaming => 1);
	$standby->append_conf('postgresql.conf', "primary_slot_name = 'standby'");
	$standby->start;
	return ($primary, $standby);
}

# The pair of the record-layout suites (036, 039): abtree_checked_pair with
# protocol as abtree.weight_protocol and table t with three indexes (two
# columns; weighted DESC with an INCLUDE; 2,048 sketch buckets).  Returns
# (primary, standby, the insert of 2,500 rows, NULL keys among them).
sub protocol_pair
{
	my ($name, $protocol) = @_;
	my ($primary, $standby) = abtree_checked_pair($name,
		"abtree.weight_protocol = $protocol\n", q{
CREATE TABLE t (id bigserial, k int, w int NOT NULL, pad text);
CREATE INDEX t_k ON t USING abtree (k, pad);
CREATE INDEX t_kw ON t USING abtree (k DESC) INCLUDE (w) WITH (weight_column = 'w');
CREATE INDEX t_pad ON t USING abtree (pad) WITH (sketch_buckets = 2048);
});
	my $insert = q{
INSERT INTO t (k, w, pad)
SELECT CASE WHEN i % 50 <> 0 THEN (random() * 1e6)::int END, 1 + i % 5, md5(random()::text)
  FROM generate_series(1, 2500) i};
	return ($primary, $standby, $insert);
}

# The standby, caught up, has the primary's sketch of column 1 of each index.
sub same_sketches
{
	my ($primary, $standby, $label, @indexes) = @_;
	$primary->wait_for_catchup($standby, 'replay');
	for my $idx (@indexes)
	{
		my $sk = "SELECT abtree_sketch('$idx', 1)::text";
		is($standby->safe_psql('postgres', $sk), $primary->safe_psql('postgres', $sk),
			"$label: $idx has the primary's sketch");
	}
	return;
}

# wal_consistency_checking found no page differing from its image on any node.
sub no_inconsistent_pages
{
	for my $node (@_)
	{
		ok(!$node->log_contains(qr/inconsistent page found/),
			$node->name . ': wal_consistency_checking found no inconsistent page');
	}
	return;
}

# The table of the concurrency and crash suites: t with a two-column
# abtree of small fanout (many splits) and a weighted DESC one, t_kw.
sub create_stress_table
{
	my ($node) = @_;
	$node->safe_psql('postgres', q{
CREATE TABLE t (id bigserial, k int, w int NOT NULL, pad text);
CREATE INDEX t_pad ON t USING abtree (pad, id) WITH (fillfactor = 10);
CREATE INDEX t_kw ON t USING abtree (k DESC) INCLUDE (w) WITH (weight_column = 'w');
});
	return;
}

# VACUUM t, then: each index exact and complete (heapallindexed, which
# also checks the sketches against the entries), the weighted index t_kw
# summing the live rows' weights, and the sketches counting the live rows.
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
	# the sketches count exactly the live rows' values (S1, exact after
	# recovery): t_kw's of k, t_pad's of pad and id.  The counters agree
	# with a fresh sketch's; the exact list may have been given up while
	# the table was larger (it does not come back), and if kept is exact.
	is($node->safe_psql('postgres', q{
SELECT (chll_info(abtree_sketch('t_kw', 1))).items = count(k)
   AND (chll_info(abtree_sketch('t_pad', 1))).items = count(pad)
   AND (chll_info(abtree_sketch('t_pad', 2))).items = count(id)
   AND round(chll_estimate_counters(abtree_sketch('t_pad', 2))) =
       round(chll_estimate_counters(chll_agg(id)))
   AND (NOT (chll_info(abtree_sketch('t_pad', 2))).exact_distinct OR
        chll_estimate(abtree_sketch('t_pad', 2)) = count(DISTINCT id))
  FROM t}), 't', "$label: the sketches count the live rows' values");
	return;
}

# VACUUM the table, then the index exact and complete on the primary, and
# exact on the standby once it has replayed that (I2 on both).
sub verify_exact_on_both
{
	my ($node, $standby, $table, $idx) = @_;
	$node->safe_psql('postgres', "VACUUM (INDEX_CLEANUP ON) $table");
	my ($ret, $out, $err) = $node->psql('postgres',
		"SELECT abtree_verify('$idx', heapallindexed => true, exact => true)");
	is($ret, 0, 'exact and complete after VACUUM') or diag($err);
	$node->wait_for_catchup($standby, 'replay');
	($ret, $out, $err) = $standby->psql('postgres', "SELECT abtree_verify('$idx', exact => true)");
	is($ret, 0, 'the standby is exact after VACUUM') or diag($err);
	return;
}

# On a standby that has replayed the primary's WAL: each index verifies (in
# at-least mode: a standby cannot take exact mode's ShareLock) and has the
# primary's weights and entries, and an index scan of t over keys lo .. hi
# answers as on the primary.
sub verify_standby_like_primary
{
	my ($primary, $standby, $lo, $hi, @indexes) = @_;
	for my $idx (@indexes)
	{
		my ($ret, $out, $err) = $standby->psql('postgres',
			"SELECT abtree_verify('$idx', exact => false)");
		is($ret, 0, "standby: $idx verifies") or diag($err);
		my $stats = "SELECT total_weight, entries FROM abtree_stats('$idx')";
		is($standby->safe_psql('postgres', $stats), $primary->safe_psql('postgres', $stats),
		   "standby: $idx has the primary's weights and entries");
	}
	my $q = qq{SET enable_seqscan = off; SET enable_bitmapscan = off;
			  SELECT count(*), sum(id) FROM t WHERE k BETWEEN $lo AND $hi};
	is($standby->safe_psql('postgres', $q), $primary->safe_psql('postgres', $q),
		'standby answers an index scan like the primary');
	return;
}

1;
