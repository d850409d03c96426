"""Privacy accountants: compose a tree of events, then answer epsilon-for-delta queries.

Every accountant follows one contract (after dp-accounting's ``PrivacyAccountant``):

* it is built with a :class:`~dpsco_core.privacy.events.NeighboringRelation` and checks, event by
  event, that its analysis holds under that relation;
* ``supports(event)`` is a dry run of the traversal ``compose`` performs;
* ``compose(event, count=1)`` validates the whole tree before touching the state, raises
  :class:`~dpsco_core.exceptions.UnsupportedEventError` for an event (or relation) it cannot
  account for and :class:`ValueError` for an event with invalid parameters, and leaves the state
  unchanged on any error; it returns the accountant;
* ``get_epsilon(delta)``, ``get_epsilon_and_order(delta)`` and ``get_delta(epsilon)`` report
  upper bounds, rounded up;
* ``ledger`` is the composed event (the input of :class:`~dpsco_core.privacy.report.PrivacyReport`).
"""

import abc
import copy
import math
import warnings

import numpy as np

from .._validation import check_delta, check_epsilon, check_int, check_positive, check_scalar
from ..exceptions import OrderGridWarning, UnsupportedEventError, external_stacklevel
from ._checks import (check_conversion, check_orders, check_sample_rate, immutable_orders,
                      is_immutable_orders, round_up)
from .conversions import _rdp_to_delta, _rdp_to_epsilon
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
    RepeatAndSelectDpEvent,
    SelfComposedDpEvent,
    SingleEpochTreeAggregationDpEvent,
    ZCDpEvent,
    check_relation,
)
from .gdp import gdp_delta, gdp_epsilon
from .interop import relation_to_dp_accounting
from .rdp import rdp_gaussian, rdp_laplace, rdp_pure, rdp_sampled_gaussian, rdp_zcdp
from .with_replacement import rdp_sampled_with_replacement_gaussian
from .selection import check_repeat_and_select, liu_talwar_epsilon, rdp_repeat_and_select

__all__ = ["DEFAULT_RDP_ORDERS", "PrivacyAccountant", "RdpAccountant", "PureDpAccountant",
           "GdpAccountant", "PldAccountant", "DEFAULT_PLD_DISCRETIZATION", "tree_depth",
           "rdp_slack_of"]

#: dp-accounting's default grid (``dp_accounting.rdp.rdp_privacy_accountant.DEFAULT_RDP_ORDERS``):
#: 1.1, 1.2, ..., 10.9, then 11, ..., 63, then 128, 256, 512, 1024. Using the same grid makes
#: our epsilons match dp-accounting's.
DEFAULT_RDP_ORDERS = tuple([1.0 + x / 10.0 for x in range(1, 100)]
                           + [float(x) for x in range(11, 64)] + [128.0, 256.0, 512.0, 1024.0])

#: The default grid, validated once (immutable: the accountants take it without a copy).
_DEFAULT_GRID = immutable_orders(DEFAULT_RDP_ORDERS)


class _Unsupported(Exception):
    """Internal: carries the message of an unsupported event up the traversal."""


def _check_relation(neighboring_relation):
    # strings too, as the budget and the solvers take them (session 16)
    return check_relation(neighboring_relation)


def _check_event(event):
    if not isinstance(event, DpEvent):
        raise TypeError(f"event must be a DpEvent; got {type(event).__name__} {event!r}.")
    return event


class PrivacyAccountant(abc.ABC):
    """Base class of the accountants; see the module docstring for the contract.

    Parameters
    ----------
    neighboring_relation : NeighboringRelation, default=ADD_OR_REMOVE_ONE
        The relation under which sensitivities (and so noise multipliers) are measured.
    """

    #: Short name reported in :class:`~dpsco_core.privacy.report.PrivacyReport`.
    name = "abstract"

    def __init__(self, neighboring_relation=NeighboringRelation.ADD_OR_REMOVE_ONE):
        self._relation = _check_relation(neighboring_relation)
        self._ledger = ()

    @property
    def neighboring_relation(self):
        """NeighboringRelation: the relation the accountant's analysis assumes."""
        return self._relation

    @property
    def ledger(self):
        """ComposedDpEvent: every event composed so far, in order (counts as SelfComposed)."""
        return ComposedDpEvent(self._ledger)

    def supports(self, event):
        """Return whether ``event`` (a whole tree) can be composed, without composing it.

        Only the structure and the neighbouring relation are checked; parameter values are
        validated by :meth:`compose`.

        Parameters
        ----------
        event : DpEvent
            The event tree.

        Returns
        -------
        bool
        """
        _check_event(event)
        try:
            self._walk(event, None)
        except _Unsupported:
            return False
        return True

    def compose(self, event, count=1):
        """Compose ``event`` ``count`` times (adaptively) into the accountant; return ``self``.

        Parameters
        ----------
        event : DpEvent
            The event tree.
        count : int, default=1
            Number of repetitions, at least 1.

        Returns
        -------
        self

        Raises
        ------
        UnsupportedEventError
            If the tree holds an event the accountant cannot analyse under its relation.
        ValueError, TypeError
            If an event parameter is invalid (for example ``noise_multiplier <= 0``).
        """
        _check_event(event)
        count = check_int(count, "count", low=1)
        try:
            self._walk(event, None)
        except _Unsupported as exc:
            raise UnsupportedEventError(str(exc)) from None
        self._apply(event, count)  # computes into fresh storage, assigns last
        self._ledger = self._ledger + ((event if count == 1
                                        else SelfComposedDpEvent(event, count)),)
        return self

    @abc.abstractmethod
    def _walk(self, event, sink):
        """Traverse ``event``; raise ``_Unsupported``. With ``sink`` not None, accumulate."""

    @abc.abstractmethod
    def _apply(self, event, count):
        """Compute the contribution of ``event`` x ``count`` and add it to the state."""

    @abc.abstractmethod
    def get_epsilon_and_order(self, delta):
        """Return ``(epsilon, order)``: the epsilon bound for ``delta`` and where it is attained.

        Parameters
        ----------
        delta : float
            In (0, 1) (0 allowed by the pure-DP accountant).

        Returns
        -------
        tuple of (float, float or None)
        """

    def get_epsilon(self, delta):
        """Return an upper bound on epsilon such that the composition is (epsilon, delta)-DP.

        Parameters
        ----------
        delta : float
            In (0, 1).

        Returns
        -------
        float
        """
        return self.get_epsilon_and_order(delta)[0]

    @abc.abstractmethod
    def get_delta(self, epsilon):
        """Return an upper bound on delta such that the composition is (epsilon, delta)-DP.

        Parameters
        ----------
        epsilon : float
            In (0, inf).

        Returns
        -------
        float
        """

    def _walk_structure(self, event, sink, size):
        """Walk the events every summing accountant treats alike; return True if handled.

        For accountants whose state is ``size`` numbers added up over composition (basic
        composition: epsilon and delta; GDP: mu^2): no-op (0), non-private (inf in the first
        entry), self-composition (count times the child, added by :meth:`_add_times`) and
        composition.
        """
        if isinstance(event, NoOpDpEvent):
            return True
        if isinstance(event, NonPrivateDpEvent):
            if sink is not None:
                sink[0] = math.inf
            return True
        if isinstance(event, SelfComposedDpEvent):
            (child,) = self._children(event)
            if sink is None:
                self._walk(child, None)
            else:
                part = [self._ZERO] * size
                self._walk(child, part)
                for i in range(size):
                    sink[i] = self._add_times(sink[i], event.count, part[i])
            return True
        if isinstance(event, ComposedDpEvent):
            for child in self._children(event):
                self._walk(child, sink)
            return True
        return False

    #: The empty sum of :meth:`_walk_structure`'s sinks.
    _ZERO = 0.0

    @staticmethod
    def _add_times(total, count, part):
        """``total + count * part`` for :meth:`_walk_structure`, rounded up."""
        return float(round_up(total + count * part))

    # Parameter checks of the events, shared by the accountants.
    @staticmethod
    def _children(event):
        if isinstance(event, SelfComposedDpEvent):
            check_int(event.count, "SelfComposedDpEvent.count", low=1)
            return (event.event,)
        if not isinstance(event.events, (tuple, list)):
            raise TypeError("ComposedDpEvent.events must be a tuple of DpEvent; got "
                            f"{type(event.events).__name__}.")
        for e in event.events:
            _check_event(e)
        return tuple(event.events)


