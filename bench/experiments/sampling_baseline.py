"""Paper 000 Fig. 9(a): latency of one query drawing n rows from A, single client."""

from harness import Metric, Variant, experiment

QUERIES = {
    "swr": "SELECT count(*) FROM a TABLESAMPLE swr({n})",
    "sample_tids": "SELECT count(*) FROM abtree_sample_tids('a_y_abtree', {n}) AS s(t) "
                   "JOIN a ON a.ctid = s.t",
    "bernoulli": "SELECT count(*) FROM a TABLESAMPLE BERNOULLI({pct})",
    "system": "SELECT count(*) FROM a TABLESAMPLE SYSTEM({pct})",
    "system_rows": "SELECT count(*) FROM a TABLESAMPLE SYSTEM_ROWS({n})",
}


@experiment(
    name="sampling_baseline",
    title="latency of drawing n rows from A(x, y)",
    figure="paper 000 Fig. 9(a)",
    about=("One client runs `SELECT count(*) FROM a TABLESAMPLE <method>` (the paper's query, "
           "Fig. 8) on a warm buffer pool holding all of A; latency is measured in the client "
           "around execute and fetch. BERNOULLI and SYSTEM take a percentage, set to 100*n/rows "
           "so that they return about n rows (column `rows`); SYSTEM and SYSTEM_ROWS sample "
           "whole pages, so their rows are neither independent nor uniform draws, unlike "
           "BERNOULLI and swr. The paper's own baseline, an aggregate B-tree with exclusive "
           "latching, needs our code and will be a variant of `swr`."),
    metric=Metric("latency", "ms", lower_is_better=True),
    variants=[
        Variant("swr", "`TABLESAMPLE swr(n)` with an abtree index on a(y): n independent "
                "uniform draws with replacement", ours=True, needs=("abtree", "swr")),
        Variant("sample_tids", "`abtree_sample_tids('a_y_abtree', n)` joined to a on ctid "
                "(a nested loop of TID scans, which keeps repeated draws): the same draws "
                "without TABLESAMPLE, until swr exists", ours=True,
                needs=("abtree", "abtree_sample_tids")),
        Variant("bernoulli", "`TABLESAMPLE BERNOULLI(100*n/rows)`: a full scan, each row kept "
                "independently"),
        Variant("system", "`TABLESAMPLE SYSTEM(100*n/rows)`: whole pages, each kept "
                "independently"),
        Variant("system_rows", "`TABLESAMPLE SYSTEM_ROWS(n)` (contrib tsm_system_rows): "
                "exactly n rows from random pages", needs=("tsm_system_rows",)),
    ],
    baseline="bernoulli",
    x="n",
    logx=True,
    logy=True,
    quick=dict(rows=1_000_000, n=[1000, 10000, 100000], reps=15, seed=1),
    full=dict(rows=10_000_000, n=[1000, 5000, 10000, 50000, 100000], reps=25, seed=1),
    settings={"shared_buffers": "2GB"},
)
def run(ctx, p):
    ctx.load("a", rows=p["rows"], seed=p["seed"])
    if ctx.has("abtree"):
        ctx.sql(["CREATE INDEX a_y_abtree ON a USING abtree (y)", "CHECKPOINT"])
    for n in p["n"]:
        pct = 100.0 * n / p["rows"]
        queries = {v.name: QUERIES[v.name].format(n=n, pct=repr(pct)) for v in ctx.variants}
        ctx.compare_queries({"n": n}, queries, reps=p["reps"], warmup=3)
