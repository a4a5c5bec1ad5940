"""Issue 24, item 2: the reloption sketch_buckets of abtree indexes, accuracy against size and
cost, each bucket count on the same data in the same run; 512 (the default) is the baseline."""

import os
import statistics
import time

from harness import Metric, Stats, Variant, experiment
from harness.stats import fmt

from experiments.sketch_accuracy import LINEITEM_COLS, percentile, ratio_error
from experiments.sketch_cost import backend_cpu

BUCKETS = [16, 32, 64, 128, 256, 512, 1024, 2048]
PER_CHUNK = (8192 - 24 - 16) // 36          # ABT_SKETCH_PER_CHUNK
GROUPS_PER_PAGE = (8192 - 24 - 16) // 1604  # ABT_SKETCH_GROUPS_PER_PAGE


def sketch_pages(m):
    """Pages of one sketch (abtree.h, AbtSketchLayout): head, chunks, set pages."""
    groups = max(1, (10 * m) // 512)
    return 1 + -(-m // PER_CHUNK) + -(-groups // GROUPS_PER_PAGE)


@experiment(
    name="sketch_buckets",
    title="abtree sketches by bucket count (reloption sketch_buckets): accuracy, size and cost",
    figure="issue 24, item 2 (precision per index: an accuracy-versus-size-and-cost table)",
    about=(
        "Every variant is one value of the reloption `sketch_buckets`, on the same data in the "
        "same run. Accuracy: abtree indexes WITH (sketch_buckets = m) on every column of "
        "lineitem (four indexes of four columns), on Zipf-skewed pairs (generator `zipf`), and "
        "on a column of d values after every row of half of them was deleted and VACUUM ran; "
        "the metric is the ratio error max(D/E, E/D) of `chll_estimate(abtree_sketch(index, "
        "k))` against `count(DISTINCT)`, one value per column (the harness's median is over "
        "the columns of a group; the summary table gives mean, p99 and max over all columns). "
        "Size: the pages of one sketch, as built (an empty table's index with the sketch "
        "minus one with `sketch = off`, in pages). Cost: `COPY` of `copy_rows` rows of "
        "generator `a` into an empty table with an abtree index on (x) and that bucket count, "
        "every row through the insert path, the bucket counts alternating in each of `reps` "
        "rounds; median time, its ratio to 512's, WAL bytes per row and backend CPU."),
    metric=Metric("ratio error", "x", lower_is_better=True),
    variants=[Variant(f"b{m}", f"`WITH (sketch_buckets = {m})`" + (" (the default)"
                                                                   if m == 512 else ""),
                      ours=(m == 512), needs=("abtree",)) for m in BUCKETS],
    baseline="b512",
    x="data",
    quick=dict(sf=0.1, zipf_rows=1_000_000, zipf=[(0.5, 10**4), (1.0, 10**4), (1.0, 10**6),
                                                  (2.0, 10**6)],
               half_ndv=[100, 1000, 2000, 100_000], half_rows=400_000,
               copy_rows=1_000_000, reps=5, seed=1),
    full=dict(sf=1.0, zipf_rows=5_000_000, zipf=[(0.5, 10**4), (1.0, 10**4), (1.5, 10**4),
                                                 (0.5, 10**6), (1.0, 10**6), (2.0, 10**6)],
              half_ndv=[100, 1000, 2000, 100_000], half_rows=2_000_000,
              copy_rows=5_000_000, reps=3, seed=1),
    settings={"shared_buffers": "4GB", "maintenance_work_mem": "1GB"},
)
def run(ctx, p):
    if not ctx.has("abtree"):
        ctx.findings.append("No abtree: nothing to compare.")
        return
    buckets = [int(v.name[1:]) for v in ctx.variants]
    errs = {m: [] for m in buckets}         # every column's ratio error, per bucket count
    small = {m: [] for m in buckets}        # ... of columns with at most 1,000 values

    def measure(group, table, cols, make_index):
        exact = {c: ctx.sql(f"SELECT count(DISTINCT {c}) FROM {table}")[0][0] for c in cols}
        for m in buckets:
            index_of = make_index(m)
            e = []
            for c in cols:
                idx, k = index_of[c]
                est = float(ctx.sql(f"SELECT chll_estimate(abtree_sketch('{idx}', {k}))")[0][0])
                e.append(ratio_error(exact[c], est))
                if exact[c] <= 1000:
                    small[m].append(e[-1])
            errs[m].extend(e)
            ctx.record(f"b{m}", {"data": group}, Stats(e))
            for idx in dict.fromkeys(i for i, _ in index_of.values()):
                ctx.sql(f"DROP INDEX {idx}")
        ctx.progress(f"{group}: " + ", ".join(
            f"{m} x{fmt(statistics.mean(errs[m][-len(cols):]))}" for m in buckets))

    # lineitem, every column
    ctx.load("lineitem", sf=p["sf"], seed=p["seed"])

    def lineitem_indexes(m):
        index_of = {}
        for i in range(0, len(LINEITEM_COLS), 4):
            cols = LINEITEM_COLS[i:i + 4]
            ctx.sql(f"CREATE INDEX li_{i // 4} ON lineitem USING abtree ({', '.join(cols)}) "
                    f"WITH (sketch_buckets = {m})")
            index_of.update({c: (f"li_{i // 4}", k + 1) for k, c in enumerate(cols)})
        return index_of
    measure(f"lineitem sf {p['sf']:g}", "lineitem", LINEITEM_COLS, lineitem_indexes)
    ctx.sql("DROP TABLE lineitem")

    # Zipf-skewed pairs
    for s, ndv in p["zipf"]:
        ctx.load("zipf", rows=p["zipf_rows"], s=s, ndv=ndv, seed=p["seed"])

        def zipf_index(m):
            ctx.sql(f"CREATE INDEX zipf_ab ON zipf USING abtree (a, b) "
                    f"WITH (sketch_buckets = {m})")
            return {"a": ("zipf_ab", 1), "b": ("zipf_ab", 2)}
        measure(f"zipf s={s:g} ndv={ndv:.0e}", "zipf", ["a", "b"], zipf_index)
    ctx.sql("DROP TABLE zipf")

    # every row of half of the values deleted, then VACUUM
    for ndv in p["half_ndv"]:
        def half_index(m):
            ctx.sql(["DROP TABLE IF EXISTS half", "CREATE TABLE half (a int4)",
                     f"CREATE INDEX half_a ON half USING abtree (a) WITH (sketch_buckets = {m})",
                     f"INSERT INTO half SELECT g % {ndv} FROM generate_series(1, "
                     f"{p['half_rows']}) g",
                     "DELETE FROM half WHERE a % 2 = 0", "VACUUM (INDEX_CLEANUP ON) half"])
            return {"a": ("half_a", 1)}
        ctx.sql(["DROP TABLE IF EXISTS half", "CREATE TABLE half (a int4)",
                 f"INSERT INTO half SELECT g % {ndv} FROM generate_series(1, {p['half_rows']}) g "
                 "WHERE g % " + str(ndv) + " % 2 = 1"])
        measure(f"half of {ndv:,} values deleted", "half", ["a"], half_index)
    ctx.sql("DROP TABLE IF EXISTS half")

    # size: pages of one sketch, as built
    pages = {}
    ctx.sql(["DROP TABLE IF EXISTS e", "CREATE TABLE e (x int4)",
             "CREATE INDEX e_off ON e USING abtree (x) WITH (sketch = off)"])
    off = ctx.sql("SELECT pg_relation_size('e_off')")[0][0]
    for m in buckets:
        ctx.sql(f"CREATE INDEX e_{m} ON e USING abtree (x) WITH (sketch_buckets = {m})")
        pages[m] = (ctx.sql(f"SELECT pg_relation_size('e_{m}')")[0][0] - off) // 8192
        if pages[m] != sketch_pages(m):
            ctx.findings.append(f"{m} buckets: {pages[m]} sketch pages built, the layout says "
                                f"{sketch_pages(m)}.")
    ctx.sql("DROP TABLE e")

    # cost: COPY through the insert path, bucket counts alternating
    ctx.load("a", rows=p["copy_rows"], seed=p["seed"])
    path = os.path.join(ctx.cluster.dir, "a.copy")
    ctx.sql([f"COPY a TO '{path}'", "DROP TABLE a"])
    secs = {m: [] for m in buckets}
    wal = {m: [] for m in buckets}
    cpu = {m: [] for m in buckets}
    for rep in range(p["reps"]):
        for m in (buckets if rep % 2 == 0 else buckets[::-1]):
            ctx.sql(["DROP TABLE IF EXISTS t", "CREATE TABLE t (x int4, y int4)",
                     f"CREATE INDEX t_idx ON t USING abtree (x) WITH (sketch_buckets = {m})",
                     "CHECKPOINT"])
            lsn0, pid = ctx.sql("SELECT pg_current_wal_lsn(), pg_backend_pid()")[0]
            cpu0 = backend_cpu(pid)
            t0 = time.perf_counter()
            ctx.sql(f"COPY t FROM '{path}'")
            secs[m].append(time.perf_counter() - t0)
            cpu[m].append(backend_cpu(pid) - cpu0)
            wal[m].append(float(ctx.sql(
                f"SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '{lsn0}')")[0][0]) / p["copy_rows"])
        ctx.progress(f"COPY round {rep + 1}: " + ", ".join(
            f"{m} {fmt(secs[m][-1])} s" for m in buckets))
    ctx.sql("DROP TABLE IF EXISTS t")

    base = statistics.median(secs[512]) if 512 in secs else None
    L = ["Accuracy against size and cost, every bucket count on the same data in this run "
         "(ratio error over all columns; COPY medians):", "",
         "| buckets | columns | mean | p99 | max | max, <= 1,000 values | pages per sketch | "
         "kB per sketch | COPY s | vs 512 | backend CPU s | WAL B/row |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for m in buckets:
        e = errs[m]
        t = statistics.median(secs[m])
        L.append(f"| {m:,} | {len(e)} | {statistics.mean(e):.3f} | {percentile(e, 0.99):.3f} | "
                 f"{max(e):.3f} | {max(small[m]) if small[m] else float('nan'):.3f} | "
                 f"{pages[m]} | {pages[m] * 8} | {fmt(t)} | "
                 f"{fmt(t / base) if base else '-'} | {fmt(statistics.median(cpu[m]))} | "
                 f"{fmt(statistics.median(wal[m]))} |")
    ctx.sections.append("\n".join(L))
    for m in buckets:
        e = errs[m]
        ok = (statistics.mean(e) <= 1.02 and percentile(e, 0.99) <= 1.10 and max(e) <= 1.2
              and all(x == 1.0 for x in small[m]))
        if m == 512 or ok:
            ctx.findings.append(
                f"{m:,} buckets: mean {statistics.mean(e):.3f}, p99 {percentile(e, 0.99):.3f}, "
                f"max {max(e):.3f}, exact on {sum(x == 1.0 for x in small[m])} of "
                f"{len(small[m])} columns with at most 1,000 values; issue 24's targets "
                f"(1.02 / 1.10 / 1.2, exact): **{'met' if ok else 'not met'}**; "
                f"{pages[m]} pages per sketch, COPY "
                f"{fmt(statistics.median(secs[m]) / base) if base else '-'}x 512's time.")
