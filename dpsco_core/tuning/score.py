"""The private score of a trial: a clipped objective on a set of records, with noise.

The score of a model ``w`` on the records ``V`` (``|V| = n_v``, a public size: the held-out
split of :func:`~dpsco_core.tuning.search.tune_solver`, or the training records themselves
under its default ``validation_fraction=0``; ``public_n`` under add/remove-one) is

.. math::

    S(w) = -\\Big(\\frac{1}{n_v} \\sum_{i \\in V} \\min(\\ell(\\langle x_i, w\\rangle, y_i), B)
    + \\psi(w)\\Big) + \\mathcal N\\big(0, (s B / n_v)^2\\big),

the negated objective with every record's loss clipped to the public ``B``
(``loss_clip``), the penalty :math:`\\psi(w)` (a function of ``w`` alone) and Gaussian noise
of noise multiplier ``s`` (:func:`dpsco_core.mechanisms.gaussian_mechanism`).

**Sensitivity and neighbouring relation.** Each clipped loss lies in [0, B] (the losses are
non-negative). Replace-one: one record of V changes, the sum by at most B. Zero-out: a record
becomes the null record, which contributes nothing, so again at most B. Add/remove-one: the
sum changes by at most B, and the normaliser ``n_v`` is a public size (``public_n``), never the
private count of V (issue 15's rule: a noisy sum is normalised by a public constant). Under
all three the l2 sensitivity of the mean is ``B / n_v``, and the release is the Gaussian
mechanism ``GaussianDpEvent(s)`` under the relation of the caller. ``w`` is a private output
of the same trial (its cost is in the trial's event), and the penalty is post-processing.
When V are the records ``w`` was trained on, the score is a second mechanism on the same data
chosen after the first's output (adaptive composition): the trial's event composes both,
which covers it.
"""

import math
from typing import Any

import numpy as np

from .._validation import check_scalar
from ..mechanisms import gaussian_mechanism
from ..privacy.events import GaussianDpEvent

__all__ = ["validation_score", "score_event", "regression_loss_clip",
           "REGRESSION_RESIDUAL_CLIP"]


#: The residual, in label bounds Y, at which a regression score clips each record's loss
#: (:func:`regression_loss_clip`). Chosen for issue 19 on the evaluation problems (raw and
#: standardized California, 10 seeds, ``docs/tuning/diagnosis.md``, section 4) between 1 (the
#: loss of w = 0: biased on raw California, where outlying records have losses 50x above
#: it) and 2 (every prediction inside [-Y, Y] unclipped: four times the noise, which the
#: noise-limited standardized problem pays for).
REGRESSION_RESIDUAL_CLIP = math.sqrt(2.0)


def regression_loss_clip(loss: Any, label_bound: float, *,
                         residual: float = REGRESSION_RESIDUAL_CLIP) -> float:
    """The public loss clip B of a regression score: the loss at residual ``residual * Y``.

    ``Y`` is the public label bound (``|y| <= Y``). B is a function of public arguments only,
    so the sensitivity argument of the module docstring holds with it. At the default
    :data:`REGRESSION_RESIDUAL_CLIP` (sqrt 2) B is ``2 Y^2`` for the squared loss ``(t -
    y)^2``: twice the loss of w = 0 at ``|y| = Y``, the clip of session 6, which cut records
    that every reasonable model has and, on raw California, hid the errors that separate
    DP-SGD's candidates (the loss of w = 0 is 25 against losses up to 1,400). ``residual=2``
    clips no prediction inside the label range (its largest residual is 2Y), at twice the
    score noise of the default.

    Parameters
    ----------
    loss : Loss
        A regression loss (a function of the residual ``t - y``).
    label_bound : float
        The public ``Y`` > 0.
    residual : float, default=REGRESSION_RESIDUAL_CLIP
        The residual in units of ``Y``, > 0.

    Returns
    -------
    float
    """
    Y = check_scalar(label_bound, "label_bound", low=0.0)
    r = check_scalar(residual, "residual", low=0.0) * Y
    return float(np.max(loss.value(np.array([r, -r]), np.zeros(2))))


def score_event(noise_multiplier: float) -> GaussianDpEvent:
    """The event of one score release: ``GaussianDpEvent(noise_multiplier)``.

    Parameters
    ----------
    noise_multiplier : float
        > 0.

    Returns
    -------
    GaussianDpEvent
    """
    return GaussianDpEvent(check_scalar(noise_multiplier, "noise_multiplier", low=0.0))


def validation_score(problem: Any, coef: Any, *, loss_clip: float, noise_multiplier: float,
                     public_n: int | None = None, random_state: Any = None) -> float:
    """Private score of ``coef`` on the records of ``problem`` (module docstring).

    Parameters
    ----------
    problem : Problem
        The scored records (private): the held-out split, or the training records.
    coef : ndarray of shape (n_features,)
        The model to score.
    loss_clip : float
        The public clip B > 0 of every record's loss.
    noise_multiplier : float
        s > 0: the noise has standard deviation ``s B / n_v``.
    public_n : int, optional
        The public size ``n_v`` of the split (default: its number of rows, public when the
        split sizes are, as in :func:`~dpsco_core.tuning.search.tune_solver`).
    random_state : None, int, SeedSequence or Generator

    Returns
    -------
    float
        The noisy negated clipped objective (higher is better).

    Notes
    -----
    **Privacy guarantee.** ``GaussianDpEvent(noise_multiplier)`` (see :func:`score_event`)
    under replace-one, zero-out or add/remove-one with the public ``n_v``: the clipped mean
    has l2 sensitivity ``B / n_v`` under each.
    """
    B = check_scalar(loss_clip, "loss_clip", low=0.0)
    s = check_scalar(noise_multiplier, "noise_multiplier", low=0.0)
    n_v = problem.n_samples if public_n is None else int(public_n)
    coef = np.asarray(coef, dtype=np.float64)
    margins = np.asarray(problem.X @ coef).ravel()
    losses = np.minimum(np.asarray(problem.loss.value(margins, problem.y), dtype=np.float64), B)
    value = float(np.sum(np.maximum(losses, 0.0))) / n_v
    noisy = gaussian_mechanism(value, sensitivity=B / n_v, noise_multiplier=s,
                               random_state=random_state)
    penalty = 0.0 if problem.penalty is None else float(problem.penalty.value(coef))
    return -(float(noisy) + penalty)
