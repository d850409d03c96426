"""Private hyperparameter selection (issue 19): selection with its accounting, private scores,
grids and defaults from public information.

* :mod:`~dpsco_core.tuning.stopping`: the random number of runs K (secret).
* :mod:`~dpsco_core.tuning.selection`: :func:`private_selection`, the best of K private runs
  (Papernot and Steinke 2022; Liu and Talwar 2019); accounted by
  :class:`~dpsco_core.privacy.events.RepeatAndSelectDpEvent`
  (:mod:`dpsco_core.privacy.selection` holds the theorems).
"""

from .selection import SelectionResult, Trial, private_selection
from .stopping import num_trials_pmf, sample_num_trials

__all__ = ["private_selection", "Trial", "SelectionResult", "sample_num_trials",
           "num_trials_pmf"]
