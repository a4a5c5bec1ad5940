#!/usr/bin/python3
"""TABLESAMPLE swr on Citus distributed tables (issue 23): a coordinator and two workers on this
machine, all with shared_preload_libraries = 'citus,abtree'.

  test/stress/citus.py --bindir DIR [--seed S]

prints TAP.  Needs Citus installed into DIR's PostgreSQL (scripts/citus.sh does it from the
vendored source); without it, it prints "1..0 # SKIP" and why.

What it checks, on a table whose four shards hold 74%, 8%, 8% and 10% of the rows (the issue's):
  - swr(n) returns exactly n rows (n = 0, 1, 7, 1000, 20000), with and without WHERE;
  - REPEATABLE gives the same rows in the same order, another seed other rows;
  - chi-square of the draws over the shards against their share of the rows, and over key
    deciles; per key on a small table (3,000 keys, 300,000 draws), where a bias in a few rows
    cannot hide in an aggregate;
  - WHERE (redraw): every row satisfies it, shards in proportion to their matching rows;
  - a weighted index: draws in proportion to the weight column, per shard and per weight value;
  - deleted rows not yet vacuumed on a worker (the shard's stored weight still counts them),
    then after VACUUM;
  - swr_avg and swr_count over the sample (W from abtree_range_weight over the shards): the
    interval covers the table's true value;
  - abtree_range_weight on the distributed index adds up the shards, abtree_sketch merges their
    sketches; abtree_stats, abtree_verify and abtree_sample_tids refuse it (the shell index on
    the coordinator is empty);
  - a reference table, a join with it, a prepared statement past its fifth execution (generic
    plan), a correlated subquery;
  - a worker stopped in the middle of a query: a clean ERROR, the coordinator stays up, and
    after the worker restarts the answers are right again;
  - a weight column renamed, then the shards rebuilt by alter_distributed_table from the shell
    index's definition: the new shards' indexes weigh by it (chi-square per weight value);
  - the big shard moved to the other worker between two samples;
  - abtree before citus in shared_preload_libraries: Citus refuses to start, and says so.

Statistical tests use fixed seeds (REPEATABLE) and reject at p < 0.001: each such check raises
a false alarm with probability 0.001 on a correct implementation, about 1% for the suite's dozen
(with fixed seeds a given build either passes or fails, always).
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stress import Tap, Server, free_port  # noqa: E402
import interleave  # noqa: E402

import psycopg2  # noqa: E402
from scipy.stats import chisquare  # noqa: E402

ALPHA = 0.001


def init_node(bindir, base, name):
    """interleave.py's throwaway server, with Citus first and TCP for the node connections
    (the lines appended here override its settings)."""
    srv = interleave.init_server(bindir, base, False, name=name, conf="""
listen_addresses = '127.0.0.1'
shared_preload_libraries = 'citus,abtree'
max_connections = 60
""")
    srv.query("CREATE EXTENSION citus")
    srv.query("CREATE EXTENSION abtree")
    return srv


def run(srv, *stmts):
    """One statement at a time: Citus propagates a multi-statement string to the workers whole."""
    c = srv.conn()
    try:
        cur = c.cursor()
        for st in stmts:
            cur.execute(st)
    finally:
        c.close()


def chi_ok(tap, observed, expected, desc):
    total_o, total_e = sum(observed), sum(expected)
    exp = [e * total_o / total_e for e in expected]
    stat, p = chisquare(observed, exp)
    return tap.ok(p >= ALPHA, '%s (chi-square p = %.4g)' % (desc, p),
                  'observed %s\nexpected %s' % (observed[:20], [round(e, 1) for e in exp[:20]]))


def by_shard(coord, sql):
    """Counts per shard of a query's rows (its first column is the distribution value)."""
    rows = coord.query("SELECT get_shard_id_for_distribution_column('ev', dev) AS s, count(*) "
                       "FROM (%s) q GROUP BY 1 ORDER BY 1" % sql)
    return dict(rows)


def shard_ids(coord):
    return [r[0] for r in coord.query(
        "SELECT shardid FROM pg_dist_shard WHERE logicalrelid = 'ev'::regclass ORDER BY 1")]


