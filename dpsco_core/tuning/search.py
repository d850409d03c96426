"""Private hyperparameter search for DP-CD and DP-SGD: :func:`tune_solver`.

One trial = the solver with a candidate (step, clip), then the private score
(:mod:`~dpsco_core.tuning.score`) of its model; the trials are selected by
:func:`~dpsco_core.tuning.selection.private_selection`. DP-SGD's trials use Poisson batches
(zero-out by default) or, with ``sampling="shuffle"``, shuffled fixed-size batches
(replace-one by default), accounted exactly as :func:`~dpsco_core.solvers.dp_sgd.dp_sgd`
accounts them.

**What a trial trains and scores on.** By default (``validation_fraction=0``) every trial
trains on all the records and is scored on the same records: the score is the noisy clipped
training objective, which is what DP-CD and DP-SGD minimise, and the only one that can be
compared with the relative error of the empirical objective. Privacy needs no held-out part:
the trial's release (model and score) is the composition of two mechanisms on the same data,
and the trial's event is that composition. The score's sensitivity is then ``B / n`` (five
times less noise than on a 20% split, ``B / n_v``), and the trials see all the records.
With ``validation_fraction > 0`` the records are split by a uniformly random partition with
public sizes ``n_v = round(validation_fraction n)`` and ``n - n_v``, drawn independently of the
data, so each record lies in one part (the held-out score measures generalisation; it is the
choice when the training objective can overfit, many features for few records). Under
add/remove-one the record count is private: ``public_n`` normalises every run and score, and
no split is offered.

**Budget.** With ``refit=False`` the whole (epsilon, delta) goes to the selection, and the
release is the selected trial's model. With ``refit=True``
the selection is calibrated to ``t selection_share epsilon`` (at ``delta / 2``) and one more
run on the whole data with the selected hyperparameters to ``t (1 - selection_share)
epsilon`` (at ``delta / 2``), with the largest ``t >= 1`` (bisection, 1%) for which the RDP
accountant's composition of the two events converts to at most ``epsilon`` at ``delta``; the
report is checked against ``epsilon``. In a trial the score's Gaussian gets a zCDP share: its rho is
``score_share / (1 - score_share)`` times the solver's (RDP at order 2 over 2); the solver's
epsilon is the largest (bisection, to a relative 1e-3, conservative end) for which the
selection's event converts to at most its target.
"""

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._random import check_random_state, child_seed_sequences
from .._validation import check_delta, check_scalar
from ..privacy.accountants import RdpAccountant
from ..privacy.budget import Budget, _check_relation, spend
from ..privacy.calibration import _largest_within
from ..privacy.events import (ComposedDpEvent, GaussianDpEvent, NeighboringRelation,
                              PoissonSampledDpEvent,
                              RepeatAndSelectDpEvent, SelfComposedDpEvent)
from ..privacy.report import (DEFAULT_ASSUMPTIONS, SEEDED_ASSUMPTION, PrivacyReport,
                              seed_assumptions)
from ..problems import _CLASSIFICATION_KINDS, Problem
from ..solvers._common import normaliser
from .grids import Candidate, candidate_grid, noise_rule_grid
from .score import regression_loss_clip, score_event, validation_score
from .selection import Trial, private_selection

__all__ = ["TuningResult", "tune_solver", "trial_epsilon", "search_event",
           "zero_model_score_bound", "DEFAULT_SCORE_SHARE", "DEFAULT_MEAN_TRIALS",
           "DEFAULT_TRIALS_SHAPE", "ZERO_FALLBACK_MARGIN"]

#: Relative accuracy of the bisection on the trial's epsilon.
TRIAL_EPSILON_TOLERANCE = 1e-3
DEFAULT_RELATION = {"cd": "replace_one", "sgd": "zero_out"}
#: Share of each trial's zCDP rho spent on its score, the default of :func:`tune_solver` and
#: :func:`trial_epsilon` alike (one constant: a caller of ``trial_epsilon`` gets the trial
#: ``tune_solver`` runs). 0.3: chosen for issue 19 on the evaluation problems
#: (``docs/tuning/diagnosis.md``, section 2).
DEFAULT_SCORE_SHARE = 0.3
#: The number of trials K: truncated negative binomial with eta = 2 (Papernot and Steinke
#: 2022, Definition 1 and Theorem 2) and E[K] = 80. Against the geometric K (eta = 1, Liu and
#: Talwar's random stopping, the default until session 10) at the same mean, the (1 + eta)
#: factor of Theorem 2 costs 17% of the trial's epsilon (0.363 instead of 0.435 for DP-CD at
#: n = 20,433 and epsilon 1), and K concentrates: P[K <= 2], where one or two trials release
#: a nearly random candidate, falls from 0.025 to 0.0029, and the chance that a given one of
#: 6 (18) candidates is never drawn from 0.059 to 0.016 (0.175 to 0.096). Chosen on the
#: expected error of the search, tails included, over the eight rows of ``reproduce tuning``
#: (simulated, ``docs/tuning/diagnosis.md`` section 11: lower than the geometric K on all
#: eight, by 5x to 8x on standardized California), and checked over 10 seeds there. E[K]: 80
#: since session 9 (40 before; section 10). :func:`tune_solver` also releases the zero model
#: when the selected score certifies a model worse than it (``zero_fallback``). Poisson K
#: (``shape=inf``) with mean 14 (P[K <= 2] = 9e-5, trial epsilon 0.41) is lower still in
#: expectation on standardized California and worse on Electricity and on larger grids
#: (section 9).
DEFAULT_MEAN_TRIALS = 80.0
DEFAULT_TRIALS_SHAPE = 2.0
#: Loss clip of classification scores, in units of the loss of w = 0 (log 2 for the logistic
#: loss): at 2, issue 19 measured the clipped validation loss ranking DP-CD's candidates on
#: Electricity against their objective (truncation hid the large losses of bad models).
#: Chosen on the evaluation problem (Electricity), as stated in the README.
CLASSIFICATION_LOSS_CLIP = 8.0
#: The assumption the selection adds to the report.
SELECTION_ASSUMPTION = ("hyperparameters selected privately (random stopping, Papernot and "
                        "Steinke 2022): the candidates and split sizes are public, the number "
                        "of trials and the other trials stay secret")


