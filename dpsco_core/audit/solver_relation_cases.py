r"""Black-box audits of every other private solver under every relation it offers (issue 15).

:mod:`~dpsco_core.audit.neighbour_cases` audits ``dp_cd`` and ``dp_sgd``; this module does the
same for the Frank-Wolfe solvers (``ttz_frank_wolfe``, the whole ``vr_frank_wolfe``,
``projected_dp_sgd_l1``), the mirror-descent solvers (``noisy_mirror_descent``,
``localized_mirror_descent``), the single-epoch solvers (``dp_srgd`` and its baselines
``dp_sgd_single_epoch``, ``accelerated_dp_sgd``, ``dp_srg``) and ``mlmc_dp_sco``. Every trial
is one call of the **public solver** on the input (one seed sequence per trial), so anything a
solver derives from the dataset it is given (a normaliser, a noise scale, a count, a clip)
differs between the two inputs exactly as in a real attack.

Data (one feature by default; every constant the solver needs, clip, Lipschitz bound,
smoothness, steps, batch, is passed explicitly, so nothing is read from the data):

* D: ``n_records`` rows; row 0 is the *canary* :math:`a = 1, y = +` :data:`CANARY_LABEL`
  (its per-sample gradient at every iterate a short run reaches is clipped to the bound,
  pointing to :math:`+e_0` after the minus of a descent step), and the other rows are zero
  records (:math:`a = 0, y = 0`: gradient 0 everywhere), so that the only thing a run sees
  of the data is the canary;
* D', per relation: ``"replace_one"``: the canary replaced by the *outlier*
  :math:`a = 1, y = -` :data:`CANARY_LABEL` (its clipped gradient has the opposite sign);
  ``"zero_out"``: the canary replaced by the zero record; ``"add_or_remove_one"``: D plus the
  outlier, with ``public_n = n_records`` on both inputs.

The statistic is the released first coordinate. For the short runs used here (one release
where the solver allows it) it is a monotone function of the noisy gradient (or of the
vertex selected), so a threshold on it is the likelihood-ratio test.

A case's claim is the solver's own report on D (and the report on D' must be identical: the
calibration reads public constants only). ``run_epsilon`` builds the broken twin of the power
tests: the solver run at a larger epsilon than the claim (too little noise), which the audit
must refute.

Each trial costs a full solver call (about 1 to 10 ms on these tiny problems): keep
``n_trials`` in the hundreds.
"""

import warnings

import numpy as np

from .._random import child_seed_sequences
from .._validation import check_int
from ..exceptions import PrivacyLeakWarning
from .cases import AuditCase
from .solver_cases import CANARY_LABEL
from .neighbour_cases import worst_neighbour

__all__ = ["SOLVER_RELATIONS", "solver_relation_case", "canary_pair"]


def canary_pair(relation, n_records=20, n_features=1):
    """(D, D') as ``(X, y)`` tuples: the canary dataset and its worst neighbour (module doc)."""
    n_records = check_int(n_records, "n_records", low=1)
    n_features = check_int(n_features, "n_features", low=1)
    X = np.zeros((n_records, n_features))
    y = np.zeros(n_records)
    X[0], y[0] = 1.0, CANARY_LABEL
    return (X, y), worst_neighbour(X, y, relation, np.ones(n_features), -CANARY_LABEL)


# ------------------------------------------------------------------------ the solver calls
# run(problem, seed, epsilon, relation, n_records, delta) -> Result: one public call. Only
# public constants are passed (n_records, the size of D, is the public count); one release
# wherever the solver allows it (the single-epoch solvers run T = ``rounds`` rounds, 1 by
# default; ``rounds`` is ignored by the other solvers).

def _ttz(problem, seed, eps, relation, n_records, delta, rounds=1):
    from ..solvers.frank_wolfe import ttz_frank_wolfe
    return ttz_frank_wolfe(problem, epsilon=eps, delta=delta, radius=1.0, lipschitz=1.0,
                           n_iter=1, random_state=seed, n_threads=1)


