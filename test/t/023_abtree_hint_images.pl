# Issue 20, defect 4: with data checksums or wal_log_hints, an old hint
# image of a page must not land in WAL after a MARK_VALID that relied on
# that page.
#
# A weight pass adds on a downlink under a share lock and dirties the page
# with MarkBufferDirtyHint; the first time after a checkpoint that writes a
# full-page image (XLogSaveBufferForHint: copy the page, then XLogInsert
# an FPI_FOR_HINT record).  MARK_VALID names the pages of the pass without
# images and without locking them, and its redo recomputes their
# downlinks.  Order, in a two-level tree (root over leaves):
#   - CHECKPOINT, so the next change of the root needs an image;
#   - backend A inserts into one leaf; its pass adds on root->X and copies
#     the root for its hint image.  gdb stops A right there: at the
#     XLogInsert of the FPI_FOR_HINT record that follows a call of
#     XLogSaveBufferForHint for the root's buffer (A holds a share lock on
#     the root and an exclusive one on its leaf X; the root's buffer comes
#     from pg_buffercache).  Not at XLogRegisterBlock, which would be
#     simpler: Debian's PostgreSQL 15 binary inlines it there;
#   - backend B inserts into another leaf Y: it adds on root->Y, logs its
#     own image of the root (with both adds), and MARK_VALID (redo: root->Y
#     = weight of Y, counting B's entry);
#   - A goes on: its older image (without B's add) lands after B's
#     MARK_VALID, then A's MARK_VALID (redo recomputes root->X only);
#   - stop('immediate') and restart: redo applied A's image last, so
#     root->Y misses B's weight, an undercount (I1), before any VACUUM.
# Once fixed, B may wait for A (for instance if MARK_VALID takes the path
# exclusively): B then runs in the background, and A is let go after B has
# waited a while.
#
# Skipped without gdb, without ptrace permission, without pg_buffercache,
# or on an architecture whose argument registers we do not know.  Runs once with data checksums
# (initdb -k) and once with wal_log_hints = on and no checksums.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use FindBin;
use lib $FindBin::Bin;
use AbtreeCheck;
use AbtreeBg;
use AbtreeGdb;

my $skip_reason = gdb_skip_reason();
plan skip_all => $skip_reason if $skip_reason;
# XLogSaveBufferForHint(Buffer buffer, bool buffer_std) and
# XLogInsert(RmgrId rmid, uint8 info)
my ($arg1, $arg2) = gdb_arg_regs();
my $timeout = 60;

my $variant_no = 0;

