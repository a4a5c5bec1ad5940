"""Paper 000 Figs. 10-14: insert throughput under abtree's three weight protocols against
nbtree, and inserts mixed with sampling clients."""

import os
import re
import subprocess
import time

from harness import Metric, Stats, Variant, experiment
from harness.context import PGBENCH_DIR
from harness.stats import fmt

INDEX = "a_y"
PROTOCOLS = ("safe_page", "page_exclusive", "path_exclusive", "batched")
MIXED = ("safe_page", "path_exclusive")
PASS_COUNTERS = ("pass_fast", "pass_still_safe", "pass_child_moved", "pass_reset",
                 "pass_cautious_readd", "pass_restart")
# Panels, in the order of the report's table and plot.
W_INSERT = "inserts"
W_MIXED_INS = "2 inserting + k sampling: insert rows/s"
W_MIXED_SMP = "2 inserting + k sampling: samples/s"
W_IDLE = "k sampling alone: samples/s"
WORKLOADS = (W_INSERT, W_MIXED_INS, W_MIXED_SMP, W_IDLE)
HANG_GRACE = 60     # seconds past -T after which a pgbench run counts as hung


@experiment(
    name="weight_protocols",
    title="insert throughput under abtree's weight protocols, and inserts mixed with sampling",
    figure="paper 000 Figs. 10-14",
    about=(
        "Inserts: pgbench runs `bench/pgbench/insert_a_batch.sql` (one statement and transaction "
        "inserting `batch` random rows into A(x, y), which has one index, on y) for `seconds` "
        "with 1..8 clients, one thread each; throughput is rows per second. The abtree variants "
        "are the same index, with `abtree.weight_protocol` set for pgbench's sessions through "
        "`PGOPTIONS='-c abtree.weight_protocol=...'`: `safe_page` (paper 000's concurrent weight "
        "pass: share locks and atomic adds, RID/SID checks), `page_exclusive` (the same pass "
        "with exclusive page locks) and `path_exclusive` (the paper's baseline: the whole "
        "root-to-leaf path locked exclusively per insert). Every repetition starts from a file "
        "copy of the same loaded table and index (`rows` rows, a 3-level abtree), prewarmed "
        "into a shared_buffers that holds everything (the paper's in-memory case, Fig. 13). "
        "Mixed (Fig. 14): 2 inserting clients as above and, at the same time, k sampling "
        "clients running `bench/pgbench/sample_tids_a.sql` "
        "(`SELECT count(*) FROM abtree_sample_tids('a_y', n)`: n weighted draws through the "
        "index, each taken to the row version the snapshot sees, one heap page per draw; before "
        "fa4d8e2 the heap was not read) as a second pgbench for the same `seconds`; in the three mixed "
        "and sampling panels, `clients` is k, the number of sampling clients. Samples/s = "
        "sampling queries/s x n; k = 0 is the inserts panel's measurement at 2 clients (the same "
        "workload). `k sampling alone` is the same sampling with no inserts (the idle rate the "
        "paper compares with). This machine has 2 cores: from 2 clients "
        "on, clients share cores, and the paper's higher client counts mean time slicing here, "
        "not parallelism."),
    metric=Metric("throughput", "rows/s or samples/s", lower_is_better=False),
    variants=[
        Variant("safe_page", "abtree index on a(y), `abtree.weight_protocol = safe_page` "
                "(the default before issue 22): paper 000's weight pass with share locks and "
                "atomic adds", ours=True, needs=("abtree",)),
        Variant("page_exclusive", "abtree index on a(y), `abtree.weight_protocol = "
                "page_exclusive`: the same pass, internal pages locked exclusively",
                ours=True, needs=("abtree",)),
        Variant("path_exclusive", "abtree index on a(y), `abtree.weight_protocol = "
                "path_exclusive`: the paper's exclusively latched aggregate B-tree, every insert "
                "holding its whole path up to the root exclusively; since issue 22 an insert "
                "that fits its leaf writes one INSERT_VALID record", needs=("abtree",)),
        Variant("batched", "abtree index on a(y), `abtree.weight_protocol = batched` (the "
                "default since issue 22): entries go in not valid and a backend's waiting "
                "entries become valid a WAL record's worth at a time, their paths held "
                "exclusively (src/abtree/README, \"Batched validation\")",
                ours=True, needs=("abtree",)),
        Variant("nbtree", "PostgreSQL's btree index on a(y): the upper bound for any aggregate "
                "B-tree"),
    ],
    baseline="nbtree",
    x="clients",
    panel="workload",
    logy=True,
    quick=dict(rows=200_000, clients=[1, 2, 4, 8], seconds=4, reps=2, batch=100,
               inserters=2, samplers=[0, 1, 2], n=1000, seed=1, verify=True),
    full=dict(rows=2_000_000, clients=[1, 2, 4, 8], seconds=30, reps=5, batch=100,
              inserters=2, samplers=[0, 1, 2], n=1000, seed=1, verify=True),
    settings={"shared_buffers": "1GB"},
)
def run(ctx, p):
    active = [v.name for v in ctx.variants]
    protos = [v for v in active if v in PROTOCOLS]
    ctx.load("a", rows=p["rows"], seed=p["seed"])
    ams = (["nbtree"] if "nbtree" in active else []) + (["abtree"] if protos else [])
    for am in ams:
        tmpl = f"tmpl_{am}"
        ctx.clone_db("bench", tmpl)
        ctx.sql([f"CREATE INDEX {INDEX} ON a USING {'btree' if am == 'nbtree' else am} (y)",
                 "CHECKPOINT"], db=tmpl)
        size = ctx.sql(f"SELECT pg_size_pretty(pg_relation_size('{INDEX}')), "
                       "pg_size_pretty(pg_relation_size('a'))", db=tmpl)[0]
        shape = ""
        if am == "abtree":
            h, leaves = ctx.sql(f"SELECT height, leaf_pages FROM abtree_stats('{INDEX}')",
                                db=tmpl)[0]
            shape = f" ({h} levels, {leaves} leaves)"
        ctx.notes.append(f"At the start of every repetition, the {am} index is {size[0]}"
                         f"{shape} and the table {size[1]}.")
        ctx.disconnect(tmpl)
    if not ctx.has("pg_prewarm"):
        ctx.notes.append("pg_prewarm is missing: the runs started with cold shared buffers.")

    state = dict(counters={v: dict.fromkeys(PASS_COUNTERS, 0) for v in protos},
                 checks=0, problems=[])

    def next_seed(rep):
        """The same seed for every variant in a repetition (the same rows), a new one per
        repetition."""
        rep[0] += 1
        return p["seed"] + rep[0]

    # -- inserts (Figs. 10-13) ---------------------------------------------------------
    for clients in p["clients"]:
        def insert_run(variant, clients=clients):
            rep = [0]

            def fn():
                seed = next_seed(rep)
                fresh_run_db(ctx, variant)
                before = pass_counters(ctx, variant)
                r = pgbench_all(ctx, variant, [insert_job(p, clients, seed)], p["seconds"])[0]
                after_run(ctx, p, state, variant, before)
                return {"value": r["tps"] * p["batch"],
                        "rows inserted": r["transactions"] * p["batch"]}
            return fn
        ctx.compare({"workload": W_INSERT, "clients": clients},
                    {v: insert_run(v) for v in active}, reps=p["reps"])

    # -- inserts and sampling at the same time (Fig. 14) --------------------------------
    mixed = [v for v in MIXED if v in protos]
    if mixed and not ctx.has("abtree_sample_tids"):
        ctx.notes.append("abtree_sample_tids() is missing: the mixed workload was not run.")
        mixed = []
    for k in p["samplers"] if mixed else []:
        if k == 0 and p["inserters"] in p["clients"]:
            # The same workload as the inserts panel's point at 2 clients: reuse it.
            for r in [r for r in ctx.rows if r.variant in mixed
                      and r.point == {"workload": W_INSERT, "clients": p["inserters"]}]:
                ctx.record(r.variant, {"workload": W_MIXED_INS, "clients": 0}, r.stats,
                           **r.extra)
            continue
        samples = {v: [] for v in mixed}

        def mixed_run(variant, k=k, samples=samples):
            rep = [0]

            def fn():
                seed = next_seed(rep)
                fresh_run_db(ctx, variant)
                before = pass_counters(ctx, variant)
                jobs = [insert_job(p, p["inserters"], seed)]
                if k:
                    jobs.append(sample_job(p, k, seed))
                res = pgbench_all(ctx, variant, jobs, p["seconds"])
                after_run(ctx, p, state, variant, before)
                if k:
                    samples[variant].append(res[1]["tps"] * p["n"])
                return {"value": res[0]["tps"] * p["batch"],
                        "rows inserted": res[0]["transactions"] * p["batch"]}
            return fn
        ctx.compare({"workload": W_MIXED_INS, "clients": k},
                    {v: mixed_run(v) for v in mixed}, reps=p["reps"])
        if k:
            for v in mixed:
                ctx.record(v, {"workload": W_MIXED_SMP, "clients": k}, Stats(samples[v]))
            ctx.progress(f"workload=mixed clients={k} samples/s: " + ", ".join(
                f"{v} {fmt(Stats(samples[v]).median)}" for v in mixed))

    for k in [k for k in p["samplers"] if k] if mixed else []:
        def idle_run(variant, k=k):
            rep = [0]

            def fn():
                seed = next_seed(rep)
                fresh_run_db(ctx, variant)
                r = pgbench_all(ctx, variant, [sample_job(p, k, seed)], p["seconds"])[0]
                return r["tps"] * p["n"]
            return fn
        ctx.compare({"workload": W_IDLE, "clients": k},
                    {v: idle_run(v) for v in mixed}, reps=p["reps"])

    ctx.rows.sort(key=lambda r: WORKLOADS.index(r.point["workload"]))   # stable
    summarize(ctx, p, state)