def check_shards(tap, coord, sample_sql, truth_sql, desc):
    ids = shard_ids(coord)
    got = by_shard(coord, sample_sql)
    want = by_shard(coord, truth_sql)
    chi_ok(tap, [got.get(i, 0) for i in ids], [want.get(i, 0) for i in ids], desc)


def setup(coord, workers):
    coord.query("SELECT citus_set_coordinator_host('127.0.0.1', %d)" % coord.port)
    for w in workers:
        coord.query("SELECT citus_add_node('127.0.0.1', %d)" % w.port)
    run(coord, "SET citus.shard_count = 4",
        "CREATE TABLE ev(id bigint, dev int, v int, w int)",
        "SELECT create_distributed_table('ev', 'dev')")
    # the skew: 70% of the rows have dev = 1
    coord.query("INSERT INTO ev SELECT g, CASE WHEN g % 10 < 7 THEN 1 ELSE g % 50 END, g % 100, "
                "1 + g % 4 FROM generate_series(1, 100000) g")
    coord.query("CREATE INDEX ev_ab ON ev USING abtree (id)")
    run(coord, "CREATE TABLE devs(dev int PRIMARY KEY, name text)",
        "SELECT create_reference_table('devs')",
        "INSERT INTO devs SELECT g, 'd' || g FROM generate_series(0, 60) g",
        "CREATE INDEX devs_ab ON devs USING abtree (dev)")


def test_exact_n(tap, coord):
    for n in (0, 1, 7, 1000, 20000):
        got = coord.query("SELECT count(*) FROM ev TABLESAMPLE swr(%d)" % n)[0][0]
        tap.ok(got == n, 'swr(%d) returns %d rows' % (n, n), 'got %d' % got)
    got = coord.query("SELECT count(*), count(*) FILTER (WHERE v < 10) "
                      "FROM ev TABLESAMPLE swr(1000) WHERE v < 10")[0]
    tap.ok(got == (1000, 1000), 'swr(1000) WHERE v < 10: 1000 rows, all satisfying it', got)
    got = coord.query("SELECT count(*) FROM ev TABLESAMPLE swr(50) WHERE v = -1")[0][0]
    tap.ok(got == 0, 'swr(50) with a WHERE no row satisfies: no rows', got)
    order = coord.query("SELECT array_agg(id) FROM (SELECT id FROM ev TABLESAMPLE swr(2000) "
                        "REPEATABLE (5)) s")[0][0]
    runs = sum(1 for a, b in zip(order, order[1:]) if b < a)
    # in random order about half the neighbours descend; sorted output has none
    tap.ok(800 < runs < 1200, 'rows come out in random order (%d of 1999 neighbours descend)' % runs)


def test_repeatable(tap, coord):
    q = "SELECT array_agg(id) FROM (SELECT id FROM ev TABLESAMPLE swr(500) REPEATABLE (%s)) s"
    a, b, c = coord.query(q % 11)[0][0], coord.query(q % 11)[0][0], coord.query(q % 12)[0][0]
    tap.ok(a == b, 'REPEATABLE (11) twice: the same 500 rows in the same order')
    tap.ok(a != c, 'REPEATABLE (12): other rows')