@dataclass(frozen=True)
class TuningResult:
    """The release of :func:`tune_solver`.

    Attributes
    ----------
    coef : ndarray of shape (n_features,)
        The released model.
    candidate : Candidate
        The selected (step, clip) (part of the release).
    score : float
        The selected trial's private score.
    privacy : PrivacyReport
        The whole search (and refit), from its event tree.
    trial_epsilon : float
        The epsilon each trial's solver is calibrated to (at the selection's delta).
    history : History or None
        The refit's history (exact objective values, not private; None without refit).
    zero_fallback : bool
        True when the selected trial's private score certified a model worse than the zero
        model and ``coef`` is the zero model instead (:func:`zero_model_score_bound`).
    """

    coef: Any
    candidate: Candidate
    score: float
    privacy: PrivacyReport
    trial_epsilon: float
    history: Any = None
    zero_fallback: bool = False


#: Standard deviations of the score's noise between the selected score and the zero model's
#: bound before the zero model is released instead (:func:`tune_solver`): at 3, a model at
#: least as good as the zero model is replaced with probability below 0.0014.
ZERO_FALLBACK_MARGIN = 3.0


def zero_model_score_bound(problem: Any, loss_clip: float) -> float:
    """A public upper bound Z on the clipped mean loss of the zero model w = 0.

    Every record's clipped loss at w = 0 is ``min(l(0, y_i), B)``, at most
    ``Z = min(B, max_{y in labels} l(0, y))`` with the labels {-1, 1} of the classification
    losses, [-Y, Y] for a regression loss with the public label bound Y (its maximum is at
    an end: the losses are convex in y), and ``B`` alone otherwise; the penalties vanish at
    w = 0. So the zero model's private score is at least ``-Z`` (less its noise), under
    replace-one and zero-out (a null record contributes 0); under add/remove-one, up to the
    ratio of the private count to ``public_n``. A function of public arguments only.

    Parameters
    ----------
    problem : Problem
    loss_clip : float
        The score's public clip B.

    Returns
    -------
    float
    """
    loss = problem.loss
    if loss.kind in _CLASSIFICATION_KINDS:
        labels = np.array([-1.0, 1.0])
    else:
        Y = None if problem.public_bounds is None else problem.public_bounds.label_bound
        if Y is None:
            return float(loss_clip)
        labels = np.array([-float(Y), float(Y)])
    return float(min(loss_clip, np.max(loss.value(np.zeros(2), labels))))


def _split_problem(problem, index):
    public = problem.public_bounds
    kwargs = {} if public is None else dict(bounds=public.bounds, row_norm=public.row_norm,
                                            label_bound=public.label_bound)
    X = problem.X[index] if not problem.is_sparse else problem.X[index]
    return Problem(X, problem.y[index], loss=problem.loss, penalty=problem.penalty, **kwargs)


def _default_loss_clip(problem):
    loss = problem.loss
    if loss.kind in _CLASSIFICATION_KINDS:
        return CLASSIFICATION_LOSS_CLIP * float(np.max(loss.value(np.zeros(2),
                                                                  np.array([-1.0, 1.0]))))
    Y = None if problem.public_bounds is None else problem.public_bounds.label_bound
    if Y is None:
        raise ValueError("loss_clip is needed for a regression loss without a public "
                         "label_bound (the default is the loss at residual sqrt(2) "
                         "label_bound, regression_loss_clip).")
    return regression_loss_clip(loss, Y)


@functools.lru_cache(maxsize=512)
def _solver_event(solver, epsilon, delta, n, p, passes, batch_size, average,
                  sampling="poisson"):
    """The event the solver reports for these public arguments (its own calibration)."""
    if solver == "cd":
        from ..solvers.dp_cd import _calibrate, dp_cd_schedule

        T, K = dp_cd_schedule(p, passes=passes, average=average)
        return _calibrate(epsilon, delta, T * K, "rdp")[1]
    from ..privacy.calibration import calibrate_gaussian, calibrate_sampled_gaussian
    from ..solvers.dp_sgd import dp_sgd_schedule

    if sampling == "shuffle":
        # dp_sgd's shuffle accounting: one Gaussian release per epoch (its Notes)
        _, _, steps, per_epoch = dp_sgd_schedule(n, passes, sampling="shuffle",
                                                 batch_size=min(batch_size, n))
        epochs = -(-steps // per_epoch)
        s = calibrate_gaussian(target_epsilon=epsilon, target_delta=delta, steps=epochs,
                               accountant="rdp", conversion="improved")
        return SelfComposedDpEvent(GaussianDpEvent(s), epochs)
    q, _, steps, _ = dp_sgd_schedule(n, passes, batch_size=min(batch_size, n))
    s = calibrate_sampled_gaussian(target_epsilon=epsilon, target_delta=delta, sample_rate=q,
                                   steps=steps, conversion="improved")
    return SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(s)), steps)


