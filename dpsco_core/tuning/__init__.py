"""Private hyperparameter selection (issue 19): selection with its accounting, private scores,
grids and defaults from public information.

* :mod:`~dpsco_core.tuning.search`: :func:`~dpsco_core.tuning.search.tune_solver`, a DP-CD
  or DP-SGD run with its step and clip selected privately inside the same budget.
* :mod:`~dpsco_core.tuning.grids`: public grids and the noise-level rule
  (:func:`~dpsco_core.tuning.grids.default_hyperparameters`).
* :mod:`~dpsco_core.tuning.stopping`: the random number of runs K (secret).
* :mod:`~dpsco_core.tuning.selection`: :func:`private_selection`, the best of K private runs
  (Papernot and Steinke 2022; Liu and Talwar 2019); accounted by
  :class:`~dpsco_core.privacy.events.RepeatAndSelectDpEvent`
  (:mod:`dpsco_core.privacy.selection` holds the theorems).
"""

import importlib
from typing import Any

from .selection import SelectionResult, Trial, private_selection
from .stopping import num_trials_pmf, sample_num_trials

__all__ = ["private_selection", "Trial", "SelectionResult", "sample_num_trials",
           "num_trials_pmf"]

_SUBMODULES = ("grids", "score", "search", "selection", "stopping")


def __getattr__(name: str) -> Any:
    # dpsco_core.tuning.search and .grids on first use, as dpsco_core's own submodules
    # (``import dpsco_core as dp; dp.tuning.search.tune_solver``)
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
