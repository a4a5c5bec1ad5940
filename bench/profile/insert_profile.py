#!/usr/bin/python3
"""Where an abtree insert spends its instructions (issue 3's profile question).

Runs PostgreSQL 15 in single-user mode under valgrind's callgrind (instruction
counts: repeatable, unaffected by other load), once inserting N random int4 keys
into A(x, y) with an abtree index on y and once with a btree index, each after a
bulk build over the same preloaded rows.  Reports per insert: the instructions
of the index insert (inclusive), of adding items to pages (PageAddItemExtended),
and of the memmove inside it that shifts line pointers to make room in the
middle of a page -- the cost the RB+ tree's leaf layout (paper 003) would save.

    bench/profile/insert_profile.py [--rows 1000000] [--inserts 100000]

Writes bench/results/abtree_insert_profile.md.  Run as root (it runs the
server as postgres).  Takes a few minutes: callgrind is ~50x slower.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "..", "results", "abtree_insert_profile.md")
BIN = "/usr/lib/postgresql/15/bin"


def as_postgres(cmd, **kw):
    return subprocess.run(["runuser", "-u", "postgres", "--"] + cmd, **kw)


def single_user(datadir, sql, callgrind_out=None):
    cmd = [f"{BIN}/postgres", "--single", "-D", datadir, "-c", "shared_preload_libraries=abtree",
           "-c", "fsync=off", "-c", "shared_buffers=512MB", "postgres"]
    if callgrind_out:
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={callgrind_out}"] + cmd
    r = as_postgres(cmd, input=sql.encode(), capture_output=True)
    if r.returncode != 0 or b"ERROR" in r.stdout:
        sys.exit(f"single-user run failed:\n{r.stdout.decode()[-2000:]}\n{r.stderr.decode()[-2000:]}")


def inclusive(tree, fn):
    """Inclusive instructions of function fn (a name), from callgrind_annotate --tree=both."""
    m = re.search(r"^\s*([\d,]+) \([ \d.]+%\)\s+\*\s+\S*:" + re.escape(fn) + r" ", tree, re.M)
    return int(m.group(1).replace(",", "")) if m else 0


def callee_of(tree, fn, callee_pattern):
    """Instructions that fn spends in callees matching callee_pattern."""
    block = re.search(r"^\s*[\d,]+ \([ \d.]+%\)\s+\*\s+\S*:" + re.escape(fn) + r" .*?(?:\n\n|\Z)",
                      tree, re.M | re.S)
    if not block:
        return 0
    total = 0
    for line in block.group(0).splitlines():
        m = re.match(r"^\s*([\d,]+) \([ \d.]+%\)\s+>\s+(\S+)", line)
        if m and re.search(callee_pattern, m.group(2)):
            total += int(m.group(1).replace(",", ""))
    return total


def callers_of(tree, fn):
    """{caller: instructions} for the calls into fn."""
    block = re.search(r"((?:^\s*[\d,]+ \([ \d.]+%\)\s+<.*\n)+)^\s*[\d,]+ \([ \d.]+%\)\s+\*\s+\S*:"
                      + re.escape(fn) + r" ", tree, re.M)
    out = {}
    if block:
        for line in block.group(1).splitlines():
            m = re.match(r"^\s*([\d,]+) \([ \d.]+%\)\s+<\s+\S*?:?(\w+) ", line)
            if m:
                out[m.group(2)] = out.get(m.group(2), 0) + int(m.group(1).replace(",", ""))
    return out


def profile(workdir, am, rows, inserts):
    datadir = os.path.join(workdir, f"data_{am}")
    as_postgres([f"{BIN}/initdb", "-D", datadir, "-U", "postgres", "--no-sync"],
                capture_output=True, check=True)
    single_user(datadir, f"""
CREATE EXTENSION abtree;
SELECT setseed(0.5);
CREATE TABLE a (x int, y int);
INSERT INTO a SELECT 1, (random() * 2e9)::int FROM generate_series(1, {rows});
CREATE INDEX a_y ON a USING {am} (y);
CHECKPOINT;
""")
    out = os.path.join(workdir, f"cg_{am}.out")
    single_user(datadir, f"""
SELECT setseed(0.25);
INSERT INTO a SELECT 1, (random() * 2e9)::int FROM generate_series(1, {inserts});
""", callgrind_out=out)
    tree = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--tree=both", out],
                          capture_output=True, text=True).stdout
    top = "abtinsert" if am == "abtree" else "btinsert"
    return {
        "total": inclusive(tree, top),
        "pageadd_from_index": sum(v for k, v in callers_of(tree, "PageAddItemExtended").items()
                                  if k.startswith("abt") or k.startswith("_bt")),
        "pageadd_all": inclusive(tree, "PageAddItemExtended"),
        "pageadd_memmove": callee_of(tree, "PageAddItemExtended", r"mem(move|cpy)"),
        "callers": callers_of(tree, "PageAddItemExtended"),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--inserts", type=int, default=100_000)
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root")
    workdir = tempfile.mkdtemp(prefix="abtree-profile-")
    shutil.chown(workdir, "postgres", "postgres")
    started = time.time()
    try:
        res = {am: profile(workdir, am, args.rows, args.inserts) for am in ("abtree", "btree")}
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    n = args.inserts
    lines = [
        "# Where an abtree insert spends its instructions",
        "",
        f"Command: `{' '.join(['bench/profile/insert_profile.py'] + sys.argv[1:])}` "
        f"({time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, PostgreSQL 15, "
        f"{time.time() - started:.0f} s).",
        "",
        f"{n:,} random int4 keys inserted (one `INSERT ... SELECT`) into A(x, y) after a bulk build "
        f"over {args.rows:,} rows, in single-user mode under callgrind: instruction counts, "
        "repeatable and independent of other load on the machine. Instructions per insert:",
        "",
        "| | abtree | btree | ratio |",
        "|---|---:|---:|---:|",
    ]

    def row(label, key):
        a, b = res["abtree"][key] / n, res["btree"][key] / n
        lines.append(f"| {label} | {a:,.0f} | {b:,.0f} | {a / b if b else float('nan'):.2f} |")

    row("index insert, inclusive (`abtinsert` / `btinsert`)", "total")
    row("adding items to pages (`PageAddItemExtended`, all callers)", "pageadd_all")
    row("of which memmove: shifting line pointers (and copying the item)", "pageadd_memmove")
    a = res["abtree"]
    share = a["pageadd_memmove"] / a["total"] if a["total"] else 0
    lines += [
        "",
        f"Share of an abtree insert's instructions spent in the memmove inside "
        f"`PageAddItemExtended` (line pointer shifting, including the heap's own appends, which "
        f"shift nothing): **{100 * share:.1f}%** (an upper bound: the same memmove also copies "
        "the item, and the heap's calls are counted in).",
        "",
        "Callers of `PageAddItemExtended` in the abtree run (instructions): " +
        ", ".join(f"`{k}` {v:,}" for k, v in sorted(a["callers"].items(), key=lambda kv: -kv[1])),
        "",
        ("Conclusion: line pointer shifting is a small share of an insert (under 5%); the RB+ "
         "leaf layout (paper 003) could save at most that share, so it is not worth building "
         "for this workload. The descent (binary searches calling the opclass comparison "
         "function), the per-level weight updates with their WAL records, and splits dominate."
         if share < 0.05 else
         "Conclusion: line pointer shifting is a noticeable share of an insert (5% or more); "
         "the RB+ leaf layout (paper 003) is worth a prototype."),
    ]
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    with open(RESULTS, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