# -- pgbench jobs ----------------------------------------------------------------------------
def insert_job(p, clients, seed):
    return dict(script="insert_a_batch.sql", clients=clients, seed=seed,
                defines={"batch": p["batch"]})


def sample_job(p, clients, seed):
    return dict(script="sample_tids_a.sql", clients=clients, seed=seed + 100_000,
                defines={"index": INDEX, "n": p["n"]})


def fresh_run_db(ctx, variant):
    """Database run := a file copy of the variant's template, prewarmed."""
    ctx.clone_db(f"tmpl_{'nbtree' if variant == 'nbtree' else 'abtree'}", "run")
    if ctx.has("pg_prewarm"):
        ctx.sql(["SELECT pg_prewarm('a')", f"SELECT pg_prewarm('{INDEX}')"], db="run")
    ctx.disconnect("run")


def pgbench_all(ctx, variant, jobs, seconds):
    """Run the pgbench jobs at the same time, each for `seconds`, in database run, with the
    variant's weight protocol set for their sessions; returns their results in order.  A
    failed run raises with pgbench's output; a run still going HANG_GRACE s after it should
    have ended is reported with pg_stat_activity, killed, and raises."""
    env = ctx.cluster.client_env()
    if variant in PROTOCOLS:
        env["PGOPTIONS"] = f"-c abtree.weight_protocol={variant}"
    procs = []
    try:
        for j in jobs:
            cmd = [os.path.join(ctx.cluster.bindir, "pgbench"), "-n", "-M", "prepared",
                   "-c", str(j["clients"]), "-j", str(j["clients"]), "-T", str(seconds),
                   f"--random-seed={j['seed']}", "-f", os.path.join(PGBENCH_DIR, j["script"])]
            for k, v in j["defines"].items():
                cmd += ["-D", f"{k}={v}"]
            procs.append(subprocess.Popen(cmd + ["run"], env=env, text=True,
                                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT))
        deadline = time.monotonic() + seconds + HANG_GRACE
        outs = []
        for j, proc in zip(jobs, procs):
            try:
                out, _ = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                activity = ctx.sql("SELECT pid, wait_event_type, wait_event, state, "
                                   "left(query, 80) FROM pg_stat_activity "
                                   "WHERE backend_type = 'client backend' ORDER BY pid",
                                   db="postgres")
                dump = "\n".join("  " + " | ".join(str(c) for c in row) for row in activity)
                ctx.progress(f"HANG: pgbench {j['script']} ({variant}) still running "
                             f"{HANG_GRACE} s after its end; pg_stat_activity:\n{dump}")
                raise RuntimeError(f"pgbench {j['script']} hung ({variant}); "
                                   f"pg_stat_activity:\n{dump}")
            outs.append(out)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        ctx.disconnect("postgres")
    results = []
    for j, proc, out in zip(jobs, procs, outs):
        tps = re.search(r"^tps = ([0-9.]+)", out, re.M)
        if proc.returncode != 0 or not tps:
            raise RuntimeError(f"pgbench {j['script']} ({variant}, {j['clients']} clients) "
                               f"failed (exit {proc.returncode}):\n{out}")
        xacts = re.search(r"^number of transactions actually processed: (\d+)", out, re.M)
        results.append({"tps": float(tps.group(1)),
                        "transactions": int(xacts.group(1)) if xacts else 0})
    return results


