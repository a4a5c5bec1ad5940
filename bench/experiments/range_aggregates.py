"""Issue 11: range counts from abtree's downlink weights against a btree index-only count, and
the planner's range estimates with abtree.range_selectivity against ANALYZE's statistics."""

import json
import random
import statistics
import time

from harness import Metric, Variant, experiment
from harness.stats import fmt, repeat_interleaved

SPAN = 2**31            # generator "a": y uniform over 0 .. 2^31-1
NEW_SPAN = 2**28        # rows inserted after ANALYZE: y uniform over -2^28 .. -1
ABT, BT = "a_y_abtree", "a_y_btree"
IDLE = 0.015            # seconds of idling before the short call in the wake-up check
BASE_DB = "bt"          # a file copy of the database with the btree index only
# The baseline's session: a single-process index-only scan (no parallel workers: the function
# is one process too).
BASE_SETTINGS = ("SET enable_seqscan = off", "SET enable_bitmapscan = off",
                 "SET max_parallel_workers_per_gather = 0")
QUERIES = {
    "abtree_range_weight": "SELECT abtree_range_weight('" + ABT + "', {lo}, {hi})",
    "btree_count": "SELECT count(*) FROM a WHERE y BETWEEN {lo} AND {hi}",
}


@experiment(
    name="range_aggregates",
    title="range counts from abtree weights against a btree index-only count; planner "
          "estimates from the index",
    figure="issue 11 (no paper figure)",
    about=(
        "Latency: A(x, y) with random int4 y (generator `a`), an abtree index `a_y_abtree` and a "
        "btree index `a_y_btree` on y, VACUUM ANALYZE (so the visibility map is all-visible and "
        "the btree count is a pure index-only scan), tables and indexes prewarmed. The baseline "
        "runs on a file copy of the database made before the abtree index was built (btree index "
        "only), since abtree shares btree's cost estimate and the planner would otherwise pick "
        "either index for the count (see the notes below). "
        "For ranges covering `range %` of y's span (so about that share of the rows), with a "
        "random lower bound drawn per repetition and used by both variants in that round, one "
        "client runs `SELECT abtree_range_weight('a_y_abtree', lo, hi)` (two root-to-leaf "
        "descents) and `SELECT count(*) FROM a WHERE y BETWEEN lo AND hi` with "
        "`enable_seqscan` and `enable_bitmapscan` off (checked with EXPLAIN to be an Index Only "
        "Scan on `a_y_btree`, no parallel workers); latency is measured in the client around "
        "execute and fetch, so it includes one round trip, right after an untimed `SELECT 1` on "
        "the same connection (so that neither pays for waking an idle process and CPU; see the "
        "findings for what that costs); each query then runs once more under "
        "EXPLAIN (ANALYZE, TIMING OFF) for the server's `Execution Time` (column `server ms`). "
        "Every round also checks that both return the same number. "
        "Target: abtree_range_weight at least 100x faster at 10%. "
        "Planner estimates (section below): after the latency part, `new %` more rows are "
        "inserted with y below the smallest key ANALYZE saw, without a new ANALYZE; for random "
        "ranges inside the old keys, inside the new keys and spanning both, EXPLAIN's `Plan "
        "Rows` of `SELECT * FROM a WHERE y BETWEEN lo AND hi` is compared with the actual count, "
        "`abtree.range_selectivity` off and on, first with both indexes on y, then with only "
        "the abtree index (without a btree, PostgreSQL cannot look up the actual extremes of "
        "y past the histogram's ends); and the `Planning Time` of EXPLAIN (SUMMARY) with the "
        "setting off and on."),
    metric=Metric("latency", "ms", lower_is_better=True),
    variants=[
        Variant("abtree_range_weight", "`SELECT abtree_range_weight('a_y_abtree', lo, hi)`: "
                "the count from the downlink weights of two root-to-leaf descents",
                ours=True, needs=("abtree",)),
        Variant("btree_count", "`SELECT count(*) FROM a WHERE y BETWEEN lo AND hi`, an Index "
                "Only Scan on the btree index `a_y_btree` (sequential and bitmap scans off)"),
    ],
    baseline="btree_count",
    x="range %",
    logx=True,
    logy=True,
    quick=dict(rows=1_000_000, fractions=[0.0001, 0.001, 0.01, 0.1, 0.5], reps=25, warmup=3,
               new=0.2, ranges=10, plan_reps=50, seed=1),
    full=dict(rows=10_000_000, fractions=[0.0001, 0.001, 0.01, 0.1, 0.5], reps=40, warmup=3,
              new=0.2, ranges=20, plan_reps=100, seed=1),
    settings={"shared_buffers": "2GB"},
)
def run(ctx, p):
    findings = ctx.findings if hasattr(ctx, "findings") else ctx.notes
    rng = random.Random(p["seed"])
    ctx.load("a", rows=p["rows"], seed=p["seed"])
    has_fn = ctx.has("abtree") and ctx.sql(
        "SELECT to_regproc('abtree_range_weight') IS NOT NULL")[0][0]
    has_guc = ctx.has("abtree") and ctx.sql(
        "SELECT count(*) FROM pg_settings WHERE name = 'abtree.range_selectivity'")[0][0] > 0
    if ctx.has("abtree") and not has_fn:
        ctx.skipped["abtree_range_weight"] = "waiting for the SQL function abtree_range_weight()"
        ctx.variants = [v for v in ctx.variants if v.name != "abtree_range_weight"]
    t = time.monotonic()
    ctx.sql([f"CREATE INDEX {BT} ON a USING btree (y)", "VACUUM ANALYZE a", "CHECKPOINT"])
    # The baseline runs on a file copy with the btree index only: abtree indexes share
    # btree's cost function, so with both on the table the planner picks either for the count.
    ctx.clone_db(ctx.db, BASE_DB)
    if ctx.has("abtree"):
        ctx.sql([f"CREATE INDEX {ABT} ON a USING abtree (y)", "CHECKPOINT"])
    ctx.progress(f"indexes built, VACUUM ANALYZE done in {time.monotonic() - t:.1f} s")
    if ctx.has("pg_prewarm"):
        ctx.sql(f"SELECT pg_prewarm('a'), pg_prewarm('{BT}')", db=BASE_DB)
        ctx.sql("SELECT pg_prewarm('a')" + (f", pg_prewarm('{ABT}')" if ctx.has("abtree") else ""))
    else:
        ctx.notes.append("pg_prewarm is missing: buffers were warmed only by the warmup rounds.")

    latency(ctx, p, rng, findings)
    if has_guc:
        estimates(ctx, p, rng, findings, has_fn)
    else:
        findings.append("Planner estimates not measured: waiting for the setting "
                        "`abtree.range_selectivity` (not found in pg_settings).")


