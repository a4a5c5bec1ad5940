"""Paper 000 Fig. 9(a): latency of one query drawing n rows from A, single client; how far the
page-based samples are from independent draws; the cost of one draw against a btree lookup."""

import statistics
import time

from scipy.stats import chi2

from harness import Metric, Variant, experiment
from harness.stats import fmt

QUERIES = {
    "swr": "SELECT count(*) FROM a TABLESAMPLE swr({n})",
    "bernoulli": "SELECT count(*) FROM a TABLESAMPLE BERNOULLI({pct})",
    "system": "SELECT count(*) FROM a TABLESAMPLE SYSTEM({pct})",
    "system_rows": "SELECT count(*) FROM a TABLESAMPLE SYSTEM_ROWS({n})",
    "order_random": "SELECT count(*) FROM (SELECT 1 FROM a ORDER BY random() LIMIT {n}) s",
    # n random ids, generated in the same query, each looked up through u's primary key (a
    # nested loop of index scans; the other join methods are off in this variant's session)
    # and its heap tuple read (count(u.y): y is not in the index, so no index-only scan)
    "btree_lookup": "SELECT count(u.y) FROM (SELECT (1 + floor(random() * {rows}))::int4 AS k "
                    "FROM generate_series(1, {n}) OFFSET 0) p JOIN u ON u.id = p.k",
}
LOOKUP_SETTINGS = ("SET enable_hashjoin = off", "SET enable_mergejoin = off",
                   "SET enable_seqscan = off", "SET enable_bitmapscan = off")
# tablesample clauses of the bias test (n rows, seed s)
BIAS = {
    "swr": "swr({n}) REPEATABLE ({s})",
    "bernoulli": "BERNOULLI({pct}) REPEATABLE ({s})",
    "system": "SYSTEM({pct}) REPEATABLE ({s})",
    "system_rows": "SYSTEM_ROWS({n})",    # no REPEATABLE in tsm_system_rows: seeds vary
}
BLOCK = "(ctid::text::point)[0]"
ALPHA = 0.001


