"""Issue 24, item 2 (tighter sketches): accuracy against size and cost of a chll sketch by
bucket count, for the likelihood estimator and for the registers' estimator it replaced."""

import statistics
import time

from harness import Metric, Stats, Variant, experiment
from harness.stats import fmt

from experiments.sketch_accuracy import ertl_registers, percentile


@experiment(
    name="chll_precision",
    title="chll sketches by bucket count: accuracy, size and cost",
    figure="issue 24, item 2 (precision: an accuracy-versus-size-and-cost table)",
    about=(
        "For each bucket count m and number d of distinct values, `sketches` sketches of d "
        "distinct integers each (every sketch its own values) are built by `chll_agg(v, m)` "
        "(timed: `ns/value`). The metric is the ratio error max(d/est, est/d) of one sketch; "
        "the table gives its mean and p99 over the sketches. Variant `ml` is "
        "`chll_estimate_counters`: since issue 24 the maximum-likelihood estimate over each "
        "bucket's register and the three slots below it. Variant `registers` is the baseline "
        "measured on the very same sketches: Ertl's improved estimator over the registers "
        "alone (from `chll_counters`), what the library computed before. `flat B` is the "
        "sketch's flat size (`chll_info(s).bytes`, what a function holds in memory, and what "
        "an index keeps in pages: 8 kB each), `packed B` the mean size of the value a table, "
        "a client or a dump gets."),
    metric=Metric("mean ratio error", "x", lower_is_better=True),
    variants=[
        Variant("ml", "`chll_estimate_counters`: the likelihood over registers and the slots "
                "below them", ours=True, needs=("abtree",)),
        Variant("registers", "Ertl's improved estimator over the same sketches' registers",
                needs=("abtree",)),
    ],
    baseline="registers",
    x="buckets",
    quick=dict(buckets=[64, 128, 256, 512, 1024, 2048, 4096], distinct=[10_000, 100_000],
               sketches={10_000: 100, 100_000: 30}),
    full=dict(buckets=[64, 128, 256, 512, 1024, 2048, 4096], distinct=[10_000, 100_000,
                                                                       1_000_000],
              sketches={10_000: 300, 100_000: 100, 1_000_000: 20}),
)
def run(ctx, p):
    rows = []
    for d in p["distinct"]:
        n = p["sketches"][d]
        for m in p["buckets"]:
            ctx.sql("DROP TABLE IF EXISTS sk")
            t0 = time.perf_counter()
            ctx.sql(f"CREATE TABLE sk AS SELECT k, chll_agg(k * 100000000::int8 + g, {m}) AS s "
                    f"FROM generate_series(1, {n}) k, generate_series(1, {d}) g GROUP BY k")
            ns = 1e9 * (time.perf_counter() - t0) / (n * d)
            got = ctx.sql("SELECT k, chll_estimate_counters(s), (chll_info(s)).bytes, "
                          "octet_length(s::bytea) FROM sk ORDER BY k")
            regs = {}
            for k, r in ctx.sql("SELECT k, max(zeros) + 1 FROM sk, chll_counters(s) "
                                "WHERE raw > 0 GROUP BY k, bucket"):
                regs.setdefault(k, []).append(r)
            ml = [max(e / d, d / e) for _, e, _, _ in got]
            old = [max(e / d, d / e) for e in (ertl_registers(m, regs.get(k, []))
                                              for k, _, _, _ in got)]
            flat = got[0][2]
            packed = statistics.mean(float(b) for _, _, _, b in got)
            point = {"distinct values": d, "buckets": m}
            for name, errs in (("ml", ml), ("registers", old)):
                ctx.record(name, point, Stats([statistics.mean(errs)]),
                           **{"p99": percentile(errs, 0.99), "flat B": flat,
                              "packed B": packed, "ns/value": ns})
            rows.append((d, m, statistics.mean(ml), percentile(ml, 0.99),
                         statistics.mean(old), percentile(old, 0.99), flat, packed, ns))
            ctx.progress(f"d={d:,} m={m}: ml {fmt(statistics.mean(ml))} / "
                         f"{fmt(percentile(ml, 0.99))}, registers {fmt(statistics.mean(old))} / "
                         f"{fmt(percentile(old, 0.99))}, {flat:,} B flat, {ns:.0f} ns/value")
    ctx.sql("DROP TABLE IF EXISTS sk")

    L = ["Accuracy against size and cost (mean / p99 ratio error over the sketches):", "",
         "| distinct values | buckets | ml mean | ml p99 | registers mean | registers p99 | "
         "flat B | packed B | ns/value |", "|---|---|---|---|---|---|---|---|---|"]
    for d, m, a, b, c, e, flat, packed, ns in rows:
        L.append(f"| {d:,} | {m:,} | {a:.3f} | {b:.3f} | {c:.3f} | {e:.3f} | {flat:,} | "
                 f"{packed:,.0f} | {ns:.0f} |")
    ctx.sections.append("\n".join(L))
    for d in p["distinct"]:
        by = {m: (a, c) for dd, m, a, _, c, _, _, _, _ in rows if dd == d}
        if 512 in by:
            same = [m for m in sorted(by) if by[m][1] <= by[512][0]]
            ctx.findings.append(
                f"{d:,} distinct values: with 512 buckets the likelihood's mean ratio error is "
                f"{by[512][0]:.3f} against the registers' {by[512][1]:.3f}; the registers need "
                + (f"{same[0]:,} buckets" if same else "more buckets than measured")
                + " to do as well.")
