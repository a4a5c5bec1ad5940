#!/usr/bin/python3
"""Crash-cycle stress driver for abtree (issue 10, reliability).

Several sessions run a mixed workload (inserts, updates, some of them HOT
(only the unindexed ver changes), deletes, rollbacks,
VACUUM, TABLESAMPLE swr, abtree_range_weight, abtree_ndistinct, at-least
verification) against two tables with weighted, unweighted and multi-column
indexes of every kind in INDEX_KINDS.  At a random moment (random.Random(seed))
the server is stopped with `pg_ctl stop -m immediate`, restarted, and checked:

  1. every index verifies right after recovery (abtree: at-least mode, W1);
  2. the tables hold exactly the client-side ledger of acknowledged commits
     (a transaction whose COMMIT was sent but not acknowledged may have gone
     either way, but all or nothing);
  3. every ledger row is found through every index: each index in turn is
     the only one left (DROP INDEX of the others inside a transaction that
     is rolled back), lookups by its key columns in a forced nested loop,
     and a full index scan returns exactly the ledger's row count;
  4. after VACUUM (INDEX_CLEANUP ON): exact verification with
     heapallindexed, abtree_range_weight equals count/sum over key ranges,
     abtree_ndistinct is within a factor of 2 of the true count;
  5. TABLESAMPLE swr is uniform (weighted: proportional to w): 5000 draws
     with a fixed REPEATABLE seed, counted in 10 buckets of the sampling
     index's key order (equal row counts each), Pearson's chi-square with 9
     degrees of freedom against the expected shares, failing at p < ALPHA
     (1e-6 per test, 3 tests per cycle, 6 with the standby: a false alarm
     in about 1 of 40,000 CI runs of 8 crash and 4 standby cycles; the seed
     is fixed but the data depend on the crash timing, so the statistic
     differs between runs).

With --standby a streaming standby follows the primary (the primary runs
wal_consistency_checking = 'abtree', so the standby compares each replayed
abtree record with the primary's page image); after each cycle, once the
standby has caught up, its indexes verify exactly with heapallindexed, its
tables, index statistics and range weights equal the primary's, and its
samples pass the same chi-square tests; its log must show no inconsistent
page and no PANIC.

Output is TAP (prove can run it).  Figures go to --figures-dir (format in
test/RELIABILITY.md).  Usage:

  stress.py [--cycles N] [--seed S] [--standby] [--bindir DIR] [--keep]
Environment: ABTREE_STRESS_CYCLES, ABTREE_STRESS_SEED give the defaults.
"""
import argparse
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import psycopg2
import psycopg2.errors

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from figures import write_figures  # noqa: E402


class IndexKind:
    """An index access method under test.  verify / verify_recovered are SQL
    with {index} for the quoted index name; small / weighted are the WITH
    clauses of small-fanout and weighted indexes (None: skip that index)."""

    def __init__(self, am, verify, verify_recovered=None, small='',
                 weighted=None, session_setup=()):
        self.am = am
        self.verify = verify
        self.verify_recovered = verify_recovered or verify
        self.small = small
        self.weighted = weighted
        self.session_setup = session_setup


# One line per access method.
INDEX_KINDS = [
    # a tiny buffer budget (init_primary) makes pbtree seal and merge all the time
    IndexKind('pbtree',
              verify="SELECT pbtree_verify({index}, heapallindexed => true)",
              verify_recovered="SELECT pbtree_verify({index})"),
    IndexKind('abtree',
              verify="SELECT abtree_verify({index}, heapallindexed => true)",
              verify_recovered="SELECT abtree_verify({index}, exact => false)",
              small="WITH (fillfactor = 10)",
              weighted="WITH (weight_column = 'w')"),
]

# Per table: (suffix, lookup key columns, index definition, kind of WITH).
# Every table has the same columns; weighted indexes weigh rows by w.
TABLES = {
    's': [('k', ['k'], '(k)', 'plain'),
          ('gt', ['g', 'txt', 'id'], '(g, txt DESC, id)', 'small'),
          ('idw', ['id'], '(id) INCLUDE (w)', 'weighted')],
    'm': [('tk', ['txt', 'k'], '(txt, k NULLS FIRST)', 'small'),
          ('gkw', ['g', 'k'], '(g DESC, k) INCLUDE (w)', 'weighted')],
}
COLS = ['id', 'k', 'g', 'txt', 'w', 'ver']
# TABLESAMPLE swr tests: (table, abtree index suffix, key order, weighted)
SAMPLE_TESTS = [('s', 'k', 'k, id', False),
                ('s', 'idw', 'id', True),
                ('m', 'gkw', 'g DESC, k, id', True)]
ALPHA = 1e-6
# Self-tests of the checks (each must make the run fail):
#   async_commit   synchronous_commit = off: acknowledged commits get lost
#   biased_sample  the uniform test of s leaves out keys below 100 (a tenth)
SABOTAGE = os.environ.get('ABTREE_STRESS_SABOTAGE', '')
DRAWS = 5000
BUCKETS = 10


