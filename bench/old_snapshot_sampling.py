#!/usr/bin/python3
"""swr under an old snapshot while others insert (issue 21): bench/old_snapshot_sampling.py [--reps N]

A throwaway cluster (PG_CONFIG, default PostgreSQL 15; release build of abtree installed), table
a(x int4, y int4) of 1M rows with an abtree index on y, prewarmed in 1GB of shared buffers.  One
sampling session opens a REPEATABLE READ transaction (its snapshot is then fixed: the old
snapshot) and, inside it, times `SELECT count(*) FROM a TABLESAMPLE swr(10000)` in phases:

  idle   nobody else writes, and nobody has written since the snapshot
  cpu    two other sessions run a query that keeps a core busy and writes nothing (a sum over
         generate_series), as fast as they can: what sharing the cores costs the sampler alone
  busy   two other sessions insert 100-row statements into a as fast as they can (autocommit),
         so that the index fills with entries the old snapshot must not count: the weight
         store records their weights, and the draws take them off page by page
  after  the inserters have stopped; the entries they added stay, and the old snapshot still
         takes them off

in that order (idle, cpu, busy twice, after; --reps queries each, after two warmup queries), and
writes bench/results/old_snapshot_sampling.md and .png: the medians per phase, the rows the
inserters added, the weight store's counters, and idle / busy (target: >= 0.5x).  The machine has 2 cores: the two inserters and
the sampler share them, which is part of what the ratio measures.  Run as root or postgres.
"""

import argparse
import datetime
import os
import statistics
import sys
import threading
import time

sys.dont_write_bytecode = True
BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)

from ab_builds import save_report  # noqa: E402
from harness.cluster import Cluster  # noqa: E402
from harness.old_snapshot import QUERY, SETTINGS, insert_sql, load, old_snapshot, run  # noqa: E402
from harness.stats import fmt  # noqa: E402

ROWS = 1_000_000


class Sessions:
    """Two sessions inserting until stopped (or, with write=False, keeping a core busy with a
    query that writes nothing); counts the rows they added."""

    def __init__(self, cl, write=True):
        self.cl = cl
        self.write = write
        self.stop = threading.Event()
        self.rows = 0
        self.lock = threading.Lock()
        self.threads = []

    def _loop(self, k):
        conn = self.cl.connect()
        salt = k * 1_000_003
        while not self.stop.is_set():
            if not self.write:
                run(conn, "SELECT sum(g) FROM generate_series(1, 200000) g")
                continue
            salt += 7919
            run(conn, insert_sql(salt, 100))
            with self.lock:
                self.rows += 100
        conn.close()

    def __enter__(self):
        self.threads = [threading.Thread(target=self._loop, args=(k,)) for k in (1, 2)]
        for t in self.threads:
            t.start()
        time.sleep(2)            # let versions pile up before the first measurement
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join()
        return False


def timed_queries(conn, reps):
    out = []
    for i in range(reps + 2):
        t = time.perf_counter()
        run(conn, QUERY)
        if i >= 2:
            out.append((time.perf_counter() - t) * 1000)
    return out


def measure(reps, t0):
    """One run on a new cluster: latencies per phase, rows inserted, the store's counters."""
    res = {"idle": [], "cpu": [], "busy": [], "after": []}
    inserted = 0
    with Cluster(SETTINGS) as cl:
        c = load(cl, ROWS)
        sampler = old_snapshot(cl)
        for phase in ("idle", "cpu", "busy", "busy", "after"):
            if phase in ("cpu", "busy"):
                with Sessions(cl, write=phase == "busy") as ins:
                    res[phase] += timed_queries(sampler, reps)
                inserted += ins.rows
            else:
                res[phase] += timed_queries(sampler, reps)
            print(f"[{time.monotonic() - t0:5.0f} s] {phase}: median "
                  f"{statistics.median(res[phase]):.2f} ms", flush=True)
        cur = c.cursor()
        cur.execute("SELECT * FROM abtree_mvstore()")
        store_cols = [d[0] for d in cur.description]
        store = cur.fetchone()
        run(sampler, "COMMIT")
        sampler.close()
        c.close()
    return res, inserted, dict(zip(store_cols, store))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=15)
    args = ap.parse_args()
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    t0 = time.monotonic()
    res, inserted, store = measure(args.reps, t0)
    report(args, res, inserted, store, started, (time.monotonic() - t0) / 60)


def report(args, res, inserted, store, started, minutes):
    med = {p: statistics.median(v) for p, v in res.items()}
    q = {p: statistics.quantiles(v, n=4) for p, v in res.items()}
    ratio = med["idle"] / med["busy"]
    lines = ["# swr(10000) under an old snapshot while two sessions insert", "",
             f"Command: `{' '.join(['bench/old_snapshot_sampling.py'] + sys.argv[1:])}` "
             f"(started {started}, {minutes:.0f} min), PostgreSQL from "
             f"`{os.environ.get('PG_CONFIG', '/usr/lib/postgresql/15/bin/pg_config')}`, release "
             f"build, 1GB shared_buffers, {ROWS:,} rows prewarmed, 2 cores shared by the sampler "
             "and the inserters. The sampler's REPEATABLE READ snapshot is taken before any "
             f"phase; {args.reps} queries per phase after two warmup queries, in the order idle, cpu "
             "(two sessions keeping the cores busy without writing), busy, busy, after (the "
             "inserters stopped, their entries left in place). Latency measured "
             "in the client.", "",
             "| phase | median ms | q1 | q3 | queries |", "|---|---|---|---|---|"]
    for p in ("idle", "cpu", "busy", "after"):
        lines.append(f"| {p} | {fmt(med[p])} | {fmt(q[p][0])} | {fmt(q[p][2])} | "
                     f"{len(res[p])} |")
    lines += ["", f"Rows inserted during the busy phases (invisible to the sampler's snapshot): "
              f"{inserted:,}. Weight store afterwards: "
              + ", ".join(f"{k} {v}" for k, v in store.items()) + ".", "",
              f"Target (issue 21): swr(10000) under the old snapshot with two inserting clients at "
              f"least 0.5x as fast as idle: idle / busy = x{ratio:.2f}, "
              f"**{'met' if ratio >= 0.5 else 'not met'}**. Once the inserters stop, the old "
              f"snapshot still takes their entries off: idle / after = "
              f"x{med['idle'] / med['after']:.2f}. Two sessions that only keep the cores busy "
              f"cost it idle / cpu = x{med['idle'] / med['cpu']:.2f} by themselves."]
    def draw(ax):
        ax.boxplot([res["idle"], res["cpu"], res["busy"], res["after"]],
                   labels=["idle", "2 busy clients,\nno writes", "2 inserting clients",
                           "after (their\nentries stay)"])
        ax.set_ylabel("swr(10000) latency, ms")
        ax.set_title("swr under an old snapshot")
    save_report("old_snapshot_sampling", lines, draw)


if __name__ == "__main__":
    main()
