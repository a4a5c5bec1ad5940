"""Paper 000 Fig. 15: sampling throughput and acceptance rate over time while a background
client deletes about 5% of the rows and VACUUM then cleans up.  swr against BERNOULLI at the
same expected sample size, each over the same timeline from the same loaded data."""

import math
import os
import statistics
import subprocess
import threading
import time

from harness import Metric, Stats, Variant, experiment
from harness import report
from harness.context import PGBENCH_DIR
from harness.stats import fmt
from experiments import mvstore     # the swr counters and the acceptance rate

INDEX = "a_y"
ROWS_PER_DELETE = 100       # rows one delete_a.sql transaction removes, on average
COLORS = {"swr": "C0", "bernoulli": "C1"}
PHASES = ("before the deletes", "deleting", "deleted, before VACUUM", "while VACUUM ran",
          "after VACUUM")
HANG_GRACE = 60


def plot_timeline(exp, ctx, path):
    """Acceptance rate (swr) and samples/s (both) over time, the delete and VACUUM shaded."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = getattr(ctx, "timeline_runs", {})
    fig, axes = plt.subplots(1, 2, figsize=(11.5, 4.4), squeeze=False)
    acc_ax, rate_ax = axes[0]
    for name, r in runs.items():
        t = [q["t"] for q in r["series"]]
        rate_ax.plot(t, [q["samples_s"] for q in r["series"]], marker="o", markersize=3,
                     color=COLORS.get(name), label=name)
        if name == "swr":
            acc_ax.plot(t, [q["acceptance"] for q in r["series"]], marker="o", markersize=3,
                        color=COLORS["swr"], label="swr: rows / draws")
        ev = r["events"]
        for ax in (acc_ax, rate_ax):
            ax.axvspan(ev["delete_start"], ev["delete_end"], color=COLORS.get(name),
                       alpha=0.08)
            ax.axvspan(ev["vacuum_start"], ev["vacuum_end"], color=COLORS.get(name),
                       alpha=0.25)
    acc_ax.set_ylabel("acceptance rate in the interval (%)")
    lows = [q["acceptance"] for r in runs.values() for q in r["series"]
            if q["acceptance"] == q["acceptance"]]
    acc_ax.set_ylim(min([90.0] + [v - 1 for v in lows]), 100.5)
    rate_ax.set_ylabel("samples/s in the interval")
    rate_ax.set_ylim(bottom=0)
    for ax, title in ((acc_ax, "acceptance rate of swr(n)"),
                      (rate_ax, "sampling throughput (one sampling client)")):
        ax.set_xlabel("seconds (light: deleting; dark: VACUUM)")
        ax.set_title(title, fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, loc="lower left")
    report.finish_figure(fig, exp, ctx, path)


@experiment(
    name="vacuum_acceptance",
    title="sampling throughput and acceptance rate while rows are deleted and vacuumed",
    figure="paper 000 Fig. 15",
    about=(
        "A(x, y) with `rows` random rows and an abtree index on y (which also serves the "
        "deletes), VACUUM ANALYZE, autovacuum off. Each variant runs the same timeline on a "
        "fresh file copy of that database, prewarmed: one client samples back to back "
        "for `seconds` (`SELECT count(*) FROM a TABLESAMPLE swr(n)`, or BERNOULLI at the "
        "same expected sample size, `100 * n / rows` percent); at `delete_at` s pgbench "
        "starts one client running `bench/pgbench/delete_a.sql` (the rows of a random y "
        "range, about 100 per transaction), rate-limited (`-R`) so that it deletes about "
        "`delete_fraction` of the rows in `delete_seconds` (ranges overlap, so a little "
        "less); at `vacuum_at` s the harness runs `VACUUM a` on a connection of its own. "
        "Every `interval` s it records the sampler's samples/s, and for swr the acceptance "
        "rate = Δrows / (Δrows + Δtree_rejects + Δinvisible) from `abtree_status()`'s "
        "cumulative `swr` counters (only the sampler samples), and the table's deleted and "
        "dead tuples from `pg_stat_user_tables`. A draw that lands on a deleted row is "
        "rejected and drawn again until VACUUM removes the entry and subtracts its weight, "
        "so the acceptance rate should fall to about 1 - the deleted fraction and return to "
        "100%. The paper's timeline (10M rows, 120 s, deletes from 60 s to 91 s, VACUUM at "
        "96 s, 10 sampling threads) is the full mode's; quick mode shortens it. The main "
        "table gives, per phase, the median and spread of its intervals (an interval that "
        "overlaps the deletes or the VACUUM counts with them, so `before`, `deleted, before "
        "VACUUM` and `after VACUUM` hold only intervals wholly inside those phases); the ratio is swr's samples/s over BERNOULLI's in the same phase."),
    metric=Metric("sampling throughput", "samples/s", lower_is_better=False),
    variants=[
        Variant("swr", "`TABLESAMPLE swr(n)`: n draws through the abtree index, a draw of a "
                "deleted row rejected and redrawn", ours=True, needs=("abtree", "swr")),
        Variant("bernoulli", "`TABLESAMPLE BERNOULLI(100 * n / rows)`: reads every page, "
                "keeps each visible row with that probability"),
    ],
    baseline="bernoulli",
    x="phase",
    plot=plot_timeline,
    quick=dict(rows=1_000_000, n=1000, seconds=60, delete_at=15, delete_seconds=15,
               delete_fraction=0.05, vacuum_at=36, interval=2, seed=1),
    full=dict(rows=10_000_000, n=1000, seconds=120, delete_at=60, delete_seconds=31,
              delete_fraction=0.05, vacuum_at=96, interval=3, seed=1),
    settings={"shared_buffers": "1GB"},
)
def run(ctx, p):
    ctx.timeline_runs = {}
    names = [v.name for v in ctx.variants]
    ctx.load("a", rows=p["rows"], seed=p["seed"])
    if ctx.has("abtree"):
        ctx.sql(f"CREATE INDEX {INDEX} ON a USING abtree (y)")
    else:
        ctx.sql(f"CREATE INDEX {INDEX} ON a (y)")
        ctx.notes.append("abtree is missing: the deletes used a btree index on y.")
    ctx.sql(["VACUUM ANALYZE a", "CHECKPOINT"])
    tsize, isize = ctx.sql("SELECT pg_size_pretty(pg_relation_size('a')), "
                           f"pg_size_pretty(pg_relation_size('{INDEX}'))")[0]
    ctx.notes.append(f"At the start of each timeline A has {p['rows']:,} rows ({tsize}); its "
                     f"index on y is {isize}.")
    ctx.notes.append("The paper ran 10 sampling threads; this machine has 2 cores, shared by "
                     "the one sampler, the deleting client, VACUUM and the server's "
                     "background work.")
    ctx.disconnect()
    for name in names:
        fresh_run_db(ctx)
        ctx.timeline_runs[name] = timeline(ctx, p, name)
        ctx.disconnect("run")
    for name in names:
        r = ctx.timeline_runs[name]
        for phase in PHASES:
            pts = [q for q in r["series"] if q["phase"] == phase]
            if not pts:
                continue
            extra = {"intervals": len(pts)}
            if name == "swr":
                extra["acceptance %"] = statistics.median(q["acceptance"] for q in pts)
                extra["min acceptance %"] = min(q["acceptance"] for q in pts)
            ctx.record(name, {"phase": phase}, Stats([q["samples_s"] for q in pts]), **extra)
    report_timeline(ctx, p, names)


def fresh_run_db(ctx):
    """Database run := a file copy of the loaded database, prewarmed, statistics reset."""
    ctx.disconnect("run")
    ctx.clone_db("bench", "run")
    if ctx.has("pg_prewarm"):
        ctx.sql(["SELECT pg_prewarm('a')", f"SELECT pg_prewarm('{INDEX}')"], db="run")
    ctx.sql("SELECT pg_stat_reset()", db="run")


def swr_counters(ctx):
    return mvstore.swr_counters(ctx) if ctx.has("abtree") else {}


def table_counts(ctx):
    """(n_tup_del, n_dead_tup) of run.a, as backends have reported them."""
    r = ctx.sql("SELECT n_tup_del, n_dead_tup FROM pg_stat_user_tables WHERE relname = 'a'",
                db="run")
    return r[0] if r else (0, 0)


class Vacuum(threading.Thread):
    """VACUUM a on a connection of its own; start and end in the timeline's clock."""

    def __init__(self, ctx, t0):
        super().__init__(daemon=True)
        self.conn = ctx.cluster.connect("run")
        self.conn.autocommit = True
        self.t0 = t0
        self.start_t = self.end_t = None
        self.error = None

    def run(self):
        try:
            self.start_t = time.monotonic() - self.t0
            self.conn.cursor().execute("VACUUM a")
            self.end_t = time.monotonic() - self.t0
        except Exception as e:          # reported by the timeline
            self.error = e
        finally:
            self.conn.close()


