"""The privacy report every private solver returns, computed from its event tree.

A report is never assembled by hand: :meth:`PrivacyReport.from_event` runs an accountant over the
solver's event tree, so that a test can rebuild the report from the events alone and compare.
"""

import math
import types
from dataclasses import dataclass, field
from typing import Mapping, Optional, Tuple

from .._validation import check_delta, check_scalar
from ._checks import is_immutable_orders
from .accountants import (DEFAULT_PLD_DISCRETIZATION, GdpAccountant, PldAccountant,
                          PureDpAccountant, RdpAccountant)
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
)

__all__ = ["PrivacyReport", "ACCOUNTANTS", "DEFAULT_ASSUMPTIONS", "FLOATING_POINT_ASSUMPTION",
           "MODES", "HEURISTIC_CONDITION", "SEEDED_ASSUMPTION", "DISJOINT_BATCHES_ASSUMPTION",
           "seed_assumptions", "disjoint_batches_report"]

#: Modes a solver with a certified and a heuristic parametrisation states in its report.
MODES = ("certified", "heuristic")

#: The condition a ``mode="heuristic"`` report carries: its headline then reads CONDITIONAL.
HEURISTIC_CONDITION = (
    "heuristic mode: the run uses constants smaller than those its privacy proof needs (for "
    "ReSQue, the smoothing-to-ball radius ratio and C_priv of Lemmas 5 and 7); the stated "
    "(epsilon, delta) is computed from the proof's bound as if it held, and is NOT certified")

#: Accountant names accepted by :meth:`PrivacyReport.from_event`.
ACCOUNTANTS = ("rdp", "basic-composition", "gdp", "pld")

#: The solvers draw their Gaussian and Laplace noise (and report-noisy-max's) in double
#: precision; only the standalone mechanisms of :mod:`dpsco_core.mechanisms` use the exact
#: samplers by default.
FLOATING_POINT_ASSUMPTION = (
    "the noise is sampled in double-precision floating point and analysed as if it were "
    "real-valued: (epsilon, delta) is the guarantee of the ideal real-valued mechanism; the "
    "low-order bits of the released values are not hardened against floating-point attacks "
    "(Mironov 2012), unlike the exact samplers of dpsco_core.mechanisms")

#: Assumptions that hold for every dpsco-core solver (OpenDP-style explicit list).
DEFAULT_ASSUMPTIONS = (
    "clipping is enforced by the kernels, not assumed from a stated bound",
    FLOATING_POINT_ASSUMPTION,
)

#: What a report of a run with a caller-supplied ``random_state`` adds to its assumptions.
#: An assumption, not a condition: it is not read from the data, and every reproducible run
#: (tests, benchmarks, the paper reproductions) is seeded on purpose.
SEEDED_ASSUMPTION = (
    "random_state was supplied (an int, SeedSequence or Generator), so the noise is a "
    "deterministic function of it: the guarantee holds only while that seed (or generator "
    "state) stays secret from whoever sees the output and seeds no other release of these "
    "data; random_state=None (the default) draws fresh operating-system entropy")


def seed_assumptions(random_state):
    """``()`` for ``random_state=None`` (fresh entropy), else ``(SEEDED_ASSUMPTION,)``.

    Anyone who holds a seed can regenerate the noise of the run and subtract it from the
    output, so a seeded run's guarantee rests on the seed's secrecy; the report says so.

    Parameters
    ----------
    random_state : None, int, SeedSequence or Generator
        The caller's argument, as given.

    Returns
    -------
    tuple of str
    """
    return () if random_state is None else (SEEDED_ASSUMPTION,)


#: The assumption of a report of phases run on disjoint batches (parallel composition).
DISJOINT_BATCHES_ASSUMPTION = (
    "parallel composition: the phases run on disjoint batches of the records (consecutive "
    "public index ranges), a neighbour differs in one batch, and the later phases only "
    "post-process that phase's output on identical data; the report is the worst phase's")