@functools.lru_cache(maxsize=512)
def _score_multiplier(solver_event, score_share):
    """The score's noise multiplier: its zCDP rho is ``score_share / (1 - score_share)``
    times the solver's RDP at order 2 divided by 2 (the trial's rho for Gaussian solvers)."""
    rho_solver = float(RdpAccountant([2.0]).compose(solver_event).rdp[0]) / 2.0
    rho_score = rho_solver * score_share / (1.0 - score_share)
    if not rho_score > 0.0:
        # a run calibrated to epsilon ~ 1e-150 or less: its RDP underflows to 0 and the score
        # would need infinite noise (1 / sqrt(0) raised ZeroDivisionError; found by hypothesis,
        # session 17)
        raise ValueError("epsilon is too small for the private selection: the trials' runs "
                         "are so noisy that their Renyi divergence underflows to 0, and the "
                         "scores would need infinite noise. Give a larger epsilon.")
    return 1.0 / math.sqrt(2.0 * rho_score)


def _trial_event(solver, e, delta, n, p, passes, batch_size, average, score_share,
                 sampling="poisson"):
    """The trial's event: the solver at epsilon ``e`` and the score (``_score_multiplier``)."""
    run = _solver_event(solver, e, delta, n, p, passes, batch_size, average, sampling)
    return ComposedDpEvent((run, score_event(_score_multiplier(run, score_share))))


def _epsilon_of(event, delta, relation):
    return RdpAccountant(None, relation).compose(event).get_epsilon(delta)


def _default_relation(solver, sampling):
    """:func:`tune_solver`'s relation when none is given."""
    return "replace_one" if sampling == "shuffle" and solver == "sgd" else \
        DEFAULT_RELATION[solver]


def _search_report(event, delta, relation, epsilon, final_eps, final_delta, **kwargs):
    """The search's report: the RDP accountant on dp-accounting's order grid, as always; where
    that grid cannot certify ``epsilon`` (a small budget with a refit, whose closed-form
    calibration's optimal order lies beyond the grid's 1024: tune_solver(epsilon=1e-4,
    refit=True) on 2 records reported 0.0035 and raised RuntimeError after the runs; found by
    hypothesis, session 17), again with the orders around the zCDP optima of (epsilon, delta)
    and of the refit's share, as the estimators' reports add them."""
    from ..privacy.calibration import _report_orders, zcdp_centred_orders

    report = PrivacyReport.from_event(event, delta=delta, neighboring_relation=relation,
                                      **kwargs)
    if report.epsilon > epsilon:
        extra = zcdp_centred_orders(epsilon, delta)
        if final_eps is not None:
            extra += zcdp_centred_orders(final_eps, final_delta)
        report = PrivacyReport.from_event(event, delta=delta, neighboring_relation=relation,
                                          orders=_report_orders(extra), **kwargs)
    return report


def _check_score_noise(noise_multiplier, loss_clip, n_val, epsilon):
    """Refuse, before anything is charged, a score whose exact Gaussian noise (standard
    deviation ``noise_multiplier loss_clip / n_val``, public numbers) the secure sampler's grid
    cannot hold (a tiny epsilon): every trial would fail at its score, after the charge."""
    from .._secure import gaussian_parameters

    try:
        gaussian_parameters(loss_clip / n_val, noise_multiplier, 1)
    except ValueError:
        raise ValueError(
            f"epsilon={epsilon!r} is too small for the search: each trial's private score "
            f"needs Gaussian noise of {noise_multiplier:.3g} times its sensitivity, beyond "
            "what the exact sampler holds. Use a larger epsilon, a smaller mean (fewer "
            "trials) or a larger score_share.") from None


def _check_sgd_relation(relation, sampling, name):
    """Refuse the pairs ``dp_sgd`` refuses (its accounting holds Poisson batches under
    add/remove-one and zero-out, shuffled batches under replace-one and zero-out), naming
    the caller's argument ``name``."""
    if (relation is NeighboringRelation.REPLACE_ONE and sampling == "poisson") or (
            relation is NeighboringRelation.ADD_OR_REMOVE_ONE and sampling == "shuffle"):
        allowed = ("add_or_remove_one or zero_out" if sampling == "poisson"
                   else "replace_one or zero_out")
        raise ValueError(f"{name}={relation.value!r} is not supported by DP-SGD with "
                         f"sampling={sampling!r}: its accounting holds under {allowed}.")


