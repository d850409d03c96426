r"""The streaming binary-tree mechanism (continual counting) with Gaussian node noise.

Releases noisy prefix sums :math:`\tilde G_s = \sum_{i \le s} v_i + N_s` of a stream of
vectors :math:`v_1, \dots, v_T` (note 003, section 4.1; Dwork, Naor, Pitassi and Rothblum
2010; Chan, Shi and Song 2011; Lemma 8 of Choquette-Choo, Ganesh and Thakurta 2024). Node
:math:`(k, j)` (level :math:`k`, :math:`j` odd, :math:`j 2^k \le T`) covers the leaves
:math:`(j-1)2^k + 1 .. j 2^k` and carries :math:`\xi_{k,j} \sim \mathcal N(0, \sigma^2 I_p)`;
the prefix :math:`[1, s]` is tiled by the nodes :math:`(k, s \gg k)` over the set bits
:math:`k` of :math:`s`, so :math:`N_s \sim \mathcal N(0, \mathrm{popcount}(s) \sigma^2 I_p)`.
Exactly one node completes per step (level ``ctz(s)``): one fresh Gaussian vector per step,
``bit_length(T)`` live vectors (O(p log T) memory). The compiled step is
``dpsco_core._kernels._tree.tree_step``.

Privacy. A record changes one leaf by at most :math:`\Delta` in l2; the leaf lies in at most
``bit_length(T)`` nodes (one per level), so the release is a Gaussian mechanism of
sensitivity :math:`\Delta \sqrt{\mathrm{bit\_length}(T)}`: ``sqrt(bit_length(T)) * Delta /
sigma``-GDP, also for adaptively chosen leaves. :meth:`TreeAggregation.event` returns the
:class:`~dpsco_core.privacy.events.SingleEpochTreeAggregationDpEvent`. Only ``T`` steps are
covered: the calibration depends on ``T``, so running longer raises.

Variance reduction (``variance_reduced=True``): the full tree (every ``j``, ``ctz(s) + 1``
fresh vectors at step ``s``, the same sensitivity) with Honaker's (2015) inverse-variance
combination of each node with its children, bottom-up, which is causal. Then
:math:`\mathrm{Var}(N_s) = \sigma^2 \sum_{k \in \mathrm{bits}(s)} 2^k / (2^{k+1} - 1)`, between
1/2 and 1 times the plain variance (see :func:`prefix_noise_variance`).

Randomness: node :math:`(k, j)`, coordinate block ``b`` draws from ``PCG64DXSM`` seeded by
``SeedSequence(entropy, spawn_key=spawn_key + (k, j, b))`` of the mechanism's seed sequence:
the noise is the same for any ``n_threads``, for either estimator (shared nodes) and for any
horizon. The seed is a secret (never stored in results).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._config import effective_n_threads
from ._kernels import _tree
from ._random import BIT_GENERATOR, check_random_state
from ._typing import ArrayLike, FloatArray, RandomStateLike
from ._validation import check_int, check_scalar, check_vector
from .privacy.budget import Budget, spend
from .privacy.events import (NeighboringRelation, NonPrivateDpEvent,
                             SingleEpochTreeAggregationDpEvent)

__all__ = ["TreeAggregation", "tree_nodes", "prefix_nodes", "node_interval",
           "leaf_multiplicity", "prefix_noise_variance", "tree_aggregation"]


def tree_nodes(steps):
    """Nodes ``(k, j)`` of the streaming tree over ``steps`` leaves, in completion order.

    Node ``(k, j)`` (``j`` odd, ``j 2^k <= steps``) completes at step ``j 2^k``; there are
    exactly ``steps`` of them (one per step).

    Parameters
    ----------
    steps : int
        Number of leaves (steps), >= 1.

    Returns
    -------
    list of tuple of int
    """
    steps = check_int(steps, "steps", low=1)
    out = []
    for s in range(1, steps + 1):
        k = (s & -s).bit_length() - 1
        out.append((k, s >> k))
    return out


def prefix_nodes(s):
    """The nodes ``(k, s >> k)`` over the set bits ``k`` of ``s``: they tile ``[1, s]``.

    Parameters
    ----------
    s : int
        Prefix length, >= 1.

    Returns
    -------
    list of tuple of int
        The nodes ``(k, j)``, from the largest.
    """
    s = check_int(s, "s", low=1)
    return [(k, s >> k) for k in range(s.bit_length()) if (s >> k) & 1]


def node_interval(k, j):
    """Leaves ``(lo, hi)`` (1-indexed, inclusive) covered by node ``(k, j)``.

    Parameters
    ----------
    k : int
        Level of the node (0 for a leaf).
    j : int
        Index of the node at its level (1-indexed).

    Returns
    -------
    tuple of int
    """
    return (j - 1) * 2 ** k + 1, j * 2 ** k


def leaf_multiplicity(steps):
    """Largest number of streaming-tree nodes that hold one leaf: ``bit_length(steps)``.

    Parameters
    ----------
    steps : int
        Number of leaves, >= 1.

    Returns
    -------
    int
    """
    return check_int(steps, "steps", low=1).bit_length()


def prefix_noise_variance(s, variance_reduced=False):
    """Per-coordinate variance of ``N_s`` in units of ``sigma^2``.

    ``popcount(s)`` for the plain tree; ``sum_{k in bits(s)} 2^k / (2^{k+1} - 1)`` for the
    variance-reduced (Honaker, bottom-up) estimator.

    Parameters
    ----------
    s : int
        Prefix length, >= 1.
    variance_reduced : bool, default=False
        The plain tree or Honaker's variance-reduced estimator.

    Returns
    -------
    float
    """
    s = check_int(s, "s", low=1)
    if not variance_reduced:
        return float(bin(s).count("1"))
    return float(sum(2.0 ** k / (2.0 ** (k + 1) - 1.0) for k, _ in prefix_nodes(s)))


class TreeAggregation:
    r"""Streaming binary-tree mechanism: noisy prefix sums with ``bit_length(T)`` live nodes.

    Parameters
    ----------
    n_features : int
        Length ``p`` of each stream vector, >= 1.
    steps : int
        Horizon ``T`` >= 1 (the calibration depends on it; :meth:`next` raises beyond it).
    noise_scale : float
        Node noise standard deviation :math:`\sigma` in [0, inf) (0: no noise, for tests and
        non-private runs).
    variance_reduced : bool, default=False
        Honaker's bottom-up estimator over the full tree (module docstring).
    random_state : None, int, SeedSequence or Generator
        None (default): fresh OS entropy, as a private release must.
    n_threads : int, optional
        Threads for the noise (None: all cores). The output does not depend on it.
    budget : Budget, optional
        A :class:`~dpsco_core.privacy.Budget` charged here, at construction, with the event of
        the whole stream of ``steps`` releases (``event(sensitivity)``), before any leaf is
        read; a release that would exceed it, or whose relation is not the budget's, raises
        :class:`~dpsco_core.exceptions.PrivacyBudgetError` and nothing is charged. Needs
        ``sensitivity``.
    sensitivity : float, optional
        The l2 bound :math:`\Delta` on the change of one leaf when one record changes under
        ``neighboring_relation`` (> 0, public). Required with ``budget``, unused without.
    neighboring_relation : {"replace_one", "zero_out"} or NeighboringRelation, optional
        The relation ``sensitivity`` is stated under (None: the budget's own relation). The
        tree event is analysed under zero-out and replace-one; under add/remove-one the budget
        refuses it (UnsupportedEventError).

    Notes
    -----
    **Privacy guarantee.** If each record changes one leaf by at most :math:`\Delta` (l2,
    under the neighbouring relation of the caller), the sequence of outputs is
    :math:`\sqrt{\mathrm{bit\_length}(T)}\,\Delta/\sigma`-GDP; :meth:`event` describes it for
    an accountant. The caller passes the exact prefix sum and must keep it secret.
    ``noise_scale=0`` is a non-private run: its event has an infinite epsilon, so a budget
    refuses it.

    Examples
    --------
    >>> import numpy as np
    >>> from dpsco_core.tree import TreeAggregation
    >>> tree = TreeAggregation(3, steps=4, noise_scale=0.0, random_state=0)
    >>> tree.next(np.ones(3))
    array([1., 1., 1.])
    """

    def __init__(self, n_features: int, steps: int, *, noise_scale: float,
                 variance_reduced: bool = False, random_state: RandomStateLike = None,
                 n_threads: int | None = None, budget: Budget | None = None,
                 sensitivity: float | None = None,
                 neighboring_relation: str | NeighboringRelation | None = None,
                 _impl: Any = None) -> None:
        self._p = check_int(n_features, "n_features", low=1)
        self._steps = check_int(steps, "steps", low=1)
        self._noise_scale = check_scalar(noise_scale, "noise_scale", low=0.0, low_open=False)
        # public arguments before the budget is charged: an invalid call costs nothing
        self._seed = check_random_state(random_state)
        self._n_threads = effective_n_threads(n_threads)
        if budget is not None:
            # The whole stream's event is fixed by public arguments: charge it before any leaf
            # (the only private input, given to next()) is read.
            if sensitivity is None:
                raise ValueError("budget needs sensitivity=<the l2 bound on one record's change "
                                 "of a leaf> (the tree does not see the records).")
            sensitivity = check_scalar(sensitivity, "sensitivity", low=0.0)
            event = (self.event(sensitivity) if self._noise_scale > 0.0
                     else NonPrivateDpEvent())          # no noise: no finite guarantee
            spend(budget, event, neighboring_relation=neighboring_relation)
        self._variance_reduced = bool(variance_reduced)
        self._impl = _tree if _impl is None else _impl
        self._state = np.zeros((self._steps.bit_length(), self._p))
        self._n_blocks = -(-self._p // _tree.TREE_BLOCK_SIZE)
        self._step = 0

    @property
    def steps(self) -> int:
        """int: the horizon T."""
        return self._steps

    @property
    def step(self) -> int:
        """int: prefix sums released so far."""
        return self._step

    @property
    def levels(self) -> int:
        """int: ``bit_length(T)``, the nodes holding one leaf at most (and the live vectors)."""
        return self._steps.bit_length()

    @property
    def noise_scale(self) -> float:
        """float: the node noise standard deviation."""
        return self._noise_scale

    @property
    def variance_reduced(self) -> bool:
        """bool: whether the Honaker estimator is used."""
        return self._variance_reduced

    def _node_generators(self, k, j):
        seed = self._seed
        return [BIT_GENERATOR(np.random.SeedSequence(
            seed.entropy, spawn_key=tuple(seed.spawn_key) + (k, j, b), pool_size=seed.pool_size))
            for b in range(self._n_blocks)]

    def next(self, x: ArrayLike, *, out: FloatArray | None = None) -> FloatArray:
        """Release the noisy prefix sum of length ``step + 1``: ``x + N_{step+1}``.

        Parameters
        ----------
        x : array-like of shape (n_features,)
            The exact prefix sum (secret; not modified): finite real numbers, converted to a
            contiguous float64 vector when it is not one.
        out : ndarray of shape (n_features,), optional
            Where to write the result (may be ``x`` itself): a writeable, C-contiguous
            float64 vector. A new array by default.

        Returns
        -------
        ndarray of shape (n_features,)

        Raises
        ------
        TypeError
            If ``x`` is not real-valued, or ``out`` is not a float64 ndarray.
        ValueError
            If ``x`` or ``out`` does not have length ``n_features``, ``x`` has NaN or inf
            (noise added to NaN releases NaN), or ``out`` is not writeable and contiguous.
        RuntimeError
            After ``steps`` releases.
        """
        x_arr: FloatArray = check_vector(x, "x")
        if x_arr.shape[0] != self._p:
            raise ValueError(f"x must have length n_features={self._p}; got {x_arr.shape[0]}.")
        if out is not None:
            _check_out(out, self._p)
        if self._step >= self._steps:
            raise RuntimeError(f"the tree was calibrated for steps={self._steps} releases; "
                               "running longer is not covered by its privacy analysis.")
        s = self._step + 1
        k0 = (s & -s).bit_length() - 1
        levels = range(k0 + 1) if self._variance_reduced else [k0]
        gens = [g for k in levels for g in self._node_generators(k, s >> k)]
        if out is None:
            out = np.empty(self._p)
        self._impl.tree_step(x_arr, s, self._noise_scale, self._variance_reduced, gens,
                             self._state, out, self._n_threads)
        self._step = s
        return out

    def prefix_variance(self, s: int | None = None) -> float:
        """Per-coordinate variance of ``N_s`` (default: the last released ``s``).

        Parameters
        ----------
        s : int, optional
            The prefix length, in ``[1, steps]``.

        Returns
        -------
        float
            The variance, in the units of the noise (``noise_std ** 2`` times
            :func:`prefix_noise_variance`).
        """
        s = self._step if s is None else s
        return self._noise_scale ** 2 * prefix_noise_variance(s, self._variance_reduced)

    def event(self, sensitivity: float) -> SingleEpochTreeAggregationDpEvent:
        """The privacy event of the whole release, for leaf l2 sensitivity ``sensitivity``.

        Parameters
        ----------
        sensitivity : float
            l2 sensitivity of one leaf (one step's contribution) under the caller's relation.

        Returns
        -------
        SingleEpochTreeAggregationDpEvent
            Every prefix sum released by the tree, for a record that enters one leaf: the event is
            composed exactly by :class:`~dpsco_core.privacy.GdpAccountant` (mu-GDP) or by RDP.
        """
        sensitivity = check_scalar(sensitivity, "sensitivity", low=0.0)
        return SingleEpochTreeAggregationDpEvent(self._noise_scale / sensitivity, self._steps)


def _check_out(out, p):
    if not isinstance(out, np.ndarray) or out.dtype != np.float64:
        got = f"dtype {out.dtype}" if isinstance(out, np.ndarray) else type(out).__name__
        raise TypeError(f"out must be a float64 numpy array; got {got}.")
    if out.shape != (p,):
        raise ValueError(f"out must have shape (n_features,) = ({p},); got {out.shape}.")
    if not (out.flags.c_contiguous and out.flags.writeable):
        raise ValueError("out must be a writeable, C-contiguous array.")


def tree_aggregation(stream, *, noise_scale, variance_reduced=False, random_state=None,
                     n_threads=None, budget=None, sensitivity=None, neighboring_relation=None):
    """Noisy prefix sums of a whole stream (a convenience over :class:`TreeAggregation`).

    Parameters
    ----------
    stream : array-like of shape (T, p)
        Leaves ``v_1 .. v_T`` in order.
    noise_scale : float
        Node noise standard deviation, >= 0.
    variance_reduced : bool, default=False
    random_state, n_threads, budget, sensitivity, neighboring_relation
        As for :class:`TreeAggregation` (the budget is charged before the stream is read).

    Returns
    -------
    ndarray of shape (T, p)
        Row ``s - 1`` is ``sum_{i <= s} v_i + N_s``.
    """
    if budget is not None:
        # Charged before the stream is read: only its shape is needed for the event.
        shape = np.shape(stream)
        if len(shape) == 2 and shape[0] >= 1 and shape[1] >= 1:
            TreeAggregation(shape[1], shape[0], noise_scale=noise_scale, budget=budget,
                            sensitivity=sensitivity, neighboring_relation=neighboring_relation,
                            random_state=0)
    arr = np.asarray(stream, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError(f"stream must be a non-empty 2-d array (T, p); got shape {arr.shape}.")
    check_vector(arr.ravel(), "stream")
    T, p = arr.shape
    tree = TreeAggregation(p, T, noise_scale=noise_scale, variance_reduced=variance_reduced,
                           random_state=random_state, n_threads=n_threads)
    prefix = np.cumsum(arr, axis=0)
    return np.stack([tree.next(prefix[s]) for s in range(T)])
