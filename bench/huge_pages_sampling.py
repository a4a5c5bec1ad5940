#!/usr/bin/python3
"""swr against BERNOULLI with and without huge pages (issue 21): bench/huge_pages_sampling.py [--rows N] [--rounds N]

A sample of 1,000 rows touches about 2,000 buffers scattered over shared memory.  A backend
maps shared memory in 4 kB pages by default, and the first touch of each page in a process
costs a page fault (and a TLB miss on every later touch that falls out of the TLB); with
huge_pages the same memory is mapped in 2 MB pages.  This measures what that is worth.

One throwaway cluster (bench/harness/cluster.py, shared_buffers 2GB, effective_io_concurrency
16, PostgreSQL from $PG_CONFIG, default 15): a(x int4, y int4) of --rows rows (default 10M) and
an abtree index on y.  Needs root: it reserves huge pages with sysctl vm.nr_hugepages and gives
them back at the end.  Every round restarts the server with huge_pages = off and then = on
(prewarming table and index each time) and times, from the client:

  new session  the first query of a new connection (15 connections per query and round)
  warm         queries 21-60 of one connection (BERNOULLI: 6-15)

for swr(n) and BERNOULLI(100 n / rows) at n = 1,000 and 10,000.  Writes
bench/results/<name>.md and .png: medians, BERNOULLI / swr (the x80 target of issue 21 is at
n = 1,000), and on / off.  Run as root.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time

sys.dont_write_bytecode = True
BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)

from ab_builds import save_report  # noqa: E402
from harness.standalone import Run, abtree_cluster  # noqa: E402

SETTINGS = {"shared_buffers": "2GB", "effective_io_concurrency": "16", "huge_pages": "off"}
HUGE_PAGES_NEEDED = 1300        # 2 MB pages: shared_buffers and the rest of shared memory
NS = [1000, 10000]
MODES = ["new session", "warm"]
CONFIGS = ["off", "on"]


def queries(n, rows):
    return {"swr": f"SELECT count(*) FROM a TABLESAMPLE swr({n})",
            "bernoulli": f"SELECT count(*) FROM a TABLESAMPLE BERNOULLI({100 * n / rows})"}


def sysctl_hugepages(value=None):
    path = "/proc/sys/vm/nr_hugepages"
    if value is not None:
        subprocess.run(["sysctl", "-qw", f"vm.nr_hugepages={value}"], check=True)
    with open(path) as f:
        return int(f.read())


def hugepages_taken():
    """Huge pages in use or reserved (a mapping reserves them before it touches them)."""
    with open("/proc/meminfo") as f:
        info = f.read()
    get = lambda k: int(re.search(rf"^HugePages_{k}:\s+(\d+)", info, re.M).group(1))  # noqa
    return get("Total") - get("Free") + get("Rsvd")


def timed(conn, sql):
    cur = conn.cursor()
    t = time.perf_counter()
    cur.execute(sql)
    cur.fetchall()
    return (time.perf_counter() - t) * 1000


def measure(cl, q, mode):
    """Milliseconds of each timed query."""
    if mode == "new session":
        out = []
        for _ in range(15):
            conn = cl.connect()
            out.append(timed(conn, q))
            conn.close()
        return out
    warmup, count = (20, 40) if "swr" in q else (5, 10)
    conn = cl.connect()
    for _ in range(warmup):
        timed(conn, q)
    out = [timed(conn, q) for _ in range(count)]
    conn.close()
    return out


def run_all(cl, args, log):
    conn = cl.connect()
    conn.autocommit = True
    cur = conn.cursor()
    for sql in ["CREATE EXTENSION IF NOT EXISTS abtree", "CREATE EXTENSION IF NOT EXISTS pg_prewarm",
                f"CREATE TABLE a AS SELECT g AS x, hashint4(g) AS y "
                f"FROM generate_series(1, {args.rows}) g",
                "CREATE INDEX a_y ON a USING abtree (y)", "VACUUM ANALYZE a", "CHECKPOINT"]:
        cur.execute(sql)
    cur.execute("SHOW server_version")
    version = cur.fetchone()[0]
    conn.close()
    log("loaded")
    res = {}
    for rnd in range(args.rounds):
        for hp in CONFIGS:
            cl.restart(huge_pages=hp)
            used = hugepages_taken()
            if (hp == "on") != (used > 0):
                raise RuntimeError(f"huge_pages = {hp}, yet {used} huge pages taken")
            conn = cl.connect()
            conn.cursor().execute("SELECT pg_prewarm('a'), pg_prewarm('a_y')")
            conn.close()
            for n in NS:
                for kind, q in queries(n, args.rows).items():
                    for mode in MODES:
                        res.setdefault((hp, n, kind, mode), []).extend(measure(cl, q, mode))
            log(f"round {rnd + 1} huge_pages {hp} ({used} huge pages): " + ", ".join(
                f"{kind} n={n} {mode} {statistics.median(res[(hp, n, kind, mode)]):.2f} ms"
                for n in NS for kind in ("swr", "bernoulli") for mode in MODES))
    return res, version


def report(args, res, version, started, minutes):
    med = {k: statistics.median(v) for k, v in res.items()}
    lines = ["# swr against BERNOULLI, with and without huge pages", "",
             f"Command: `{' '.join(['bench/huge_pages_sampling.py'] + sys.argv[1:])}` (started "
             f"{started}, {minutes:.0f} min), PostgreSQL {version} (release build), one "
             f"throwaway cluster: {args.rows:,} rows in a(x, y), an abtree index on y, "
             "shared_buffers 2GB holding both (prewarmed after every restart), "
             "effective_io_concurrency 16; the machine has 2 cores. Each of "
             f"{args.rounds} rounds restarts with huge_pages = off, then on (vm.nr_hugepages "
             "reserved by the script), and times from the client the first query of 15 new "
             "connections (new session) and queries 21-60 of one connection (warm; BERNOULLI "
             "6-15). BERNOULLI's percentage is 100 n / rows. Medians in ms.", "",
             "| n | huge_pages | swr new session | swr warm | BERNOULLI new session "
             "| BERNOULLI warm | BERNOULLI / swr, new session | BERNOULLI / swr, warm |",
             "|---|---|---|---|---|---|---|---|"]
    for n in NS:
        for hp in CONFIGS:
            s = {m: med[(hp, n, "swr", m)] for m in MODES}
            b = {m: med[(hp, n, "bernoulli", m)] for m in MODES}
            lines.append(f"| {n:,} | {hp} | {s['new session']:.2f} | {s['warm']:.2f} | "
                         f"{b['new session']:.1f} | {b['warm']:.1f} | "
                         f"x{b['new session'] / s['new session']:.1f} | "
                         f"x{b['warm'] / s['warm']:.1f} |")
    lines += ["", "huge_pages on / off (time ratio, < 1: faster with huge pages):", ""]
    for n in NS:
        lines.append(f"- n = {n:,}: " + "; ".join(
            f"{kind} {mode} x{med[('on', n, kind, mode)] / med[('off', n, kind, mode)]:.2f}"
            for kind in ("swr", "bernoulli") for mode in MODES) + ".")
    r = {hp: med[(hp, 1000, "bernoulli", "warm")] / med[(hp, 1000, "swr", "warm")]
         for hp in CONFIGS}
    lines += ["", "Target (issue 21): swr(1000) at least 80x faster than BERNOULLI, warm: "
              f"x{r['off']:.1f} without huge pages, x{r['on']:.1f} with them: "
              f"**{'met' if max(r.values()) >= 80 else 'not met'}**."]

    def draw(ax):
        labels, off, on = [], [], []
        for n in NS:
            for mode in MODES:
                labels.append(f"swr({n})\n{mode}")
                off.append(med[("off", n, "swr", mode)])
                on.append(med[("on", n, "swr", mode)])
        xs = range(len(labels))
        ax.bar([x - 0.2 for x in xs], off, 0.4, label="huge_pages = off")
        ax.bar([x + 0.2 for x in xs], on, 0.4, label="huge_pages = on")
        ax.set_xticks(list(xs))
        ax.set_xticklabels(labels, fontsize=8)
        ax.set_ylabel("ms (median)")
        ax.set_title("swr with and without huge pages")
        ax.legend()
    save_report(args.name, lines, draw)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--name", default="huge_pages_sampling", help="report name under bench/results")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root: huge pages are reserved with sysctl")
    run = Run()
    saved = sysctl_hugepages()
    try:
        if sysctl_hugepages(max(saved, HUGE_PAGES_NEEDED)) < HUGE_PAGES_NEEDED:
            sys.exit(f"could not reserve {HUGE_PAGES_NEEDED} huge pages")
        with abtree_cluster(SETTINGS) as cl:
            res, version = run_all(cl, args, run.log)
    finally:
        sysctl_hugepages(saved)
    report(args, res, version, run.started, run.minutes())


if __name__ == "__main__":
    main()