def _vr_fw(problem, seed, eps, relation, n_records, delta, rounds=1):
    from ..solvers.frank_wolfe import vr_frank_wolfe
    # b = 2/3 n: the root batch and its right child (b/2) use every record (T = 1, K = 2).
    return vr_frank_wolfe(problem, epsilon=eps, delta=delta, radius=1.0, lipschitz=1.0,
                          batch=(2 * n_records) // 3, n_phases=1, random_state=seed,
                          n_threads=1, record_history=False)


def _public_n(relation, n_records):
    return n_records if relation == "add_or_remove_one" else None


def _l1_sgd(problem, seed, eps, relation, n_records, delta, rounds=1):
    from ..solvers.frank_wolfe import projected_dp_sgd_l1
    # Rate q = B / m = 1 and one epoch: one Gaussian release (no amplification to hide behind).
    return projected_dp_sgd_l1(problem, epsilon=eps, delta=delta, radius=1e6, clip=1.0,
                               epochs=1.0, batch_size=n_records, step=1.0,
                               neighboring_relation=relation,
                               public_n=_public_n(relation, n_records), random_state=seed,
                               n_threads=1)


def _nmd(problem, seed, eps, relation, n_records, delta, rounds=1):
    from ..solvers.mirror_descent import noisy_mirror_descent
    return noisy_mirror_descent(problem, epsilon=eps, delta=delta, radius=1e6, lipschitz=1.0,
                                batch_size=n_records, steps=1, step=1.0, clip=1.0,
                                neighboring_relation=relation,
                                public_n=_public_n(relation, n_records), random_state=seed)


def _lmd(problem, seed, eps, relation, n_records, delta, rounds=1):
    from ..solvers.mirror_descent import localized_mirror_descent
    # n_min = n / 2: one phase on about half the records, a few Poisson-sampled steps.
    return localized_mirror_descent(problem, epsilon=eps, delta=delta, radius=1.0,
                                    lipschitz=1.0, clip=1.0, n_min=n_records // 2, max_steps=2,
                                    neighboring_relation=relation,
                                    public_n=_public_n(relation, n_records), random_state=seed)


def _single_epoch(name):
    def run(problem, seed, eps, relation, n_records, delta, rounds=1):
        from ..solvers import srgd_baselines
        from ..solvers.dp_srgd import dp_srgd
        solver = dp_srgd if name == "dp_srgd" else getattr(srgd_baselines, name)
        # B = n / rounds; rounds = 1 (default): one release of the clipped batch mean (one
        # tree leaf). More rounds: the canary is in one batch of the secret permutation.
        kw = {"average": False} if name == "dp_sgd_single_epoch" else {}
        return solver(problem, epsilon=eps, delta=delta, beta=1.0,
                      batch_size=n_records // rounds,
                      clip=1.0, neighboring_relation=relation, random_state=seed, n_threads=1,
                      record_history=False, **kw)
    return run


def _mlmc(problem, seed, eps, relation, n_records, delta, rounds=1):
    from ..mlmc.dp_sco import mlmc_dp_sco
    # One phase; clip_factor 0.1 puts the copy clip r below the canary's pull G / mu, so a
    # copy that reads the canary sits on the clip ball (its full 2 r sensitivity). 32 copies:
    # with levels="paper" 7/8 of copies read nothing, so with 8 copies a third of the runs
    # would read no record at all.
    return mlmc_dp_sco(problem, epsilon=eps, delta=delta, radius=1e3, lipschitz=1.0,
                       n_phases=1, step=1.0, clip_factor=0.1, n_copies=32,
                       neighboring_relation=relation, random_state=seed, n_threads=1,
                       record_history=False)