def _effective_noise_multiplier(event):
    """Noise multiplier of one Gaussian equivalent to a composition of Gaussians.

    ``k`` Gaussians with multipliers ``s_i`` applied to the same sampled batch release a vector
    whose privacy loss is that of one Gaussian with ``(sum_i s_i^-2)^(-1/2)`` (dp-accounting's
    ``_effective_gaussian_noise_multiplier``). Returns None if ``event`` is not such a tree.
    """
    if isinstance(event, GaussianDpEvent):
        return event.noise_multiplier
    if isinstance(event, SelfComposedDpEvent):
        s = _effective_noise_multiplier(event.event)
        return None if s is None else ("count", s, event.count)
    if isinstance(event, ComposedDpEvent):
        parts = [_effective_noise_multiplier(e) for e in event.events]
        return None if any(p is None for p in parts) or not parts else ("sum", parts)
    return None


def _resolve_noise(tree):
    """Evaluate the tree built by :func:`_effective_noise_multiplier` after validating leaves."""
    if isinstance(tree, tuple) and tree[0] == "count":
        count = check_int(tree[2], "SelfComposedDpEvent.count", low=1)
        return _resolve_noise(tree[1]) / math.sqrt(count)
    if isinstance(tree, tuple) and tree[0] == "sum":
        total = math.fsum(_inverse_square(_resolve_noise(p)) for p in tree[1])
        # a multiplier below ~1e-154 (s^-2 overflows): the composition has almost no noise,
        # and the smallest positive multiplier is below its true one (pessimistic)
        return total ** -0.5 if total < math.inf else 5e-324
    return check_positive(tree, "GaussianDpEvent.noise_multiplier")


def _inverse_square(s):
    """``s ** -2``, inf where it overflows (a Python float raised OverflowError for a
    composed Gaussian of multiplier 1e-300 in a PoissonSampledDpEvent; found by hypothesis,
    session 17)."""
    try:
        return s ** -2
    except OverflowError:
        return math.inf


def tree_depth(step_counts):
    """Nodes of a streaming binary tree over ``T`` leaves that contain one leaf, at most.

    ``bit_length(T) = floor(log2 T) + 1`` for ``T = max(step_counts)`` (dp-accounting's
    ``ceil(log2(T + 1))``, the same integer); leaf 1 attains it (note 003, section 4.1).

    Parameters
    ----------
    step_counts : int or sequence of int
        Leaves T of the tree (a sequence: its maximum).

    Returns
    -------
    int
    """
    counts = [step_counts] if np.isscalar(step_counts) else list(step_counts)
    if not counts:
        raise ValueError("SingleEpochTreeAggregationDpEvent.step_counts must be a positive "
                         "integer or a non-empty sequence of them; got [].")
    counts = [check_int(c, "SingleEpochTreeAggregationDpEvent.step_counts", low=1)
              for c in counts]
    return max(counts).bit_length()


def _tree_parameters(event):
    """``(depth, noise_multiplier)`` of a validated SingleEpochTreeAggregationDpEvent."""
    return tree_depth(event.step_counts), check_positive(
        event.noise_multiplier, "SingleEpochTreeAggregationDpEvent.noise_multiplier")


def _approximate_rdp_parameters(event):
    """``(tau, max_order, delta)`` of a validated ApproximateRdpDpEvent."""
    tau = check_scalar(event.tau, "ApproximateRdpDpEvent.tau", low=0.0, low_open=False)
    max_order = check_scalar(event.max_order, "ApproximateRdpDpEvent.max_order", low=1.0,
                             allow_inf=True)
    delta = check_delta(event.delta, "ApproximateRdpDpEvent.delta", allow_zero=True)
    return tau, max_order, delta


def rdp_slack_of(event):
    """Total-variation slack of an event tree: the deltas of its approximate-RDP events, summed.

    Lemma 3 of the ReSQue paper: slacks add over (adaptive) composition, counts included.

    Parameters
    ----------
    event : DpEvent

    Returns
    -------
    float
        Rounded up; 0 for a tree without :class:`ApproximateRdpDpEvent`.
    """
    if isinstance(event, ApproximateRdpDpEvent):
        return _approximate_rdp_parameters(event)[2]
    if isinstance(event, SelfComposedDpEvent):
        return float(round_up(event.count * rdp_slack_of(event.event)))
    if isinstance(event, ComposedDpEvent):
        return float(round_up(math.fsum(rdp_slack_of(e) for e in event.events)))
    return 0.0


def _check_tree_relation(relation):
    """Zero-out and replace-one keep the leaf a record occupies; add/remove shifts the stream."""
    if relation is NeighboringRelation.ADD_OR_REMOVE_ONE:
        raise _Unsupported(
            "SingleEpochTreeAggregationDpEvent is analysed under ZERO_OUT or REPLACE_ONE (a "
            "record stays in its leaf); adding or removing a record shifts the batches of a "
            "fixed stream. Use ZERO_OUT (dp-accounting's REPLACE_SPECIAL) or REPLACE_ONE.")