def test_distribution(tap, coord):
    check_shards(tap, coord, "SELECT dev FROM ev TABLESAMPLE swr(30000) REPEATABLE (1)",
                 "SELECT dev FROM ev", 'draws over the shards follow their rows (30,000 draws)')
    got = dict(coord.query("SELECT width_bucket(id, 1, 100001, 10), count(*) "
                           "FROM ev TABLESAMPLE swr(30000) REPEATABLE (2) GROUP BY 1"))
    chi_ok(tap, [got.get(i, 0) for i in range(1, 11)], [1] * 10, 'draws over key deciles are uniform')
    check_shards(tap, coord, "SELECT dev FROM ev TABLESAMPLE swr(20000) REPEATABLE (3) WHERE v < 30",
                 "SELECT dev FROM ev WHERE v < 30",
                 'WHERE v < 30: shards in proportion to their matching rows')
    # many small samples: each shard's Poisson count has a small mean (Knuth's method, not
    # PTRS), and every query's first round must split right
    conn = coord.conn()
    cur = conn.cursor()
    counts = {}
    for i in range(200):
        cur.execute("SELECT get_shard_id_for_distribution_column('ev', dev), count(*) "
                    "FROM ev TABLESAMPLE swr(20) REPEATABLE (%s) GROUP BY 1", (1000 + i,))
        for k, c in cur.fetchall():
            counts[k] = counts.get(k, 0) + c
    conn.close()
    ids = shard_ids(coord)
    want = by_shard(coord, "SELECT dev FROM ev")
    chi_ok(tap, [counts.get(i, 0) for i in ids], [want.get(i, 0) for i in ids],
           '200 samples of swr(20): shards follow their rows')
    # per key, where a bias in a few rows would show
    run(coord, "CREATE TABLE small(id int, dev int)",
        "SELECT create_distributed_table('small', 'dev')",
        "INSERT INTO small SELECT g, CASE WHEN g % 3 = 0 THEN 1 ELSE g % 97 END "
        "FROM generate_series(1, 3000) g",
        "CREATE INDEX small_ab ON small USING abtree (id)")
    got = dict(coord.query("SELECT id, count(*) FROM small TABLESAMPLE swr(300000) REPEATABLE (4) "
                           "GROUP BY 1"))
    chi_ok(tap, [got.get(i, 0) for i in range(1, 3001)], [1] * 3000,
           'per key over 3,000 keys (300,000 draws) the draws are uniform')


def test_weighted(tap, coord):
    # two indexes that weigh rows differently would need abtree.swr_index: keep one
    coord.query("DROP INDEX ev_ab")
    coord.query("CREATE INDEX ev_w ON ev USING abtree (id) INCLUDE (w) WITH (weight_column = 'w')")
    conn = coord.conn()
    cur = conn.cursor()
    cur.execute("SELECT w, count(*) FROM ev TABLESAMPLE swr(40000) REPEATABLE (6) GROUP BY 1 ORDER BY 1")
    got = dict(cur.fetchall())
    cur.execute("SELECT w, sum(w) FROM ev GROUP BY 1 ORDER BY 1")
    want = dict(cur.fetchall())
    chi_ok(tap, [got.get(k, 0) for k in sorted(want)], [want[k] for k in sorted(want)],
           'weighted index: draws in proportion to w')
    cur.execute("SELECT get_shard_id_for_distribution_column('ev', dev), count(*) "
                "FROM ev TABLESAMPLE swr(40000) REPEATABLE (7) GROUP BY 1 ORDER BY 1")
    got = dict(cur.fetchall())
    cur.execute("SELECT get_shard_id_for_distribution_column('ev', dev), sum(w) FROM ev GROUP BY 1 ORDER BY 1")
    want = dict(cur.fetchall())
    chi_ok(tap, [got.get(k, 0) for k in sorted(want)], [float(want[k]) for k in sorted(want)],
           'weighted index: shards in proportion to their weight')
    cur.execute("DROP INDEX ev_w")
    cur.execute("CREATE INDEX ev_ab ON ev USING abtree (id)")
    conn.close()


def test_deletes(tap, coord):
    # half of the big shard's rows deleted, not vacuumed: its stored weight still counts them
    coord.query("DELETE FROM ev WHERE dev = 1 AND id % 2 = 0")
    check_shards(tap, coord, "SELECT dev FROM ev TABLESAMPLE swr(30000) REPEATABLE (8)",
                 "SELECT dev FROM ev", 'after deletes, before VACUUM: shards follow their live rows')
    coord.query("VACUUM ev")
    check_shards(tap, coord, "SELECT dev FROM ev TABLESAMPLE swr(30000) REPEATABLE (9)",
                 "SELECT dev FROM ev", 'after VACUUM: shards follow their rows')


