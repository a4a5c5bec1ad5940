#!/usr/bin/python3
"""Index write cost against nbtree (issue 22): bench/write_path.py [--rows N] [--reps N]

One throwaway cluster (bench/harness/cluster.py, shared_buffers 2GB, PostgreSQL from
$PG_CONFIG, default 15).  Each repetition creates an empty table h(x int4) with one index
(or none), runs CHECKPOINT, and times one statement from the client:

  INSERT INTO h SELECT (random()*2e9-1e9)::int4 FROM generate_series(1, rows)

and reads the WAL it wrote (pg_current_wal_lsn before and after).  Variants, interleaved in
every repetition:

  none            no index: the table's own cost, subtracted from every other variant
  btree           CREATE INDEX ON h (x): the baseline
  abtree          CREATE INDEX ON h USING abtree (x), inserting with abtree.weight_protocol
                  = safe_page (the default until issue 22's batched)
  abtree_path     the same, inserting with abtree.weight_protocol = path_exclusive
                  (one INSERT_VALID record per insert that fits its leaf)
  abtree_nosketch the same as abtree WITH (sketch = off)
  abtree_batched  abtree, inserting with abtree.weight_protocol = batched (the default;
                  the targets are computed on it)
                  (entries become valid a VALID_BATCH record's worth at a time)
  abtree_batched_nosketch  the same WITH (sketch = off)

and, with --copy, the same rows loaded by COPY FROM a file (sketches on against off).
"Index cost" is a variant's time minus none's in the same repetition; "index WAL per row"
its WAL minus none's, per row.  Writes bench/results/write_path.md and .png.
Run as root or postgres.
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
from harness.standalone import Run, abtree_cluster  # noqa: E402

VARIANTS = ["none", "btree", "abtree", "abtree_path", "abtree_nosketch", "abtree_batched",
            "abtree_batched_nosketch"]
INDEX = {
    "none": None,
    "btree": "CREATE INDEX h_x ON h (x)",
    "abtree": "CREATE INDEX h_x ON h USING abtree (x)",
    "abtree_path": "CREATE INDEX h_x ON h USING abtree (x)",
    "abtree_nosketch": "CREATE INDEX h_x ON h USING abtree (x) WITH (sketch = off)",
    "abtree_batched": "CREATE INDEX h_x ON h USING abtree (x)",
    "abtree_batched_nosketch": "CREATE INDEX h_x ON h USING abtree (x) WITH (sketch = off)",
}
INSERT = "INSERT INTO h SELECT (random()*2e9-1e9)::int4 FROM generate_series(1, {rows})"
SETTINGS = {"shared_buffers": "2GB"}
PROTOCOL = {"abtree_path": "path_exclusive", "abtree_batched": "batched",
            "abtree_batched_nosketch": "batched"}


def one(conn, sql):
    cur = conn.cursor()
    cur.execute(sql)
    return cur.fetchone() if cur.description else None


def measure_one(conn, variant, stmt):
    one(conn, "DROP TABLE IF EXISTS h")
    one(conn, "CREATE TABLE h (x int4)")
    if INDEX[variant]:
        one(conn, INDEX[variant])
    one(conn, f"SET abtree.weight_protocol = {PROTOCOL.get(variant, 'safe_page')}")
    one(conn, "CHECKPOINT")
    lsn0 = one(conn, "SELECT pg_current_wal_insert_lsn()")[0]
    t = time.perf_counter()
    one(conn, stmt)
    secs = time.perf_counter() - t
    wal = one(conn, f"SELECT pg_current_wal_insert_lsn() - '{lsn0}'::pg_lsn")[0]
    return secs, float(wal)


def run_all(cl, args, log):
    conn = cl.connect()
    conn.autocommit = True
    one(conn, "CREATE EXTENSION IF NOT EXISTS abtree")
    stmts = {"insert": INSERT.format(rows=args.rows)}
    if args.copy:
        path = os.path.join(cl.datadir, "rows.copy")
        one(conn, f"COPY (SELECT (random()*2e9-1e9)::int4 FROM generate_series(1, {args.rows})) "
                  f"TO '{path}'")
        stmts["copy"] = f"COPY h FROM '{path}'"
    res = {s: {v: [] for v in VARIANTS} for s in stmts}
    for rep in range(args.reps):
        for s, stmt in stmts.items():
            for v in VARIANTS:
                if s == "copy" and v in ("btree", "abtree_path"):
                    continue
                res[s][v].append(measure_one(conn, v, stmt))
                log(f"rep {rep + 1} {s} {v}: {res[s][v][-1][0]:.2f} s, "
                    f"{res[s][v][-1][1] / args.rows:.0f} B WAL/row")
    version = one(conn, "SHOW server_version")[0]
    conn.close()
    return res, version


def summarize(res, rows):
    """Per statement and variant: median time, median index cost and index WAL per row."""
    out = {}
    for s, per in res.items():
        out[s] = {}
        reps = len(per["none"])
        for v, vals in per.items():
            if not vals:
                continue
            cost = [vals[i][0] - per["none"][i][0] for i in range(reps)]
            wal = [(vals[i][1] - per["none"][i][1]) / rows for i in range(reps)]
            out[s][v] = {"time": statistics.median(x[0] for x in vals),
                         "cost": statistics.median(cost), "wal": statistics.median(wal),
                         "walrow": statistics.median(x[1] / rows for x in vals),
                         "min": min(x[0] for x in vals), "max": max(x[0] for x in vals)}
    return out


def report(args, s, version, started, minutes):
    ins = s["insert"]
    bt = ins["btree"]
    lines = [f"# Index write cost against nbtree: {args.rows:,} random int4 in one statement",
             "", f"Command: `{' '.join(['bench/write_path.py'] + sys.argv[1:])}` (started "
             f"{started}, {minutes:.0f} min), PostgreSQL {version} (release build), one "
             "throwaway cluster with shared_buffers 2GB, fsync and synchronous_commit off, "
             "full_page_writes off, autovacuum off. Every repetition: a new empty table h(x int4) "
             "with its index, CHECKPOINT, then one statement timed from the client; the "
             f"variants interleaved, {args.reps} repetitions, medians. Index cost = the "
             "statement's time minus the same statement into the table without an index in the "
             "same repetition; index WAL per row likewise.", "",
             "| variant | statement s (min - max) | index cost s | vs btree | rows/s vs btree "
             "| WAL B/row | index WAL B/row | vs btree |", "|---|---|---|---|---|---|---|---|"]
    for v in VARIANTS:
        r = ins[v]
        if v == "none":
            lines.append(f"| `none` | {r['time']:.2f} ({r['min']:.2f} - {r['max']:.2f}) | - | - | "
                         f"x{bt['time'] / r['time']:.2f} | {r['walrow']:.0f} | - | - |")
            continue
        lines.append(f"| `{v}` | {r['time']:.2f} ({r['min']:.2f} - {r['max']:.2f}) | "
                     f"{r['cost']:.2f} | x{r['cost'] / bt['cost']:.2f} | "
                     f"x{bt['time'] / r['time']:.2f} | {r['walrow']:.0f} | {r['wal']:.0f} | "
                     f"x{r['wal'] / bt['wal']:.2f} |")
    ab = ins["abtree"]
    ba = ins["abtree_batched"]
    lines += ["", "Targets (issue 22), on the default protocol (batched, `abtree_batched`): "
              f"index cost <= 1.3x btree's: x{ba['cost'] / bt['cost']:.2f}, "
              f"**{'met' if ba['cost'] <= 1.3 * bt['cost'] else 'not met'}**; "
              f"rows/s >= 0.8x btree's: x{bt['time'] / ba['time']:.2f}, "
              f"**{'met' if bt['time'] / ba['time'] >= 0.8 else 'not met'}**; index WAL per row "
              f"<= 1.5x btree's (sketches on): x{ba['wal'] / bt['wal']:.2f}, "
              f"**{'met' if ba['wal'] <= 1.5 * bt['wal'] else 'not met'}**; against `abtree` "
              f"(safe_page) in the same run: index cost x{ba['cost'] / ab['cost']:.2f}, index WAL "
              f"x{ba['wal'] / ab['wal']:.2f}."]
    for v, proto in (("abtree", "safe_page"), ("abtree_path", "path_exclusive")):
        r = ins[v]
        lines += ["", f"The same figures with `abtree.weight_protocol = {proto}` (`{v}`): "
                  f"index cost x{r['cost'] / bt['cost']:.2f}, rows/s x{bt['time'] / r['time']:.2f}, "
                  f"index WAL per row x{r['wal'] / bt['wal']:.2f}."]
    if "copy" in s:
        c = s["copy"]
        for on, off in (("abtree_batched", "abtree_batched_nosketch"), ("abtree", "abtree_nosketch")):
            r = c[on]["time"] / c[off]["time"]
            lines += ["", f"COPY of the same number of rows from a file: `{on}` "
                      f"{c[on]['time']:.2f} s, `{off}` {c[off]['time']:.2f} s, "
                      f"`none` {c['none']['time']:.2f} s: sketches on / off x{r:.3f}" + (
                          f" (target <= 1.05: **{'met' if r <= 1.05 else 'not met'}**)."
                          if on == "abtree_batched" else " (safe_page).")]

    def draw(ax):
        vs = VARIANTS[1:]
        ax.bar(vs, [ins[v]["cost"] for v in vs])
        ax.set_ylabel("index cost, s (median)")
        ax.set_title(f"INSERT of {args.rows:,} random int4: index cost")
    save_report(args.name, lines, draw)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--copy", action="store_true", help="also COPY, sketches on against off")
    ap.add_argument("--name", default="write_path", help="report name under bench/results")
    args = ap.parse_args()
    run = Run()
    with abtree_cluster(SETTINGS) as cl:
        res, version = run_all(cl, args, run.log)
    report(args, summarize(res, args.rows), version, run.started, run.minutes())


if __name__ == "__main__":
    main()
