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
