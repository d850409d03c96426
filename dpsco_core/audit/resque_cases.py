r"""Black-box audits of the private ReSQue algorithms (paper 000, Section IV).

``resque_private_erm`` (Theorem 3) and ``resque_private_sco`` (Proposition 11 / Theorem 4)
state (ε, δ)-DP under **replace-one** neighbours (same n, one record changed; the accounting
amplifies by sampling with replacement, :mod:`dpsco_core.resque._private_accounting`). Every
trial here is one call of the public function on the input, so anything a run reads from the
data it is given differs between the two inputs exactly as in a real attack.

Data (:func:`resque_canary_pair`): a :class:`~dpsco_core.resque.LipschitzGLM` with one
feature, the absolute loss :math:`|a x - b|` and feature bound 1 (L = 1). Every record but
record 0 is the zero record :math:`a = 0, b = 0` (subgradient 0 everywhere); record 0, the
*canary*, is :math:`a = 1, b = +` :data:`CANARY_LABEL` in D (subgradient :math:`-1` at every
point a run queries) and :math:`a = 1, b = -` :data:`CANARY_LABEL` in D' (subgradient
:math:`+1`): the two subgradient fields differ by :math:`2L` everywhere, the worst a
replace-one neighbour can do, and nothing else in the data moves a run. The statistic is the
released coordinate ``x[0]``: a step on the canary moves it up on D and down on D', so a
threshold on it is the natural test.

Two cases:

* :func:`resque_private_case`: the whole public pipeline (``resque_private_erm`` or
  ``resque_private_sco``); the claim is the function's own report on D (the report on D'
  must be identical: the calibration reads public constants only).
* :func:`resque_call_case`: one call of Algorithm 3 (``resque_erm_ball``), the unit every
  charge of the pipeline is made of, with the claim the accountant's report of its
  :class:`~dpsco_core.resque._private_accounting.Charge`. Its index draws are the only place
  the canary enters, and with n small (``mode="heuristic"``: outside Lemma 7's T/n <= 1/60,
  the same formula, stated as not certified) a run draws the canary often, so a broken twin
  can be caught in a few hundred cheap trials; the pipeline draws it with probability about
  (gradients evaluated)/n per run (about 1% at the smallest legal n = 480), which puts a twin
  out of reach of a test-sized audit (measured: 2 runs of 400 drew the canary at all with
  ``max_iter=1``, both in a proximal call whose output the release does not depend on).

What the audits can see. The noise of each call is calibrated to the high-probability drift
bound of Lemma 5 with the constants of the proofs (1500, 6000, 13), not to the drift a run
makes: a step on the canary moves the phase average by about
:math:`2\beta w/T_i` noise standard deviations (β about 1e-3 at the claims tested here). The
honest releases are therefore far more private than their claims (the audits measure 0.00),
and only gross errors are visible: noise removed or off by orders of magnitude (the twin of
the tests computes :math:`\sigma_i = L\eta_i\beta` instead of :math:`L\eta_i/\beta`); a noise
scale off by a factor of 2 stays below every claim and is the business of the first-principles
tests (``tests/resque/test_private_erm.py``: schedules, charges recomputed, coupled runs).
"""

import warnings

import numpy as np

from .._random import child_seed_sequences
from .._validation import check_int
from ..exceptions import PrivacyLeakWarning
from .cases import AuditCase
from .solver_cases import CANARY_LABEL

__all__ = ["RESQUE_ALGORITHMS", "resque_canary_pair", "resque_private_case",
           "resque_call_case"]

#: The audited pipelines and their smallest input: resque_private_erm needs n >= 8 C_priv =
#: 480; resque_private_sco's first phase runs on n/2 >= 480 records (the canary, record 0, is
#: in that batch).
RESQUE_ALGORITHMS = {"resque_private_erm": 480, "resque_private_sco": 960}


def resque_canary_pair(n_records):
    """(D, D') as :class:`~dpsco_core.resque.LipschitzGLM`: the canary dataset and its
    worst replace-one neighbour (module docstring)."""
    from ..resque.private_data import LipschitzGLM

    n_records = check_int(n_records, "n_records", low=1)
    A = np.zeros((n_records, 1))
    b = np.zeros(n_records)
    A[0, 0], b[0] = 1.0, CANARY_LABEL
    data = LipschitzGLM(A, b, "absolute", feature_bound=1.0)
    return data, data.replace(0, [1.0], -CANARY_LABEL)


def _quiet(call):
    """``call()`` with a PrivacyLeakWarning raised (nothing here is read from the data: a
    warning would be a finding) and the TheoryWarning of heuristic epsilons above 1 off."""
    from ..exceptions import TheoryWarning

    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        warnings.simplefilter("ignore", TheoryWarning)
        return call()


