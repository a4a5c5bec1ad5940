"""Paper 002 Table 6.5 (issue 7): distinct combinations of two columns from a small swr sample
corrected by the columns' sketches (SCBC), against PostgreSQL's extended statistics."""

import re
import statistics

from harness import Metric, Stats, Variant, experiment
from harness.stats import fmt
from experiments.sketch_accuracy import plot_errors, ratio_error

# variant -> (method, sampling fraction of the rows)
METHODS = {"scbc_0.1%": ("scbc", 0.001), "scbc_1%": ("scbc", 0.01), "scgee_1%": ("scgee", 0.01),
           "bc_1%": ("bc", 0.01), "gee_1%": ("gee", 0.01)}
TIE = 1.01         # ratio errors within 1% of each other count as a tie
LINEITEM_PAIRS = [("l_orderkey", "l_partkey"), ("l_partkey", "l_suppkey"),
                  ("l_shipdate", "l_shipmode"), ("l_returnflag", "l_linestatus")]


def stored_ndistinct(ctx, table):
    txt = ctx.sql("SELECT n_distinct::text FROM pg_stats_ext "
                  f"WHERE statistics_name = '{table}_nd'")[0][0]
    return float(re.search(r":\s*([0-9.e+]+)", txt).group(1))


def sample_only(ctx, p, table, a, b, rows, key_index, est):
    """SCBC from the sample alone where an index's key sketch would answer: the key index is
    replaced by one index per column (the same column sketches, no key sketch)."""
    if "scbc_sample_1%" not in est:
        return
    if key_index:
        ctx.sql([f"DROP INDEX {key_index}",
                 f"CREATE INDEX {table}_sa ON {table} USING abtree ({a})",
                 f"CREATE INDEX {table}_sb ON {table} USING abtree ({b})"])
    n = max(100, round(0.01 * rows))
    for rep in range(p["reps"]):
        est["scbc_sample_1%"].append(float(ctx.sql(
            f"SELECT estimate FROM abtree_ndistinct('{table}', ARRAY['{a}', '{b}'], "
            f"{n}, 'scbc', {rep + 1})")[0][0]))
    if key_index:
        ctx.sql([f"DROP INDEX {table}_sa", f"DROP INDEX {table}_sb"])


def measure(ctx, p, data, table, a, b, rows, key_index=None):
    exact = ctx.sql(f"SELECT count(*) FROM (SELECT DISTINCT {a}, {b} FROM {table}) d")[0][0]
    ctx.sql(f"CREATE STATISTICS {table}_nd (ndistinct) ON {a}, {b} FROM {table}")
    est = {v.name: [] for v in ctx.variants}
    for rep in range(p["reps"]):
        if "extstats" in est:       # a new random sample every time
            ctx.sql(f"ANALYZE {table}")
            est["extstats"].append(stored_ndistinct(ctx, table))
        for name in est:
            if name in METHODS:
                method, frac = METHODS[name]
                n = max(100, round(frac * rows))
                est[name].append(float(ctx.sql(
                    f"SELECT estimate FROM abtree_ndistinct('{table}', ARRAY['{a}', '{b}'], "
                    f"{n}, '{method}', {rep + 1})")[0][0]))
    if "stored" in est:             # what GROUP BY plans read: last, it freezes the object
        for rep in range(p["reps"]):
            ctx.sql(f"SELECT abtree_ndistinct_store('{table}_nd', seed => {rep + 1})")
            est["stored"].append(stored_ndistinct(ctx, table))
    ctx.sql(f"DROP STATISTICS {table}_nd")
    sample_only(ctx, p, table, a, b, rows, key_index, est)
    point = {"data": data}
    for name, es in est.items():
        ctx.record(name, point, Stats([ratio_error(exact, e) for e in es]),
                   exact=exact, estimate=statistics.median(es))
    ctx.progress(f"{data}: D={exact:,} " + ", ".join(
        f"{n} x{fmt(statistics.median(ratio_error(exact, e) for e in es))}"
        for n, es in est.items()))


