#!/usr/bin/python3
"""A/B of two builds on sampling_baseline: bench/ab_sampling.py REV_A REV_B [--rounds N] [--name NAME]

Builds each git revision (release build, no assertions) against $PG_CONFIG, runs
`bench/run --quick sampling_baseline` (--full: full mode, 10M rows) with each, alternating A, B,
A, B ... (ab_builds.py's
machinery), and writes bench/results/<--name>.md and .png: per n, each build's swr latency and
its speed-up over BERNOULLI measured in the same run, and B against A (the ratio of those
speed-ups, so that drift of the machine between runs cancels).  Run as root.
"""

import re

from ab_builds import PG_CONFIG, ab_args, ab_run, median, parse_table, save_report

ROW = re.compile(r"^\| (\d+) \| `(\w+)` \| ([\d.,]+) \|")


def parse_sampling(path):
    """{(n, variant): median ms} from a sampling_baseline report."""
    return parse_table(path, ROW)


def main():
    args = ab_args(__doc__, "page_weight_views")
    write_report(args, *ab_run(args, "sampling_baseline", parse_sampling))


def write_report(args, revs, results, started, minutes):
    a, b = revs
    ns = sorted({n for r in results[a] for (n, v) in r if v == "swr"})
    mode, rows = ("--full", "10M") if args.full else ("--quick", "1M")
    lines = [f"# {args.name}: swr latency of two builds, each against BERNOULLI in its own run", "",
             f"Builds `{a}` (A) and `{b}` (B), each running `bench/run {mode} sampling_baseline` "
             f"({rows}-row A, warm, one client, `SELECT count(*) FROM a TABLESAMPLE swr(n)` against "
             "BERNOULLI at the same expected size), alternating A, B, A, B for "
             f"{args.rounds} rounds. Speed-up = BERNOULLI's median / swr's median, in the same "
             "run; B/A = median of B's speed-ups / median of A's.", "",
             f"Produced by `bench/ab_sampling.py {args.rev_a} {args.rev_b} --rounds {args.rounds}"
             f"{' --full' if args.full else ''}{''.join(' --set ' + x for x in args.set)} --name {args.name}` on {started:%Y-%m-%d %H:%M} UTC in {minutes:.0f} minutes, "
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
    def draw(ax):
        ax.plot([p[0] for p in plot], [p[1] for p in plot], "o--", label=f"A ({a})")
        ax.plot([p[0] for p in plot], [p[2] for p in plot], "o-", label=f"B ({b})")
        ax.axhline(1, color="grey", lw=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("n (rows drawn)")
        ax.set_ylabel("speed-up over BERNOULLI (same run)")
        ax.legend()
        ax.set_title(args.name)

    save_report(args.name, lines, draw)


if __name__ == "__main__":
    main()