# -- checks ----------------------------------------------------------------------------------
def pass_counters(ctx, variant):
    """abtree_status's weight-pass counters (cluster-wide) before an abtree run, or None."""
    if variant not in PROTOCOLS:
        return None
    rows = ctx.sql("SELECT item, value::bigint FROM abtree_status() WHERE component = 'weights'",
                   db="run")
    return dict(rows)


def after_run(ctx, p, state, variant, before):
    """After an abtree run: add the weight-pass counters' growth to the variant's totals and,
    if p["verify"], check the index: abtree_verify (exact weights) and total weight = entries
    = rows in the table."""
    if variant not in PROTOCOLS:
        return
    after = pass_counters(ctx, variant)
    for c in PASS_COUNTERS:
        state["counters"][variant][c] += after.get(c, 0) - before.get(c, 0)
    if not p["verify"]:
        return
    try:
        rows, entries, weight = ctx.sql(
            f"SELECT (SELECT count(*) FROM a), s.entries, s.total_weight "
            f"FROM abtree_stats('{INDEX}') s", db="run")[0]
        ctx.sql(f"SELECT abtree_verify('{INDEX}', exact => true)", db="run")
        if not rows == entries == weight:
            state["problems"].append(f"{variant}: {rows} rows, {entries} index entries, "
                                     f"total weight {weight}")
    except Exception as e:     # report it, keep measuring
        state["problems"].append(f"{variant}: {str(e).strip().splitlines()[0]}")
    finally:
        ctx.disconnect("run")
    state["checks"] += 1
    if state["problems"]:
        ctx.progress(f"CHECK FAILED: {state['problems'][-1]}")


