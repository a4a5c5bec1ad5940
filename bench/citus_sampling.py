#!/usr/bin/python3
"""Distributed TABLESAMPLE swr on Citus (issue 23): bench/citus_sampling.py [--full] [--reps N]

A Citus coordinator and two workers on this machine (throwaway clusters, as postgres, with
shared_preload_libraries = 'citus,abtree'), table a(x int4, y int4) distributed by x over 32
shards, an abtree index on y, and the same rows in one local table al on the coordinator with
the same index.  In one run, interleaved (bench/harness/stats.py), one client measures:

  dist_swr        SELECT count(*) FROM a TABLESAMPLE swr(n)             (ours, distributed)
  dist_bernoulli  SELECT count(*) FROM a TABLESAMPLE BERNOULLI(100 n / rows)   (the baseline)
  local_swr       SELECT count(*) FROM al TABLESAMPLE swr(n)            (one server)
  local_bernoulli SELECT count(*) FROM al TABLESAMPLE BERNOULLI(100 n / rows)
  dist_floor      SELECT count(*) FROM a WHERE y = 0   (32 tasks of one index lookup each: what
                  any query over every shard costs here, the floor under dist_swr)

and writes bench/results/citus_sampling.md (or full/citus_sampling.md) and .png: medians, and
the targets' ratios, and the n_distinct of a.y from the shards' merged sketches (BERNOULLI / swr on the distributed table, >= 20x at n = 1000; distributed
swr / local swr, <= 3x).  Needs Citus installed into $PG_CONFIG's PostgreSQL (scripts/citus.sh).
Quick: 1M rows; --full: 10M rows.  Run as root or postgres.
"""

import argparse
import datetime
import os
import sys
import time

sys.dont_write_bytecode = True
BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)

from harness.cluster import Cluster  # noqa: E402
from harness.stats import fmt, repeat_interleaved, timed  # noqa: E402

SHARDS = 32
NS = [100, 1000, 10000]
VARIANTS = ["dist_swr", "dist_bernoulli", "local_swr", "local_bernoulli", "dist_floor"]
QUERY = {
    "dist_swr": "SELECT count(*) FROM a TABLESAMPLE swr({n})",
    "dist_bernoulli": "SELECT count(*) FROM a TABLESAMPLE BERNOULLI({pct})",
    "local_swr": "SELECT count(*) FROM al TABLESAMPLE swr({n})",
    "local_bernoulli": "SELECT count(*) FROM al TABLESAMPLE BERNOULLI({pct})",
    # the fixed cost of a query Citus sends to all 32 shards: one index lookup per shard
    "dist_floor": "SELECT count(*) FROM a WHERE y = 0",
}
# the same rows in both tables, without random(): x and y from multiplicative hashes of g
ROWS_SQL = ("SELECT ((g::int8 * 2654435761) % 2147483647 - 1073741823)::int4, "
            "((g::int8 * 2246822519) % 2147483647 - 1073741823)::int4 "
            "FROM generate_series(1, {rows}) g")
SETTINGS = {"listen_addresses": "127.0.0.1", "shared_buffers": "1GB", "max_connections": "100",
            "autovacuum": "off", "citus.shard_count": str(SHARDS)}


def run(cur, sql):
    cur.execute(sql)
    return cur.fetchall() if cur.description else None