#: solver name -> (relations it offers, delta of the case, run function).
SOLVER_RELATIONS = {
    "ttz_frank_wolfe": (("replace_one",), None, _ttz),
    "vr_frank_wolfe": (("replace_one",), None, _vr_fw),
    "projected_dp_sgd_l1": (("zero_out", "add_or_remove_one"), 1e-5, _l1_sgd),
    "noisy_mirror_descent": (("zero_out", "add_or_remove_one"), 1e-5, _nmd),
    "localized_mirror_descent": (("zero_out", "add_or_remove_one"), 1e-5, _lmd),
    "dp_srgd": (("zero_out", "replace_one"), 1e-5, _single_epoch("dp_srgd")),
    "dp_sgd_single_epoch": (("zero_out", "replace_one"), 1e-5,
                            _single_epoch("dp_sgd_single_epoch")),
    "accelerated_dp_sgd": (("zero_out", "replace_one"), 1e-5,
                           _single_epoch("accelerated_dp_sgd")),
    "dp_srg": (("zero_out", "replace_one"), 1e-5, _single_epoch("dp_srg")),
    "mlmc_dp_sco": (("replace_one", "zero_out"), 1e-5, _mlmc),
}


_DEFAULT = object()


def solver_relation_case(solver, relation, *, epsilon, run_epsilon=None, delta=_DEFAULT,
                         rounds=1, n_records=12, n_features=1):
    """Black-box audit case of ``solver`` (a key of :data:`SOLVER_RELATIONS`) under ``relation``.

    Parameters
    ----------
    solver : str
        The public solver's name.
    relation : str
        One of the relations the solver offers (``SOLVER_RELATIONS[solver][0]``).
    epsilon : float
        The budget of the claim: the case's (epsilon, delta) is the solver's report at it.
    run_epsilon : float, optional
        The budget the sampler's runs use (default ``epsilon``). A larger value is the broken
        twin: too little noise for the claim, which the audit must refute.
    delta : float or None, optional
        The solver's ``delta`` (default: the table's, ``SOLVER_RELATIONS[solver][1]``; None
        is pure DP for the Frank-Wolfe solvers, which also take a float for their
        (epsilon, delta) modes).
    rounds : int, default=1
        Rounds T of the single-epoch solvers (batch ``n_records // rounds``); 4 exercises
        the tree of ``dp_srgd`` and ``dp_srg`` over several leaves. Ignored by the others.
    n_records, n_features : int
        Size of D (module docstring).

    Returns
    -------
    AuditCase
    """
    from ..problems import Problem

    if solver not in SOLVER_RELATIONS:
        raise ValueError(f"solver must be one of {sorted(SOLVER_RELATIONS)}; got {solver!r}.")
    relations, table_delta, run = SOLVER_RELATIONS[solver]
    delta = table_delta if delta is _DEFAULT else delta
    if relation not in relations:
        raise ValueError(f"{solver} offers {relations}; got {relation!r}.")
    n_records = check_int(n_records, "n_records", low=4)
    rounds = check_int(rounds, "rounds", low=1, high=n_records)
    run_epsilon = epsilon if run_epsilon is None else run_epsilon
    data = canary_pair(relation, n_records, n_features)
    inputs = [Problem(X, y, loss="squared") for X, y in data]

    def call(problem, seed, eps):
        with warnings.catch_warnings():
            # Nothing here is read from the data; a warning would be a finding, not noise.
            warnings.simplefilter("error", PrivacyLeakWarning)
            return run(problem, seed, eps, relation, n_records, delta, rounds)

    claims = [call(p, 0, epsilon).privacy for p in inputs]
    if (claims[0].epsilon, claims[0].delta) != (claims[1].epsilon, claims[1].delta):
        raise RuntimeError(f"{solver}'s report differs between the neighbours "
                           f"({claims[0].epsilon!r} vs {claims[1].epsilon!r}): its "
                           "calibration reads the data.")

    def sampler(problem, n, seed_seq):
        out = np.empty(n)
        for i, seq in enumerate(child_seed_sequences(seed_seq, n)):
            out[i] = call(problem, seq, run_epsilon).coef[0]
        return out

    tag = "" if rounds == 1 else f", {rounds} rounds"
    tag += "" if run_epsilon == epsilon else f", run at eps={run_epsilon:g}"
    return AuditCase(name=f"{solver} black-box ({relation}, canary{tag})", sampler=sampler,
                     input0=inputs[0], input1=inputs[1], epsilon=claims[0].epsilon,
                     delta=claims[0].delta)