def search_event(*, epsilon: float, delta: float, solver: str, n_samples: int,
                 n_features: int, passes: float, mean: float = DEFAULT_MEAN_TRIALS,
                 shape: float = DEFAULT_TRIALS_SHAPE,
                 score_share: float = DEFAULT_SCORE_SHARE, refit: bool = False,
                 selection_share: float = 0.3, neighboring_relation: Any = None,
                 batch_size: int = 256, average: bool = False,
                 sampling: str = "poisson") -> Any:
    """The event :func:`tune_solver` charges, from public arguments only (no split).

    The same plan as the search's (:func:`trial_epsilon`, and the refit's share scaled up to
    the budget), for a caller that composes several searches before any of them runs (the
    one-vs-rest fits of :class:`~dpsco_core.estimators.DPLogisticRegression`). Arguments as
    in :func:`tune_solver` with ``validation_fraction=0``; ``n_samples`` is the public record
    count (``public_n`` under add/remove-one).

    Returns
    -------
    DpEvent
        ``RepeatAndSelectDpEvent(trial, mean, shape)``, composed with the refit's event when
        ``refit``.
    """
    if solver not in ("cd", "sgd"):
        raise ValueError(f"solver must be 'cd' or 'sgd'; got {solver!r}.")
    epsilon = check_scalar(epsilon, "epsilon", low=0.0)
    delta = check_delta(delta)
    if refit:
        selection_share = check_scalar(selection_share, "selection_share", low=0.0, high=1.0)
    if solver == "cd":
        sampling = "poisson"            # as tune_solver: one cache key for DP-CD's events
    relation = _check_relation(neighboring_relation or _default_relation(solver, sampling))
    if solver == "sgd":
        _check_sgd_relation(relation, sampling, "neighboring_relation")
    events = _search_plan(solver, epsilon, delta, n_samples, n_samples, n_features, passes,
                          mean, shape, relation, batch_size, average, score_share, refit,
                          selection_share if refit else None, sampling)[3]
    return events[0] if len(events) == 1 else ComposedDpEvent(tuple(events))


def _search_plan(solver, epsilon, delta, n_train, m, p, passes, mean, shape, relation,
                 batch_size, average, score_share, refit, selection_share, sampling):
    """The events :func:`tune_solver` charges, from public arguments only: ``(trial epsilon,
    trial event, selection delta, [selection event (, refit event)], refit epsilon, refit
    delta)`` (the last two None without refit)."""
    def plan(scale):
        """Events of the search with the selection at ``scale * share * epsilon`` and the
        refit at ``scale * (1 - share) * epsilon``, each at delta / 2."""
        sel_eps = scale * selection_share * epsilon if refit else epsilon
        sel_delta = delta / 2 if refit else delta
        e, trial_ev = trial_epsilon(
            target_epsilon=sel_eps, target_delta=sel_delta, solver=solver, n_train=n_train,
            n_features=p, passes=passes, mean=mean, shape=shape, relation=relation,
            batch_size=batch_size, average=average, score_share=score_share,
            sampling=sampling)
        events = [RepeatAndSelectDpEvent(trial_ev, float(mean), float(shape))]
        if refit:
            events.append(_solver_event(solver, scale * (1.0 - selection_share) * epsilon,
                                        delta / 2, m, p, passes, batch_size, average,
                                        sampling))
        return e, trial_ev, sel_delta, events

    e_trial, t_event, sel_delta, events = plan(1.0)
    final_eps = final_delta = None
    if refit:
        # The RDP composition at delta is below the sum of the two parts (each at delta / 2):
        # scale both up together while the whole stays within epsilon (bisection, 1%).
        lo, hi = 1.0, 1.0 / max(selection_share, 1.0 - selection_share)
        for _ in range(8):
            mid = 0.5 * (lo + hi)
            cand_plan = plan(mid)
            if _epsilon_of(ComposedDpEvent(tuple(cand_plan[3])), delta, relation) <= epsilon:
                lo, (e_trial, t_event, sel_delta, events) = mid, cand_plan
            else:
                hi = mid
        final_eps, final_delta = lo * (1.0 - selection_share) * epsilon, delta / 2
    return e_trial, t_event, sel_delta, events, final_eps, final_delta


