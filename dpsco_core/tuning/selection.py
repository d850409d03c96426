"""Private selection among candidate configurations: random stopping, best run released.

:func:`private_selection` is the algorithm of Papernot and Steinke (ICLR 2022, Algorithm 1 /
section 3) and, with geometric stopping, of Liu and Talwar (STOC 2019, Algorithm 2):

1. draw the number of runs K from public parameters (:mod:`~dpsco_core.tuning.stopping`);
2. for k = 1..K: pick a candidate uniformly at random (independently of the data) and run
   the private trial on it, which returns a private score and an output;
3. release the candidate, output and score of the run with the highest score (nothing if
   K = 0, possible with Poisson K).

Every run is the same randomized algorithm Q (uniform candidate, then the trial), so the
theorems of :mod:`dpsco_core.privacy.selection` apply: the release is covered by
``RepeatAndSelectDpEvent(trial_event, mean, shape)``. K, the other runs and their scores
are not released (K is secret: see :mod:`~dpsco_core.tuning.stopping`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._random import check_random_state, child_seed_sequences
from .._validation import check_int
from ..privacy.budget import spend
from ..privacy.events import DpEvent, RepeatAndSelectDpEvent
from ..privacy.selection import check_repeat_and_select
from . import stopping

__all__ = ["Trial", "SelectionResult", "private_selection"]


@dataclass(frozen=True)
class Trial:
    """What one private run returns.

    Attributes
    ----------
    score : float
        Its private score (higher is better), part of the run's release.
    output : object
        Its private output (for example a model).
    event : DpEvent
        The privacy event of the run (output and score together); checked against the
        selection's declared ``trial_event``.
    """

    score: float
    output: Any
    event: DpEvent


@dataclass(frozen=True)
class SelectionResult:
    """The release of :func:`private_selection`: the best run only.

    Attributes
    ----------
    candidate : object or None
        The selected candidate (None when no run was made, Poisson K = 0).
    index : int or None
        Its position in ``candidates``.
    output : object or None
        The selected run's output.
    score : float
        The selected run's private score (``-inf`` when no run was made).
    event : RepeatAndSelectDpEvent
        The event of the whole selection.
    """

    candidate: Any
    index: Any
    output: Any
    score: float
    event: RepeatAndSelectDpEvent


def private_selection(trial: Callable[[Any, Any], Trial], candidates: Sequence[Any], *,
                      trial_event: DpEvent, mean: float = 10.0, shape: float = 1.0,
                      random_state: Any = None, budget: Any = None,
                      neighboring_relation: Any = None,
                      delta: float | None = None) -> SelectionResult:
    """Select a candidate privately: K random runs, the best released (random stopping).

    Parameters
    ----------
    trial : callable
        ``trial(candidate, seed_sequence) -> Trial``: one private run on the private data
        with its private score. Every run must have the privacy event ``trial_event``.
    candidates : sequence
        The public candidates (chosen without looking at the private data).
    trial_event : DpEvent
        The privacy event of one run (output and score), from public arguments.
    mean : float, default=10.0
        E[K], the expected number of runs.
    shape : float, default=1.0
        Distribution of K: eta in [0, inf) (truncated negative binomial; 0 logarithmic, 1
        geometric) or ``inf`` (Poisson).
    random_state : None, int, SeedSequence or Generator
        Seeds K, the candidates' draws and each run (child streams of one SeedSequence):
        the selection is reproducible from a seed. ``None`` (a real release) keeps K
        secret.
    budget : Budget, optional
        Charged with the whole selection's event before the first run.
    neighboring_relation : str or NeighboringRelation, optional
        The relation of ``trial_event`` (needed with ``budget``).
    delta : float, optional
        The delta at which ``budget`` converts (needed with ``budget``).

    Returns
    -------
    SelectionResult

    Raises
    ------
    RuntimeError
        If a run reports another event than ``trial_event`` (its cost would not be covered).

    Notes
    -----
    **Privacy guarantee.** If every run is :math:`(\\lambda, \\varepsilon(\\lambda))`-RDP
    under a neighbouring relation (``trial_event``'s curve), the release is
    ``RepeatAndSelectDpEvent(trial_event, mean, shape)`` under the same relation: Papernot and
    Steinke (2022), Theorem 2 (truncated negative binomial) or Theorem 6 (Poisson); with
    geometric K and pure :math:`\\varepsilon`-DP runs also :math:`3\\varepsilon`-DP (Liu and
    Talwar 2019, Theorem 3.1). See :mod:`dpsco_core.privacy.selection` for the formulas. The
    guarantee needs K, the other runs and their scores kept secret, and the runs
    independent: run k draws from its own child stream.
    """
    mean, shape = check_repeat_and_select(mean, shape)
    candidates = list(candidates)
    n_candidates = check_int(len(candidates), "len(candidates)", low=1)
    if not isinstance(trial_event, DpEvent):
        raise TypeError(f"trial_event must be a DpEvent; got {type(trial_event).__name__}.")
    event = RepeatAndSelectDpEvent(trial_event, mean, shape)
    if budget is not None:
        spend(budget, event, neighboring_relation=neighboring_relation, delta=delta)
    seed_k, seed_pick, seed_runs = child_seed_sequences(check_random_state(random_state), 3)
    n_runs = stopping.sample_num_trials(mean, shape, seed_k)
    picks = np.random.default_rng(seed_pick).integers(0, n_candidates, size=n_runs)
    best = SelectionResult(None, None, None, -np.inf, event)
    for j, seed in zip(picks.tolist(), child_seed_sequences(seed_runs, n_runs)):
        result = trial(candidates[j], seed)
        if not isinstance(result, Trial):
            raise TypeError(f"trial must return a Trial; got {type(result).__name__}.")
        if result.event != trial_event:
            raise RuntimeError(f"a run reported the event {result.event!r}, not the declared "
                               f"trial_event {trial_event!r}: its cost is not covered.")
        score = float(result.score)
        if best.index is None or score > best.score:
            best = SelectionResult(candidates[j], j, result.output, score, event)
    return best
