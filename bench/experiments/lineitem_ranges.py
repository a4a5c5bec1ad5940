"""Paper 000 Fig. 16: AVG(l_extendedprice) over one-year ship-date ranges of a lineitem table
from swr(n) samples, against the exact answer, while a client inserts rows with recent ship
dates; the error and the coverage of the confidence intervals, checked in the sample's own
snapshot."""

import datetime
import math
import os
import random
import statistics
import subprocess
import time

from harness import Metric, Stats, Variant, experiment
from harness import report
from harness.context import PGBENCH_DIR
from harness.stats import fmt

Z = 1.959964
LAST = datetime.date(1998, 12, 1)
P_IDLE = "no inserts"
P_INS = "under inserts"
SWR = ("SELECT avg(l_extendedprice)::float8, stddev_samp(l_extendedprice)::float8, count(*) "
       "FROM lineitem TABLESAMPLE swr({n}) REPEATABLE ({seed}) "
       "WHERE l_shipdate >= '{lo}' AND l_shipdate < '{hi}'")
EXACT = ("SELECT avg(l_extendedprice)::float8, count(*) FROM lineitem "
         "WHERE l_shipdate >= '{lo}' AND l_shipdate < '{hi}'")


def one_year(lo):
    try:
        return lo.replace(year=lo.year + 1)
    except ValueError:              # 29 February
        return lo.replace(year=lo.year + 1, month=3, day=1)


def ranges(count, seed):
    """As bench/pgbench/sample_lineitem_swr.sql: 90% of the ranges start 1-2 years before the
    last ship date (so they cover part of the recent half year the inserts go to), 10% start
    anywhere from 1 to 6.9 years before it."""
    rnd = random.Random(seed)
    out = []
    for _ in range(count):
        ago = rnd.randint(365, 730) if rnd.random() < 0.9 else rnd.randint(365, 2525)
        lo = LAST - datetime.timedelta(days=ago)
        out.append((lo, one_year(lo)))
    return out


