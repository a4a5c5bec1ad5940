#!/usr/bin/python3
"""Index size and insert cost when inserts fold full leaves (issue 22): bench/fold_on_insert.py

One throwaway cluster (bench/harness/cluster.py, shared_buffers 1GB, autovacuum off, PostgreSQL
from $PG_CONFIG, default 15).  Per load and index kind, a fresh table t(d) with one index on d
(or none), filled by --rows rows in statements of --stmt rows, each committed:

  dates   d date, about 1,000 distinct values (issue 22's low-cardinality column)
  values21  d int4, 21 values (each value's rows grow at the end of its run: the leaf splits
          where a value ends, and a leaf of one value splits 96% left)
  int4    d int4, random (nearly unique: nothing folds, so folding must cost nothing)

Kinds: `none` (the table alone: what the index adds is measured against it), `btree` (nbtree,
with its deduplication), `abtree` (folds full leaves), `abtree_nofold` (WITH
(deduplicate_items = off): an entry per row, as every abtree before folding on insert).  The
kinds interleaved in every round; medians of --rounds.  Reports the index's pages against
nbtree's, its insert cost (the load's time minus the table alone's) and its WAL per row against
nbtree's.  Writes bench/results/<--name>.md and .png.  Run as root or postgres.
"""

import argparse
import os
import statistics
import sys
import time

sys.dont_write_bytecode = True
BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)

from ab_builds import save_report  # noqa: E402
from harness.standalone import ratio_bars, run_and_report  # noqa: E402

LOADS = {"dates": ("date", "date '2020-01-01' + (random() * 999)::int"),
         "values21": ("int4", "(random() * 20)::int4"),
         "int4": ("int4", "(random() * 2e9 - 1e9)::int4")}
KINDS = {"none": None,
         "btree": "CREATE INDEX t_d ON t (d)",
         "abtree": "CREATE INDEX t_d ON t USING abtree (d)",
         "abtree_nofold": "CREATE INDEX t_d ON t USING abtree (d) WITH (deduplicate_items = off)"}
SETTINGS = {"shared_buffers": "1GB", "autovacuum": "off", "max_wal_size": "10GB",
            "synchronous_commit": "off"}


def one(conn, sql):
    cur = conn.cursor()
    cur.execute(sql)
    return cur.fetchone() if cur.description else None


def load(conn, load_name, kind, args):
    """Fill a fresh table; returns seconds, WAL bytes, index pages."""
    typ, expr = LOADS[load_name]
    one(conn, "DROP TABLE IF EXISTS t")
    one(conn, f"CREATE TABLE t (d {typ})")
    if KINDS[kind]:
        one(conn, KINDS[kind])
    one(conn, "CHECKPOINT")
    stmt = f"INSERT INTO t SELECT {expr} FROM generate_series(1, {args.stmt})"
    lsn0 = one(conn, "SELECT pg_current_wal_insert_lsn()")[0]
    t = time.perf_counter()
    for _ in range(args.rows // args.stmt):
        one(conn, stmt)
    secs = time.perf_counter() - t
    wal = one(conn, f"SELECT pg_current_wal_insert_lsn() - '{lsn0}'::pg_lsn")[0]
    pages = one(conn, "SELECT pg_relation_size('t_d') / 8192")[0] if KINDS[kind] else 0
    if kind.startswith("abtree"):
        one(conn, "SELECT abtree_verify('t_d', exact => true)")
    return {"secs": secs, "wal": float(wal), "pages": pages}


def run_all(cl, args, log):
    conn = cl.connect()
    conn.autocommit = True
    one(conn, "CREATE EXTENSION IF NOT EXISTS abtree")
    res = {(ld, k): [] for ld in LOADS for k in KINDS}
    for rnd in range(args.rounds):
        for ld in LOADS:
            for k in KINDS:
                r = load(conn, ld, k, args)
                res[(ld, k)].append(r)
                log(f"round {rnd + 1} {ld} {k}: {r['secs']:.2f} s, {r['pages']} pages, "
                    f"{r['wal'] / args.rows:.0f} B WAL per row")
    version = one(conn, "SHOW server_version")[0]
    conn.close()
    return res, version


def med(res, key, field):
    return statistics.median(r[field] for r in res[key])


def report(args, res, version, started, minutes):
    lines = ["# Inserts that fold full leaves: index size and insert cost",
             "", f"Command: `{' '.join(['bench/fold_on_insert.py'] + sys.argv[1:])}` (started "
             f"{started}, {minutes:.0f} min), PostgreSQL {version} (release build), one throwaway "
             "cluster, shared_buffers 1GB, autovacuum off, synchronous_commit off, 2 cores. "
             f"Per load and kind a fresh table filled by {args.rows:,} rows in statements of "
             f"{args.stmt:,}, each committed; the kinds interleaved in every round, medians of "
             f"{args.rounds} rounds. Index cost = the load's time minus the table alone's "
             "(`none`); WAL = the load's WAL minus the table alone's, per row. Every abtree index "
             "verified exact after its load.", "",
             "| load | index | pages | vs nbtree | index cost s | vs nbtree | index WAL B/row | "
             "vs nbtree |", "|---|---|---|---|---|---|---|---|"]
    ratios = {}
    for ld in LOADS:
        base_s = med(res, (ld, "none"), "secs")
        base_w = med(res, (ld, "none"), "wal")
        bt = {f: med(res, (ld, "btree"), f) for f in ("pages", "secs", "wal")}
        for k in KINDS:
            if k == "none":
                continue
            pages = med(res, (ld, k), "pages")
            cost = med(res, (ld, k), "secs") - base_s
            wal = (med(res, (ld, k), "wal") - base_w) / args.rows
            bt_cost = bt["secs"] - base_s
            bt_wal = (bt["wal"] - base_w) / args.rows
            ratios[(ld, k)] = pages / bt["pages"]
            lines.append(f"| {ld} | `{k}` | {pages:,.0f} | x{pages / bt['pages']:.2f} | "
                         f"{cost:.2f} | x{cost / bt_cost:.2f} | {wal:.0f} | "
                         f"x{wal / bt_wal:.2f} |")
    r = ratios[("dates", "abtree")]
    lines += ["", "Target (issue 22): an index on a low-cardinality column (1M rows, about 1,000 "
              f"distinct dates) at most 1.3x nbtree's size with deduplication: inserted as above, "
              f"abtree x{r:.2f}, **{'met' if r <= 1.3 else 'not met'}** "
              f"(x{ratios[('dates', 'abtree_nofold')]:.2f} without folding)."]

    def draw(ax):
        ratio_bars(ax, [f"{ld}, {args.rows:,} rows" for ld in LOADS],
                   {k: [ratios[(ld, k)] for ld in LOADS] for k in ("abtree", "abtree_nofold")})
        ax.axhline(1.3, color="red", linestyle=":", linewidth=0.8, label="target 1.3x (dates)")
        ax.set_ylabel("index pages / nbtree's (same run)")
        ax.set_title("Index size after inserts in committed statements (median)")
        ax.legend(fontsize=8)
    save_report(args.name, lines, draw)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--stmt", type=int, default=10_000, help="rows per statement")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--name", default="fold_on_insert", help="report name under bench/results")
    run_and_report(SETTINGS, ap.parse_args(), run_all, report)


if __name__ == "__main__":
    main()
