"""Paper 002 Tables 6.3-6.4 (issue 7): single-column distinct counts from the sketches abtree
indexes keep, against ANALYZE's n_distinct, on lineitem, Zipf-skewed columns, and a table
that had rows deleted and was vacuumed."""

import statistics

from harness import Metric, Stats, Variant, experiment
from harness import report
from harness.stats import fmt

LINEITEM_COLS = ["l_orderkey", "l_partkey", "l_suppkey", "l_linenumber", "l_quantity",
                 "l_extendedprice", "l_discount", "l_tax", "l_returnflag", "l_linestatus",
                 "l_shipdate", "l_commitdate", "l_receiptdate", "l_shipinstruct", "l_shipmode",
                 "l_comment"]


def ratio_error(d, est):
    if d == 0 or est is None or est <= 0:
        return float("inf") if d != est else 1.0
    return max(d / est, est / d)


def percentile(xs, q):
    """The q-quantile by linear interpolation (numpy's default)."""
    xs = sorted(xs)
    h = (len(xs) - 1) * q
    lo = int(h)
    return xs[lo] + (h - lo) * (xs[min(lo + 1, len(xs) - 1)] - xs[lo])


GROUP = {}     # data set -> its group in the summary table


def ertl_registers(m, registers, q=31):
    """Ertl's improved estimator (arXiv:1702.01284) over HLL registers: what
    chll_estimate_counters computed before issue 24 gave it a likelihood over the slots below
    the registers too (src/hll/README, "Estimator and error"); kept here as that variant."""
    hist = [0] * (q + 2)
    for r in registers:
        hist[r] += 1
    hist[0] += m - len(registers)
    if hist[0] == m:
        return 0.0

    def sigma(x):
        if x >= 1.0:
            return float("inf")
        y, z = 1.0, x
        while True:
            x *= x
            prev, z = z, z + x * y
            y += y
            if z == prev:
                return z

    def tau(x):
        if x <= 0.0 or x >= 1.0:
            return 0.0
        y, z = 1.0, 1.0 - x
        while True:
            x = x ** 0.5
            prev = z
            y *= 0.5
            z -= (1.0 - x) ** 2 * y
            if z == prev:
                return z / 3.0

    denom = m * tau(1.0 - hist[q + 1] / m)
    for k in range(q, 0, -1):
        denom = 0.5 * (denom + hist[k])
    denom += m * sigma(hist[0] / m)
    return m * m / (2.0 * 0.69314718055994530942) / denom


def measure(ctx, p, group, data, table, cols, index_of):
    """Record the sketch's and ANALYZE's ratio error for each column of table; index_of maps a
    column to (index name, key column number)."""
    GROUP[data] = group
    exact = {c: ctx.sql(f"SELECT count(DISTINCT {c}) FROM {table}")[0][0] for c in cols}
    sketch = {}
    counters = {}
    registers = {}
    for c in cols:
        idx, k = index_of[c]
        sketch[c], counters[c], m = map(float, ctx.sql(
            f"SELECT chll_estimate(s), chll_estimate_counters(s), (chll_info(s)).buckets "
            f"FROM abtree_sketch('{idx}', {k}) s")[0])
        registers[c] = ertl_registers(int(m), [r for (r,) in ctx.sql(
            f"SELECT max(zeros) + 1 FROM chll_counters(abtree_sketch('{idx}', {k})) "
            "WHERE raw > 0 GROUP BY bucket")])
    analyze = {c: [] for c in cols}
    for _ in range(p["reps"]):      # ANALYZE draws a new random sample every time
        ctx.sql(f"ANALYZE {table}")
        got = dict(ctx.sql(
            "SELECT attname, CASE WHEN n_distinct < 0 THEN -n_distinct * c.reltuples "
            "ELSE n_distinct END FROM pg_stats s JOIN pg_class c ON c.relname = s.tablename "
            f"WHERE s.tablename = '{table}' AND s.schemaname = 'public'"))
        for c in cols:
            analyze[c].append(float(got[c]))
    for c in cols:
        point = {"data": data, "column": c}
        ctx.record("sketch", point, Stats([ratio_error(exact[c], sketch[c])] * p["reps"]),
                   **{"exact": exact[c], "estimate": sketch[c]})
        ctx.record("counters", point, Stats([ratio_error(exact[c], counters[c])] * p["reps"]),
                   **{"exact": exact[c], "estimate": counters[c]})
        ctx.record("registers", point, Stats([ratio_error(exact[c], registers[c])] * p["reps"]),
                   **{"exact": exact[c], "estimate": registers[c]})
        ctx.record("analyze", point, Stats([ratio_error(exact[c], e) for e in analyze[c]]),
                   **{"exact": exact[c], "estimate": statistics.median(analyze[c])})
    ctx.progress(f"{data}: " + ", ".join(
        f"{c} D={exact[c]} sketch x{fmt(ratio_error(exact[c], sketch[c]))} analyze "
        f"x{fmt(ratio_error(exact[c], statistics.median(analyze[c])))}" for c in cols))