class RdpAccountant(PrivacyAccountant):
    """Renyi-DP accountant: RDP curves add over composition, then convert to (epsilon, delta).

    Parameters
    ----------
    orders : array_like of float or None, default=None
        Renyi orders, each in (1, inf). None selects :data:`DEFAULT_RDP_ORDERS`
        (dp-accounting's grid), so that results match dp-accounting.
    neighboring_relation : NeighboringRelation, default=ADD_OR_REMOVE_ONE
        ``PoissonSampledDpEvent`` is analysed for ADD_OR_REMOVE_ONE and ZERO_OUT only (Mironov,
        Talwar and Zhang 2019); under REPLACE_ONE it raises UnsupportedEventError, as
        dp-accounting does. Unsampled events hold under any relation (their noise multiplier is
        relative to the sensitivity under that relation).
    conversion : {"improved", "mironov"}, default="improved"
        RDP -> (epsilon, delta) conversion; see :mod:`dpsco_core.privacy.conversions`.
        ``"improved"`` is dp-accounting's; ``"mironov"`` (Prop. 3) is the DP-CD paper's.

    Notes
    -----
    Supported events and their RDP curves:

    * ``GaussianDpEvent(s)``: ``alpha / (2 s^2)`` (Mironov 2017, Prop. 7);
    * ``LaplaceDpEvent(b)``: Mironov 2017, Prop. 6 with ``epsilon = 1/b``;
    * ``EpsilonDeltaDpEvent(epsilon, 0)``: ``min(epsilon, alpha epsilon^2 / 2)`` (Bun and
      Steinke 2016, Prop. 3.3); ``delta > 0`` is unsupported;
    * ``ZCDpEvent(rho)``: ``rho alpha``;
    * ``PoissonSampledDpEvent(q, tree of Gaussians)``: Mironov, Talwar and Zhang 2019;
    * ``SingleEpochTreeAggregationDpEvent(s, T)``: ``alpha bit_length(T) / (2 s^2)`` (zero-out
      and replace-one only; dp-accounting's curve);
    * ``SampledWithReplacementDpEvent(n, m, tree of Gaussians)``: REPLACE_ONE only;
      :func:`~dpsco_core.privacy.with_replacement.rdp_sampled_with_replacement_gaussian`
      (count conditioning, and the ReSQue paper's Proposition 7 where it applies);
      dp-accounting 0.6 has no accountant for this event;
    * ``ApproximateRdpDpEvent(tau, max_order, delta)``: ``tau alpha`` for orders below
      ``max_order`` and ``inf`` from ``max_order`` on; its ``delta`` (total-variation slack,
      ReSQue paper eq. (12)) adds up over composition (Lemma 3) into :attr:`rdp_slack`;
    * ``SelfComposedDpEvent``, ``ComposedDpEvent``: sums (Mironov 2017, Prop. 1);
    * ``NoOpDpEvent``: 0; ``NonPrivateDpEvent``: inf.

    :meth:`get_epsilon_and_order` warns with :class:`~dpsco_core.exceptions.OrderGridWarning`
    when the optimal order is the smallest or largest of the grid.

    With a nonzero :attr:`rdp_slack` (approximate-RDP events), epsilon and delta are
    converted by Corollary 1 of the ReSQue paper, generalised to either conversion (its proof
    applies the conversion to the distributions within total variation ``rdp_slack``): at
    each order, the composed curve is converted at some ``delta'`` to ``epsilon``, and the
    guarantee is ``(epsilon, delta' + (1 + e^epsilon) rdp_slack)``-DP.
    :meth:`get_epsilon_and_order` searches the split of ``delta`` over ``delta'``.

    References
    ----------
    Mironov, "Renyi differential privacy", CSF 2017. Mironov, Talwar and Zhang, "Renyi
    differential privacy of the sampled Gaussian mechanism", arXiv:1908.10530, 2019. Carmon et
    al., "ReSQueing parallel and private stochastic convex optimization", FOCS 2023
    (arXiv:2301.00457), eq. (12), Corollary 1, Lemma 3, Proposition 7.
    """

    name = "rdp"

    def __init__(self, orders=None, neighboring_relation=NeighboringRelation.ADD_OR_REMOVE_ONE,
                 *, conversion="improved"):
        super().__init__(neighboring_relation)
        self._orders = check_orders(_DEFAULT_GRID if orders is None else orders)
        self._conversion = check_conversion(conversion)
        self._rdp = np.zeros(self._orders.shape)   # float64, as the orders (np.zeros_like: 5 us)
        self._slack = 0.0

    @property
    def orders(self):
        """ndarray of shape (n_orders,): the Renyi orders (read-only)."""
        return self._orders

    @property
    def rdp(self):
        """ndarray of shape (n_orders,): the composed RDP curve (a read-only copy)."""
        out = self._rdp.copy()
        out.flags.writeable = False
        return out

    @property
    def conversion(self):
        """str: the RDP -> (epsilon, delta) conversion, ``"improved"`` or ``"mironov"``."""
        return self._conversion

    @property
    def rdp_slack(self):
        """float: summed total-variation slack of the approximate-RDP events (Lemma 3), >= 0."""
        return self._slack

    def _walk(self, event, sink):
        if isinstance(event, NoOpDpEvent):
            return
        if isinstance(event, NonPrivateDpEvent):
            if sink is not None:
                sink += np.inf
            return
        if isinstance(event, SelfComposedDpEvent):
            (child,) = self._children(event)
            if sink is None:
                self._walk(child, None)
            elif type(child) is GaussianDpEvent:
                # The common leaf (DP-CD, DP-GD) without the child's own zeros: 0 + curve is
                # the curve bitwise (an RDP curve is >= 0, never -0 or NaN); issue 18
                sink += event.count * rdp_gaussian(child.noise_multiplier, self._orders)
            else:
                part = np.zeros(sink.shape)
                self._walk(child, part)
                sink += event.count * part
            return
        if isinstance(event, ComposedDpEvent):
            for child in self._children(event):
                self._walk(child, sink)
            return
        if isinstance(event, GaussianDpEvent):
            if sink is not None:
                sink += rdp_gaussian(event.noise_multiplier, self._orders)
            return
        if isinstance(event, LaplaceDpEvent):
            if sink is not None:
                sink += rdp_laplace(event.noise_multiplier, self._orders)
            return
        if isinstance(event, ZCDpEvent):
            if sink is not None:
                sink += rdp_zcdp(event.rho, self._orders)
            return
        if isinstance(event, EpsilonDeltaDpEvent):
            delta = check_delta(event.delta, "EpsilonDeltaDpEvent.delta", allow_zero=True)
            if delta > 0.0:
                raise _Unsupported(
                    f"RdpAccountant cannot compose {event!r}: an (epsilon, delta) guarantee "
                    "with delta > 0 implies no RDP curve. Use PureDpAccountant (basic "
                    "composition) instead.")
            if sink is not None:
                eps = check_scalar(event.epsilon, "EpsilonDeltaDpEvent.epsilon", low=0.0,
                                   low_open=False)
                sink += rdp_pure(eps, self._orders) if eps > 0.0 else 0.0
            return
        if isinstance(event, SingleEpochTreeAggregationDpEvent):
            _check_tree_relation(self._relation)
            if sink is not None:
                depth, s = _tree_parameters(event)
                sink += depth * rdp_gaussian(s, self._orders)
            return
        if isinstance(event, PoissonSampledDpEvent):
            if self._relation is NeighboringRelation.REPLACE_ONE:
                raise _Unsupported(
                    "PoissonSampledDpEvent is analysed under ADD_OR_REMOVE_ONE or ZERO_OUT "
                    "(Mironov, Talwar and Zhang 2019); the accountant uses REPLACE_ONE. Use "
                    "ADD_OR_REMOVE_ONE with the add/remove sensitivity.")
            tree = _effective_noise_multiplier(event.event)
            if tree is None:
                raise _Unsupported(
                    "the subevent of PoissonSampledDpEvent must be a GaussianDpEvent or a "
                    "composition of GaussianDpEvents; got " f"{event.event!r}.")
            if sink is not None:
                s = _resolve_noise(tree)
                q = check_sample_rate(event.sampling_probability,
                                      "PoissonSampledDpEvent.sampling_probability")
                sink += rdp_sampled_gaussian(q, s, self._orders)
            return
        if isinstance(event, SampledWithReplacementDpEvent):
            if self._relation is not NeighboringRelation.REPLACE_ONE:
                raise _Unsupported(
                    "SampledWithReplacementDpEvent is analysed under REPLACE_ONE (n public); "
                    f"the accountant uses {self._relation.name}.")
            tree = _effective_noise_multiplier(event.event)
            if tree is None:
                raise _Unsupported(
                    "the subevent of SampledWithReplacementDpEvent must be a GaussianDpEvent "
                    f"or a composition of GaussianDpEvents; got {event.event!r}.")
            if sink is not None:
                sink += rdp_sampled_with_replacement_gaussian(
                    event.source_dataset_size, event.sample_size, _resolve_noise(tree),
                    self._orders)
            return
        if isinstance(event, ApproximateRdpDpEvent):
            if sink is not None:
                tau, max_order, _ = _approximate_rdp_parameters(event)
                with np.errstate(invalid="ignore"):
                    sink += np.where(self._orders < max_order, round_up(tau * self._orders),
                                     np.inf)
            return
        if isinstance(event, RepeatAndSelectDpEvent):
            mean, shape = check_repeat_and_select(event.mean, event.shape)
            _check_event(event.event)
            part = None if sink is None else np.zeros(sink.shape)
            self._walk(event.event, part)
            if sink is not None:
                curve = rdp_repeat_and_select(self._orders, part, mean=mean, shape=shape,
                                              conversion=self._conversion)
                pure = _pure_epsilon(event.event, self._relation) if shape == 1.0 else None
                if pure is not None and math.isfinite(pure):
                    # Liu and Talwar (2019), Theorem 3.1: 3 eps-DP, where it is smaller.
                    curve = np.minimum(curve, rdp_pure(liu_talwar_epsilon(pure), self._orders))
                sink += curve
            return
        raise _Unsupported(f"RdpAccountant does not support {type(event).__name__}: {event!r}.")

    def _apply(self, event, count):
        if type(event) is SelfComposedDpEvent and type(event.event) is GaussianDpEvent:
            # DP-CD's whole event: its part without the zeros it would be added to (bitwise:
            # count * curve >= 0, never -0 or NaN); issue 18
            self._children(event)
            part = event.count * rdp_gaussian(event.event.noise_multiplier, self._orders)
        else:
            part = np.zeros(self._orders.shape)
            self._walk(event, part)
        slack = float(round_up(self._slack + count * rdp_slack_of(event)))
        self._rdp = self._rdp + (part if count == 1 else count * part)   # 1 * part: exact
        self._slack = slack

    def get_epsilon_and_order(self, delta):
        """Return the smallest epsilon over the orders for ``delta``, and the order attaining it.

        Parameters
        ----------
        delta : float
            In (0, 1).

        Returns
        -------
        epsilon : float
            Upper bound, rounded up (``inf`` after a NonPrivateDpEvent).
        order : float
            The optimal Renyi order.

        Warns
        -----
        OrderGridWarning
            If the optimal order is the smallest or the largest of the grid.
        """
        delta = check_delta(delta)
        if self._slack > 0.0:
            eps, order = self._epsilon_with_slack(delta)
        else:
            eps, order = _rdp_to_epsilon(self._orders, self._rdp, delta, self._conversion)
        if 0.0 < eps < math.inf:
            _warn_if_edge(order, self._orders)
        return eps, order

    def _epsilon_with_slack(self, delta):
        """Corollary 1: smallest epsilon with ``delta' + (1 + e^eps) slack <= delta``.

        The total is not monotone in ``delta'``; a geometric scan of ``delta'`` then a finer
        scan around the best candidate find the split. Every feasible candidate is a valid
        bound (the search affects tightness only); none feasible gives ``inf``.
        """
        slack = self._slack
        if 2.0 * slack >= delta:
            return math.inf, float(self._orders[0])
        best = (math.inf, float(self._orders[0]))

        def scan(candidates):
            nonlocal best
            found = None
            for dp in candidates:
                eps, order = _rdp_to_epsilon(self._orders, self._rdp, float(dp),
                                             self._conversion)
                if eps >= 700.0:
                    continue
                total = float(round_up(dp + (1.0 + math.exp(eps)) * slack))
                if total <= delta and eps < best[0]:
                    best, found = (eps, order), float(dp)
            return found

        top = delta - 2.0 * slack
        grid = np.geomspace(top * 1e-12, top, 121)
        found = scan(grid)
        if found is not None:
            scan(np.geomspace(found / 1.3, min(found * 1.3, top), 61))
        return best

    def _delta_with_slack(self, epsilon):
        delta, order = _rdp_to_delta(self._orders, self._rdp, epsilon, self._conversion)
        if self._slack > 0.0:
            extra = (1.0 + math.exp(epsilon)) * self._slack if epsilon < 700.0 else math.inf
            delta = min(1.0, float(round_up(delta + extra)))
        return delta, order

    def get_delta_and_order(self, epsilon):
        """Return the smallest delta over the orders for ``epsilon``, and the optimal order.

        Parameters
        ----------
        epsilon : float
            In (0, inf).

        Returns
        -------
        tuple of (float, float)
        """
        epsilon = check_epsilon(epsilon)
        delta, order = self._delta_with_slack(epsilon)
        if 0.0 < delta < 1.0:
            _warn_if_edge(order, self._orders)
        return delta, order

    def get_delta(self, epsilon):
        """Return an upper bound on delta for ``epsilon`` (in (0, inf)), rounded up.

        Parameters
        ----------
        epsilon : float
            In (0, inf).

        Returns
        -------
        float
        """
        return self.get_delta_and_order(epsilon)[0]