def resque_private_case(algorithm, *, epsilon, delta, n_records=None, radius_bound=1.0,
                        **options):
    """Black-box audit case of ``resque_private_erm`` or ``resque_private_sco`` (replace-one).

    Parameters
    ----------
    algorithm : {"resque_private_erm", "resque_private_sco"}
        The public function audited.
    epsilon, delta : float
        Its target; the case's claim is its report on D.
    n_records : int, optional
        Size of D (default and minimum :data:`RESQUE_ALGORITHMS` ``[algorithm]``).
    radius_bound : float, default=1.0
        R.
    **options
        Passed to the function; default ``line_search="constant"`` and ``max_iter=2`` (two
        BallAccel iterations, 8 charged oracle calls; with one iteration the release is the
        ball oracle's output alone, one index draw, and the proximal calls it is charged for
        do not reach it). The claim is the report of the configuration run, whatever it is.

    Returns
    -------
    AuditCase
        One public call per trial (about 0.25 s each, most of it the β calibration, which
        depends on public arguments only); the statistic is ``x[0]``.
    """
    from .. import resque

    if algorithm not in RESQUE_ALGORITHMS:
        raise ValueError(f"algorithm must be one of {sorted(RESQUE_ALGORITHMS)}; "
                         f"got {algorithm!r}.")
    low = RESQUE_ALGORITHMS[algorithm]
    n_records = low if n_records is None else check_int(n_records, "n_records", low=low)
    run = getattr(resque, algorithm)
    kw = dict({"line_search": "constant", "max_iter": 2}, **options)
    inputs = resque_canary_pair(n_records)

    def call(data, seed):
        return _quiet(lambda: run(data, epsilon=epsilon, delta=delta, radius_bound=radius_bound,
                                  random_state=seed, **kw))

    claims = [call(data, 0) for data in inputs]
    if (claims[0].epsilon, claims[0].delta) != (claims[1].epsilon, claims[1].delta):
        raise RuntimeError(f"{algorithm}'s report differs between the neighbours "
                           f"({claims[0].epsilon!r} vs {claims[1].epsilon!r}): its "
                           "calibration reads the data.")
    if claims[0].privacy["neighboring_relation"] != "replace_one":   # pragma: no cover
        raise RuntimeError(f"{algorithm} no longer states replace-one; the pair is wrong.")

    def sampler(data, n, seed_seq):
        return np.fromiter((call(data, seq).x[0] for seq in child_seed_sequences(seed_seq, n)),
                           dtype=np.float64, count=n)

    mode = claims[0].mode
    return AuditCase(name=f"{algorithm} black-box (replace_one, canary, {mode}, n={n_records})",
                     sampler=sampler, input0=inputs[0], input1=inputs[1],
                     epsilon=claims[0].epsilon, delta=claims[0].delta)


def resque_call_case(*, beta, n_steps, n_records, call_delta, delta, radius=1e-3,
                     smoothing_radius=None, mode="heuristic"):
    r"""Audit case of ONE call of Algorithm 3 (``resque_erm_ball``, λ = 0, centre 0).

    The claim is the library's report of the call's charge: the accountant's
    :class:`~dpsco_core.privacy.report.PrivacyReport` of
    ``charge.guarantee.to_event()`` at ``delta`` (replace-one), as ``resque_private_erm``
    reports its composed charge.

    Parameters
    ----------
    beta : float
        β of the call.
    n_steps : int
        T (the call draws :math:`\hat T - 1` indices with replacement).
    n_records : int
        n, the size of D.
    call_delta : float
        The call's approximate-RDP slack δ, in (0, 1/6).
    delta : float
        The δ at which the claim's ε is stated (above the charge's slack).
    radius : float, default=1e-3
        r.
    smoothing_radius : float, optional
        ρ (default: r times the drift proof's ratio,
        :func:`~dpsco_core.resque._private_accounting.certified_radius_ratio`).
    mode : {"certified", "heuristic"}, default="heuristic"
        Passed to the call (certified raises outside Lemmas 5/7's conditions).

    Returns
    -------
    AuditCase
        One call per trial (a few ms); the statistic is ``x[0]``.
    """
    from ..privacy.events import NeighboringRelation
    from ..privacy.report import PrivacyReport
    from ..resque._private_accounting import certified_radius_ratio
    from ..resque.private_erm import resque_erm_ball

    n_steps = check_int(n_steps, "n_steps", low=2)
    if smoothing_radius is None:
        smoothing_radius = radius * certified_radius_ratio(n_steps, call_delta / 2.0)
    inputs = resque_canary_pair(n_records)
    kw = dict(radius=radius, smoothing_radius=smoothing_radius, beta=beta, n_steps=n_steps,
              delta=call_delta, mode=mode)

    def call(data, seed):
        return _quiet(lambda: resque_erm_ball(data, [0.0], random_state=seed, **kw))

    charge = call(inputs[0], 0).charge
    if charge != call(inputs[1], 0).charge:                         # pragma: no cover
        raise RuntimeError("resque_erm_ball's charge differs between the neighbours.")
    report = PrivacyReport.from_event(charge.guarantee.to_event(), delta=delta,
                                      accountant="rdp",
                                      neighboring_relation=NeighboringRelation.REPLACE_ONE,
                                      mode="certified" if charge.certified else "heuristic")

    def sampler(data, n, seed_seq):
        return np.fromiter((call(data, seq).x[0] for seq in child_seed_sequences(seed_seq, n)),
                           dtype=np.float64, count=n)

    return AuditCase(name=(f"resque_erm_ball (replace_one, canary, {report.mode}, "
                           f"n={n_records}, T={n_steps}, beta={beta:.3g})"),
                     sampler=sampler, input0=inputs[0], input1=inputs[1],
                     epsilon=report.epsilon, delta=report.delta)