def load(coord, workers, rows, log):
    cur = coord.connect().cursor()
    run(cur, "CREATE EXTENSION citus")
    run(cur, "CREATE EXTENSION abtree")
    run(cur, "CREATE EXTENSION pg_prewarm")
    for w in workers:
        wc = w.connect().cursor()
        run(wc, "CREATE EXTENSION citus")
        run(wc, "CREATE EXTENSION abtree")
        run(wc, "CREATE EXTENSION pg_prewarm")
        wc.connection.close()
    run(cur, f"SELECT citus_set_coordinator_host('127.0.0.1', {coord.port})")
    for w in workers:
        run(cur, f"SELECT citus_add_node('127.0.0.1', {w.port})")
    t = time.monotonic()
    run(cur, "CREATE TABLE a (x int4, y int4)")
    run(cur, "SELECT create_distributed_table('a', 'x')")
    run(cur, "INSERT INTO a " + ROWS_SQL.format(rows=rows))
    run(cur, "CREATE INDEX a_y ON a USING abtree (y)")
    run(cur, "VACUUM ANALYZE a")
    log(f"distributed table: {rows:,} rows in {SHARDS} shards, {time.monotonic() - t:.0f} s")
    t = time.monotonic()
    run(cur, "CREATE TABLE al (x int4, y int4)")
    run(cur, "INSERT INTO al " + ROWS_SQL.format(rows=rows))
    run(cur, "CREATE INDEX al_y ON al USING abtree (y)")
    run(cur, "VACUUM ANALYZE al")
    log(f"local table: {time.monotonic() - t:.0f} s")
    # everything in shared buffers: the shards and their indexes on the workers, al here
    for srv in [coord] + workers:
        c = srv.connect().cursor()
        run(c, "SELECT pg_prewarm(c.oid) FROM pg_class c "
               "WHERE c.relname ~ '^(a|a_y)_[0-9]+$' OR c.relname IN ('al', 'al_y')")
        c.connection.close()
    cur.connection.close()


def measure(coord, rows, reps, log):
    conn = coord.connect()
    cur = conn.cursor()
    plans = {v: [r[0] for r in run(cur, "EXPLAIN (COSTS OFF) " + QUERY[v].format(n=1000, pct=0.1))]
             for v in ("dist_swr", "dist_bernoulli")}
    res = {}
    for n in NS:
        pct = repr(100.0 * n / rows)
        fns = {v: timed(lambda q=QUERY[v].format(n=n, pct=pct): run(cur, q)) for v in VARIANTS}
        got = {v: run(cur, QUERY[v].format(n=n, pct=pct))[0][0] for v in VARIANTS}
        stats = repeat_interleaved(fns, reps, warmup=3)
        res[n] = ({v: s.median * 1000 for v, s in stats.items()},
                  {v: s.quartiles() for v, s in stats.items()}, got)
        log(f"n={n}: " + ", ".join(f"{v} {res[n][0][v]:.2f} ms" for v in VARIANTS))
    # n_distinct of a.y (all rows distinct, by construction) from the shards' merged sketches
    t = time.perf_counter()
    est = run(cur, "SELECT chll_estimate(abtree_sketch('a_y'))")[0][0]
    plans["ndistinct"] = (est, time.perf_counter() - t)
    log(f"merged sketch: {est:.0f} distinct for {rows:,}")
    conn.close()
    return res, plans


