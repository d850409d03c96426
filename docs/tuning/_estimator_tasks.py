# Issue 19, session 14: the held-out tasks shared by prediction_step.py, shuffle_noise_level.py
# and dp_cd_relation.py. Each task is (X, y, kind, label kwargs, split): standardized California
# and Electricity with reproduce tuning's split, the three data sets of estimator_rms_holdout.py
# with its split, and synthetic standardized regressions.
import math
import types

import numpy as np

from dpsco_core.experiments.tuning import _estimator_data, _split

# estimator_rms_holdout.py's data and split, without running its table
_src = open("docs/tuning/estimator_rms_holdout.py").read().split("columns = [")[0]
holdout = types.ModuleType("estimator_rms_holdout")
exec(_src, holdout.__dict__)


def synthetic(n, p):
    """A standardized regression: n training records (and n / 4 held out), p features."""
    rng = np.random.default_rng(100 + n + p)
    X = rng.standard_normal((n * 5 // 4, p))
    beta = rng.standard_normal(p) / math.sqrt(p)
    return X, np.clip(X @ beta + 0.7 * rng.standard_normal(len(X)), -3, 3)


def real_tasks():
    """{name: (X, y, kind, label kwargs, split)} of the five real data sets."""
    tasks = {}
    for name, (X, y, kind) in _estimator_data().items():
        tasks[name] = (X, y, kind, dict(label_bound=(0.0, 5.0)), _split)
    for name, (X, y, kind) in holdout.data().items():
        label = dict(label_bound=(25.0, 346.0)) if kind == "regression" else {}
        tasks[name] = (X, y, kind, label, holdout.split)
    return tasks


def all_tasks():
    """real_tasks() and two synthetic regressions (n = 2,000, p = 16; n = 20,000, p = 48)."""
    tasks = real_tasks()
    for n, p in [(2000, 16), (20000, 48)]:
        tasks[f"synthetic regression n={n} p={p} (R^2)"] = (
            *synthetic(n, p), "regression", dict(label_bound=3.0), holdout.split)
    return tasks


def held_out_tasks():
    """The eleven held-out tasks of selection_vs_fixed.py (session 14): {name: (X, y, "r" or
    "c", label bound, split)}, read from that script with its grid patch undone. Shared by
    session 15's private_rms_*.py."""
    import sys as _sys

    from dpsco_core.tuning import grids

    original = grids.candidate_grid
    src = open("docs/tuning/selection_vs_fixed.py").read().split("only = sys.argv")[0]
    module = types.ModuleType("selection_vs_fixed")
    _sys.path.insert(0, "docs/tuning")
    exec(src, module.__dict__)
    grids.candidate_grid = original
    return module.tasks