def _pure_epsilon(event, relation):
    """The pure epsilon of ``event`` by basic composition, or None if it is not pure DP."""
    accountant = PureDpAccountant(relation)
    if not accountant.supports(event):
        return None
    accountant.compose(event)
    return accountant.epsilon if accountant.delta == 0.0 else None


def _warn_if_edge(order, orders):
    low, high = _grid_ends(orders)
    if order == low or order == high:
        warnings.warn(
            f"The optimal Renyi order {order:g} is at the edge of the order grid "
            f"[{orders.min():g}, {orders.max():g}]; epsilon may be loose. Extend the grid.",
            OrderGridWarning, stacklevel=external_stacklevel())


#: ``(min, max)`` of immutable order grids, by ``id``, the array held with them (so its id is
#: not reused); at most 64 grids are kept.
_GRID_ENDS: dict = {}


def _grid_ends(orders):
    """``(orders.min(), orders.max())``, once per constant grid (issue 18: two reductions of
    a few microseconds each, on every report and calibration)."""
    hit = _GRID_ENDS.get(id(orders))
    if hit is not None and hit[0] is orders:
        return hit[1]
    ends = (orders.min(), orders.max())
    if is_immutable_orders(orders):
        if len(_GRID_ENDS) >= 64:
            _GRID_ENDS.clear()
        _GRID_ENDS[id(orders)] = (orders, ends)
    return ends


#: Every finite float is a whole number of 2**-1074 (the smallest subnormal), so the exact sum
#: of float terms, and any whole multiple of one, is a Python int in these units.
_EXACT_SCALE = 1 << 1074


def _exact(x):
    """``x`` (a float in [0, inf]) as an exact int count of 2**-1074; inf stays ``math.inf``."""
    if x == 0.0:
        return 0
    if x == math.inf:
        return math.inf
    num, den = x.as_integer_ratio()             # den = 2**k, k <= 1074
    return num << (1075 - den.bit_length())


def _exact_add(a, b):
    """Exact sum of two :func:`_exact` values (``math.inf`` is the only float among them:
    ``int + inf`` would first convert a 1000-bit int to float, an OverflowError)."""
    if type(a) is float or type(b) is float:
        return math.inf
    return a + b


def _float_up(n):
    """The smallest float >= ``n * 2**-1074`` (``n`` an :func:`_exact` value).

    ``int / int`` is correctly rounded in CPython, so the quotient is the float just below or
    just above the exact value; it is moved up one ulp in the first case only. An exact value
    stays as it is.
    """
    if type(n) is float or n == 0:
        return float(n)
    try:
        f = n / _EXACT_SCALE
    except OverflowError:
        return math.inf
    num, den = f.as_integer_ratio()
    if (num << (1075 - den.bit_length())) < n:
        f = math.nextafter(f, math.inf)
    return f


