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

**Defaults** (:func:`default_hyperparameters`), two rules and a variant for prediction:

* **noise-level rule** (given a public root-mean-square row norm ``rho``, and the run's
  epsilon, delta and passes): the clip is a multiple of the *typical* gradient at w = 0,
  shrunk where the privacy noise is large,

  .. math::

      \\mathrm{clip} = \\Lambda_0\\,\\rho\\,\\min\\Big(\\frac{A}{\\nu}, c_{\\max}\\Big),
      \\qquad
      \\nu = \\frac{\\sqrt{p \\cdot \\mathrm{passes} \\cdot \\log(1/\\delta)}}
                 {n\\,\\varepsilon},

  with :math:`\\Lambda_0 = \\max_y |\\ell'(0, y)|` over the public labels (1/2 for the
  logistic loss, 1 for the hinge loss, as above for regression: the gradient factor at w = 0,
  where the worst-case rule takes 1 for any margin), :math:`\\rho^2` a public value of
  :math:`\\frac1n \\sum_i \\|x_i\\|^2` (``p`` for standardized features: each column has
  unit variance), :math:`\\nu` the scale of the
  Gaussian noise of ``passes`` passes relative to one record's gradient (the noise of DP-CD
  and DP-SGD grows like :math:`\\sqrt{p \\cdot \\mathrm{passes} \\log(1/\\delta)} / (n
  \\varepsilon)` times the clip), ``A`` = :data:`NOISE_RULE_A` (DP-CD 0.007, DP-SGD 0.004)
  and :math:`c_{\\max}` = :data:`NOISE_RULE_MAX_FACTOR` (4); step :data:`NOISE_RULE_STEP`
  (DP-CD 1, DP-SGD 0.1). Where the noise is small the clip sits at a few typical gradients
  (little clipping bias); where it is large the clip shrinks like :math:`1/\\nu`, which holds
  the noise added per update at :math:`A \\Lambda_0 \\rho` (clipping bias traded for noise),
  and the cap stops the clip from growing without end as n grows. Origin (issue 19, session
  11, ``docs/tuning/diagnosis.md`` section 12): the non-privately tuned clips of the four
  California / Electricity problems are 1.3 to 3.5 typical gradients (six of eight rows),
  and Sparse LASSO's (``nu`` 6 to 40 times larger) 0.2; ``A`` is the value with the smallest
  geometric-mean relative error over those problems and Sparse LASSO at 5 and 50 passes.
  Within 2.3x of the tuned error on every DP-CD row and 2.2x on every DP-SGD row but raw
  California (17x, where DP-SGD wants a clip 16 times below the typical gradient); 3.0x on
  standardized California DP-CD against session 12's tuned column, which searches the grid
  centred on the rule too. On two
  problems it was not fitted on (synthetic logistic regression, scikit-learn's diabetes
  data): 1.3x to 8x, and 30x on diabetes DP-SGD, whose few steps (86) need step 1.
  ``nu`` is the noise of a zero-out run (sensitivity C), the relation of the runs ``A`` was
  fitted on: for DP-CD under replace-one (sensitivity 2C, DP-CD's default) the rule takes
  ``2 nu``, and for DP-SGD with shuffled batches (not amplified) ``sqrt(n / b) nu``
  (:func:`sgd_noise_level`); pass the run's ``neighboring_relation``, ``sampling`` and
  ``batch_size``.
* **for prediction** (the estimators given ``rms_row_norm``): the noise-level rule's clip,
  with DP-SGD's step from :func:`prediction_sgd_step` (larger when the run has few steps) and
  its batch from :func:`auto_batch_size` (about 200 steps on small data). The rule above was
  fitted on the relative error of the objective at 50 passes, where smaller steps keep
  paying; held-out prediction at the estimators' 20 passes wants larger ones (session 14,
  ``docs/tuning/diagnosis.md`` section 15).
* **worst-case rule** (public bounds only): step 1 and clip ``kappa`` times the scale,
  ``kappa = 0.1`` for DP-CD and ``0.01`` for DP-SGD (:data:`DEFAULT_CLIP_FACTOR`). Bounds are
  worst cases, and a clip at the worst-case gradient leaves noise proportional to it while
  typical gradients are much smaller; the factors are the single values with the smallest
  geometric-mean relative error over the four California / Electricity problems at epsilon =
  1 and 50 passes (bounds: the largest absolute feature and label values declared public),
  measured for issue 19 over kappa in {1, 0.3, 0.1, 0.03, 0.01, 0.003}. The ratio of the
  bound to the typical row norm (1.6 to 42 on those problems) is what this rule cannot see:
  it is 26 to 46 times the tuned error on four of the eight rows, and diverges on Sparse
  LASSO at 50 passes.