def trial_epsilon(*, target_epsilon, target_delta, solver, n_train, n_features, passes,
                  mean, shape, relation, batch_size=256, average=False,
                  score_share=DEFAULT_SCORE_SHARE, sampling="poisson"):
    """The largest solver epsilon of a trial whose selection is (target_epsilon, target_delta)-DP.

    Parameters
    ----------
    target_epsilon : float
        Epsilon of the whole selection.
    target_delta : float
        Delta of the whole selection (also the delta each trial is calibrated at).
    solver : {"cd", "sgd"}
    n_train, n_features : int
        Public sizes of the training split.
    passes : float
    mean, shape : float
        The distribution of the number of trials.
    relation : NeighboringRelation
    batch_size : int, default=256
    average : bool, default=False
    score_share : float, default=DEFAULT_SCORE_SHARE (0.3)
        Share of the trial's zCDP rho spent on its score, as in :func:`tune_solver`.
    sampling : {"poisson", "shuffle"}, default="poisson"
        DP-SGD's batch sampling (ignored by DP-CD).

    Returns
    -------
    tuple
        ``(epsilon, trial_event)``: the conservative end of the bisection.
    """
    from ..exceptions import PrivacyBudgetError

    if solver not in ("cd", "sgd"):
        raise ValueError(f"solver must be 'cd' or 'sgd'; got {solver!r}.")
    if sampling not in ("poisson", "shuffle"):
        raise ValueError(f"sampling must be 'poisson' or 'shuffle'; got {sampling!r}.")
    relation = _check_relation(relation, "relation")
    if solver == "sgd":
        _check_sgd_relation(relation, sampling, "relation")

    def cost(e):
        try:
            trial = _trial_event(solver, e, target_delta, n_train, n_features, passes,
                                 batch_size, average, score_share, sampling)
        except PrivacyBudgetError:       # below what the solver's calibration can reach
            return math.inf, None
        return _epsilon_of(RepeatAndSelectDpEvent(trial, mean, shape), target_delta,
                           relation), trial

    import warnings

    from ..exceptions import OrderGridWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderGridWarning)
        lo, hi = target_epsilon * 0.05, target_epsilon
        lowest, trial = cost(lo)
        if lowest > target_epsilon:
            if trial is None:       # the solver's own calibration, not the selection, refused
                raise ValueError(
                    f"the selection cannot meet epsilon={target_epsilon!r}: {solver!r} cannot "
                    f"calibrate trials of epsilon {lo:.3g} (delta={target_delta!r}, "
                    f"{passes!r} passes). Use a larger epsilon or fewer passes.")
            raise ValueError(f"the selection cannot meet epsilon={target_epsilon!r}: with "
                             f"trials of epsilon {lo:.3g} it costs {lowest:.3g}, most of it the "
                             f"random stopping's own (mean={mean!r}, shape={shape!r}, "
                             f"delta={target_delta!r}): use a smaller mean or shape, or a "
                             "larger epsilon.")
        lo = _largest_within(lambda e: cost(e)[0] <= target_epsilon, lo, hi,
                             TRIAL_EPSILON_TOLERANCE)
        return lo, cost(lo)[1]