def _reciprocal_up(b):
    """The smallest float >= ``1 / b`` (``b`` a positive finite float); inf if it overflows."""
    num, den = b.as_integer_ratio()             # 1 / b = den / num exactly
    try:
        f = den / num                           # correctly rounded (see _float_up)
    except OverflowError:
        return math.inf
    f_num, f_den = f.as_integer_ratio()
    if f_num * num < den * f_den:
        f = math.nextafter(f, math.inf)
    return f


class PureDpAccountant(PrivacyAccountant):
    """Basic composition: epsilons add and deltas add.

    Composing mechanisms that are ``(epsilon_i, delta_i)``-DP gives
    ``(sum epsilon_i, sum delta_i)``-DP (Dwork, McSherry, Nissim and Smith 2006; Dwork and Roth
    2014, Theorem 3.16), under any neighbouring relation.

    Parameters
    ----------
    neighboring_relation : NeighboringRelation, default=ADD_OR_REMOVE_ONE

    Notes
    -----
    Supports ``EpsilonDeltaDpEvent``, ``LaplaceDpEvent`` (``1/noise_multiplier``-DP),
    ``NoOpDpEvent``, ``NonPrivateDpEvent`` (infinite epsilon), ``SelfComposedDpEvent`` and
    ``ComposedDpEvent``. Gaussian, zCDP and sampled events have no pure guarantee and raise
    UnsupportedEventError. :meth:`get_epsilon` returns the summed epsilon when ``delta`` is at
    least the summed delta, else ``inf``; :meth:`get_epsilon_and_order` reports the order as
    ``inf`` (pure DP is RDP of order infinity).

    **Rounding.** The sums are exact: :attr:`epsilon` and :attr:`delta` are the smallest
    floats at least the exact real-valued sums of the events' terms over everything composed
    so far (counts included), so they are rounded up only when the sum is not a float. The
    terms are the events' own floats (``epsilon``, ``delta``), ``1/noise_multiplier`` of a
    Laplace event rounded up to the next float when the quotient is inexact, and the
    (rounded-up) Liu-Talwar epsilon of a repeat-and-select event. A single
    ``EpsilonDeltaDpEvent(epsilon, delta)`` thus reports exactly ``(epsilon, delta)``, and
    ``get_epsilon(delta)`` at its own delta is ``epsilon``.

    References
    ----------
    Dwork and Roth, "The algorithmic foundations of differential privacy", 2014, Theorem 3.16.
    """

    name = "basic-composition"

    #: The sinks hold exact sums (:func:`_exact`: ints in units of 2**-1074, or inf).
    _ZERO = 0

    def __init__(self, neighboring_relation=NeighboringRelation.ADD_OR_REMOVE_ONE):
        super().__init__(neighboring_relation)
        self._exact_sums = (0, 0)      # epsilon, delta: exact (see _exact)
        self._epsilon = 0.0
        self._delta = 0.0

    @property
    def epsilon(self):
        """float: the composed epsilon, the smallest float >= the exact sum of the terms."""
        return self._epsilon

    @property
    def delta(self):
        """float: the composed delta, the smallest float >= the exact sum of the terms."""
        return self._delta

    @staticmethod
    def _add_times(total, count, part):
        # exact: count * part is an int product (or inf, or 0 for a zero part)
        if type(part) is float:
            return math.inf
        return _exact_add(total, int(count) * part)

    def _walk(self, event, sink):
        if self._walk_structure(event, sink, 2):
            return
        if isinstance(event, LaplaceDpEvent):
            if sink is not None:
                b = check_positive(event.noise_multiplier, "LaplaceDpEvent.noise_multiplier")
                sink[0] = _exact_add(sink[0], _exact(_reciprocal_up(b)))
            return
        if isinstance(event, EpsilonDeltaDpEvent):
            if sink is not None:
                eps = check_scalar(event.epsilon, "EpsilonDeltaDpEvent.epsilon", low=0.0,
                                   low_open=False)
                delta = check_delta(event.delta, "EpsilonDeltaDpEvent.delta", allow_zero=True)
                sink[0] = _exact_add(sink[0], _exact(eps))
                sink[1] = _exact_add(sink[1], _exact(delta))
            return
        if isinstance(event, RepeatAndSelectDpEvent):
            _, shape = check_repeat_and_select(event.mean, event.shape)
            _check_event(event.event)
            pure = _pure_epsilon(event.event, self._relation) if shape == 1.0 else None
            if pure is None:
                raise _Unsupported(
                    "PureDpAccountant supports RepeatAndSelectDpEvent only with geometric "
                    "stopping (shape=1) over a pure-DP run (Liu and Talwar 2019, Theorem 3.1); "
                    f"got {event!r}. Use RdpAccountant.")
            if sink is not None:
                sink[0] = _exact_add(sink[0], _exact(liu_talwar_epsilon(pure)))
            return
        raise _Unsupported(
            f"PureDpAccountant does not support {type(event).__name__}: {event!r} has no "
            "(epsilon, delta) guarantee to add up. Use RdpAccountant.")

    def _apply(self, event, count):
        part = [0, 0]
        self._walk(event, part)
        eps, delta = (self._add_times(total, count, p)
                      for total, p in zip(self._exact_sums, part))
        up_eps, up_delta = _float_up(eps), _float_up(delta)
        self._exact_sums, self._epsilon, self._delta = (eps, delta), up_eps, up_delta

    def get_epsilon_and_order(self, delta):
        """Return ``(epsilon, inf)``: the summed epsilon if ``delta`` covers the summed delta.

        Parameters
        ----------
        delta : float
            In [0, 1).

        Returns
        -------
        tuple of (float, float)
        """
        delta = check_delta(delta, allow_zero=True)     # pure DP: delta = 0 is a question
        return (self._epsilon if delta >= self._delta else math.inf), math.inf

    def get_delta(self, epsilon):
        """Return the summed delta if ``epsilon`` covers the summed epsilon, else 1.

        Parameters
        ----------
        epsilon : float
            In [0, inf).

        Returns
        -------
        float
        """
        epsilon = check_scalar(epsilon, "epsilon", low=0.0, low_open=False)  # 0 allowed
        return self._delta if epsilon >= self._epsilon else 1.0


