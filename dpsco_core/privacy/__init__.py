"""Privacy accounting for dpsco-core: events, accountants, conversions, calibration, reports.

Pure Python and NumPy/SciPy: this package never imports the compiled kernels, the mechanisms or
the solvers, so ``import dpsco_core.privacy`` works on an installation without a compiler.

* :mod:`~dpsco_core.privacy.events`: what a mechanism did (dp-accounting's event names).
* :mod:`~dpsco_core.privacy.rdp`: Renyi-DP curves of the basic mechanisms, vectorised over orders.
* :mod:`~dpsco_core.privacy.accountants`: :class:`RdpAccountant`, :class:`PureDpAccountant`,
  :class:`GdpAccountant`, :class:`PldAccountant` (dp-accounting's privacy loss distributions;
  optional dependency, imported when built).
* :mod:`~dpsco_core.privacy.conversions`: RDP and zCDP to (epsilon, delta).
* :mod:`~dpsco_core.privacy.with_replacement`: RDP of the Gaussian on a batch sampled with
  replacement (replace-one), and Proposition 7 of the ReSQue paper ([BDRS18] Thm 12).
* :mod:`~dpsco_core.privacy.approximate_rdp`: approximate RDP with a total-variation slack
  (ReSQue paper eq. (12)): composition (Lemma 3), amplification (Prop. 7), conversion
  (Corollary 1).
* :mod:`~dpsco_core.privacy.gdp`: Gaussian DP, exact.
* :mod:`~dpsco_core.privacy.calibration`: noise multipliers for a target budget.
* :mod:`~dpsco_core.privacy.report`: :class:`PrivacyReport`.
* :mod:`~dpsco_core.privacy.budget`: :class:`Budget`, a budget that refuses overspending, and
  :func:`spend`, the call every release makes before touching the data.
"""

from .accountants import (DEFAULT_RDP_ORDERS, GdpAccountant, PldAccountant, PrivacyAccountant,
                          PureDpAccountant, RdpAccountant, rdp_slack_of, tree_depth)
from .approximate_rdp import (DpConversion, LinearApproximateRdp, amplify_by_mixture,
                              calibrate_tau, epsilon_for_delta, optimal_order, paper_order)
from .approximate_rdp import compose as compose_approximate_rdp
from .budget import Budget, spend
from .calibration import (
    calibrate_analytic_gaussian,
    calibrate_gaussian,
    calibrate_gdp_multiplier,
    calibrate_sampled_gaussian,
    calibrate_sampled_gaussian_pld,
    dp_cd_noise_multiplier,
    pure_share_epsilon,
    steps_from_epochs,
)
from .conversions import rdp_to_delta, rdp_to_epsilon, zcdp_to_delta, zcdp_to_epsilon
from .events import (
    ApproximateRdpDpEvent,
    ComposedDpEvent,
    DpEvent,
    EpsilonDeltaDpEvent,
    GaussianDpEvent,
    LaplaceDpEvent,
    NeighboringRelation,
    NonPrivateDpEvent,
    NoOpDpEvent,
    PoissonSampledDpEvent,
    SampledWithReplacementDpEvent,
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
from .report import (DISJOINT_BATCHES_ASSUMPTION, SEEDED_ASSUMPTION, PrivacyReport,
                     disjoint_batches_report)
from .with_replacement import (bdrs18_mixture_rdp, rdp_sampled_with_replacement_gaussian,
                               with_replacement_count_tail,
                               with_replacement_inclusion_probability)

__all__ = [
    # events
    "NeighboringRelation", "DpEvent", "NoOpDpEvent", "NonPrivateDpEvent", "GaussianDpEvent",
    "LaplaceDpEvent", "EpsilonDeltaDpEvent", "ZCDpEvent", "PoissonSampledDpEvent",
    "SelfComposedDpEvent", "ComposedDpEvent", "SingleEpochTreeAggregationDpEvent",
    "SampledWithReplacementDpEvent", "ApproximateRdpDpEvent",
    # accountants
    "PrivacyAccountant", "RdpAccountant", "PureDpAccountant", "GdpAccountant", "PldAccountant",
    "DEFAULT_RDP_ORDERS", "tree_depth", "rdp_slack_of",
    # sampling with replacement, approximate RDP (ReSQue)
    "rdp_sampled_with_replacement_gaussian", "with_replacement_inclusion_probability",
    "with_replacement_count_tail",
    "bdrs18_mixture_rdp", "LinearApproximateRdp", "DpConversion", "compose_approximate_rdp",
    "amplify_by_mixture", "optimal_order", "paper_order", "epsilon_for_delta", "calibrate_tau",
    # RDP curves
    "rdp_gaussian", "rdp_laplace", "rdp_pure", "rdp_zcdp", "rdp_sampled_gaussian",
    "SampledGaussianRdp",
    # conversions
    "rdp_to_epsilon", "rdp_to_delta", "zcdp_to_epsilon", "zcdp_to_delta",
    "gdp_delta", "gdp_epsilon", "gdp_mu",
    # calibration
    "calibrate_sampled_gaussian", "calibrate_sampled_gaussian_pld", "calibrate_gaussian",
    "calibrate_analytic_gaussian", "calibrate_gdp_multiplier", "pure_share_epsilon",
    "dp_cd_noise_multiplier", "steps_from_epochs",
    # report
    "PrivacyReport", "SEEDED_ASSUMPTION", "DISJOINT_BATCHES_ASSUMPTION",
    "disjoint_batches_report",
    # budget
    "Budget", "spend",
]