def phase_of(start, end, ev):
    """The phase of the interval [start, end]: one that overlaps the VACUUM, or touches the
    deletes, is counted with them, so that the other phases hold only clean intervals."""
    if end <= ev["delete_start"]:
        return PHASES[0]
    if start >= ev["vacuum_end"]:
        return PHASES[4]
    if start < ev["vacuum_end"] and end > ev["vacuum_start"]:
        return PHASES[3]
    if start >= ev["delete_end"]:
        return PHASES[2]
    return PHASES[1]


def delete_command(ctx, p):
    width = round(ROWS_PER_DELETE * 2**31 / p["rows"])
    rate = p["delete_fraction"] * p["rows"] / ROWS_PER_DELETE / p["delete_seconds"]
    return [os.path.join(ctx.cluster.bindir, "pgbench"), "-n", "-M", "prepared", "-c", "1",
            "-R", f"{rate:.2f}", "-T", str(p["delete_seconds"]), f"--random-seed={p['seed']}",
            "-D", f"width={width}", "-f", os.path.join(PGBENCH_DIR, "delete_a.sql"), "run"]


def timeline(ctx, p, name):
    """One sampler for p["seconds"], the deletes and the VACUUM at their times; returns the
    intervals, the events' times and the counts before and after."""
    ctx.wait_quiet()
    ctx.progress(f"{name}: {p['seconds']} s timeline, deletes at {p['delete_at']} s, "
                 f"VACUUM at {p['vacuum_at']} s")
    q = (f"SELECT count(*) FROM a TABLESAMPLE swr({p['n']})" if name == "swr" else
         f"SELECT count(*) FROM a TABLESAMPLE BERNOULLI({100.0 * p['n'] / p['rows']!r})")
    rows0 = ctx.sql("SELECT count(*) FROM a", db="run")[0][0]
    sampler = ctx.cluster.connect("run")
    sampler.autocommit = True
    cur = sampler.cursor()
    series, proc, vac = [], None, None
    ev = {"delete_start": math.inf, "delete_end": math.inf,
          "vacuum_start": math.inf, "vacuum_end": math.inf}
    prev = swr_counters(ctx)
    del_prev = table_counts(ctx)[0]
    try:
        t0 = t_prev = time.monotonic()
        rows = queries = 0
        k = 1
        while True:
            now = time.monotonic() - t0
            if proc is None and now >= p["delete_at"]:
                proc = subprocess.Popen(delete_command(ctx, p), env=ctx.cluster.client_env(),
                                        text=True, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT)
                ev["delete_start"] = now
            if proc is not None and ev["delete_end"] == math.inf and proc.poll() is not None:
                ev["delete_end"] = now
            if vac is None and now >= p["vacuum_at"]:
                vac = Vacuum(ctx, t0)
                vac.start()
            if vac is not None and vac.start_t is not None:
                ev["vacuum_start"] = vac.start_t
                if vac.end_t is not None:
                    ev["vacuum_end"] = vac.end_t
            if now >= k * p["interval"]:
                swr = swr_counters(ctx)
                deleted, dead = table_counts(ctx)
                t_end = time.monotonic()
                series.append(dict(t=round(now, 1), t_start=t_prev - t0,
                                   samples_s=rows / (t_end - t_prev), queries=queries,
                                   acceptance=mvstore.acceptance(prev, swr), deleted=deleted,
                                   dead=dead))
                prev, rows, queries, k, t_prev = swr, 0, 0, k + 1, t_end
                continue
            if now >= p["seconds"]:
                break
            cur.execute(q)
            rows += cur.fetchone()[0]
            queries += 1
        if proc is not None:
            try:
                out, _ = proc.communicate(timeout=HANG_GRACE)
            except subprocess.TimeoutExpired:
                raise RuntimeError(f"pgbench delete_a.sql ({name}) still running")
            if proc.returncode != 0:
                raise RuntimeError(f"pgbench delete_a.sql ({name}) failed:\n{out}")
            if ev["delete_end"] == math.inf:
                ev["delete_end"] = time.monotonic() - t0
        if vac is not None:
            vac.join(HANG_GRACE)
            if vac.error or vac.end_t is None:
                raise RuntimeError(f"VACUUM ({name}) failed or hung: {vac.error}")
            ev["vacuum_start"], ev["vacuum_end"] = vac.start_t, vac.end_t
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        sampler.close()
    for pt in series:
        pt["phase"] = phase_of(pt["t_start"], pt["t"], ev)
    rows1 = ctx.sql("SELECT count(*) FROM a", db="run")[0][0]
    weight = None
    if ctx.has("abtree"):
        weight = ctx.sql(f"SELECT total_weight, entries FROM abtree_stats('{INDEX}')",
                         db="run")[0]
    res = dict(series=series, events=ev, rows0=rows0, rows1=rows1, weight=weight)
    low = min((q["acceptance"] for q in series if q["acceptance"] == q["acceptance"]),
              default=float("nan"))
    ctx.progress(f"{name}: deleted {rows0 - rows1:,} rows from {ev['delete_start']:.0f} to "
                 f"{ev['delete_end']:.0f} s, VACUUM {ev['vacuum_start']:.0f}-"
                 f"{ev['vacuum_end']:.1f} s; lowest acceptance {fmt(low)}%")
    return res