class GdpAccountant(PrivacyAccountant):
    """Gaussian-DP accountant: exact for compositions of (unsampled) Gaussian mechanisms.

    A Gaussian mechanism with noise multiplier ``s`` is exactly ``(1/s)``-GDP, ``mu_i``-GDP
    mechanisms compose (adaptively) to ``sqrt(sum mu_i^2)``-GDP (Dong, Roth and Su 2019,
    Cor. 3.3), and ``mu``-GDP is converted to (epsilon, delta) exactly
    (:func:`~dpsco_core.privacy.gdp.gdp_epsilon`, Cor. 2.13). No Renyi-order grid, no slack.

    Parameters
    ----------
    neighboring_relation : NeighboringRelation, default=ADD_OR_REMOVE_ONE

    Notes
    -----
    Supported events: ``GaussianDpEvent(s)`` (``mu = 1/s``),
    ``SingleEpochTreeAggregationDpEvent(s, T)`` (``mu = sqrt(bit_length(T)) / s``; zero-out
    and replace-one only), ``SelfComposedDpEvent`` (``mu sqrt(count)``), ``ComposedDpEvent``,
    ``NoOpDpEvent`` (0) and ``NonPrivateDpEvent`` (inf). Sampled, Laplace, zCDP and
    (epsilon, delta) events have no exact GDP curve here and raise UnsupportedEventError.
    :meth:`get_epsilon_and_order` reports the order as None (there is none).

    References
    ----------
    Dong, Roth and Su, "Gaussian differential privacy", JRSS-B 2022 (arXiv:1905.02383).
    """

    name = "gdp"

    def __init__(self, neighboring_relation=NeighboringRelation.ADD_OR_REMOVE_ONE):
        super().__init__(neighboring_relation)
        self._mu_squared = 0.0

    @property
    def mu(self):
        """float: the composed GDP parameter (rounded up; inf after a NonPrivateDpEvent)."""
        return float(round_up(math.sqrt(self._mu_squared)))

    def _walk(self, event, sink):
        if self._walk_structure(event, sink, 1):
            return
        if isinstance(event, GaussianDpEvent):
            if sink is not None:
                s = check_positive(event.noise_multiplier, "GaussianDpEvent.noise_multiplier")
                sink[0] = float(round_up(sink[0] + _inverse_variance(1.0, s)))
            return
        if isinstance(event, SingleEpochTreeAggregationDpEvent):
            _check_tree_relation(self._relation)
            if sink is not None:
                depth, s = _tree_parameters(event)
                sink[0] = float(round_up(sink[0] + _inverse_variance(depth, s)))
            return
        raise _Unsupported(
            f"GdpAccountant does not support {type(event).__name__}: {event!r} (only unsampled "
            "Gaussian and tree-aggregation events have an exact GDP curve). Use RdpAccountant.")

    def _apply(self, event, count):
        part = [0.0]
        self._walk(event, part)
        self._mu_squared = float(round_up(self._mu_squared + count * part[0]))

    def get_epsilon_and_order(self, delta):
        """Return ``(epsilon, None)``: the exact epsilon of the composed ``mu``-GDP at ``delta``.

        Parameters
        ----------
        delta : float
            In (0, 1).

        Returns
        -------
        tuple of (float, None)
        """
        delta = check_delta(delta)
        if self._mu_squared == 0.0:
            return 0.0, None
        if math.isinf(self._mu_squared):
            return math.inf, None
        return gdp_epsilon(self.mu, delta), None

    def get_delta(self, epsilon):
        """Return the exact delta of the composed ``mu``-GDP at ``epsilon`` (in (0, inf)).

        Parameters
        ----------
        epsilon : float
            In (0, inf).

        Returns
        -------
        float
        """
        epsilon = check_epsilon(epsilon)
        if self._mu_squared == 0.0:
            return 0.0
        if math.isinf(self._mu_squared):
            return 1.0
        return gdp_delta(self.mu, epsilon)


#: dp-accounting's default (``PLDAccountant(value_discretization_interval=1e-4)``): the privacy
#: loss is rounded to multiples of 1e-4, upward (pessimistic), so epsilon is overestimated by
#: at most about ``1e-4`` per composed distribution, far less after the exact merges below.
DEFAULT_PLD_DISCRETIZATION = 1e-4

#: The extra that installs the PLD accountant's dependency.
PLD_EXTRA = "pld"


def _import_pld():
    """dp-accounting's PLD module, imported on first use (it is an optional dependency)."""
    try:
        from dp_accounting.pld import privacy_loss_distribution
    except ImportError as exc:
        raise ImportError(
            "accountant='pld' (the privacy-loss-distribution accountant) needs dp-accounting: "
            f"pip install 'dpsco-core[{PLD_EXTRA}]' (or pip install dp-accounting).") from exc
    return privacy_loss_distribution


#: The largest privacy loss :class:`PldAccountant` discretises: a Gaussian (multiplier s,
#: its loss reaching about ``10 / s + 1 / (2 s^2)`` before dp-accounting's tail truncation at
#: mass e^-50) or Laplace (scale b, loss up to ``1 / b``) release whose loss goes beyond it
#: counts as non-private (epsilon inf), as randomized response beyond epsilon 745 does. At the
#: default discretisation 1e-4 its PLD would hold more than 1e7 points (about 20 s and
#: gigabytes for a Gaussian of multiplier 0.03, whose epsilon is about 700 at delta = 1e-5);
#: a multiplier of 1e-3 asked for 76 GiB and 1e-300 divided by zero (found by hypothesis,
#: session 17). Releases this far from private fit no budget.
MAX_PLD_PRIVACY_LOSS = 500.0


def _gaussian_loss_bound(inverse_variance):
    """The largest privacy loss dp-accounting discretises for a Gaussian of multiplier
    ``inverse_variance^-1/2`` (sensitivity 1): ``10 / s + 1 / (2 s^2)``."""
    return 10.0 * math.sqrt(inverse_variance) + 0.5 * inverse_variance


def _pld_state():
    """Empty PLD state: the exactly composable parts, merged before any discretisation.

    ``gauss``: sum of ``count / s^2`` over unsampled Gaussian releases (one Gaussian of
    multiplier ``gauss^-1/2`` is exactly their composition); ``sampled``: ``{(q, s): count}``;
    ``laplace``: ``{b: count}``; ``pure``: ``{epsilon: count}``; ``non_private``: a
    NonPrivateDpEvent was composed, or a release whose privacy loss goes beyond
    :data:`MAX_PLD_PRIVACY_LOSS`.
    """
    return {"gauss": 0.0, "sampled": {}, "laplace": {}, "pure": {}, "non_private": False}


#: The most points a self-composed PLD may hold (about 80 MB per float64 array): a
#: composition spread wider (a privacy loss spread over more than 1000 at the default
#: discretisation, epsilon in the hundreds at least) counts as non-private, as a single
#: release beyond :data:`MAX_PLD_PRIVACY_LOSS` does. SelfComposedDpEvent(LaplaceDpEvent(0.5),
#: 10**9) asked dp-accounting for 29.8 TiB (found by hypothesis, session 17).
MAX_PLD_POINTS = 10**7

#: :meth:`PldAccountant._pld`'s answer for a ledger with a part beyond MAX_PLD_POINTS.
_BEYOND_PLD_RANGE = object()

#: The largest noise multiplier :meth:`PldAccountant._pld` hands dp-accounting for a
#: Poisson-sampled Gaussian: dp-accounting squares the standard deviation in Python floats,
#: which raised OverflowError beyond ~1.3e154 (PoissonSampledDpEvent(1e-6,
#: GaussianDpEvent(1e300)); found by hypothesis, session 19). A larger multiplier is capped
#: here: less noise is never more private, so the capped PLD over-estimates the loss (and at
#: 1e150 its epsilon is already 0 at the default discretisation).
_MAX_PLD_SAMPLED_NOISE = 1e150


def _self_composed(pld, count):
    """``pld.self_compose(count)``, or None when dp-accounting's composed PMF would hold more
    than :data:`MAX_PLD_POINTS` points (:func:`_composed_points`)."""
    if _composed_points(pld, count) > MAX_PLD_POINTS:
        return None
    return pld.self_compose(count)


