"""bench/results/<experiment>.md and .png: the table with median, spread and ratio to the
baseline, the command, the settings and the machine."""

import datetime
import hashlib
import os
import platform
import statistics
import subprocess
import time

from .stats import fmt

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _git(*args):
    try:
        r = subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True,
                           env=dict(os.environ, GIT_OPTIONAL_LOCKS="0"), timeout=10)
        return r.stdout.strip() if r.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


def _filesystem(path):
    best = ("", "?", "?")
    for line in _read("/proc/mounts").splitlines():
        dev, mnt, fstype = line.split()[:3]
        if (path + "/").startswith(mnt.rstrip("/") + "/") and len(mnt) >= len(best[0]):
            best = (mnt, fstype, dev)
    return f"{best[1]} on {best[2]}"


def machine_facts(conn, cluster_dir):
    cpu = next((l.split(":", 1)[1].strip() for l in _read("/proc/cpuinfo").splitlines()
                if l.startswith("model name")), platform.processor() or "?")
    mem_kb = next((int(l.split()[1]) for l in _read("/proc/meminfo").splitlines()
                   if l.startswith("MemTotal:")), 0)
    cur = conn.cursor()
    cur.execute("SELECT version()")
    version = cur.fetchone()[0]
    lib = _abtree_library()
    commit = _git("rev-parse", "--short", "HEAD")
    if commit and _git("status", "--porcelain", "--untracked-files=no"):
        commit += " with uncommitted changes"
    return [
        ("date", datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")),
        ("CPU", cpu),
        ("cores", str(os.cpu_count())),
        ("memory", f"{mem_kb / 2**20:.1f} GiB"),
        ("kernel", platform.release()),
        ("PostgreSQL", version),
        ("pg_config", os.environ.get("PG_CONFIG", "/usr/lib/postgresql/15/bin/pg_config")),
        ("data directory", f"{os.path.dirname(cluster_dir)} ({_filesystem(cluster_dir)})"),
        ("commit", commit or "unknown (not a git checkout)"),
        ("abtree library", lib),
    ]


def _abtree_library():
    """Which abtree.so the server loaded: it is installed system-wide by whoever built last,
    not necessarily from the commit above."""
    from .cluster import PG_CONFIG
    try:
        libdir = subprocess.run([PG_CONFIG, "--pkglibdir"], capture_output=True, text=True,
                                check=True).stdout.strip()
        path = os.path.join(libdir, "abtree.so")
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()[:12]
        mtime = datetime.datetime.fromtimestamp(os.path.getmtime(path), datetime.timezone.utc)
        return f"{path}, installed {mtime:%Y-%m-%d %H:%M} UTC, sha256 {digest}"
    except (OSError, subprocess.SubprocessError):
        return "not installed"


def server_settings(conn):
    """Every setting not at its built-in default, as the server reports it."""
    cur = conn.cursor()
    cur.execute("SELECT name, setting, unit, source FROM pg_settings "
                "WHERE source NOT IN ('default', 'override', 'client', 'session') ORDER BY name")
    return [f"{n} = {s}{(' ' + u) if u else ''}  ({src})" for n, s, u, src in cur.fetchall()]


def ratios(exp, rows):
    """{id(row): ratio to the baseline at the same point}, >1 meaning better than the baseline."""
    base = {tuple(sorted(r.point.items())): r for r in rows if r.variant == exp.baseline}
    out = {}
    for r in rows:
        b = base.get(tuple(sorted(r.point.items())))
        if b is None or r.variant == exp.baseline:
            continue
        if exp.metric.lower_is_better:
            out[id(r)] = b.stats.median / r.stats.median
        else:
            out[id(r)] = r.stats.median / b.stats.median
    return out


def headline(exp, ctx):
    """One line per variant of ours: its ratio to the baseline at every point, or why it was
    not measured; then the experiment's own findings (ctx.findings)."""
    rat = ratios(exp, ctx.rows)
    lines = []
    for v in exp.variants:
        if not v.ours:
            continue
        if v.name in ctx.skipped:
            lines.append(f"`{v.name}` (ours) not measured: {ctx.skipped[v.name]}.")
            continue
        pts = [", ".join(f"{k}={val}" for k, val in r.point.items()) + f": x{fmt(rat[id(r)])}"
               for r in ctx.rows if r.variant == v.name and id(r) in rat]
        if len(pts) > 12:       # many points: the range, the table has each one
            rs = sorted(rat[id(r)] for r in ctx.rows if r.variant == v.name and id(r) in rat)
            lines.append(f"`{v.name}` (ours) vs `{exp.baseline}` (>1: ours is better) at "
                         f"{len(rs)} points: x{fmt(rs[0])} to x{fmt(rs[-1])}, median "
                         f"x{fmt(statistics.median(rs))}, better at {sum(x > 1 for x in rs)}.")
        elif pts:
            lines.append(f"`{v.name}` (ours) vs `{exp.baseline}` (>1: ours is better): "
                         + "; ".join(pts) + ".")
    if exp.variants and all(v.name in ctx.skipped for v in exp.variants if v.ours):
        lines.append("No variant of ours could run: this run is baseline-only.")
    return lines + list(getattr(ctx, "findings", []))


def _table(exp, ctx):
    rows = ctx.rows
    rat = ratios(exp, rows)
    keys = list(dict.fromkeys(k for r in rows for k in r.point))
    extras = list(dict.fromkeys(k for r in rows for k in r.extra))
    m = exp.metric
    head = keys + ["variant", f"median {m.unit}", "min - max", "IQR", "reps"] + extras + \
        [f"vs {exp.baseline}"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        q1, q3 = r.stats.quartiles()
        cells = [str(r.point.get(k, "")) for k in keys]
        cells += [f"`{r.variant}`", fmt(r.stats.median), f"{fmt(r.stats.min)} - {fmt(r.stats.max)}",
                  f"{fmt(q1)} - {fmt(q3)}", str(r.stats.n)]
        cells += [fmt(r.extra[k]) if isinstance(r.extra.get(k), (int, float)) else
                  str(r.extra.get(k, "")) for k in extras]
        cells.append(f"x{fmt(rat[id(r)])}" if id(r) in rat else
                     ("1 (baseline)" if r.variant == exp.baseline else ""))
        out.append("| " + " | ".join(cells) + " |")
    better = "lower" if m.lower_is_better else "higher"
    out.append("")
    out.append(f"{m.name} in {m.unit}, {better} is better; median over the repetitions, with "
               "min - max and the interquartile range. "
               + (f"`vs {exp.baseline}`: {exp.baseline}'s median / the variant's median"
                  if m.lower_is_better else
                  f"`vs {exp.baseline}`: the variant's median / {exp.baseline}'s median")
               + ", so >1 means better than the baseline.")
    return out


def plot(exp, ctx, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = list(dict.fromkeys(r.point.get(exp.panel) for r in ctx.rows)) if exp.panel else [None]
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels) + 0.8, 4.2),
                             squeeze=False, sharey=True)
    for ax, panel in zip(axes[0], panels):
        xs_all = []
        for i, v in enumerate(exp.variants):    # a variant keeps its colour in every panel
            rows = [r for r in ctx.rows if r.variant == v.name
                    and (panel is None or r.point.get(exp.panel) == panel)]
            if not rows:
                continue
            xs = [r.point[exp.x] for r in rows]
            xs_all += xs
            med = [r.stats.median for r in rows]
            err = [[r.stats.median - r.stats.min for r in rows],
                   [r.stats.max - r.stats.median for r in rows]]
            ax.errorbar(xs, med, yerr=err, marker="o" if v.ours else "s", capsize=3,
                        color=f"C{i % 10}",
                        linestyle="-" if v.ours else "--",
                        label=f"{v.name} ({'ours' if v.ours else 'baseline'})")
        if exp.logx:
            ax.set_xscale("log")
        if exp.logy:
            ax.set_yscale("log")
        if xs_all and all(isinstance(x, (int, float)) for x in xs_all) and not exp.logx:
            ax.set_xticks(sorted(set(xs_all)))
        ax.set_xlabel(exp.x)
        ax.grid(True, which="both", alpha=0.3)
        if panel is not None:
            ax.set_title(f"{exp.panel}: {panel}", fontsize=10)
        ax.legend(fontsize=8)
    if not exp.logy:    # after all panels are drawn: the y axis is shared
        axes[0][0].set_ylim(bottom=0)
    axes[0][0].set_ylabel(f"{exp.metric.name} ({exp.metric.unit}), median, bars min-max")
    finish_figure(fig, exp, ctx, path)


