"""Repeated measurements: every experiment reports median and spread, never a single number."""

import statistics
import time
from dataclasses import dataclass, field


@dataclass
class Stats:
    values: list = field(default_factory=list)

    @property
    def n(self):
        return len(self.values)

    @property
    def median(self):
        return statistics.median(self.values)

    @property
    def min(self):
        return min(self.values)

    @property
    def max(self):
        return max(self.values)

    def quartiles(self):
        """(q1, q3); with fewer than 4 values these are close to min and max."""
        if self.n < 2:
            return self.values[0], self.values[0]
        q = statistics.quantiles(self.values, n=4, method="inclusive")
        return q[0], q[2]

    @property
    def spread(self):
        """(max - min) / median: how far apart the repetitions were."""
        return (self.max - self.min) / self.median if self.median else float("nan")


def timed(fn):
    """Wrap fn so that calling it returns its wall-clock time in seconds."""
    def run():
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0
    return run


def repeat_interleaved(fns, reps, warmup=0, on_value=None, before_round=None):
    """Call every fn in fns (a dict name -> fn returning a number) reps times, round-robin, so
    that drift (caches, background work) hits all of them alike; the starting fn rotates each
    round.  warmup rounds are run first and discarded.  Returns {name: Stats}."""
    names = list(fns)
    out = {name: Stats() for name in names}
    for i in range(warmup + reps):
        if before_round:
            before_round()
        k = i % len(names) if names else 0
        for name in names[k:] + names[:k]:
            value = fns[name]()
            if i >= warmup:
                out[name].values.append(value)
                if on_value:
                    on_value(name, i - warmup + 1, reps, value)
    return out


def fmt(v):
    """A number with about three significant digits, thousands separated."""
    if v != v:  # NaN
        return "n/a"
    a = abs(v)
    if a >= 100:
        return f"{v:,.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.3g}"
