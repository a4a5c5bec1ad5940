#!/usr/bin/python3
"""Where concurrent inserts queue (issue 22): bench/insert_contention.py [--reps N] [--seconds S]

One throwaway cluster (bench/harness/cluster.py, shared_buffers 1GB, PostgreSQL from
$PG_CONFIG, default 15).  Before every run: a fresh copy of a 1,000,000-row table a(x, y) with
one index on y, VACUUM, CHECKPOINT.  The run: pgbench with 1 or 2 clients (one thread each)
for S seconds, each transaction `bench/pgbench/insert_a_batch.sql` (100 random rows in one
statement).  Variants, interleaved in every repetition:

  btree                 CREATE INDEX ON a (y): the baseline
  abtree                USING abtree (y), abtree.weight_protocol = safe_page (the
                        default until issue 22's batched)
  abtree_nosketch       the same WITH (sketch = off)
  abtree_path           USING abtree (y), abtree.weight_protocol = path_exclusive
  abtree_path_nosketch  the same WITH (sketch = off)
  abtree_batched        USING abtree (y), abtree.weight_protocol = batched (the default;
                        the targets are computed on it)

It asks which part of an insert's exclusively held section stops a second client from
adding throughput: the root held by MARK_VALID (or by path_exclusive's whole insert), or the
sketch pages changed inside that section.  Reports rows/s, each against btree's at the same
client count, and the 2-client / 1-client scaling of each variant.  Every abtree run ends
with abtree_verify (exact weights).  Writes bench/results/<name>.md and .png.
Run as root or postgres.
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

VARIANTS = ["btree", "abtree", "abtree_nosketch", "abtree_path", "abtree_path_nosketch",
            "abtree_batched"]
INDEX = {
    "btree": "(y)",
    "abtree": "USING abtree (y)",
    "abtree_nosketch": "USING abtree (y) WITH (sketch = off)",
    "abtree_path": "USING abtree (y)",
    "abtree_path_nosketch": "USING abtree (y) WITH (sketch = off)",
    "abtree_batched": "USING abtree (y)",
}
PROTOCOL = {"abtree_path": "path_exclusive", "abtree_path_nosketch": "path_exclusive",
            "abtree_batched": "batched"}
CLIENTS = [1, 2]
SETTINGS = {"shared_buffers": "1GB"}
SCRIPT = os.path.join(BENCH, "pgbench", "insert_a_batch.sql")


def sql(conn, stmt):
    cur = conn.cursor()
    cur.execute(stmt)
    return cur.fetchall() if cur.description else None


def fresh(conn, variant):
    sql(conn, "DROP TABLE IF EXISTS a")
    sql(conn, "CREATE TABLE a AS TABLE a_base")
    sql(conn, f"CREATE INDEX a_y ON a {INDEX[variant]}")
    sql(conn, "VACUUM a")
    sql(conn, "CHECKPOINT")


def pgbench(cl, variant, clients, seconds, seed):
    env = cl.client_env()
    env["PGOPTIONS"] = f"-c abtree.weight_protocol={PROTOCOL.get(variant, 'safe_page')}"
    cmd = [os.path.join(cl.bindir, "pgbench"), "-n", "-M", "prepared", "-c", str(clients),
           "-j", str(clients), "-T", str(seconds), f"--random-seed={seed}", "-D", "batch=100",
           "-f", SCRIPT]
    out = subprocess.run(cmd, env=env, text=True, capture_output=True,
                         timeout=seconds + 120)
    tps = re.search(r"^tps = ([0-9.]+)", out.stdout, re.M)
    if out.returncode != 0 or not tps:
        raise RuntimeError(f"pgbench failed ({variant}, {clients}):\n{out.stdout}{out.stderr}")
    return float(tps.group(1)) * 100


def run_all(cl, args, log):
    conn = cl.connect()
    conn.autocommit = True
    sql(conn, "CREATE EXTENSION IF NOT EXISTS abtree")
    sql(conn, "CREATE TABLE a_base AS SELECT g AS x, hashint4(g) AS y "
              "FROM generate_series(1, 1000000) g")
    res = {(v, c): [] for v in VARIANTS for c in CLIENTS}
    checks = 0
    for rep in range(args.reps):
        for c in CLIENTS:
            for v in VARIANTS:
                fresh(conn, v)
                res[(v, c)].append(pgbench(cl, v, c, args.seconds, 1000 * rep + c))
                if v != "btree":
                    sql(conn, "SELECT abtree_verify('a_y', exact => true)")
                    checks += 1
                log(f"rep {rep + 1} clients {c} {v}: {res[(v, c)][-1]:,.0f} rows/s")
    version = sql(conn, "SHOW server_version")[0][0]
    conn.close()
    return res, version, checks


def report(args, res, version, checks, started, minutes):
    med = {k: statistics.median(v) for k, v in res.items()}
    lines = ["# Concurrent inserts: the root against the sketch pages", "",
             f"Command: `{' '.join(['bench/insert_contention.py'] + sys.argv[1:])}` (started "
             f"{started}, {minutes:.0f} min), PostgreSQL {version} (release build), one "
             "throwaway cluster with shared_buffers 1GB, fsync and synchronous_commit off, "
             "full_page_writes off, autovacuum off; the machine has 2 cores. Every run: a fresh "
             "1,000,000-row table a(x, y) with its index on y, then pgbench inserting 100 random "
             f"rows per statement for {args.seconds} s; variants interleaved, {args.reps} "
             "repetitions, medians (min - max). `_path`: abtree.weight_protocol = path_exclusive; "
             "`_nosketch`: WITH (sketch = off).", "",
             "| variant | 1 client rows/s | vs btree | 2 clients rows/s | vs btree "
             "| 2 clients / 1 |", "|---|---|---|---|---|---|"]
    for v in VARIANTS:
        cells = []
        for c in CLIENTS:
            xs = res[(v, c)]
            cells.append(f"{med[(v, c)]:,.0f} ({min(xs):,.0f} - {max(xs):,.0f}) | "
                         f"x{med[(v, c)] / med[('btree', c)]:.2f}")
        lines.append(f"| `{v}` | {' | '.join(cells)} | x{med[(v, 2)] / med[(v, 1)]:.2f} |")
    lines += ["", f"abtree_verify (exact weights) passed after all {checks} abtree runs.", "",
              "Targets (issue 22), pgbench inserts >= 0.85x nbtree at every client count, on "
              "the default protocol (batched): "
              f"`abtree_batched` x{med[('abtree_batched', 1)] / med[('btree', 1)]:.2f} at 1 client, "
              f"x{med[('abtree_batched', 2)] / med[('btree', 2)]:.2f} at 2: "
              f"**{'met' if min(med[('abtree_batched', c)] / med[('btree', c)] for c in CLIENTS) >= 0.85 else 'not met'}**."]

    def draw(ax):
        width = 0.38
        xs = range(len(VARIANTS))
        for i, c in enumerate(CLIENTS):
            ax.bar([x + (i - 0.5) * width for x in xs], [med[(v, c)] for v in VARIANTS],
                   width, label=f"{c} client{'s' if c > 1 else ''}")
        ax.set_xticks(list(xs))
        ax.set_xticklabels(VARIANTS, rotation=15, fontsize=8)
        ax.set_ylabel("rows/s (median)")
        ax.set_title("pgbench inserts, 100 rows per statement")
        ax.legend()
    save_report(args.name, lines, draw)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=8)
    ap.add_argument("--name", default="insert_contention", help="report name under bench/results")
    args = ap.parse_args()
    run = Run()
    with abtree_cluster(SETTINGS) as cl:
        res, version, checks = run_all(cl, args, run.log)
    report(args, res, version, checks, run.started, run.minutes())


if __name__ == "__main__":
    main()