@experiment(
    name="ndistinct_multi",
    title="distinct pairs of values: sketch-corrected sampling estimators against extended "
          "statistics",
    figure="paper 002 Table 6.5",
    about=(
        "For a pair of columns (a, b), D is the exact `count(*)` of `SELECT DISTINCT a, b`. "
        "Baseline: PostgreSQL's `CREATE STATISTICS (ndistinct) ON a, b`, `ANALYZE` (default "
        "statistics target: a 30,000-row sample), the value from `pg_stats_ext.n_distinct`. "
        "Ours: `abtree_ndistinct(table, ARRAY[a, b], sample_rows, method, seed)`, which draws "
        "`sample_rows` rows with `TABLESAMPLE swr` (with replacement, uniform) and estimates "
        "from the sample's frequency vector; SCBC and SCGEE correct the estimate with each "
        "column's distinct count from the sketch its abtree index keeps (paper 002, 6.2-6.3); "
        "BC and GEE are the uncorrected estimators, for context. Sampling fractions 0.1% and 1% "
        "of the rows (at least 100 rows). Each repetition runs ANALYZE again and the sampling "
        "estimators with another seed. Metric: ratio error max(D/est, est/D). Data: pairs from "
        "generator `zipf` (a Zipf(s) over 1..ndv, b = a with probability corr, else an "
        "independent Zipf(s) draw), an abtree index on (a, b); and pairs of a TPC-H-like "
        "lineitem (generator `lineitem`) with abtree indexes on the columns; and the demo's orders "
        "(customer_id, status), 1,020,000 rows with demo/demo.sql's distributions. Issue 7's target: "
        "SCBC better than extended statistics on every data set. Since the key sketch (issue 24), "
        "an abtree index on exactly (a, b) (zipf, the demo) counts the pairs itself and "
        "`abtree_ndistinct(..., 'scbc')` returns that count (method `key_sketch`); "
        "`scbc_sample_1%` is SCBC from the sample alone on the same data, and `stored` what "
        "`abtree_ndistinct_store` leaves for the planner. Issue 24's target: the demo's pair and "
        "the Zipf pairs within 1.3x."),
    metric=Metric("ratio error", "x", lower_is_better=True),
    variants=[
        Variant("scbc_0.1%", "`abtree_ndistinct(..., method => 'scbc')`, a sample of 0.1% of "
                "the rows", ours=True, needs=("abtree", "abtree_ndistinct")),
        Variant("scbc_1%", "the same, 1% of the rows", ours=True,
                needs=("abtree", "abtree_ndistinct")),
        Variant("scgee_1%", "sketch-corrected GEE, 1%", needs=("abtree", "abtree_ndistinct")),
        Variant("bc_1%", "bound-corrected estimator without sketches, 1%",
                needs=("abtree", "abtree_ndistinct")),
        Variant("gee_1%", "Charikar et al.'s GEE without sketches, 1%",
                needs=("abtree", "abtree_ndistinct")),
        Variant("stored", "`abtree_ndistinct_store` (30,000 rows), then `pg_stats_ext.n_distinct`: "
                "what `GROUP BY a, b` plans read", ours=True,
                needs=("abtree", "abtree_ndistinct")),
        Variant("scbc_sample_1%", "SCBC from the 1% sample alone: where an index on (a, b) keeps a "
                "key sketch, that index replaced by one per column", needs=("abtree", "abtree_ndistinct")),
        Variant("extstats", "`CREATE STATISTICS (ndistinct)` + ANALYZE, `pg_stats_ext.n_distinct`"),
    ],
    baseline="extstats",
    x="data",
    quick=dict(rows=1_000_000, ndv=10**4, reps=5, seed=1, sf=0.1,
               zipf=[(0.0, 0.0), (1.0, 0.0), (1.0, 0.5), (1.0, 0.9), (1.0, 1.0), (1.5, 0.5),
                     (2.0, 0.0)], demo=True),
    full=dict(rows=5_000_000, ndv=10**5, reps=10, seed=1, sf=1.0,
              zipf=[(0.0, 0.0), (0.5, 0.0), (1.0, 0.0), (1.0, 0.5), (1.0, 0.9), (1.0, 1.0),
                    (1.5, 0.5), (2.0, 0.0)], demo=True),
    settings={"shared_buffers": "2GB", "maintenance_work_mem": "1GB", "work_mem": "256MB"},
    plot=plot_errors,
)
def run(ctx, p):
    for s, corr in p["zipf"]:
        ctx.load("zipf", rows=p["rows"], s=s, corr=corr, ndv=p["ndv"], seed=p["seed"])
        if ctx.has("abtree"):
            ctx.sql("CREATE INDEX zipf_ab ON zipf USING abtree (a, b)")
        measure(ctx, p, f"zipf s={s:g} corr={corr:g}", "zipf", "a", "b", p["rows"],
                key_index="zipf_ab")
    ctx.sql("DROP TABLE zipf")
    if p.get("sf"):
        ctx.load("lineitem", sf=p["sf"], seed=p["seed"])
        if ctx.has("abtree"):
            ctx.sql(["CREATE INDEX li_0 ON lineitem USING abtree "
                     "(l_orderkey, l_partkey, l_suppkey, l_shipdate)",
                     "CREATE INDEX li_1 ON lineitem USING abtree "
                     "(l_shipmode, l_returnflag, l_linestatus)"])
        rows = ctx.sql("SELECT count(*) FROM lineitem")[0][0]
        for a, b in LINEITEM_PAIRS:
            measure(ctx, p, f"lineitem ({a}, {b})", "lineitem", a, b, rows)

    if p.get("demo"):
        # the demo's orders (demo/demo.sql, sections 3 and 10): skewed customers, ten statuses,
        # then 20,000 orders of new customers; the pair (customer_id, status) is issue 24's
        ctx.sql(["SELECT setseed(0.42)",
                 "CREATE TABLE orders (customer_id int NOT NULL, status text NOT NULL)",
                 "INSERT INTO orders SELECT 1 + floor(50000 * power(random(), 2))::int, "
                 "(ARRAY['delivered', 'delivered', 'delivered', 'delivered', 'shipped', "
                 "'shipped', 'paid', 'cancelled', 'returned', 'new'])[1 + floor(random() * 10)::int] "
                 "FROM generate_series(1, 1000000)"])
        if ctx.has("abtree"):
            ctx.sql("CREATE INDEX orders_customer ON orders USING abtree (customer_id, status)")
        ctx.sql(["INSERT INTO orders SELECT 100000 + g, 'new' FROM generate_series(1, 20000) g",
                 "VACUUM ANALYZE orders"])
        measure(ctx, p, "demo orders (customer_id, status)", "orders", "customer_id", "status",
                1_020_000, key_index="orders_customer")
        ctx.sql("DROP TABLE orders")

    # summary: mean ratio error per method, and SCBC against the baseline on every data set
    names = [v.name for v in ctx.variants]
    data = list(dict.fromkeys(r.point["data"] for r in ctx.rows))
    med = {(r.variant, r.point["data"]): r.stats.median for r in ctx.rows}
    worse = {n: [d for d in data if med[(n, d)] > TIE * med[("extstats", d)]] for n in names}
    better = {n: [d for d in data if med[(n, d)] * TIE < med[("extstats", d)]] for n in names}
    L = ["Mean ratio error per method over the data sets (median over the repetitions per data "
         f"set first); better or worse than extstats by more than {100 * (TIE - 1):g}% (else a "
         "tie):", "", "| method | mean | max | better | worse |", "|---|---|---|---|---|"]
    for n in names:
        m = [med[(n, d)] for d in data]
        cnt = ("", "") if n == "extstats" else (len(better[n]), len(worse[n]))
        L.append(f"| `{n}` | {fmt(statistics.mean(m))} | {fmt(max(m))} | {cnt[0]} | {cnt[1]} |")
    ctx.sections.append("\n".join(L))
    for n in ("scbc_0.1%", "scbc_1%"):
        if n not in names:
            continue
        ext = {d: med[("extstats", d)] for d in data}
        lost = ", ".join(f"{d}: {fmt(med[(n, d)])} against {fmt(ext[d])}" for d in worse[n])
        verdict = ("met" if len(better[n]) == len(data) else
                   "not met" if worse[n] else "met where not tied")
        ctx.findings.append(
            f"`{n}`: mean ratio error **{fmt(statistics.mean(med[(n, d)] for d in data))}** "
            f"against extended statistics' **{fmt(statistics.mean(ext.values()))}**; better on "
            f"{len(better[n])} of {len(data)} data sets, worse on {len(worse[n])}"
            + (f" ({lost})" if lost else "") + ", tied on the rest; target better on every "
            f"data set: **{verdict}**.")
    target = [d for d in data if d.startswith("zipf") or d.startswith("demo")]
    for n in ("scbc_1%", "stored", "scbc_sample_1%"):
        if n in names and target:
            worst = max(target, key=lambda d: med[(n, d)])
            ctx.findings.append(
                f"`{n}` on the Zipf pairs and the demo's pair: ratio error at most "
                f"**{fmt(med[(n, worst)])}** ({worst}); issue 24's target within 1.3: "
                f"**{'met' if med[(n, worst)] <= 1.3 else 'not met'}**.")
    if "scbc_1%" not in names:
        ctx.findings.append("The sampling estimators were not measured (no abtree_ndistinct in "
                            "this build); only the baseline ran.")
