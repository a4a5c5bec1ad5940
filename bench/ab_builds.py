#!/usr/bin/python3
"""A/B of two builds of abtree on one experiment: bench/ab_builds.py REV_A REV_B [--rounds N]

Builds each git revision of this repository (release build, no assertions) against
$PG_CONFIG (default PostgreSQL 15), installs it, runs `bench/run --quick weight_protocols`
with it into a directory of its own, alternating A, B, A, B ... for --rounds rounds, and
writes bench/results/<--name>.md and .png: the inserts panel of every round, each variant's
rows/s and its ratio to nbtree measured in the same run, and B against A.

Used for issue 20's question of what MARK_VALID's exclusive path costs: A is the last
commit before the fix, B the fix.  Run as root (it installs into PostgreSQL's directories).
"""

import argparse
import datetime
import os
import re
import shutil
import subprocess
import sys

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
PG_CONFIG = os.environ.get("PG_CONFIG", "/usr/lib/postgresql/15/bin/pg_config")
ROW = re.compile(r"^\| inserts \| (\d+) \| `(\w+)` \| ([\d,]+) \|")


def build(rev, work):
    src = os.path.join(work, rev)
    shutil.rmtree(src, ignore_errors=True)
    os.makedirs(src)
    archive = subprocess.run(["git", "-C", ROOT, "archive", rev], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-C", src, "-xf", "-"], input=archive, check=True)
    subprocess.run(["make", "-s", "-j2", "-C", src, f"PG_CONFIG={PG_CONFIG}"], check=True,
                   stdout=subprocess.DEVNULL)
    return src


def parse_table(path, row):
    """{(int, name): number} from the report lines that the regex row matches (3 groups)."""
    rows = {}
    with open(path) as f:
        for line in f:
            m = row.match(line)
            if m:
                rows[(int(m.group(1)), m.group(2))] = float(m.group(3).replace(",", ""))
    return rows


def parse_weight_protocols(path):
    """{(clients, variant): rows/s} from the inserts panel of a weight_protocols report."""
    return parse_table(path, ROW)


def run_round(src, rev, rnd, work, experiment, parse=parse_weight_protocols, mode="--quick",
              settings=()):
    subprocess.run(["make", "-s", "-C", src, f"PG_CONFIG={PG_CONFIG}", "install"], check=True,
                   stdout=subprocess.DEVNULL)
    out = os.path.join(work, f"res-{rev}-{rnd}")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    subprocess.run([sys.executable, os.path.join(BENCH, "run"), mode, "--wait-quiet", "30",
                    "--results", out]
                   + [f"--set={x}" for x in settings] + [experiment], check=True,
                   stdout=open(os.path.join(work, f"log-{rev}-{rnd}.txt"), "w"),
                   stderr=subprocess.STDOUT)
    return parse(os.path.join(out, f"{experiment}.md"))


def ab_args(doc, name):
    """The command line of an A/B script: two revisions, --rounds, --name, --work."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("rev_a")
    ap.add_argument("rev_b")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--name", default=name)
    ap.add_argument("--work", default="/var/tmp/abtree-ab")
    ap.add_argument("--full", action="store_true", help="run the experiment in full mode")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                    help="a server setting for both builds' runs (bench/run --set)")
    ap.add_argument("--purpose", default=None,
                    help="what the A/B measures (report title); default: issue 20's question")
    return ap.parse_args()


def ab_run(args, experiment, parse):
    """Build both revisions, run the experiment alternately; (revs, results, started, minutes)."""
    revs = [subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", r], check=True,
                           capture_output=True, text=True).stdout.strip()
            for r in (args.rev_a, args.rev_b)]
    os.makedirs(args.work, exist_ok=True)
    srcs = {rev: build(rev, args.work) for rev in revs}
    results = {rev: [] for rev in revs}
    started = datetime.datetime.utcnow()
    for rnd in range(args.rounds):
        for rev in revs:
            results[rev].append(run_round(srcs[rev], rev, rnd, args.work, experiment, parse,
                                          "--full" if getattr(args, "full", False) else "--quick",
                                          getattr(args, "set", ())))
    minutes = (datetime.datetime.utcnow() - started).total_seconds() / 60
    return revs, results, started, minutes


def save_report(name, lines, draw):
    """bench/results/<name>.md from lines, and .png from draw(ax) if matplotlib is there."""
    path = os.path.join(BENCH, "results", name)
    with open(path + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(7, 4))
        draw(ax)
        fig.tight_layout()
        fig.savefig(path + ".png", dpi=110)
    except ImportError:
        pass
    print(f"wrote {path}.md")


def main():
    args = ab_args(__doc__, "markvalid_path_lock")
    write_report(args, *ab_run(args, "weight_protocols", parse_weight_protocols))


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def write_report(args, revs, results, started, minutes):
    a, b = revs
    clients = sorted({c for r in results[a] for (c, _) in r})
    variants = ("safe_page", "page_exclusive", "path_exclusive")
    if args.purpose:
        title = args.purpose
        builds = f"Two builds, `{a}` (A) and `{b}` (B), each "
    else:
        title = "what MARK_VALID's exclusive path costs inserts"
        builds = (f"Two builds, `{a}` (A: before issue 20's fix, MARK_VALID registered the pages "
                  f"the pass added on without locking them) and `{b}` (B: the fix, MARK_VALID "
                  "locks the leaf's current path up to the root exclusively and registers it "
                  "normally), each ")
    purpose = f" --name {args.name} --purpose '{args.purpose}'" if args.purpose else ""
    lines = [f"# {args.name}: {title}", "",
             builds + "running `bench/run --quick weight_protocols` (200K-row A, batches of 100 random "
             "rows, 1-8 pgbench clients, everything in shared_buffers), alternating A, B, A, B "
             f"for {args.rounds} rounds. Every ratio to nbtree is against the nbtree of the same "
             "run; B/A compares the medians over the rounds of each build's own ratio to nbtree, "
             "so that drift of the machine between runs cancels.", "",
             f"Produced by `bench/ab_builds.py {args.rev_a} {args.rev_b} --rounds {args.rounds}{purpose}` "
             f"on {started:%Y-%m-%d %H:%M} UTC in {minutes:.0f} minutes, PostgreSQL from "
             f"`{PG_CONFIG}`, release builds. The machine has 2 cores.", "",
             "| clients | variant | A rows/s (median) | A vs nbtree | B rows/s (median) | "
             "B vs nbtree | B/A (vs nbtree) |", "|---|---|---|---|---|---|---|"]
    plot = {}
    for c in clients:
        for v in variants + ("nbtree",):
            ra = [r[(c, v)] / r[(c, "nbtree")] for r in results[a] if (c, v) in r]
            rb = [r[(c, v)] / r[(c, "nbtree")] for r in results[b] if (c, v) in r]
            va = median([r[(c, v)] for r in results[a] if (c, v) in r])
            vb = median([r[(c, v)] for r in results[b] if (c, v) in r])
            ratio = median(rb) / median(ra)
            plot[(c, v)] = (median(ra), median(rb))
            lines.append(f"| {c} | `{v}` | {va:,.0f} | x{median(ra):.3f} | {vb:,.0f} | "
                         f"x{median(rb):.3f} | x{ratio:.3f} |")
    lines += ["", "Rounds (rows/s, each run's own nbtree in the last column):", "",
              "| build | round | clients | safe_page | page_exclusive | path_exclusive | nbtree |",
              "|---|---|---|---|---|---|---|"]
    for rev in revs:
        for i, r in enumerate(results[rev]):
            for c in clients:
                cells = " | ".join(f"{r.get((c, v), 0):,.0f}" for v in variants + ("nbtree",))
                lines.append(f"| `{rev}` | {i + 1} | {c} | {cells} |")

    def draw(ax):
        for v, style in zip(variants, ("o", "s", "^")):
            ax.plot(clients, [plot[(c, v)][0] for c in clients], style + "--", label=f"{v} A ({a})")
            ax.plot(clients, [plot[(c, v)][1] for c in clients], style + "-", label=f"{v} B ({b})")
        ax.set_xlabel("inserting clients")
        ax.set_ylabel("rows/s relative to nbtree (same run)")
        ax.set_xscale("log", base=2)
        ax.set_xticks(clients)
        ax.set_xticklabels([str(c) for c in clients])
        ax.legend(fontsize=7)
        ax.set_title(title if args.purpose else "MARK_VALID's exclusive path: inserts vs nbtree")

    save_report(args.name, lines, draw)


if __name__ == "__main__":
    main()
