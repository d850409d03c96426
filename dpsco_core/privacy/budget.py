"""A privacy budget that refuses: :class:`Budget` and :func:`spend`, the one call every release makes.

A :class:`Budget` ``(epsilon, delta)`` holds an accountant. Every solver, mechanism and estimator
that takes ``budget=`` builds the event of its release from its public arguments (the
calibration never reads the data), then calls :func:`spend` **before** its first access to the
data. :func:`spend` composes the event into a copy of the accountant and, under one lock, either
commits it or raises :class:`~dpsco_core.exceptions.PrivacyBudgetError`: a refused release has
touched nothing and is not charged. Charging at that point, rather than after the run, closes
the window in which two concurrent releases could each pass the check and together overspend;
a release that fails after the check has already read the data and stays charged.

Composition (``accountant=``):

* ``"rdp"`` (default): the events' RDP curves add up (:class:`RdpAccountant`); the spent epsilon
  is the composed curve converted at the budget's delta, over dp-accounting's order grid and
  the 49 orders around the zCDP optimum of the budget's own (epsilon, delta)
  (:func:`~dpsco_core.privacy.calibration.zcdp_centred_orders`, the grid the estimators'
  reports add: a fit given the budget's whole (epsilon, delta) fits in it). A ledger of
  pure-DP releases alone costs the smaller of that and the sum of their epsilons (basic
  composition). Supports Gaussian, Poisson-sampled
  Gaussian, Laplace, pure-DP, zCDP and tree-aggregation events (the last under zero-out and
  replace-one only).
* ``"gdp"``: exact Gaussian-DP composition (:class:`GdpAccountant`): unsampled Gaussian and
  tree-aggregation events only.
* ``"pld"``: privacy loss distributions (:class:`PldAccountant`, dp-accounting's pessimistic
  PLDs, an optional dependency): the tightest epsilon for Gaussian, Poisson-sampled Gaussian
  (not under replace-one), Laplace, pure-DP and tree-aggregation events; no zCDP or
  approximate-RDP events. Each charge recomposes the PLD of the whole ledger (FFT), a
  fraction of a second for DP-SGD-sized ledgers.
* ``"basic-composition"``: each release is charged its own ``(epsilon_i, delta_i)`` and these
  add up (Dwork and Roth 2014, Theorem 3.16), as diffprivlib's ``BudgetAccountant`` does.
  Laplace and pure/approximate-DP events are charged as they are; any other event is first
  converted at the release's own delta, with the smallest bound among the accountants that
  support it (RDP with either conversion, GDP). This is the mode for events with
  ``delta_i > 0`` that have no RDP curve (amplification by shuffling in ``vr_frank_wolfe``).

Whatever the mode, an event the accountant cannot analyse is refused with
:class:`~dpsco_core.exceptions.UnsupportedEventError` (nothing charged), and so is a release
under a neighbouring relation other than the budget's: guarantees under different relations do
not compose into one.
"""

import copy
import math
import threading
import warnings
from collections.abc import Iterable
from typing import Any

from .._validation import check_delta, check_scalar
from ..exceptions import OrderGridWarning, PrivacyBudgetError, UnsupportedEventError
from .accountants import (DEFAULT_PLD_DISCRETIZATION, GdpAccountant, PldAccountant,
                          PureDpAccountant, RdpAccountant, _pure_epsilon)
from .events import DpEvent, EpsilonDeltaDpEvent, NeighboringRelation, check_relation

__all__ = ["Budget", "spend", "BUDGET_ACCOUNTANTS"]

#: Composition modes of :class:`Budget`.
BUDGET_ACCOUNTANTS = ("rdp", "gdp", "basic-composition", "pld")

#: The RDP, GDP and PLD accountants round every bound up by a relative 1e-13 per operation
#: (``round_up``), so a budget split into exact shares would be refused for the rounding
#: alone; basic composition sums exactly, but shares that are not floats (three releases of
#: 0.1 in 0.3: their exact sum is above the float 0.3) would be too. The comparison allows
#: this relative excess, and no more.
ROUNDING_TOLERANCE = 1e-10

_check_relation = check_relation      # the name the tuning modules import


