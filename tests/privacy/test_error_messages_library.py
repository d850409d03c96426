"""Error messages and warnings of the functional API quote no private value.

The library's rule (``dpsco_core._validation``): messages name shapes, dtypes, public
arguments and public constants, never a value, index or count read from the private data (X,
y, scores, gradients, sparse structures) nor a constant derived from it (smoothness M_j or
beta read from X, distances between private iterates). Black-box, as in
``test_error_messages.py``: a sentinel is planted in the data and must appear nowhere in the
formatted traceback (chained exceptions included) nor in any warning; where the leaked value
is computed from the data (an overflow bound, a smoothness constant), two datasets that differ
only in their values must give the same message.
"""

import traceback
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import dpsco_core as dp
from dpsco_core import mechanisms
from dpsco_core.tuning.search import tune_solver

SENTINEL = 987654.321
SENTINEL_INDEX = 987654
SENTINEL_TEXTS = ("987654", "9.87654", "9.88e+05", "9.877e+05", "SECRETX")
N, D = 40, 3
KW = dict(epsilon=1.0, delta=1e-5, random_state=0)


def _text(exc):
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


def _outcome(call):
    """(formatted traceback or None, [warning texts]) of ``call()``."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        try:
            call()
            text = None
        except Exception as exc:  # noqa: BLE001 - any error type must keep the values back
            text = _text(exc)
    return text, [str(w.message) for w in record]


def _assert_quiet(call, *, raises=True):
    text, warned = _outcome(call)
    assert (text is not None) == raises, text
    for message in [text or ""] + warned:
        leaked = [s for s in SENTINEL_TEXTS if s in message]
        assert not leaked, message
    return text, warned


def _last_line(text):
    return text.strip().splitlines()[-1]


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N, D)) * 0.3
    return X, X[:, 0].copy()


def _secret():
    """Well-formed data holding the sentinel (one feature, one label)."""
    X, y = _data()
    X[5, 1], y[3] = SENTINEL, SENTINEL
    return X, y


class _Unconvertible:
    """An array-like whose conversion fails with a message quoting its (private) content, as
    NumPy's "could not convert string to float: '...'" does."""

    def __array__(self, dtype=None, copy=None):
        raise ValueError("could not convert string to float: 'SECRETX'")


# ------------------------------------------------------------------ malformed inputs
def _malformed_sparse():
    X, _ = _data()
    cases = {}
    A = sp.csr_matrix(X)
    A.indices = A.indices.copy()
    A.indices[4] = SENTINEL_INDEX                  # a column index out of range
    cases["csr index"] = A
    A = sp.csr_matrix(X)
    A.indptr = A.indptr.copy()
    A.indptr[0] = SENTINEL_INDEX
    cases["csr indptr start"] = A
    A = sp.csr_matrix(X)
    A.indptr = A.indptr.copy()
    A.indptr[-1] = SENTINEL_INDEX                  # beyond the stored entries
    cases["csr indptr end"] = A
    A = sp.csr_matrix(X)
    A.data = np.ones(SENTINEL_INDEX)               # the number of stored entries is data
    cases["csr data length"] = A
    A = sp.coo_matrix(X)
    A.col = A.col.copy()
    A.col[4] = SENTINEL_INDEX
    cases["coo index"] = A
    A = sp.coo_matrix(X)
    A.data = np.ones(SENTINEL_INDEX)
    cases["coo data length"] = A
    return cases


@pytest.mark.parametrize("case", list(_malformed_sparse()))
def test_sparse_structure_errors_quote_no_index_or_count(case):
    _, y = _data()
    text, _ = _assert_quiet(lambda: dp.Problem(_malformed_sparse()[case], y, loss="squared"))
    assert "X." in _last_line(text)                # the failed property is still named


@pytest.mark.parametrize("where", ["Problem X", "Problem y", "gaussian_mechanism",
                                   "report_noisy_max", "grid_quantile"])
def test_third_party_conversion_messages_are_withheld(where):
    X, y = _data()
    bad = _Unconvertible()
    call = {
        "Problem X": lambda: dp.Problem(bad, y, loss="squared"),
        "Problem y": lambda: dp.Problem(X, bad, loss="squared"),
        "gaussian_mechanism": lambda: mechanisms.gaussian_mechanism(
            bad, sensitivity=1.0, epsilon=1.0, delta=1e-5),
        "report_noisy_max": lambda: mechanisms.report_noisy_max(bad, sensitivity=1.0,
                                                                  epsilon=1.0),
        "grid_quantile": lambda: mechanisms.grid_quantile(bad, np.arange(3.0), q=0.5,
                                                          n_public=2, epsilon=1.0),
    }[where]
    text, _ = _assert_quiet(call)
    assert "cannot convert" in _last_line(text) and "withheld" in _last_line(text)