@experiment(
    name="sampling_baseline",
    title="latency of drawing n rows from A(x, y); bias of page sampling; cost per draw",
    figure="paper 000 Fig. 9(a)",
    about=(
        "**Latency.** One client runs `SELECT count(*) FROM a TABLESAMPLE <method>` (the paper's "
        "query, Fig. 8) on a warm buffer pool holding all of A (pg_prewarm of the table and its "
        "indexes, then warmup rounds); latency is measured in the client around execute and "
        "fetch. BERNOULLI and SYSTEM take a percentage, set to 100*n/rows so that they return "
        "about n rows (column `rows`); SYSTEM and SYSTEM_ROWS sample whole pages, so their rows "
        "are neither independent nor uniform draws, unlike BERNOULLI and swr (see the bias "
        "test). `order_random` is the textbook exact sample without replacement, `ORDER BY "
        "random() LIMIT n` (a full scan and a top-n sort). "
        "**Cost per draw.** `btree_lookup` runs n point lookups in one query, like swr(n) runs "
        "n draws in one query: n random ids generated in the query (`generate_series` and "
        "`random()`), joined to u(id int4 primary key, y int4), a table of the same rows' "
        "shape and count as A, by a nested loop of index scans on u's btree (hash, merge join, "
        "bitmap and sequential scans are off in that variant's session), reading y from the "
        "heap, so each of the n operations is one btree descent plus one heap fetch, against "
        "swr's one abtree descent plus one heap fetch; both return one aggregate. `swr / "
        "lookup` = swr's median / btree_lookup's median at the same n: the cost of one draw in "
        "units of one lookup (target at most 2). "
        "**Bias.** Two statistics per method, both tested like sql/swr_stats.sql (chi-square, "
        "fixed seeds (SYSTEM_ROWS does not take REPEATABLE: its seeds vary run to run), "
        "critical value the 0.999 quantile, so an independent-draw method fails "
        "once in 1000 seeds): (1) *blocks*: one sample of `bias_n` rows (`REPEATABLE (1)`); "
        "the heap's blocks split into `groups` runs of equal length; chi-square of the rows "
        "drawn per run against n x (the run's share of A's rows), df = groups - 1; n "
        "independent uniform draws give a statistic near df, samples made of whole pages pile "
        "their rows into few runs. (2) *design effect*: `bias_reps` samples of `bias_mean_n` "
        "rows (`REPEATABLE (1..bias_reps)`); the variance across them of the sample mean of a "
        "column, divided by the variance of the mean of n independent draws (the column's "
        "variance in A / the sample's row count): the design effect, 1 for independent draws; "
        "(reps - 1) x deff is chi-square with reps - 1 df under independence. Two columns: `y` "
        "(random, unrelated to where the row is stored: page sampling loses nothing) and the "
        "row's heap block number, standing for any column that follows storage order (a serial "
        "id, an insertion time in an append-only table): there a page's rows are alike, and a "
        "page sample's mean varies about as much as the mean of n / rows-per-page draws."),
    metric=Metric("latency", "ms", lower_is_better=True),
    variants=[
        Variant("swr", "`TABLESAMPLE swr(n)` with an abtree index on a(y): n independent "
                "uniform draws with replacement", ours=True, needs=("abtree", "swr")),
        Variant("bernoulli", "`TABLESAMPLE BERNOULLI(100*n/rows)`: a full scan, each row kept "
                "independently"),
        Variant("system", "`TABLESAMPLE SYSTEM(100*n/rows)`: whole pages, each kept "
                "independently"),
        Variant("system_rows", "`TABLESAMPLE SYSTEM_ROWS(n)` (contrib tsm_system_rows): "
                "exactly n rows from random pages", needs=("tsm_system_rows",)),
        Variant("order_random", "`SELECT ... FROM a ORDER BY random() LIMIT n`: a full scan "
                "and a top-n heap sort, an exact uniform sample without replacement"),
        Variant("btree_lookup", "n point lookups of random ids through the primary key (a "
                "btree) of u(id, y), same row count and shape as A, each reading its heap "
                "tuple: the per-draw cost reference"),
    ],
    baseline="bernoulli",
    x="n",
    logx=True,
    logy=True,
    quick=dict(rows=1_000_000, n=[100, 1000, 10000, 100000], reps=25, seed=1,
               bias_n=10000, groups=100, bias_mean_n=1000, bias_reps=200),
    full=dict(rows=10_000_000, n=[100, 1000, 10000, 100000], reps=15, seed=1,
              bias_n=10000, groups=100, bias_mean_n=1000, bias_reps=200),
    settings={"shared_buffers": "2GB"},
)
def run(ctx, p):
    rows = p["rows"]
    ctx.load("a", rows=rows, seed=p["seed"])
    t = time.monotonic()
    stmts = ["DROP TABLE IF EXISTS u", "CREATE TABLE u (id int4 PRIMARY KEY, y int4)",
             "SELECT setseed(0.5)",
             f"INSERT INTO u SELECT g, floor(random() * 2147483648)::int4 "
             f"FROM generate_series(1, {rows}) g",
             "VACUUM ANALYZE u"]
    if ctx.has("abtree"):
        stmts.append("CREATE INDEX a_y_abtree ON a USING abtree (y)")
    ctx.sql(stmts + ["CHECKPOINT"])
    ctx.progress(f"u and the indexes built in {time.monotonic() - t:.1f} s")
    rels = ["a", "u", "u_pkey"] + (["a_y_abtree"] if ctx.has("abtree") else [])
    if ctx.has("pg_prewarm"):
        ctx.sql([f"SELECT pg_prewarm('{r}')" for r in rels])
    sizes = ", ".join(f"{r} {ctx.sql(f'SELECT pg_size_pretty(pg_relation_size({chr(39)}{r}{chr(39)}))')[0][0]}"
                      for r in rels)
    levels = ctx.sql("SELECT level + 1 FROM bt_metap('u_pkey')") if _has_pageinspect(ctx) \
        else None
    note = f"Relation sizes: {sizes}."
    if ctx.has("abtree"):
        h = ctx.sql("SELECT height FROM abtree_stats('a_y_abtree')")[0][0]
        note += f" The abtree index has {h} levels"
        note += f", u_pkey {levels[0][0]}." if levels else "."
    ctx.notes.append(note + (" All prewarmed into shared buffers." if ctx.has("pg_prewarm")
                             else " pg_prewarm missing: warmed by the warmup rounds only."))

    lookup_conn = ctx.cluster.connect(ctx.db)
    for s in LOOKUP_SETTINGS:
        lookup_conn.cursor().execute(s)
    plan = _plan(lookup_conn, QUERIES["btree_lookup"].format(n=1000, rows=rows))
    ctx.notes.append("`btree_lookup`'s plan (n = 1000): " + " / ".join(plan) + ".")
    if ctx.has("swr"):
        ctx.notes.append("`swr`'s plan: " + " / ".join(
            _plan(ctx.connect(), QUERIES["swr"].format(n=1000))) + ".")

    per_draw = []
    for n in p["n"]:
        pct = 100.0 * n / rows
        fns = {}
        for v in ctx.variants:
            q = QUERIES[v.name].format(n=n, pct=repr(pct), rows=rows)
            fns[v.name] = _query_fn(lookup_conn if v.name == "btree_lookup" else ctx.connect(),
                                    q)
        res = ctx.compare({"n": n}, fns, reps=p["reps"], warmup=3)
        if "swr" in res and "btree_lookup" in res:
            per_draw.append((n, res["swr"].median, res["btree_lookup"].median))
    lookup_conn.close()

    if per_draw:
        L = ["## Cost of one draw against one btree lookup", "",
             "| n | swr ms | btree_lookup ms | µs per draw | µs per lookup | swr / lookup |",
             "|---|---|---|---|---|---|"]
        for n, s, b in per_draw:
            L.append(f"| {n:,} | {fmt(s)} | {fmt(b)} | {fmt(1000 * s / n)} | "
                     f"{fmt(1000 * b / n)} | {s / b:.2f} |")
        L += ["", "Medians of the main table. Target: one draw at most 2x one lookup "
              "(`swr / lookup` <= 2)."]
        ctx.sections.append("\n".join(L))
        worst = max(s / b for _, s, b in per_draw)
        big = [(n, s / b) for n, s, b in per_draw if n >= 1000]
        ctx.findings.append(
            "Cost of one draw (swr(n) / n point lookups through a btree with heap fetch, same "
            "n, one query each): " + ", ".join(f"n={n:,}: x{s / b:.2f}" for n, s, b in per_draw)
            + "; target at most 2x: " + ("**met**" if worst <= 2 else
                                          ("**met for n >= 1,000, not at n = 100**"
                                           if big and max(r for _, r in big) <= 2
                                           else "**not met**")) + ".")
    for n, target in ((1000, 100),):
        r = [x for x in ctx.rows if x.point["n"] == n]
        sw = next((x.stats.median for x in r if x.variant == "swr"), None)
        be = next((x.stats.median for x in r if x.variant == "bernoulli"), None)
        if sw and be:
            ctx.findings.append(
                f"swr({n:,}) against BERNOULLI at the same expected sample size, {rows:,} rows: "
                f"x{be / sw:.1f} (target {target}x: " +
                ("**met**" if be / sw >= target else "**not met**") + ").")
    bias(ctx, p)