# -- findings --------------------------------------------------------------------------------
def summarize(ctx, p, state):
    med = {(r.point["workload"], r.point["clients"], r.variant): r.stats.median for r in ctx.rows}

    def ratio(a, b):
        return a / b if a is not None and b else None

    def clients(n, what="client"):
        return f"{n} {what}{'' if n == 1 else 's'}"

    def verdict(ok):
        return "**met**" if ok else "**not met**"

    F = ctx.findings
    if all((W_INSERT, c, v) in med for c in p["clients"] for v in ("safe_page", "nbtree")):
        rs = {c: ratio(med[(W_INSERT, c, "safe_page")], med[(W_INSERT, c, "nbtree")])
              for c in p["clients"]}
        F.append("Target: `safe_page` inserts at least 0.75x `nbtree` at every client count: "
                 + verdict(all(r >= 0.75 for r in rs.values())) + " ("
                 + ", ".join(f"{clients(c)} x{fmt(r)}" for c, r in rs.items()) + ").")
    if all((W_INSERT, c, v) in med for c in p["clients"] for v in ("batched", "nbtree")):
        rs = {c: ratio(med[(W_INSERT, c, "batched")], med[(W_INSERT, c, "nbtree")])
              for c in p["clients"]}
        F.append("Target (issue 22): `batched` (the default) inserts at least 0.85x `nbtree` at "
                 "every client count: " + verdict(all(r >= 0.85 for r in rs.values())) + " ("
                 + ", ".join(f"{clients(c)} x{fmt(r)}" for c, r in rs.items()) + ").")
    if all((W_INSERT, c, v) in med for c in p["clients"]
           for v in ("safe_page", "path_exclusive")):
        rs = {c: ratio(med[(W_INSERT, c, "safe_page")], med[(W_INSERT, c, "path_exclusive")])
              for c in p["clients"]}
        top = max(p["clients"])
        F.append(f"Target: `safe_page` inserts at least 3x `path_exclusive` at {top} clients: "
                 + verdict(rs[top] >= 3) + "; `safe_page` / `path_exclusive`: "
                 + ", ".join(f"{clients(c)} x{fmt(r)}" for c, r in rs.items()) + ".")
    if all((W_INSERT, c, v) in med for c in p["clients"]
           for v in ("page_exclusive", "safe_page")):
        rs = {c: ratio(med[(W_INSERT, c, "page_exclusive")], med[(W_INSERT, c, "safe_page")])
              for c in p["clients"]}
        F.append("`page_exclusive` / `safe_page` inserts: "
                 + ", ".join(f"{clients(c)} x{fmt(r)}" for c, r in rs.items()) + ".")
    for v in MIXED:
        ks = [k for k in p["samplers"] if k and (W_IDLE, k, v) in med
              and (W_MIXED_SMP, k, v) in med]
        if not ks:
            continue
        rs = {k: ratio(med[(W_MIXED_SMP, k, v)], med[(W_IDLE, k, v)]) for k in ks}
        base = med.get((W_MIXED_INS, 0, v))
        ins = [f"{clients(k, 'sampling client')} x{fmt(ratio(med[(W_MIXED_INS, k, v)], base))}"
               for k in ks if base and (W_MIXED_INS, k, v) in med]
        line = (f"`{v}`, sampling under {p['inserters']} inserting clients / sampling alone: "
                + ", ".join(f"{clients(k, 'sampling client')} x{fmt(r)}"
                            for k, r in rs.items()))
        if v == "safe_page":
            line = ("Target: " + line + " (target at least 1/6 = x0.167: "
                    + verdict(all(r >= 1 / 6 for r in rs.values())) + ")")
        if ins:
            line += "; its insert rate against no sampling: " + ", ".join(ins)
        F.append(line + ".")
    if p["verify"] and state["checks"]:
        if state["problems"]:
            F.append(f"**Index checks failed** after {len(state['problems'])} of "
                     f"{state['checks']} abtree runs: " + "; ".join(state["problems"][:5]) + ".")
        else:
            F.append(f"After each of the {state['checks']} abtree insert runs, abtree_verify "
                     "(exact weights) passed and total weight = index entries = rows in A.")
    if state["counters"]:
        ctx.notes.append(
            "Weight-pass counters of `abtree_status()` accumulated over each variant's runs "
            "(Figure 6 cases; `path_exclusive` does not run the pass, so its counters stay 0): "
            + "; ".join(f"`{v}`: " + ", ".join(f"{c} {n:,}" for c, n in cs.items())
                        for v, cs in state["counters"].items()) + ".")