def test_estimates(tap, coord):
    true_avg, true_cnt = coord.query("SELECT avg(v)::float8, count(*) FILTER (WHERE v < 25) FROM ev")[0]
    # the total weight W of swr_count from the index itself, summed over the shards
    rows = coord.query("SELECT swr_avg(v), swr_count(v < 25, "
                       "abtree_range_weight('ev_ab', NULL::bigint, NULL)::float8) "
                       "FROM ev TABLESAMPLE swr(5000) REPEATABLE (10)")[0]
    avg_lo, avg_hi = [float(x) for x in rows[0].strip('()').split(',')[2:4]]
    cnt_lo, cnt_hi = [float(x) for x in rows[1].strip('()').split(',')[2:4]]
    tap.ok(avg_lo <= true_avg <= avg_hi, 'swr_avg interval [%.2f, %.2f] covers AVG = %.2f'
           % (avg_lo, avg_hi, true_avg))
    tap.ok(cnt_lo <= true_cnt <= cnt_hi, 'swr_count interval [%.0f, %.0f] covers COUNT = %d'
           % (cnt_lo, cnt_hi, true_cnt))


def test_index_functions(tap, coord):
    """Index functions on the index of a distributed table: summed over shards, or refused."""
    run(coord, "CREATE INDEX ev_dv ON ev USING abtree (v, dev)")
    got = coord.query("SELECT abtree_range_weight('ev_ab', NULL::bigint, NULL), "
                      "abtree_range_weight('ev_ab', 1::bigint, 50000::bigint, visible_only => true), "
                      "(SELECT count(*) FROM ev), (SELECT count(*) FROM ev WHERE id <= 50000)")[0]
    tap.ok(got[0] == got[2] and got[1] == got[3],
           'abtree_range_weight on a distributed index adds up the shards (%s of %s, %s of %s)'
           % (got[0], got[2], got[1], got[3]))
    got = coord.query("SELECT abtree_range_weight('devs_ab', NULL::int, NULL), count(*) FROM devs")[0]
    tap.ok(got[0] == got[1], 'abtree_range_weight on a reference table\'s index: one placement '
           '(%s of %s)' % got)
    got = coord.query("SELECT chll_estimate(abtree_sketch('ev_ab')), count(DISTINCT id), "
                      "chll_estimate(abtree_sketch('ev_dv', 2)), count(DISTINCT dev) FROM ev")[0]
    tap.ok(abs(got[0] / got[1] - 1) < 0.1 and abs(got[2] / got[3] - 1) < 0.25,
           'abtree_sketch on a distributed index merges the shards\' sketches: %.0f for %d '
           'distinct ids, %.1f for %d devices' % got)
    for sql in ("SELECT entries FROM abtree_stats('ev_ab')", "SELECT abtree_verify('ev_ab', exact => true)",
                "SELECT count(*) FROM abtree_sample_tids('ev_ab', 5, 0.5)"):
        try:
            coord.query(sql)
            tap.ok(False, '%s: refused (the shell index is empty)' % sql)
        except psycopg2.Error as e:
            tap.ok(e.pgcode == '0A000' and 'shards' in e.pgerror,
                   '%s: refused, 0A000, naming the shards' % sql, e.pgerror)
    run(coord, "DROP INDEX ev_dv")


def test_shapes(tap, coord):
    got = coord.query("SELECT count(*) FROM devs TABLESAMPLE swr(300)")[0][0]
    tap.ok(got == 300, 'a reference table: swr(300) returns 300 rows', got)
    got = coord.query("SELECT count(*), count(name) FROM ev TABLESAMPLE swr(200) REPEATABLE (1) "
                      "JOIN devs USING (dev)")[0]
    tap.ok(got == (200, 200), 'a join with a reference table', got)
    conn = coord.conn()
    cur = conn.cursor()
    cur.execute("PREPARE p(int, int) AS SELECT count(*), max(v) FROM ev TABLESAMPLE swr($1) WHERE v < $2")
    res = []
    for i in range(8):
        cur.execute("EXECUTE p(%s, %s)", (10 + i, 5 + i))
        res.append(cur.fetchone())
    tap.ok(all(r[0] == 10 + i and r[1] < 5 + i for i, r in enumerate(res)),
           'a prepared statement, eight executions (generic plans included)', res)
    conn.close()
    got = coord.query("SELECT array_agg(c ORDER BY dev) FROM (SELECT d.dev, (SELECT count(*) "
                      "FROM ev TABLESAMPLE swr(10) WHERE ev.v = 2 * d.dev + 1) AS c FROM devs d "
                      "WHERE d.dev < 3) s")[0][0]
    tap.ok(got == [10, 10, 10], 'a correlated subquery: swr(10) per outer row', got)
    got = coord.query("SELECT count(*), count(*) FILTER (WHERE dev IN (7, 8, 9)) FROM ev "
                      "TABLESAMPLE swr(200) WHERE dev IN (SELECT dev FROM devs WHERE dev BETWEEN 5 AND 9)")[0]
    tap.ok(got == (200, 200), 'a WHERE subquery on the sampled row goes to the shards (IN over a '
           'reference table): 200 rows, all satisfying it', got)
    try:
        coord.query("SELECT ctid FROM ev TABLESAMPLE swr(1)")
        tap.ok(False, 'system columns are refused with a clear error')
    except psycopg2.Error as e:
        tap.ok(e.pgcode == '0A000', 'system columns are refused with a clear error (%s)' % e.pgcode,
               e.pgerror)


