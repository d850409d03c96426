"""Hyperparameter grids and defaults from public information only.

The scales come from the public data bounds of :mod:`dpsco_core.public_bounds`, never from the
private data:

* **gradient scale.** At the starting point w = 0 the per-record gradient coordinate is
  :math:`x_{ij} \\ell'(0, y_i)`, bounded by :math:`G_j = \\Lambda_0 B_j` with :math:`B_j` the
  public feature bound (:meth:`PublicBounds.feature_bounds`) and :math:`\\Lambda_0 =
  \\max_{|y| \\le Y} |\\ell'(0, y)|` (1 for the logistic loss, :math:`Y` or :math:`2Y` for the
  squared losses with the public label bound :math:`Y`). DP-CD's clip is the l2 norm of its
  coordinate clips, so its scale is :math:`\\|G\\|_2`; DP-SGD clips the per-record gradient in
  l2, scale :math:`\\Lambda_0 R'` with the public row bound :math:`R'`
  (:meth:`PublicBounds.row_bound`). A clip at the scale never clips at w = 0 (the theory's
  choice, Mangold et al. 2022 section 5.1 and Bassily et al. 2014: clip = Lipschitz bound).
* **step scale.** 1: DP-CD's coordinate steps are ``step / M_j`` and DP-SGD's ``step / beta``,
  with the smoothness constants of the solver, so step = 1 is the theory's step (Mangold et
  al. 2022, Theorem 3.2; 1/beta for smooth gradient descent).

**Defaults** (:func:`default_hyperparameters`): step 1 and clip ``kappa`` times the scale,
``kappa = 0.1`` for DP-CD and ``0.01`` for DP-SGD. Origin: bounds are worst cases, and a clip
at the worst-case gradient leaves noise proportional to it while typical gradients are much
smaller; the factors are the single values with the smallest geometric-mean relative error
over the four California / Electricity problems of the DP-CD reproduction at epsilon = 1 and
50 passes (bounds: the largest absolute feature and label values declared public), measured
for issue 19 over kappa in {1, 0.3, 0.1, 0.03, 0.01, 0.003}. They are data-independent
(constants), but were chosen on those problems: the selection of
:func:`~dpsco_core.tuning.search.tune_solver` is the remedy when they do not fit.

**Grids** (:func:`candidate_grid`): clips ``scale * kappa`` for ``kappa`` log-spaced over
:data:`CLIP_RANGE` (DP-CD [1e-2, 1], 6 values; DP-SGD [1e-3, 1], 7 values; clips above the
scale change nothing at w = 0), steps :data:`CD_STEPS` (1) for DP-CD and :data:`SGD_STEPS`
(0.1, 1) for DP-SGD. The ranges hold the non-privately tuned clip of every problem of the
DP-CD reproduction (issue 19's measurement: kappa from 0.02 to 1 for DP-CD, 0.003 to 0.5 for
DP-SGD); few values, because random stopping draws a candidate per trial and a grid much
larger than E[K] is mostly left unvisited.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import check_int
from ..problems import _CLASSIFICATION_KINDS

__all__ = ["Candidate", "gradient_scale", "default_hyperparameters", "candidate_grid",
           "DEFAULT_CLIP_FACTOR", "CLIP_RANGE", "N_CLIPS", "CD_STEPS", "SGD_STEPS",
           "PUBLIC_BOUND_CD_STEPS"]

#: kappa of the default clip, per solver (module docstring).
DEFAULT_CLIP_FACTOR = {"cd": 0.1, "sgd": 0.01}
#: Range of the clip factors kappa of the grids, per solver.
CLIP_RANGE = {"cd": (1e-2, 1.0), "sgd": (1e-3, 1.0)}
#: Number of clip values of the grids, per solver.
N_CLIPS = {"cd": 6, "sgd": 7}
#: Step scales of the grids.
CD_STEPS = (1.0,)
SGD_STEPS = (0.1, 1.0)
#: DP-CD's step scales when its smoothness constants come from public bounds: M_j = s_l B_j^2
#: over-estimates the curvature s_l E[x_j^2] by B_j^2 / E[x_j^2] (25 for standardized features
#: bounded at +-5), which step 1 would inherit; measured on standardized California and
#: Electricity (issue 19), steps 5 to 25 did best.
PUBLIC_BOUND_CD_STEPS = (1.0, 5.0, 25.0)


@dataclass(frozen=True)
class Candidate:
    """One hyperparameter configuration: the solver's ``step`` and ``clip``."""

    step: float
    clip: float


