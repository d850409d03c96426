"""Bias-reduced optimum estimators (Asi, Carmon, Jambulapati, Jin, Sidford 2021, paper 001).

- :func:`epoch_sgd`: EpochSGD (Algorithm 8) with its epoch snapshots;
- :func:`mlmc_draws`, :func:`optest`, :func:`moreau_gradient`: the MLMC optimum estimator of
  eq. (1), OPTEST (Algorithm 1) and MORGRADEST (Algorithm 2); batches of copies of a
  :class:`GLMOracle` run in the compiled kernel ``_mlmc`` (OpenMP over copies);
- :func:`mlmc_dp_sco`: the DP-SCO skeleton of Algorithm 6 with each copy clipped to a ball
  (rigorous privacy; the paper's utility theorem does not cover it);
- applications: :func:`moreau_agd` (Algorithm 3), :func:`composite_agd` (Algorithm 5),
  :func:`minimize_max_of_functions` with :class:`SoftmaxGradientOracle` (Algorithms 4, 9, 10),
  :func:`exact_optimum_draws` (Algorithm 7, exact oracles, small d);
- domains (:class:`L2Ball`, :class:`BoxDomain`, :class:`L1Ball`, :class:`Simplex`) and the level
  arithmetic (:func:`j_max_from_bias`, :func:`n_copies_from_variance`,
  :func:`expected_gradients`).

Ball acceleration (Algorithm 4) lives in :mod:`dpsco_core.ball_acceleration`.
"""

from ._schedule import (J_MAX_LIMIT, epochs_for_budget, expected_gradients,
                        gradients_for_epochs, j_max_from_bias, level_epochs,
                        n_copies_from_variance)
from .domains import (BoxDomain, EuclideanSpace, L1Ball, L2Ball, Simplex, TwoBallIntersection,
                      project_two_balls)
from .epoch_sgd import EpochSGDResult, epoch_sgd
from .estimator import (MLMCDraws, MoreauGradientResult, OptestResult, mlmc_combine,
                        mlmc_draws, moreau_gradient, optest)
from .oracles import GLMOracle, KinkOracle, NormOracle, QuadraticOracle
from .dp_sco import MLMCDPSCOResult, mlmc_dp_sco, mlmc_sample_usage
from .moreau_agd import MoreauAGDResult, moreau_agd
from .composite_agd import CompositeAGDResult, composite_agd
from .minmax import (AffineFamily, SoftmaxGradientOracle, minimize_max_of_functions,
                     softmax_value)
from .exact_estimator import (ExactOptimumDraws, FiniteSum, ellipsoid_method, exact_j0,
                              exact_levels, exact_optimum_draws)

__all__ = [
    "J_MAX_LIMIT", "epochs_for_budget", "expected_gradients", "gradients_for_epochs",
    "j_max_from_bias", "level_epochs", "n_copies_from_variance", "BoxDomain", "EuclideanSpace",
    "L1Ball", "L2Ball", "Simplex", "TwoBallIntersection", "project_two_balls", "EpochSGDResult", "epoch_sgd", "MLMCDraws",
    "MoreauGradientResult", "OptestResult", "mlmc_combine", "mlmc_draws", "moreau_gradient",
    "optest", "GLMOracle", "KinkOracle", "NormOracle", "QuadraticOracle", "MLMCDPSCOResult",
    "mlmc_dp_sco", "mlmc_sample_usage", "MoreauAGDResult", "moreau_agd", "CompositeAGDResult",
    "composite_agd", "AffineFamily", "SoftmaxGradientOracle", "minimize_max_of_functions",
    "softmax_value", "ExactOptimumDraws", "FiniteSum", "ellipsoid_method", "exact_j0",
    "exact_levels", "exact_optimum_draws",
]