# -- part 1: latency -------------------------------------------------------------------------
def latency(ctx, p, rng, findings):
    base = ctx.connect(BASE_DB).cursor()
    both = ctx.connect().cursor()           # the database with both indexes
    for c in (base, both):
        for stmt in BASE_SETTINGS:
            c.execute(stmt)
    curs = {"abtree_range_weight": both, "btree_count": base}
    active = [v.name for v in ctx.variants]
    plans, chosen, mismatches, compared = [], [], [], 0

    base.execute("EXPLAIN (ANALYZE, TIMING OFF, SUMMARY OFF, FORMAT JSON) "
                 f"SELECT count(*) FROM a WHERE y BETWEEN 0 AND {SPAN // 100}")
    node = _find_node(base.fetchone()[0][0]["Plan"], "Index Only Scan")
    heap_fetches = node.get("Heap Fetches") if node else None

    for frac in p["fractions"]:
        width = max(1, round(frac * SPAN))
        bounds = []
        for _ in range(p["warmup"] + p["reps"]):
            lo = rng.randrange(0, SPAN - width + 1)
            bounds.append((lo, lo + width - 1))
        sql0 = QUERIES["btree_count"].format(lo=bounds[0][0], hi=bounds[0][1])
        base.execute("EXPLAIN (COSTS OFF) " + sql0)
        plans.append((frac, _plan_text(base.fetchall())))
        if ctx.has("abtree"):
            both.execute("EXPLAIN (COSTS OFF) " + sql0)
            chosen.append((frac, _plan_text(both.fetchall())))
        counts = {name: [None] * len(bounds) for name in active}

        def query_fn(name):
            state = {"i": 0}
            cur = curs[name]

            def fn():
                i = state["i"]
                state["i"] += 1
                lo, hi = bounds[i]
                sql = QUERIES[name].format(lo=lo, hi=hi)
                _wake(cur)
                t0 = time.perf_counter()
                cur.execute(sql)
                n = cur.fetchone()[0]
                ms = 1000 * (time.perf_counter() - t0)
                counts[name][i] = int(n)
                # The same query once more under EXPLAIN ANALYZE, outside the timing: the
                # server's execution time, without the round trip.
                cur.execute("EXPLAIN (ANALYZE, TIMING OFF, SUMMARY, FORMAT JSON) " + sql)
                server = float(cur.fetchone()[0][0]["Execution Time"])
                return {"value": ms, "rows": int(n), "server ms": server}
            return fn

        pct = round(100 * frac, 6)
        ctx.compare({"range %": int(pct) if pct == int(pct) else pct},
                    {n: query_fn(n) for n in active}, reps=p["reps"], warmup=p["warmup"])
        if len(active) == 2:
            for i, (lo, hi) in enumerate(bounds):
                compared += 1
                a, b = counts["abtree_range_weight"][i], counts["btree_count"][i]
                if a != b:
                    mismatches.append(f"[{lo}, {hi}]: abtree_range_weight {a}, count(*) {b}")

    # A round trip with no work, for scale: the floor under both variants' latency.
    floor = []
    for _ in range(51):
        t0 = time.perf_counter()
        base.execute("SELECT 1")
        base.fetchone()
        floor.append(1000 * (time.perf_counter() - t0))
    # What _wake() takes out: the same short call after the machine idled for IDLE seconds.
    idle = {}
    if "abtree_range_weight" in active:
        w = round(0.1 * SPAN)
        for mode in ("woken", "idle", "woken", "idle"):
            for _ in range(15):
                lo = rng.randrange(0, SPAN - w + 1)
                if mode == "woken":
                    _wake(both)
                else:
                    time.sleep(IDLE)
                t0 = time.perf_counter()
                both.execute(QUERIES["abtree_range_weight"].format(lo=lo, hi=lo + w - 1))
                both.fetchone()
                idle.setdefault(mode, []).append(1000 * (time.perf_counter() - t0))
    both.execute("RESET ALL")
    ctx.disconnect(BASE_DB)
    ctx.sql(f"DROP DATABASE {BASE_DB}", db="postgres")
    ctx.disconnect("postgres")
    if chosen:
        ctx.notes.append(
            "The planner's own choice for the baseline's count on the table with both indexes "
            "(same settings): " + "; ".join(f"{100 * f:g}%: `{pl}`" for f, pl in chosen)
            + ". abtree indexes use btree's cost estimate, so either index can win; the "
            f"baseline therefore runs on a file copy of the database (`{BASE_DB}`, made after "
            "VACUUM ANALYZE, before the abtree index was built) that has only the btree index.")

    med = {(r.point["range %"], r.variant): r.stats.median for r in ctx.rows}
    srv = {(r.point["range %"], r.variant): r.extra.get("server ms") for r in ctx.rows}
    if "abtree_range_weight" in active and (10, "btree_count") in med:
        a, b = (10, "abtree_range_weight"), (10, "btree_count")
        r10 = med[b] / med[a]
        findings.append(f"Target: `abtree_range_weight` at least 100x faster than the btree "
                        f"index-only count at 10% of the table: "
                        f"**{'met' if r10 >= 100 else 'not met'}** (x{fmt(r10)}: "
                        f"{fmt(med[a])} ms against {fmt(med[b])} ms, round trip included).")
        findings.append("Server side only (column `server ms`, the median `Execution Time` of "
                        "EXPLAIN (ANALYZE, TIMING OFF) on the same ranges): " + "; ".join(
                            f"{pct}%: x{fmt(srv[(pct, 'btree_count')] / srv[(pct, 'abtree_range_weight')])}"
                            f" ({1000 * srv[(pct, 'abtree_range_weight')]:.0f} µs against "
                            f"{fmt(srv[(pct, 'btree_count')])} ms)"
                            for pct in dict.fromkeys(k[0] for k in srv)) + ".")
    ios = all(f"Index Only Scan using {BT} on a" in pl for _, pl in plans)
    findings.append(
        ("Baseline plan, checked with EXPLAIN at every range size: "
         + (f"an Index Only Scan using `{BT}` at all {len(plans)} sizes" if ios else
            "**not always an Index Only Scan on the btree**: " + "; ".join(
                f"{100 * f:g}%: `{pl}`" for f, pl in plans)))
        + (f" (`{plans[0][1]}`)" if ios and plans else "")
        + (f"; EXPLAIN ANALYZE over 1% of the keys: Heap Fetches {heap_fetches}" if
           heap_fetches is not None else "") + ".")
    if len(active) == 2:
        findings.append(
            f"`abtree_range_weight` equal to `count(*)` in all {compared} ranges measured "
            "(warmup rounds included)." if not mismatches else
            f"**Counts differ in {len(mismatches)} of {compared} ranges**: "
            + "; ".join(mismatches[:5]) + ".")
    findings.append(f"For scale, `SELECT 1` (one round trip, no work) takes "
                    f"{fmt(statistics.median(floor))} ms (median of {len(floor)}), a floor "
                    "under both variants' latency.")
    if idle:
        findings.append(
            "Why each timed query follows an untimed `SELECT 1` on its connection: "
            f"`abtree_range_weight` over 10% takes {fmt(statistics.median(idle['woken']))} ms "
            f"that way but {fmt(statistics.median(idle['idle']))} ms after the client slept "
            f"{1000 * IDLE:g} ms (median of {len(idle['idle'])} each), the cost of waking "
            "the idle client, server process and CPUs, whichever query comes next; without "
            "the wake-up, a short query measured right after the baseline's long scan pays it "
            "and a short one after another short one does not.")


