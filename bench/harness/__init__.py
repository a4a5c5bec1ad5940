"""abtree's benchmark harness; bench/run is its command line, bench/README.md its manual."""

from .registry import Experiment, Metric, Variant, experiment  # noqa: F401
from .stats import Stats, timed  # noqa: F401
