#!/usr/bin/python3
"""Random interleavings of abtree weight passes, splits, VACUUM, cancels, draws and crashes,
with I1 checked after every step (issue 20: "go looking for more of the same kind").

Inserts stop inside their weight pass at a chosen level (abtree.debug_pass_pause: each
pausable session waits for an advisory lock key of its own that the driver holds) while other
steps split pages around them, delete and VACUUM, cancel them, draw samples (some of them
stopped between a downlink and its child by abtree.debug_sample_pause) or crash the server.
After every step every index must pass abtree_verify(exact => false): no downlink lighter than
what is below it (I1 of ../../../shared/design/weights-and-wal.md).  At the end, with nothing in
flight, VACUUM and abtree_verify(exact => true) (I2), and every row found through the index.

Wide keys (a 640-byte pad) keep fanouts near ten, so a few inserts split leaves, parents and
roots.  The steps come from a seeded PRNG; timing can still differ between runs, so a
failure prints the seed and the steps up to it (re-run with the same --seed and --steps).

  test/stress/interleave.py --bindir DIR [--seed S] [--steps N] [--minutes M] [--checksums]

prints TAP.  abtree_verify, like a draw, first makes the one-time check that raises what crash
recovery left lighter than its child (src/abtree/README, "Crash recovery"), so I1 here is what
draws see.  CI (scripts/test.sh) runs seed 5 without crash steps and seed 101 with checksums and
crash steps (which breaks I1 on b6939c3, before that check); long runs:
  for s in $(seq 1 1000); do test/stress/interleave.py --bindir ... --seed $s --steps 2000 --checksums || break; done
"""

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stress import Tap, Server, free_port  # noqa: E402

import psycopg2  # noqa: E402

TABLES = {
    # name: (rows at start, weighted)
    'il3': (300, False),
    'il4': (900, False),
    'ilw': (300, True),
}
KEY_BASE = 71000            # advisory keys: KEY_BASE + session number
SAMPLE_KEY = 70999


def init_server(bindir, base, checksums, name='il', conf=''):
    """A throwaway server with abtree preloaded, socket only, in base (differential.py too)."""
    srv = Server(bindir, base, name, free_port())
    subprocess.run([os.path.join(bindir, 'initdb'), '-D', srv.data, '-U', 'postgres',
                    '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C.UTF-8']
                   + (['--data-checksums'] if checksums else []),
                   check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(srv.data, 'postgresql.conf'), 'a') as f:
        f.write(f"""
port = {srv.port}
listen_addresses = ''
unix_socket_directories = '{base}'
shared_preload_libraries = 'abtree'
fsync = off
autovacuum = off
max_connections = 30
log_min_messages = warning
{conf}""")
    srv.start()
    return srv


SCHEMA = """
CREATE EXTENSION abtree;
CREATE FUNCTION il_pad(i int) RETURNS text IMMUTABLE LANGUAGE sql AS
  $$ SELECT string_agg(md5(i::text || '-' || j::text), '') FROM generate_series(1, 20) j $$;
"""


def setup(srv, rng):
    srv.query(SCHEMA)
    for t, (n, weighted) in TABLES.items():
        srv.query(f"CREATE TABLE {t} (k int, pad text, w bigint)")
        srv.query(f"INSERT INTO {t} SELECT i * 1000, il_pad(i * 1000), 1 + (i % 7) "
                  f"FROM generate_series(1, {n}) i")
        opts = "WITH (weight_column = 'w', fillfactor = 100)" if weighted else "WITH (fillfactor = 100)"
        inc = " INCLUDE (w)" if weighted else ""
        srv.query(f"CREATE INDEX {t}_idx ON {t} USING abtree (k, pad){inc} {opts}")


class Session:
    """A connection whose inserts can be stopped inside their weight pass."""

    def __init__(self, srv, n):
        self.n, self.key = n, KEY_BASE + n
        self.conn = srv.conn()
        cur = self.conn.cursor()
        cur.execute("SELECT pg_backend_pid()")
        self.pid = cur.fetchone()[0]
        # the weight pass these pauses stop is safe_page's (batched, the
        # default, makes none)
        cur.execute(f"SET abtree.weight_protocol = safe_page; "
                    f"SET abtree.debug_pass_pause = {self.key}")
        self.thread = None
        self.error = None

    def run(self, sql):
        def body():
            try:
                self.conn.cursor().execute(sql)
            except psycopg2.Error as e:
                self.error = e.pgcode or str(e).splitlines()[0]
        self.error = None
        self.thread = threading.Thread(target=body, daemon=True)
        self.thread.start()

    def busy(self):
        return self.thread is not None and self.thread.is_alive()

    def join(self, timeout=60):
        if self.thread:
            self.thread.join(timeout)
            if self.thread.is_alive():
                return False
            self.thread = None
        return True