def index_names():
    """[(table, index name, key columns, kind)] for every kind."""
    out = []
    for kind in INDEX_KINDS:
        for table, defs in TABLES.items():
            for suffix, keys, body, opt in defs:
                if opt == 'weighted' and kind.weighted is None:
                    continue
                out.append((table, '%s_%s_%s' % (kind.am, table, suffix), keys, kind, body, opt))
    return out


# ---------------------------------------------------------------- statistics

def chi2_sf(x, k):
    """P(X > x) for chi-square with k degrees of freedom: the regularized
    upper incomplete gamma Q(k/2, x/2) (series / continued fraction)."""
    a, x = k / 2.0, x / 2.0
    if x <= 0:
        return 1.0
    lg = math.lgamma(a)
    if x < a + 1:
        s, term, n = 1.0 / a, 1.0 / a, a
        for _ in range(1000):
            n += 1
            term *= x / n
            s += term
            if abs(term) < abs(s) * 1e-15:
                break
        return max(0.0, 1.0 - s * math.exp(-x + a * math.log(x) - lg))
    b, c, d = x + 1 - a, 1e300, 1.0 / (x + 1 - a)
    h = d
    for i in range(1, 1000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = 1e-300 if abs(d) < 1e-300 else d
        c = b + an / c
        c = 1e-300 if abs(c) < 1e-300 else c
        d = 1.0 / d
        h *= d * c
        if abs(d * c - 1) < 1e-15:
            break
    return math.exp(-x + a * math.log(x) - lg) * h


# ---------------------------------------------------------------- TAP

class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, desc, diag=None):
        self.n += 1
        print('%sok %d - %s' % ('' if cond else 'not ', self.n, desc), flush=True)
        if not cond:
            self.failed += 1
            if diag:
                for line in str(diag).splitlines()[:40]:
                    print('#   ' + line, flush=True)
        return cond

    def note(self, msg):
        print('# ' + msg, flush=True)


# ---------------------------------------------------------------- servers