Both are data-independent (functions of public numbers), but were chosen on those problems:
the selection of :func:`~dpsco_core.tuning.search.tune_solver` is the remedy when they do not
fit.

**Grids** (:func:`candidate_grid`): clips ``scale * kappa`` for ``kappa`` log-spaced over
:data:`CLIP_RANGE` (DP-CD [1e-2, 1], 6 values; DP-SGD [1e-3, 1], 7 values; clips above the
scale change nothing at w = 0), steps :data:`CD_STEPS` (1) for DP-CD and :data:`SGD_STEPS`
(0.1, 1) for DP-SGD. The ranges hold the non-privately tuned clip of every problem of the
DP-CD reproduction (issue 19's measurement: kappa from 0.02 to 1 for DP-CD, 0.003 to 0.5 for
DP-SGD); few values, because random stopping draws a candidate per trial and a grid much
larger than E[K] is mostly left unvisited.

**Grid centred on the noise-level rule** (:func:`noise_rule_grid`, what
:func:`~dpsco_core.tuning.search.tune_solver` searches given a public ``rms_row_norm``): the
rule's clip at the trial's epsilon times :data:`NOISE_GRID_FACTORS` (DP-CD 1/4 to 4, 5
values; DP-SGD 1/16 to 2, 6 values), steps :data:`NOISE_GRID_STEPS` (DP-CD 1, DP-SGD 0.1 and
1). Where the rule is within a small factor of the tuned clip, the search spends its trials
near it instead of across three decades of worst-case scales.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import check_delta, check_int, check_scalar
from ..problems import _CLASSIFICATION_KINDS

__all__ = ["Candidate", "gradient_scale", "default_hyperparameters", "candidate_grid",
           "noise_level", "DEFAULT_CLIP_FACTOR", "NOISE_RULE_A", "NOISE_RULE_MAX_FACTOR",
           "NOISE_RULE_STEP", "noise_rule_grid", "NOISE_GRID_FACTORS", "NOISE_GRID_STEPS",
           "CLIP_RANGE", "N_CLIPS", "CD_STEPS", "SGD_STEPS",
           "PUBLIC_BOUND_CD_STEPS", "prediction_sgd_step", "PREDICTION_SGD_U",
           "auto_batch_size", "AUTO_BATCH_STEPS", "AUTO_BATCH_MAX", "sgd_noise_level"]

#: kappa of the default clip, per solver (module docstring).
DEFAULT_CLIP_FACTOR = {"cd": 0.1, "sgd": 0.01}
#: A of the noise-level rule, per solver: the clip is ``Lambda_0 rho min(A / nu, c_max)``.
NOISE_RULE_A = {"cd": 0.007, "sgd": 0.004}
#: c_max of the noise-level rule: at most this many typical gradients.
NOISE_RULE_MAX_FACTOR = 4.0
#: Step scale of the noise-level rule, per solver (DP-SGD's tuned step is 0.1 on the
#: standardized problems, and step 1 with the rule's clips diverges on Sparse LASSO).
NOISE_RULE_STEP = {"cd": 1.0, "sgd": 0.1}
#: u of :func:`prediction_sgd_step`: the model's typical prediction in units of the loss's
#: gradient-to-curvature scale (``rho ||w*|| / Y`` for the squared losses), fitted on the
#: estimators' held-out tasks (issue 19, session 14, ``docs/tuning/diagnosis.md`` section 15).
PREDICTION_SGD_U = 0.4
#: DP-SGD steps :func:`auto_batch_size` aims at, and its largest batch.
AUTO_BATCH_STEPS = 200
AUTO_BATCH_MAX = 256
#: Clip factors of the grid centred on the noise-level rule (:func:`noise_rule_grid`),
#: multiples of the rule's clip, per solver: they hold the non-privately tuned clip of every
#: California / Electricity / Sparse LASSO row (0.41 to 1.9 times the rule's clip for DP-CD,
#: 0.067 to 1.8 for DP-SGD, both at the total epsilon; ``docs/tuning/tuned_clip_typical.txt``)
#: but Sparse LASSO DP-SGD at 50 passes (0.022, where every method is the zero model).
NOISE_GRID_FACTORS = {"cd": (0.25, 0.5, 1.0, 2.0, 4.0),
                      "sgd": (1 / 16, 1 / 8, 1 / 4, 1 / 2, 1.0, 2.0)}
