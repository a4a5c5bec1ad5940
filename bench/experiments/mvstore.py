"""Paper 000 section 4.4, Figs. 14-15: the multi-version weight store.  Sampling throughput
with the store on and off and no writers (its cost), then a long-running sampler on one old
snapshot while 2 clients insert (its benefit: the acceptance rate stays high)."""

import os
import re
import statistics
import subprocess
import time

from harness import Metric, Stats, Variant, experiment
from harness.context import PGBENCH_DIR
from harness import report
from harness.stats import fmt

INDEX = "a_y"
MODES = ("on", "off")
COLORS = {"on": "C0", "off": "C1"}
HANG_GRACE = 60     # seconds past -T after which pgbench counts as hung
P_IDLE = "idle (no writers)"
P_RUN = "mixed, every interval"
P_END = "mixed, last 3 intervals"
SWR_ITEMS = ("scans", "rows", "tree_rejects", "invisible")
STORE_GAUGES = ("entries", "versions", "bytes_used", "is_full")
STORE_COUNTERS = ("versions_recorded", "versions_collected", "chains_rebuilt", "gc_runs",
                  "fallbacks")
STORE_COLS = STORE_GAUGES + STORE_COUNTERS


def plot_mvstore(exp, ctx, path):
    """Two panels over the mixed phase's time: acceptance rate and samples/s, store on and off
    (samples/s also shows the idle rates as dashed lines)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = getattr(ctx, "mvstore_series", {})
    idle = getattr(ctx, "mvstore_idle", {})
    fig, axes = plt.subplots(1, 2, figsize=(11.5, 4.4), squeeze=False)
    acc_ax, rate_ax = axes[0]
    for mode in MODES:
        pts = series.get(mode) or []
        if not pts:
            continue
        t = [q["t"] for q in pts]
        acc_ax.plot(t, [q["acceptance"] for q in pts], marker="o", markersize=3,
                    color=COLORS[mode], linestyle="-" if mode == "on" else "--",
                    label=f"abtree.mvstore = {mode}")
        rate_ax.plot(t, [q["samples_s"] for q in pts], marker="o", markersize=3,
                     color=COLORS[mode], linestyle="-" if mode == "on" else "--",
                     label=f"abtree.mvstore = {mode}, under 2 inserting clients")
        if mode in idle:
            rate_ax.axhline(idle[mode], color=COLORS[mode], linestyle=":", linewidth=1,
                            label=f"abtree.mvstore = {mode}, idle (median)")
    acc_ax.set_ylabel("acceptance rate in the interval (%)")
    acc_ax.set_ylim(0, 102)
    acc_ax.axhline(99, color="grey", linestyle=":", linewidth=1, label="target 99% (store on)")
    rate_ax.set_ylabel("samples/s in the interval")
    rate_ax.set_ylim(bottom=0)
    for ax, title in ((acc_ax, "acceptance rate of swr(n) on one old snapshot"),
                      (rate_ax, "sampling throughput")):
        ax.set_xlabel("seconds since the inserts started")
        ax.set_title(title, fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="center right" if ax is rate_ax else "best")
    report.finish_figure(fig, exp, ctx, path)


@experiment(
    name="mvstore",
    title="the multi-version weight store: sampling cost when idle, acceptance rate of a "
          "long-running sampler under inserts",
    figure="paper 000 section 4.4, Figs. 14-15",
    about=(
        "A(x, y) with `rows` random rows and an abtree index on y, VACUUM ANALYZE; every phase "
        "starts from a file copy of that database, prewarmed (shared_buffers holds it all). "
        "The store is switched per session with the setting `abtree.mvstore` (`on`: inserts "
        "record the weight each transaction adds to each downlink, samplers subtract what "
        "their snapshot cannot see; `off`: neither); `abtree.mvstore_size = 512MB` so that "
        "the run's versions fit. "
        "**Idle**: one connection runs `SELECT count(*) FROM a TABLESAMPLE swr(n)` back to back "
        "for `idle_seconds` per repetition, with no writers, after `abtree_mvstore_collect()` "
        "emptied the store; on and off are interleaved round-robin (`idle_reps` repetitions "
        "after one discarded warmup round); samples/s = rows returned / wall time. "
        "**Mixed** (for `on`, then for `off`, each on a fresh copy of the loaded data, the "
        "setting applied to every session of the phase: `PGOPTIONS='-c abtree.mvstore=...'` "
        "for pgbench, `SET` for the sampler): a sampler opens `BEGIN ISOLATION LEVEL "
        "REPEATABLE READ` and takes its snapshot with a first swr(n) query; then pgbench starts "
        "`inserters` clients running `bench/pgbench/insert_a.sql` (one random row per "
        "transaction) for `seconds`, while the sampler keeps running swr(n) inside that one "
        "transaction for the same `seconds`. Every `interval` seconds the harness records, "
        "from a second connection: the sampler's samples/s in the interval, the acceptance "
        "rate in the interval = Δrows / (Δrows + Δtree_rejects + Δinvisible) from "
        "`abtree_status()`'s cumulative `swr` counters (only the sampler samples, so the "
        "deltas are its own; they are added at the end of each scan and the harness reads "
        "them between the sampler's queries), the rows inserted so far (pg_stat_user_tables."
        "n_tup_ins, which backends report at most once a second), and the `abtree_mvstore` "
        "view. With the store off, every draw that lands on a row inserted after the "
        "snapshot is rejected and redrawn, so acceptance falls as the inserts grow the index "
        "(the paper's snowball effect); with it on, the sampler weighs the downlinks as its "
        "snapshot saw them. Both rows of the main table under `mixed` are over intervals of "
        "the run (each interval one value). 2 cores: the 2 inserters, the sampler and the "
        "server's background work share them."),
    metric=Metric("sampling throughput", "samples/s", lower_is_better=False),
    variants=[
        Variant("on", "`abtree.mvstore = on` (the default): inserts record their weight deltas "
                "in the store, samplers subtract the deltas their snapshot cannot see",
                ours=True, needs=("abtree", "swr", "mvstore")),
        Variant("off", "`abtree.mvstore = off` in every session: no deltas recorded or "
                "subtracted; samplers reject draws of rows their snapshot cannot see (the "
                "paper's baseline behaviour before section 4.4)",
                needs=("abtree", "swr", "mvstore")),
    ],
    baseline="off",
    x="phase",
    plot=plot_mvstore,
    quick=dict(rows=1_000_000, n=1000, idle_seconds=2, idle_reps=5, inserters=2, seconds=60,
               interval=3, seed=1),
    full=dict(rows=10_000_000, n=1000, idle_seconds=3, idle_reps=9, inserters=2, seconds=120,
              interval=5, seed=1),
    settings={"shared_buffers": "1GB", "abtree.mvstore_size": "512MB"},
)
def run(ctx, p):
    ctx.mvstore_series = {}
    ctx.mvstore_idle = {}
    modes = [v.name for v in ctx.variants]
    if not modes:
        ctx.notes.append("Nothing measured: the variants need the weight store.")
        return
    log_start = _log_size(ctx)
    ctx.load("a", rows=p["rows"], seed=p["seed"])
    t = time.monotonic()
    ctx.sql([f"CREATE INDEX {INDEX} ON a USING abtree (y)", "VACUUM ANALYZE a", "CHECKPOINT"])
    ctx.progress(f"index built and vacuumed in {time.monotonic() - t:.1f} s")
    h, leaves, tsize, isize = ctx.sql(
        f"SELECT s.height, s.leaf_pages, pg_size_pretty(pg_relation_size('a')), "
        f"pg_size_pretty(pg_relation_size('{INDEX}')) FROM abtree_stats('{INDEX}') s")[0]
    ctx.notes.append(f"At the start of every phase, A has {p['rows']:,} rows ({tsize}) and "
                     f"its abtree index is {isize} ({h} levels, {leaves:,} leaves).")
    if not ctx.has("pg_prewarm"):
        ctx.notes.append("pg_prewarm is missing: the phases started with cold shared buffers.")
    store = ctx.sql("SELECT size_bytes, entries_max, versions_max FROM abtree_mvstore")[0]
    ctx.notes.append(f"The weight store: {store[0] / 2**20:,.0f} MiB of shared memory, room for "
                     f"{store[1]:,} entries (downlinks with versions) and {store[2]:,} versions.")
    ctx.disconnect()

    # -- idle: the store's cost when there is nothing to subtract -------------------------
    fresh_run_db(ctx)
    ctx.sql("SELECT abtree_mvstore_collect()", db="run")
    conns = {}
    for mode in modes:
        conns[mode] = ctx.cluster.connect("run")
        conns[mode].cursor().execute(f"SET abtree.mvstore = {mode}")
    q = f"SELECT count(*) FROM a TABLESAMPLE swr({p['n']})"

    def idle_fn(mode):
        def fn():
            cur = conns[mode].cursor()
            before = swr_counters(ctx)
            rows = 0
            t0 = time.perf_counter()
            while time.perf_counter() - t0 < p["idle_seconds"]:
                cur.execute(q)
                rows += cur.fetchone()[0]
            secs = time.perf_counter() - t0
            return {"value": rows / secs, "acceptance %": acceptance(before, swr_counters(ctx))}
        return fn

    idle = ctx.compare({"phase": P_IDLE}, {m: idle_fn(m) for m in modes},
                       reps=p["idle_reps"], warmup=1)
    for c in conns.values():
        c.close()
    ctx.mvstore_idle = {m: st.median for m, st in idle.items()}
    idle_store = mvstore_row(ctx)
    ctx.disconnect("run")

    # -- mixed: one old snapshot under inserts ----------------------------------------------
    results = {}
    for i, mode in enumerate(modes):
        if i:
            fresh_run_db(ctx)
        results[mode] = mixed_phase(ctx, p, mode)
        ctx.mvstore_series[mode] = results[mode]["series"]
        ctx.disconnect("run")

    for mode in modes:
        pts = results[mode]["series"]
        ctx.record(mode, {"phase": P_RUN}, Stats([q["samples_s"] for q in pts]),
                   **{"acceptance %": statistics.median(q["acceptance"] for q in pts),
                      "min acceptance %": min(q["acceptance"] for q in pts)})
        last = pts[-3:]
        ctx.record(mode, {"phase": P_END}, Stats([q["samples_s"] for q in last]),
                   **{"acceptance %": statistics.median(q["acceptance"] for q in last),
                      "min acceptance %": min(q["acceptance"] for q in last)})

    report(ctx, p, modes, idle, results, idle_store, log_start)


# -- the database of a phase ------------------------------------------------------------------
def fresh_run_db(ctx):
    """Database run := a file copy of the loaded database, prewarmed."""
    ctx.disconnect("run")
    ctx.clone_db("bench", "run")
    if ctx.has("pg_prewarm"):
        ctx.sql(["SELECT pg_prewarm('a')", f"SELECT pg_prewarm('{INDEX}')"], db="run")


def swr_counters(ctx):
    rows = ctx.sql("SELECT item, value::bigint FROM abtree_status() WHERE component = 'swr'",
                   db="run")
    return dict(rows)


def acceptance(before, after):
    d = {k: after.get(k, 0) - before.get(k, 0) for k in SWR_ITEMS}
    drawn = d["rows"] + d["tree_rejects"] + d["invisible"]
    return 100.0 * d["rows"] / drawn if drawn else float("nan")


def mvstore_row(ctx):
    cur = ctx.connect("run").cursor()
    cur.execute("SELECT * FROM abtree_mvstore")
    row = dict(zip([d[0] for d in cur.description], cur.fetchone()))
    if "full" in row:               # the column's name before 02dd0fe
        row["is_full"] = row.pop("full")
    return row


def inserted_rows(ctx):
    """Rows inserted into run.a since the stats were reset: n_tup_ins, as backends have
    reported it (at most once a second each)."""
    r = ctx.sql("SELECT n_tup_ins FROM pg_stat_user_tables WHERE relname = 'a'", db="run")
    return r[0][0] if r else 0


def mixed_phase(ctx, p, mode):
    """The sampler on one REPEATABLE READ snapshot for p["seconds"] while pgbench inserts;
    returns the series of intervals and the phase's totals."""
    ctx.sql("SELECT abtree_mvstore_collect()", db="run")
    ctx.sql("SELECT pg_stat_reset()", db="run")
    ctx.wait_quiet()
    ctx.progress(f"mixed phase, abtree.mvstore = {mode}: {p['inserters']} inserting clients "
                 f"and one sampler on one snapshot for {p['seconds']} s")
    q = f"SELECT count(*) FROM a TABLESAMPLE swr({p['n']})"
    sampler = ctx.cluster.connect("run")
    cur = sampler.cursor()
    cur.execute(f"SET abtree.mvstore = {mode}")
    cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
    cur.execute(q)                  # takes the snapshot
    first = cur.fetchone()[0]
    store0 = mvstore_row(ctx)
    time.sleep(1.1)                 # the pg_stat_reset() and the load's counts settle
    ins0 = inserted_rows(ctx)
    swr0 = prev = swr_counters(ctx)

    env = ctx.cluster.client_env()
    env["PGOPTIONS"] = f"-c abtree.mvstore={mode}"
    cmd = [os.path.join(ctx.cluster.bindir, "pgbench"), "-n", "-M", "prepared",
           "-c", str(p["inserters"]), "-j", str(p["inserters"]), "-T", str(p["seconds"]),
           f"--random-seed={p['seed']}", "-f", os.path.join(PGBENCH_DIR, "insert_a.sql"), "run"]
    series = []
    proc = subprocess.Popen(cmd, env=env, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    try:
        t0 = t_prev = time.monotonic()
        rows = queries = 0
        k = 1
        while True:
            now = time.monotonic()
            if now - t0 >= k * p["interval"]:
                swr = swr_counters(ctx)
                st = mvstore_row(ctx)
                series.append(dict(
                    t=round(now - t0, 1), samples_s=rows / (now - t_prev),
                    queries=queries, acceptance=acceptance(prev, swr),
                    inserted=inserted_rows(ctx) - ins0,
                    **{c: st[c] - store0[c] if c in STORE_COUNTERS else st[c]
                       for c in STORE_COLS}))
                prev, rows, queries, k = swr, 0, 0, k + 1
                t_prev = time.monotonic()
                continue
            if now - t0 >= p["seconds"]:
                break
            cur.execute(q)
            rows += cur.fetchone()[0]
            queries += 1
        sampled_for = time.monotonic() - t0
        try:
            out, _ = proc.communicate(timeout=HANG_GRACE)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"pgbench insert_a.sql (mvstore {mode}) still running "
                               f"{HANG_GRACE} s after its end")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    tps = re.search(r"^tps = ([0-9.]+)", out, re.M)
    xacts = re.search(r"^number of transactions actually processed: (\d+)", out, re.M)
    if proc.returncode != 0 or not tps:
        raise RuntimeError(f"pgbench insert_a.sql (mvstore {mode}) failed "
                           f"(exit {proc.returncode}):\n{out}")
    store_end = mvstore_row(ctx)
    # Still on the old snapshot: what it sees, and (store on) the store's own check.
    cur.execute("SELECT count(*) FROM a")
    visible = cur.fetchone()[0]
    check = None
    if mode == "on":
        cur.execute(f"SELECT downlinks, versioned, violations, visible_weight "
                    f"FROM abtree_mvstore_check('{INDEX}')")
        check = cur.fetchone()
    cur.execute("COMMIT")
    sampler.close()
    swr_end = swr_counters(ctx)
    collected = ctx.sql("SELECT abtree_mvstore_collect()", db="run")[0][0]
    store_after = mvstore_row(ctx)
    total = ctx.sql("SELECT count(*) FROM a", db="run")[0][0]
    res = dict(series=series, tps=float(tps.group(1)), inserted=int(xacts.group(1)),
               sampled_for=sampled_for, first=first, visible=visible, check=check,
               acceptance=acceptance(swr0, swr_end), store_end=store_end,
               store_after=store_after, collected=collected, total=total,
               **{c: store_end[c] - store0[c] for c in STORE_COUNTERS})
    last = series[-1] if series else {}
    ctx.progress(f"mvstore {mode}: {res['inserted']:,} rows inserted ({res['tps']:,.0f}/s); "
                 f"last interval {fmt(last.get('samples_s', float('nan')))} samples/s, "
                 f"acceptance {fmt(last.get('acceptance', float('nan')))}%; min acceptance "
                 f"{fmt(min((q['acceptance'] for q in series), default=float('nan')))}%; "
                 f"store {store_end['versions']:,} versions, "
                 f"{store_end['bytes_used'] / 2**20:.1f} MiB, fallbacks {res['fallbacks']}")
    return res