def report(args, rows, res, plans, started, minutes):
    name = "citus_sampling"
    lines = [f"# Distributed TABLESAMPLE swr on Citus: {rows:,} rows in {SHARDS} shards",
             "", f"Command: `{' '.join(['bench/citus_sampling.py'] + sys.argv[1:])}` "
             f"(started {started}, {minutes:.0f} min). A coordinator and two workers on this "
             "machine (2 cores), Citus 13.2.2, PostgreSQL 15 release build, shared_buffers 1GB "
             "each, tables and indexes prewarmed (pg_prewarm). One client; median of "
             f"{args.reps} interleaved repetitions after 3 warmup rounds, latency in ms measured "
             "around execute and fetch. `local_*` run on the same rows in one local table on "
             "the coordinator, in the same run. BERNOULLI's percentage is 100 n / rows.", "",
             "| n | variant | median ms | q1 | q3 | rows returned |", "|---|---|---|---|---|---|"]
    for n in NS:
        med, q, got = res[n]
        for v in VARIANTS:
            lines.append(f"| {n} | `{v}` | {fmt(med[v])} | {fmt(q[v][0] * 1000)} | "
                         f"{fmt(q[v][1] * 1000)} | {got[v]:,} |")
    lines += ["", "| n | BERNOULLI / swr, distributed | distributed swr / local swr | "
              "local BERNOULLI / local swr |", "|---|---|---|---|"]
    for n in NS:
        med = res[n][0]
        lines.append(f"| {n} | x{med['dist_bernoulli'] / med['dist_swr']:.1f} | "
                     f"x{med['dist_swr'] / med['local_swr']:.2f} | "
                     f"x{med['local_bernoulli'] / med['local_swr']:.1f} |")
    med = res[1000][0]
    b, d = med["dist_bernoulli"] / med["dist_swr"], med["dist_swr"] / med["local_swr"]
    lines += ["", "Targets (issue 23), n = 1000: distributed swr at least 20x faster than "
              f"BERNOULLI on the same table: x{b:.1f}, **{'met' if b >= 20 else 'not met'}**; "
              f"distributed swr at most 3x local swr: x{d:.2f}, "
              f"**{'met' if d <= 3 else 'not met'}**. A query over all {SHARDS} shards "
              f"costs {fmt(med['dist_floor'])} ms here however little each shard does "
              "(`dist_floor`: one index lookup per shard); BERNOULLI / that floor, the best "
              f"ratio any sample sent to every shard can reach on this machine: "
              f"x{med['dist_bernoulli'] / med['dist_floor']:.1f}.", "",
              f"Distinct values of a.y ({rows:,}, every row distinct by construction) from the "
              f"shards' sketches merged on the coordinator (`chll_estimate(abtree_sketch('a_y'))`, "
              f"{plans['ndistinct'][1] * 1000:.0f} ms): {plans['ndistinct'][0]:,.0f}, ratio error "
              f"{max(plans['ndistinct'][0] / rows, rows / plans['ndistinct'][0]):.3f} (target "
              "<= 1.1: **" + ("met" if max(plans['ndistinct'][0] / rows, rows / plans['ndistinct'][0]) <= 1.1
                            else "not met") + "**).", "",
              "Plans (n = 1000): `dist_swr`: " + " / ".join(plans["dist_swr"]) +
              "; `dist_bernoulli`: " + " / ".join(p.strip() for p in plans["dist_bernoulli"][:6]) +
              " ..."]

    def draw(ax):
        for v in VARIANTS:
            ax.plot(NS, [res[n][0][v] for n in NS], marker="o", label=v)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("n")
        ax.set_ylabel("latency, ms (median)")
        ax.set_title(f"swr(n) vs BERNOULLI, Citus, {rows:,} rows, {SHARDS} shards")
        ax.legend()
    out = os.path.join(BENCH, "results", "full" if args.full else "")
    path = os.path.join(out, name)
    with open(path + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4))
    draw(ax)
    fig.tight_layout()
    fig.savefig(path + ".png", dpi=110)
    print(f"wrote {path}.md")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="10M rows (quick: 1M)")
    ap.add_argument("--reps", type=int, default=15)
    args = ap.parse_args()
    rows = 10_000_000 if args.full else 1_000_000
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    t0 = time.monotonic()

    def log(msg):
        print(f"[{time.monotonic() - t0:6.0f} s] {msg}", flush=True)
    with Cluster(SETTINGS, preload="citus,abtree") as coord, \
            Cluster(SETTINGS, preload="citus,abtree") as w1, \
            Cluster(SETTINGS, preload="citus,abtree") as w2:
        if coord.preload != "citus,abtree":
            sys.exit("Citus did not load: " + " ".join(coord.notes))
        load(coord, [w1, w2], rows, log)
        res, plans = measure(coord, rows, args.reps, log)
    report(args, rows, res, plans, started, (time.monotonic() - t0) / 60)


if __name__ == "__main__":
    main()
