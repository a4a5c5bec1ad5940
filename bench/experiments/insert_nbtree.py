"""Paper 000 Figs. 10-13: insert throughput into A with an index on y, small vs large buffer."""

from harness import Metric, Variant, experiment

INDEX_AM = {"abtree": "abtree", "nbtree": "btree"}


@experiment(
    name="insert_nbtree",
    title="pgbench insert throughput into A with an index on y",
    figure="paper 000 Figs. 10-13",
    about=("pgbench runs `bench/pgbench/insert_a_batch.sql` (one statement and transaction "
           "inserting `batch` random rows, like the paper's clients that committed every 10K "
           "rows, and without a client round trip per row) for a fixed time with 1..k clients, "
           "one thread each; throughput is rows per second. Every repetition "
           "starts from a file copy of the same loaded table and index, so all runs insert into "
           "the same state. Two buffer scenarios, each after a restart: a shared_buffers far "
           "smaller than the index, starting cold (the paper's small buffer, Fig. 11), and one "
           "holding everything, prewarmed with pg_prewarm (the paper's in-memory case, Fig. 13). "
           "Unlike the paper, the operating system's page cache is not dropped, so a miss in "
           "shared buffers costs a copy from the page cache, not a disk read. nbtree is "
           "PostgreSQL's B-link tree: the paper's upper bound for any aggregate B-tree, so ours "
           "is expected below it (the paper reports about 1/3 overhead)."),
    metric=Metric("throughput", "rows/s", lower_is_better=False),
    variants=[
        Variant("abtree", "abtree index on a(y): every insert also updates the weights on its "
                "root-to-leaf path", ours=True, needs=("abtree",)),
        Variant("nbtree", "PostgreSQL's btree index on a(y)"),
    ],
    baseline="nbtree",
    x="clients",
    panel="shared_buffers",
    quick=dict(rows=1_000_000, clients=[1, 2], seconds=10, reps=3, batch=100, seed=1,
               small="2MB", large="1GB"),
    full=dict(rows=10_000_000, clients=[1, 2, 4], seconds=60, reps=5, batch=100, seed=1,
              small="16MB", large="4GB"),
)
def run(ctx, p):
    ctx.load("a", rows=p["rows"], seed=p["seed"])
    for v in ctx.variants:
        tmpl = f"tmpl_{v.name}"
        ctx.clone_db("bench", tmpl)
        ctx.sql([f"CREATE INDEX a_y_{v.name} ON a USING {INDEX_AM[v.name]} (y)", "CHECKPOINT"],
                db=tmpl)
        size = ctx.sql(f"SELECT pg_size_pretty(pg_relation_size('a_y_{v.name}')), "
                       "pg_size_pretty(pg_relation_size('a'))", db=tmpl)[0]
        ctx.notes.append(f"At the start of every repetition, `{v.name}`'s index is {size[0]} "
                         f"and the table {size[1]}.")
        ctx.disconnect(tmpl)

    scenarios = [(f"{p['small']}, cold", p["small"], False),
                 (f"{p['large']}, prewarmed", p["large"], True)]
    if not ctx.has("pg_prewarm"):
        ctx.notes.append("pg_prewarm is missing: the large-buffer runs started cold.")
    for label, shared_buffers, prewarm in scenarios:
        ctx.restart(shared_buffers=shared_buffers)
        for clients in p["clients"]:
            def insert_run(variant):
                rep = [0]

                def fn():
                    rep[0] += 1
                    ctx.clone_db(f"tmpl_{variant}", "run")
                    if prewarm and ctx.has("pg_prewarm"):
                        ctx.sql(["SELECT pg_prewarm('a')", f"SELECT pg_prewarm('a_y_{variant}')"],
                                db="run")
                        ctx.disconnect("run")
                    # The same seed for every variant in a repetition: the same rows.
                    r = ctx.pgbench("insert_a_batch.sql", clients=clients, seconds=p["seconds"],
                                    db="run", seed=p["seed"] + rep[0],
                                    defines={"batch": p["batch"]})
                    return {"value": r["tps"] * p["batch"],
                            "rows inserted": r["transactions"] * p["batch"]}
                return fn

            ctx.compare({"shared_buffers": label, "clients": clients},
                        {v.name: insert_run(v.name) for v in ctx.variants}, reps=p["reps"])
