"""What an experiment's run function works with: one fresh cluster, the active variants,
data loading, pgbench, and interleaved repeated measurement that records median and spread."""

import os
import re
import statistics
import subprocess
import time
from dataclasses import dataclass, field

import psycopg2

from . import datagen
from .registry import FEATURES
from .stats import Stats, fmt, repeat_interleaved

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PGBENCH_DIR = os.path.join(BENCH_DIR, "pgbench")
GENERATORS = {"a": datagen.table_a, "lineitem": datagen.lineitem, "zipf": datagen.zipf_pair}


@dataclass
class Row:
    point: dict             # the parameters of this measurement, e.g. {"n": 1000}
    variant: str
    stats: Stats
    extra: dict = field(default_factory=dict)   # more columns for the report


class Context:
    def __init__(self, exp, mode, cluster, start_time, quiet_wait=0):
        self.quiet_wait = quiet_wait    # see wait_quiet()
        self.quiet_waited = 0.0
        self._gate = [0.0, 0.0, 0.0, 0.0]    # _cpu_clocks deltas spent in wait_quiet
        self.busy_rounds = 0
        self.exp = exp
        self.mode = mode
        self.cluster = cluster
        self.db = "bench"
        self.rows = []
        self.notes = []             # free text for the report
        self.findings = []          # result lines (e.g. targets met or missed), under Results
        self.sections = []          # Markdown blocks under Results, after the main table
        self.restarts = []          # settings changed by restart(), in order
        self.features = {}
        self.feature_details = {}
        self._t0 = start_time
        self.started = time.monotonic()     # this experiment's start, for its report
        self._conns = {}

    # -- setup -------------------------------------------------------------------------
    def setup(self):
        self.cluster_conf_at_start = self.cluster.conf_lines()
        self._cpu_start = self._cpu_clocks()
        self.other_cpu = None
        self._admin(f"CREATE DATABASE {self.db}")
        self.detect_features()
        self.variants = []
        self.skipped = {}
        for v in self.exp.variants:
            missing = [f for f in v.needs if not self.features.get(f)]
            if missing:
                self.skipped[v.name] = "waiting for " + "; ".join(FEATURES[f] for f in missing)
            else:
                self.variants.append(v)

    def detect_features(self):
        """Which optional pieces this server has, in database bench (extensions created there
        are inherited by databases cloned from it)."""
        cur = self.connect().cursor()

        def try_sql(name, stmt):
            try:
                cur.execute(stmt)
                return True
            except psycopg2.Error as e:
                msg = e.pgerror or str(e)
                self.feature_details[name] = msg.strip().splitlines()[0]
                return False

        ext = try_sql("abtree extension", "CREATE EXTENSION IF NOT EXISTS abtree")
        cur.execute("SELECT EXISTS (SELECT 1 FROM pg_am WHERE amname = 'abtree')")
        self.features["abtree"] = ext and cur.fetchone()[0]
        cur.execute("SELECT EXISTS (SELECT 1 FROM pg_proc WHERE proname = 'swr' "
                    "AND prorettype = 'tsm_handler'::regtype)")
        self.features["swr"] = ext and cur.fetchone()[0]
        cur.execute("SELECT to_regproc('abtree_sample_tids') IS NOT NULL")
        self.features["abtree_sample_tids"] = ext and cur.fetchone()[0]
        cur.execute("SELECT to_regproc('abtree_ndistinct') IS NOT NULL")
        self.features["abtree_ndistinct"] = ext and cur.fetchone()[0]
        for e in ("pg_prewarm", "tsm_system_rows"):
            self.features[e] = try_sql(e, f"CREATE EXTENSION IF NOT EXISTS {e}")
        cur.execute("SELECT EXISTS (SELECT 1 FROM pg_am WHERE amname = 'pbtree') "
                    "AND to_regproc('pbtree_stats') IS NOT NULL")
        self.features["pbtree"] = ext and cur.fetchone()[0]
        self.features["mvstore"] = False
        if ext:
            cur.execute("SELECT to_regclass('abtree_mvstore') IS NOT NULL "
                        "AND current_setting('abtree.mvstore', true) IS NOT NULL")
            if cur.fetchone()[0]:
                cur.execute("SELECT size_bytes FROM abtree_mvstore")
                self.features["mvstore"] = bool(cur.fetchone()[0])
        if ext:
            cur.execute("SELECT extversion FROM pg_extension WHERE extname = 'abtree'")
            self.feature_details["abtree extension"] = "version " + cur.fetchone()[0]

    def _cpu_clocks(self):
        """(wall, machine busy, this harness and its children, the server), in seconds."""
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        busy = (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / os.sysconf("SC_CLK_TCK")
        t = os.times()
        return (time.monotonic(), busy, t.user + t.system + t.children_user + t.children_system,
                self.cluster.cpu_seconds())

    def measure_other_load(self):
        """How much CPU processes other than ours used since setup, leaving out the time spent
        waiting in wait_quiet, as (core-seconds, share of the machine, seconds).  This machine
        may be shared; a high share makes the numbers noisy."""
        now = self._cpu_clocks()
        d = [b - a - g for a, b, g in zip(self._cpu_start, now, self._gate)]
        others = max(0.0, d[1] - d[2] - d[3])
        self.other_cpu = (others, others / (d[0] * (os.cpu_count() or 1)), d[0])
        return self.other_cpu

    def _others_share(self, window=0.3):
        """Share of the machine's CPU used by other processes during the next `window` s."""
        a = self._cpu_clocks()
        time.sleep(window)
        d = [y - x for x, y in zip(a, self._cpu_clocks())]
        return max(0.0, d[1] - d[2] - d[3]) / (d[0] * (os.cpu_count() or 1))

    def wait_quiet(self):
        """Wait (up to quiet_wait seconds) until other processes use less than 10% of the
        machine; compare() calls it before measuring.  Off when quiet_wait is 0."""
        if not self.quiet_wait:
            return
        start = self._cpu_clocks()
        t0 = time.monotonic()
        while self._others_share() > 0.10:
            waited = time.monotonic() - t0
            if waited > self.quiet_wait:
                self.busy_rounds += 1
                break
            if waited < 1:
                self.progress("waiting for other processes on the machine to go quiet")
            time.sleep(2)
        self.quiet_waited += time.monotonic() - t0
        # The waiting is not part of the run: measure_other_load leaves it out.
        self._gate = [g + y - x for g, x, y in zip(self._gate, start, self._cpu_clocks())]

    def has(self, feature):
        return bool(self.features.get(feature))

    # -- SQL ---------------------------------------------------------------------------
    def connect(self, db=None):
        db = db or self.db
        conn = self._conns.get(db)
        if conn is None or conn.closed:
            conn = self._conns[db] = self.cluster.connect(db)
        return conn

    def disconnect(self, db=None):
        conn = self._conns.pop(db or self.db, None)
        if conn is not None:
            conn.close()

    def sql(self, stmts, db=None):
        """Run one statement or a list of them; returns the rows of the last one, if any."""
        cur = self.connect(db).cursor()
        for s in [stmts] if isinstance(stmts, str) else stmts:
            cur.execute(s)
        return cur.fetchall() if cur.description else None

    def _admin(self, *stmts):
        """Statements in database postgres, on a connection of their own."""
        conn = self.cluster.connect()
        try:
            for s in stmts:
                conn.cursor().execute(s)
        finally:
            conn.close()

    def load(self, generator, **kw):
        """Create and fill a table with one of harness/datagen's generators ("a", "lineitem",
        "zipf"), then CHECKPOINT so that the load's dirty pages are not written mid-run.

        The load commits synchronously: with the clusters' synchronous_commit = off, the
        generators' VACUUM, run right after the INSERT, found its commit not yet flushed, could
        not set the rows' hint bits and left every page not all-visible (relallvisible 0), a
        table no autovacuum had visited; a settled table is what the generators mean."""
        self.progress(f"loading {generator} {kw}")
        t = time.monotonic()
        self.sql(["SET synchronous_commit = on"] + GENERATORS[generator](**kw) +
                 ["RESET synchronous_commit", "CHECKPOINT"])
        self.progress(f"loaded {generator} in {time.monotonic() - t:.1f} s")

    def clone_db(self, src, dst):
        """dst := a file copy of src (fast; dst's pages start outside shared buffers)."""
        for d in (src, dst):
            self.disconnect(d)
        self._admin(f"DROP DATABASE IF EXISTS {dst} WITH (FORCE)",
                    f"CREATE DATABASE {dst} TEMPLATE {src} STRATEGY FILE_COPY")

    def restart(self, **settings):
        """Restart with changed settings (e.g. shared_buffers); reported with the results."""
        for conn in self._conns.values():
            conn.close()
        self._conns.clear()
        self.progress("restart with " + ", ".join(f"{k} = {v}" for k, v in settings.items()))
        self.cluster.restart(**settings)
        self.restarts.append(dict(settings))

    # -- pgbench -----------------------------------------------------------------------
    def pgbench(self, script, clients=1, seconds=10, db=None, seed=1, defines=None,
                protocol="prepared", timeout=None):
        """Run bench/pgbench/<script> for `seconds` with `clients` clients (one thread each);
        returns {"tps", "latency_ms", "transactions"}.  Failed transactions raise, and so
        does a run still going after `timeout` seconds (pgbench is killed; its backends are
        left to the caller)."""
        cmd = [os.path.join(self.cluster.bindir, "pgbench"), "-n", "-M", protocol,
               "-c", str(clients), "-j", str(clients), "-T", str(seconds),
               f"--random-seed={seed}", "-f", os.path.join(PGBENCH_DIR, script)]
        for k, v in (defines or {}).items():
            cmd += ["-D", f"{k}={v}"]
        try:
            r = subprocess.run(cmd + [db or self.db], capture_output=True, text=True,
                               env=self.cluster.client_env(), timeout=timeout)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"pgbench {script} did not finish its {seconds} s run within "
                               f"{timeout} s (killed)")
        out = r.stdout + r.stderr
        tps = re.search(r"^tps = ([0-9.]+)", out, re.M)
        if r.returncode != 0 or not tps:
            raise RuntimeError(f"pgbench {script} failed (exit {r.returncode}):\n{out}")
        lat = re.search(r"^latency average = ([0-9.]+) ms", out, re.M)
        xacts = re.search(r"^number of transactions actually processed: (\d+)", out, re.M)
        return {"tps": float(tps.group(1)),
                "latency_ms": float(lat.group(1)) if lat else float("nan"),
                "transactions": int(xacts.group(1)) if xacts else 0}

    # -- measuring ---------------------------------------------------------------------
    def compare(self, point, fns, reps, warmup=0):
        """Measure the variants of one point in the same run.  fns maps variant name -> a
        function returning the metric's value, or a dict {"value": v, "column": x, ...} whose
        other entries become extra report columns (their median).  Repetitions are interleaved
        across variants; warmup rounds are discarded.  Records a row per variant and returns
        {variant: Stats}."""
        unknown = set(fns) - {v.name for v in self.variants}
        if unknown:
            raise ValueError(f"not active variants: {sorted(unknown)}")
        label = " ".join(f"{k}={v}" for k, v in point.items())
        unit = self.exp.metric.unit
        extras = {name: [] for name in fns}

        def unpack(name, fn):
            def call():
                r = fn()
                if isinstance(r, dict):
                    extras[name].append(r)
                    return r["value"]
                return r
            return call

        def on_value(name, i, n, value):
            if time.monotonic() - on_value.last > 5:   # only long runs report each repetition
                self.progress(f"  {label} {name} {i}/{n}: {fmt(value)} {unit}")
            on_value.last = time.monotonic()
        on_value.last = time.monotonic()

        # The quiet gate idles the CPUs for a moment, which slows the next few milliseconds of
        # work: before short rounds it runs only once per point, ahead of the warmup rounds.
        def gate():
            if gate.last is None or time.monotonic() - gate.last > 1.0:
                self.wait_quiet()
            gate.last = time.monotonic()
        gate.last = None

        results = repeat_interleaved({n: unpack(n, f) for n, f in fns.items()}, reps, warmup,
                                     on_value, gate)
        for name, st in results.items():
            measured = extras[name][warmup:]
            cols = {k: statistics.median(d[k] for d in measured)
                    for k in (measured[0] if measured else {}) if k != "value"}
            self.record(name, point, st, **cols)
        self.progress(f"{label}: " + ", ".join(
            f"{n} {fmt(s.median)} {unit} [{fmt(s.min)}-{fmt(s.max)}]" for n, s in results.items()))
        return results

    def compare_queries(self, point, queries, reps, warmup=1, db=None):
        """Latency in ms of each variant's query (variant name -> SQL), interleaved.  When the
        query returns a number (count(*)), its median is reported as column "rows"."""
        def query_fn(q):
            def run():
                cur = self.connect(db).cursor()
                t0 = time.perf_counter()
                cur.execute(q)
                row = cur.fetchone()
                ms = 1000 * (time.perf_counter() - t0)
                if row and isinstance(row[0], (int, float)):
                    return {"value": ms, "rows": row[0]}
                return ms
            return run

        return self.compare(point, {name: query_fn(q) for name, q in queries.items()}, reps,
                            warmup)

    def record(self, variant, point, stats, **extra):
        self.rows.append(Row(dict(point), variant, stats, dict(extra)))

    def progress(self, msg):
        print(f"[{time.monotonic() - self._t0:7.1f}s] {self.exp.name}: {msg}", flush=True)

    def close(self):
        for conn in self._conns.values():
            conn.close()
        self._conns.clear()
