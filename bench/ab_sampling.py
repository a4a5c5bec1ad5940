#!/usr/bin/python3
"""A/B of two builds on sampling_baseline: bench/ab_sampling.py REV_A REV_B [--rounds N] [--name NAME]

Builds each git revision (release build, no assertions) against $PG_CONFIG, runs
`bench/run --quick sampling_baseline` with each, alternating A, B, A, B ... (ab_builds.py's
machinery), and writes bench/results/<--name>.md and .png: per n, each build's swr latency and
its speed-up over BERNOULLI measured in the same run, and B against A (the ratio of those
speed-ups, so that drift of the machine between runs cancels).  Run as root.
"""

import argparse
import datetime
import os
import re
import subprocess

from ab_builds import BENCH, PG_CONFIG, build, median, run_round

ROW = re.compile(r"^\| (\d+) \| `(\w+)` \| ([\d.,]+) \|")


def parse_sampling(path):
    """{(n, variant): median ms} from a sampling_baseline report."""
    rows = {}
    with open(path) as f:
        for line in f:
            m = ROW.match(line)
            if m:
                rows[(int(m.group(1)), m.group(2))] = float(m.group(3).replace(",", ""))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rev_a")
    ap.add_argument("rev_b")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--name", default="page_weight_views")
    ap.add_argument("--work", default="/var/tmp/abtree-ab")
    args = ap.parse_args()
    revs = [subprocess.run(["git", "-C", os.path.dirname(BENCH), "rev-parse", "--short", r],
                           check=True, capture_output=True, text=True).stdout.strip()
            for r in (args.rev_a, args.rev_b)]
    os.makedirs(args.work, exist_ok=True)
    srcs = {rev: build(rev, args.work) for rev in revs}
    results = {rev: [] for rev in revs}
    started = datetime.datetime.utcnow()
    for rnd in range(args.rounds):
        for rev in revs:
            results[rev].append(run_round(srcs[rev], rev, rnd, args.work, "sampling_baseline",
                                          parse_sampling))
    minutes = (datetime.datetime.utcnow() - started).total_seconds() / 60
    write_report(args, revs, results, started, minutes)


def write_report(args, revs, results, started, minutes):
    a, b = revs
    ns = sorted({n for r in results[a] for (n, v) in r if v == "swr"})
    lines = [f"# {args.name}: swr latency of two builds, each against BERNOULLI in its own run", "",
             f"Builds `{a}` (A) and `{b}` (B), each running `bench/run --quick sampling_baseline` "
             "(1M-row A, warm, one client, `SELECT count(*) FROM a TABLESAMPLE swr(n)` against "
             "BERNOULLI at the same expected size), alternating A, B, A, B for "
             f"{args.rounds} rounds. Speed-up = BERNOULLI's median / swr's median, in the same "
             "run; B/A = median of B's speed-ups / median of A's.", "",
             f"Produced by `bench/ab_sampling.py {args.rev_a} {args.rev_b} --rounds {args.rounds}"
             f" --name {args.name}` on {started:%Y-%m-%d %H:%M} UTC in {minutes:.0f} minutes, "
             f"PostgreSQL from `{PG_CONFIG}`, release builds. The machine has 2 cores.", "",
             "| n | A swr ms (median) | A vs bernoulli | B swr ms (median) | B vs bernoulli | "
             "B/A |", "|---|---|---|---|---|---|"]
    plot = []
    for n in ns:
        sa = [r[(n, "bernoulli")] / r[(n, "swr")] for r in results[a]]
        sb = [r[(n, "bernoulli")] / r[(n, "swr")] for r in results[b]]
        ma = median([r[(n, "swr")] for r in results[a]])
        mb = median([r[(n, "swr")] for r in results[b]])
        plot.append((n, median(sa), median(sb)))
        lines.append(f"| {n:,} | {ma:.3g} | x{median(sa):.2f} | {mb:.3g} | x{median(sb):.2f} | "
                     f"x{median(sb) / median(sa):.2f} |")
    lines += ["", "Rounds (median ms; each run's own BERNOULLI beside it):", "",
              "| build | round | n | swr | bernoulli |", "|---|---|---|---|---|"]
    for rev in revs:
        for i, r in enumerate(results[rev]):
            for n in ns:
                lines.append(f"| `{rev}` | {i + 1} | {n:,} | {r[(n, 'swr')]:.3g} | "
                             f"{r[(n, 'bernoulli')]:.3g} |")
    path = os.path.join(BENCH, "results", args.name)
    with open(path + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.plot([p[0] for p in plot], [p[1] for p in plot], "o--", label=f"A ({a})")
        ax.plot([p[0] for p in plot], [p[2] for p in plot], "o-", label=f"B ({b})")
        ax.axhline(1, color="grey", lw=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("n (rows drawn)")
        ax.set_ylabel("speed-up over BERNOULLI (same run)")
        ax.legend()
        ax.set_title(args.name)
        fig.tight_layout()
        fig.savefig(path + ".png", dpi=110)
    except ImportError:
        pass
    print(f"wrote {path}.md")


if __name__ == "__main__":
    main()
