#!/usr/bin/python3
"""Which way to draw under an old snapshot, by the share it sees: bench/old_snapshot_crossover.py [--reps N]

Under a snapshot that cannot see some entries of an abtree index, draws go one of two exact ways
(src/abtree/README, "Draws under an old snapshot"): (b) by the stored weights, rejecting the
entries the snapshot cannot see, which costs about 1/s descents per draw if it sees the share s
of the stored weight; (a) by the weights the weight store adjusts for the snapshot, which rejects
nothing for visibility but reads every leaf it reaches entry by entry.  abtree.draw_stored_share
picks (b) while s is at least its value.  This benchmark measures both in the same run as s falls,
to place that value where they cost the same.

A throwaway cluster (PG_CONFIG, default PostgreSQL 15; the installed release build of abtree;
--name old_snapshot_crossover_pg18 for PostgreSQL 18's release build),
abtree.mvstore_size = 1GB so that the store records every insert (not full), 1GB shared_buffers.
Table a(x int4, y int4) of 500,000 rows with an abtree index on y; a sampler takes a REPEATABLE
READ snapshot, then another session inserts rows it cannot see, in steps, up to 15 times as many.
At each step (table and index prewarmed), the sampler runs `SELECT count(*) FROM a TABLESAMPLE
swr(10000)` --reps times with abtree.draw_stored_share = 0 (always (b)) and = 1 (always (a)),
alternating, and the medians of each are compared.  Writes bench/results/old_snapshot_crossover.md
and .png.  Run as root or postgres.
"""

import argparse
import datetime
import os
import statistics
import sys
import time

sys.dont_write_bytecode = True
BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)

from ab_builds import save_report  # noqa: E402
from harness.cluster import Cluster  # noqa: E402
from harness.old_snapshot import QUERY, SETTINGS, insert_sql, load, old_snapshot, run  # noqa: E402
from harness.stats import fmt  # noqa: E402

ROWS = 500_000
STEPS = (0.5, 1, 2, 4, 7, 10, 15)      # invisible rows per visible row


def both_ways(sampler, reps):
    """Medians (ms) of the query by the stored weights and by weighing pages, alternated."""
    times = {0: [], 1: []}
    for i in range(reps + 1):
        for share in (0, 1):
            run(sampler, f"SET abtree.draw_stored_share = {share}")
            t = time.perf_counter()
            run(sampler, QUERY)
            if i > 0:           # the first round warms up
                times[share].append((time.perf_counter() - t) * 1000)
    return statistics.median(times[0]), statistics.median(times[1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--name", default="old_snapshot_crossover",
                    help="report name under bench/results (one per server version)")
    args = ap.parse_args()
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    t0 = time.monotonic()
    rows = []
    # a store large enough to record every insert: neither way meets overcounts
    with Cluster(dict(SETTINGS, **{"abtree.mvstore_size": "1GB"})) as cl:
        c = load(cl, ROWS, prewarm=False)
        sampler = old_snapshot(cl)
        inserted, salt = 0, 0
        for mult in STEPS:
            while inserted < mult * ROWS:
                salt += 7919
                run(c, insert_sql(salt, 50000))
                inserted += 50000
            run(c, "SELECT pg_prewarm('a'), pg_prewarm('a_y')")
            full, fallbacks = run(c, "SELECT is_full, fallbacks FROM abtree_mvstore()")[0]
            stored_ms, weighed_ms = both_ways(sampler, args.reps)
            rows.append((mult, ROWS / (ROWS + inserted), stored_ms, weighed_ms, full, fallbacks))
            print(f"[{time.monotonic() - t0:5.0f} s] s = {rows[-1][1]:.3f}: stored "
                  f"{stored_ms:.2f} ms, weighed {weighed_ms:.2f} ms", flush=True)
        run(sampler, "COMMIT")
        sampler.close()
        c.close()
    report(args, rows, started, (time.monotonic() - t0) / 60)


def report(args, rows, started, minutes):
    lines = ["# Draws under an old snapshot: by the stored weights or weighing pages, by the share "
             "the snapshot sees", "",
             f"Command: `{' '.join(['bench/old_snapshot_crossover.py'] + sys.argv[1:])}` "
             f"(started {started}, {minutes:.0f} min), PostgreSQL from "
             f"`{os.environ.get('PG_CONFIG', '/usr/lib/postgresql/15/bin/pg_config')}`, release "
             f"build, 1GB shared_buffers, abtree.mvstore_size 1GB. {ROWS:,} rows seen by a "
             "REPEATABLE READ snapshot; rows it cannot see inserted in steps; at each step "
             f"`{QUERY}` under that snapshot, {args.reps} times each way, alternated, after one "
             "warmup round, latency measured in the client. `stored`: "
             "abtree.draw_stored_share = 0 (draws by the stored weights, rejecting entries the "
             "snapshot cannot see); `weighed`: = 1 (every page weighed as the snapshot sees it, "
             "leaves entry by entry).", "",
             "| rows not seen per row seen | share seen s | stored ms | weighed ms | "
             "stored / weighed | store full | fallbacks |", "|---|---|---|---|---|---|---|"]
    for mult, s, b, a, full, fb in rows:
        lines.append(f"| {mult} | {s:.3f} | {fmt(b)} | {fmt(a)} | x{b / a:.2f} | {full} | {fb:,} |")
    cheaper_b = [r[1] for r in rows if r[2] <= r[3]]
    cheaper_a = [r[1] for r in rows if r[2] > r[3]]
    verdict = (f"By the stored weights is cheaper down to s = {min(cheaper_b):.3f}"
               if cheaper_b else "By the stored weights is never cheaper")
    verdict += (f"; weighing pages from s = {max(cheaper_a):.3f} down"
                if cheaper_a else "; weighing pages never is")
    lines += ["", verdict + ". abtree.draw_stored_share's automatic default (-1) is 1/8 on "
              "PostgreSQL 15 and 16 and 1/4 from 17 on.", ""]

    def draw(ax):
        s = [r[1] for r in rows]
        ax.plot(s, [r[2] for r in rows], "o-", label="stored weights (reject unseen)")
        ax.plot(s, [r[3] for r in rows], "s-", label="weigh pages as the snapshot sees them")
        ax.axvline(0.125, color="grey", linestyle=":", label="automatic share, 15 and 16")
        ax.axvline(0.25, color="grey", linestyle="--", label="automatic share, 17 on")
        ax.set_xscale("log")
        ax.set_xlabel("share of the stored weight the snapshot sees")
        ax.set_ylabel("swr(10000) latency, ms")
        ax.legend()
    save_report(args.name, lines, draw)


if __name__ == "__main__":
    main()