def _composed_points(pld, count):
    """The points of dp-accounting's ``count``-fold self-composition of ``pld``, from its own
    truncation bounds (``compute_self_convolve_bounds`` at its default tail mass 1e-15),
    without composing. Reads dp-accounting's PMFs (0.4 to 0.6); 0 (no limit) for a layout it
    does not know."""
    from dp_accounting.pld import common, pld_pmf

    worst = 0
    pmfs = (getattr(pld, "_pmf_remove", None), getattr(pld, "_pmf_add", None))
    for pmf in {id(p): p for p in pmfs if p is not None}.values():
        if isinstance(pmf, pld_pmf.SparsePLDPmf):
            losses = list(getattr(pmf, "_loss_probs", {}))
            if count * math.log(max(len(losses), 1)) <= math.log(1000):
                continue                    # composed sparsely: at most 1000 points
            if not losses or max(losses) - min(losses) + 1 > MAX_PLD_POINTS:
                return math.inf if losses else 0
            pmf = pmf.to_dense_pmf()
        probs = getattr(pmf, "_probs", None)
        if probs is None:
            continue
        lower, upper = common.compute_self_convolve_bounds(probs, count, 1e-15)
        worst = max(worst, upper - lower + 1)
    return worst


def _inverse_variance(count, s):
    """``count / s^2``, inf where ``s^2`` underflows (a multiplier below 1e-154)."""
    return count / (s * s) if s * s > 0.0 else math.inf


def _beyond_pld_range(state):
    """Whether a part of ``state`` has a privacy loss beyond :data:`MAX_PLD_PRIVACY_LOSS`."""
    if _gaussian_loss_bound(state["gauss"]) > MAX_PLD_PRIVACY_LOSS:
        return True
    if any(_gaussian_loss_bound(_inverse_variance(1, s)) > MAX_PLD_PRIVACY_LOSS
           for _, s in state["sampled"]):
        return True
    return any(1.0 / b > MAX_PLD_PRIVACY_LOSS for b in state["laplace"])