#: Step scales of the grid centred on the noise-level rule (DP-SGD: its tuned step is 1 on
#: the raw problems and 0.1 on the standardized ones).
NOISE_GRID_STEPS = {"cd": (1.0,), "sgd": (0.1, 1.0)}
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


def _derivative_bound(problem, label_bound=None):
    loss = problem.loss
    bounds = problem.public_bounds
    if loss.kind in _CLASSIFICATION_KINDS:
        return 1.0          # |l'| <= 1 for the logistic and hinge losses, any margin
    Y = label_bound if label_bound is not None else \
        (None if bounds is None else bounds.label_bound)
    if Y is None:
        raise ValueError("the gradient scale of a regression loss needs a public label_bound "
                         "(Problem(..., label_bound=Y)).")
    Y = check_scalar(Y, "label_bound", low=0.0)
    return float(np.max(np.abs(loss.deriv(np.zeros(2), np.array([-Y, Y])))))


def _derivative_at_zero(problem, label_bound=None):
    """``Lambda_0 = max |l'(0, y)|`` over the public labels: the gradient factor at w = 0.

    1/2 for the logistic loss (labels +-1), 1 for the hinge loss; for regression losses
    :func:`_derivative_bound` (``|l'(0, y)|`` over ``|y| <= Y``), which is already at w = 0.
    """
    if problem.loss.kind in _CLASSIFICATION_KINDS:
        return float(np.max(np.abs(problem.loss.deriv(np.zeros(2), np.array([-1.0, 1.0])))))
    return _derivative_bound(problem, label_bound)


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


def noise_level(n_samples: int, n_features: int, *, epsilon: float, delta: float,
                passes: float) -> float:
    """The public noise scale ``nu = sqrt(p passes log(1/delta)) / (n epsilon)`` of the rule.

    Parameters
    ----------
    n_samples : int
        The public number of records n (>= 1): the data's under replace-one and zero-out,
        ``public_n`` under add/remove-one.
    n_features : int
        p (>= 1).
    epsilon : float
        > 0 (``inf``: ``nu = 0``).
    delta : float
        In (0, 1).
    passes : float
        > 0.

    Returns
    -------
    float
    """
    n = check_int(n_samples, "n_samples", low=1)
    p = check_int(n_features, "n_features", low=1)
    eps = check_scalar(epsilon, "epsilon", low=0.0, allow_inf=True)
    delta = check_delta(delta)
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1) for the noise level; got {delta!r}.")
    passes = check_scalar(passes, "passes", low=0.0)
    if math.isinf(eps):
        return 0.0
    return math.sqrt(p * passes * math.log(1.0 / delta)) / (n * eps)


def sgd_noise_level(n_samples: int, n_features: int, *, epsilon: float, delta: float,
                    passes: float, sampling: str = "poisson",
                    batch_size: int | None = None) -> float:
    r"""DP-SGD's noise level for the rules: :func:`noise_level`, times ``sqrt(n / b)`` for
    shuffled batches.

    Poisson batches of expected size b are amplified by sampling at rate b / n: at a given
    budget the noise on a batch's mean gradient is about ``clip sqrt(passes log(1/delta) /
    (n b)) / epsilon``. Shuffled fixed-size batches (``sampling="shuffle"``, replace-one) are
    not: each pass is one Gaussian release of the n / b batch sums, and the noise on a
    batch's mean gradient is about ``clip sqrt(passes log(1/delta)) / (b epsilon)``,
    ``sqrt(n / b)`` times more. Measured (issue 19, session 14, ``docs/tuning/diagnosis.md``
    section 15): the estimators' rule with shuffled batches at Poisson's noise level gave
    held-out R^2 0.11 on California and 0.009 on a synthetic regression (n = 20,000, p = 48);
    with ``sqrt(n / b)`` 0.60 and 0.58 (``2 sqrt(n / b)``, the replace-one sensitivity's
    factor too: 0.59 and 0.48).

    Parameters
    ----------
    n_samples, n_features : int
        The public n and p.
    epsilon, delta, passes : float
        As in :func:`noise_level`.
    sampling : {"poisson", "shuffle"}, default="poisson"
    batch_size : int, optional
        The batch size b (at most n counts), required with ``sampling="shuffle"``.

    Returns
    -------
    float
    """
    nu = noise_level(n_samples, n_features, epsilon=epsilon, delta=delta, passes=passes)
    if sampling == "poisson":
        return nu
    if sampling != "shuffle":
        raise ValueError(f"sampling must be 'poisson' or 'shuffle'; got {sampling!r}.")
    if batch_size is None:
        raise ValueError("with sampling='shuffle' the noise level needs DP-SGD's batch_size=.")
    n = check_int(n_samples, "n_samples", low=1)
    b = min(check_int(batch_size, "batch_size", low=1), n)
    return nu * math.sqrt(n / b)