sub run_variant
{
	my ($label, %opts) = @_;
	$variant_no++;
	my $node = abtree_node("abt_hint_$variant_no", protocol => 'safe_page',
		init => { extra => $opts{initdb} },
		conf => "bgwriter_lru_maxpages = 0\ncheckpoint_timeout = '1h'\n" . ($opts{conf} // ''));
	my ($cr_ret, $cr_out, $cr_err) = $node->psql('postgres', 'CREATE EXTENSION pg_buffercache');
	if ($cr_ret != 0)
	{
		$node->stop;
		return "pg_buffercache is not available: $cr_err";
	}
	$node->safe_psql('postgres', q{
CREATE FUNCTION wp_pad(i int) RETURNS text IMMUTABLE LANGUAGE sql AS
  $$ SELECT string_agg(md5(i::text || '-' || j::text), '') FROM generate_series(1, 20) j $$;
CREATE TABLE h (k int, pad text);
CREATE INDEX h_idx ON h USING abtree (k, pad);
INSERT INTO h SELECT i * 1000, wp_pad(i * 1000) FROM generate_series(1, 40) i;
});
	# A waits to be let go, then inserts into the first leaf
	my ($a, $apid) = go_session($node, 'hint_a', q{
INSERT INTO h VALUES (1500, wp_pad(1500));
SELECT 'a done';
}, $timeout);
	ok(defined $apid, "$label: A is connected");

	# the next change of any page needs an image; then read the root from
	# the (flushed) metapage: AbtMetaPageData.root at byte 24 + 8
	$node->safe_psql('postgres', 'CHECKPOINT');
	my $redo_lsn = $node->safe_psql('postgres', 'SELECT redo_lsn FROM pg_control_checkpoint()');
	my $filenode = $node->safe_psql('postgres', q{SELECT pg_relation_filenode('h_idx')});
	my $root = $node->safe_psql('postgres', q{
SELECT get_byte(m, 32) + 256 * get_byte(m, 33) + 65536 * get_byte(m, 34) + 16777216 * get_byte(m, 35)
  FROM pg_read_binary_file(pg_relation_filepath('h_idx'), 0, 8192) m});
	my $bufid = $node->safe_psql('postgres', qq{
SELECT bufferid FROM pg_buffercache
 WHERE relfilenode = $filenode AND relforknumber = 0 AND relblocknumber = $root
   AND reldatabase = (SELECT oid FROM pg_database WHERE datname = current_database())});
	like($bufid, qr/^\d+$/, "$label: the root is in shared buffers");
	note("$label: h_idx: relfilenode $filenode, root block $root in buffer $bufid, checkpoint redo at $redo_lsn");

	# stop A in XLogInsert(RM_XLOG_ID, XLOG_FPI_FOR_HINT) after it entered
	# XLogSaveBufferForHint for the root's buffer, i.e. after the copy
	my $g = gdb_start($apid);
	my $ready = gdb_cmd($g, "set pagination off\nset confirm off\n"
		  . "break *XLogSaveBufferForHint if ($arg1 & 0xffffffff) == $bufid\n"
		  . "commands 1\nsilent\n"
		  . "tbreak *XLogInsert if ($arg1 & 0xff) == 0 && ($arg2 & 0xff) == 0xa0\n"
		  . "continue\nend\n"
		  . "echo ABT_GDB_READY\\n\n", qr/ABT_GDB_READY/);
	if (!$ready || $g->{out} =~ /ptrace: |Could not attach|No symbol table|Function .* not defined/)
	{
		note("gdb said:\n$g->{out}");
		gdb_stop($g);
		go($node, 'hint_a');
		bg_finish($a, $timeout);
		$node->stop('immediate');
		return 'gdb cannot attach to a backend or set the breakpoint (ptrace not permitted?)';
	}
	is($node->safe_psql('postgres', q{SELECT height FROM abtree_stats('h_idx')}), '2',
		"$label: h_idx has two levels");
	is($node->safe_psql('postgres',
		q{SELECT current_setting('data_checksums') = 'on' OR current_setting('wal_log_hints') = 'on'}),
		't', "$label: hint bits are WAL-logged");
	ok(gdb_cmd($g, "continue\n", qr/Continuing\./), "$label: gdb attached to A with a breakpoint");

	# A's first add on the root copies it for a hint image: stopped there
	go($node, 'hint_a');
	ok(gdb_wait_hit($g, $a, qr/Temporary breakpoint \d+,/, $timeout), "$label: A stopped after copying the root for its hint image")
	  or diag("gdb said:\n$g->{out}\nA said:\n$a->{out}$a->{err}\n"
		  . '(if a fix no longer writes hint images of internal pages, this test must change)');

	# B inserts into another leaf, its pass adds on the root
	my $b = bg_psql($node, 'b', q{
SET application_name = 'hint_b';
INSERT INTO h VALUES (20500, wp_pad(20500));
SELECT 'b done';
});
	# wait until B is done, or has waited (for A, once fixed) for 2 seconds
	my $waited = 0;
	my $deadline = time + $timeout;
	while (time < $deadline)
	{
		$b->{h}->pump_nb;
		last unless $b->{h}->pumpable;
		my $w = $node->safe_psql('postgres', q{SELECT coalesce(wait_event_type, '') || ':' || coalesce(wait_event, '')
  FROM pg_stat_activity WHERE application_name = 'hint_b' AND state = 'active'});
		if ($w =~ /^(LWLock|Lock|IPC):/) { $waited++; } else { $waited = 0; }
		if ($waited >= 20) { note("$label: B waits ($w) while A is stopped"); last; }
		usleep(100_000);
	}

	# let A go
	gdb_stop($g);
	is(bg_finish($a, $timeout), 0, "$label: A completes");
	like($a->{out}, qr/a done/, "$label: A's insert went through") or diag($a->{err});
	is(bg_finish($b, $timeout), 0, "$label: B completes");
	like($b->{out}, qr/b done/, "$label: B's insert went through") or diag($b->{err});

	my ($ret, $out, $err) = $node->psql('postgres', "SELECT abtree_verify('h_idx', exact => true)");
	is($ret, 0, "$label: exact before the crash") or diag($err);

	# for the log: the WAL of the index's root since the checkpoint
	my $end_lsn = $node->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
	my ($wd_out, $wd_err) = index_wal($node, 'h_idx', $redo_lsn, $end_lsn);
	my @root_recs = grep { /blk $root\b/ } split /\n/, $wd_out;
	note("$label: WAL records of h_idx's root (block $root) since the checkpoint:\n"
		  . join("\n", map { s/^rmgr: //r } @root_recs));

	# crash: redo replays all of it, in WAL order
	$node->stop('immediate');
	$node->start;
	($ret, $out, $err) = $node->psql('postgres', "SELECT abtree_verify('h_idx', exact => false)");
	is($ret, 0, "$label: h_idx never undercounts (I1) after crash recovery, before any VACUUM")
	  or diag($err);
	is($node->safe_psql('postgres', q{SELECT (SELECT total_weight FROM abtree_stats('h_idx')) >= count(*) FROM h}),
		't', "$label: the root counts every row after recovery");
	$node->stop;
	return;
}

my $skip = run_variant('checksums', initdb => ['--data-checksums']);
if ($skip)
{
	SKIP: { skip($skip, 1); }
	done_testing();
	exit 0;
}
# wal_log_hints without checksums (18 turns them on by default)
my $v = PostgreSQL::Test::Cluster->new('abt_hint_version')->pg_version;
$skip = run_variant('wal_log_hints', conf => "wal_log_hints = on\n",
	initdb => ($v >= 18 ? ['--no-data-checksums'] : []));
fail("wal_log_hints: $skip") if $skip;

done_testing();
