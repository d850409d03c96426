"""Empirical privacy auditing: lower confidence bounds on epsilon (see :mod:`._core`).

* :func:`audit`: from a batched sampler and a pair of neighbouring inputs, a Clopper-Pearson
  lower bound on epsilon at a stated delta (Jagielski et al. 2020; Nasr et al. 2021).
* :mod:`~dpsco_core.audit.cases`: one function per mechanism building its worst-case canary
  pair and sampler; :func:`run_case` audits it.
* :mod:`~dpsco_core.audit.solver_cases`: the same for the solvers (DP-CD updates, DP-SGD
  steps, a vr_frank_wolfe leaf), calibrated by the solver itself and replayed through
  its kernel.
* :mod:`~dpsco_core.audit.neighbour_cases`: black-box audits of ``dp_cd`` and ``dp_sgd``
  under each neighbouring relation with an outlier neighbour, through the public solvers.
* :mod:`~dpsco_core.audit.solver_relation_cases`: the same for every other private solver
  (Frank-Wolfe, mirror descent, the single-epoch solvers, ``mlmc_dp_sco``) under every
  relation it offers (:func:`solver_relation_case`, :data:`SOLVER_RELATIONS`).
* :mod:`~dpsco_core.audit.resque_cases`: the private ReSQue under replace-one, black-box:
  ``resque_private_erm`` and ``resque_private_sco`` end to end
  (:func:`resque_private_case`) and one call of Algorithm 3 (:func:`resque_call_case`).
"""

from ._core import (AuditResult, audit, clopper_pearson_upper, epsilon_lower_bound,
                    sampler_from_mechanism)
from .cases import AuditCase, gaussian_case, laplace_case, report_noisy_max_case, run_case
from .neighbour_cases import dp_cd_relation_case, dp_sgd_relation_case
from .resque_cases import resque_call_case, resque_private_case
from .solver_cases import dp_cd_case, dp_sgd_case, vr_frank_wolfe_leaf_case
from .solver_relation_cases import SOLVER_RELATIONS, solver_relation_case

__all__ = ["AuditResult", "audit", "clopper_pearson_upper", "epsilon_lower_bound",
           "sampler_from_mechanism", "AuditCase", "run_case", "gaussian_case", "laplace_case",
           "report_noisy_max_case", "dp_cd_case", "dp_sgd_case",
           "vr_frank_wolfe_leaf_case", "dp_cd_relation_case", "dp_sgd_relation_case",
           "SOLVER_RELATIONS", "solver_relation_case", "resque_private_case",
           "resque_call_case"]
