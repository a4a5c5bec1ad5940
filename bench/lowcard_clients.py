#!/usr/bin/python3
"""Index size when two clients insert into a low-cardinality column (issue 22): bench/lowcard_clients.py

One throwaway cluster (bench/harness/cluster.py, shared_buffers 1GB, autovacuum off,
synchronous_commit off, PostgreSQL from $PG_CONFIG, default 15).  Per round, holder and index
kind, a fresh table s(id bigserial, k int4) with one index on k; two pgbench clients (one thread
each) insert for --seconds, each transaction 200 rows of 21 values (`(random() * 20)::int`).
Each client fills its own heap page, so the two clients' entries of a value interleave near the
end of its run.  With `holder`, a third client runs REPEATABLE READ transactions that take a
snapshot, sleep 50 ms and commit, so the newest rows are never older than every snapshot (they
fold only with rows of their own transaction, src/abtree/README "Folding on insert").

Kinds: `btree` (nbtree with its deduplication), `abtree` and `abtree_nofold` (WITH
(deduplicate_items = off)).  Reports index pages per 1,000 rows (the clients insert different
row counts in the same time) against nbtree's in the same round and holder, medians of
--rounds.  Every abtree index verified exact after its load.  Writes bench/results/<--name>.md
and .png.  Run as root or postgres.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)

from ab_builds import save_report  # noqa: E402
from harness.standalone import ratio_bars, run_and_report  # noqa: E402

KINDS = {"btree": "USING btree (k)",
         "abtree": "USING abtree (k)",
         "abtree_nofold": "USING abtree (k) WITH (deduplicate_items = off)"}
HOLDERS = ("none", "holder")
SETTINGS = {"shared_buffers": "1GB", "autovacuum": "off", "max_wal_size": "10GB",
            "synchronous_commit": "off"}
INSERT = "INSERT INTO s (k) SELECT (random() * 20)::int FROM generate_series(1, 200);\n"
HOLD = ("BEGIN ISOLATION LEVEL REPEATABLE READ;\nSELECT count(*) FROM s WHERE id = 1;\n"
        "SELECT pg_sleep(0.05);\nCOMMIT;\n")


def one(conn, stmt):
    cur = conn.cursor()
    cur.execute(stmt)
    return cur.fetchone() if cur.description else None


def pgbench(cl, script, clients, seconds):
    cmd = [os.path.join(cl.bindir, "pgbench"), "-n", "-c", str(clients), "-j", str(clients),
           "-T", str(seconds), "-f", script]
    return subprocess.Popen(cmd, env=cl.client_env(), text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)


def finish(proc):
    out = proc.communicate(timeout=600)[0]
    if proc.returncode != 0 or not re.search(r"^tps = ", out, re.M):
        raise RuntimeError(f"pgbench failed:\n{out}")


def load(cl, conn, kind, holder, args, scripts):
    one(conn, "DROP TABLE IF EXISTS s")
    one(conn, "CREATE TABLE s (id bigserial, k int4)")
    one(conn, f"CREATE INDEX s_k ON s {KINDS[kind]}")
    one(conn, "CHECKPOINT")
    procs = [pgbench(cl, scripts["insert"], 2, args.seconds)]
    if holder == "holder":
        procs.append(pgbench(cl, scripts["hold"], 1, args.seconds))
    for p in procs:
        finish(p)
    rows = one(conn, "SELECT count(*) FROM s")[0]
    pages = one(conn, "SELECT pg_relation_size('s_k') / 8192")[0]
    if kind != "btree":
        one(conn, "SELECT abtree_verify('s_k', exact => true)")
    return {"rows": rows, "pages": pages, "per_k": 1000.0 * pages / rows}


def run_all(cl, args, log):
    conn = cl.connect()
    one(conn, "CREATE EXTENSION IF NOT EXISTS abtree")
    res = {(h, k): [] for h in HOLDERS for k in KINDS}
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)
        scripts = {}
        for name, text in (("insert", INSERT), ("hold", HOLD)):
            scripts[name] = os.path.join(tmp, name + ".sql")
            with open(scripts[name], "w") as f:
                f.write(text)
            os.chmod(scripts[name], 0o644)
        for rnd in range(args.rounds):
            for h in HOLDERS:
                for k in KINDS:
                    r = load(cl, conn, k, h, args, scripts)
                    r["ratio"] = None
                    res[(h, k)].append(r)
                    log(f"round {rnd + 1} {h} {k}: {r['rows']:,} rows, {r['pages']:,} pages, "
                        f"{r['per_k']:.3f} pages per 1,000 rows")
                bt = res[(h, "btree")][-1]["per_k"]
                for k in KINDS:
                    res[(h, k)][-1]["ratio"] = res[(h, k)][-1]["per_k"] / bt
    version = one(conn, "SHOW server_version")[0]
    conn.close()
    return res, version


def report(args, res, version, started, minutes):
    lines = ["# Two clients inserting into a column of 21 values: index size",
             "", f"Command: `{' '.join(['bench/lowcard_clients.py'] + sys.argv[1:])}` (started "
             f"{started}, {minutes:.0f} min), PostgreSQL {version} (release build), one throwaway "
             "cluster, shared_buffers 1GB, autovacuum off, synchronous_commit off, 2 cores. "
             f"Per round, holder and kind a fresh table s(id, k) filled for {args.seconds} s by two "
             "pgbench clients, each transaction 200 rows of 21 values; `holder`: a third client "
             "holds REPEATABLE READ snapshots 50 ms at a time. Pages per 1,000 rows, and that "
             "against nbtree's in the same round, medians of "
             f"{args.rounds} rounds. Every abtree index verified exact after its load.", "",
             "| snapshots held | index | rows | pages | pages per 1,000 rows | vs nbtree |",
             "|---|---|---|---|---|---|"]
    ratios = {}
    for h in HOLDERS:
        for k in KINDS:
            rs = res[(h, k)]
            ratios[(h, k)] = statistics.median(r["ratio"] for r in rs)
            lines.append(f"| {h} | `{k}` | {statistics.median(r['rows'] for r in rs):,.0f} | "
                         f"{statistics.median(r['pages'] for r in rs):,.0f} | "
                         f"{statistics.median(r['per_k'] for r in rs):.3f} | "
                         f"x{ratios[(h, k)]:.2f} |")

    def draw(ax):
        ratio_bars(ax, ["no snapshot held", "snapshots held (REPEATABLE READ)"],
                   {k: [ratios[(h, k)] for h in HOLDERS] for k in ("abtree", "abtree_nofold")})
        ax.set_ylabel("index pages per row / nbtree's (same round)")
        ax.set_title("Two clients inserting 21 values (median)")
        ax.legend(fontsize=8)
    save_report(args.name, lines, draw)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--name", default="lowcard_clients", help="report name under bench/results")
    run_and_report(SETTINGS, ap.parse_args(), run_all, report)


if __name__ == "__main__":
    main()