class PldAccountant(PrivacyAccountant):
    """Privacy-loss-distribution accountant (pessimistic), through dp-accounting's PLD.

    The privacy loss of every mechanism is discretised to multiples of
    ``value_discretization_interval``, rounded so that the hockey-stick divergence (delta for
    a given epsilon) is over-estimated ("pessimistic estimate", the default of dp-accounting's
    ``PLDAccountant``, and the tail mass beyond ``log_mass_truncation_bound = -50`` is counted
    as infinite loss), and composed by FFT convolution (Koskela et al. 2020; Meiser and
    Mohammadi 2018; Doroshenko et al. 2022). Epsilon for delta is then read off the composed
    distribution: a valid upper bound, tighter than RDP because no Renyi-order slack is lost.
    dp-accounting is an optional dependency (``pip install 'dpsco-core[pld]'``): it is
    imported when the accountant is built, with a clear ImportError if missing.

    Parameters
    ----------
    neighboring_relation : NeighboringRelation, default=ADD_OR_REMOVE_ONE
        As for :class:`RdpAccountant`: ``PoissonSampledDpEvent`` under ADD_OR_REMOVE_ONE or
        ZERO_OUT only, tree aggregation under ZERO_OUT or REPLACE_ONE only.
    value_discretization_interval : float, default=1e-4
        Discretisation of the privacy loss, in (0, 1]. Smaller is tighter and slower
        (roughly linear in its inverse). 1e-4 (dp-accounting's default) puts 50 epochs of
        DP-SGD at q = 256/45312 (8850 Poisson-sampled Gaussian steps) within 0.001 of the
        exact epsilon in about 0.3 s.

    Notes
    -----
    Events carry noise multipliers relative to the sensitivity under *this* accountant's
    relation (see :mod:`~dpsco_core.privacy.events`); dp-accounting's PLDs are built to match
    that meaning, which is not always dp-accounting's own reading of the same event:

    * ``GaussianDpEvent(s)``, ``SingleEpochTreeAggregationDpEvent(s, T)`` (a Gaussian of
      multiplier ``s / sqrt(bit_length(T))``, see :class:`GdpAccountant`) under any
      supported relation: Gaussians merge exactly (``s_eff^-2 = sum_i count_i / s_i^2``) into
      one PLD of the shift by one sensitivity (dp-accounting's add/remove PLD; its
      REPLACE_ONE PLD would shift by two sensitivities, twice too pessimistic here).
    * ``PoissonSampledDpEvent(q, Gaussians)``: the effective multiplier of the Gaussians, one
      subsampled-Gaussian PLD (add and remove directions, Zhu, Dong and Wang 2022) self-composed
      ``count`` times.
    * ``LaplaceDpEvent(b)``: the Laplace PLD of scale ``b`` and sensitivity 1.
    * ``EpsilonDeltaDpEvent(epsilon, 0)``: binary randomized response with
      ``P = e^eps / (1 + e^eps)`` under replace-one, the pair that dominates every
      epsilon-DP mechanism (Kairouz, Oh and Viswanath 2015); ``delta > 0`` is unsupported.
      (dp-accounting 0.6's own ``PLDAccountant`` drops the count of a self-composed
      ``RandomizedResponseDpEvent``, under-reporting epsilon; counts are applied here with
      ``self_compose``.)
    * ``ZCDpEvent`` has no PLD (use the RDP accountant); ``NoOpDpEvent``: nothing;
      ``NonPrivateDpEvent``: epsilon inf.
    * A Gaussian (merged, or sampled) or Laplace release whose privacy loss reaches beyond
      :data:`MAX_PLD_PRIVACY_LOSS` = 500 (multiplier below about 0.045, Laplace epsilon above
      500) counts as non-private, epsilon inf: its PLD would not fit in memory (more than
      1e7 points at the default discretisation).

    :meth:`get_epsilon_and_order` reports the order as None.

    References
    ----------
    Koskela, Jalko and Honkela, "Computing tight differential privacy guarantees using FFT",
    AISTATS 2020. Doroshenko, Ghazi, Kamath, Kumar and Manurangsi, "Connect the dots: tighter
    discrete approximations of privacy loss distributions", PETS 2022. Zhu, Dong and Wang,
    "Optimal accounting of differential privacy via characteristic function", AISTATS 2022.
    """

    name = "pld"

    def __init__(self, neighboring_relation=NeighboringRelation.ADD_OR_REMOVE_ONE, *,
                 value_discretization_interval=DEFAULT_PLD_DISCRETIZATION):
        super().__init__(neighboring_relation)
        self._interval = check_scalar(value_discretization_interval,
                                      "value_discretization_interval", low=0.0, high=1.0,
                                      high_open=False)
        self._lib = _import_pld()
        self._state = _pld_state()
        self._pld_cache = None

    @property
    def value_discretization_interval(self):
        """float: the discretisation of the privacy loss."""
        return self._interval

    def __deepcopy__(self, memo):
        # The state is plain numbers and dicts; dp-accounting's module (``_lib``) cannot be
        # deep-copied and is shared, and the cached PLD is immutable in use (never mutated,
        # only composed into new objects), so it is shared too. Budget copies an accountant
        # per trial charge.
        new = copy.copy(self)
        new._ledger = self._ledger
        new._state = copy.deepcopy(self._state, memo)
        return new

    def _walk(self, event, sink):
        self._leaves(event, 1, sink)

    def _leaves(self, event, count, sink):
        """Validate ``event`` (raise ``_Unsupported``); with ``sink``, add ``count`` x it."""
        if isinstance(event, NoOpDpEvent):
            return
        if isinstance(event, NonPrivateDpEvent):
            if sink is not None:
                sink["non_private"] = True
            return
        if isinstance(event, SelfComposedDpEvent):
            (child,) = self._children(event)
            self._leaves(child, count * event.count, sink)
            return
        if isinstance(event, ComposedDpEvent):
            for child in self._children(event):
                self._leaves(child, count, sink)
            return
        if isinstance(event, GaussianDpEvent):
            if sink is not None:
                s = check_positive(event.noise_multiplier, "GaussianDpEvent.noise_multiplier")
                sink["gauss"] += _inverse_variance(count, s)
            return
        if isinstance(event, SingleEpochTreeAggregationDpEvent):
            _check_tree_relation(self._relation)
            if sink is not None:
                depth, s = _tree_parameters(event)
                sink["gauss"] += _inverse_variance(count * depth, s)
            return
        if isinstance(event, LaplaceDpEvent):
            if sink is not None:
                b = check_positive(event.noise_multiplier, "LaplaceDpEvent.noise_multiplier")
                sink["laplace"][b] = sink["laplace"].get(b, 0) + count
            return
        if isinstance(event, EpsilonDeltaDpEvent):
            delta = check_delta(event.delta, "EpsilonDeltaDpEvent.delta", allow_zero=True)
            if delta > 0.0:
                raise _Unsupported(
                    f"PldAccountant cannot compose {event!r}: an (epsilon, delta) guarantee "
                    "with delta > 0 has no privacy loss distribution. Use PureDpAccountant "
                    "(basic composition) instead.")
            if sink is not None:
                eps = check_scalar(event.epsilon, "EpsilonDeltaDpEvent.epsilon", low=0.0,
                                   low_open=False, allow_inf=True)
                if _rr_noise_parameter(eps) == 0.0:     # includes inf: e^-eps underflows
                    sink["non_private"] = True
                elif eps > 0.0:
                    sink["pure"][eps] = sink["pure"].get(eps, 0) + count
            return
        if isinstance(event, ZCDpEvent):
            raise _Unsupported(f"PldAccountant does not support {event!r}: a zCDP guarantee "
                               "has no privacy loss distribution. Use RdpAccountant.")
        if isinstance(event, PoissonSampledDpEvent):
            if self._relation is NeighboringRelation.REPLACE_ONE:
                raise _Unsupported(
                    "PoissonSampledDpEvent is analysed under ADD_OR_REMOVE_ONE or ZERO_OUT; the "
                    "accountant uses REPLACE_ONE. Use ADD_OR_REMOVE_ONE with the add/remove "
                    "sensitivity.")
            tree = _effective_noise_multiplier(event.event)
            if tree is None:
                raise _Unsupported(
                    "the subevent of PoissonSampledDpEvent must be a GaussianDpEvent or a "
                    f"composition of GaussianDpEvents; got {event.event!r}.")
            if sink is not None:
                s = _resolve_noise(tree)
                q = check_sample_rate(event.sampling_probability,
                                      "PoissonSampledDpEvent.sampling_probability")
                if q == 1.0:
                    sink["gauss"] += _inverse_variance(count, s)
                else:
                    sink["sampled"][(q, s)] = sink["sampled"].get((q, s), 0) + count
            return
        if isinstance(event, (SampledWithReplacementDpEvent, ApproximateRdpDpEvent)):
            raise _Unsupported(
                f"PldAccountant does not support {type(event).__name__}: {event!r} has no "
                "privacy loss distribution here (dp-accounting has none for sampling with "
                "replacement, and an approximate-RDP guarantee is not a PLD). Use "
                "RdpAccountant.")
        raise _Unsupported(f"PldAccountant does not support {type(event).__name__}: {event!r}.")

    def _apply(self, event, count):
        part = _pld_state()
        self._leaves(event, count, part)
        state = {"gauss": self._state["gauss"] + part["gauss"],
                 "non_private": self._state["non_private"] or part["non_private"]}
        for key in ("sampled", "laplace", "pure"):
            merged = dict(self._state[key])
            for k, c in part[key].items():
                merged[k] = merged.get(k, 0) + c
            state[key] = merged
        state["non_private"] = state["non_private"] or _beyond_pld_range(state)
        self._state, self._pld_cache = state, None

    def _pld(self):
        """The composed dp-accounting PLD, or None when nothing private was composed."""
        if self._pld_cache is None:
            lib, v, st = self._lib, self._interval, self._state
            plds = []
            if st["gauss"] > 0.0:
                plds.append(lib.from_gaussian_mechanism(
                    standard_deviation=st["gauss"] ** -0.5, pessimistic_estimate=True,
                    value_discretization_interval=v))
            for (q, s), c in st["sampled"].items():
                plds.append(_self_composed(lib.from_gaussian_mechanism(
                    standard_deviation=min(s, _MAX_PLD_SAMPLED_NOISE), sampling_prob=q,
                    pessimistic_estimate=True,
                    value_discretization_interval=v), c))
            for b, c in st["laplace"].items():
                plds.append(_self_composed(lib.from_laplace_mechanism(
                    parameter=b, pessimistic_estimate=True,
                    value_discretization_interval=v), c))
            relation = relation_to_dp_accounting(NeighboringRelation.REPLACE_ONE)
            for eps, c in st["pure"].items():
                plds.append(_self_composed(lib.from_randomized_response(
                    noise_parameter=_rr_noise_parameter(eps), num_buckets=2,
                    pessimistic_estimate=True, value_discretization_interval=v,
                    neighboring_relation=relation), c))
            pld = None
            if any(part is None for part in plds):
                pld = _BEYOND_PLD_RANGE
            else:
                for part in plds:
                    pld = part if pld is None else pld.compose(part)
            self._pld_cache = (pld,)
        return self._pld_cache[0]

    def get_epsilon_and_order(self, delta):
        """Return ``(epsilon, None)``: the PLD's epsilon for ``delta``, rounded up.

        Parameters
        ----------
        delta : float
            Target delta, in [0, 1).

        Returns
        -------
        tuple of (float, None)
            The epsilon of the composition (``inf`` after a non-private event); a PLD has no
            Renyi order, hence ``None``.
        """
        delta = check_delta(delta)
        if self._state["non_private"]:
            return math.inf, None
        pld = self._pld()
        if pld is None:
            return 0.0, None
        if pld is _BEYOND_PLD_RANGE:
            return math.inf, None
        return float(round_up(max(0.0, pld.get_epsilon_for_delta(delta)))), None

    def get_delta(self, epsilon):
        """Return the PLD's delta for ``epsilon``, rounded up.

        Parameters
        ----------
        epsilon : float
            Target epsilon, in (0, inf).

        Returns
        -------
        float
            The delta of the composition at ``epsilon`` (1.0 after a non-private event).
        """
        epsilon = check_epsilon(epsilon)
        if self._state["non_private"]:
            return 1.0
        pld = self._pld()
        if pld is None:
            return 0.0
        if pld is _BEYOND_PLD_RANGE:
            return 1.0
        return float(min(1.0, round_up(pld.get_delta_for_epsilon(epsilon))))



def _rr_noise_parameter(epsilon):
    """``p`` of binary randomized response with ``log((2 - p) / p) >= epsilon``, in [0, 1).

    ``2 / (1 + e^eps)`` written without overflow, nudged down by a few ulps so that rounding
    never makes the randomized response more private than ``epsilon``; 0 when ``e^-eps``
    underflows (epsilon beyond ~745: reported as non-private).
    """
    t = math.exp(-epsilon)
    p = 2.0 * t / (1.0 + t) * (1.0 - 4e-16)
    return min(p, float(np.nextafter(1.0, 0.0)))