def test_ragged_input_keeps_numpy_shape_diagnosis():
    _, y = _data()
    ragged = [[SENTINEL, 1.0]] + [[1.0, 2.0, 3.0]] * (N - 1)
    text, _ = _assert_quiet(lambda: dp.Problem(ragged, y, loss="squared"))
    assert "inhomogeneous" in text


def test_user_oracle_conversion_messages_are_withheld():
    from dpsco_core.mlmc._checks import oracle_value, oracle_vector

    _assert_quiet(lambda: oracle_vector(["SECRET" + "X", 1.0], "grad", (2,)))
    _assert_quiet(lambda: oracle_value("SECRET" + "X", "value"))


# ------------------------------------------- well-formed data: every entry point, sentinel
def _solver_calls():
    X, y = _secret()
    lab = np.where(np.arange(N) % 2, 1.0, -1.0)
    public = dict(bounds=(-1.0, 1.0), label_bound=1.0)
    return {
        "dp_cd": lambda: dp.dp_cd(dp.Problem(X, y, loss="squared"), passes=1, **KW),
        "dp_cd exact smoothness": lambda: dp.dp_cd(dp.Problem(X, y, loss="squared"), passes=1,
                                                   smoothness="exact", **KW),
        "dp_cd public bounds": lambda: dp.dp_cd(dp.Problem(X, y, loss="squared", **public),
                                                passes=1, **KW),
        "dp_cd add/remove": lambda: dp.dp_cd(dp.Problem(X, y, loss="squared"), passes=1,
                                             neighboring_relation="add_or_remove_one",
                                             public_n=N, **KW),
        "dp_cd_grid": lambda: dp.dp_cd_grid(dp.Problem(X, y, loss="squared"), passes=1,
                                            steps=[0.5, 1.0], clips=[1.0], **KW),
        "dp_sgd": lambda: dp.dp_sgd(dp.Problem(X, y, loss="squared"), passes=1, batch_size=8,
                                    **KW),
        "dp_ssp": lambda: dp.dp_ssp(dp.Problem(X, y, loss="squared", row_norm=1.0,
                                               label_bound=1.0), **KW),
        "dp_srgd": lambda: dp.dp_srgd(dp.Problem(X, y, loss="squared"), beta=1.0, **KW),
        "ttz_frank_wolfe": lambda: dp.ttz_frank_wolfe(dp.Problem(X, lab, loss="logistic"),
                                                      **KW),
        "vr_frank_wolfe": lambda: dp.vr_frank_wolfe(dp.Problem(X, lab, loss="logistic"), **KW),
        "noisy_mirror_descent": lambda: dp.noisy_mirror_descent(
            dp.Problem(X, lab, loss="logistic"), **KW),
        "localized_mirror_descent": lambda: dp.localized_mirror_descent(
            dp.Problem(X, lab, loss="logistic"), **KW),
        "tune_solver cd": lambda: tune_solver(dp.Problem(X, y, loss="squared", **public),
                                              epsilon=1.0, delta=1e-5, random_state=0),
        "tune_solver without bounds": lambda: tune_solver(dp.Problem(X, y, loss="squared"),
                                                          epsilon=1.0, delta=1e-5,
                                                          random_state=0),
        "logistic labels": lambda: dp.Problem(X, np.r_[SENTINEL, lab[1:]], loss="logistic"),
        "gaussian_mechanism": lambda: mechanisms.gaussian_mechanism(
            X[:, 1], sensitivity=1.0, epsilon=1.0, delta=1e-5, random_state=0),
        "report_noisy_max": lambda: mechanisms.report_noisy_max(
            X[:, 1], sensitivity=1.0, epsilon=1.0, random_state=0),
        "grid_quantile": lambda: mechanisms.grid_quantile(
            X[:, 1], np.linspace(-1.0, 1.0, 5), q=0.5, n_public=N, epsilon=1.0,
            random_state=0),
    }


@pytest.mark.parametrize("name", list(_solver_calls()))
def test_entry_points_on_data_with_a_sentinel(name):
    text, warned = _outcome(_solver_calls()[name])
    for message in [text or ""] + warned:
        assert not [s for s in SENTINEL_TEXTS if s in message], message


