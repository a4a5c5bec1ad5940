# A standby must never see a downlink lighter than its child's stored
# weights (W1L): a draw that enters such a child spreads its variate over
# the downlink's weight and never reaches the child's last units, a bias
# without any error.  A weight pass's adds are not logged (hint-style); the
# primary's memory is always consistent, but WAL used to carry a lower
# page's adds before, or without, the adds above it:
#
#  A. a hint image: the first add on an internal page after a checkpoint
#     logs the page's image (MarkBufferDirtyHint with data checksums), adds
#     in flight included, while the page above, dirty since before, got
#     its add without an image;
#  B. a split: the SPLIT record of a level-1 page images its halves, adds
#     in flight included, and sets the parent's downlinks to the halves'
#     sums, while the grandparent's downlink to that parent stays as WAL
#     last had it.
#
# Both leave the standby with a child heavier than its downlink until the
# pass's MARK_VALID is replayed, which for a pass that parks or fails
# never comes.  Here a pass parks (A) or fails (B) after its adds, and the
# standby's abtree_verify (at-least mode: every downlink covers its
# child's stored weights; on a standby it looks again for 10 s while replay
# goes on) must find nothing.  Before the fix both failed with "Downlink
# to block N at level 2 has weight w, less than the block's w + 1".
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use AbtreeCheck;
use AbtreeBg;

# No background writes and no checkpoints but ours; the standby checks
# every abtree record's replay (PATH and SPLIT records with their paths).
my $node = abtree_node('abt_standby_downlinks', protocol => 'safe_page',
	init => { allows_streaming => 1, extra => ['--data-checksums'] },
	conf => "bgwriter_lru_maxpages = 0\ncheckpoint_timeout = '1h'\nmax_wal_size = '1GB'\n"
	  . "wal_consistency_checking = 'abtree'\n");
my $dir = $node->basedir;

# 640-byte pads: fanouts of about ten, 700 rows make four levels with two
# level-2 pages (as in TAP 022 and 024).  Inserted in key order, so the
# first leaf holds about the first ten keys and its level-1 page about
# the first hundred.
$node->safe_psql('postgres', q{
CREATE FUNCTION sd_pad(i int) RETURNS text IMMUTABLE LANGUAGE sql AS
  $$ SELECT string_agg(md5(i::text || '-' || j::text), '') FROM generate_series(1, 20) j $$;
CREATE TABLE sd (k int, pad text);
-- fillfactor 50: appends split pages in the middle, which the shapes here assume
CREATE INDEX sd_idx ON sd USING abtree (k, pad) WITH (fillfactor = 50);
INSERT INTO sd SELECT i * 1000, sd_pad(i * 1000) FROM generate_series(1, 700) i;
CREATE EXTENSION pageinspect;
});
is($node->safe_psql('postgres', q{SELECT height || ':' || pages_per_level[3] FROM abtree_stats('sd_idx')}),
	'4:2', 'sd_idx has four levels, two pages on level 2');

$node->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('abt_standby_downlinks_standby');
$standby->init_from_backup($node, 'b', has_streaming => 1);
$standby->start;

# abtree_verify on the standby once it has replayed everything so far
sub standby_verify
{
	my ($label) = @_;
	$node->safe_psql('postgres', 'CREATE TEMP TABLE flush_wal ()');	# a commit flushes WAL
	$node->wait_for_catchup($standby, 'replay');
	my ($ret, $out, $err) = $standby->psql('postgres', "SELECT abtree_verify('sd_idx', exact => false)");
	is($ret, 0, $label) or diag($err);
	return;
}

# ---- A: a hint image after a checkpoint ----
# The key of the root's last downlink (as in TAP 024): the pass goes under
# the second level-2 page B, which nothing changes after the checkpoint
# before it.
my $bfirst = $node->safe_psql('postgres', q{
WITH m AS (SELECT get_raw_page('sd_idx', 0) AS p),
     r AS (SELECT get_raw_page('sd_idx', get_byte(p, 32) + get_byte(p, 33) * 256) AS p FROM m),
     n AS (SELECT p, (get_byte(p, 12) + get_byte(p, 13) * 256 - 24) / 4 AS n FROM r),
     l AS (SELECT p, (get_byte(p, 24 + (n - 1) * 4) + get_byte(p, 25 + (n - 1) * 4) * 256) & 32767 AS off
             FROM n WHERE n >= 2)
SELECT get_byte(p, off + 8) + get_byte(p, off + 9) * 256 + get_byte(p, off + 10) * 65536 FROM l});
cmp_ok($bfirst, '>', 1500, "the root's last downlink starts at key $bfirst");

