# One record per insert (issue 22, src/abtree/README "One record per
# insert"): under abtree.weight_protocol = path_exclusive an insert whose
# leaf has room puts its entry in valid, adds its weight on the whole path
# held exclusively and changes the sketches in one critical section, with
# one INSERT_VALID record instead of INSERT_LEAF and MARK_VALID.  Inserts
# that split still take the two records.
#
# The primary runs with wal_consistency_checking = 'abtree' and data
# checksums; safe_page inserts are mixed in.  The records are counted in
# pg_waldump's output (a build without INSERT_VALID writes none), a
# streaming standby replays them, the primary crashes after more of them,
# and each time the indexes verify, exactly after VACUUM, with no page
# differing from the primary's images.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use AbtreeCheck;
use AbtreeGdb qw(index_wal_kinds);

my ($primary, $standby, $insert) = protocol_pair('one_record', 'path_exclusive');
my $insert_safe = "SET abtree.weight_protocol = safe_page; $insert";

my $start = $primary->lsn('insert');
$primary->safe_psql('postgres', $insert);
my $end = $primary->lsn('insert');

# pg_waldump names the custom records by number: INSERT_LEAF (10),
# PAGES (30: a root split's new pages), MARK_VALID (50), SPLIT (70),
# INSERT_VALID (90)
my ($n, $err) = index_wal_kinds($primary, 't_k', $start, $end, qw(10 30 50 70 90));
my %n = %$n;
note("t_k: INSERT_VALID $n{90}, INSERT_LEAF $n{10}, MARK_VALID $n{50}, SPLIT $n{70}, PAGES $n{30}");
is($n{90} + $n{10}, 2500, 'one INSERT_VALID or INSERT_LEAF per row') or diag($err);
cmp_ok($n{90}, '>=', 2250, 'most inserts take one record');
is($n{50}, $n{10}, 'the others have their MARK_VALID');
cmp_ok($n{10}, '<=', $n{70} + $n{30}, 'only inserts that split take two records');
cmp_ok($primary->safe_psql('postgres',
		"SELECT value::bigint FROM abtree_status() WHERE item = 'insert_one_record'"),
	'>=', 3 * 2250, 'abtree_status counts them');

# both protocols, then a standby that replayed them all
$primary->safe_psql('postgres', "$insert; $insert_safe; $insert");
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
verify_standby_like_primary($primary, $standby, 200000, 300000, qw(t_k t_kw t_pad));
same_sketches($primary, $standby, 'standby', qw(t_k t_pad));

# a crash after more of them: recovery replays them from the checkpoint
$primary->safe_psql('postgres', "CHECKPOINT; $insert; $insert_safe; $insert");
$primary->stop('immediate');
$primary->start;
is($primary->safe_psql('postgres', 'SELECT count(*) FROM t'), '17500',
	'after the crash: every committed row is there');
verify_exact_on_both($primary, $standby, 't', $_) for qw(t_k t_kw t_pad);

no_inconsistent_pages($primary, $standby);
done_testing();
