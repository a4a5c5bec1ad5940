# abtree without shared_preload_libraries: every way in that needs our WAL
# or shared memory fails with an ERROR whose HINT names the postgresql.conf
# line (reads of an existing index still work), nothing is left
# half-installed, and a server whose WAL holds abtree records refuses to
# recover without it.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('nopreload');
$node->init;
$node->start;

sub psql_fails
{
	my ($sql, $hint, $name) = @_;
	my ($ret, $stdout, $stderr) = $node->psql('postgres', $sql);
	isnt($ret, 0, "$name: fails");
	like($stderr, qr/ERROR:  abtree must be loaded via shared_preload_libraries/,
		"$name: says why");
	like($stderr, qr/HINT:  Add this line to postgresql\.conf and restart the server: \Q$hint\E/,
		"$name: hint names the line");
	return;
}

# Nothing preloaded.
psql_fails('CREATE EXTENSION abtree', "shared_preload_libraries = 'abtree'",
	'CREATE EXTENSION, nothing preloaded');
is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_extension WHERE extname = 'abtree'"),
	'0', 'no extension left behind');
is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_proc WHERE proname LIKE 'abtree%'"),
	'0', 'no functions left behind');

# LOAD in a session is harmless: it registers nothing and errors nowhere.
is($node->safe_psql('postgres', "LOAD 'abtree'; SELECT 1"), '1',
	'LOAD without preload does not break the session');

# Other libraries preloaded: the hint keeps them.
$node->append_conf('postgresql.conf',
	"shared_preload_libraries = 'pg_stat_statements'");
$node->restart;
psql_fails('CREATE EXTENSION abtree',
	"shared_preload_libraries = 'pg_stat_statements,abtree'",
	'CREATE EXTENSION, another library preloaded');

# Preloaded: it works, and the log names our resource manager.
$node->append_conf('postgresql.conf',
	"shared_preload_libraries = 'pg_stat_statements,abtree'");
$node->restart;
ok($node->log_contains(qr/registered custom resource manager "abtree" with ID 197/),
	'resource manager registered at start');
$node->safe_psql('postgres', 'CREATE EXTENSION abtree');
is($node->safe_psql('postgres',
		"SELECT value FROM abtree_status() WHERE item = 'preloaded'"),
	'yes', 'extension works when preloaded');
$node->safe_psql('postgres', q{
CREATE TABLE t (k int);
INSERT INTO t SELECT generate_series(1, 1000);
CREATE INDEX t_k ON t USING abtree (k);
});

# The extension exists but the library is no longer preloaded: the entry
# points that need it fail the same way.  (A clean shutdown leaves no WAL
# to replay.)
$node->append_conf('postgresql.conf',
	"shared_preload_libraries = 'pg_stat_statements'");
$node->restart;
my $hint = "shared_preload_libraries = 'pg_stat_statements,abtree'";
psql_fails('SELECT * FROM abtree_status()', $hint, 'abtree_status');
psql_fails("SELECT abtree_wal_probe('x')", $hint, 'abtree_wal_probe');
psql_fails('SELECT abtree_check_preload()', $hint, 'abtree_check_preload');

# What needs neither our WAL nor shared memory still works (issue 25, item
# 9): index scans, the functions that only read the index's pages, chll
# and the view; everything that writes the index or draws fails.
is($node->safe_psql('postgres', q{
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT count(*), sum(k) FROM t WHERE k BETWEEN 10 AND 19}), '10|145',
	'index scan without the preload');
is($node->safe_psql('postgres', q{
SET enable_seqscan = off; SET enable_indexscan = off;
SELECT count(*) FROM t WHERE k < 100}), '99', 'bitmap scan without the preload');
is($node->safe_psql('postgres', q{
SELECT abtree_range_weight('t_k', 1, 10), (abtree_stats('t_k')).entries,
       chll_estimate(abtree_sketch('t_k')) > 900}), '10|1000|t',
	'abtree_range_weight, abtree_stats and abtree_sketch without the preload');
is($node->safe_psql('postgres', q{
SELECT used_by_planner FROM abtree_column_ndistinct WHERE indexname = 't_k'}), 'f',
	'abtree_column_ndistinct: the planner does not use the sketch without the preload');
psql_fails('INSERT INTO t VALUES (1)', $hint, 'INSERT into an abtree index');
psql_fails('VACUUM t', $hint, 'VACUUM of an abtree index');
psql_fails('SELECT count(*) FROM t TABLESAMPLE swr(5)', $hint, 'TABLESAMPLE swr');
psql_fails("SELECT count(*) FROM abtree_sample_tids('t_k', 5)", $hint, 'abtree_sample_tids');
psql_fails("SELECT abtree_range_weight('t_k', 1, 10, visible_only => true)", $hint,
	'abtree_range_weight through the weight store');

# A dump restores only where the library is preloaded.
my $dump = '';
IPC::Run::run([ 'pg_dump', '-d', $node->connstr('postgres') ], '>', \$dump)
  or die "pg_dump failed";
like($dump, qr/CREATE EXTENSION IF NOT EXISTS abtree/, 'pg_dump emits the extension');
$node->safe_psql('postgres', 'CREATE DATABASE restored');
my ($ret, $stdout, $stderr) = $node->psql('restored', $dump,
	extra_params => [ '-v', 'ON_ERROR_STOP=1' ]);
isnt($ret, 0, 'restore into a server without the preload fails');
like($stderr, qr/HINT:  Add this line to postgresql\.conf/, 'restore failure has the hint');

# WAL with our records after the last checkpoint needs the library to
# recover: without it the server refuses to start, with it recovery works.
$node->append_conf('postgresql.conf',
	"shared_preload_libraries = 'pg_stat_statements,abtree'");
$node->restart;
$node->safe_psql('postgres', "CHECKPOINT; SELECT abtree_wal_probe('needs the library')");
$node->stop('immediate');
$node->append_conf('postgresql.conf', "shared_preload_libraries = ''");
my $log_offset = -s $node->logfile;
ok(!$node->start(fail_ok => 1), 'recovery without the library fails');
ok($node->log_contains(qr/resource manager with ID 197 not registered/, $log_offset),
	'the log names the missing resource manager');

$node->append_conf('postgresql.conf', "shared_preload_libraries = 'abtree'");
$log_offset = -s $node->logfile;
$node->start;
ok($node->log_contains(qr/abtree: replayed WAL probe "needs the library"/, $log_offset),
	'recovery with the library replays the probe');

$node->stop;
done_testing();
