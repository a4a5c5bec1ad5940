#!/usr/bin/python3
"""Inserts while VACUUM removes entries and repairs weights (issue 22): bench/vacuum_inserts.py

One throwaway cluster (bench/harness/cluster.py, shared_buffers 1GB, autovacuum off, PostgreSQL
from $PG_CONFIG, default 15).  Per index kind, a table v(x int4) of --rows random rows with one
index on x: `btree` (the baseline) or `abtree`.  Every repetition deletes --dead (a share) of
the rows, then measures one client inserting 100 random rows per statement

  alone   for --alone seconds, no VACUUM running
  vacuum  while another session runs VACUUM v: the heap pass, the index's bulk delete
          (abtree: each leaf's dead entries removed and their weight taken off the path
          above, held exclusively) and its cleanup (abtree: every downlink compared with its
          child, the inexact ones repaired)

The client's rows/s in the vacuum phase over its rows/s alone, per kind; the kinds and phases
interleaved in every repetition.  Writes bench/results/<--name>.md and .png.  Run as root or
postgres.
"""

import argparse
import os
import statistics
import sys
import threading
import time

sys.dont_write_bytecode = True
BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)

from ab_builds import save_report  # noqa: E402
from harness.standalone import run_and_report  # noqa: E402

KINDS = {"btree": "CREATE INDEX v_x_{k} ON v_{k} (x)",
         "abtree": "CREATE INDEX v_x_{k} ON v_{k} USING abtree (x)"}
BATCH = "INSERT INTO v_{k} SELECT (random()*2e9-1e9)::int4 FROM generate_series(1, 100)"
SETTINGS = {"shared_buffers": "1GB", "autovacuum": "off"}


def one(conn, sql):
    cur = conn.cursor()
    cur.execute(sql)
    return cur.fetchone() if cur.description else None


def insert_until(conn, kind, stop):
    """Insert batches until stop() says so; returns (rows, seconds)."""
    stmt = BATCH.format(k=kind)
    rows = 0
    t = time.perf_counter()
    while not stop():
        one(conn, stmt)
        rows += 100
    return rows, time.perf_counter() - t


def measure(cl, conn, kind, args):
    """One repetition: delete a share, inserts alone, then inserts during VACUUM."""
    one(conn, f"DELETE FROM v_{kind} WHERE random() < {args.dead}")
    one(conn, "CHECKPOINT")
    deadline = time.monotonic() + args.alone
    alone = insert_until(conn, kind, lambda: time.monotonic() >= deadline)
    done = threading.Event()
    vac = {}

    def vacuum():
        vconn = cl.connect()
        vconn.autocommit = True
        t = time.perf_counter()
        one(vconn, f"VACUUM v_{kind}")
        vac["secs"] = time.perf_counter() - t
        vconn.close()
        done.set()
    th = threading.Thread(target=vacuum)
    th.start()
    during = insert_until(conn, kind, done.is_set)
    th.join()
    return {"alone": alone[0] / alone[1], "vacuum": during[0] / during[1],
            "vacuum_secs": vac["secs"], "vacuum_rows": during[0]}


def run_all(cl, args, log):
    conn = cl.connect()
    conn.autocommit = True
    one(conn, "CREATE EXTENSION IF NOT EXISTS abtree")
    for k in KINDS:
        one(conn, f"CREATE TABLE v_{k} (x int4)")
        one(conn, KINDS[k].format(k=k))
        one(conn, f"INSERT INTO v_{k} SELECT (random()*2e9-1e9)::int4 "
                  f"FROM generate_series(1, {args.rows})")
        one(conn, f"VACUUM v_{k}")
    res = {k: [] for k in KINDS}
    for rep in range(args.reps):
        for k in KINDS:
            r = measure(cl, conn, k, args)
            res[k].append(r)
            log(f"rep {rep + 1} {k}: alone {r['alone']:,.0f} rows/s, during VACUUM "
                f"{r['vacuum']:,.0f} rows/s (x{r['vacuum'] / r['alone']:.2f}), VACUUM "
                f"{r['vacuum_secs']:.2f} s")
    one(conn, "SELECT abtree_verify('v_x_abtree', exact => true)")
    version = one(conn, "SHOW server_version")[0]
    conn.close()
    return res, version


def report(args, res, version, started, minutes):
    lines = ["# Inserts while VACUUM removes entries and repairs weights",
             "", f"Command: `{' '.join(['bench/vacuum_inserts.py'] + sys.argv[1:])}` (started "
             f"{started}, {minutes:.0f} min), PostgreSQL {version} (release build), one throwaway "
             "cluster, shared_buffers 1GB, autovacuum off, 2 cores. Per kind a table of "
             f"{args.rows:,} random int4 with one index; every repetition deletes "
             f"{args.dead:.0%} of the rows, then one client inserts 100 random rows per statement, "
             f"alone for {args.alone:g} s and then during one `VACUUM` of the table; the kinds "
             f"interleaved, {args.reps} repetitions, medians. The abtree index is verified exact "
             "at the end.", "",
             "| index | inserts alone, rows/s | during VACUUM, rows/s | during / alone (min - max) | "
             "VACUUM s | rows inserted during VACUUM |", "|---|---|---|---|---|---|"]
    ratio = {}
    for k, rs in res.items():
        rr = [r["vacuum"] / r["alone"] for r in rs]
        ratio[k] = statistics.median(rr)
        lines.append(f"| `{k}` | {statistics.median(r['alone'] for r in rs):,.0f} | "
                     f"{statistics.median(r['vacuum'] for r in rs):,.0f} | x{ratio[k]:.2f} "
                     f"({min(rr):.2f} - {max(rr):.2f}) | "
                     f"{statistics.median(r['vacuum_secs'] for r in rs):.2f} | "
                     f"{statistics.median(r['vacuum_rows'] for r in rs):,.0f} |")
    met = ratio["abtree"] >= 0.8
    lines += ["", f"Target (issue 22): inserts while VACUUM repairs weights at least 0.8x inserts "
              f"alone: abtree x{ratio['abtree']:.2f}, **{'met' if met else 'not met'}** (nbtree "
              f"x{ratio['btree']:.2f} in the same run: what VACUUM's own work costs an inserting "
              "client on this machine)."]

    def draw(ax):
        ks = list(res)
        ax.bar(ks, [ratio[k] for k in ks])
        ax.axhline(0.8, linestyle="--", color="grey")
        ax.set_ylabel("insert rate during VACUUM / alone")
        ax.set_title("Inserts while VACUUM runs (median)")
    save_report(args.name, lines, draw)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=4_000_000)
    ap.add_argument("--dead", type=float, default=0.1, help="share of rows deleted per repetition")
    ap.add_argument("--alone", type=float, default=5.0, help="seconds of inserts alone")
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--name", default="vacuum_inserts", help="report name under bench/results")
    run_and_report(SETTINGS, ap.parse_args(), run_all, report)


if __name__ == "__main__":
    main()