def disjoint_batches_report(reports, random_state):
    """The report of phases run one after another on disjoint batches, each started from the
    previous output (the phased ERM of Feldman, Koren and Talwar 2020, used by ReSQue's
    Proposition 11 and the noisy-GD baseline).

    Under replace-one (and zero-out) a neighbour differs in one batch: the phases before it
    are identical, its phase is (epsilon_i, delta_i)-DP and the later ones post-process its
    output on identical data, so the run is (max epsilon_i, max delta_i)-DP. The report is
    the worst phase's (largest epsilon; its ``event`` recomputes that epsilon), at the
    largest delta, with every phase's conditions and assumptions (the worst phase's first),
    :data:`DISJOINT_BATCHES_ASSUMPTION`, the
    mode ``"heuristic"`` if any phase's is, and the caller's seed statement.

    Parameters
    ----------
    reports : sequence of PrivacyReport
        The phases' reports, under one neighbouring relation (not add/remove-one, under
        which the batches' boundaries would move).
    random_state : None, int, SeedSequence or Generator
        The caller's argument, as given (the phases ran on child seeds).

    Returns
    -------
    PrivacyReport
    """
    import dataclasses

    from .events import NeighboringRelation

    if not reports:
        raise ValueError("disjoint_batches_report needs at least one phase's report.")
    relations = {NeighboringRelation(r.neighboring_relation) for r in reports}
    if len(relations) != 1 or NeighboringRelation.ADD_OR_REMOVE_ONE in relations:
        raise ValueError("the phases' reports must share one neighbouring relation, "
                         "replace-one or zero-out; got "
                         f"{sorted(r.value for r in relations)}.")
    worst = max(reports, key=lambda r: (r.epsilon, r.delta))
    modes = {r.mode for r in reports}
    mode = "heuristic" if "heuristic" in modes else worst.mode
    report = dataclasses.replace(
        worst, delta=max(r.delta for r in reports), mode=mode,
        conditions=tuple(dict.fromkeys(c for r in reports for c in r.conditions)),
        assumptions=tuple(dict.fromkeys(worst.assumptions
                                        + tuple(a for r in reports for a in r.assumptions)
                                        + (DISJOINT_BATCHES_ASSUMPTION,))))
    return with_caller_seed(report, random_state)


def with_caller_seed(report, random_state):
    """``report`` of runs seeded by the library from the caller's ``random_state`` (child seed
    sequences), restated with the caller's seed status: the runs' own statement is dropped
    and ``seed_assumptions(random_state)`` appended.

    Parameters
    ----------
    report : PrivacyReport
    random_state : None, int, SeedSequence or Generator
        The caller's argument, as given.

    Returns
    -------
    PrivacyReport
    """
    import dataclasses

    kept = tuple(a for a in report.assumptions if a != SEEDED_ASSUMPTION)
    return dataclasses.replace(report, assumptions=kept + seed_assumptions(random_state))