class _PlannedCharge(Exception):
    """Internal: a charge reached under :func:`_planned_charge` (the run stops there)."""


class _planned_charge:
    """Internal context: in this thread, ``budget.charge`` records its release in
    ``.releases`` and raises :class:`_PlannedCharge` instead of charging, which the context
    swallows.

    For a caller that must learn a run's exact release (event, relation, delta) from the
    run's own code before any of several runs charges (the estimators' one-vs-rest fits,
    refused together before the first). A run stops at its charge, before it reads the data
    (:func:`spend` is called before the first access), so nothing is released. Other threads
    charging the same budget are unaffected.
    """

    def __init__(self, budget):
        self.budget, self.releases = budget, []

    def __enter__(self):
        if not hasattr(self.budget._planning, "releases"):
            self.budget._planning.releases = None
        self._outer, self.budget._planning.releases = (self.budget._planning.releases,
                                                       self.releases)
        return self

    def __exit__(self, kind, value, traceback):
        self.budget._planning.releases = self._outer
        return kind is _PlannedCharge


def _release_epsilon(event, relation, delta):
    """Smallest valid epsilon of one release at its own ``delta`` (basic-composition mode)."""
    candidates = []
    for accountant in (RdpAccountant(None, relation, conversion="improved"),
                       RdpAccountant(None, relation, conversion="mironov"),
                       GdpAccountant(relation)):
        if accountant.supports(event):
            candidates.append(accountant.compose(event).get_epsilon(delta))
    if not candidates:
        raise UnsupportedEventError(
            f"Budget(accountant='basic-composition') cannot convert {event!r} to (epsilon, "
            "delta): no accountant supports it under " f"{relation.value}.")
    return min(candidates)