$node->safe_psql('postgres', 'CHECKPOINT');
# the root gets an image and an LSN past the redo pointer: no image later
$node->safe_psql('postgres', q{INSERT INTO sd VALUES (1500, sd_pad(1500))});

my $holder = bg_hold_advisory($node, 1, $dir, 4545);
ok(bg_wait_file("$dir/held1", 60), 'the advisory lock is held');
my $pkey = $bfirst + 500;
my $p = bg_psql($node, 'p', qq{
SET application_name = 'pass_a';
SET abtree.debug_pass_pause = 4545;
SET abtree.debug_pass_pause_level = 0;
INSERT INTO sd VALUES ($pkey, sd_pad($pkey));
SELECT 'a done';
});
ok(wait_for_sql($node, q{SELECT count(*) = 1 FROM pg_stat_activity
  WHERE application_name = 'pass_a' AND wait_event_type = 'Lock' AND wait_event = 'advisory'}, 60),
	'A added on the root and on B (its first change since the checkpoint) and waits');
standby_verify('A: while the pass waits, the standby has no downlink lighter than its child');

PostgreSQL::Test::Utils::append_to_file("$dir/release1", '');
is(bg_finish($p, 60), 0, 'A completes');
like($p->{out}, qr/a done/, "A's insert went through") or diag($p->{err});
bg_finish($holder, 10);

# ---- B: the split of a level-1 page ----
# A pass into the first level-1 page C0's second leaf (key 15500) fails
# after its last add: its adds stay on the root, on B0 and on C0's
# downlink to that leaf, never logged.  An insert before it gives the path
# LSNs past the redo pointer, so that no hint image is involved.  Then
# rows into C0's first leaf split it again and again until C0 itself
# splits: the SPLIT record images C0's halves (one with the add) and sets
# B0's downlinks to their sums.  Those inserts' passes fail after their
# add on the root (their entries stay not valid), so no MARK_VALID through
# B0 recomputes the root's downlink to it afterwards.
$node->safe_psql('postgres', q{INSERT INTO sd VALUES (15400, sd_pad(15400))});
my ($ret, $out, $err) = $node->psql('postgres', q{
SET abtree.debug_pass_error_level = 0;
INSERT INTO sd VALUES (15500, sd_pad(15500));
});
isnt($ret, 0, 'B: the pass fails after its adds');
like($err, qr/stopped after its add above level 0/, 'B: on purpose') or diag($err);
my $level1 = $node->safe_psql('postgres', q{SELECT pages_per_level[2] FROM abtree_stats('sd_idx')});
$node->safe_psql('postgres', q{
SET abtree.debug_pass_error_level = 2;
DO $$ BEGIN
  FOR j IN 1 .. 150 LOOP
    BEGIN
      INSERT INTO sd VALUES (1000 + j, sd_pad(1000 + j));
    EXCEPTION WHEN internal_error THEN NULL;
    END;
  END LOOP;
END $$;
});
cmp_ok($node->safe_psql('postgres', q{SELECT pages_per_level[2] FROM abtree_stats('sd_idx')}),
	'>', $level1, 'B: a level-1 page split');
is($node->safe_psql('postgres', q{SELECT pages_per_level[3] FROM abtree_stats('sd_idx')}),
	'2', 'B: no level-2 page split');
standby_verify('B: after the split, the standby has no downlink lighter than its child');

# and the primary: never lighter, exact after VACUUM; so is the standby
($ret, $out, $err) = $node->psql('postgres', "SELECT abtree_verify('sd_idx', exact => false)");
is($ret, 0, 'the primary has no downlink lighter than its child') or diag($err);
verify_exact_on_both($node, $standby, 'sd', 'sd_idx');

$standby->stop;
my $log = slurp_file($standby->logfile);
unlike($log, qr/inconsistent page found|PANIC/, 'wal_consistency_checking found nothing on the standby');
like($node->safe_psql('postgres', q{SELECT value FROM abtree_status() WHERE item = 'pass_path_logged'}),
	qr/^[1-9]/, 'abtree_status() counts the PATH records');
$node->stop;
done_testing();
