"""Issue 25 (packaging): what a chll value costs in a table, in memory and on the wire, by the
number of distinct values it counts: the packed form against the flat bytes."""

import os
import time

from harness import Metric, Variant, experiment

# The flat bytes of a chll value, packed or not, decoded in SQL apart from the library
# (test/sql/chll_flat.sql, which the regress suite chll_io uses too): the baseline's bytes.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
with open(os.path.join(ROOT, "test", "sql", "chll_flat.sql")) as f:
    FLAT_FN = f.read()


@experiment(
    name="chll_storage",
    title="chll values in a table: packed form against the flat bytes",
    figure="issue 25, packaging (a compact form while small)",
    about=(
        "For each number d of distinct values, `CREATE TABLE sk AS SELECT g, chll_agg(g * "
        "10000000 + i % d) ... GROUP BY g` builds one sketch of 512 buckets per group g (each "
        "value twice; `groups` groups, fewer for the largest d), timed (`build ms`). Variant "
        "`chll` is that column as the library returns it: since 0.2 its packed form (header, "
        "then runs of zero and literal bytes), before 0.2 the flat bytes. Variant `flat_bytea` "
        "is the baseline measured in the same run: the same sketches' flat bytes (decoded in "
        "SQL apart from the library) in a `bytea` column, which TOAST compresses like any "
        "value over 2 kB. `stored B` is the mean `pg_column_size` (what a table row holds, "
        "after TOAST compression), `value B` the mean size of the value itself (what a query "
        "holds in memory and a client receives in binary), `text chars` the mean length of "
        "the text form (pg_dump, COPY), `read ms` the time of `SELECT sum(chll_estimate(s)) "
        "FROM sk` (for the bytea column through `chll(b)`). The metric is `stored B`."),
    metric=Metric("stored size", "B", lower_is_better=True),
    variants=[
        Variant("chll", "the chll column as the library returns its values", ours=True,
                needs=("abtree",)),
        Variant("flat_bytea", "the same sketches' flat bytes in a bytea column",
                needs=("abtree",)),
    ],
    baseline="flat_bytea",
    x="distinct values",
    quick=dict(distinct=[1, 10, 100, 1000, 10000, 100000], groups=50, reps=3),
    full=dict(distinct=[1, 10, 100, 1000, 10000, 100000, 1000000], groups=100, reps=5),
)
def run(ctx, p):
    ctx.sql([FLAT_FN])
    for d in p["distinct"]:
        groups = p["groups"] if d <= 10000 else max(5, p["groups"] // 10)
        build = (f"CREATE TABLE sk AS SELECT g, chll_agg(g * 10000000 + i % {d}) AS s "
                 f"FROM generate_series(1, {groups}) g, generate_series(1, {2 * d}) i GROUP BY g")

        def sizes(table, col, read):
            stored, value, text = ctx.sql(
                f"SELECT avg(pg_column_size({col})), avg(octet_length({col}::bytea)), "
                f"avg(length({col}::text)) FROM {table}")[0]
            t0 = time.perf_counter()
            ctx.sql(read)
            return {"value": float(stored), "value B": float(value), "text chars": float(text),
                    "read ms": 1000 * (time.perf_counter() - t0)}

        def packed():
            ctx.sql("DROP TABLE IF EXISTS sk")
            t0 = time.perf_counter()
            ctx.sql(build)
            ms = 1000 * (time.perf_counter() - t0)
            r = sizes("sk", "s", "SELECT sum(chll_estimate(s)) FROM sk")
            r["build ms"] = ms
            return r

        def flat():
            ctx.sql(["DROP TABLE IF EXISTS sk", "DROP TABLE IF EXISTS skf"])
            t0 = time.perf_counter()
            ctx.sql(build)
            ms = 1000 * (time.perf_counter() - t0)
            ctx.sql("CREATE TABLE skf AS SELECT g, chll_flat_bytes(s) AS b FROM sk")
            r = sizes("skf", "b", "SELECT sum(chll_estimate(chll(b))) FROM skf")
            r["build ms"] = ms
            return r

        ctx.compare({"distinct values": d}, {"chll": packed, "flat_bytea": flat}, reps=p["reps"])
    ctx.sql(["DROP TABLE IF EXISTS sk", "DROP TABLE IF EXISTS skf"])
