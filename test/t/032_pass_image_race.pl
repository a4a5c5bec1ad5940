# A weight pass must never write a hint image of an internal page below
# the root: the image carries every add in flight on the page, while WAL
# of the pages above has not got them (src/abtree/README, "Standbys").  A
# standby replaying it showed the page heavier than its downlink until the
# next record; a crash right after it left that to the end of recovery.
#
# Before an add the pass looks at the page's LSN: if the add would write
# the page's first image since the checkpoint began, it logs a PATH
# record first (the page's image and the path above it, recomputed by
# redo).  A checkpoint can begin between that look and the add.  The add
# then dirtied the page with MarkBufferDirtyHint, which wrote the hint
# image (FPI_FOR_HINT), and only after it the PATH record: the window
# between two records that TAP 027's fix left.  Now the look is repeated
# where the page is marked dirty, atomically against the checkpoint
# (DELAY_CHKPT_START), and the PATH record is the only image.
#
# Here gdb stops backend A at its add on a level-2 page Q of a four-level
# tree (the second call of mvs_add in its pass: the first is on the root),
# after the look; a CHECKPOINT completes meanwhile (A holds only share
# locks: Q and the level-1 page below it), writing Q clean, so that the
# add needs Q's first image since the new redo pointer.  Then A goes on.
# Before the fix WAL then held an FPI_FOR_HINT of Q (with A's add, but not
# the root's) followed by the PATH record; now only the PATH record.
# After a crash the index never undercounts.
#
# Skipped without gdb or ptrace permission, or on an architecture whose
# argument registers we do not know.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use AbtreeCheck;
use AbtreeBg;
use AbtreeGdb;

my $skip_reason = gdb_skip_reason();
plan skip_all => $skip_reason if $skip_reason;
my $timeout = 60;

# No background writes and no checkpoints but ours; checksums, so that
# MarkBufferDirtyHint logs images (wal_log_hints would do too)
my $node = abtree_node('abt_pass_image_race', protocol => 'safe_page',
	init => { extra => ['--data-checksums'] },
	conf => "bgwriter_lru_maxpages = 0\ncheckpoint_timeout = '1h'\nmax_wal_size = '1GB'\n");

# 640-byte pads: fanouts of about ten, 700 rows in key order make four
# levels (as in TAP 022, 024 and 027); keys 1400 and 1500 go to the first
# leaf, under the first level-1 and level-2 pages.
$node->safe_psql('postgres', q{
CREATE FUNCTION ir_pad(i int) RETURNS text IMMUTABLE LANGUAGE sql AS
  $$ SELECT string_agg(md5(i::text || '-' || j::text), '') FROM generate_series(1, 20) j $$;
CREATE TABLE ir (k int, pad text);
-- fillfactor 50: appends split pages in the middle, which the shapes here assume
CREATE INDEX ir_idx ON ir USING abtree (k, pad) WITH (fillfactor = 50);
INSERT INTO ir SELECT i * 1000, ir_pad(i * 1000) FROM generate_series(1, 700) i;
});
is($node->safe_psql('postgres', q{SELECT height FROM abtree_stats('ir_idx')}), '4',
	'ir_idx has four levels');
is($node->safe_psql('postgres', q{SELECT current_setting('data_checksums')}), 'on',
	'hint bits are WAL-logged');

# After a checkpoint, one insert down the same path gives the root its
# hint image and the level-2 and level-1 pages their PATH records: their
# LSNs are past the redo pointer, so A's look finds no image needed.
$node->safe_psql('postgres', 'CHECKPOINT');
$node->safe_psql('postgres', q{INSERT INTO ir VALUES (1400, ir_pad(1400))});
my $paths_before = $node->safe_psql('postgres',
	q{SELECT value FROM abtree_status() WHERE item = 'pass_path_logged'});