def tune_solver(problem: Problem, *, epsilon: float, delta: float, solver: str = "cd",
                passes: float = 20.0, candidates: Any = None, mean: float = DEFAULT_MEAN_TRIALS,
                shape: float = DEFAULT_TRIALS_SHAPE, validation_fraction: float = 0.0,
                loss_clip: float | None = None, score_share: float = DEFAULT_SCORE_SHARE,
                refit: bool = False, selection_share: float = 0.3,
                neighboring_relation: Any = None, public_n: int | None = None,
                batch_size: int = 256, average: bool = False, sampling: str = "poisson",
                random_state: Any = None, budget: Any = None,
                conditions: tuple = (), rms_row_norm: float | None = None,
                label_bound: float | None = None) -> "TuningResult":
    """Train privately with hyperparameters selected privately (module docstring).

    Parameters
    ----------
    problem : Problem
        The private data; with public bounds when ``candidates`` is None (the grid comes
        from them: :func:`~dpsco_core.tuning.grids.candidate_grid`).
    epsilon : float
        Total epsilon of the search (and refit), in (0, inf).
    delta : float
        Total delta, in (0, 1).
    solver : {"cd", "sgd"}, default="cd"
    passes : float, default=20.0
    candidates : sequence of Candidate or of (step, clip) pairs, optional
        Public (step, clip) pairs; default the public grid: centred on the noise-level rule
        at the trial's epsilon given ``rms_row_norm``
        (:func:`~dpsco_core.tuning.grids.noise_rule_grid`), else spanning the bounds' scale
        (:func:`~dpsco_core.tuning.grids.candidate_grid`).
    mean, shape : float, default=DEFAULT_MEAN_TRIALS (80.0), DEFAULT_TRIALS_SHAPE (2.0)
        E[K] and the distribution of the number of trials (the truncated negative binomial's
        eta: 2, the default, see :data:`DEFAULT_MEAN_TRIALS`; 1: geometric, Liu and Talwar's
        random stopping; inf: Poisson; 0: logarithmic; other eta > 0). Under Poisson, K = 0
        (probability e^-mean) releases the zero model.
    validation_fraction : float, default=0.0
        Public share of the records held out for the scores, in [0, 1). ``0``: no split,
        every trial trains on all the records and is scored on them (the clipped training
        objective; the right score when the goal is the empirical objective itself, and five
        times less score noise than a 20% split, whose sensitivity is ``B / n_v``).
    loss_clip : float, optional
        Public clip B of each record's validation loss (default: 8 log 2 for the logistic
        loss, :data:`CLASSIFICATION_LOSS_CLIP` times the loss of w = 0; for regression the
        loss at residual ``sqrt(2) label_bound``, twice the loss of w = 0 for the squared
        loss: :func:`~dpsco_core.tuning.score.regression_loss_clip`).
    score_share : float, default=DEFAULT_SCORE_SHARE (0.3)
        Share of each trial's zCDP rho spent on its score, in (0, 1).
    refit : bool, default=False
        Refit on all the data with the selected hyperparameters (module docstring).
    selection_share : float, default=0.3
        With ``refit``: the share of epsilon spent on the selection, in (0, 1).
    neighboring_relation : str, optional
        Default: replace-one for DP-CD and for DP-SGD with ``sampling="shuffle"``, zero-out
        for DP-SGD with Poisson sampling (which refuses replace-one, as ``dp_sgd`` does).
    public_n : int, optional
        The public record count, required under add/remove-one (where n is private): every
        run and score divides by it and DP-SGD's sampling rate is ``batch_size / public_n``.
        Under add/remove-one only ``validation_fraction=0`` is offered (a split of the
        private records into parts of public sizes is not a function of public numbers), and
        it is refused up front otherwise. Under replace-one and zero-out it must be None or
        n.
    batch_size : int, default=256
        DP-SGD's (expected) batch size.
    average : bool, default=False
        DP-CD: average the iterates (``passes`` whole with ``average=False``).
    sampling : {"poisson", "shuffle"}, default="poisson"
        DP-SGD's batch sampling (:func:`~dpsco_core.solvers.dp_sgd.dp_sgd`): Poisson
        (zero-out or add/remove-one) or shuffled fixed-size batches (replace-one or
        zero-out, one Gaussian release per epoch, no amplification claimed). Ignored by
        DP-CD.
    random_state : None, int, SeedSequence or Generator
        Seeds the split, the selection and every run: the search is reproducible from a
        seed.
    budget : Budget, optional
        Charged with the whole event before the data are read. Every distinct candidate's
        public checks run before the charge (the solver's own, up to its charge): a
        candidate any trial or the refit would refuse raises with nothing charged.
    conditions : tuple of str, default=()
        Data-dependent conditions of the caller (for example a grid scale read from the
        data), added to the report with the runs' own assumptions and conditions.
    rms_row_norm : float, optional
        A public root-mean-square row norm ``sqrt(mean_i ||x_i||^2)`` (``sqrt(n_features)``
        for standardized features): without ``candidates``, the grid is centred on the
        noise-level rule (:func:`~dpsco_core.tuning.grids.noise_rule_grid`) at the trial's
        epsilon and delta, the passes and the training part's public size. Public only when
        it is known before the data (it is not read from them here). With public bounds it
        also gives the solvers' smoothness constants
        (:func:`~dpsco_core.public_bounds.rms_smoothness`: equal second moments under one
        bound, upper bounds under bounds that differ) in place of the bounds' worst cases.
    label_bound : float, optional
        The public label bound of a regression loss for that rule (default the problem's
        public ``label_bound``).

    Returns
    -------
    TuningResult

    Notes
    -----
    **Privacy guarantee.** (epsilon, delta)-DP under ``neighboring_relation`` for the model
    and the selected hyperparameters, from the event ``RepeatAndSelectDpEvent(trial, mean,
    shape)`` (Papernot and Steinke 2022, Theorems 2 and 6; see
    :mod:`dpsco_core.privacy.selection`), composed with the refit's event, by the RDP
    accountant. Each trial is the solver's event (its own calibration) composed with the
    score's Gaussian event (sensitivity ``loss_clip / n_v`` with the public ``n_v``). The
    split sizes are public, the split is independent of the data, the candidates are
    public, and the number of trials, the other trials and their scores stay secret.

    **Zero-model fallback.** When the selected score is below ``-(Z + 3 s B / n_v)``, with
    ``Z`` the public bound of the zero model's clipped mean loss
    (:func:`zero_model_score_bound`) and ``s B / n_v`` the score's noise std, the selected
    model is certified worse than predicting 0 and the zero model is released instead (no
    refit is run); ``zero_fallback`` says so. This is post-processing of the release (the
    selected score and public numbers) and changes no guarantee. It guards the small-K tail
    of the random stopping: with the geometric K, one search in 40 runs at most two trials
    (one in 350 with the default eta = 2) and releases a nearly random candidate of the grid, and a grid spanning orders of
    magnitude of clips holds candidates that diverge (``docs/tuning/diagnosis.md``,
    section 9).
    """
    if solver not in ("cd", "sgd"):
        raise ValueError(f"solver must be 'cd' or 'sgd'; got {solver!r}.")
    epsilon = check_scalar(epsilon, "epsilon", low=0.0)
    delta = check_delta(delta)
    fraction = check_scalar(validation_fraction, "validation_fraction", low=0.0, high=1.0,
                            low_open=False)
    score_share = check_scalar(score_share, "score_share", low=0.0, high=1.0)
    if sampling not in ("poisson", "shuffle"):
        raise ValueError(f"sampling must be 'poisson' or 'shuffle'; got {sampling!r}.")
    if solver == "cd":
        sampling = "poisson"            # not used by DP-CD: one cache key for its events
    relation = _check_relation(neighboring_relation or _default_relation(solver, sampling))
    if solver == "sgd":
        from ..solvers.dp_sgd import _relation as _sgd_relation

        _sgd_relation(relation, sampling)   # the pairs dp_sgd refuses, refused up front
    if refit:
        selection_share = check_scalar(selection_share, "selection_share", low=0.0, high=1.0)
    n, p = problem.n_samples, problem.n_features
    # The record count every size below is computed from: n, or public_n under add/remove-one
    # (normaliser refuses a missing public_n there, and one != n under the other relations),
    # checked before anything else so that no trial starts on a count it cannot use.
    m = normaliser(relation, n, public_n)
    split = fraction > 0.0
    if split and relation is NeighboringRelation.ADD_OR_REMOVE_ONE:
        raise ValueError("under add/remove-one the record count is private, and a split into "
                         "parts of public sizes is not a function of public numbers: pass "
                         "validation_fraction=0 (score on the training records, normalised by "
                         "public_n).")
    if split and n < 3:
        # one validation record and two training records at the least (the split sizes are
        # public functions of n, so refusing here reveals nothing beyond n)
        raise ValueError(f"private selection splits the data into a training part (at least 2 "
                         f"records) and a validation part (at least 1); got n_samples={n}. "
                         "Pass step= and clip= to train without selection, or "
                         "validation_fraction=0.")
    n_val = min(n - 2, max(1, int(round(fraction * n)))) if split else m
    n_train = n - n_val if split else m
    B = _default_loss_clip(problem) if loss_clip is None else \
        check_scalar(loss_clip, "loss_clip", low=0.0)
    if rms_row_norm is not None:          # checked here whatever uses it below
        rms_row_norm = check_scalar(rms_row_norm, "rms_row_norm", low=0.0)
    centred = candidates is None and rms_row_norm is not None
    if candidates is None and not centred:
        candidates = candidate_grid(problem, solver)
    e_trial, t_event, sel_delta, events, final_eps, final_delta = _search_plan(
        solver, epsilon, delta, n_train, m, p, passes, mean, shape, relation, batch_size,
        average, score_share, refit, selection_share if refit else None, sampling)
    if centred and rms_row_norm is not None:      # (mypy: centred implies it)
        # the trial's noise level, from public numbers only (its epsilon, delta, passes and
        # the training part's public size), before anything is charged or read
        candidates = noise_rule_grid(problem, solver, rms_row_norm=rms_row_norm,
                                     epsilon=e_trial, delta=sel_delta, passes=passes,
                                     n_samples=n_train, label_bound=label_bound,
                                     neighboring_relation=relation, sampling=sampling,
                                     batch_size=batch_size)
    candidates = _checked_candidates(candidates)
    event = events[0] if len(events) == 1 else ComposedDpEvent(tuple(events))
    # With public bounds, the solvers' constants are the bounds' worst cases, against which the
    # rule's step 1 is 25 times short on standardized features bounded at +-5: rho gives
    # them instead (public_bounds.rms_smoothness, as the estimators do). Without bounds the
    # solvers keep their own constants.
    constants = None
    if rms_row_norm is not None and problem.public_bounds is not None:
        from ..public_bounds import rms_smoothness

        constants = rms_smoothness(problem.loss, rms_row_norm, p,
                                   feature_bounds=problem.public_bounds.feature_bounds(p))

    _check_score_noise(t_event.events[1].noise_multiplier, B, n_val, epsilon)
    planned = _search_report(event, delta, relation, epsilon, final_eps, final_delta)
    if planned.epsilon > epsilon:
        raise ValueError(f"epsilon={epsilon!r} is too small for this search: the RDP accountant "
                         f"puts the selection and the refit at epsilon {planned.epsilon:.3g}. "
                         "Use refit=False, or a larger epsilon.")
    # Each run divides by its public count: the split's size (public under replace-one and
    # zero-out) or public_n under add/remove-one (no split then).
    train_n = m if relation is NeighboringRelation.ADD_OR_REMOVE_ONE else None

    def run(problem_, cand, eps_, delta_, seed, record_history=False, budget=None):
        return _run_solver(solver, problem_, cand, eps_, delta_, passes, batch_size, average,
                           relation, seed, record_history, public_n=train_n,
                           sampling=sampling, smoothness=constants, budget=budget)

    # Every candidate's public checks, on a training part of the trials' public size (its
    # first rows: which rows does not matter to checks that read none), then the refit's.
    _check_runs_before_charge(run, _split_problem(problem, slice(0, n - n_val)) if split
                              else problem, candidates, e_trial, sel_delta)
    if refit:
        _check_runs_before_charge(run, problem, candidates, final_eps, final_delta)
    spend(budget, event, neighboring_relation=relation, delta=delta)   # before the data

    seed_split, seed_sel, seed_final = child_seed_sequences(check_random_state(random_state),
                                                            3)
    if split:
        perm = np.random.default_rng(seed_split).permutation(n)
        train, val = _split_problem(problem, np.sort(perm[n_val:])), \
            _split_problem(problem, np.sort(perm[:n_val]))
    else:
        train = val = problem
    e_solver = e_trial
    s_event = t_event.events[1]
    s_score = s_event.noise_multiplier

    def trial(cand, seed):
        s_run, s_sc = child_seed_sequences(seed, 2)
        result = run(train, cand, e_solver, sel_delta, s_run)
        score = validation_score(val, result.coef, loss_clip=B, noise_multiplier=s_score,
                                 public_n=n_val, random_state=s_sc)
        facts = (result.privacy.assumptions, result.privacy.conditions)
        return Trial(score, (result.coef, facts),
                     ComposedDpEvent((result.privacy.event, s_event)))

    selected = private_selection(trial, candidates, trial_event=t_event, mean=mean,
                                 shape=shape, random_state=seed_sel)
    if selected.candidate is None:          # Poisson K = 0: nothing selected, the default
        from .grids import default_hyperparameters
        cand = default_hyperparameters(problem, solver) if problem.public_bounds is not None \
            else candidates[0]
        coef, facts = np.zeros(p), ((), ())
    else:
        cand, (coef, facts) = selected.candidate, selected.output
    # Post-processing of the release (the selected score and public numbers): a score below
    # the zero model's public bound by ZERO_FALLBACK_MARGIN noise std certifies a model worse
    # than predicting 0, what a run of one or two trials (P[K <= 2] = 0.0029 under the
    # default K, 0.025 under the geometric) releases when it draws a diverging candidate.
    threshold = -(zero_model_score_bound(val, B) + ZERO_FALLBACK_MARGIN * s_score * B / n_val)
    zero_fallback = selected.candidate is not None and selected.score < threshold
    if zero_fallback:
        coef = np.zeros(p)
    assumptions, conds = list(facts[0]), list(facts[1]) + list(conditions)
    history = None
    if refit and not zero_fallback:
        result = run(problem, cand, final_eps, final_delta, seed_final, record_history=True)
        if result.privacy.event != events[1]:
            raise RuntimeError("the refit reported another event than the one charged.")
        coef, history = result.coef, result.history
        assumptions += result.privacy.assumptions
        conds += result.privacy.conditions
    assumptions.append(SELECTION_ASSUMPTION)
    # The runs were seeded from the search's own seed sequence: whether the search is seeded
    # is the caller's random_state, not theirs. DEFAULT_ASSUMPTIONS first: with K = 0 no run
    # brought them.
    assumptions = [*DEFAULT_ASSUMPTIONS, *(a for a in assumptions if a != SEEDED_ASSUMPTION),
                   *seed_assumptions(random_state)]
    report = _search_report(event, delta, relation, epsilon, final_eps, final_delta,
                            assumptions=tuple(dict.fromkeys(assumptions)),
                            conditions=tuple(dict.fromkeys(conds)))
    # strict (session 19 review): a report above the target, by however little, is an error
    if report.epsilon > epsilon:
        raise RuntimeError(f"privacy calibration error: the search's epsilon "
                           f"{report.epsilon!r} exceeds the target {epsilon!r}.")
    return TuningResult(np.asarray(coef), cand, selected.score, report, e_trial, history,
                        bool(zero_fallback))


