#!/usr/bin/python3
"""Same-run A/B of bench/old_snapshot_sampling.py: bench/old_snapshot_ab.py A.so B.so [--rounds N] [--name X]

Installs A's and B's abtree.so in turn (PostgreSQL 15, release builds), and for each runs the
benchmark's phases (idle, busy, busy, after under one old snapshot) on a new cluster, A, B, A, B,
... so that the machine's drift falls on both; reports the medians per build and phase over the
rounds and B / A.  Writes bench/results/<name>.md and .png.  Run as root; leaves B installed.
"""

import argparse
import datetime
import os
import shutil
import statistics
import subprocess
import sys
import time

sys.dont_write_bytecode = True
BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)

from ab_builds import save_report  # noqa: E402
from harness.stats import fmt  # noqa: E402
from old_snapshot_sampling import measure  # noqa: E402

PHASES = ("idle", "busy", "after")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--name", default="old_snapshot_ab")
    args = ap.parse_args()
    lib = subprocess.run([os.environ.get("PG_CONFIG", "/usr/lib/postgresql/15/bin/pg_config"),
                          "--pkglibdir"], capture_output=True, text=True, check=True).stdout.strip()
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    t0 = time.monotonic()
    res = {"A": {p: [] for p in PHASES}, "B": {p: [] for p in PHASES}}
    for r in range(args.rounds):
        for label, so in (("A", args.a), ("B", args.b)):
            shutil.copy(so, os.path.join(lib, "abtree.so"))
            print(f"round {r + 1}, {label} ({so})", flush=True)
            got, _, _ = measure(args.reps, t0)
            for p in PHASES:
                res[label][p] += got[p]
    med = {k: {p: statistics.median(v[p]) for p in PHASES} for k, v in res.items()}
    lines = ["# swr(10000) under an old snapshot: same-run A/B", "",
             f"Command: `{' '.join(['bench/old_snapshot_ab.py'] + sys.argv[1:])}` (started "
             f"{started}, {(time.monotonic() - t0) / 60:.0f} min), PostgreSQL 15 release builds, "
             f"each round A then B, every run on a new cluster with bench/old_snapshot_sampling.py's "
             f"phases ({args.reps} queries per phase and run, medians over all rounds).", "",
             "| phase | A ms | B ms | B / A (<1: B faster) | idle / phase, A | idle / phase, B |",
             "|---|---|---|---|---|---|"]
    for p in PHASES:
        lines.append(f"| {p} | {fmt(med['A'][p])} | {fmt(med['B'][p])} | "
                     f"x{med['B'][p] / med['A'][p]:.2f} | x{med['A']['idle'] / med['A'][p]:.2f} | "
                     f"x{med['B']['idle'] / med['B'][p]:.2f} |")
    lines.append("")

    def draw(ax):
        x = range(len(PHASES))
        ax.bar([i - 0.2 for i in x], [med["A"][p] for p in PHASES], 0.4, label="A")
        ax.bar([i + 0.2 for i in x], [med["B"][p] for p in PHASES], 0.4, label="B")
        ax.set_xticks(list(x), PHASES)
        ax.set_ylabel("swr(10000) median latency, ms")
        ax.legend()
    save_report(args.name, lines, draw)


if __name__ == "__main__":
    main()
