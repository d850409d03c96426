"""Privacy accounting for dpsco-core: events, accountants, conversions, calibration, reports.

Pure Python and NumPy/SciPy: this package never imports the compiled kernels, the mechanisms or
the solvers, so ``import dpsco_core.privacy`` works on an installation without a compiler.

* :mod:`~dpsco_core.privacy.events`: what a mechanism did (dp-accounting's event names).
* :mod:`~dpsco_core.privacy.rdp`: Renyi-DP curves of the basic mechanisms, vectorised over orders.
* :mod:`~dpsco_core.privacy.accountants`: :class:`RdpAccountant`, :class:`PureDpAccountant`,
  :class:`GdpAccountant`, :class:`PldAccountant` (dp-accounting's privacy loss distributions;
  optional dependency, imported when built).
* :mod:`~dpsco_core.privacy.conversions`: RDP and zCDP to (epsilon, delta).
* :mod:`~dpsco_core.privacy.gdp`: Gaussian DP, exact.
* :mod:`~dpsco_core.privacy.calibration`: noise multipliers for a target budget.
* :mod:`~dpsco_core.privacy.report`: :class:`PrivacyReport`.
* :mod:`~dpsco_core.privacy.budget`: :class:`Budget`, a budget that refuses overspending, and
  :func:`spend`, the call every release makes before touching the data.
"""

from .accountants import (DEFAULT_RDP_ORDERS, GdpAccountant, PldAccountant, PrivacyAccountant,
                          PureDpAccountant, RdpAccountant, tree_depth)
from .budget import Budget, spend
from .calibration import (
    calibrate_analytic_gaussian,
    calibrate_gaussian,
    calibrate_sampled_gaussian,
    calibrate_sampled_gaussian_pld,
    dp_cd_noise_multiplier,
    steps_from_epochs,
)
from .conversions import rdp_to_delta, rdp_to_epsilon, zcdp_to_delta, zcdp_to_epsilon
from .events import (
    ComposedDpEvent,
    DpEvent,
    EpsilonDeltaDpEvent,
    GaussianDpEvent,
    LaplaceDpEvent,
    NeighboringRelation,
    NonPrivateDpEvent,
    NoOpDpEvent,
    PoissonSampledDpEvent,
    SelfComposedDpEvent,
    SingleEpochTreeAggregationDpEvent,
    ZCDpEvent,
)
from .gdp import gdp_delta, gdp_epsilon, gdp_mu
from .rdp import (
    SampledGaussianRdp,
    rdp_gaussian,
    rdp_laplace,
    rdp_pure,
    rdp_sampled_gaussian,
    rdp_zcdp,
)
from .report import PrivacyReport

__all__ = [
    # events
    "NeighboringRelation", "DpEvent", "NoOpDpEvent", "NonPrivateDpEvent", "GaussianDpEvent",
    "LaplaceDpEvent", "EpsilonDeltaDpEvent", "ZCDpEvent", "PoissonSampledDpEvent",
    "SelfComposedDpEvent", "ComposedDpEvent", "SingleEpochTreeAggregationDpEvent",
    # accountants
    "PrivacyAccountant", "RdpAccountant", "PureDpAccountant", "GdpAccountant", "PldAccountant",
    "DEFAULT_RDP_ORDERS", "tree_depth",
    # RDP curves
    "rdp_gaussian", "rdp_laplace", "rdp_pure", "rdp_zcdp", "rdp_sampled_gaussian",
    "SampledGaussianRdp",
    # conversions
    "rdp_to_epsilon", "rdp_to_delta", "zcdp_to_epsilon", "zcdp_to_delta",
    "gdp_delta", "gdp_epsilon", "gdp_mu",
    # calibration
    "calibrate_sampled_gaussian", "calibrate_sampled_gaussian_pld", "calibrate_gaussian",
    "calibrate_analytic_gaussian",
    "dp_cd_noise_multiplier", "steps_from_epochs",
    # report
    "PrivacyReport",
    # budget
    "Budget", "spend",
]