class _PublicChecksPassed(Exception):
    """Raised by :class:`_ChecksOnlyBudget` at a run's charge: every check before it passed."""


class _ChecksOnlyBudget(Budget):
    """A budget whose charge ends the run: a solver given it runs the checks it makes before
    its charge (public arguments and constants only: no record is read before a charge) and
    stops there, reading no data and drawing no noise."""

    def __init__(self) -> None:
        super().__init__(1.0, 0.5)

    def charge(self, event: Any, *, neighboring_relation: Any,
               delta: float | None = None) -> float:
        raise _PublicChecksPassed


def _checked_candidates(candidates):
    """The public candidates as a non-empty list of :class:`Candidate` (``(step, clip)``
    pairs are converted), each step and clip a number in (0, inf): checked before the
    search's charge, so that no trial fails on them after the data were read."""
    if isinstance(candidates, (str, bytes)) or not hasattr(candidates, "__iter__"):
        raise TypeError("candidates must be a sequence of Candidate(step, clip); got "
                        f"{type(candidates).__name__}.")
    checked = []
    for i, cand in enumerate(candidates):
        if not isinstance(cand, Candidate):
            if not (isinstance(cand, (tuple, list)) and len(cand) == 2):
                raise TypeError(f"candidates[{i}] must be a Candidate(step, clip) or a (step, "
                                f"clip) pair; got {type(cand).__name__}.")
            cand = Candidate(*cand)
        checked.append(Candidate(check_scalar(cand.step, f"candidates[{i}].step", low=0.0),
                                 check_scalar(cand.clip, f"candidates[{i}].clip", low=0.0)))
    if not checked:
        raise ValueError("candidates is empty: pass at least one Candidate(step, clip).")
    return checked


