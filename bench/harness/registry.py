"""The experiment registry.  An experiment is a run function in bench/experiments/<name>.py,
registered with the @experiment decorator, which declares everything the report needs:

    @experiment(name="...", title="...", figure="paper 000 Fig. 9(a)",
                metric=Metric("latency", "ms", lower_is_better=True),
                variants=[Variant("swr", "...", ours=True, needs=("abtree", "swr")),
                          Variant("bernoulli", "...")],
                baseline="bernoulli", x="n",
                quick=dict(...), full=dict(...))
    def run(ctx, p): ...

run(ctx, p) gets a Context (harness/context.py) on a fresh cluster and the parameters of the
chosen mode; it measures every variant in ctx.variants and records the results.  Variants whose
`needs` are not all present in the server are left out of ctx.variants and listed as skipped.
"""

import importlib
import os
import pkgutil
from dataclasses import dataclass, field

# Features a variant can need, detected on every cluster (Context.detect_features), and what
# the report says while one is missing.
FEATURES = {
    "abtree": "the abtree index access method "
              "(pg_am has no 'abtree' after CREATE EXTENSION abtree)",
    "swr": "TABLESAMPLE swr (no tablesample method 'swr' after CREATE EXTENSION abtree)",
    "abtree_sample_tids": "the SQL function abtree_sample_tids(index, n)",
    "pg_prewarm": "contrib pg_prewarm",
    "tsm_system_rows": "contrib tsm_system_rows",
    "abtree_ndistinct": "the SQL function abtree_ndistinct(tbl, columns, sample_rows, method, "
                       "seed) (multi-column estimators, branch ndistinct)",
    "pbtree": "the pbtree index access method and pbtree_stats() (pg_am has no 'pbtree' after "
              "CREATE EXTENSION abtree)",
    "mvstore": "the multi-version weight store (no view abtree_mvstore or setting abtree.mvstore "
               "after CREATE EXTENSION abtree, or abtree.mvstore_size = 0)",
}


@dataclass
class Variant:
    name: str
    label: str = ""
    ours: bool = False      # True for abtree's own code; False for a baseline
    needs: tuple = ()       # FEATURES keys


@dataclass
class Metric:
    name: str
    unit: str
    lower_is_better: bool


@dataclass
class Experiment:
    name: str
    title: str
    figure: str             # the paper figure it reproduces
    metric: Metric
    variants: list
    baseline: str           # the variant every other one is compared with
    x: str                  # the parameter on the plot's x axis
    run: object
    quick: dict = field(default_factory=dict)
    full: dict = field(default_factory=dict)
    panel: str = None       # parameter that splits the plot into panels, if any
    settings: dict = field(default_factory=dict)   # server settings on top of BASE_SETTINGS
    logx: bool = False
    logy: bool = False
    about: str = ""         # what is measured and how, for the report
    plot: object = None     # fn(exp, ctx, path) drawing the PNG instead of report.plot

    def params(self, mode):
        return self.full if mode == "full" else self.quick


REGISTRY = {}


def experiment(**kw):
    def register(fn):
        e = Experiment(run=fn, **kw)
        if e.name in REGISTRY:
            raise ValueError(f"experiment {e.name} registered twice")
        if e.baseline not in {v.name for v in e.variants}:
            raise ValueError(f"{e.name}: baseline {e.baseline} is not one of its variants")
        for v in e.variants:
            unknown = set(v.needs) - set(FEATURES)
            if unknown:
                raise ValueError(f"{e.name}/{v.name}: unknown features {sorted(unknown)}")
        REGISTRY[e.name] = e
        return fn
    return register


def load_all():
    """Import every module in bench/experiments/; their decorators fill REGISTRY."""
    pkg_dir = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                           "experiments")
    for m in sorted(pkgutil.iter_modules([pkg_dir]), key=lambda m: m.name):
        importlib.import_module(f"experiments.{m.name}")
    return REGISTRY