def _check_solver(solver):
    if solver not in ("cd", "sgd"):
        raise ValueError(f"solver must be 'cd' or 'sgd'; got {solver!r}.")
    return solver


def _derivative_bound(problem):
    loss = problem.loss
    bounds = problem.public_bounds
    if loss.kind in _CLASSIFICATION_KINDS:
        return 1.0          # |l'| <= 1 for the logistic and hinge losses, any margin
    Y = None if bounds is None else bounds.label_bound
    if Y is None:
        raise ValueError("the gradient scale of a regression loss needs a public label_bound "
                         "(Problem(..., label_bound=Y)).")
    return float(np.max(np.abs(loss.deriv(np.zeros(2), np.array([-Y, Y])))))


def gradient_scale(problem: Any, solver: str) -> float:
    """The public clip scale of ``solver`` on ``problem`` (module docstring).

    Parameters
    ----------
    problem : Problem
        With public ``bounds`` or ``row_norm`` (and ``label_bound`` for regression).
    solver : {"cd", "sgd"}

    Returns
    -------
    float
        ``||G||_2`` (DP-CD) or ``Lambda_0 R'`` (DP-SGD), from public arguments only.

    Raises
    ------
    ValueError
        If the problem has no public bounds (the scale would be read from the data).
    """
    solver = _check_solver(solver)
    bounds = problem.public_bounds
    if bounds is None:
        raise ValueError("grids and defaults come from public bounds: build the Problem with "
                         "bounds= or row_norm= (and label_bound= for regression).")
    lam = _derivative_bound(problem)
    p = problem.n_features
    if solver == "cd":
        return float(lam * np.linalg.norm(bounds.feature_bounds(p)))
    return float(lam * bounds.row_bound(p))


def default_hyperparameters(problem: Any, solver: str, *,
                            scale: float | None = None) -> Candidate:
    """``(step, clip)`` by the data-independent rule (module docstring).

    Parameters
    ----------
    problem : Problem
        With public bounds.
    solver : {"cd", "sgd"}

    scale : float, optional
        A public clip scale given directly (default :func:`gradient_scale`).

    Returns
    -------
    Candidate
    """
    _check_solver(solver)
    scale = gradient_scale(problem, solver) if scale is None else float(scale)
    return Candidate(1.0, DEFAULT_CLIP_FACTOR[solver] * scale)


def candidate_grid(problem: Any, solver: str, *, n_clips: int | None = None,
                   steps: Any = None, scale: float | None = None) -> list[Candidate]:
    """The public candidates: clips log-spaced over ``CLIP_RANGE`` times the scale, x steps.

    Parameters
    ----------
    problem : Problem
        With public bounds.
    solver : {"cd", "sgd"}
    n_clips : int, optional
        Number of clip values (>= 1; default :data:`N_CLIPS`).
    steps : sequence of float, optional
        Step scales (default :data:`CD_STEPS` / :data:`SGD_STEPS`).
    scale : float, optional
        A public clip scale given directly (default :func:`gradient_scale`).

    Returns
    -------
    list of Candidate
    """
    _check_solver(solver)
    scale = gradient_scale(problem, solver) if scale is None else float(scale)
    n_clips = check_int(N_CLIPS[solver] if n_clips is None else n_clips, "n_clips", low=1)
    if steps is None:
        steps = CD_STEPS if solver == "cd" else SGD_STEPS
    kappas = np.geomspace(*CLIP_RANGE[solver], n_clips) if n_clips > 1 else \
        np.array([DEFAULT_CLIP_FACTOR[solver]])
    return [Candidate(float(s), float(k * scale)) for s in steps for k in kappas]
