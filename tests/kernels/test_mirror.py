"""Kernel ``_mirror`` (noisy p-norm mirror descent) against its NumPy twin.

The two draw the same uniforms and normals in the same order (same batches, same noise); the
arithmetic differs in rounding only (libm against numpy's exp/log, loop sums against BLAS), so
the outputs agree to a relative 1e-9 and the batch counts exactly.
"""

import math

import numpy as np
import pytest

from dpsco_core import mirror_maps as mm
from dpsco_core._kernels import _mirror as kernel
from dpsco_core.reference import mirror as twin

# (d, l1 radius, ball radius, regularization, strong convexity, noise, p): the l1-ball
# projection binds in the cases with a small l1 radius (nested bisection exercised).
CASES = {
    "free": (20, math.inf, math.inf, 0.0, 0.0, 0.3, None),
    "localized": (50, 1.0, 0.3, 5.0, 5.0, 0.1, None),
    "l1-binds": (15, 0.05, math.inf, 0.0, 0.0, 0.3, None),
    "l1-and-ball": (9, 0.1, 0.05, 0.0, 2.0, 1.0, None),
    "euclidean": (9, 0.1, 0.05, 1.0, 2.0, 1.0, 2.0),
    "lp": (12, 0.1, math.inf, 0.0, 0.0, 1.0, 1.5),
    # Algorithm 6: X = {||x||_1.5 <= 0.1} (the last entry) with and without the ball
    "lp-ball-X": (12, math.inf, 0.05, 1.0, 2.0, 1.0, 1.5, 0.1),
    "lp-X": (10, math.inf, math.inf, 0.0, 0.0, 1.0, 1.3, 0.05),
}


def _run(impl, case, seed, steps=6):
    d, l1, ball, reg, sc, noise, p = case[:7]
    lp = case[7] if len(case) > 7 else math.inf
    rng = np.random.default_rng(seed)
    n = 300
    X = rng.choice([-1.0, 1.0], size=(n, d))
    y = 3.0 * rng.standard_normal(n)
    rows = np.arange(0, n, 2, dtype=np.intp)
    p = mm.pnorm_exponent(d) if p is None else p
    c = np.zeros(d)
    c[0] = 0.001
    norms = np.sqrt((X * X).sum(axis=1))
    for a in (X, y, rows, c, norms):
        a.flags.writeable = False
    x_out, avg = np.empty(d), np.empty(d)
    total = impl.md_run_dense(X, y, rows, 1, 0.0, norms, 1.5, c, c, p, 1.0 / (p - 1.0), reg,
                              ball, l1, steps, 0.1, 15.0, noise, 0.5, sc,
                              np.random.PCG64DXSM(seed), x_out, avg, lp)
    return total, x_out, avg


@pytest.mark.parametrize("name", CASES)
def test_matches_twin(name, global_seed):
    case = CASES[name]
    ref = _run(twin, case, global_seed)
    got = _run(kernel, case, global_seed)
    assert got[0] == ref[0]
    np.testing.assert_allclose(got[1], ref[1], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got[2], ref[2], rtol=1e-9, atol=1e-12)
    d, l1 = case[0], case[1]
    if math.isfinite(l1):
        assert np.abs(got[1]).sum() <= l1 * (1 + 1e-12)
    if len(case) > 7:
        assert np.sum(np.abs(got[1]) ** case[6]) ** (1 / case[6]) <= case[7] * (1 + 1e-12)


def test_deterministic_and_rejects_bad_shapes(global_seed):
    a = _run(kernel, CASES["localized"], global_seed)
    b = _run(kernel, CASES["localized"], global_seed)
    assert a[0] == b[0] and np.array_equal(a[1], b[1]) and np.array_equal(a[2], b[2])
    X = np.ones((3, 2))
    with pytest.raises(ValueError, match="one entry per feature"):
        kernel.md_run_dense(X, np.ones(3), np.arange(3, dtype=np.intp), 1, 0.0, np.ones(3),
                            1.0, np.zeros(3), np.zeros(2), 1.5, 2.0, 0.0, math.inf, math.inf,
                            1, 0.5, 1.0, 0.0, 0.1, 0.0, np.random.PCG64DXSM(0), np.empty(2),
                            np.empty(2))
    with pytest.raises(ValueError, match="rows must index"):
        kernel.md_run_dense(X, np.ones(3), np.array([3], dtype=np.intp), 1, 0.0, np.ones(3),
                            1.0, np.zeros(2), np.zeros(2), 1.5, 2.0, 0.0, math.inf, math.inf,
                            1, 0.5, 1.0, 0.0, 0.1, 0.0, np.random.PCG64DXSM(0), np.empty(2),
                            np.empty(2))