class Budget:
    r"""A privacy budget :math:`(\varepsilon, \delta)` that refuses releases exceeding it.

    Pass it as ``budget=`` to any solver, mechanism or estimator of dpsco-core: the release's
    event is composed with what was spent before, and a release that would exceed
    :math:`(\varepsilon, \delta)` raises :class:`~dpsco_core.exceptions.PrivacyBudgetError`
    before its computation touches the data (module docstring).

    Parameters
    ----------
    epsilon : float
        Total epsilon, in (0, inf).
    delta : float
        Total delta, in (0, 1); 0 is accepted with ``accountant="basic-composition"`` (a
        pure-DP budget: only pure releases fit in it).
    accountant : {"rdp", "gdp", "basic-composition", "pld"}, default="rdp"
        How releases compose (module docstring). ``"pld"`` needs dp-accounting
        (``pip install 'dpsco-core[pld]'``): an ImportError says so at construction.
    neighboring_relation : str, NeighboringRelation or None, default=None
        The relation of the budget's guarantee: ``"replace_one"``, ``"add_or_remove_one"`` or
        ``"zero_out"``. None: set by the first charged release; every later release must use
        the same one.
    orders : array_like of float, optional
        Renyi orders of the ``"rdp"`` mode (default: dp-accounting's grid and
        :func:`~dpsco_core.privacy.calibration.zcdp_centred_orders` of ``(epsilon, delta)``).
    conversion : {"improved", "mironov"}, default="improved"
        RDP -> (epsilon, delta) conversion of the ``"rdp"`` mode.
    value_discretization_interval : float, default=1e-4
        Discretisation of the privacy loss in the ``"pld"`` mode (see :class:`PldAccountant`).

    Attributes
    ----------
    epsilon, delta : float
        The budget.
    spent_epsilon, spent_delta : float
        What the charged releases cost together (``"rdp"``/``"gdp"``/``"pld"``: the composed epsilon at
        the budget's delta, and that delta once anything was charged).
    remaining_epsilon, remaining_delta : float
        ``epsilon - spent_epsilon`` and ``delta - spent_delta``.
    ledger : tuple of DpEvent
        The charged events, in order (``"basic-composition"``: as charged, each an
        ``EpsilonDeltaDpEvent`` or a pure event).
    neighboring_relation : NeighboringRelation or None
    orders : array or None
        The Renyi orders of the ``"rdp"`` mode.

    Notes
    -----
    Thread-safe: the check and the commit of a release happen under one lock. Spent values
    are compared with the budget up to a relative :data:`ROUNDING_TOLERANCE` (1e-10), which
    absorbs the accountants' upward rounding of each bound. A refused
    release, and one that fails before it is charged (invalid arguments), costs nothing. The
    budget of a guarantee is only as good as the releases' own calibration: each release is
    charged the event its privacy report is computed from.

    Examples
    --------
    >>> from dpsco_core.privacy import Budget, GaussianDpEvent, spend
    >>> budget = Budget(epsilon=1.0, delta=1e-6, neighboring_relation="replace_one")
    >>> spend(budget, GaussianDpEvent(5.0), neighboring_relation="replace_one")
    >>> 0 < budget.spent_epsilon < 1.0
    True
    """

    def __init__(self, epsilon: float, delta: float, *, accountant: str = "rdp",
                 neighboring_relation: Any = None, orders: Any = None,
                 conversion: str = "improved",
                 value_discretization_interval: float = DEFAULT_PLD_DISCRETIZATION) -> None:
        if accountant not in BUDGET_ACCOUNTANTS:
            raise ValueError(f"accountant must be one of {list(BUDGET_ACCOUNTANTS)}; got "
                             f"{accountant!r}.")
        self._epsilon = check_scalar(epsilon, "epsilon", low=0.0)
        self._delta = check_delta(delta, allow_zero=accountant == "basic-composition")
        self._mode = accountant
        if orders is None and accountant == "rdp":
            from .calibration import _report_orders, zcdp_centred_orders

            orders = _report_orders(zcdp_centred_orders(self._epsilon, self._delta))
        self._orders = orders
        self._conversion = conversion
        self._interval = value_discretization_interval
        self._relation = None
        self._accountant = None
        self._lock = threading.Lock()
        self._planning = threading.local()       # _planned_charge's per-thread record
        if neighboring_relation is not None:
            self._bind(_check_relation(neighboring_relation))
        else:
            # Validate orders, conversion (and dp-accounting for "pld") now, not at the first
            # charge.
            RdpAccountant(orders, conversion=conversion)
            if accountant == "pld":
                self._new_accountant(NeighboringRelation.ADD_OR_REMOVE_ONE)

    def _new_accountant(self, relation):
        if self._mode == "rdp":
            return RdpAccountant(self._orders, relation, conversion=self._conversion)
        if self._mode == "gdp":
            return GdpAccountant(relation)
        if self._mode == "pld":
            return PldAccountant(relation, value_discretization_interval=self._interval)
        return PureDpAccountant(relation)

    def _bind(self, relation):
        self._relation = relation
        self._accountant = self._new_accountant(relation)

    def __copy__(self):
        # A budget is one shared ledger: a copy that could spend it again would defeat it.
        # sklearn.base.clone deep-copies estimator parameters, so every clone of an estimator
        # charges this same budget.
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        raise TypeError("a Budget cannot be pickled: a copy in another process could spend it "
                        "again. Share one Budget within one process.")

    # --- what was spent --------------------------------------------------------------------
    @property
    def epsilon(self):
        """float: the total epsilon of the budget."""
        return self._epsilon

    @property
    def delta(self):
        """float: the total delta of the budget."""
        return self._delta

    @property
    def accountant(self):
        """str: the composition mode."""
        return self._mode

    @property
    def orders(self):
        """The Renyi orders of the ``"rdp"`` mode, as given or the default grid (None in the
        other modes)."""
        return self._orders if self._mode == "rdp" else None

    @property
    def neighboring_relation(self):
        """NeighboringRelation or None: the guarantee's relation (None until a release)."""
        return self._relation

    @property
    def ledger(self):
        """tuple of DpEvent: the charged events, in order."""
        with self._lock:
            if self._accountant is None:
                return ()
            return tuple(self._accountant.ledger.events)

    @staticmethod
    def _spent_of(accountant, mode, delta):
        if accountant is None or not accountant.ledger.events:
            return 0.0, 0.0
        if mode == "basic-composition":
            return accountant.epsilon, accountant.delta
        if mode == "rdp":
            pure = _pure_epsilon(accountant.ledger, accountant.neighboring_relation)
            if pure is not None:
                # Pure releases alone (a private quantile charged before its fit): their
                # RDP curve is flat at large orders, so its optimum is the grid's top edge
                # (a warning the user cannot act on), and basic composition is the limit.
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", OrderGridWarning)
                    return min(pure, accountant.get_epsilon(delta)), delta
        return accountant.get_epsilon(delta), delta

    @property
    def spent_epsilon(self):
        """float: what the charged releases cost together, at the budget's delta."""
        with self._lock:
            return self._spent_of(self._accountant, self._mode, self._delta)[0]

    @property
    def spent_delta(self):
        """float: the delta spent (RDP, GDP and PLD modes: the budget's delta once charged)."""
        with self._lock:
            return self._spent_of(self._accountant, self._mode, self._delta)[1]

    @property
    def remaining_epsilon(self):
        """float: ``epsilon - spent_epsilon``."""
        return self._epsilon - self.spent_epsilon

    @property
    def remaining_delta(self):
        """float: ``delta - spent_delta``."""
        return self._delta - self.spent_delta

    def __repr__(self):
        relation = None if self._relation is None else self._relation.value
        return (f"Budget(epsilon={self._epsilon!r}, delta={self._delta!r}, accountant="
                f"{self._mode!r}, neighboring_relation={relation!r}, spent_epsilon="
                f"{self.spent_epsilon:.6g}, spent_delta={self.spent_delta:.6g}, releases="
                f"{len(self.ledger)})")

    # --- charging ----------------------------------------------------------------------------
    def _charged_event(self, event, relation, delta):
        """The event the accountant composes for one release (basic mode: its (eps_i, delta_i))."""
        if self._mode != "basic-composition" or PureDpAccountant(relation).supports(event):
            return event
        if delta is None:
            raise ValueError("Budget(accountant='basic-composition') needs the release's delta "
                             f"to charge {event!r}; got delta=None.")
        delta = check_delta(delta)
        return EpsilonDeltaDpEvent(_release_epsilon(event, relation, delta), delta)

    def _attempt(self, releases, neighboring_relation, commit):
        """Charge (``commit``) or check the ``(event, delta)`` pairs of ``releases``, each
        as its own release, in order; all or nothing."""
        for event, _ in releases:
            if not isinstance(event, DpEvent):
                raise TypeError(f"event must be a DpEvent; got {type(event).__name__} "
                                f"{event!r}.")
        if neighboring_relation is None:
            # A standalone mechanism states its sensitivity under the budget's relation.
            if self._relation is None:
                raise ValueError("neighboring_relation is needed: the budget has no relation "
                                 "yet (give Budget(..., neighboring_relation=...) or pass it "
                                 "to the release).")
            neighboring_relation = self._relation
        relation = _check_relation(neighboring_relation)
        with self._lock:
            if self._relation is not None and relation is not self._relation:
                raise PrivacyBudgetError(
                    f"this budget accounts releases under {self._relation.value}; a release "
                    f"under {relation.value} cannot be composed with them (guarantees under "
                    "different neighbouring relations do not add up). Use one relation per "
                    "budget.")
            trial = (copy.deepcopy(self._accountant) if self._accountant is not None
                     else self._new_accountant(relation))
            for event, delta in releases:
                charged = self._charged_event(event, relation, delta)
                if not trial.supports(charged):
                    raise UnsupportedEventError(
                        f"Budget(accountant={self._mode!r}) cannot compose {charged!r} under "
                        f"{relation.value}. Use accountant='basic-composition' (each release "
                        "charged its own (epsilon, delta)) or another relation.")
                trial.compose(charged)
            spent_eps, spent_delta = self._spent_of(trial, self._mode, self._delta)
            slack = 1.0 + ROUNDING_TOLERANCE
            if not (spent_eps <= self._epsilon * slack and spent_delta <= self._delta * slack):
                before = self._spent_of(self._accountant, self._mode, self._delta)
                what = ("this release" if len(releases) == 1
                        else f"these {len(releases)} releases")
                raise PrivacyBudgetError(
                    f"privacy budget exceeded: {what} would bring the spent budget to "
                    f"(epsilon={spent_eps:.6g}, delta={spent_delta:.3g}) > budget (epsilon="
                    f"{self._epsilon:.6g}, delta={self._delta:.3g}); spent so far (epsilon="
                    f"{before[0]:.6g}, delta={before[1]:.3g}) over {self._n_releases()}"
                    " releases. The release was refused before touching the data.")
            if commit:
                self._relation, self._accountant = relation, trial
            return spent_eps

    def _n_releases(self):
        # Called with the lock held (from _attempt).
        return 0 if self._accountant is None else len(self._accountant.ledger.events)

    def check(self, event: DpEvent, *, neighboring_relation: Any,
              delta: float | None = None) -> float:
        """Return the spent epsilon if ``event`` were charged; raise if it would not fit.

        Nothing is charged. Raises as :meth:`charge` does.

        Parameters
        ----------
        event : DpEvent
            The release's event.
        neighboring_relation : str or NeighboringRelation
            The relation of the release; must match the budget's once it has one.
        delta : float, optional
            The release's own delta (basic composition); default: the budget's.

        Returns
        -------
        float
            The spent epsilon after the release.
        """
        return self._attempt([(event, delta)], neighboring_relation, commit=False)

    def check_releases(self, releases: Iterable[tuple[DpEvent, float | None]], *,
                       neighboring_relation: Any) -> float:
        """Return the spent epsilon if the releases were charged one after the other; raise
        if they would not all fit. Nothing is charged.

        For a caller that will make several releases and must refuse before the first reads
        the data (the estimators' row-norm quantile and their K fits). Unlike :meth:`check`
        of their composition, each is charged as its own release: under
        ``"basic-composition"`` K releases at delta each cost K conversions, more than one
        conversion of the composed event at one delta.

        Parameters
        ----------
        releases : sequence of (DpEvent, float or None)
            Each release's event and its own delta (as :meth:`charge` takes them).
        neighboring_relation : str or NeighboringRelation
            The relation of the releases; must match the budget's once it has one.

        Returns
        -------
        float
            The spent epsilon after the releases.
        """
        releases = [(event, delta) for event, delta in releases]
        if not releases:
            raise ValueError("releases must hold at least one (event, delta) pair.")
        return self._attempt(releases, neighboring_relation, commit=False)

    def charge(self, event: DpEvent, *, neighboring_relation: Any,
               delta: float | None = None) -> float:
        """Compose ``event`` into the budget, or refuse it; return the spent epsilon after it.

        Parameters
        ----------
        event : DpEvent
            The release's whole event tree (the one its privacy report is computed from).
        neighboring_relation : str, NeighboringRelation or None
            The relation the event's noise multipliers are relative to; None means the
            budget's own relation (which must then be set).
        delta : float or None
            The release's own delta (used by ``"basic-composition"`` to convert events that
            are not pure or (epsilon, delta)).

        Returns
        -------
        float
            The spent epsilon, this release included.

        Raises
        ------
        PrivacyBudgetError
            If the release would exceed the budget, or its relation is not the budget's.
        UnsupportedEventError
            If the budget's accountant cannot compose the event.
        """
        planned = getattr(self._planning, "releases", None)
        if planned is not None:
            planned.append((event, neighboring_relation, delta))
            raise _PlannedCharge
        return self._attempt([(event, delta)], neighboring_relation, commit=True)


def spend(budget, event, *, neighboring_relation=None, delta=None):
    """Charge one release to ``budget`` before it touches the data; ``budget=None`` is free.

    The one helper every solver, mechanism and estimator calls, right after its event is
    built from public arguments and before its first access to the data. Raises as
    :meth:`Budget.charge` does, and TypeError if ``budget`` is neither None nor a Budget.

    Parameters
    ----------
    budget : Budget or None
        The budget to charge; None charges nothing.
    event : DpEvent
        The release's event, built from public arguments only.
    neighboring_relation : str or NeighboringRelation, optional
        The relation of the release.
    delta : float, optional
        The release's own delta (basic composition); default: the budget's.
    """
    if budget is None:
        return
    if not isinstance(budget, Budget):
        raise TypeError("budget must be None or a dpsco_core.privacy.Budget; got "
                        f"{type(budget).__name__} {budget!r}.")
    budget.charge(event, neighboring_relation=neighboring_relation, delta=delta)
