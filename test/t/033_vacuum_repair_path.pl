# VACUUM's repair of a downlink to an internal page must bring the pages
# above it up to date in WAL too (src/abtree/README, "Standbys", the
# third kind of record): the repair sets the downlink to the child's
# weight as the primary has it, adds of passes in flight included, which
# the WAL of the pages above need not have.  A standby replaying a repair
# record that named only the parent saw the parent heavier than its own
# downlink, a bias for its draws, until VACUUM's repair of the level above
# arrived.  The fix (SET_WEIGHT names the pages above the parent, and redo
# recomputes them) had no test: VACUUM strips adds in flight bottom-up, so
# the state needs a pass that adds below a level between VACUUM's repairs
# of that level and of the one above, and VACUUM had no pause point there.
# abtree.debug_repair_pause gives it one.
#
# A weighted index of four levels: root -> Q (level 2) -> P (level 1).
#  - F, of weight 1, fails after its add on Q's downlink to P: the root's
#    downlink to Q and Q's to P overcount by 1;
#  - VACUUM repairs level 1 (nothing to do below P) and waits;
#  - R, of weight 100, fails after its last add: every downlink on its
#    path carries 100 in flight, none of it in WAL;
#  - VACUUM repairs level 2: Q's downlink to P becomes P's weight, R's 100
#    included, and waits before the root's level.
# The standby (checking every abtree record's replay) must then show no
# downlink lighter than its child: before the fix the root's downlink to
# Q stayed at WAL's old weight, 100 below Q's (Downlink to block 28 (level
# 2) has weight 295, less than the block's 395).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use AbtreeCheck;
use AbtreeBg;

my $timeout = 60;
my $key = 5600;		# VACUUM waits for 5601, 5602, 5603 before levels 1, 2, 3

my $node = abtree_node('abt_vacuum_repair_path', protocol => 'safe_page',
	init => { allows_streaming => 1, extra => ['--data-checksums'] },
	conf => "bgwriter_lru_maxpages = 0\ncheckpoint_timeout = '1h'\nmax_wal_size = '1GB'\n"
	  . "wal_consistency_checking = 'abtree'\n");
my $dir = $node->basedir;

# 640-byte pads, 700 rows in key order: four levels (TAP 027); keys 1400
# to 1460 go to the first leaf, under the first level-1 and level-2 pages
$node->safe_psql('postgres', q{
CREATE FUNCTION vr_pad(i int) RETURNS text IMMUTABLE LANGUAGE sql AS
  $$ SELECT string_agg(md5(i::text || '-' || j::text), '') FROM generate_series(1, 20) j $$;
CREATE TABLE vr (k int, w int NOT NULL, pad text);
-- fillfactor 50: appends split pages in the middle, which the shapes here assume
CREATE INDEX vr_idx ON vr USING abtree (k, pad) INCLUDE (w) WITH (weight_column = 'w', fillfactor = 50);
INSERT INTO vr SELECT i * 1000, 1, vr_pad(i * 1000) FROM generate_series(1, 700) i;
});
is($node->safe_psql('postgres', q{SELECT height FROM abtree_stats('vr_idx')}), '4',
	'vr_idx has four levels');

$node->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('abt_vacuum_repair_path_standby');
$standby->init_from_backup($node, 'b', has_streaming => 1);
$standby->start;

# After a checkpoint one insert down the path gives its pages their images
# (the root a hint image, the others PATH records), so that the adds below
# stay out of WAL.
$node->safe_psql('postgres', 'CHECKPOINT');
$node->safe_psql('postgres', q{INSERT INTO vr VALUES (1400, 1, vr_pad(1400))});

my ($ret, $out, $err) = $node->psql('postgres', q{
SET abtree.debug_pass_error_level = 1;
INSERT INTO vr VALUES (1450, 1, vr_pad(1450));
});
like($err, qr/stopped after its add above level 1/, 'F fails after its add on Q');

my $hold2 = bg_hold_advisory($node, 2, $dir, $key + 2);
my $hold3 = bg_hold_advisory($node, 3, $dir, $key + 3);
ok(bg_wait_file("$dir/held2", $timeout) && bg_wait_file("$dir/held3", $timeout),
	'the advisory locks of levels 2 and 3 are held');
my $vac = bg_psql($node, 'vac', qq{
SET application_name = 'repair_vac';
SET abtree.debug_repair_pause = $key;
VACUUM (INDEX_CLEANUP ON) vr;
SELECT 'vacuum done';
});
my $vac_waits = q{SELECT count(*) = 1 FROM pg_stat_activity
  WHERE application_name = 'repair_vac' AND wait_event_type = 'Lock' AND wait_event = 'advisory'};
ok(wait_for_sql($node, $vac_waits, $timeout), 'VACUUM repaired level 1 and waits before level 2');

($ret, $out, $err) = $node->psql('postgres', q{
SET abtree.debug_pass_error_level = 0;
INSERT INTO vr VALUES (1460, 100, vr_pad(1460));
});
like($err, qr/stopped after its add above level 0/, 'R fails after its last add');

PostgreSQL::Test::Utils::append_to_file("$dir/release2", '');
bg_finish($hold2, $timeout);
ok(wait_for_sql($node, $vac_waits . q{ AND NOT EXISTS (SELECT FROM pg_locks
  WHERE locktype = 'advisory' AND objid = } . ($key + 2) . ')', $timeout),
	'VACUUM repaired level 2 and waits before level 3');

# what the standby has replayed so far: no downlink lighter than its child
$node->safe_psql('postgres', 'CREATE TEMP TABLE flush_wal ()');	# a commit flushes WAL
$node->wait_for_catchup($standby, 'replay');
($ret, $out, $err) = $standby->psql('postgres', "SELECT abtree_verify('vr_idx', exact => false)");
is($ret, 0, "the standby has no downlink lighter than its child after the level-2 repair")
  or diag($err);

PostgreSQL::Test::Utils::append_to_file("$dir/release3", '');
bg_finish($hold3, $timeout);
is(bg_finish($vac, $timeout), 0, 'VACUUM completes');
like($vac->{out}, qr/vacuum done/, 'VACUUM went through') or diag($vac->{err});

verify_exact_on_both($node, $standby, 'vr', 'vr_idx');
$standby->stop;
my $log = slurp_file($standby->logfile);
unlike($log, qr/inconsistent page found|PANIC/, 'wal_consistency_checking found nothing on the standby');
$node->stop;
done_testing();
