"""Noisy p-norm mirror descent (the inner loop of Algorithms 1/2): kernel against its twin.

One phase of Algorithm 2 at d = 100 and 1000: n_i = 5000 Poisson candidates, expected batch
50, 200 strongly convex composite steps inside a localization ball and the unit l1 ball.
"""

import math

import numpy as np
import pytest

from dpsco_core import mirror_maps as mm
from dpsco_core._kernels import _mirror as kernel
from dpsco_core.reference import mirror as twin


def _case(d):
    rng = np.random.default_rng(0)
    X = rng.choice([-1.0, 1.0], size=(5000, d))
    x_true = np.zeros(d)
    x_true[:5] = 0.18
    y = X @ x_true + rng.uniform(-0.5, 0.5, 5000)
    return X, y, np.sqrt((X * X).sum(axis=1))


def _phase(impl, case, steps=200):
    X, y, norms = case
    d = X.shape[1]
    p = mm.pnorm_exponent(d)
    c = np.zeros(d)
    return impl.md_run_dense(X, y, np.arange(X.shape[0], dtype=np.intp), 1, 0.0, norms,
                             2.5 * math.sqrt(d), c, c, p, 1.0 / (p - 1.0), 3.0, 0.5, 1.0,
                             steps, 0.01, 50.0, 0.5 * math.sqrt(d), 0.0, 3.0,
                             np.random.PCG64DXSM(0), np.empty(d), np.empty(d))


@pytest.mark.parametrize("d", [100, 1000])
def bench_md_phase_dpsco_core(benchmark, record, d):
    case = _case(d)
    record(benchmark, f"md phase d={d} T=200", "dpsco_core")
    benchmark(lambda: _phase(kernel, case))


@pytest.mark.parametrize("d", [100, 1000])
def bench_md_phase_reference(benchmark, record, d):
    case = _case(d)
    record(benchmark, f"md phase d={d} T=200", "reference")
    benchmark.pedantic(lambda: _phase(twin, case), rounds=2, iterations=1)