class Driver:
    def __init__(self, args, tap):
        self.args, self.tap = args, tap
        self.rng = random.Random(args.seed)
        self.base = tempfile.mkdtemp(prefix='abtree-interleave-')
        os.chmod(self.base, 0o755)
        self.srv = init_server(args.bindir, self.base, args.checksums)
        setup(self.srv, self.rng)
        self.log = []
        self.connect()

    def connect(self):
        self.ctl = self.srv.conn()
        self.sessions = [Session(self.srv, i) for i in range(self.args.sessions)]
        self.held = set()
        self.sampler = None

    def heights(self, t):
        return self.srv.query(f"SELECT height FROM abtree_stats('{t}_idx')")[0][0]

    def waiting(self, pid):
        return self.srv.query(
            "SELECT count(*) FROM pg_locks WHERE pid = %s AND NOT granted AND locktype = 'advisory'",
            (pid,))[0][0] > 0

    def settle(self, s, timeout=30):
        """Until the session waits on its key or its statement ended."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if not s.busy() or self.waiting(s.pid):
                return True
            time.sleep(0.01)
        return False

    def key_for(self, t):
        n = TABLES[t][0]
        return self.rng.randrange(1000, (n + 40) * 1000) + self.rng.choice((0, 1, 500))

    # ---- steps ----

    def step_pause_insert(self):
        idle = [s for s in self.sessions if not s.busy()]
        if not idle:
            return self.step_release()
        s = self.rng.choice(idle)
        t = self.rng.choice(list(TABLES))
        level = self.rng.randrange(0, max(1, self.heights(t) - 1))
        k = self.key_for(t)
        if s.key not in self.held:
            self.ctl.cursor().execute("SELECT pg_advisory_lock(%s)", (s.key,))
            self.held.add(s.key)
        s.conn.cursor().execute(f"SET abtree.debug_pass_pause_level = {level}")
        s.table, s.k = t, k
        s.run(f"INSERT INTO {t} VALUES ({k}, il_pad({k}), {1 + abs(k) % 5})")
        self.settle(s)
        return f"pause s{s.n} {t} k={k} level={level}"

    def step_release(self):
        paused = [s for s in self.sessions if s.key in self.held]
        if not paused:
            return self.step_bulk()
        s = self.rng.choice(paused)
        self.ctl.cursor().execute("SELECT pg_advisory_unlock(%s)", (s.key,))
        self.held.discard(s.key)
        if not s.join():
            return f"release s{s.n}: STILL RUNNING"
        return f"release s{s.n}" + (f" ({s.error})" if s.error else "")

    def step_bulk(self):
        paused = [s for s in self.sessions if s.busy() and s.key in self.held]
        if paused and self.rng.random() < 0.8:
            # around a paused insert: split its leaf, its parent, or pages beside them
            s = self.rng.choice(paused)
            t = s.table
            k = s.k + self.rng.choice((-40000, -8000, -1500, -300, 1, 300, 1500, 8000, 40000))
            spread = self.rng.choice((1, 1, 97, 700, 3000))
        else:
            t = self.rng.choice(list(TABLES))
            k = self.key_for(t)
            spread = self.rng.choice((1, 3, 20))
        n = self.rng.choice((3, 8, 15, 40, 120))
        self.srv.query(f"INSERT INTO {t} SELECT k, il_pad(k), 1 + abs(k) % 5 FROM "
                       f"(SELECT {k} + g * {spread} AS k FROM generate_series(1, {n}) g) s")
        return f"bulk {t} k={k} n={n} spread={spread}"

    def step_delete_vacuum(self):
        t = self.rng.choice(list(TABLES))
        k = self.key_for(t)
        self.srv.query(f"DELETE FROM {t} WHERE k BETWEEN {k} AND {k + 20000}")
        # A pass parked before its leaf pins that leaf (it pins a child before it
        # pauses), and VACUUM's cleanup lock on it would wait for as long as we
        # hold the pass: give up after a while, as an interrupted VACUUM.
        c = self.srv.conn()
        try:
            c.cursor().execute("SET statement_timeout = '5s'")
            c.cursor().execute(f"VACUUM (INDEX_CLEANUP ON) {t}")
            what = "delete+vacuum"
        except psycopg2.errors.QueryCanceled:
            what = "delete+vacuum (cancelled: a parked pass pins a leaf)"
        finally:
            c.close()
        return f"{what} {t} {k}..{k + 20000}"

    def step_cancel(self):
        paused = [s for s in self.sessions if s.busy() and s.key in self.held]
        if not paused:
            return self.step_pause_insert()
        s = self.rng.choice(paused)
        self.srv.query("SELECT pg_cancel_backend(%s)", (s.pid,))
        s.join()
        return f"cancel s{s.n} ({s.error})"

    def step_sample(self):
        t = self.rng.choice(list(TABLES))
        if self.sampler is None and self.rng.random() < 0.5:
            # a draw stopped between a downlink and its child; released by a later sample step
            s = Session(self.srv, 99)
            s.conn.cursor().execute(f"SET abtree.debug_pass_pause = 0; "
                                    f"SET abtree.debug_sample_pause = {SAMPLE_KEY}; "
                                    f"SET abtree.mvstore = off")
            self.ctl.cursor().execute("SELECT pg_advisory_lock(%s)", (SAMPLE_KEY,))
            seed = self.rng.random()
            s.run(f"SELECT count(*) FROM abtree_sample_tids('{t}_idx', 3, {seed})")
            self.settle(s)
            self.sampler = s
            return f"paused draw on {t}"
        if self.sampler is not None:
            self.ctl.cursor().execute("SELECT pg_advisory_unlock(%s)", (SAMPLE_KEY,))
            self.sampler.join()
            err = self.sampler.error
            self.sampler.conn.close()
            self.sampler = None
            return "released draw" + (f" ({err})" if err else "")
        self.srv.query(f"SELECT count(*) FROM abtree_sample_tids('{t}_idx', 200, {self.rng.random()})")
        return f"draws on {t}"

    def step_crash(self):
        self.srv.crash()
        for s in self.sessions:
            s.join(10)
        self.srv.start()
        self.connect()
        return "crash + restart"

    STEPS = (('pause', 30), ('release', 20), ('bulk', 25), ('cancel', 4), ('delete', 5),
             ('sample', 10), ('crash', 1))

    def one_step(self):
        steps = [s for s in self.STEPS if not (self.args.no_crash and s[0] == 'crash')]
        name = self.rng.choices([s for s, _ in steps], [w for _, w in steps])[0]
        return {'pause': self.step_pause_insert, 'release': self.step_release,
                'bulk': self.step_bulk, 'cancel': self.step_cancel,
                'delete': self.step_delete_vacuum, 'sample': self.step_sample,
                'crash': self.step_crash}[name]()

    def check_i1(self):
        for t in TABLES:
            try:
                self.srv.query(f"SELECT abtree_verify('{t}_idx', exact => false)")
            except psycopg2.Error as e:
                return f"{t}_idx: " + " ".join(str(e).split())
        return None

    def finish_all(self):
        for k in list(self.held):
            self.ctl.cursor().execute("SELECT pg_advisory_unlock(%s)", (k,))
        self.held.clear()
        if self.sampler is not None:
            self.ctl.cursor().execute("SELECT pg_advisory_unlock(%s)", (SAMPLE_KEY,))
            self.sampler.join()
            self.sampler = None
        return all(s.join() for s in self.sessions)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--bindir', required=True)
    ap.add_argument('--seed', type=int, default=20)
    ap.add_argument('--steps', type=int, default=300)
    ap.add_argument('--minutes', type=float, default=None, help='stop after this long')
    ap.add_argument('--sessions', type=int, default=3)
    ap.add_argument('--checksums', action='store_true', help='initdb --data-checksums')
    ap.add_argument('--no-crash', action='store_true', help='no crash steps')
    ap.add_argument('--figures-dir', default=None, help='accepted for the test runner; unused')
    ap.add_argument('--keep', action='store_true')
    ap.add_argument('--stop-at-failure', action='store_true',
                    help='on a violation, stop the server as it is and keep its directory')
    args = ap.parse_args()
    tap = Tap()
    tap.note(f"interleave.py --seed {args.seed} --steps {args.steps}"
             f"{' --checksums' if args.checksums else ''}")
    d = Driver(args, tap)
    started = time.time()
    failure = None
    done = 0
    try:
        for i in range(args.steps):
            if args.minutes and time.time() - started > args.minutes * 60:
                break
            what = d.one_step()
            d.log.append(what)
            done = i + 1
            failure = d.check_i1()
            if failure:
                break
        if failure and args.stop_at_failure:
            tap.ok(False, f"I1 after step {done} (seed {args.seed}): {failure}")
            tap.note(f"server directory kept: {d.base}")
            args.keep = True
            return 1
        tap.ok(failure is None, f"I1 after each of {done} steps (seed {args.seed})",
               None if failure is None else
               "\n".join([failure, "last steps:"] + [f"{j + 1}: {s}" for j, s in enumerate(d.log)][-38:]))
        tap.ok(d.finish_all(), "every paused session ended when released")
        failure = d.check_i1()
        tap.ok(failure is None, "I1 with nothing in flight", failure)
        for t in TABLES:
            d.srv.query(f"VACUUM (INDEX_CLEANUP ON) {t}")
            try:
                d.srv.query(f"SELECT abtree_verify('{t}_idx', heapallindexed => true, exact => true)")
                err = None
            except psycopg2.Error as e:
                err = " ".join(str(e).split())
            tap.ok(err is None, f"{t}: I2 (exact weights) and every row in the index after VACUUM", err)
        kinds = {}
        for s in d.log:
            kinds[s.split()[0]] = kinds.get(s.split()[0], 0) + 1
        tap.note("steps by kind: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
        status = d.srv.query("SELECT item, value FROM abtree_status() WHERE component = 'weights' "
                             "AND item LIKE 'pass_%' ORDER BY 1")
        tap.note("pass counters: " + ", ".join(f"{k} {v}" for k, v in status))
    finally:
        d.srv.stop()
        if not args.keep:
            shutil.rmtree(d.base, ignore_errors=True)
    print(f"1..{tap.n}")
    return 1 if tap.failed else 0


if __name__ == '__main__':
    sys.exit(main())
