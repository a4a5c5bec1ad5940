#!/usr/bin/python3
"""A/B of two builds on chll_storage: bench/ab_chll.py REV_A REV_B [--rounds N] [--name NAME]

Builds each git revision (release build, no assertions) against $PG_CONFIG, runs
`bench/run --quick chll_storage` with each, alternating A, B, A, B ... (ab_builds.py's
machinery), and writes bench/results/<--name>.md and .png: per number of distinct values, the
chll column's stored size, value size, build and read time under each build, and B against A.
The flat bytea column measured in each run is the baseline both builds share, so its sizes
must agree between A and B.  Run as root.
"""

import re

from ab_builds import PG_CONFIG, ab_args, ab_run, median, save_report

# | d | `variant` | median B | min - max | IQR | reps | value B | text chars | read ms | build ms |
ROW = re.compile(r"^\| ([\d,]+) \| `(\w+)` \| ([\d.,]+) \| [^|]+ \| [^|]+ \| \d+ \| ([\d.,]+) \| "
                 r"([\d.,]+) \| ([\d.,]+) \| ([\d.,]+) \|")
FIELDS = ("stored B", "value B", "text chars", "read ms", "build ms")


def parse(path):
    """{(d, variant): {field: number}} from a chll_storage report."""
    rows = {}
    with open(path) as f:
        for line in f:
            m = ROW.match(line)
            if m:
                nums = [float(g.replace(",", "")) for g in m.groups()[2:]]
                rows[(int(m.group(1).replace(",", "")), m.group(2))] = dict(zip(FIELDS, nums))
    return rows


def main():
    args = ab_args(__doc__, "chll_storage_ab")
    revs, results, started, minutes = ab_run(args, "chll_storage", parse)
    a, b = revs
    ds = sorted({d for r in results[a] for (d, v) in r if v == "chll"})

    def med(rev, d, variant, field):
        return median([r[(d, variant)][field] for r in results[rev]])

    lines = [f"# {args.name}: chll values under two builds", "",
             f"Builds `{a}` (A, flat values) and `{b}` (B, packed values), each running `bench/run "
             f"--quick chll_storage`, alternating A, B for {args.rounds} rounds; medians over the "
             "rounds of each run's medians. The `flat_bytea` columns are the baseline both runs "
             "measure (the same sketches' flat bytes in a bytea column).", "",
             f"Produced by `bench/ab_chll.py {args.rev_a} {args.rev_b} --rounds {args.rounds} "
             f"--name {args.name}` on {started:%Y-%m-%d %H:%M} UTC in {minutes:.0f} minutes, "
             f"PostgreSQL from `{PG_CONFIG}`, release builds. The machine has 2 cores.", "",
             "| distinct values | A stored B | B stored B | A value B | B value B | A read ms | "
             "B read ms | B/A read | A build ms | B build ms | B/A build | flat_bytea stored B "
             "(A / B) |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    plot = []
    for d in ds:
        ra, rb = med(a, d, "chll", "read ms"), med(b, d, "chll", "read ms")
        ba, bb = med(a, d, "chll", "build ms"), med(b, d, "chll", "build ms")
        plot.append((d, med(a, d, "chll", "value B"), med(b, d, "chll", "value B")))
        lines.append(
            f"| {d:,} | {med(a, d, 'chll', 'stored B'):,.0f} | {med(b, d, 'chll', 'stored B'):,.0f} "
            f"| {med(a, d, 'chll', 'value B'):,.0f} | {med(b, d, 'chll', 'value B'):,.0f} "
            f"| {ra:.3g} | {rb:.3g} | x{rb / ra:.2f} | {ba:.3g} | {bb:.3g} | x{bb / ba:.2f} "
            f"| {med(a, d, 'flat_bytea', 'stored B'):,.0f} / "
            f"{med(b, d, 'flat_bytea', 'stored B'):,.0f} |")

    def draw(ax):
        ax.plot([p[0] for p in plot], [p[1] for p in plot], "o--", label=f"A ({a}): flat")
        ax.plot([p[0] for p in plot], [p[2] for p in plot], "o-", label=f"B ({b}): packed")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("distinct values in the sketch")
        ax.set_ylabel("bytes of a chll value (512 buckets)")
        ax.set_title("chll value size: flat against packed")
        ax.legend()
    save_report(args.name, lines, draw)


if __name__ == "__main__":
    main()
