#!/usr/bin/python3
"""Issue 21's table, measured the way the issue measured it: bench/pgbench_sampling.py [--rows 1000000,5000000,10000000] [--seconds S] [--rounds R]

The issue timed `pgbench -n -T 8` of one query at a time (simple protocol, one client, the
query parsed and planned every time) on a(x int4, y int4) with random y, an abtree index on
y, table and index prewarmed in 2 GB of shared buffers, PostgreSQL 15 release build.
bench/run's sampling_baseline times from a Python client instead, its repetitions
interleaved with full scans and sorts of the same table (order_random), so each of its swr
runs starts with the CPU's caches emptied; this script keeps the issue's own method so that
its targets are compared like with like.

One throwaway cluster (bench/harness/cluster.py, shared_buffers 2GB, PostgreSQL from
$PG_CONFIG, default 15).  For each --rows size, a fresh table and index, VACUUM ANALYZE
(synchronous commit, so that the visibility map is set, as for a settled table), prewarm;
then --rounds rounds, each running pgbench -n -T S of swr(n) and of BERNOULLI(100 n / rows)
in turn for n = 1,000, 10,000 and 100,000.  Reports the median latency over the rounds and
BERNOULLI / swr, with issue 21's targets.  Writes bench/results/<name>.md and .png.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys

sys.dont_write_bytecode = True
BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)

from ab_builds import save_report  # noqa: E402
from harness.standalone import Run, abtree_cluster  # noqa: E402

SETTINGS = {"shared_buffers": "2GB", "effective_io_concurrency": "16", "jit": "off"}
NS = [1000, 10000, 100000]
# (rows, n) -> the target for BERNOULLI / swr
TARGETS = {(10_000_000, 1000): 80, (5_000_000, 1000): 40, (5_000_000, 10000): 5,
           (1_000_000, 100000): 1}


def queries(n, rows):
    return {"swr": f"SELECT count(*) FROM a TABLESAMPLE swr({n});",
            "bernoulli": f"SELECT count(*) FROM a TABLESAMPLE bernoulli({100 * n / rows:.6f});"}


def pgbench(cl, sql, seconds, workdir):
    """Average latency in ms of pgbench -n -T seconds running sql in one client."""
    script = os.path.join(workdir, "q.sql")
    with open(script, "w") as f:
        f.write(sql + "\n")
    os.chmod(script, 0o644)
    cmd = [os.path.join(cl.bindir, "pgbench"), "-n", "-T", str(seconds), "-f", script]
    out = subprocess.run(cmd, env=cl.client_env(), text=True, capture_output=True,
                         timeout=seconds + 120)
    m = re.search(r"^latency average = ([0-9.]+) ms", out.stdout, re.M)
    if out.returncode != 0 or not m:
        raise RuntimeError(f"pgbench failed ({sql}):\n{out.stdout}{out.stderr}")
    return float(m.group(1))


def load(cl, rows):
    conn = cl.connect()
    cur = conn.cursor()
    for stmt in ["CREATE EXTENSION IF NOT EXISTS abtree",
                 "CREATE EXTENSION IF NOT EXISTS pg_prewarm",
                 "DROP TABLE IF EXISTS a",
                 "CREATE TABLE a(x int4, y int4)",
                 "SET synchronous_commit = on",
                 f"INSERT INTO a SELECT g, (random() * 1e9)::int4 FROM generate_series(1, {rows}) g",
                 "CREATE INDEX a_y ON a USING abtree (y)",
                 "VACUUM ANALYZE a", "CHECKPOINT",
                 "SELECT pg_prewarm('a'), pg_prewarm('a_y')"]:
        cur.execute(stmt)
    cur.execute("SELECT relpages, relallvisible FROM pg_class WHERE relname = 'a'")
    pages, allvisible = cur.fetchone()
    cur.execute("SHOW server_version")
    version = cur.fetchone()[0]
    conn.close()
    return version, pages, allvisible


def run_all(cl, args, log, workdir):
    res, info = {}, {}
    version = None
    for rows in args.rows:
        version, pages, allvisible = load(cl, rows)
        info[rows] = (pages, allvisible)
        log(f"{rows:,} rows loaded: {pages:,} heap pages, {allvisible:,} all-visible")
        for rnd in range(args.rounds):
            for n in NS:
                for kind, q in queries(n, rows).items():
                    res.setdefault((rows, n, kind), []).append(
                        pgbench(cl, q, args.seconds, workdir))
            log(f"{rows:,} rows, round {rnd + 1}: " + ", ".join(
                f"n={n} x{res[(rows, n, 'bernoulli')][-1] / res[(rows, n, 'swr')][-1]:.1f}"
                for n in NS))
    return res, info, version


def report(args, res, info, version, started, minutes):
    med = {k: statistics.median(v) for k, v in res.items()}
    cmd = " ".join(["bench/pgbench_sampling.py"] + sys.argv[1:])
    lines = ["# Issue 21's targets, measured with pgbench as the issue measured them", "",
             f"Command: `{cmd}` (started {started}, {minutes:.0f} min), PostgreSQL {version} "
             "(release build), one throwaway cluster with shared_buffers 2GB, jit off, "
             "effective_io_concurrency 16; the machine has 2 cores. For each size a(x int4, "
             "y int4) with random y and an abtree index on y, VACUUM ANALYZE (all pages "
             "all-visible: see the table), prewarmed. Each round runs "
             f"`pgbench -n -T {args.seconds}` (simple protocol, one client) of each query in "
             f"turn; {args.rounds} rounds, medians of pgbench's average latency. BERNOULLI's "
             "percentage is 100 n / rows. The query is the issue's "
             "`SELECT count(*) FROM a TABLESAMPLE ...`, so swr's draws are index-only where "
             "the visibility map allows (bench/results/index_only_draws_ab.md).", "",
             "| rows | heap pages | all-visible | n | swr ms | BERNOULLI ms | BERNOULLI / swr "
             "| per round | target |",
             "|---|---|---|---|---|---|---|---|---|"]
    verdicts = []
    for rows in args.rows:
        pages, allvis = info[rows]
        for n in NS:
            s, b = med[(rows, n, "swr")], med[(rows, n, "bernoulli")]
            per = ", ".join(f"x{bb / ss:.1f}" for ss, bb in
                            zip(res[(rows, n, "swr")], res[(rows, n, "bernoulli")]))
            t = TARGETS.get((rows, n))
            tcol = ""
            if t is not None:
                ok = b / s >= t
                tcol = f">= x{t}: **{'met' if ok else 'not met'}**"
                verdicts.append(f"swr({n:,}) on {rows:,} rows: x{b / s:.1f} (target x{t}, "
                                f"{'met' if ok else 'not met'})")
            lines.append(f"| {rows:,} | {pages:,} | {allvis:,} | {n:,} | {s:.3f} | {b:.1f} | "
                         f"x{b / s:.2f} | {per} | {tcol} |")
    lines += ["", "Targets of issue 21 (warm): " + "; ".join(verdicts) + "."]

    def draw(ax):
        labels, ratios = [], []
        for rows in args.rows:
            for n in NS:
                labels.append(f"{rows // 1_000_000}M\nswr({n // 1000}k)")
                ratios.append(med[(rows, n, "bernoulli")] / med[(rows, n, "swr")])
        xs = range(len(labels))
        ax.bar(list(xs), ratios)
        for (rows, n), t in TARGETS.items():
            if rows in args.rows:
                i = args.rows.index(rows) * len(NS) + NS.index(n)
                ax.plot([i - 0.4, i + 0.4], [t, t], color="red")
        ax.set_yscale("log")
        ax.set_xticks(list(xs))
        ax.set_xticklabels(labels, fontsize=7)
        ax.set_ylabel("BERNOULLI / swr latency (log)")
        ax.set_title("pgbench, one client; red: issue 21's targets")
    save_report(args.name, lines, draw)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="1000000,5000000,10000000",
                    type=lambda s: [int(x) for x in s.split(",")])
    ap.add_argument("--seconds", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--name", default="pgbench_sampling", help="report name under bench/results")
    args = ap.parse_args()
    run = Run()
    with abtree_cluster(SETTINGS) as cl:
        workdir = cl.dir
        res, info, version = run_all(cl, args, run.log, workdir)
    report(args, res, info, version, run.started, run.minutes())


if __name__ == "__main__":
    main()
