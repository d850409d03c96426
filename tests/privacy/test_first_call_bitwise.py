"""Speed work on the first call of a configuration (issue 18) changes no privacy number.

The reports (and coefficients) of 30 ``dp_sgd`` / ``dp_cd`` runs (Poisson and shuffle;
zero-out, add/remove-one with ``public_n``, replace-one; epsilon 0.5 to 3; both conversions),
72 direct calibrations of the sampled Gaussian and 48 compiled ``smallest_root`` searches are
compared, ``float.hex`` for ``float.hex``, with the values main (55152f2) gave, stored in
``tests/privacy/data/first_call_golden.json``. Every memo is cleared before each case, so each
one is a first call. Regenerate (only on purpose, from a tree whose numbers are the reference):
``PYTHONPATH=<tree> python tests/privacy/test_first_call_bitwise.py --write``.

The privacy numbers are compared bitwise; DP-SGD's coefficients to 1e-12 relative. Its step
gamma / beta takes beta from ``Problem.smoothness()``, an eigenvalue computed through BLAS,
whose kernel OpenBLAS picks by CPU: on an AVX-512 machine (session 12) the SkylakeX kernel
moves beta, and so the coefficients, by an ulp (``OPENBLAS_CORETYPE=Haswell`` or ``Zen``
gives the stored bits again). No privacy number depends on it.
"""

import hashlib
import json
import math
import pathlib
import sys
import warnings

import numpy as np
import pytest

import dpsco_core as dp
from dpsco_core._kernels import _rdp
from dpsco_core.privacy import DEFAULT_RDP_ORDERS
from dpsco_core.privacy import calibration as cal
from dpsco_core.privacy import rdp

GOLDEN = pathlib.Path(__file__).parent / "data" / "first_call_golden.json"


def _clear():
    cal._sampled_gaussian_multiplier.cache_clear()
    rdp._sampled_gaussian_curve.cache_clear()
    rdp._sampled_gaussian_evaluator.cache_clear()
    from dpsco_core.solvers import _common
    _common._memo_report.cache_clear()


def _problem(loss):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((3000, 6))
    y = (np.sign(X[:, 0] + 0.3 * rng.standard_normal(3000)) if loss == "logistic"
         else X @ np.arange(6.0) + rng.standard_normal(3000))
    return dp.Problem(X, y, loss=loss, penalty=dp.L2(1e-3))


# (solver, epsilon, passes, batch_size, sampling, relation, public_n, conversion, loss)
RUNS = [
    ("sgd", e, 1.0, b, "poisson", None, None, c, "logistic")
    for e in (0.5, 1.0, 3.0) for b in (64, 256) for c in ("improved", "mironov")
] + [
    ("sgd", 2.0, 2.0, 128, "poisson", "add_or_remove_one", 3100, "improved", "logistic"),
    ("sgd", 0.5, 3.0, 32, "poisson", "add_or_remove_one", 2900, "mironov", "squared"),
    ("sgd", 1.0, 1.0, 256, "shuffle", None, None, "improved", "logistic"),
    ("sgd", 2.0, 2.0, 100, "shuffle", "replace_one", None, "mironov", "squared"),
    ("sgd", 3.0, 0.5, 500, "poisson", "zero_out", None, "improved", "squared"),
    ("sgd", 1.0, 5.0, 16, "poisson", None, None, "improved", "logistic"),
    ("sgd", 1.0, 1.0, 256, "poisson", "zero_out", None, "mironov", "squared"),
] + [
    ("cd", e, p, None, None, r, pn, c, "squared")
    for e, p in ((0.5, 2.0), (2.0, 5.0), (3.0, 1.0))
    for r, pn in (("replace_one", None), ("zero_out", None), ("add_or_remove_one", 3050))
    for c in (("mironov",) if r == "replace_one" else ("improved",))
] + [
    ("cd", 1.0, 3.0, None, None, None, None, None, "logistic"),
    ("cd", 1.0, 2.0, None, None, "zero_out", None, None, "logistic"),
]

# (q, steps, epsilon, delta, conversion)
CALIBRATIONS = [
    (q, steps, eps, delta, conv)
    for q, steps in ((1e-4, 30000), (256 / 45312, 177), (0.01, 1000), (0.05, 60), (0.3, 10),
                     (0.001, 2000))
    for eps in (0.3, 1.0, 4.0)
    for delta in (1e-5, 45312.0 ** -2)
    for conv in ("improved", "mironov")
]