def _wake(cur):
    """An untimed round trip right before a timed query, so that the client, the server
    process and the CPUs are awake: after an idle gap of a few milliseconds (a long query on
    the other connection, or none) a short query takes 0.1-0.2 ms longer on this VM, whatever
    it does (see the findings)."""
    cur.execute("SELECT 1")
    cur.fetchone()


def _plan_text(rows):
    """EXPLAIN (COSTS OFF)'s plan nodes on one line, without their conditions."""
    return " / ".join(r[0].strip().lstrip("-> ").strip() for r in rows
                      if "Cond:" not in r[0] and "Filter:" not in r[0])


def _find_node(plan, node_type):
    if plan.get("Node Type") == node_type:
        return plan
    for child in plan.get("Plans", []):
        found = _find_node(child, node_type)
        if found:
            return found
    return None


# -- part 2: planner estimates ---------------------------------------------------------------
def estimates(ctx, p, rng, findings, has_fn):
    cur = ctx.connect().cursor()
    old_min, old_max = ctx.sql("SELECT min(y), max(y) FROM a")[0]
    hist = ctx.sql("SELECT histogram_bounds::text::int4[] FROM pg_stats "
                   "WHERE tablename = 'a' AND attname = 'y'")[0][0]
    n_new = round(p["new"] * p["rows"])
    ctx.progress(f"inserting {n_new:,} rows with y in [-{NEW_SPAN}, -1], no ANALYZE")
    ctx.sql([f"SELECT setseed({0.5 / (p['seed'] + 1)!r})",
             f"INSERT INTO a SELECT floor(random() * 2147483648)::int4, "
             f"-1 - floor(random() * {NEW_SPAN})::int4 FROM generate_series(1, {n_new})",
             "CHECKPOINT"])

    # Ranges: (category, width label, lo, hi).
    ranges = []
    for f in (0.001, 0.01, 0.1):
        w = round(f * SPAN)
        for _ in range(p["ranges"]):
            lo = rng.randrange(0, SPAN - w + 1)
            ranges.append(("old keys only", f"{100 * f:g}% of old span", lo, lo + w - 1))
    for f in (0.01, 0.1, 0.5):
        w = round(f * NEW_SPAN)
        for _ in range(p["ranges"]):
            lo = rng.randrange(-NEW_SPAN, -w + 1)
            ranges.append(("new keys only", f"{100 * f:g}% of new span", lo, lo + w - 1))
    for _ in range(3 * p["ranges"]):
        lo = -rng.randrange(1, NEW_SPAN + 1)
        hi = rng.randrange(0, SPAN // 10)
        ranges.append(("spanning both", "new part + up to 10% of old", lo, hi))

    def q(lo, hi):
        return f"SELECT * FROM a WHERE y BETWEEN {lo} AND {hi}"

    def set_guc(on):
        cur.execute(f"SET abtree.range_selectivity = {'on' if on else 'off'}")

    def est(lo, hi, on):
        set_guc(on)
        cur.execute("EXPLAIN (FORMAT JSON) " + q(lo, hi))
        return float(cur.fetchone()[0][0]["Plan"]["Plan Rows"])

    actual, weight_mismatch = {}, []
    for _, _, lo, hi in ranges:
        cur.execute(f"SELECT count(*) FROM a WHERE y BETWEEN {lo} AND {hi}")
        actual[(lo, hi)] = cur.fetchone()[0]
        if has_fn:
            cur.execute(f"SELECT abtree_range_weight('{ABT}', {lo}, {hi})")
            w = int(cur.fetchone()[0])
            if w != actual[(lo, hi)]:
                weight_mismatch.append(f"[{lo}, {hi}]: {w} against count(*) {actual[(lo, hi)]}")

    def qerr(e, a):
        e, a = max(e, 1.0), max(a, 1.0)
        return max(e / a, a / e)

    scenarios = [("btree and abtree", None), ("abtree only", f"DROP INDEX {BT}")]
    est_rows, plan_rows, summary = [], [], []
    for scen, before in scenarios:
        if before:
            cur.execute(before)
        by = {}
        for cat, wl, lo, hi in ranges:
            e_off, e_on = est(lo, hi, False), est(lo, hi, True)
            a = actual[(lo, hi)]
            keys = [(cat, wl), ("all ranges", "")]
            if cat != "spanning both":
                keys.insert(1, (cat, "all widths"))
            for key in keys:
                d = by.setdefault(key, {"off": [], "on": [], "ratio_off": [], "ratio_on": [],
                                        "act": []})
                d["off"].append(qerr(e_off, a))
                d["on"].append(qerr(e_on, a))
                d["ratio_off"].append(max(e_off, 1) / max(a, 1))
                d["ratio_on"].append(max(e_on, 1) / max(a, 1))
                d["act"].append(a)
        order = [k for k in by if k[1] not in ("all widths", "")] + \
            [k for k in by if k[1] == "all widths"] + [("all ranges", "")]
        for cat, wl in order:
            d = by[(cat, wl)]
            est_rows.append((scen, cat, wl, len(d["act"]), statistics.median(d["act"]),
                             statistics.median(d["ratio_off"]), statistics.median(d["off"]),
                             max(d["off"]), statistics.median(d["ratio_on"]),
                             statistics.median(d["on"]), max(d["on"])))
        d = by[("all ranges", "")]
        summary.append(f"with {scen} on y, q-error median {fmt(statistics.median(d['off']))} / "
                       f"max {fmt(max(d['off']))} off against median "
                       f"{fmt(statistics.median(d['on']))} / max {fmt(max(d['on']))} on")

        # Planning time, off and on interleaved, for one range of each category.
        reps = p["plan_reps"]
        for cat in ("old keys only", "new keys only", "spanning both"):
            _, _, lo, hi = next(r for r in ranges if r[0] == cat)

            def plan_fn(on, lo=lo, hi=hi):
                def fn():
                    set_guc(on)
                    cur.execute("EXPLAIN (SUMMARY, FORMAT JSON) " + q(lo, hi))
                    return float(cur.fetchone()[0][0]["Planning Time"])
                return fn
            ctx.wait_quiet()
            res = repeat_interleaved({"off": plan_fn(False), "on": plan_fn(True)}, reps, 5)
            off, on = res["off"].median, res["on"].median
            plan_rows.append((scen, cat, f"[{lo}, {hi}]", reps, off, on, on - off))
        cur.execute("RESET abtree.range_selectivity")
        ctx.progress(f"estimates with {scen}: " + summary[-1])

    over = [r[6] for r in plan_rows]
    findings.append(
        f"Planner estimates after inserting {n_new:,} rows ({100 * p['new']:g}%) below the "
        f"keys ANALYZE saw, {len(ranges)} ranges (section *Planner estimates* below), "
        "`abtree.range_selectivity` off against on: " + "; ".join(summary)
        + f". Planning time overhead of the setting: {fmt(1000 * min(over))} - "
        f"{fmt(1000 * max(over))} µs per query (median over {p['plan_reps']} plans).")

    L = ["## Planner estimates", "",
         f"After the latency part (A with {p['rows']:,} rows, VACUUM ANALYZE: y in "
         f"[{old_min}, {old_max}], ANALYZE's histogram {len(hist)} bounds from {hist[0]} to "
         f"{hist[-1]}), {n_new:,} rows were inserted with y uniform over [-{NEW_SPAN}, -1] "
         "(below every key ANALYZE saw), with no ANALYZE or VACUUM after. For each range, "
         "`EXPLAIN (FORMAT JSON) SELECT * FROM a WHERE y BETWEEN lo AND hi` gives `Plan Rows` "
         "with `abtree.range_selectivity` off and on, and `count(*)` the actual rows. q-error "
         "= max(est/act, act/est) with both at least 1; `est/act` is the median of est/act "
         "(above 1: overestimate). First with both indexes on y (PostgreSQL then looks up the "
         "actual min and max of y in the btree when a bound lies in the histogram's first or "
         "last bucket), then after DROP INDEX a_y_btree (abtree only: the planner's "
         "extreme-value lookup only uses btree indexes).", "",
         "| indexes on y | ranges | width | n | median actual rows | off: est/act | "
         "off: q-error median | off: q-error max | on: est/act | on: q-error median | "
         "on: q-error max |",
         "|---|---|---|---|---|---|---|---|---|---|---|"]
    for scen, cat, wl, n, act, r_off, m_off, x_off, r_on, m_on, x_on in est_rows:
        L.append(f"| {scen} | {cat} | {wl} | {n} | {fmt(act)} | {fmt(r_off)} | {fmt(m_off)} | "
                 f"{fmt(x_off)} | {fmt(r_on)} | {fmt(m_on)} | {fmt(x_on)} |")
    L += ["", "Planning time of `EXPLAIN (SUMMARY, FORMAT JSON)` on one range per kind, "
          "setting off and on interleaved (after 5 discarded rounds), median `Planning Time`. "
          "The recount runs each time the planner reads the column's statistics (for each of "
          "BETWEEN's two clauses, and again while costing each index path on y), so its cost "
          "grows with the indexes on the column:",
          "",
          "| indexes on y | range | [lo, hi] | reps | off ms | on ms | on - off µs |",
          "|---|---|---|---|---|---|---|"]
    for scen, cat, b, n, off, on, d in plan_rows:
        L.append(f"| {scen} | {cat} | {b} | {n} | {fmt(off)} | {fmt(on)} | {fmt(1000 * d)} |")
    if has_fn:
        L += ["", f"`abtree_range_weight` against `count(*)` on these {len(ranges)} ranges after "
              "the inserts: " + ("equal on all." if not weight_mismatch else
                                 f"**differs on {len(weight_mismatch)}**: "
                                 + "; ".join(weight_mismatch[:5]) + ".")]
        if weight_mismatch:
            findings.append(f"**After the inserts, abtree_range_weight differs from count(*) "
                            f"on {len(weight_mismatch)} of {len(ranges)} ranges.**")
    ctx.notes.append("\n".join(L))