def finish_figure(fig, exp, ctx, path):
    """Title, the variants not measured, and the PNG: the end of every plot."""
    import matplotlib.pyplot as plt
    fig.suptitle(f"{exp.name} ({exp.figure}), {ctx.mode} mode", fontsize=11)
    skipped = [f"{n}: {why}" for n, why in ctx.skipped.items()]
    if skipped:
        fig.text(0.01, 0.01, "not measured: " + "; ".join(skipped), fontsize=7, wrap=True)
    fig.tight_layout(rect=(0, 0.06 if skipped else 0, 1, 1))
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write(exp, ctx, results_dir, command, machine, settings_at_start):
    os.makedirs(results_dir, exist_ok=True)
    md_path = os.path.join(results_dir, f"{exp.name}.md")
    png_path = os.path.join(results_dir, f"{exp.name}.png")
    (exp.plot or plot)(exp, ctx, png_path)
    date = dict(machine)["date"]
    L = [f"# {exp.name}: {exp.title}", "",
         f"Reproduces {exp.figure}. {exp.about}".strip(), "",
         f"Produced by `{command}` ({ctx.mode} mode) on {date}, in "
         f"{(time.monotonic() - ctx.started) / 60:.1f} minutes; every variant was measured in "
         "this same run, on the same throwaway cluster.", ""]
    L += ["## Results", ""]
    L += [f"- {h}" for h in headline(exp, ctx)] + [""]
    L += _table(exp, ctx) + [""]
    for block in getattr(ctx, "sections", []):
        L += [block, ""]
    L += [f"![{exp.name}]({exp.name}.png)", ""]
    L += ["## Variants", ""]
    for v in exp.variants:
        role = "ours" if v.ours else ("baseline" if v.name == exp.baseline else "other baseline")
        state = f" **Not measured: {ctx.skipped[v.name]}.**" if v.name in ctx.skipped else ""
        L.append(f"- `{v.name}` ({role}): {v.label}.{state}")
    L += ["", f"## Parameters ({ctx.mode} mode)", ""]
    L += [f"- {k} = {v}" for k, v in exp.params(ctx.mode).items()]
    L += ["", "## Server", "",
          "Settings the harness wrote to the cluster's configuration at start (besides port and "
          "socket directory):", ""]
    L += ["    " + line for line in ctx.cluster_conf_at_start] + [""]
    if ctx.restarts:
        L += ["Changed by restarts during the run, in order: "
              + "; ".join(", ".join(f"{k} = {v}" for k, v in r.items()) for r in ctx.restarts)
              + ".", ""]
    L += ["All settings not at their built-in default at start (pg_settings):", ""]
    L += ["    " + line for line in settings_at_start] + [""]
    feats = ", ".join(f"{k}: {'yes' if v else 'no'}" for k, v in ctx.features.items())
    L += [f"Features found: {feats}."]
    L += [f"{k}: {v}." for k, v in ctx.feature_details.items()]
    for n in ctx.cluster.notes + ctx.notes:
        L += ["", n]
    L += ["", "## Machine", "", "| | |", "|---|---|"]
    L += [f"| {k} | {v} |" for k, v in machine]
    if ctx.other_cpu:
        secs, share, wall = ctx.other_cpu
        L.append(f"| other load | processes other than this run's used {secs:.0f} core-seconds "
                 f"in its {wall:.0f} s (not counting the quiet gate's waiting), "
                 f"{100 * share:.0f}% of the machine |")
    if ctx.quiet_wait:
        L.append(f"| quiet gate | before each point and each round of measurements longer than "
                 f"a second, the run waited for other processes to use under 10% of the CPU: "
                 f"{ctx.quiet_waited:.0f} s in all; "
                 f"{ctx.busy_rounds} round(s) started busy after {ctx.quiet_wait:g} s of waiting |")
    with open(md_path, "w") as f:
        f.write("\n".join(L) + "\n")
    return md_path, png_path
