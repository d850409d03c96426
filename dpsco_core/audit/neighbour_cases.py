r"""Black-box audits of ``dp_cd`` and ``dp_sgd`` under each neighbouring relation (issue 15).

Unlike :mod:`~dpsco_core.audit.solver_cases`, which replays a solver's calibration through its
kernel, these cases call the **public solver** on both neighbouring datasets for every batch
of trials, so that anything the solver derives from the dataset it is given (its normaliser,
its noise scale, its counts) differs between the two inputs exactly as in a real attack. This
is what catches a normaliser read from the private data: under add/remove-one, dividing by the
dataset's own n moves the release between D and D + outlier by up to :math:`2C/(n + 1)`,
twice the :math:`C/n` the noise was calibrated to (issue 15 measured a lower bound of 1.15 for
a claimed 1 with :math:`10^6 + 10^6` runs; the exact epsilon of that release is 1.61).

The neighbours, per relation (an *extreme outlier* is a record whose per-sample term sits at
the clipping bound with the opposite sign of every other record's):

* ``"add_or_remove_one"``: D and D plus the outlier (``public_n`` is the size of D);
* ``"replace_one"``: a record of D replaced by the outlier;
* ``"zero_out"``: a record of D replaced by the zero record (it contributes nothing).

The statistic is the released coordinate (DP-CD: the first coordinate after one cyclic
update; DP-SGD: one coordinate per independent trial, see :func:`dp_sgd_relation_case`),
which for these pairs is the likelihood-ratio statistic of the Gaussian release.
"""

import numpy as np
import scipy.sparse as sp

from .._random import child_seed_sequences
from .._validation import check_int
from .cases import AuditCase
from .solver_cases import CANARY_LABEL

__all__ = ["RELATIONS", "dp_cd_relation_case", "dp_sgd_relation_case"]

#: The relations of the audits, and the sampling DP-SGD uses under each.
RELATIONS = {"add_or_remove_one": "poisson", "zero_out": "poisson", "replace_one": "shuffle"}

#: Trials per ``dp_cd_grid`` call (one run per seed) and per ``dp_sgd`` call (one coordinate
#: per trial): bounds the memory of one call.
_CD_CHUNK = 1 << 15
_SGD_CHUNK = 4096


def worst_neighbour(X, y, relation, outlier_x, outlier_y):
    """D' of D = (X, y) under ``relation``: the outlier record added (add/remove-one), record 0
    replaced by it (replace-one), or record 0 zeroed (zero-out). Returns ``(X1, y1)``."""
    if relation == "add_or_remove_one":
        return np.vstack([X, outlier_x]), np.append(y, outlier_y)
    if relation not in ("replace_one", "zero_out"):
        raise ValueError(f"relation must be one of {sorted(RELATIONS)}; got {relation!r}.")
    X1, y1 = X.copy(), y.copy()
    if relation == "replace_one":
        X1[0], y1[0] = outlier_x, outlier_y
    else:
        X1[0], y1[0] = 0.0, 0.0
    return X1, y1


def _dp_cd_inputs(relation, n_records, n_features):
    """D (every record at -C_j) and its worst neighbour under ``relation``."""
    X = np.ones((n_records, n_features))
    y = np.full(n_records, CANARY_LABEL)          # x_ij l'(0, y) = -2 y: clipped to -C_j
    return (X, y), worst_neighbour(X, y, relation, np.ones(n_features), -CANARY_LABEL)


def dp_cd_relation_case(relation, *, epsilon, delta, n_records=20, n_features=2, clip=1.0,
                        calibration="rdp"):
    """Black-box DP-CD (one release) under ``relation`` with an outlier neighbour.

    Each batch of trials is one call of the public ``dp_cd_grid`` on the input (one run per
    seed; run r equals ``dp_cd`` with that run's seed sequence), with ``n_outer=1``,
    ``n_inner=1``, cyclic selection, no penalty, step 1 and public smoothness constants (ones,
    so that clips do not depend on the data; the data-dependent constants are audited
    elsewhere). Under add/remove-one ``public_n`` is ``n_records``. The statistic is the
    released first coordinate, :math:`-(\\frac1m \\sum_i \\mathrm{clip}(\\cdot) + \\sigma_0 Z)`.
    The claim is the solver's own report.

    Parameters
    ----------
    relation : {"replace_one", "zero_out", "add_or_remove_one"}
        The neighbouring relation audited.
    epsilon, delta : float
        The solver's target.
    n_records : int, default=20
        Records of the input (and ``public_n`` under add/remove-one).
    n_features : int, default=2
        Columns.
    clip : float, default=1.0
        Clip scale C.
    calibration : {"rdp", "gdp", "theorem"}, default="rdp"
        The solver's calibration (``"gdp"``: the exact Gaussian-DP one, whose single release
        is the analytic Gaussian mechanism, the tightest claim to audit).

    Returns
    -------
    AuditCase
    """
    from ..problems import Problem
    from ..solvers.dp_cd import dp_cd_grid

    n_records = check_int(n_records, "n_records", low=2)
    n_features = check_int(n_features, "n_features", low=1)
    inputs = _dp_cd_inputs(relation, n_records, n_features)
    public_n = n_records if relation == "add_or_remove_one" else None
    kw = dict(epsilon=epsilon, delta=delta, n_outer=1, n_inner=1, average=False,
              selection="cyclic", smoothness=np.ones(n_features), steps=[1.0], clips=[clip],
              neighboring_relation=relation, public_n=public_n, n_threads=1, evaluate=False,
              calibration=calibration)

    def sampler(data, n, seed_seq):
        problem = Problem(*data, loss="squared")
        chunks = range(0, n, _CD_CHUNK)
        out = np.empty(n)
        for lo, seq in zip(chunks, child_seed_sequences(seed_seq, len(chunks))):
            k = min(_CD_CHUNK, n - lo)
            grid = dp_cd_grid(problem, n_seeds=k, random_state=seq, **kw)
            out[lo:lo + k] = grid.coef[0, 0, :, 0]
        return out

    report = dp_cd_grid(Problem(*inputs[0], loss="squared"), n_seeds=1, random_state=0,
                        **kw).privacy
    name = f"dp_cd black-box ({relation}, outlier" + (
        ")" if calibration == "rdp" else f", calibration={calibration!r})")
    return AuditCase(name=name, sampler=sampler,
                     input0=inputs[0], input1=inputs[1], epsilon=report.epsilon,
                     delta=report.delta)