@dataclass(frozen=True, slots=True)
class PrivacyReport:
    """What a private run guarantees, and how that was established.

    Attributes
    ----------
    epsilon, delta : float
        The run is (epsilon, delta)-DP under ``neighboring_relation`` (epsilon rounded up).
    neighboring_relation : NeighboringRelation
        The relation under which every noise multiplier is relative to the sensitivity.
    mechanisms : tuple of str
        The base mechanisms of the event tree, in order of first appearance.
    accountant : str
        ``"rdp"`` (:class:`~dpsco_core.privacy.accountants.RdpAccountant`) or
        ``"basic-composition"`` (:class:`~dpsco_core.privacy.accountants.PureDpAccountant`)
        or ``"gdp"`` (:class:`~dpsco_core.privacy.accountants.GdpAccountant`) or ``"pld"``
        (:class:`~dpsco_core.privacy.accountants.PldAccountant`, dp-accounting's privacy loss
        distributions): the accountant that certified ``epsilon``.
    conversion : str
        The RDP -> DP conversion (``"improved"`` or ``"mironov"``; ``"none"`` for basic
        composition, ``"exact-gdp"`` for GDP; for PLD ``"pessimistic-pld(<interval>)"``, the
        value discretisation interval of the pessimistic estimate).
    noise_multipliers : tuple of float
        Distinct noise multipliers of the Gaussian and Laplace events, in order of appearance.
    releases : int
        Number of mechanism invocations (leaves of the tree times their counts).
    budget_split : mapping of str to float
        Fractions of the budget spent on each part (for example
        ``{"smoothness constants": 0.1, "optimization": 0.9}``); read-only.
    assumptions : tuple of str
        Facts the guarantee rests on that the accountant does not check. A run given a
        ``random_state`` (not None) lists :data:`SEEDED_ASSUMPTION`: its noise is a function
        of the seed, which must stay secret.
    event : DpEvent
        The event tree the report was computed from.
    orders : tuple of float or None
        The Renyi orders used (None: the default grid).
    conditions : tuple of str
        Facts about *this run* that make the guarantee conditional: constants read from the
        private data and not accounted, non-private diagnostics released beside the output.
        Empty for an unconditional guarantee (see :attr:`unconditional`).
    non_private_outputs : tuple of str
        Outputs returned beside the private one that the guarantee does **not** cover (for
        example ``Result.history.objective``, exact objective values of the training data).
        They do not weaken the guarantee of the private output (``coef``), so they are not
        conditions; releasing them is outside (epsilon, delta). An object that *holds* them as
        part of what it releases (a fitted estimator with ``diagnostics=True``) lists them as
        conditions too.
    rdp_slack : float
        The total-variation slack of the approximate-RDP events of the tree (ReSQue paper,
        eq. (12) and Lemma 3), already included in ``delta`` by Corollary 1
        (``delta = delta' + (1 + e^epsilon) rdp_slack``); 0 without such events.
    mode : str or None
        ``"certified"`` or ``"heuristic"`` for solvers that offer both (ReSQue): a heuristic
        report also lists :data:`HEURISTIC_CONDITION` among its conditions. None otherwise.
    """

    epsilon: float
    delta: float
    neighboring_relation: NeighboringRelation
    mechanisms: Tuple[str, ...]
    accountant: str
    conversion: str
    noise_multipliers: Tuple[float, ...]
    releases: int
    budget_split: Mapping[str, float] = field(default_factory=dict, hash=False)
    assumptions: Tuple[str, ...] = DEFAULT_ASSUMPTIONS
    event: Optional[DpEvent] = None
    orders: Optional[Tuple[float, ...]] = None
    conditions: Tuple[str, ...] = ()
    non_private_outputs: Tuple[str, ...] = ()
    rdp_slack: float = 0.0
    mode: Optional[str] = None

    @property
    def unconditional(self):
        """True when the (epsilon, delta) guarantee rests on no data-dependent condition."""
        return not self.conditions

    def _headline(self):
        """"(1, 1e-05)-DP, unconditional, replace-one" or "CONDITIONAL (1, 1e-05)-DP, ...".

        It leads with the condition status: a reader who stops after the epsilon must not
        take a conditional guarantee for an unconditional one.
        """
        relation = self.neighboring_relation.name.lower().replace("_", "-")
        guarantee = f"({self.epsilon:.6g}, {self.delta:.6g})-DP"
        if self.unconditional:
            return f"{guarantee}, unconditional, {relation}"
        return f"CONDITIONAL {guarantee}, {relation}"

    def __str__(self):
        text = (f"{self._headline()}; {', '.join(self.mechanisms) or 'no mechanism'}, "
                f"{self.releases} release(s), {self.accountant} accountant")
        if self.mode is not None:
            text += f", {self.mode} mode"
        if self.rdp_slack > 0.0:
            text += f", approximate-RDP slack {self.rdp_slack:.3g} (included in delta)"
        if not self.unconditional:
            text += ". Holds only if: " + "; ".join(self.conditions)
        if self.non_private_outputs:
            text += ". Not covered (do not release): " + "; ".join(self.non_private_outputs)
        return text

    def __repr__(self):
        # The dataclass repr would put epsilon first and the conditions last, after the event
        # tree: the status leads instead.
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__dataclass_fields__
                           if name not in ("epsilon", "delta", "event"))
        return f"PrivacyReport({self._headline()}, {fields})"

    def __post_init__(self):
        split = dict(self.budget_split)
        for part, share in split.items():
            if not isinstance(part, str):
                raise TypeError(f"budget_split keys must be str; got {part!r}.")
            check_scalar(share, f"budget_split[{part!r}]", low=0.0, high=1.0, low_open=False,
                         high_open=False)
        if math.fsum(split.values()) > 1.0 + 1e-12:
            raise ValueError(f"budget_split fractions must sum to at most 1; got {split!r}.")
        setattr_ = object.__setattr__
        setattr_(self, "budget_split", types.MappingProxyType(split))
        # tuple(t) is t for a tuple: set only what is not one (each frozen set ~0.3 us of
        # every report; issue 18)
        if type(self.mechanisms) is not tuple:
            setattr_(self, "mechanisms", tuple(self.mechanisms))
        if type(self.noise_multipliers) is not tuple:
            setattr_(self, "noise_multipliers", tuple(self.noise_multipliers))
        if type(self.assumptions) is not tuple:
            setattr_(self, "assumptions", tuple(self.assumptions))
        if type(self.conditions) is not tuple:
            setattr_(self, "conditions", tuple(self.conditions))
        if type(self.non_private_outputs) is not tuple:
            setattr_(self, "non_private_outputs", tuple(self.non_private_outputs))
        check_scalar(self.rdp_slack, "rdp_slack", low=0.0, high=1.0, low_open=False)
        if self.mode is not None and self.mode not in MODES:
            raise ValueError(f"mode must be None or one of {set(MODES)}; got {self.mode!r}.")
        if self.mode == "heuristic" and HEURISTIC_CONDITION not in self.conditions:
            object.__setattr__(self, "conditions", self.conditions + (HEURISTIC_CONDITION,))
        if self.orders is not None and _FLOAT_TUPLES.get(id(self.orders)) is not self.orders:
            object.__setattr__(self, "orders", tuple(map(float, self.orders)))

    @classmethod
    def from_event(cls, event, *, delta, accountant="rdp",
                   neighboring_relation=NeighboringRelation.ADD_OR_REMOVE_ONE, orders=None,
                   conversion="improved", budget_split=None, assumptions=DEFAULT_ASSUMPTIONS,
                   conditions=(), value_discretization_interval=DEFAULT_PLD_DISCRETIZATION,
                   mode=None):
        """Build the report of ``event`` by running an accountant over it.

        Parameters
        ----------
        event : DpEvent
            The whole event tree of the run.
        delta : float
            Target delta, in (0, 1); for ``accountant="basic-composition"`` also 0 (pure DP:
            the report then states ``delta = 0``, and epsilon is infinite unless every event
            of the tree is pure).
        accountant : {"rdp", "basic-composition", "gdp", "pld"}, default="rdp"
            ``"pld"`` needs dp-accounting (``pip install 'dpsco-core[pld]'``).
        neighboring_relation : NeighboringRelation, default=ADD_OR_REMOVE_ONE
        orders : array_like of float, optional
            Renyi orders for the RDP accountant (default: dp-accounting's grid).
        conversion : {"improved", "mironov"}, default="improved"
            RDP -> DP conversion (ignored by basic composition).
        budget_split : mapping of str to float, optional
        assumptions : tuple of str, default=DEFAULT_ASSUMPTIONS
        conditions : tuple of str, default=()
            Data-dependent conditions of this run (see the class docstring).
        value_discretization_interval : float, default=1e-4
            For ``accountant="pld"`` only: the discretisation of the privacy loss.
        mode : {"certified", "heuristic"} or None, default=None
            The solver's mode, stated in the report; ``"heuristic"`` adds
            :data:`HEURISTIC_CONDITION` to the conditions.

        Returns
        -------
        PrivacyReport

        Raises
        ------
        UnsupportedEventError
            If the accountant cannot analyse the tree.
        """
        delta = check_delta(delta, allow_zero=accountant == "basic-composition")
        if accountant == "rdp":
            acc = RdpAccountant(orders, neighboring_relation, conversion=conversion)
            conversion_name = acc.conversion
            used_orders = None if orders is None else _orders_tuple(acc.orders)
        elif accountant == "basic-composition":
            acc = PureDpAccountant(neighboring_relation)
            conversion_name, used_orders = "none", None
        elif accountant == "gdp":
            acc = GdpAccountant(neighboring_relation)
            conversion_name, used_orders = "exact-gdp", None
        elif accountant == "pld":
            acc = PldAccountant(neighboring_relation,
                                value_discretization_interval=value_discretization_interval)
            conversion_name = f"pessimistic-pld({acc.value_discretization_interval:g})"
            used_orders = None
        else:
            raise ValueError(f"accountant must be one of {set(ACCOUNTANTS)}; got {accountant!r}.")
        acc.compose(event)
        if delta == 0.0:
            # Pure DP (basic composition only): the summed epsilon if no event carries a delta.
            epsilon = acc.epsilon if acc.delta == 0.0 else math.inf
        else:
            epsilon = acc.get_epsilon(delta)
        mechanisms, multipliers, releases = _describe(event)
        return cls(
            epsilon=epsilon, delta=delta,
            neighboring_relation=neighboring_relation, mechanisms=mechanisms,
            accountant=accountant, conversion=conversion_name, noise_multipliers=multipliers,
            releases=releases, budget_split=budget_split or {}, assumptions=assumptions,
            event=event, orders=used_orders, conditions=tuple(conditions),
            rdp_slack=getattr(acc, "rdp_slack", 0.0), mode=mode)

    def __reduce__(self):
        # The read-only mapping cannot be pickled; rebuild from a plain dict instead.
        values = self.as_dict()
        return (type(self), tuple(values[name] for name in self.__dataclass_fields__))

    def as_dict(self):
        """Return the report as a plain dict (JSON-friendly except for ``event``)."""
        return {name: getattr(self, name) if name != "budget_split" else dict(self.budget_split)
                for name in self.__dataclass_fields__}