def test_worker_restart(tap, coord, worker):
    result = {}

    def run():
        try:
            c = coord.conn()
            cur = c.cursor()
            cur.execute("SELECT count(*) FROM ev TABLESAMPLE swr(3000000)")
            result['rows'] = cur.fetchone()[0]
        except psycopg2.Error as e:
            result['error'] = (e.pgcode, e.pgerror)

    th = threading.Thread(target=run)
    th.start()
    time.sleep(0.5)
    worker.crash()
    th.join(120)
    tap.ok(not th.is_alive(), 'a query whose worker stops mid-query ends (no hang)')
    tap.note('it ended with: %s' % (result,))
    tap.ok('error' in result or result.get('rows') == 3000000,
           'it ends with an ERROR (or, had it finished first, with all its rows)', result)
    alive = coord.query("SELECT 1")[0][0] == 1
    tap.ok(alive and 'terminated by signal' not in coord.logtext(), 'the coordinator stays up')
    worker.start()
    got = coord.query("SELECT count(*) FROM ev TABLESAMPLE swr(1000)")[0][0]
    tap.ok(got == 1000, 'after the worker restarts: swr(1000) returns 1000 rows', got)
    check_shards(tap, coord, "SELECT dev FROM ev TABLESAMPLE swr(30000) REPEATABLE (13)",
                 "SELECT dev FROM ev", 'after the restart: shards follow their rows')


def test_renamed_weight(tap, coord):
    """A weight column renamed on the distributed table, then new shards built
    from the shell index's definition (alter_distributed_table): the shard
    indexes must come back weighted (before, the definition carried the old
    name in weight_column and the new shards' CREATE INDEX failed)."""
    run(coord, "SET citus.shard_count = 4",
        "CREATE TABLE rw(dev int, k int, w int NOT NULL)",
        "SELECT create_distributed_table('rw', 'dev')")
    coord.query("INSERT INTO rw SELECT g % 40, g, 1 + g % 4 FROM generate_series(1, 20000) g")
    coord.query("CREATE INDEX rw_kw ON rw USING abtree (k) INCLUDE (w) WITH (weight_column = 'w')")
    coord.query("ALTER TABLE rw RENAME COLUMN w TO weight")
    try:
        run(coord, "SELECT alter_distributed_table('rw', shard_count := 6, cascade_to_colocated := false)")
        tap.ok(True, 'renamed weight column: alter_distributed_table rebuilds the shards')
    except psycopg2.Error as e:
        tap.ok(False, 'renamed weight column: alter_distributed_table rebuilds the shards',
               e.pgerror)
        return
    got = dict(coord.query("SELECT weight, count(*) FROM rw TABLESAMPLE swr(20000) REPEATABLE (8) "
                           "GROUP BY 1 ORDER BY 1"))
    want = dict(coord.query("SELECT weight, sum(weight) FROM rw GROUP BY 1 ORDER BY 1"))
    chi_ok(tap, [got.get(k, 0) for k in sorted(want)], [float(want[k]) for k in sorted(want)],
           'renamed weight column, new shards: draws in proportion to the weight')
    coord.query("DROP TABLE rw")