def phase_median(r, phase, key):
    vals = [q[key] for q in r["series"] if q["phase"] == phase and q[key] == q[key]]
    return statistics.median(vals) if vals else float("nan")


def report_timeline(ctx, p, names):
    F = ctx.findings
    runs = ctx.timeline_runs
    for name in names:
        r = runs[name]
        ev = r["events"]
        gone = r["rows0"] - r["rows1"]
        F.append(f"{name}: the deletes removed {gone:,} rows ({100.0 * gone / r['rows0']:.2f}% "
                 f"of {r['rows0']:,}) from {ev['delete_start']:.1f} s to "
                 f"{ev['delete_end']:.1f} s; VACUUM ran from {ev['vacuum_start']:.1f} s to "
                 f"{ev['vacuum_end']:.1f} s ({ev['vacuum_end'] - ev['vacuum_start']:.1f} s).")
    sw = runs.get("swr")
    if sw:
        before = phase_median(sw, PHASES[0], "acceptance")
        lowest = min(q["acceptance"] for q in sw["series"])
        after_pts = [q["acceptance"] for q in sw["series"] if q["phase"] == PHASES[4]]
        after_min = min(after_pts) if after_pts else float("nan")
        expect = 100.0 * sw["rows1"] / sw["rows0"]
        F.append(f"swr acceptance: {fmt(before)}% before the deletes (median), lowest "
                 f"{fmt(lowest)}% (expected about {expect:.2f}% = live rows / index entries "
                 f"once all deletes are done), lowest after VACUUM {fmt(after_min)}%: "
                 + ("**back to 100%**, as in the paper." if after_min >= 99.99 else
                    "**not back to 100%**."))
        if sw["weight"] is not None:
            w, entries = sw["weight"]
            ok = int(w) == sw["rows1"] and entries == sw["rows1"]
            F.append(f"After VACUUM the index's total weight is {int(w):,} and it holds "
                     f"{entries:,} entries, against {sw['rows1']:,} rows: "
                     + ("exact." if ok else "**not equal**."))
        b = phase_median(sw, PHASES[0], "samples_s")
        parts = [f"{ph}: x{fmt(phase_median(sw, ph, 'samples_s') / b)}" for ph in PHASES[1:]
                 if phase_median(sw, ph, "samples_s") == phase_median(sw, ph, "samples_s")]
        F.append("swr samples/s against its own rate before the deletes (medians of the "
                 "intervals): " + "; ".join(parts) + ".")
    be = runs.get("bernoulli")
    if sw and be:
        parts = []
        for ph in PHASES:
            a, c = phase_median(sw, ph, "samples_s"), phase_median(be, ph, "samples_s")
            if a == a and c == c:
                parts.append(f"{ph} x{fmt(a / c)}")
        F.append("swr against BERNOULLI, samples/s (medians per phase): " + "; ".join(parts)
                 + ".")

    head = ["t (s)"]
    cols = (("samples_s", "samples/s"), ("acceptance", "acceptance %"),
            ("deleted", "rows deleted"), ("dead", "dead tuples"), ("phase", "phase"))
    for col, label in cols:
        for name in names:
            if col == "acceptance" and name != "swr":
                continue
            head.append(f"{label} {name}")
    L = ["## Over time", "", "Every interval of both timelines; `t` is the interval's end. "
         "`rows deleted` and `dead tuples` come from `pg_stat_user_tables`, which lags up to "
         "a second.", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    n = max(len(runs[m]["series"]) for m in names)
    for i in range(n):
        pts = {m: runs[m]["series"][i] if i < len(runs[m]["series"]) else None for m in names}
        ref = next(v for v in pts.values() if v)
        cells = [f"{ref['t']:g}"]
        for col, _ in cols:
            for m in names:
                if col == "acceptance" and m != "swr":
                    continue
                v = pts[m][col] if pts[m] else None
                cells.append("" if v is None else v if col == "phase" else
                             f"{v:.2f}" if col == "acceptance" else
                             fmt(v) if col == "samples_s" else f"{v:,}")
        L.append("| " + " | ".join(cells) + " |")
    ctx.sections.append("\n".join(L))