def _has_pageinspect(ctx):
    try:
        ctx.sql("CREATE EXTENSION IF NOT EXISTS pageinspect")
        return True
    except Exception:
        ctx.connect().rollback()
        return False


def _plan(conn, q):
    cur = conn.cursor()
    cur.execute("EXPLAIN (COSTS OFF) " + q)
    return [r[0].strip() for r in cur.fetchall()]


def _query_fn(conn, q):
    def fn():
        cur = conn.cursor()
        t0 = time.perf_counter()
        cur.execute(q)
        row = cur.fetchone()
        return {"value": 1000 * (time.perf_counter() - t0), "rows": row[0]}
    return fn


def _crit(df):
    return chi2.ppf(1 - ALPHA, df)


def bias(ctx, p):
    """Chi-square of rows per heap-block run, and design effects of sample means."""
    methods = [m for m in BIAS if m in {v.name for v in ctx.variants}]
    if not methods:
        return
    rows, G = p["rows"], p["groups"]
    cur = ctx.connect().cursor()
    cur.execute("SELECT pg_relation_size('a') / current_setting('block_size')::int")
    blocks = cur.fetchone()[0]
    grp = f"({BLOCK}::int8 * {G} / {blocks})"
    cur.execute(f"SELECT {grp} AS g, count(*) FROM a GROUP BY 1")
    share = {g: c / rows for g, c in cur.fetchall()}
    cur.execute(f"SELECT var_pop(y::float8), var_pop({BLOCK}), avg(y::float8) FROM a")
    var_y, var_b, _ = cur.fetchone()
    ctx.progress(f"bias test: {len(methods)} methods, {p['bias_reps']} samples each")

    out = {}
    for m in methods:
        n = p["bias_n"]
        ts = BIAS[m].format(n=n, pct=repr(100.0 * n / rows), s=1)
        cur.execute(f"SELECT {grp} AS g, count(*) FROM a TABLESAMPLE {ts} GROUP BY 1")
        got = dict(cur.fetchall())
        total = sum(got.values())
        stat = sum((got.get(g, 0) - total * s) ** 2 / (total * s) for g, s in share.items())
        nonempty = sum(1 for g in share if got.get(g, 0))
        # design effect: bias_reps samples of bias_mean_n rows
        n = p["bias_mean_n"]
        my, mb, sizes = [], [], []
        for s in range(1, p["bias_reps"] + 1):
            ts = BIAS[m].format(n=n, pct=repr(100.0 * n / rows), s=s)
            cur.execute(f"SELECT avg(y::float8), avg({BLOCK}), count(*) FROM a TABLESAMPLE {ts}")
            a, b, c = cur.fetchone()
            if c:
                my.append(a)
                mb.append(b)
                sizes.append(c)
        k = len(sizes)
        # the variance of a mean of c independent draws, averaged over the samples' sizes
        inv_n = statistics.mean(1 / c for c in sizes)
        deff_y = statistics.variance(my) / (var_y * inv_n)
        deff_b = statistics.variance(mb) / (var_b * inv_n)
        out[m] = dict(total=total, stat=stat, nonempty=nonempty, k=k,
                      mean_size=statistics.mean(sizes), deff_y=deff_y, deff_b=deff_b)

    df = G - 1
    crit_b, crit_d = _crit(df), _crit(p["bias_reps"] - 1)
    L = ["## Bias: how far each method's sample is from independent uniform draws", "",
         f"Chi-square tests at alpha = {ALPHA} (critical values: {crit_b:.1f} for {df} df, "
         f"{crit_d:.1f} for {p['bias_reps'] - 1} df), fixed seeds. **blocks**: one sample of "
         f"{p['bias_n']:,} rows, its rows counted per run of 1/{G} of A's {blocks:,} heap "
         f"blocks, chi-square against the runs' shares of the rows. **deff**: the variance of "
         f"the sample mean over {p['bias_reps']} samples of {p['bias_mean_n']:,} rows, divided "
         "by the variance of the mean of that many independent draws; the test statistic is "
         "(samples - 1) x deff.", "",
         "| method | rows | runs hit | blocks chi-square | blocks verdict | deff of mean(y) | "
         "verdict | deff of mean(block) | verdict |",
         "|---|---|---|---|---|---|---|---|---|"]

    def verdict(x, c):
        return "independent-like" if x < c else "**not independent**"

    for m, r in out.items():
        sd, sb = (r["k"] - 1) * r["deff_y"], (r["k"] - 1) * r["deff_b"]
        L.append(f"| `{m}` | {r['total']:,} | {r['nonempty']} of {G} | {fmt(r['stat'])} | "
                 f"{verdict(r['stat'], crit_b)} | {r['deff_y']:.2f} | {verdict(sd, crit_d)} | "
                 f"{fmt(r['deff_b'])} | {verdict(sb, crit_d)} |")
        r.update(ok_blocks=r["stat"] < crit_b, ok_y=sd < crit_d, ok_b=sb < crit_d)
    rpp = rows / blocks
    L += ["", f"A holds {rpp:.0f} rows per page. A sample of whole pages of n rows behaves like "
          f"about n / {rpp:.0f} independent draws for a column that follows storage order "
          f"(deff near {rpp:.0f}), and like n draws for a column unrelated to it (deff near 1)."]
    ctx.sections.append("\n".join(L))
    ctx.findings.append(
        "Bias (chi-square at 0.999, fixed seeds): " + "; ".join(
            f"`{m}` " + ("passes all three" if r["ok_blocks"] and r["ok_y"] and r["ok_b"] else
                         f"blocks chi-square {fmt(r['stat'])} (critical {crit_b:.0f}), "
                         f"deff of a storage-ordered column's mean {fmt(r['deff_b'])}"
                         + (", of y's " + f"{r['deff_y']:.2f}" if not r["ok_y"] else ""))
            for m, r in out.items()) + ".")