class Server:
    def __init__(self, bindir, base, name, port):
        self.bindir, self.name, self.port = bindir, name, port
        self.data = os.path.join(base, name)
        self.sock = base
        self.log = os.path.join(base, name + '.log')

    def pg_ctl(self, *args, check=True):
        return subprocess.run([os.path.join(self.bindir, 'pg_ctl'), '-D', self.data,
                               '-l', self.log, '-w', '-t', '120'] + list(args),
                              check=check, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def start(self):
        self.pg_ctl('start')

    def crash(self):
        self.pg_ctl('stop', '-m', 'immediate')

    def stop(self):
        self.pg_ctl('stop', '-m', 'fast', check=False)

    def conn(self, autocommit=True):
        c = psycopg2.connect(host=self.sock, port=self.port, dbname='postgres',
                             user='postgres', connect_timeout=20)
        c.autocommit = autocommit
        return c

    def query(self, sql, args=None):
        c = self.conn()
        try:
            cur = c.cursor()
            cur.execute(sql, args)
            return cur.fetchall() if cur.description else None
        finally:
            c.close()

    def logtext(self):
        with open(self.log, errors='replace') as f:
            return f.read()


def free_port():
    import socket
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    p = s.getsockname()[1]
    s.close()
    return p


def init_primary(bindir, base, standby):
    srv = Server(bindir, base, 'primary', free_port())
    subprocess.run([os.path.join(bindir, 'initdb'), '-D', srv.data, '-U', 'postgres',
                    '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C.UTF-8'],
                   check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(srv.data, 'postgresql.conf'), 'a') as f:
        f.write("""
port = %d
listen_addresses = ''
unix_socket_directories = '%s'
shared_preload_libraries = 'abtree'
fsync = off
max_connections = 40
autovacuum_naptime = 1s
autovacuum = %s
log_min_messages = warning
abtree.pbtree_buffer_budget = 8
abtree.pbtree_merge_threshold = 3
wal_level = replica
max_wal_senders = 4
%s%s""" % (srv.port, base, 'off' if standby else 'on', "wal_consistency_checking = 'abtree'\nmax_wal_size = 2GB\n" if standby else '',
       # the self-test of the ledger check: acknowledged commits may be lost
       'synchronous_commit = off\n' if SABOTAGE == 'async_commit' else ''))
    with open(os.path.join(srv.data, 'pg_hba.conf'), 'a') as f:
        f.write('local replication all trust\n')
    srv.start()
    return srv


def init_standby(bindir, base, primary):
    sb = Server(bindir, base, 'standby', free_port())
    subprocess.run([os.path.join(bindir, 'pg_basebackup'), '-h', base, '-p', str(primary.port),
                    '-U', 'postgres', '-D', sb.data, '-R', '-X', 'stream', '--no-sync',
                    '-C', '-S', 'standby', '--checkpoint=fast'],
                   check=True)
    with open(os.path.join(sb.data, 'postgresql.conf'), 'a') as f:
        f.write("\nport = %d\nhot_standby = on\nhot_standby_feedback = on\n"
                "wal_receiver_status_interval = 1s\n" % sb.port)
    sb.start()
    return sb


# ---------------------------------------------------------------- ledger

class Ledger:
    """Acknowledged state per table: id -> row tuple (COLS order)."""

    def __init__(self):
        self.rows = {t: {} for t in TABLES}
        self.lock = threading.Lock()
        self.in_doubt = []      # [(table, {id: before}, {id: after})]
        self.commits = 0
        self.rollbacks = 0

    def apply(self, changes):
        with self.lock:
            for table, before, after in changes:
                for i in before:
                    self.rows[table].pop(i, None)
                self.rows[table].update(after)
            self.commits += 1


def row_values(rng, wid, seq):
    i = (wid + 1) * 100_000_000 + seq
    k = rng.randrange(1000)
    g = rng.randrange(40)
    txt = ('%08x' % rng.getrandbits(32)) * rng.choice((1, 4, 12))
    w = rng.randrange(0, 10)
    return (i, k, g, txt, w, 0)


# ---------------------------------------------------------------- workload

class Workload:
    def __init__(self, srv, ledger, seed, cycle):
        self.srv, self.ledger = srv, ledger
        self.seed, self.cycle = seed, cycle
        self.crashed = threading.Event()
        self.stop = threading.Event()
        self.errors = []        # unexpected errors before the crash
        self.counts = {}
        self.clock = threading.Lock()

    def count(self, what, n=1):
        with self.clock:
            self.counts[what] = self.counts.get(what, 0) + n

    def fail(self, who, e):
        if not self.crashed.is_set() and not self.stop.is_set():
            self.errors.append('%s: %s' % (who, str(e).strip()))

    def writer(self, wid, seqbase):
        rng = random.Random(self.seed * 1000 + self.cycle * 37 + wid)
        seq = seqbase
        try:
            conn = self.srv.conn(autocommit=False)
        except psycopg2.Error as e:
            return self.fail('writer %d connect' % wid, e)
        cur = conn.cursor()
        # the writers take the four protocols in turn, shifted each cycle, so
        # that three writers meet every protocol within four cycles
        protocols = ['safe_page', 'page_exclusive', 'path_exclusive', 'batched']
        if any(k.am == 'abtree' for k in INDEX_KINDS):
            cur.execute("SET abtree.weight_protocol = %s",
                        (protocols[(wid + self.cycle) % len(protocols)],))
            conn.commit()
        mine = {t: [] for t in TABLES}   # ids this writer owns (ledger view)
        with self.ledger.lock:
            for t in TABLES:
                mine[t] = [i for i in self.ledger.rows[t] if i // 100_000_000 == wid + 1]
        while not self.stop.is_set():
            changes = []
            op = rng.random()
            table = rng.choice(list(TABLES))
            rows = self.ledger.rows[table]
            try:
                if op < 0.5 or len(mine[table]) < 20:
                    after = {}
                    for _ in range(rng.randrange(1, 25)):
                        seq += 1
                        r = row_values(rng, wid, seq)
                        after[r[0]] = r
                    cur.executemany('INSERT INTO %s VALUES (%%s, %%s, %%s, %%s, %%s, %%s)' % table,
                                    list(after.values()))
                    changes.append((table, {}, after))
                    what = 'insert'
                elif op < 0.75:
                    ids = rng.sample(mine[table], min(len(mine[table]), rng.randrange(1, 6)))
                    before = {i: rows[i] for i in ids}
                    after = {}
                    touch = rng.random() < 0.3
                    for i in ids:
                        o = rows[i]
                        n = (i, rng.randrange(1000), o[2] if rng.random() < 0.5 else rng.randrange(40),
                             o[3], rng.randrange(0, 10), o[5] + 1)
                        if touch:
                            # only ver, which no index has: a HOT update where the page has room
                            n = o[:5] + (o[5] + 1,)
                        cur.execute('UPDATE %s SET k = %%s, g = %%s, w = %%s, ver = %%s WHERE id = %%s'
                                    % table, (n[1], n[2], n[4], n[5], i))
                        after[i] = n
                    changes.append((table, before, after))
                    what = 'update'
                else:
                    ids = rng.sample(mine[table], min(len(mine[table]) - 10, rng.randrange(1, 15)))
                    before = {i: rows[i] for i in ids}
                    cur.execute('DELETE FROM %s WHERE id = ANY(%%s)' % table, (ids,))
                    changes.append((table, before, {}))
                    what = 'delete'
                if rng.random() < 0.05:
                    conn.rollback()
                    self.count('rollback')
                    continue
            except psycopg2.Error as e:
                if self.crashed.is_set():
                    break
                self.fail('writer %d' % wid, e)
                try:
                    conn.rollback()
                except psycopg2.Error:
                    break
                continue
            try:
                conn.commit()
            except psycopg2.Error as e:
                # COMMIT sent, no answer: it may or may not have committed
                with self.ledger.lock:
                    self.ledger.in_doubt.append(changes)
                if not self.crashed.is_set():
                    self.fail('writer %d commit' % wid, e)
                break
            self.ledger.apply(changes)
            self.count(what)
            for t, before, after in changes:
                for i in before:
                    if i not in after:
                        mine[t].remove(i)
                for i in after:
                    if i not in before:
                        mine[t].append(i)
        conn.close()
        return seq

    def vacuumer(self):
        rng = random.Random(self.seed * 1000 + self.cycle * 37 + 99)
        try:
            conn = self.srv.conn()
            cur = conn.cursor()
            while not self.stop.is_set():
                time.sleep(rng.uniform(0.2, 0.8))
                t = rng.choice(list(TABLES))
                cur.execute(rng.choice(['VACUUM %s', 'VACUUM (INDEX_CLEANUP ON) %s', 'ANALYZE %s']) % t)
                self.count('vacuum')
        except psycopg2.Error as e:
            self.fail('vacuum', e)

    def sampler(self, sid):
        rng = random.Random(self.seed * 1000 + self.cycle * 37 + 50 + sid)
        abt = [n for n in index_names() if n[3].am == 'abtree']
        try:
            conn = self.srv.conn()
            cur = conn.cursor()
            while not self.stop.is_set():
                table, idx, keys, kind, body, opt = rng.choice(abt)
                op = rng.random()
                if op < 0.4:
                    cur.execute("SET abtree.swr_index = %s", (idx,))
                    cur.execute('SELECT count(*), sum(w) FROM %s TABLESAMPLE swr(200)' % table)
                    n = cur.fetchone()[0]
                    if n != 200 and not self.stop.is_set():
                        self.fail('sampler', 'swr(200) gave %s rows' % n)
                    self.count('swr draws', 200)
                elif op < 0.7:
                    lo = rng.randrange(1000)
                    col = keys[0]
                    if col in ('k', 'g', 'id'):
                        cur.execute("SELECT abtree_range_weight(%s, %s::bigint, %s::bigint)"
                                    if col == 'id' else
                                    "SELECT abtree_range_weight(%s, %s::int, %s::int)",
                                    (idx, lo, lo + rng.randrange(500)))
                    else:
                        cur.execute("SELECT abtree_range_weight(%s, %s::text, %s::text)",
                                    (idx, '%x' % rng.randrange(16), '%x' % rng.randrange(16)))
                    cur.fetchone()
                    self.count('range weights')
                elif op < 0.85:
                    cur.execute("SET abtree.swr_index = 'abtree_s_k, abtree_m_tk'")
                    cur.execute("SELECT estimate FROM abtree_ndistinct(%s, %s, 1000)",
                                (table, rng.choice([['k'], ['g', 'k'], ['w', 'g']])))
                    cur.fetchone()
                    self.count('ndistinct estimates')
                else:
                    cur.execute(kind.verify_recovered.format(index="'%s'" % idx))
                    self.count('verifications under load')
        except psycopg2.Error as e:
            self.fail('sampler %d' % sid, e)


# ---------------------------------------------------------------- checks

def fetch_table(conn, table, where_ids=None):
    cur = conn.cursor()
    cur.execute('SET enable_indexscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off')
    if where_ids is None:
        cur.execute('SELECT %s FROM %s' % (', '.join(COLS), table))
    else:
        cur.execute('SELECT %s FROM %s WHERE id = ANY(%%s)' % (', '.join(COLS), table), (where_ids,))
    rows = {r[0]: tuple(r) for r in cur.fetchall()}
    cur.execute('RESET ALL')
    return rows


def resolve_in_doubt(tap, srv, ledger, label):
    """Each unacknowledged COMMIT: all its changes or none."""
    ok = True
    resolved = []
    with srv.conn() as conn:
        for changes in ledger.in_doubt:
            states = set()
            for table, before, after in changes:
                ids = list(set(before) | set(after))
                have = fetch_table(conn, table, ids)
                if all(have.get(i) == after.get(i) for i in ids):
                    states.add('after')
                elif all(have.get(i) == before.get(i) for i in ids):
                    states.add('before')
                else:
                    states.add('neither')
            if states == {'after'}:
                ledger.apply(changes)
                resolved.append('committed')
            elif states == {'before'}:
                resolved.append('rolled back')
            else:
                ok = False
                resolved.append('broken: %s' % states)
    conn.close()
    tap.ok(ok, '%s: %d unacknowledged commits are all or nothing (%s)'
           % (label, len(ledger.in_doubt), ', '.join(resolved) or 'none'))
    n = len(ledger.in_doubt)
    ledger.in_doubt = []
    return n


def check_ledger(tap, srv, ledger, label):
    rows = 0
    with srv.conn() as conn:
        for table in TABLES:
            have = fetch_table(conn, table)
            want = ledger.rows[table]
            missing = [i for i in want if i not in have]
            extra = [i for i in have if i not in want]
            wrong = [i for i in want if i in have and have[i] != want[i]]
            tap.ok(not missing and not extra and not wrong,
                   '%s: table %s holds exactly the %d acknowledged rows' % (label, table, len(want)),
                   'missing %s\nextra %s\nwrong %s' % (missing[:10], extra[:10],
                                                       [(have[i], want[i]) for i in wrong[:5]]))
            rows += len(want)
    conn.close()
    return rows


def check_indexes_find(tap, srv, ledger, label):
    """Every ledger row through every index, each index alone."""
    lookups = 0
    names = index_names()
    conn = srv.conn(autocommit=False)
    cur = conn.cursor()
    for table in TABLES:
        cur.execute('CREATE TEMP TABLE IF NOT EXISTS led_%s (LIKE %s)' % (table, table))
        cur.execute('TRUNCATE led_%s' % table)
        cur.executemany('INSERT INTO led_%s VALUES (%%s, %%s, %%s, %%s, %%s, %%s)' % table,
                        list(ledger.rows[table].values()))
        cur.execute('ANALYZE led_%s' % table)
    conn.commit()
    for table, idx, keys, kind, body, opt in names:
        others = [n[1] for n in names if n[0] == table and n[1] != idx]
        try:
            for o in others:
                cur.execute('DROP INDEX %s' % o)
            cur.execute('SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off;'
                        'SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off;'
                        'SET LOCAL enable_sort = off; SET LOCAL enable_material = off')
            cond = ' AND '.join('t.%s = l.%s' % (c, c) for c in keys)
            q = ('SELECT l.id FROM led_%s l WHERE NOT EXISTS (SELECT 1 FROM %s t WHERE %s AND t.id = l.id)'
                 % (table, table, cond))
            cur.execute('EXPLAIN ' + q)
            plan = '\n'.join(r[0] for r in cur.fetchall())
            cur.execute(q)
            missing = [r[0] for r in cur.fetchall()]
            tap.ok(idx in plan and not missing,
                   '%s: all %d rows of %s found through %s' % (label, len(ledger.rows[table]), table, idx),
                   'missing: %s\n%s' % (missing[:10], plan))
            lookups += len(ledger.rows[table])
            order = body.split(' INCLUDE')[0].strip().strip('()')
            q = 'SELECT count(*) FROM (SELECT * FROM %s ORDER BY %s) x' % (table, order)
            cur.execute('EXPLAIN ' + q)
            plan = '\n'.join(r[0] for r in cur.fetchall())
            cur.execute(q)
            n = cur.fetchone()[0]
            tap.ok(idx in plan and n == len(ledger.rows[table]),
                   '%s: a full scan of %s returns %d rows' % (label, idx, n),
                   'ledger has %d\n%s' % (len(ledger.rows[table]), plan))
        except psycopg2.Error as e:
            tap.ok(False, '%s: lookups through %s' % (label, idx), e)
        conn.rollback()
    conn.close()
    return lookups


def check_verify(tap, srv, label, recovered):
    for table, idx, keys, kind, body, opt in index_names():
        sql = (kind.verify_recovered if recovered else kind.verify).format(index="'%s'" % idx)
        try:
            srv.query(sql)
            tap.ok(True, '%s: %s verifies (%s)' % (label, idx, 'at least, right after recovery'
                                                   if recovered else 'exact, after VACUUM'))
        except psycopg2.Error as e:
            tap.ok(False, '%s: %s verifies' % (label, idx), e)


def range_mismatches(srv, ledger, ranges):
    """The ranges whose abtree_range_weight differs from the ledger's."""
    bad = []
    for table, idx, col, opt, lo, hi in ranges:
        got = srv.query('SELECT abtree_range_weight(%%s, %%s::%s, %%s::%s)'
                        % ((('bigint',) * 2) if col == 'id' else ('int', 'int')),
                        (idx, lo, hi))[0][0]
        want = sum((r[4] if opt == 'weighted' else 1) for r in ledger.rows[table].values()
                   if lo <= r[COLS.index(col)] <= hi)
        if got != want:
            bad.append('%s [%s, %s]: %s, ledger %s' % (idx, lo, hi, got, want))
    return bad


def check_estimates(tap, srv, ledger, rng, label, settle=None):
    """abtree_range_weight exact at rest; abtree_ndistinct sane.  settle, if
    given, is called (and the ranges checked again, up to five times) while
    they differ: with a standby whose hot_standby_feedback lags, VACUUM on
    the primary may not yet be allowed to remove every dead entry."""
    ranges = []
    for table, idx, keys, kind, body, opt in index_names():
        if kind.am != 'abtree' or keys[0] not in ('k', 'g', 'id'):
            continue
        col = keys[0]
        vals = sorted(r[COLS.index(col)] for r in ledger.rows[table].values())
        if not vals:
            continue
        for _ in range(4):
            lo, hi = sorted((rng.choice(vals), rng.choice(vals)))
            ranges.append((table, idx, col, opt, lo, hi))
    n = len(ranges)
    bad = range_mismatches(srv, ledger, ranges)
    for _ in range(5 if settle else 0):
        if not bad:
            break
        settle()
        bad = range_mismatches(srv, ledger, ranges)
    tap.ok(not bad, '%s: %d abtree_range_weight ranges equal the ledger after VACUUM' % (label, n),
           '\n'.join(bad))
    for table in TABLES:
        true = len({r[1] for r in ledger.rows[table].values()})
        est = srv.query("SET abtree.swr_index = 'abtree_s_k, abtree_m_tk';"
                        "SELECT estimate FROM abtree_ndistinct(%s, ARRAY['k'], 3000, seed => 0.5)",
                        (table,))[0][0]
        tap.ok(est is not None and true / 2 <= est <= true * 2,
               '%s: abtree_ndistinct(%s.k) = %.0f, true %d' % (label, table, est or -1, true))
    return n


def sample_ids(srv, table, idx, seed, where=''):
    with srv.conn() as conn, conn.cursor() as cur:
        cur.execute('SET abtree.swr_index = %s', (idx,))
        cur.execute('SELECT id FROM %s TABLESAMPLE swr(%d) REPEATABLE (%s) %s' % (table, DRAWS, seed, where))
        ids = [r[0] for r in cur.fetchall()]
    conn.close()
    return ids


def check_uniform(tap, srv, ledger, seed, label, stats):
    """Chi-square of the draws over 10 equal-count buckets in key order."""
    for table, suffix, order, weighted in SAMPLE_TESTS:
        idx = 'abtree_%s_%s' % (table, suffix)
        with srv.conn() as conn, conn.cursor() as cur:
            cur.execute('SELECT id, w, ntile(%d) OVER (ORDER BY %s) - 1 FROM %s'
                        % (BUCKETS, order, table))
            rows = cur.fetchall()
        conn.close()
        bucket = {r[0]: r[2] for r in rows}
        mass = [0] * BUCKETS
        for i, w, b in rows:
            mass[b] += w if weighted else 1
        total = sum(mass)
        ids = sample_ids(srv, table, idx, seed,
                         'WHERE k >= 100' if SABOTAGE == 'biased_sample' and idx == 'abtree_s_k' else '')
        obs = [0] * BUCKETS
        strays = 0
        for i in ids:
            if i in bucket:
                obs[bucket[i]] += 1
            else:
                strays += 1
        stat = sum((obs[b] - DRAWS * mass[b] / total) ** 2 / (DRAWS * mass[b] / total)
                   for b in range(BUCKETS) if mass[b] > 0)
        dof = sum(1 for m in mass if m > 0) - 1
        p = chi2_sf(stat, dof)
        stats.append(p)
        weight = {r[0]: r[1] for r in rows}
        zero_drawn = sum(1 for i in ids if weighted and weight.get(i) == 0)
        tap.ok(len(ids) == DRAWS and strays == 0 and zero_drawn == 0 and p >= ALPHA,
               '%s: swr(%d) on %s via %s %s: chi2 = %.1f, %d dof, p = %.3g'
               % (label, DRAWS, table, idx, 'weighted' if weighted else 'uniform', stat, dof, p),
               'rows %d, not in table %d, weight-0 rows drawn %d\nexpected %s\nobserved %s'
               % (len(ids), strays, zero_drawn,
                  [round(DRAWS * m / total) for m in mass], obs))


def wait_catchup(primary, standby, timeout=180):
    lsn = primary.query('SELECT pg_current_wal_insert_lsn()')[0][0]
    t0 = time.time()
    while time.time() - t0 < timeout:
        try:
            if standby.query('SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn', (lsn,))[0][0]:
                return True
        except psycopg2.Error:
            pass
        time.sleep(0.2)
    return False


def check_standby(tap, primary, standby, ledger, seed, label, stats):
    tap.ok(wait_catchup(primary, standby), '%s: standby caught up' % label)
    check_verify(tap, standby, label + ' standby', recovered=False)
    for table in TABLES:
        q = 'SELECT count(*), md5(string_agg(%s::text, \'|\' ORDER BY id)) FROM %s t' % (
            'row(%s)' % ', '.join(COLS), table)
        tap.ok(primary.query(q) == standby.query(q),
               '%s: standby table %s equals the primary' % (label, table))
    q = ('SELECT %s' % ', '.join("(SELECT total_weight || '/' || entries FROM abtree_stats('%s'))" % n[1]
                                 for n in index_names() if n[3].am == 'abtree'))
    tap.ok(primary.query(q) == standby.query(q),
           '%s: standby abtree_stats (weights, entries) equal the primary' % label,
           '%s\n%s' % (primary.query(q), standby.query(q)))
    q = ("SET abtree.swr_index = 'abtree_s_k, abtree_m_tk'; SELECT abtree_range_weight('abtree_s_k', 100, 600), abtree_range_weight('abtree_s_idw', 0::bigint, 300000000::bigint),"
         " (SELECT estimate FROM abtree_ndistinct('s', ARRAY['k'], 3000, seed => 0.5))")
    tap.ok(primary.query(q) == standby.query(q),
           '%s: standby range weights and ndistinct equal the primary' % label,
           '%s\n%s' % (primary.query(q), standby.query(q)))
    check_uniform(tap, standby, ledger, seed, label + ' standby', stats)
    log = standby.logtext()
    bad = [ln for ln in log.splitlines() if 'inconsistent page' in ln or 'PANIC' in ln or 'TRAP' in ln]
    tap.ok(not bad, '%s: standby log shows no inconsistent page, PANIC or TRAP' % label,
           '\n'.join(bad[:10]))


# ---------------------------------------------------------------- main

def setup_schema(srv, ledger, rng):
    with srv.conn() as conn, conn.cursor() as cur:
        cur.execute('CREATE EXTENSION IF NOT EXISTS abtree')
        for table in TABLES:
            cur.execute('CREATE TABLE %s (id bigint NOT NULL, k int NOT NULL, g int NOT NULL, '
                        'txt text NOT NULL, w int NOT NULL, ver int NOT NULL) '
                        # room on each page for the updates of ver alone to be HOT
                        'WITH (fillfactor = 80)' % table)
            rows = [row_values(rng, 8, i) for i in range(1, 2001)]
            cur.executemany('INSERT INTO %s VALUES (%%s, %%s, %%s, %%s, %%s, %%s)' % table, rows)
            ledger.rows[table].update({r[0]: r for r in rows})
        # indexes after the rows: bulk builds, then inserts
        for table, idx, keys, kind, body, opt in index_names():
            w = {'plain': '', 'small': kind.small, 'weighted': kind.weighted}[opt]
            cur.execute('CREATE INDEX %s ON %s USING %s %s %s' % (idx, table, kind.am, body, w))
    conn.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--cycles', type=int, default=int(os.environ.get('ABTREE_STRESS_CYCLES', 4)))
    ap.add_argument('--seed', type=int, default=int(os.environ.get('ABTREE_STRESS_SEED', 4242)))
    ap.add_argument('--standby', action='store_true')
    ap.add_argument('--writers', type=int, default=3)
    ap.add_argument('--min-run', type=float, default=1.0, help='seconds of workload, at least')
    ap.add_argument('--max-run', type=float, default=None,
                    help='seconds of workload, at most (5, with --standby 2.5)')
    ap.add_argument('--bindir', default=None)
    ap.add_argument('--figures-dir', default=None)
    ap.add_argument('--keep', action='store_true', help='keep the data directories')
    args = ap.parse_args()
    if args.max_run is None:
        args.max_run = 2.5 if args.standby else 5.0
    bindir = args.bindir or subprocess.run(['pg_config', '--bindir'], capture_output=True,
                                           text=True, check=True).stdout.strip()
    suite = 'stress_standby' if args.standby else 'stress_crash'
    rng = random.Random(args.seed)
    tap = Tap()
    tap.note('%s: seed %d, %d cycles, %d writers, kinds %s, bindir %s'
             % (suite, args.seed, args.cycles, args.writers, [k.am for k in INDEX_KINDS], bindir))
    base = tempfile.mkdtemp(prefix='abtree-stress.')
    ledger = Ledger()
    primary = init_primary(bindir, base, args.standby)
    pgver = primary.query('SHOW server_version')[0][0].split()[0]
    setup_schema(primary, ledger, rng)
    standby = init_standby(bindir, base, primary) if args.standby else None
    figs = {'cycles survived': 0, 'rows checked': 0, 'index lookups': 0,
            'unacknowledged commits resolved': 0, 'chi-square tests': 0}
    counts = {}
    pvalues = []
    seqs = [0] * args.writers
    t_start = time.time()
    errors = []
    try:
        for cycle in range(1, args.cycles + 1):
            label = 'cycle %d' % cycle
            wl = Workload(primary, ledger, args.seed, cycle)
            threads = []
            results = {}
            for w in range(args.writers):
                th = threading.Thread(target=lambda w=w: results.__setitem__(w, wl.writer(w, seqs[w])))
                threads.append(th)
            threads.append(threading.Thread(target=wl.vacuumer))
            threads += [threading.Thread(target=wl.sampler, args=(s,)) for s in range(2)]
            for th in threads:
                th.start()
            delay = rng.uniform(args.min_run, args.max_run)
            time.sleep(delay)
            wl.crashed.set()
            primary.crash()
            wl.stop.set()
            for th in threads:
                th.join()
            for w in range(args.writers):
                if results.get(w) is not None:
                    seqs[w] = results[w]
            for k, v in wl.counts.items():
                counts[k] = counts.get(k, 0) + v
            tap.ok(not wl.errors, '%s: %.1f s of workload, no unexpected errors (%s)'
                   % (label, delay, ', '.join('%s %d' % kv for kv in sorted(wl.counts.items()))),
                   '\n'.join(wl.errors[:10]))
            errors += wl.errors
            primary.start()
            check_verify(tap, primary, label, recovered=True)
            figs['unacknowledged commits resolved'] += resolve_in_doubt(tap, primary, ledger, label)
            figs['rows checked'] += check_ledger(tap, primary, ledger, label)
            figs['index lookups'] += check_indexes_find(tap, primary, ledger, label)
            # FREEZE makes VACUUM wait for each heap page's cleanup lock: a
            # plain VACUUM skips pruning a page that another process has
            # pinned (right after recovery the checkpointer and the
            # background writer pin pages to flush them), leaving dead tuples
            # and their index entries, which the exact checks below count
            primary.query('VACUUM (FREEZE, INDEX_CLEANUP ON)')
            check_verify(tap, primary, label, recovered=False)

            def settle():
                # After a crash the standby counts the transactions the crash
                # ended as running until the primary logs its running
                # transactions (a checkpoint does), and its hot_standby_feedback
                # keeps the slot's xmin there: VACUUM may not remove what they
                # could see.  Log them, wait for the feedback, VACUUM again.
                primary.query('CHECKPOINT')
                target = int(primary.query(
                    'SELECT pg_snapshot_xmin(pg_current_snapshot())::text')[0][0])
                wait_catchup(primary, standby)
                for _ in range(100):
                    held = primary.query("SELECT xmin::text FROM pg_replication_slots "
                                         "WHERE slot_name = 'standby'")
                    if not held or held[0][0] is None or int(held[0][0]) >= target:
                        break
                    time.sleep(0.2)
                primary.query('VACUUM (FREEZE, INDEX_CLEANUP ON)')
            check_estimates(tap, primary, ledger, rng, label, settle if standby else None)
            check_uniform(tap, primary, ledger, args.seed + cycle, label, pvalues)
            if standby:
                check_standby(tap, primary, standby, ledger, args.seed + cycle, label, pvalues)
            if tap.failed == 0:
                figs['cycles survived'] += 1
    except Exception as e:      # a broken harness or server is a failure too
        import traceback
        tap.ok(False, 'the driver ran to the end', traceback.format_exc())
        errors.append(str(e))
    finally:
        for s in (standby, primary):
            if s:
                s.stop()
        log = primary.logtext()
        bad = [ln for ln in log.splitlines() if 'TRAP:' in ln or 'PANIC' in ln
               or ('terminated by signal' in ln)]
        tap.ok(not bad, 'primary log shows no TRAP, PANIC or backend killed by a signal',
               '\n'.join(bad[:10]))
    figs['chi-square tests'] = len(pvalues)
    fig_list = [('cycles', args.cycles), ('cycles survived', figs['cycles survived']),
                ('seed', args.seed),
                ('transactions committed', ledger.commits),
                ('rollbacks (expected absent)', counts.get('rollback', 0)),
                ('unacknowledged commits resolved', figs['unacknowledged commits resolved']),
                ('rows checked against the ledger', figs['rows checked']),
                ('index lookups', figs['index lookups']),
                ('rows at the end', sum(len(r) for r in ledger.rows.values())),
                ('swr draws under load', counts.get('swr draws', 0)),
                ('range weights under load', counts.get('range weights', 0)),
                ('ndistinct estimates under load', counts.get('ndistinct estimates', 0)),
                ('chi-square tests', len(pvalues)),
                ('smallest chi-square p', '%.3g' % min(pvalues) if pvalues else '-'),
                ('rows lost', 'none' if tap.failed == 0 else 'see failures'),
                ('failed checks', tap.failed),
                ('seconds', round(time.time() - t_start))]
    title = ('Streaming standby with wal_consistency_checking' if args.standby
             else 'Crash cycles under a mixed workload')
    desc = ['test/stress/stress.py%s: %d writers, VACUUM, sampling and estimate sessions; '
            'pg_ctl stop -m immediate at random moments, restart, ledger and index checks'
            % (' --standby' if args.standby else '', args.writers)]
    path = write_figures(args.figures_dir, suite, title, pgver,
                         'pass' if tap.failed == 0 else 'fail', fig_list,
                         notes=errors[:5], describe=desc)
    tap.note('figures in %s' % path)
    for name, v in fig_list:
        tap.note('%s: %s' % (name, v))
    print('1..%d' % tap.n)
    if args.keep or tap.failed:
        tap.note('data directories kept in %s' % base)
    else:
        shutil.rmtree(base, ignore_errors=True)
    sys.exit(1 if tap.failed else 0)


if __name__ == '__main__':
    main()