def _log_size(ctx):
    try:
        return os.path.getsize(os.path.join(ctx.cluster.dir, "server.log"))
    except OSError:
        return 0


def _log_lines(ctx, start):
    try:
        with open(os.path.join(ctx.cluster.dir, "server.log"), errors="replace") as f:
            f.seek(start)
            return f.read().splitlines()
    except OSError:
        return []


# -- the report -------------------------------------------------------------------------------
def report(ctx, p, modes, idle, results, idle_store, log_start):
    F = ctx.findings

    def verdict(ok):
        return "**met**" if ok else "**not met**"

    def pct(v):
        return "n/a" if v != v else f"{v:.2f}%"

    def mib(b):
        return f"{b / 2**20:,.1f} MiB"

    on, off = results.get("on"), results.get("off")
    summary = ["## Summary", "",
               "| measure | store on | store off | on / off | target |",
               "|---|---|---|---|---|"]
    if "on" in idle and "off" in idle:
        r_idle = idle["on"].median / idle["off"].median
        F.append(f"Target: idle sampling with the store on at most 15% slower than off "
                 f"(on / off >= 0.85): {verdict(r_idle >= 0.85)}, x{fmt(r_idle)} "
                 f"({fmt(idle['on'].median)} against {fmt(idle['off'].median)} samples/s, "
                 f"medians of {idle['on'].n} repetitions of {p['idle_seconds']} s; ranges "
                 f"{fmt(idle['on'].min)}-{fmt(idle['on'].max)} and "
                 f"{fmt(idle['off'].min)}-{fmt(idle['off'].max)}).")
        summary.append(f"| idle: samples/s (median of {idle['on'].n}) | {fmt(idle['on'].median)} "
                       f"| {fmt(idle['off'].median)} | x{fmt(r_idle)} | on / off >= 0.85: "
                       f"{verdict(r_idle >= 0.85)} |")
    if on and off and on["series"] and off["series"]:
        a_on, a_off = on["series"][-1]["acceptance"], off["series"][-1]["acceptance"]
        min_on = min(q["acceptance"] for q in on["series"])
        min_off = min(q["acceptance"] for q in off["series"])
        end_on = statistics.median(q["samples_s"] for q in on["series"][-3:])
        end_off = statistics.median(q["samples_s"] for q in off["series"][-3:])
        t_end = on["series"][-1]["t"]
        summary += [
            f"| mixed: acceptance in the last interval (to {t_end:g} s) | {pct(a_on)} | "
            f"{pct(a_off)} | | |",
            f"| mixed: lowest acceptance of any interval | {pct(min_on)} | {pct(min_off)} | | "
            f"store on >= 99%: {verdict(min_on >= 99)} |",
            f"| mixed: acceptance over the whole run | {pct(on['acceptance'])} | "
            f"{pct(off['acceptance'])} | | |",
            f"| mixed: samples/s, median of the last 3 intervals | {fmt(end_on)} | "
            f"{fmt(end_off)} | x{fmt(end_on / end_off)} | |",
            f"| mixed: samples/s, median of all intervals | "
            f"{fmt(statistics.median(q['samples_s'] for q in on['series']))} | "
            f"{fmt(statistics.median(q['samples_s'] for q in off['series']))} | "
            f"x{fmt(statistics.median(q['samples_s'] for q in on['series']) / statistics.median(q['samples_s'] for q in off['series']))} | |",
            f"| mixed: rows inserted (pgbench), rows/s | {on['inserted']:,}, "
            f"{fmt(on['tps'])}/s | {off['inserted']:,}, {fmt(off['tps'])}/s | "
            f"x{fmt(on['tps'] / off['tps'])} | |",
            f"| store at the end: versions, memory used | {on['store_end']['versions']:,}, "
            f"{mib(on['store_end']['bytes_used'])} | {off['store_end']['versions']:,}, "
            f"{mib(off['store_end']['bytes_used'])} | | fits in "
            f"{mib(on['store_end']['size_bytes'])} |",
            f"| store: versions recorded by inserts during the phase | "
            f"{on['versions_recorded']:,} | {off['versions_recorded']:,} | | |",
            f"| store: chains rebuilt by splits and repairs during the phase | "
            f"{on['chains_rebuilt']:,} | {off['chains_rebuilt']:,} | | |",
            f"| store: fallbacks during the phase (passes left unrecorded) | {on['fallbacks']:,} "
            f"| {off['fallbacks']:,} | | 0 |",
        ]
        if off["store_end"]["versions"]:
            F.append(f"With `abtree.mvstore = off` in every session, the store still held "
                     f"{off['store_end']['versions']:,} versions "
                     f"({mib(off['store_end']['bytes_used'])}) at the end of the off phase: "
                     f"inserts recorded {off['versions_recorded']:,}, and splits and repairs "
                     f"rebuilt {off['chains_rebuilt']:,} chains (from the leaf entries' xids), "
                     "so the off phase is not free of store maintenance.")
        F.append(f"Target: with the store on, the long-running sampler's acceptance rate stays "
                 f">= 99% in every interval: {verdict(min_on >= 99)} (lowest {pct(min_on)}, "
                 f"last interval {pct(a_on)}); with it off it falls to {pct(a_off)} in the last "
                 f"interval (lowest {pct(min_off)}), after {off['inserted']:,} inserts into "
                 f"{p['rows']:,} rows.")
        F.append(f"Samples/s under inserts, median of the last 3 intervals: on {fmt(end_on)}, "
                 f"off {fmt(end_off)}, on / off x{fmt(end_on / end_off)}; against idle: on "
                 f"x{fmt(end_on / idle['on'].median) if 'on' in idle else 'n/a'}, off "
                 f"x{fmt(end_off / idle['off'].median) if 'off' in idle else 'n/a'}.")
        F.append(f"The store at the end of the on phase: {on['store_end']['versions']:,} versions "
                 f"in {on['store_end']['entries']:,} entries, {mib(on['store_end']['bytes_used'])} "
                 f"of {mib(on['store_end']['size_bytes'])}; fallbacks {on['fallbacks']:,}"
                 + (" (**the store filled up**)" if on["fallbacks"] else "") + "; after the "
                 f"sampler committed, `abtree_mvstore_collect()` dropped {on['collected']:,} "
                 f"versions and {on['store_after']['versions']:,} were left.")
        if on["check"] is not None:
            dl, ver, viol, vw = on["check"]
            ok = viol == 0 and int(vw) == on["visible"]
            F.append(f"`abtree_mvstore_check('{INDEX}')` on the sampler's old snapshot at the "
                     f"end of the on phase: {dl:,} downlinks, {ver:,} versioned, "
                     f"{viol:,} violations, visible weight {int(vw):,} against {on['visible']:,} "
                     f"rows the snapshot sees: " + ("consistent." if ok else "**inconsistent**."))
    summary += ["", "Acceptance rate = rows returned / (rows returned + draws the tree "
                "rejected + draws of rows the snapshot cannot see), from `abtree_status()`'s "
                "`swr` counters. The intervals are `interval` s apart from the start of the "
                "inserts; the store's versions and memory are read from `abtree_mvstore`."]
    ctx.sections.append("\n".join(summary))

    # over time, both modes side by side
    if modes:
        n = max(len(results[m]["series"]) for m in modes)
        head = ["t (s)"]
        cols = (("inserted", "rows inserted"), ("samples_s", "samples/s"),
                ("acceptance", "acceptance %"), ("versions", "versions"),
                ("bytes_used", "store MiB"), ("chains_rebuilt", "chains rebuilt"),
                ("fallbacks", "fallbacks"))
        for col, label in cols:
            head += [f"{label} {m}" for m in modes]
        L = ["## Over time", "", f"Every interval of the mixed phases ({p['inserters']} "
             "inserting clients, one sampler on one old snapshot); `t` is the end of the "
             "interval as the on phase measured it (the off phase's ends are within a query "
             "of the same times). `rows inserted` lags up to a second (statistics reporting); "
             "`versions` and `store MiB` are what the store holds, `chains rebuilt` and "
             "`fallbacks` count from the start of the phase.",
             "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for i in range(n):
            pts = {m: (results[m]["series"][i] if i < len(results[m]["series"]) else None)
                   for m in modes}
            ref = pts.get("on") or pts.get("off")
            cells = [f"{ref['t']:g}"]
            for col, _ in cols:
                for m in modes:
                    v = pts[m][col] if pts[m] else None
                    cells.append("" if v is None else
                                 f"{v:.2f}" if col == "acceptance" else
                                 f"{v / 2**20:.1f}" if col == "bytes_used" else
                                 fmt(v) if col == "samples_s" else f"{v:,}")
            L.append("| " + " | ".join(cells) + " |")
        ctx.sections.append("\n".join(L))

    # checks and the server log
    for m in modes:
        r = results[m]
        if r["visible"] != p["rows"] or r["first"] != p["n"]:
            F.append(f"**Check failed** ({m}): the sampler's snapshot saw {r['visible']:,} rows "
                     f"(expected {p['rows']:,}) and its first swr({p['n']}) returned "
                     f"{r['first']:,} rows.")
        if r["total"] != p["rows"] + r["inserted"]:
            F.append(f"**Check failed** ({m}): A has {r['total']:,} rows after the phase, "
                     f"expected {p['rows']:,} + {r['inserted']:,}.")
        short = [q for q in r["series"] if q["queries"] and q["samples_s"] <= 0]
        if short:
            F.append(f"**{len(short)} intervals of the {m} phase returned no rows.**")
    ctx.notes.append("The store before the mixed phases (after the idle phase): "
                     + ", ".join(f"{c} {idle_store[c]}" for c in STORE_COLS) + ".")
    bad = [l for l in _log_lines(ctx, log_start)
           if re.search(r"\b(ERROR|WARNING|FATAL|PANIC)\b|weight store", l)]
    if bad:
        F.append(f"The server log has {len(bad)} lines with ERROR, WARNING, FATAL, PANIC or "
                 "about the weight store during the run; the first: "
                 + "; ".join(f"`{l.strip()[:160]}`" for l in bad[:3]) + ".")
    else:
        F.append("The server log has no ERROR, WARNING, FATAL or PANIC lines and no weight "
                 "store messages from this run.")