def plot_errors(exp, ctx, path):
    """Ratio error per point (categories on the x axis), one marker per variant, log scale."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pts = list(dict.fromkeys(tuple(r.point.values()) for r in ctx.rows))
    fig, ax = plt.subplots(figsize=(max(8, 0.22 * len(pts) + 2), 5.5))
    for i, v in enumerate(exp.variants):
        rows = {tuple(r.point.values()): r for r in ctx.rows if r.variant == v.name}
        xs = [j for j, pt in enumerate(pts) if pt in rows]
        st = [rows[pts[j]].stats for j in xs]
        ax.errorbar([x + 0.08 * (i - len(exp.variants) / 2) for x in xs],
                    [s.median for s in st], fmt="o" if v.ours else "s", color=f"C{i}",
                    markersize=4, capsize=2,
                    yerr=[[s.median - s.min for s in st], [s.max - s.median for s in st]],
                    label=f"{v.name} ({'ours' if v.ours else 'baseline' if v.name == exp.baseline else 'context'})")
    ax.axhline(1.05, color="grey", linestyle=":", linewidth=1)
    ax.axhline(1.2, color="grey", linestyle="--", linewidth=1)
    ax.set_yscale("log")
    ax.set_xticks(range(len(pts)))
    ax.set_xticklabels([": ".join(map(str, pt)) for pt in pts], rotation=90,
                       fontsize=6 if len(pts) > 20 else 8)
    ax.set_ylabel("ratio error max(D/est, est/D), log; median, bars min-max")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    report.finish_figure(fig, exp, ctx, path)


@experiment(
    name="sketch_accuracy",
    title="distinct values per column: the index's sketch against ANALYZE",
    figure="paper 002 Tables 6.3-6.4",
    about=(
        "For each column, D is the exact `count(DISTINCT col)`; the sketch's estimate is "
        "`chll_estimate(abtree_sketch(index, k))` of an abtree index with the column as key "
        "column k (a counting HyperLogLog sketch, 512 buckets, kept by inserts and VACUUM); "
        "ANALYZE's is `pg_stats.n_distinct` at the default statistics target (100: a 30,000-row "
        "sample), a negative value taken as that fraction of `pg_class.reltuples`. The metric "
        "is the ratio error max(D/est, est/D) (1 is exact). ANALYZE runs `reps` times (a new "
        "random sample each time: the spread); the sketch is deterministic. Data: a TPC-H-like "
        "lineitem (generator `lineitem`; l_orderkey has 1-7 rows per order), every column, "
        "sketched by four abtree indexes of four key columns each, built after the load; "
        "Zipf-skewed pairs (generator `zipf`, independent columns a and b over 1..ndv, several "
        "exponents s), an abtree index on (a, b); and a table with deletes (Table 6.3's "
        "workload): `del r=...` tables start empty with an abtree index on (a, b), then each "
        "round inserts `round_rows` rows (a uniform over 1..`del_ndv`, b = floor(`del_ndv` * "
        "u^4), skewed to small values), deletes a fraction r of the rows just inserted, and "
        "runs `VACUUM (INDEX_CLEANUP ON)` (which removes the dead entries, and with them their "
        "hashes from the sketch); measured after every round; and `half of d values deleted`: "
        "`half_rows` rows over d values, every row of the even values deleted, then VACUUM. "
        "Issue 24's targets for the sketch: mean ratio error at most 1.02, p99 at most 1.10 and "
        "max at most 1.2 over all columns, exact on columns with at most 1,000 distinct values."),
    metric=Metric("ratio error", "x", lower_is_better=True),
    variants=[
        Variant("sketch", "`chll_estimate(abtree_sketch(index, k))`: the sketch the abtree "
                "index keeps of the column, as the planner reads it with "
                "`abtree.sketch_ndistinct` on", ours=True, needs=("abtree",)),
        Variant("counters", "`chll_estimate_counters(abtree_sketch(index, k))`: the same "
                "sketch's HyperLogLog counters alone, without the exact list of small sets "
                "(since issue 24 their maximum-likelihood estimate, which also reads the slots "
                "just below each register)", needs=("abtree",)),
        Variant("registers", "Ertl's improved estimator over the same sketch's registers alone "
                "(computed here from `chll_counters`): what `chll_estimate` returned before "
                "issue 24, and `chll_estimate_counters` before its likelihood estimator",
                needs=("abtree",)),
        Variant("analyze", "ANALYZE's `n_distinct` in pg_stats, default statistics target"),
    ],
    baseline="analyze",
    x="column",
    quick=dict(sf=0.1, zipf_rows=1_000_000, zipf=[(0.5, 10**4), (1.0, 10**4), (1.5, 10**4),
                                                  (1.0, 10**6), (2.0, 10**6)],
               round_rows=200_000, rounds=4, del_fractions=[0.25, 0.5, 0.75], del_ndv=10**6,
               half_ndv=[2, 100, 1000, 2000, 100_000], half_rows=400_000, reps=5, seed=1),
    full=dict(sf=1.0, zipf_rows=5_000_000, zipf=[(0.5, 10**4), (1.0, 10**4), (1.5, 10**4),
                                                 (0.5, 10**6), (1.0, 10**6), (2.0, 10**6)],
              round_rows=1_000_000, rounds=4, del_fractions=[0.25, 0.5, 0.75], del_ndv=10**7,
              half_ndv=[2, 100, 1000, 2000, 100_000], half_rows=2_000_000, reps=5, seed=1),
    settings={"shared_buffers": "2GB", "maintenance_work_mem": "1GB"},
    plot=plot_errors,
)
def run(ctx, p):
    if not ctx.has("abtree"):
        ctx.findings.append("No abtree: nothing to compare.")
        return
    # lineitem, every column
    ctx.load("lineitem", sf=p["sf"], seed=p["seed"])
    index_of = {}
    for i in range(0, len(LINEITEM_COLS), 4):
        cols = LINEITEM_COLS[i:i + 4]
        ctx.sql(f"CREATE INDEX li_{i // 4} ON lineitem USING abtree ({', '.join(cols)})")
        index_of.update({c: (f"li_{i // 4}", k + 1) for k, c in enumerate(cols)})
    measure(ctx, p, "lineitem", f"lineitem sf {p['sf']:g}", "lineitem", LINEITEM_COLS, index_of)
    ctx.sql("DROP TABLE lineitem")

    # Zipf-skewed columns
    for s, ndv in p["zipf"]:
        ctx.load("zipf", rows=p["zipf_rows"], s=s, ndv=ndv, seed=p["seed"])
        ctx.sql("CREATE INDEX zipf_ab ON zipf USING abtree (a, b)")
        measure(ctx, p, "zipf", f"zipf s={s:g} ndv={ndv:.0e}", "zipf", ["a", "b"],
                {"a": ("zipf_ab", 1), "b": ("zipf_ab", 2)})
    ctx.sql("DROP TABLE zipf")

    # inserts, deletes of a fraction of them, VACUUM; repeated
    for r in p["del_fractions"]:
        ctx.sql(["DROP TABLE IF EXISTS del", "CREATE TABLE del (id int8, a int4, b int4)",
                 "CREATE INDEX del_ab ON del USING abtree (a, b)",
                 f"SELECT setseed({0.1 * p['seed']})"])
        n = p["round_rows"]
        for rnd in range(1, p["rounds"] + 1):
            ndv = p["del_ndv"]
            ctx.sql([f"INSERT INTO del SELECT g, 1 + floor(random() * {ndv})::int4, "
                     f"floor({ndv} * power(random(), 4))::int4 "
                     f"FROM generate_series({(rnd - 1) * n + 1}, {rnd * n}) g",
                     f"DELETE FROM del WHERE id > {(rnd - 1) * n} AND random() < {r}",
                     "VACUUM (INDEX_CLEANUP ON) del"])
            measure(ctx, p, "deletes + VACUUM", f"del r={r:g} round {rnd}", "del", ["a", "b"],
                    {"a": ("del_ab", 1), "b": ("del_ab", 2)})
    ctx.sql("DROP TABLE del")

    # every row of half of the values deleted, then VACUUM (issue 24's target)
    for ndv in p["half_ndv"]:
        ctx.sql(["DROP TABLE IF EXISTS half", "CREATE TABLE half (a int4)",
                 "CREATE INDEX half_a ON half USING abtree (a)",
                 f"INSERT INTO half SELECT g % {ndv} FROM generate_series(1, {p['half_rows']}) g",
                 "DELETE FROM half WHERE a % 2 = 0", "VACUUM (INDEX_CLEANUP ON) half"])
        measure(ctx, p, "half the values deleted + VACUUM", f"half of {ndv:,} values deleted",
                "half", ["a"], {"a": ("half_a", 1)})
    ctx.sql("DROP TABLE half")

    # summary
    for v in ("sketch", "counters", "registers", "analyze"):
        errs = [x for r in ctx.rows if r.variant == v for x in r.stats.values]
        meds = [r.stats.median for r in ctx.rows if r.variant == v]
        verdict = ""
        if v == "sketch":
            ok = (statistics.mean(meds) <= 1.02 and percentile(meds, 0.99) <= 1.10
                  and max(meds) <= 1.2)
            verdict = (f"; issue 24's targets mean <= 1.02, p99 <= 1.10, max <= 1.2: "
                       f"**{'met' if ok else 'not met'}**")
        ctx.findings.append(
            f"`{v}` over all {len(meds)} columns: mean ratio error **{fmt(statistics.mean(meds))}**, "
            f"p99 **{fmt(percentile(meds, 0.99))}**, max {fmt(max(meds))}"
            + (f" (over all {len(errs)} ANALYZE runs: mean {fmt(statistics.mean(errs))}, p99 "
               f"{fmt(percentile(errs, 0.99))})" if v == "analyze" else "") + verdict + ".")
    small = [r for r in ctx.rows if r.variant in ("sketch", "counters", "registers")
             and r.extra["exact"] <= 1000]
    for v in ("sketch", "counters", "registers"):
        xs = [r.stats.median for r in small if r.variant == v]
        if xs:
            ctx.findings.append(
                f"`{v}` on the {len(xs)} columns with at most 1,000 distinct values: max ratio "
                f"error **{fmt(max(xs))}**, exact on {sum(x == 1.0 for x in xs)}"
                + ("; issue 24's target (exact): **"
                   + ("met" if all(x == 1.0 for x in xs) else "not met") + "**"
                   if v == "sketch" else "") + ".")
    L = ["Mean (max) ratio error per group of data sets:", "",
         "| data | columns | sketch | counters | registers | analyze |",
         "|---|---|---|---|---|---|"]
    for g in dict.fromkeys(GROUP.values()):
        m = {v: [r.stats.median for r in ctx.rows
                 if r.variant == v and GROUP[r.point["data"]] == g]
             for v in ("sketch", "counters", "registers", "analyze")}
        L.append(f"| {g} | {len(m['sketch'])} | "
                 + " | ".join(f"{fmt(statistics.mean(x))} ({fmt(max(x))})" for x in m.values())
                 + " |")
    ctx.sections.append("\n".join(L))
    bad = [r for r in ctx.rows if r.variant == "sketch" and r.stats.median > 1.2]
    ctx.findings.append(
        "Size: an index keeps 6 pages per sketched column (head, 3 bucket chunks, 2 pages of the "
        "exact list), 4 before issue 24; a sketch value is 38,592 bytes, 22,552 before.")
    if bad:
        ctx.findings.append(
            "Sketch errors above 1.2: " + "; ".join(
                f"{r.point['data']} {r.point['column']} (D = {r.extra['exact']:,}, estimate "
                f"{fmt(r.extra['estimate'])})" for r in bad)
            + ". The hash has a fixed seed, so a sketch's error is a function of the set of "
            "values alone: `chll_agg` over the same values gives the same estimate.")
    lo = [r for r in ctx.rows if r.point["column"] == "l_orderkey"]
    if lo:
        by = {r.variant: r for r in lo}
        ctx.findings.append(
            f"l_orderkey (D = {by['sketch'].extra['exact']:,}): sketch "
            f"{by['sketch'].extra['estimate']:,.0f} (x{fmt(by['sketch'].stats.median)}), "
            f"ANALYZE {by['analyze'].extra['estimate']:,.0f} (x{fmt(by['analyze'].stats.median)} "
            f"too {'low' if by['analyze'].extra['estimate'] < by['sketch'].extra['exact'] else 'high'}"
            "; the thesis reports 3.8x too low at SF 1).")
