"""Per-sample losses: value + derivative over 1,000,000 margins, kernel vs NumPy twin.

The kernel computes both in one pass (``loss_values_derivs``); the twin evaluates the same
branches with NumPy (masks, SIMD exp/log1p).
"""

import numpy as np
import pytest

from dpsco_core._kernels import _loss as kernel
from dpsco_core._config import effective_n_threads
from dpsco_core.reference import loss as twin

M = 1_000_000
KINDS = {"logistic": twin.LOSS_LOGISTIC, "squared": twin.LOSS_SQUARED, "huber": twin.LOSS_HUBER}


def _inputs():
    rng = np.random.default_rng(0)
    return rng.standard_normal(M) * 3.0, rng.choice([-1.0, 1.0], M)


@pytest.mark.parametrize("n_threads", [None, 1])
@pytest.mark.parametrize("loss", KINDS)
def bench_value_deriv_kernel(benchmark, record, loss, n_threads):
    z, y = _inputs()
    v, d = np.empty(M), np.empty(M)
    record(benchmark, f"loss value+deriv {loss} m=1e6",
           "dpsco_core" if n_threads is None else "dpsco_core[1 thread]")
    threads = effective_n_threads(n_threads)
    benchmark(lambda: kernel.loss_values_derivs(z, y, KINDS[loss], 1.0, v, d, threads))


@pytest.mark.parametrize("loss", KINDS)
def bench_value_deriv_reference(benchmark, record, loss):
    z, y = _inputs()
    v, d = np.empty(M), np.empty(M)
    record(benchmark, f"loss value+deriv {loss} m=1e6", "reference")
    benchmark(lambda: twin.loss_values_derivs(z, y, KINDS[loss], 1.0, v, d, 1))


def bench_value_deriv_logistic_numpy(benchmark, record):
    z, y = _inputs()
    record(benchmark, "loss value+deriv logistic m=1e6", "numpy")
    # The obvious one-liners (np.logaddexp is overflow-safe).
    benchmark(lambda: (np.logaddexp(0.0, -y * z), -y / (1.0 + np.exp(y * z))))