def plot_ranges(exp, ctx, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = getattr(ctx, "range_runs", {})
    fig, (lat_ax, ci_ax) = plt.subplots(1, 2, figsize=(12, 4.4),
                                        gridspec_kw={"width_ratios": [1, 2]})
    phases = list(runs)
    data, labels, colors = [], [], []
    for i, ph in enumerate(phases):
        for v, c in (("swr", "C0"), ("exact", "C1")):
            data.append([r[v + "_ms"] for r in runs[ph]])
            labels.append(f"{v}\n{ph}")
            colors.append(c)
    if data:
        bp = lat_ax.boxplot(data, labels=labels, showfliers=False, patch_artist=True)
        for patch, c in zip(bp["boxes"], colors):
            patch.set_facecolor(c)
            patch.set_alpha(0.5)
    lat_ax.set_ylabel("latency (ms, log), box: quartiles, whiskers 1.5 IQR")
    lat_ax.set_yscale("log")
    lat_ax.tick_params(axis="x", labelsize=8)
    lat_ax.set_title("query latency", fontsize=10)
    lat_ax.grid(True, axis="y", alpha=0.3)
    ph = P_INS if P_INS in runs else (phases[0] if phases else None)
    if ph:
        pts = runs[ph][:100]
        for j, r in enumerate(pts):
            err = 100 * (r["mean"] - r["exact"]) / r["exact"]
            half = 100 * r["half"] / r["exact"]
            ci_ax.errorbar([j], [err], yerr=[[half], [half]], fmt="o", markersize=3, capsize=2,
                           color="C0" if r["covered"] else "C3")
        ci_ax.axhline(0, color="grey", linewidth=1)
        ci_ax.set_xlabel(f"run (the first {len(pts)} of the phase {ph!r})")
        ci_ax.set_ylabel("(sample mean - exact) / exact, %, with the 95% interval")
        ci_ax.set_title("95% confidence intervals against the exact answer in the same "
                        "snapshot (red: misses)", fontsize=10)
        ci_ax.grid(True, alpha=0.3)
    report.finish_figure(fig, exp, ctx, path)


@experiment(
    name="lineitem_ranges",
    title="AVG(l_extendedprice) over one-year ship-date ranges from swr samples, under "
          "skewed inserts",
    figure="paper 000 Fig. 16",
    about=(
        "lineitem from `harness/datagen.py` (TPC-H-like, about 6M x sf rows), an abtree index "
        "and a btree index on l_shipdate, VACUUM ANALYZE, prewarmed. Each run picks a one-year "
        "ship-date range [lo, lo + 1 year) as `bench/pgbench/sample_lineitem_swr.sql` does (90% "
        "start 1-2 years before the last ship date, 1998-12-01, so they cover part of the half "
        "year the inserts go to; 10% anywhere) and, in one `BEGIN ISOLATION LEVEL REPEATABLE "
        "READ` transaction, runs the sample query `SELECT avg(l_extendedprice), "
        "stddev_samp(l_extendedprice), count(*) FROM lineitem TABLESAMPLE swr(n) REPEATABLE "
        "(run) WHERE l_shipdate >= lo AND l_shipdate < hi` (swr draws only inside the key "
        "range, so it returns n rows of the range) and the exact query, the same without "
        "TABLESAMPLE, by whatever plan the planner picks (the plans are in the notes); which of "
        "the two runs first alternates. Latency is measured in the client around each query; "
        "the ratio is exact / swr. The interval mean +- 1.959964 sd / sqrt(n) covers the exact "
        "answer in 95% of runs if the draws are independent and uniform over the range's rows "
        "(n = 10,000 makes the normal approximation close). **Under inserts**: one pgbench "
        "client runs `bench/pgbench/insert_lineitem_recent.sql` (one row per transaction, 99% of "
        "ship dates in the last 183 days) for the whole phase, so most ranges grow while they "
        "are measured. **Why the same snapshot**: the interval estimates the average over the "
        "rows the sample could be drawn from, i.e. those visible to the sample's snapshot; an "
        "exact answer from another snapshot averages other rows (more of them, and the recent "
        "ones added since), so its distance from the sample mean would mix sampling error "
        "with the table's change, and the coverage would measure the inserter's speed rather "
        "than swr. In one REPEATABLE READ transaction both queries see the same rows, and the "
        "check is exact; it also tests that swr samples from its snapshot only (rows inserted "
        "after it must neither be drawn nor skew the weights). **No inserts**: the same "
        "without the inserter, before it, on the loaded table."),
    metric=Metric("latency", "ms", lower_is_better=True),
    variants=[
        Variant("swr", "`TABLESAMPLE swr(n) REPEATABLE (run) WHERE <range>`: n draws inside the "
                "range through the abtree index on l_shipdate", ours=True,
                needs=("abtree", "swr")),
        Variant("exact", "the same aggregate over every row of the range, by the planner's "
                "choice of plan (btree index on l_shipdate, bitmap or sequential scan)"),
    ],
    baseline="exact",
    x="phase",
    plot=plot_ranges,
    quick=dict(sf=0.1, n=10000, runs=400, inserters=1, seed=1),
    full=dict(sf=1.0, n=10000, runs=400, inserters=1, seed=1),
    settings={"shared_buffers": "2GB", "abtree.mvstore_size": "256MB"},
)
def run(ctx, p):
    if not ctx.has("swr"):
        ctx.notes.append("Nothing measured: needs TABLESAMPLE swr.")
        return
    ctx.load("lineitem", sf=p["sf"], seed=p["seed"])
    t = time.monotonic()
    ctx.sql(["CREATE INDEX lineitem_shipdate_abtree ON lineitem USING abtree (l_shipdate)",
             "CREATE INDEX lineitem_shipdate_btree ON lineitem (l_shipdate)",
             "CREATE SEQUENCE lineitem_new_orderkey START 1000000000",
             "VACUUM ANALYZE lineitem", "CHECKPOINT"])
    ctx.progress(f"indexes built in {time.monotonic() - t:.1f} s")
    rels = ["lineitem", "lineitem_shipdate_abtree", "lineitem_shipdate_btree"]
    if ctx.has("pg_prewarm"):
        ctx.sql([f"SELECT pg_prewarm('{r}')" for r in rels])
    rows = ctx.sql("SELECT count(*) FROM lineitem")[0][0]
    sizes = ", ".join(f"{r} " + ctx.sql(f"SELECT pg_size_pretty(pg_relation_size('{r}'))")[0][0]
                      for r in rels)
    ctx.notes.append(f"lineitem loaded: {rows:,} rows; {sizes}"
                     + ("; prewarmed." if ctx.has("pg_prewarm") else "; not prewarmed."))
    rs = ranges(p["runs"], p["seed"])
    lo, hi = rs[0]
    cur = ctx.connect().cursor()
    for name, q in (("swr", SWR), ("exact", EXACT)):
        cur.execute("EXPLAIN (COSTS OFF) " + q.format(n=p["n"], seed=1, lo=lo, hi=hi))
        ctx.notes.append(f"`{name}`'s plan (first range, {lo} .. {hi}): "
                         + " / ".join(r[0].strip() for r in cur.fetchall()) + ".")

    q = f"SELECT count(*) FROM lineitem TABLESAMPLE swr({p['n']})"
    whole = []
    for _ in range(7):
        t = time.perf_counter()
        cur.execute(q)
        cur.fetchone()
        whole.append(1000 * (time.perf_counter() - t))
    ctx.notes.append(f"For scale: `{q}` (no WHERE, the whole table) took {fmt(statistics.median(whole[2:]))} "
                     "ms (median of 5, before the phases).")
    ctx.range_runs = {}
    phases = {}
    ctx.wait_quiet()
    phases[P_IDLE] = measure(ctx, p, rs, seed0=0)
    ctx.wait_quiet()
    phases[P_INS] = measure(ctx, p, rs, seed0=p["runs"], inserters=p["inserters"])
    ctx.range_runs = {ph: r["runs"] for ph, r in phases.items()}

    L = ["## Accuracy and coverage", "",
         "| phase | runs | exact / swr (medians) | rows in range, median | rel. error median | "
         "rel. error p95 | rel. error max | CI half-width, median | coverage | 95% interval of "
         "the coverage | rows inserted | inserts/s |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for ph, r in phases.items():
        R = r["runs"]
        k = len(R)
        sw = statistics.median(x["swr_ms"] for x in R)
        ex = statistics.median(x["exact_ms"] for x in R)
        errs = sorted(abs(x["mean"] - x["exact"]) / x["exact"] for x in R)
        cov = sum(x["covered"] for x in R) / k
        lo_c, hi_c = wilson(cov, k)
        halfw = statistics.median(x["half"] / x["exact"] for x in R)
        ins = r["inserted"]
        L.append(f"| {ph} | {k} | x{ex / sw:.2f} | "
                 f"{statistics.median(x['range_rows'] for x in R):,.0f} | "
                 f"{100 * statistics.median(errs):.3f}% | "
                 f"{100 * errs[min(k - 1, int(0.95 * k))]:.3f}% | {100 * errs[-1]:.3f}% | "
                 f"{100 * halfw:.3f}% | **{100 * cov:.1f}%** | {100 * lo_c:.1f}-{100 * hi_c:.1f}% "
                 f"| {ins:,} | {fmt(r['ins_rate']) if ins else '-'} |")
        ctx.record("swr", {"phase": ph}, Stats([x["swr_ms"] for x in R]),
                   **{"rel. error % (median)": 100 * statistics.median(errs),
                      "coverage %": 100 * cov, "rows": statistics.median(x["count"] for x in R)})
        ctx.record("exact", {"phase": ph}, Stats([x["exact_ms"] for x in R]),
                   rows=statistics.median(x["range_rows"] for x in R))
        target = 0.93 <= cov <= 0.97
        ctx.findings.append(
            f"{ph}: exact / swr latency x{ex / sw:.2f}; relative error median "
            f"{100 * statistics.median(errs):.2f}% (p95 {100 * errs[int(0.95 * (k - 1))]:.2f}%); "
            f"coverage of the 95% intervals {100 * cov:.1f}% over {k} runs (target 95% +- 2%: "
            + ("**met**" if target else "**not met**") + ")"
            + (f"; {ins:,} rows inserted during the phase ({fmt(r['ins_rate'])}/s)." if ins
               else "."))
        short = [x for x in R if x["count"] != p["n"]]
        if short:
            ctx.findings.append(f"**{ph}: {len(short)} samples returned other than n = "
                                f"{p['n']:,} rows.**")
    L += ["", "| phase | draws | rows returned | draws per row | rejected by the index | "
          "rejected invisible | rejected by the filter |", "|---|---|---|---|---|---|---|"]
    for ph, r in phases.items():
        c = r["counts"]
        d = max(1, c["draws"])
        L.append(f"| {ph} | {c['draws']:,} | {c['rows']:,} | {c['draws'] / max(1, c['rows']):.2f} | "
                 f"{100 * c['by_index'] / d:.1f}% | {100 * c['invisible'] / d:.2f}% | "
                 f"{100 * c['by_filter'] / d:.2f}% |")
    L += ["", "Relative error = |sample mean - exact| / exact; the CI half-width is 1.959964 sd "
          "/ sqrt(n) relative to the exact answer; the coverage's own 95% interval is Wilson's "
          "for that many runs. Exact answers from the sample's snapshot (one REPEATABLE READ "
          "transaction per run)."]
    ctx.sections.append("\n".join(L))


def wilson(p, k, z=Z):
    d = 1 + z * z / k
    c = (p + z * z / (2 * k)) / d
    h = z * math.sqrt(p * (1 - p) / k + z * z / (4 * k * k)) / d
    return c - h, c + h


def measure(ctx, p, rs, seed0, inserters=0):
    """One phase: every range once, sample and exact in one REPEATABLE READ transaction."""
    phase = P_INS if inserters else P_IDLE
    ctx.progress(f"phase {phase}: {len(rs)} runs")
    conn = ctx.cluster.connect(ctx.db)
    cur = conn.cursor()
    proc = None
    start_key = _seq(ctx)
    try:
        if inserters:
            cmd = [os.path.join(ctx.cluster.bindir, "pgbench"), "-n", "-M", "prepared",
                   "-c", str(inserters), "-j", str(inserters), "-T", "3600",
                   f"--random-seed={p['seed']}",
                   "-f", os.path.join(PGBENCH_DIR, "insert_lineitem_recent.sql"), ctx.db]
            proc = subprocess.Popen(cmd, env=ctx.cluster.client_env(), text=True,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            time.sleep(2)
            if proc.poll() is not None:
                raise RuntimeError("pgbench insert_lineitem_recent.sql failed: "
                                   + proc.stderr.read())
        k0, t0 = _seq(ctx), time.monotonic()
        c0 = _swr_counts(ctx)
        out = []
        for i, (lo, hi) in enumerate(rs):
            sq = SWR.format(n=p["n"], seed=seed0 + i + 1, lo=lo, hi=hi)
            eq = EXACT.format(lo=lo, hi=hi)
            cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
            res = {}
            for name, q in ((("swr", sq), ("exact", eq)) if i % 2 == 0 else
                            (("exact", eq), ("swr", sq))):
                t = time.perf_counter()
                cur.execute(q)
                res[name] = cur.fetchone()
                res[name + "_ms"] = 1000 * (time.perf_counter() - t)
            cur.execute("COMMIT")
            mean, sd, count = res["swr"]
            exact, range_rows = res["exact"]
            half = Z * sd / math.sqrt(count)
            out.append(dict(lo=lo, mean=mean, sd=sd, count=count, exact=exact,
                            range_rows=range_rows, half=half,
                            covered=abs(mean - exact) <= half,
                            swr_ms=res["swr_ms"], exact_ms=res["exact_ms"]))
            if (i + 1) % 100 == 0:
                ctx.progress(f"  {phase}: {i + 1} runs, coverage so far "
                             f"{100 * sum(x['covered'] for x in out) / len(out):.1f}%")
        secs = time.monotonic() - t0
        inserted = _seq(ctx) - k0
        c1 = _swr_counts(ctx)
        counts = {k: c1[k] - c0[k] for k in c0}
        if proc is not None and proc.poll() is not None:
            raise RuntimeError("pgbench insert_lineitem_recent.sql stopped early: "
                               + proc.stderr.read())
    finally:
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        conn.close()
    return dict(runs=out, inserted=inserted if inserters else 0, ins_rate=inserted / secs,
                total_inserted=_seq(ctx) - start_key, counts=counts)


def _swr_counts(ctx):
    cur = ctx.connect().cursor()
    cur.execute("SELECT coalesce(sum(draws), 0), coalesce(sum(rows_returned), 0), "
                "coalesce(sum(rejected_invisible), 0), coalesce(sum(rejected_by_index), 0), "
                "coalesce(sum(rejected_by_filter), 0) FROM abtree_swr_stats "
                "WHERE index = 'lineitem_shipdate_abtree'::regclass")
    return dict(zip(("draws", "rows", "invisible", "by_index", "by_filter"),
                    (int(x) for x in cur.fetchone())))


def _seq(ctx):
    r = ctx.sql("SELECT CASE WHEN is_called THEN last_value - 999999999 ELSE 0 END "
                "FROM lineitem_new_orderkey")
    return r[0][0]
