#!/usr/bin/python3
"""A/B of two builds on write_path: bench/ab_write_path.py REV_A REV_B [--rounds N] [--reps N]

Builds each git revision (release build, no assertions) against $PG_CONFIG and runs
bench/write_path.py's measurement (one statement inserting --rows random int4 into an empty
table, each index variant against no index and nbtree in the same repetition) with each,
alternating A, B, A, B ... with a fresh cluster per round.  Writes bench/results/<--name>.md
and .png: per variant, each build's index cost and index WAL per row against nbtree's of the
same run, and B against A (the ratio of those ratios, so that drift of the machine between
runs cancels).  Run as root.
"""

import argparse
import os
import statistics
import subprocess
import sys

sys.dont_write_bytecode = True
BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)

import write_path  # noqa: E402
from ab_builds import PG_CONFIG, ROOT, build, save_report  # noqa: E402
from harness.standalone import Run, abtree_cluster  # noqa: E402

VARIANTS = ["abtree_batched", "abtree_batched_nosketch", "abtree", "abtree_path"]


def one_round(src, args, log):
    subprocess.run(["make", "-s", "-C", src, f"PG_CONFIG={PG_CONFIG}", "install"], check=True,
                   stdout=subprocess.DEVNULL)
    with abtree_cluster(write_path.SETTINGS) as cl:
        res, version = write_path.run_all(cl, args, log)
    s = write_path.summarize(res, args.rows)["insert"]
    bt = s["btree"]
    return {v: (s[v]["cost"] / bt["cost"], s[v]["wal"] / bt["wal"], s[v]["cost"]) for v in VARIANTS}, version


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rev_a")
    ap.add_argument("rev_b")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--name", default="ab_write_path")
    ap.add_argument("--work", default="/var/tmp/abtree-ab")
    args = ap.parse_args()
    args.copy = False
    revs = [subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", r], check=True,
                           capture_output=True, text=True).stdout.strip()
            for r in (args.rev_a, args.rev_b)]
    os.makedirs(args.work, exist_ok=True)
    srcs = {rev: build(rev, args.work) for rev in revs}
    run = Run()
    results = {rev: [] for rev in revs}
    version = "?"
    for rnd in range(args.rounds):
        for rev in revs:
            r, version = one_round(srcs[rev], args, lambda m, rev=rev: run.log(f"{rev} round {rnd + 1}: {m}"))
            results[rev].append(r)
    report(args, revs, results, version, run)


def report(args, revs, results, version, run):
    a, b = revs
    med = {rev: {v: [statistics.median(r[v][i] for r in results[rev]) for i in range(3)]
                 for v in VARIANTS} for rev in revs}
    lines = [f"# {args.name}: index write cost of two builds, each against nbtree in its own run", "",
             f"Builds `{a}` (A) and `{b}` (B), each running bench/write_path.py's measurement "
             f"({args.rows:,} random int4 in one INSERT into an empty table, {args.reps} "
             "repetitions per round, every variant against no index and nbtree in the same "
             f"repetition), alternating A, B, A, B for {args.rounds} rounds, a fresh cluster "
             "per round. Index cost vs btree = the variant's index cost / nbtree's, median over "
             "rounds; B/A = B's ratio / A's ratio.", "",
             f"Produced by `bench/ab_write_path.py {args.rev_a} {args.rev_b} --rounds "
             f"{args.rounds} --reps {args.reps} --name {args.name}` on {run.started} in "
             f"{run.minutes():.0f} minutes, PostgreSQL {version} (release build).", "",
             "| variant | A index cost vs btree | B index cost vs btree | B/A | A index s | B index s "
             "| A WAL vs btree | B WAL vs btree |", "|---|---|---|---|---|---|---|---|"]
    for v in VARIANTS:
        ca, wa, sa = med[a][v]
        cb, wb, sb = med[b][v]
        lines.append(f"| `{v}` | x{ca:.2f} | x{cb:.2f} | **x{cb / ca:.2f}** | {sa:.2f} | {sb:.2f} "
                     f"| x{wa:.2f} | x{wb:.2f} |")
    lines += ["", "Per round (index cost vs btree):", ""]
    for rev in revs:
        for i, r in enumerate(results[rev]):
            lines.append(f"- `{rev}` round {i + 1}: "
                         + ", ".join(f"{v} x{r[v][0]:.2f}" for v in VARIANTS))

    def draw(ax):
        x = range(len(VARIANTS))
        ax.bar([i - 0.2 for i in x], [med[a][v][0] for v in VARIANTS], 0.4, label=f"A {a}")
        ax.bar([i + 0.2 for i in x], [med[b][v][0] for v in VARIANTS], 0.4, label=f"B {b}")
        ax.set_xticks(list(x))
        ax.set_xticklabels(VARIANTS)
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_ylabel("index cost / nbtree's (median)")
        ax.legend()
    save_report(args.name, lines, draw)


if __name__ == "__main__":
    main()