def test_rebalance(tap, coord, workers):
    """Move the big shard to the other worker between two samples."""
    big = coord.query("SELECT get_shard_id_for_distribution_column('ev', 1)")[0][0]
    src = coord.query("SELECT nodeport FROM pg_dist_shard_placement WHERE shardid = %s", (big,))[0][0]
    dst = [w.port for w in workers if w.port != src][0]
    before = coord.query("SELECT count(*) FROM ev TABLESAMPLE swr(1000)")[0][0]
    run(coord, "SELECT citus_move_shard_placement(%d, '127.0.0.1', %d, '127.0.0.1', %d, "
        "shard_transfer_mode => 'block_writes')" % (big, src, dst))
    moved = coord.query("SELECT nodeport FROM pg_dist_shard_placement WHERE shardid = %s", (big,))[0][0]
    tap.ok(before == 1000 and moved == dst, 'the big shard moved from port %d to %d' % (src, dst),
           (before, moved))
    got = coord.query("SELECT count(*) FROM ev TABLESAMPLE swr(1000)")[0][0]
    tap.ok(got == 1000, 'after the move: swr(1000) returns 1000 rows', got)
    check_shards(tap, coord, "SELECT dev FROM ev TABLESAMPLE swr(30000) REPEATABLE (14)",
                 "SELECT dev FROM ev", 'after the move: shards follow their rows')


def test_load_order(tap, bindir, base):
    """abtree before citus in shared_preload_libraries: Citus refuses to start, saying why."""
    srv = Server(bindir, base, 'order', free_port())
    subprocess.run([os.path.join(bindir, 'initdb'), '-D', srv.data, '-U', 'postgres',
                    '--auth=trust', '--no-sync'], check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(srv.data, 'postgresql.conf'), 'a') as f:
        f.write("port = %d\nlisten_addresses = ''\nunix_socket_directories = '%s'\n"
                "shared_preload_libraries = 'abtree,citus'\n" % (srv.port, base))
    started = srv.pg_ctl('start', check=False).returncode == 0
    if started:
        srv.stop()
    tap.ok(not started and 'Citus has to be loaded first' in srv.logtext(),
           "shared_preload_libraries = 'abtree,citus': the server does not start, and its log "
           "says Citus has to be loaded first", srv.logtext()[-600:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--bindir', required=True)
    ap.add_argument('--keep', action='store_true')
    ap.add_argument('--figures-dir', default=None, help='accepted for the test runner; unused')
    args = ap.parse_args()
    libdir = subprocess.run([os.path.join(args.bindir, 'pg_config'), '--pkglibdir'],
                            capture_output=True, text=True).stdout.strip()
    if not os.path.exists(os.path.join(libdir, 'citus.so')):
        print('1..0 # SKIP Citus is not installed into %s (scripts/citus.sh)' % libdir)
        return 0
    tap = Tap()
    base = tempfile.mkdtemp(prefix='abt-citus-')
    nodes = []
    try:
        coord = init_node(args.bindir, base, 'coord')
        nodes.append(coord)
        workers = [init_node(args.bindir, base, 'w%d' % i) for i in (1, 2)]
        nodes += workers
        setup(coord, workers)
        test_exact_n(tap, coord)
        test_repeatable(tap, coord)
        test_distribution(tap, coord)
        test_weighted(tap, coord)
        test_deletes(tap, coord)
        test_estimates(tap, coord)
        test_index_functions(tap, coord)
        test_shapes(tap, coord)
        test_renamed_weight(tap, coord)
        test_worker_restart(tap, coord, workers[1])
        test_rebalance(tap, coord, workers)
        test_load_order(tap, args.bindir, base)
    except Exception as e:  # a crash of the harness is a failure, with its story
        tap.ok(False, 'the suite ran to its end', repr(e))
        for n in nodes:
            tap.note('---- %s log tail' % n.name)
            for line in n.logtext().splitlines()[-15:]:
                tap.note(line)
    finally:
        for n in nodes:
            n.stop()
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    print('1..%d' % tap.n)
    return 1 if tap.failed else 0


if __name__ == '__main__':
    sys.exit(main())
