#!/usr/bin/python3
"""A/B of two builds on insert_nbtree: bench/ab_inserts.py REV_A REV_B [--rounds N] [--name NAME]

Builds each git revision (release build, no assertions) against $PG_CONFIG, runs
`bench/run --quick insert_nbtree` with each, alternating A, B, A, B ... (ab_builds.py's
machinery), and writes bench/results/<--name>.md and .png: per buffer setting and client
count, each build's abtree insert rate against the nbtree of the same run, and B against A
(the ratio of those ratios, so that drift of the machine between runs cancels).  Run as root.
"""

import re

from ab_builds import PG_CONFIG, ab_args, ab_run, median, save_report

ROW = re.compile(r"^\| ([^|]+?) \| (\d+) \| `(\w+)` \| ([\d,]+) \|")


def parse_inserts(path):
    """{(buffers, clients, variant): median rows/s} from an insert_nbtree report."""
    rows = {}
    with open(path) as f:
        for line in f:
            m = ROW.match(line)
            if m:
                rows[(m.group(1), int(m.group(2)), m.group(3))] = \
                    float(m.group(4).replace(",", ""))
    return rows


def main():
    args = ab_args(__doc__, "write_path_pgbench")
    write_report(args, *ab_run(args, "insert_nbtree", parse_inserts))


def write_report(args, revs, results, started, minutes):
    a, b = revs
    points = sorted({(buf, c) for r in results[a] for (buf, c, v) in r}, key=lambda p: (p[0], p[1]))
    lines = [f"# {args.name}: pgbench inserts of two builds, each against nbtree in its own run",
             "", f"Builds `{a}` (A) and `{b}` (B), each running `bench/run --quick insert_nbtree` "
             "(1M-row A, pgbench statements of 100 random rows, 1 and 2 clients, a 2MB cold and a "
             "1GB prewarmed buffer pool), alternating A, B for "
             f"{args.rounds} round(s). Ratio = abtree's rows/s / nbtree's in the same run; "
             "B/A = median of B's ratios / median of A's.", "",
             f"Produced by `bench/ab_inserts.py {args.rev_a} {args.rev_b} --rounds {args.rounds}"
             f" --name {args.name}` on {started:%Y-%m-%d %H:%M} UTC in {minutes:.0f} minutes, "
             f"PostgreSQL from `{PG_CONFIG}`, release builds. The machine has 2 cores.", "",
             "| shared_buffers | clients | A abtree rows/s | A vs nbtree | B abtree rows/s | "
             "B vs nbtree | B/A |", "|---|---|---|---|---|---|---|"]
    plot = []
    for buf, c in points:
        ra = [r[(buf, c, "abtree")] / r[(buf, c, "nbtree")] for r in results[a]]
        rb = [r[(buf, c, "abtree")] / r[(buf, c, "nbtree")] for r in results[b]]
        va = median([r[(buf, c, "abtree")] for r in results[a]])
        vb = median([r[(buf, c, "abtree")] for r in results[b]])
        plot.append((f"{buf}, {c}", median(ra), median(rb)))
        lines.append(f"| {buf} | {c} | {va:,.0f} | x{median(ra):.3f} | {vb:,.0f} | "
                     f"x{median(rb):.3f} | x{median(rb) / median(ra):.3f} |")

    def draw(ax):
        xs = range(len(plot))
        ax.bar([x - 0.2 for x in xs], [p[1] for p in plot], width=0.4, label=f"A ({a})")
        ax.bar([x + 0.2 for x in xs], [p[2] for p in plot], width=0.4, label=f"B ({b})")
        ax.set_xticks(list(xs))
        ax.set_xticklabels([p[0] for p in plot], fontsize=7)
        ax.set_ylabel("abtree rows/s / nbtree rows/s (same run)")
        ax.axhline(1.0, color="grey", linewidth=0.5)
        ax.legend()
        ax.set_title("pgbench inserts against nbtree, two builds")
    save_report(args.name, lines, draw)


if __name__ == "__main__":
    main()