def default_hyperparameters(problem: Any, solver: str, *, scale: float | None = None,
                            rms_row_norm: float | None = None, epsilon: float | None = None,
                            delta: float | None = None, passes: float | None = None,
                            n_samples: int | None = None,
                            label_bound: float | None = None,
                            neighboring_relation: Any = "replace_one",
                            sampling: str = "poisson",
                            batch_size: int | None = None) -> Candidate:
    """``(step, clip)`` by a data-independent rule (module docstring).

    Without ``rms_row_norm``: the worst-case rule, step 1 and clip
    ``DEFAULT_CLIP_FACTOR[solver]`` times the public scale. With it: the noise-level rule,
    ``step = NOISE_RULE_STEP[solver]`` and ``clip = Lambda_0 rho min(A / nu, c_max)``, which
    needs the run's ``epsilon``, ``delta`` and ``passes``.

    Parameters
    ----------
    problem : Problem
        With public bounds (the worst-case rule, and ``Lambda_0`` for regression: a public
        ``label_bound``).
    solver : {"cd", "sgd"}

    scale : float, optional
        The worst-case rule's public clip scale, given directly (default
        :func:`gradient_scale`).
    rms_row_norm : float, optional
        A public value of ``sqrt(mean_i ||x_i||^2)`` (> 0): ``sqrt(n_features)`` for
        standardized features. Read from the private data it is a release, as a bound would
        be: declare it public only when it is (known before the data, or a public statistic).
    epsilon, delta, passes : float, optional
        The run's budget and passes (needed with ``rms_row_norm``).
    n_samples : int, optional
        The public n of the noise level (default ``problem.n_samples``, public under
        replace-one and zero-out; required under add/remove-one, where the count is private:
        pass the run's ``public_n``).
    label_bound : float, optional
        The public label bound Y of a regression loss for the noise-level rule's
        ``Lambda_0`` (default: the problem's public ``label_bound``).
    neighboring_relation : {"replace_one", "zero_out", "add_or_remove_one"}, default="replace_one"
        The relation of the run the defaults are for (DP-CD's default is replace-one, DP-SGD's
        zero-out: pass the run's). Under add/remove-one the noise-level rule will not read the
        private record count. Under replace-one DP-CD's noise level is ``2 nu``: the rule's
        ``A`` was fitted on zero-out runs (sensitivity C), and replace-one's sensitivity is
        2C (measured, issue 19 session 14: the estimators' DP-CD rule gained on California,
        R^2 0.610 to 0.617, and on synthetic regressions with n = 20,000 and p = 64, 0.48 to
        0.63, at epsilon = 1; at epsilon = 0.25 it cost on California, 0.594 to 0.576).
        DP-SGD's level does not depend on the relation but on its ``sampling``.
    sampling : {"poisson", "shuffle"}, default="poisson"
        DP-SGD's batches (:func:`~dpsco_core.dp_sgd`; DP-CD ignores it). Shuffled batches
        are not amplified: the noise level is :func:`sgd_noise_level`'s, ``sqrt(n / b)``
        times nu.
    batch_size : int, optional
        DP-SGD's batch size b, required with ``sampling="shuffle"``.

    Returns
    -------
    Candidate
    """
    _check_solver(solver)
    if rms_row_norm is None:
        scale = gradient_scale(problem, solver) if scale is None else float(scale)
        return Candidate(1.0, DEFAULT_CLIP_FACTOR[solver] * scale)
    rho = check_scalar(rms_row_norm, "rms_row_norm", low=0.0)
    if epsilon is None or delta is None or passes is None:
        raise ValueError("the noise-level rule (rms_row_norm=) needs the run's epsilon=, "
                         "delta= and passes=.")
    from ..privacy.budget import _check_relation
    from ..privacy.events import NeighboringRelation

    relation = _check_relation(neighboring_relation)
    if n_samples is None and relation is NeighboringRelation.ADD_OR_REMOVE_ONE:
        raise ValueError("under add/remove-one the record count is private: pass the "
                         "run's public_n as n_samples=.")
    n = problem.n_samples if n_samples is None else n_samples
    if solver == "sgd":
        nu = sgd_noise_level(n, problem.n_features, epsilon=epsilon, delta=delta,
                             passes=passes, sampling=sampling, batch_size=batch_size)
    else:
        nu = noise_level(n, problem.n_features, epsilon=epsilon, delta=delta, passes=passes)
        if relation is NeighboringRelation.REPLACE_ONE:
            # A was fitted on zero-out runs (sensitivity C); replace-one's is 2C, so the
            # same noise per update needs half the clip (diagnosis.md, section 15)
            nu *= 2.0
    factor = NOISE_RULE_MAX_FACTOR if nu == 0.0 else \
        min(NOISE_RULE_A[solver] / nu, NOISE_RULE_MAX_FACTOR)
    return Candidate(NOISE_RULE_STEP[solver],
                     _derivative_at_zero(problem, label_bound) * rho * factor)


