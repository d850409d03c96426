"""Prox and projections: compiled kernels vs their NumPy twins and the NumPy a user would write.

Target (issue 3): l1-ball projection of a 1,000,000-vector at least 3x faster than a sort-based
NumPy version (Duchi et al. 2008).
"""

import numpy as np
import pytest

from dpsco_core import projections
from dpsco_core.penalties import L1
from dpsco_core.reference import prox as twin

D = 1_000_000


def _v():
    return np.random.default_rng(0).standard_normal(D)


def _numpy_l1_ball(v, radius):
    """The sort-based projection as usually written (Duchi et al. 2008, Figure 1)."""
    if np.abs(v).sum() <= radius:
        return v.copy()
    u = np.sort(np.abs(v))[::-1]
    css = np.cumsum(u)
    rho = np.nonzero(u * np.arange(1, v.size + 1) > css - radius)[0][-1]
    theta = (css[rho] - radius) / (rho + 1.0)
    return np.sign(v) * np.maximum(np.abs(v) - theta, 0.0)


GROUP_L1 = "project_l1_ball d=1e6 (radius = 0.1 l1 norm)"


def bench_l1_ball_dpsco_core(benchmark, record):
    v = _v()
    radius = 0.1 * np.abs(v).sum()
    record(benchmark, GROUP_L1, "dpsco_core")
    benchmark(lambda: projections.project_l1_ball(v, radius))


def bench_l1_ball_reference(benchmark, record):
    v = _v()
    radius = 0.1 * np.abs(v).sum()
    out = np.empty(D)
    record(benchmark, GROUP_L1, "reference")
    benchmark(lambda: twin.project_l1_ball(v, radius, out))


def bench_l1_ball_numpy(benchmark, record):
    v = _v()
    radius = 0.1 * np.abs(v).sum()
    record(benchmark, GROUP_L1, "numpy")
    benchmark(lambda: _numpy_l1_ball(v, radius))


GROUP_SIMPLEX = "project_simplex d=1e6"


def bench_simplex_dpsco_core(benchmark, record):
    v = _v()
    record(benchmark, GROUP_SIMPLEX, "dpsco_core")
    benchmark(lambda: projections.project_simplex(v))


def bench_simplex_reference(benchmark, record):
    v = _v()
    out = np.empty(D)
    record(benchmark, GROUP_SIMPLEX, "reference")
    benchmark(lambda: twin.project_simplex(v, 1.0, out))


GROUP_PROX = "prox L1 d=1e6"


@pytest.mark.parametrize("n_threads", [None, 1])
def bench_prox_l1_dpsco_core(benchmark, record, n_threads):
    v = _v()
    record(benchmark, GROUP_PROX, "dpsco_core" if n_threads is None else "dpsco_core[1 thread]")
    penalty = L1(0.5)
    benchmark(lambda: penalty.prox(v, 0.3, n_threads=n_threads))


def bench_prox_l1_numpy(benchmark, record):
    v = _v()
    record(benchmark, GROUP_PROX, "numpy")
    benchmark(lambda: np.sign(v) * np.maximum(np.abs(v) - 0.3 * 0.5, 0.0))


GROUP_L2 = "project_l2_ball d=1e6"


def bench_l2_ball_dpsco_core(benchmark, record):
    v = _v()
    record(benchmark, GROUP_L2, "dpsco_core")
    benchmark(lambda: projections.project_l2_ball(v, 1.0))


def bench_l2_ball_numpy(benchmark, record):
    v = _v()
    record(benchmark, GROUP_L2, "numpy")
    benchmark(lambda: v * min(1.0, 1.0 / np.linalg.norm(v)))