def _dp_sgd_problem(relation, k, present):
    """Two one-hot records per coordinate (record r and background record k + r, both at
    -C e_r), and the neighbour: record r changed by ``relation`` (or an outlier added). The
    background keeps X non-zero under zero-out (DP-SGD's step needs beta > 0)."""
    from ..problems import Problem

    eye = sp.identity(k, format="csr", dtype=np.float64)
    X = sp.vstack([eye, eye], format="csr")
    y = np.full(2 * k, CANARY_LABEL)               # x l'(0, y) = -2 y: clipped to -C e_r
    if present and relation == "add_or_remove_one":        # one outlier per coordinate
        X, y = sp.vstack([X, eye], format="csr"), np.append(y, np.full(k, -CANARY_LABEL))
    elif present and relation == "replace_one":            # record r -> its outlier
        y[:k] = -CANARY_LABEL
    elif present:                                          # zero-out: record r -> 0
        X = sp.vstack([sp.csr_matrix((k, k), dtype=np.float64), eye], format="csr")
        y[:k] = 0.0
    return Problem(X, y, loss="squared")


def dp_sgd_relation_case(relation, *, epsilon, delta, sample_rate=1.0, passes=1.0, clip=1.0):
    """Black-box DP-SGD under ``relation`` with an outlier neighbour, many trials per call.

    Poisson sampling under add/remove-one and zero-out, one shuffled full batch per epoch
    under replace-one (:data:`RELATIONS`). Each batch of k trials is one call of the public
    ``dp_sgd`` on a k-feature problem whose record r is :math:`e_r` (CSR): with per-sample
    clipping by the record's norm, independent Poisson membership and independent noise per
    coordinate, coordinate r of the output depends only on the records of coordinate r, so
    the k coordinates are k independent runs of the one-record mechanism, as long as the
    normaliser and the step are the same on both inputs. That is exactly the property under
    test: a normaliser read from the data (``q n`` with the private n) differs between the
    inputs and shows up. Under add/remove-one the neighbour holds one outlier per coordinate
    and both inputs pass ``public_n = 2 k`` (the size of D). The statistic is coordinate r of
    the last iterate
    divided by the run's step :math:`\\eta = \\gamma / \\beta` (``stats["step"]``; the
    data-dependent :math:`\\beta` is audited elsewhere): the released noisy mean gradients.

    Parameters
    ----------
    relation : {"replace_one", "zero_out", "add_or_remove_one"}
        The neighbouring relation audited.
    epsilon, delta : float
        The solver's target.
    sample_rate : float, default=1.0
        Poisson rate q (shuffled batches under replace-one).
    passes : float, default=1.0
        Data passes.
    clip : float, default=1.0
        Per-sample clip C.

    Returns
    -------
    AuditCase
    """
    from ..solvers.dp_sgd import dp_sgd

    sampling = RELATIONS[relation]

    def run(present, k, seq, eps=epsilon):
        problem = _dp_sgd_problem(relation, k, present)
        kw = dict(sampling=sampling, neighboring_relation=relation, clip=clip, passes=passes,
                  n_threads=1, record_history=False)
        if sampling == "poisson":
            kw["sample_rate"] = sample_rate
        else:
            kw["batch_size"] = problem.n_samples
        if relation == "add_or_remove_one":
            kw["public_n"] = 2 * k
        return dp_sgd(problem, epsilon=eps, delta=delta, random_state=seq, **kw)

    def sampler(present, n, seed_seq):
        chunks = range(0, n, _SGD_CHUNK)
        out = np.empty(n)
        for lo, seq in zip(chunks, child_seed_sequences(seed_seq, len(chunks))):
            k = min(_SGD_CHUNK, n - lo)
            res = run(present, k, seq)
            out[lo:lo + k] = res.coef / res.stats["step"]
        return out

    report = run(False, 4, 0).privacy
    return AuditCase(name=f"dp_sgd black-box ({relation}, {sampling}, outlier)",
                     sampler=sampler, input0=False, input1=True, epsilon=report.epsilon,
                     delta=report.delta)