def prediction_sgd_step(n_samples: int, n_features: int, *, epsilon: float, delta: float,
                        passes: float, batch_size: int, sampling: str = "poisson") -> float:
    r"""DP-SGD's step scale for held-out prediction, from the number of steps and the noise.

    .. math::

        \gamma = \min\Big(1, \frac{u \sqrt{\mathrm{passes}}}{T\, f \nu}\Big), \qquad
        T = \frac{\mathrm{passes} \cdot n}{b}, \qquad f \nu = \min(A, c_{\max} \nu),

    with :math:`\nu` of :func:`sgd_noise_level`, ``A`` = ``NOISE_RULE_A["sgd"]``, :math:`c_{\max}`
    = :data:`NOISE_RULE_MAX_FACTOR` (so :math:`\Lambda_0 \rho f` is the noise-level rule's
    clip), :math:`b` the batch size (at most n) and ``u`` = :data:`PREDICTION_SGD_U`; 1 when
    epsilon is infinite.

    **Origin.** Constant-step SGD with unbiased gradients of variance :math:`\sigma_g^2` reaches
    :math:`D^2 / (2\eta T) + \eta \sigma_g^2 / 2` from a start at distance D, smallest at
    :math:`\eta = D / (\sigma_g \sqrt T)`. DP-SGD's mean clipped gradient carries Gaussian
    noise of standard deviation about :math:`\mathrm{clip} \cdot \nu \sqrt{T / \mathrm{passes}}`;
    with the rule's clip :math:`\Lambda_0 \rho f` and the step scale :math:`\gamma = \eta
    \beta`, :math:`\beta = s_\ell \rho^2` (the trace bound the estimators use), this is the
    formula with :math:`u = (s_\ell / \Lambda_0) \rho D`: ``rho ||w*|| / Y`` for the squared
    losses, which no public number gives. u = 0.4 was fitted on the estimators' held-out
    tasks (20 passes): with step 0.1 (``NOISE_RULE_STEP``) DP-SGD took too few effective steps
    on small data (scikit-learn's diabetes, 28 steps: R^2 -0.16; a synthetic regression with
    n = 2,000, 156 steps: 0.24 against 0.63 with this rule) and on California (0.615 against
    0.636). It is not the reproduction's rule: on the relative error of the DP-CD
    reproduction's objectives at 50 passes (``reproduce tuning``) smaller steps than this are
    better (the noise floor of the objective, not the prediction, is what is measured there),
    so :func:`default_hyperparameters` keeps step 0.1.

    Parameters
    ----------
    n_samples : int
        The public n (>= 1).
    n_features : int
        p (>= 1), the intercept's column included.
    epsilon, delta, passes : float
        The run's budget and passes.
    batch_size : int
        DP-SGD's (expected) batch size, >= 1; at most n counts.
    sampling : {"poisson", "shuffle"}, default="poisson"
        DP-SGD's batches (:func:`sgd_noise_level`).

    Returns
    -------
    float
        The step scale in (0, 1].
    """
    n = check_int(n_samples, "n_samples", low=1)
    b = min(check_int(batch_size, "batch_size", low=1), n)
    passes = check_scalar(passes, "passes", low=0.0)
    nu = sgd_noise_level(n, n_features, epsilon=epsilon, delta=delta, passes=passes,
                         sampling=sampling, batch_size=b)
    if nu == 0.0:
        return 1.0
    steps = passes * n / b
    noise = min(NOISE_RULE_A["sgd"], NOISE_RULE_MAX_FACTOR * nu)
    return min(1.0, PREDICTION_SGD_U * math.sqrt(passes) / (steps * noise))