def _check_runs_before_charge(run, problem, candidates, epsilon, delta):
    """Run each distinct candidate's pre-charge checks (:class:`_ChecksOnlyBudget`).

    A trial refused for a public reason (a step whose noise overflows at this epsilon, a clip
    the solver refuses) would otherwise fail after the search's charge, with the budget spent
    and a run of trials already made on the data; with public constants every such refusal
    is raised here, before the charge. Checks that need the data (constants read from them,
    without public bounds) still run inside the trials.
    """
    for cand in dict.fromkeys(candidates):
        try:
            run(problem, cand, epsilon, delta, None, budget=_ChecksOnlyBudget())
        except _PublicChecksPassed:
            continue
        raise RuntimeError("a run passed its checks without charging its budget.")


def _run_solver(solver, problem, cand, epsilon, delta, passes, batch_size, average, relation,
                seed, record_history=False, public_n=None, sampling="poisson",
                smoothness=None, budget=None):
    """One run; ``smoothness``: None (the solver's default) or ``(M, beta)`` public constants."""
    if solver == "cd":
        from ..solvers.dp_cd import dp_cd

        return dp_cd(problem, epsilon=epsilon, delta=delta, passes=passes, step=cand.step,
                     clip=cand.clip, average=average, neighboring_relation=relation,
                     public_n=public_n, random_state=seed, record_history=record_history,
                     smoothness="auto" if smoothness is None else smoothness[0], budget=budget)
    from ..solvers.dp_sgd import dp_sgd

    m = problem.n_samples if public_n is None else public_n
    return dp_sgd(problem, epsilon=epsilon, delta=delta, passes=passes,
                  batch_size=min(batch_size, m), step=cand.step, clip=cand.clip,
                  neighboring_relation=relation, public_n=public_n, random_state=seed,
                  record_history=record_history, conversion="improved", sampling=sampling,
                  smoothness="auto" if smoothness is None else smoothness[1], budget=budget)