#: Tuples of Python floats made by :func:`_orders_tuple`, by ``id`` (held, so an id is not
#: reused): ``__post_init__`` takes them as they are (``tuple(map(float, ...))`` of 156
#: orders is about 12 us of every report). At most 64 are kept.
_FLOAT_TUPLES: dict = {}
_GRID_TUPLES: dict = {}


def _orders_tuple(orders):
    """``tuple(orders.tolist())`` (Python floats), built once per immutable order grid."""
    hit = _GRID_TUPLES.get(id(orders))
    if hit is not None and hit[0] is orders:
        return hit[1]
    values = tuple(orders.tolist())
    if is_immutable_orders(orders):
        if len(_GRID_TUPLES) >= 64:
            _GRID_TUPLES.clear()
            _FLOAT_TUPLES.clear()
        _GRID_TUPLES[id(orders)] = (orders, values)
        _FLOAT_TUPLES[id(values)] = values
    return values


_GAUSSIAN_NAMES = {False: "Gaussian", True: "Poisson-sampled Gaussian",
                   "with replacement": "sampled-with-replacement Gaussian"}


def _describe(event):
    """Mechanism names, distinct noise multipliers and the number of releases of a tree."""
    names, multipliers = [], []

    def add(seq, item):
        if item not in seq:
            seq.append(item)

    def walk(e, sampled):
        if isinstance(e, SelfComposedDpEvent):
            return e.count * walk(e.event, sampled)
        if isinstance(e, ComposedDpEvent):
            return sum(walk(child, sampled) for child in e.events)
        if isinstance(e, PoissonSampledDpEvent):
            return walk(e.event, True)
        if isinstance(e, SampledWithReplacementDpEvent):
            return walk(e.event, "with replacement")
        if isinstance(e, NoOpDpEvent):
            return 0
        if isinstance(e, RepeatAndSelectDpEvent):
            # One release (the best run); the runs' mechanisms are listed.
            add(names, "random-stopping selection")
            walk(e.event, sampled)
            return 1
        if isinstance(e, GaussianDpEvent):
            add(names, _GAUSSIAN_NAMES[sampled])
            add(multipliers, float(e.noise_multiplier))
        elif isinstance(e, SingleEpochTreeAggregationDpEvent):
            add(names, "tree-aggregated Gaussian")
            add(multipliers, float(e.noise_multiplier))
        elif isinstance(e, LaplaceDpEvent):
            add(names, "Laplace")
            add(multipliers, float(e.noise_multiplier))
        elif isinstance(e, EpsilonDeltaDpEvent):
            add(names, "epsilon-DP" if e.delta == 0 else "(epsilon, delta)-DP")
        elif isinstance(e, ZCDpEvent):
            add(names, "zCDP")
        elif isinstance(e, ApproximateRdpDpEvent):
            add(names, "approximate RDP")
        elif isinstance(e, NonPrivateDpEvent):
            add(names, "non-private")
        else:
            add(names, type(e).__name__)
        return 1

    releases = walk(event, False)
    return tuple(names), tuple(multipliers), int(releases)
