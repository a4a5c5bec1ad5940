"""What the standalone benchmark scripts (bench/*.py, outside bench/run) share: a throwaway
cluster with abtree loaded, a log that counts seconds from the start, and the start time and
duration their reports name."""

import contextlib
import datetime
import sys
import time

from harness.cluster import Cluster


class Run:
    """The start of a benchmark run, for its log lines and its report."""

    def __init__(self):
        self.started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        self.t0 = time.monotonic()

    def log(self, msg):
        print(f"[{time.monotonic() - self.t0:6.0f} s] {msg}", flush=True)

    def minutes(self):
        return (time.monotonic() - self.t0) / 60


@contextlib.contextmanager
def abtree_cluster(settings):
    """A throwaway cluster with these settings and abtree preloaded (exits if it did not load)."""
    with Cluster(settings) as cl:
        if cl.preload != "abtree":
            sys.exit("abtree did not load: " + " ".join(cl.notes))
        yield cl


def run_and_report(settings, args, run_all, report):
    """run_all(cl, args, log) on a throwaway cluster with these settings, then
    report(args, *what run_all returned, started, minutes)."""
    run = Run()
    with abtree_cluster(settings) as cl:
        results = run_all(cl, args, run.log)
    report(args, *results, run.started, run.minutes())


def ratio_bars(ax, xlabels, series):
    """Side-by-side bars of ratios, one group per x label and one bar per series
    ({label: values}), each bar labelled with its value, and a dashed line at 1 (the baseline)."""
    width = 0.8 / len(series)
    for j, (label, vals) in enumerate(series.items()):
        offset = (j - (len(series) - 1) / 2) * width
        bars = ax.bar([x + offset for x in range(len(xlabels))], vals, width, label=label)
        for b, v in zip(bars, vals):
            ax.text(b.get_x() + b.get_width() / 2, v, f"{v:.2f}x", ha="center", va="bottom",
                    fontsize=8)
    ax.axhline(1.0, color="black", linestyle="--", linewidth=0.8)
    ax.set_xticks(range(len(xlabels)))
    ax.set_xticklabels(xlabels)