# (q, steps, delta, improved, aim, start)
ROOTS = [
    (q, steps, delta, imp, aim, start)
    for q, steps in ((256 / 45312, 177.0), (0.01, 1000.0), (0.2, 40.0), (3e-5, 1e5))
    for delta in (1e-6, 1e-10)
    for imp in (True, False)
    for aim, start in ((0.5, 1.0), (2.0, 0.3), (8.0, 5.0))
]


def _hex(x):
    return float(x).hex()


def _run_case(case):
    solver, eps, passes, b, sampling, relation, public_n, conversion, loss = case
    prob = _problem(loss)
    _clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if solver == "sgd":
            res = dp.dp_sgd(prob, epsilon=eps, delta=1e-6, passes=passes, batch_size=b,
                            sampling=sampling, neighboring_relation=relation,
                            public_n=public_n, conversion=conversion, random_state=1,
                            record_history=False)
        else:
            kw = {} if relation is None else {"neighboring_relation": relation}
            if public_n is not None:
                kw["public_n"] = public_n
            res = dp.dp_cd(prob, epsilon=eps, delta=1e-6, passes=passes, random_state=1,
                           record_history=False, **kw)
    r = res.privacy
    return {"epsilon": _hex(r.epsilon), "delta": _hex(r.delta),
            "relation": str(r.neighboring_relation), "conversion": r.conversion,
            "noise_multipliers": [_hex(s) for s in r.noise_multipliers],
            "orders": None if r.orders is None else hashlib.sha256(
                ",".join(map(_hex, r.orders)).encode()).hexdigest(),
            "releases": r.releases, "coef": [_hex(c) for c in res.coef]}


def _calibration_case(case):
    q, steps, eps, delta, conv = case
    _clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            s = cal.calibrate_sampled_gaussian(target_epsilon=eps, target_delta=delta,
                                               sample_rate=q, steps=steps, conversion=conv)
        except dp.exceptions.PrivacyBudgetError:
            return "budget-error"
    return _hex(s)


def _root_case(case):
    q, steps, delta, imp, aim, start = case
    grid = np.array(DEFAULT_RDP_ORDERS)
    ints = np.ascontiguousarray(grid[grid == np.floor(grid)])
    alpha, s = _rdp.smallest_root(q, ints, steps, delta, imp, aim, 1e-9, start, 1e-3, 1e6)
    return [_hex(alpha), _hex(s)]


def _compute():
    return {"runs": [_run_case(c) for c in RUNS],
            "calibrations": [_calibration_case(c) for c in CALIBRATIONS],
            "roots": [_root_case(c) for c in ROOTS]}


@pytest.fixture(scope="module")
def golden():
    return json.loads(GOLDEN.read_text())


@pytest.mark.parametrize("i", range(len(RUNS)))
def test_reports_are_bitwise_mains(golden, i):
    got, want = _run_case(RUNS[i]), dict(golden["runs"][i])
    coef, want_coef = got.pop("coef"), want.pop("coef")
    assert got == want, RUNS[i]
    # module docstring: the coefficients go through BLAS (beta), whose kernel depends on the CPU
    np.testing.assert_allclose([float.fromhex(c) for c in coef],
                               [float.fromhex(c) for c in want_coef], rtol=1e-12, atol=0,
                               err_msg=str(RUNS[i]))


def test_calibrations_are_bitwise_mains(golden):
    got = [_calibration_case(c) for c in CALIBRATIONS]
    bad = [(c, g, w) for c, g, w in zip(CALIBRATIONS, got, golden["calibrations"]) if g != w]
    assert not bad


def test_smallest_roots_are_bitwise_mains(golden):
    got = [_root_case(c) for c in ROOTS]
    bad = [(c, g, w) for c, g, w in zip(ROOTS, got, golden["roots"]) if g != w]
    assert not bad


def test_golden_file_covers_every_case(golden):
    assert (len(golden["runs"]), len(golden["calibrations"]), len(golden["roots"])) == (
        len(RUNS), len(CALIBRATIONS), len(ROOTS))
    assert all(math.isfinite(float.fromhex(r["epsilon"])) for r in golden["runs"])


if __name__ == "__main__" and "--write" in sys.argv:
    data = _compute()
    GOLDEN.write_text("{\n" + ",\n".join(
        f"{json.dumps(k)}: [\n" + ",\n".join(json.dumps(v) for v in vals) + "\n]"
        for k, vals in data.items()) + "\n}\n")
    print("wrote", GOLDEN)