# ------------------------- checks failing on well-formed data: the message is data-free
def _same_message(make_call, scales):
    """The error (last line) and warnings of ``make_call(s)`` for each scale, all equal."""
    seen = []
    for s in scales:
        text, warned = _outcome(make_call(s))
        assert text is not None
        seen.append((_last_line(text), warned))
    assert all(item == seen[0] for item in seen), seen
    return seen[0][0]


def test_dp_cd_step_overflow_names_no_smoothness_constant():
    """step / M_j times the noise overflowing (a column of X near 0, M_j read from X): the
    message used to quote the product, a function of M_j."""
    X, y = _data()

    def call(scale):
        Xs = X.copy()
        Xs[:, 2] = scale * np.arange(1, N + 1)
        return lambda: dp.dp_cd(dp.Problem(Xs, y, loss="squared"), passes=1, epsilon=1e-3,
                                delta=1e-5, random_state=0)
    message = _same_message(call, [1e-150, 3e-150, 7e-151])
    assert "step / M_j" in message


def test_dp_sgd_step_overflow_names_no_beta():
    """step / beta times the noise overflowing (beta read from a tiny X): the message used to
    quote beta and the product."""
    X, y = _data()

    def call(scale):
        return lambda: dp.dp_sgd(dp.Problem(X * scale, y, loss="squared"), passes=1,
                                 batch_size=8, epsilon=1e-3, delta=1e-5, random_state=0)
    message = _same_message(call, [1e-155, 3e-156, 1e-154])
    assert "step / beta" in message


def test_estimator_prediction_overflow_names_no_entry():
    pytest.importorskip("sklearn")
    from dpsco_core.estimators import DPLasso

    X = np.random.default_rng(0).uniform(-0.01, 0.01, (N, 2))   # weights above 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = DPLasso(alpha=0.0, epsilon=np.inf, passes=2, random_state=0).fit(
            X, 100 * X[:, 0])

    def call(value):
        return lambda: model.predict(np.array([[value, 0.0], [1.0, 1.0]]))
    message = _same_message(call, [1.7e308, 9.87654321e307, 1.1e308])
    assert "overflow float64" in message


def test_resque_far_query_warning_names_no_distance():
    from dpsco_core import resque

    d = 3
    zeta = np.random.default_rng(0).normal(size=(8, d))
    c = np.zeros(d)

    def call(distance):
        return lambda: resque.resque_log_weights(np.r_[distance, 0.0, 0.0], c, 1.0, zeta)
    warned = []
    for distance in (SENTINEL / 1e5, 3.5, 12.25):
        text, w = _assert_quiet(call(distance), raises=False)
        warned.append(w)
    assert warned[0] and all(w == warned[0] for w in warned), warned
    assert "smoothing radius" in warned[0][0]


def test_ball_and_domain_errors_name_no_distance():
    """Centres and query points may be private iterates: the distance between them is not
    quoted (the public radii are)."""
    from dpsco_core.mlmc import L2Ball, TwoBallIntersection, project_two_balls
    from dpsco_core.mlmc.minmax import AffineFamily, SoftmaxGradientOracle

    far = np.array([SENTINEL, 0.0])
    _assert_quiet(lambda: TwoBallIntersection(L2Ball(1.0, np.zeros(2)), L2Ball(1.0, far), 2))
    _assert_quiet(lambda: project_two_balls(np.zeros(2), np.zeros(2), 1.0, far, 1.0))
    family = AffineFamily(np.eye(2), np.zeros(2))
    oracle = SoftmaxGradientOracle(family, 0.1, np.zeros(2))
    _assert_quiet(lambda: oracle(far, np.random.default_rng(0)))


def test_proximal_oracle_error_names_no_lambda():
    """lambda may come from a line search on the private oracle (parallel_sco's bisection):
    the MLMC proximal oracle's "epsilon is too small" used to quote (sigma / lambda)^2."""
    from dpsco_core.ball_acceleration import MLMCProximalOracle
    from dpsco_core.mlmc import L2Ball

    oracle = MLMCProximalOracle(lambda x, rng: x, lipschitz=1.0)

    def call(lam):
        return lambda: oracle(np.zeros(2), lam, 1e-3, 1e-160, L2Ball(1.0), 0)
    message = _same_message(call, [0.5, 3.0, 17.0])
    assert "epsilon is too small" in message