# A waits to be let go, then inserts into the first leaf
my ($a, $apid) = go_session($node, 'race_a', q{
INSERT INTO ir VALUES (1500, ir_pad(1500));
SELECT 'a done';
}, $timeout);
ok(defined $apid, 'A is connected');

# stop A at the second call of mvs_add: its add on the level-2 page
my $g = gdb_start($apid);
my $ready = gdb_cmd($g, "set pagination off\nset confirm off\n"
	  . "break *mvs_add\nignore 1 1\necho ABT_GDB_READY\\n\n", qr/ABT_GDB_READY/);
if (!$ready || $g->{out} =~ /ptrace: |Could not attach|No symbol table|Function .* not defined/)
{
	note("gdb said:\n$g->{out}");
	gdb_stop($g);
	go($node, 'race_a');
	bg_finish($a, $timeout);
	$node->stop('immediate');
	SKIP: { skip('gdb cannot attach to a backend or set the breakpoint (ptrace not permitted?)', 1); }
	done_testing();
	exit 0;
}
ok(gdb_cmd($g, "continue\n", qr/Continuing\./), 'gdb attached to A with a breakpoint');
go($node, 'race_a');
ok(gdb_wait_hit($g, $a, qr/Breakpoint 1,/, $timeout), 'A stopped at its add on the level-2 page')
  or diag("gdb said:\n$g->{out}\nA said:\n$a->{out}$a->{err}");

# a checkpoint begins and ends between A's look and its add
my $start_lsn = $node->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
$node->safe_psql('postgres', 'CHECKPOINT');
my $redo_lsn = $node->safe_psql('postgres', 'SELECT redo_lsn FROM pg_control_checkpoint()');
cmp_ok($node->safe_psql('postgres', qq{SELECT '$redo_lsn'::pg_lsn >= '$start_lsn'::pg_lsn}),
	'eq', 't', 'the checkpoint began while A was stopped');

gdb_stop($g);
is(bg_finish($a, $timeout), 0, 'A completes');
like($a->{out}, qr/a done/, "A's insert went through") or diag($a->{err});
my $end_lsn = $node->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');

# the WAL of the index since A was stopped
my ($wd_out, $wd_err) = index_wal($node, 'ir_idx', $start_lsn, $end_lsn);
note("WAL of ir_idx from $start_lsn to $end_lsn:\n" . join("\n", map { s/^rmgr: //r } split /\n/, $wd_out));
# pg_waldump cannot name a custom resource manager's records: it prints
# the info byte in hex (XLOG_ABT_PATH is 0x80)
like($wd_out, qr/rmgr: custom\d+ .*UNKNOWN \(80\)/, 'the add logged a PATH record') or diag($wd_err);
my @hint_images = grep { /FPI_FOR_HINT/ } split /\n/, $wd_out;
is(scalar(@hint_images), 0, 'no hint image of an ir_idx page: the PATH record is the only image')
  or diag(join("\n", @hint_images));
cmp_ok($node->safe_psql('postgres',
	q{SELECT value FROM abtree_status() WHERE item = 'pass_path_logged'}),
	'>', $paths_before, 'abtree_status() counts the PATH records');

# and the index: never lighter, after a crash too, exact after VACUUM
my ($ret, $out, $err) = $node->psql('postgres', "SELECT abtree_verify('ir_idx', exact => true)");
is($ret, 0, 'exact before the crash') or diag($err);
$node->stop('immediate');
$node->start;
($ret, $out, $err) = $node->psql('postgres', "SELECT abtree_verify('ir_idx', exact => false)");
is($ret, 0, 'no downlink lighter than its child after crash recovery') or diag($err);
$node->safe_psql('postgres', 'VACUUM (INDEX_CLEANUP ON) ir');
($ret, $out, $err) = $node->psql('postgres',
	"SELECT abtree_verify('ir_idx', heapallindexed => true, exact => true)");
is($ret, 0, 'exact and complete after VACUUM') or diag($err);
$node->stop;
done_testing();