def auto_batch_size(n_samples: int, passes: float) -> int:
    r"""DP-SGD's batch size ``"auto"`` of the estimators: at least
    :data:`AUTO_BATCH_STEPS` (200) steps where the data allow.

    .. math::

        b = \min\big(256, \max(1, \lfloor \mathrm{passes} \cdot n / 200 \rfloor)\big).

    A function of public numbers (n is public under the relations of the estimators' DP-SGD,
    zero-out and replace-one). **Origin** (issue 19, session 14, ``docs/tuning/diagnosis.md``
    section 15): with 256 records a batch, 20 passes over scikit-learn's diabetes data (354
    training records) are 28 steps, too few at any step scale (held-out R^2 0.09 with step 1;
    0.48 with this rule, non-private 0.50); targets of 100 and 400 steps gave 0.40 and 0.48,
    and on larger data (n >= 2,560 at 20 passes) the batch stays 256.

    Parameters
    ----------
    n_samples : int
        The public n (>= 1).
    passes : float
        > 0.

    Returns
    -------
    int
    """
    n = check_int(n_samples, "n_samples", low=1)
    passes = check_scalar(passes, "passes", low=0.0)
    return int(min(AUTO_BATCH_MAX, max(1, math.floor(passes * n / AUTO_BATCH_STEPS))))


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


def noise_rule_grid(problem: Any, solver: str, *, rms_row_norm: float, epsilon: float,
                    delta: float, passes: float, n_samples: int | None = None,
                    label_bound: float | None = None,
                    neighboring_relation: Any = "replace_one", factors: Any = None,
                    steps: Any = None, sampling: str = "poisson",
                    batch_size: int | None = None) -> list[Candidate]:
    """The public candidates centred on the noise-level rule: its clip times ``factors``, x steps.

    ``clip = f * Lambda_0 rho min(A / nu, c_max)`` for each ``f`` in ``factors``
    (:data:`NOISE_GRID_FACTORS`: 1/4 to 4 for DP-CD, 1/16 to 2 for DP-SGD) and each step of
    ``steps`` (:data:`NOISE_GRID_STEPS`), with the rule of :func:`default_hyperparameters`
    at the run's ``epsilon``, ``delta`` and ``passes``. For a private selection the run is a
    trial: pass the trial's epsilon (:func:`~dpsco_core.tuning.search.tune_solver` does,
    given ``rms_row_norm=``), whose noise level is higher than the total's. A function of
    public numbers only, as the rule is.

    Parameters
    ----------
    problem : Problem
        The problem (its shape, loss and, for regression, public ``label_bound``).
    solver : {"cd", "sgd"}
    rms_row_norm : float
        A public value of ``sqrt(mean_i ||x_i||^2)`` (> 0), as in
        :func:`default_hyperparameters`.
    epsilon, delta, passes : float
        The run's budget and passes.
    n_samples : int, optional
        The run's public n (default ``problem.n_samples``; required under add/remove-one).
    label_bound : float, optional
        The public label bound Y of a regression loss.
    neighboring_relation : {"replace_one", "zero_out", "add_or_remove_one"}, default="replace_one"
    factors : sequence of float, optional
        Multiples of the rule's clip (> 0; default :data:`NOISE_GRID_FACTORS`).
    steps : sequence of float, optional
        Step scales (> 0; default :data:`NOISE_GRID_STEPS`).
    sampling : {"poisson", "shuffle"}, default="poisson"
        DP-SGD's batches (:func:`default_hyperparameters`).
    batch_size : int, optional
        DP-SGD's batch size, required with ``sampling="shuffle"``.

    Returns
    -------
    list of Candidate
    """
    _check_solver(solver)
    centre = default_hyperparameters(problem, solver, rms_row_norm=rms_row_norm,
                                     epsilon=epsilon, delta=delta, passes=passes,
                                     n_samples=n_samples, label_bound=label_bound,
                                     neighboring_relation=neighboring_relation,
                                     sampling=sampling, batch_size=batch_size)
    factors = NOISE_GRID_FACTORS[solver] if factors is None else tuple(factors)
    steps = NOISE_GRID_STEPS[solver] if steps is None else tuple(steps)
    if not factors or not steps:
        raise ValueError("factors and steps must be non-empty.")
    factors = [check_scalar(f, "factors", low=0.0) for f in factors]
    steps = [check_scalar(t, "steps", low=0.0) for t in steps]
    return [Candidate(float(t), float(f * centre.clip)) for t in steps for f in factors]
