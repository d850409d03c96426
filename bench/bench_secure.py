"""Floating-point-safe (exact) samplers: dpsco-core ``secure=True`` vs OpenDP.

Same guarantee: both sample exactly (integer arithmetic, no floating-point sampling) and are
epsilon-DP for the same epsilon. OpenDP's ``make_noisy_max`` (max-divergence, exponential
noise = permute-and-flip's distribution) and ``make_laplace`` on float vectors (discrete Laplace
on a 2^k grid) against ``report_noisy_max(..., secure=True)`` (exact permute-and-flip on a grid)
and ``laplace_mechanism(..., secure=True)`` (exact discrete Laplace on a grid).
"""

import numpy as np
import pytest

from dpsco_core import mechanisms

SCALE = 2.0   # 2 sensitivity / epsilon with sensitivity 1, epsilon 1


def _scores(m):
    return np.random.default_rng(0).standard_normal(m)


def bench_secure_rnm_100k_dpsco_core(benchmark, record):
    scores = _scores(100_000)
    rnm = mechanisms.ReportNoisyMax(sensitivity=1.0, epsilon=1.0, secure=True)
    record(benchmark, "secure noisy max m=1e5", "dpsco_core")
    gen = np.random.default_rng(1)
    benchmark(lambda: rnm(scores, random_state=gen))


def bench_secure_rnm_100k_opendp(benchmark, record):
    dp = pytest.importorskip("opendp.prelude")
    dp.enable_features("contrib")
    meas = dp.m.make_noisy_max(dp.vector_domain(dp.atom_domain(T=float, nan=False)),
                               dp.linf_distance(T=float), dp.max_divergence(), scale=SCALE)
    record(benchmark, "secure noisy max m=1e5", "opendp")
    values = _scores(100_000).tolist()
    benchmark(lambda: meas(values))


def bench_secure_laplace_100k_dpsco_core(benchmark, record):
    x = _scores(100_000)
    mech = mechanisms.LaplaceMechanism(sensitivity=1.0, epsilon=1.0, secure=True)
    record(benchmark, "secure laplace d=1e5", "dpsco_core")
    gen = np.random.default_rng(1)
    benchmark(lambda: mech(x, random_state=gen))


def bench_secure_laplace_100k_opendp(benchmark, record):
    dp = pytest.importorskip("opendp.prelude")
    dp.enable_features("contrib")
    meas = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=float, nan=False)),
                             dp.l1_distance(T=float), scale=1.0)
    record(benchmark, "secure laplace d=1e5", "opendp")
    values = _scores(100_000).tolist()
    benchmark(lambda: meas(values))


# -- what the exact default costs: the standalone mechanisms, exact (default) vs floating point
# (secure=False), same (epsilon, delta), one run. Ratio > 1 in the table's last column of the
# float rows would mean the float path is slower; below 1 it is the float path's share of the
# exact time (exact / float = 1 / ratio).

_D = 100_000


def _mechanism(kind, secure):
    if kind == "laplace":
        return mechanisms.LaplaceMechanism(sensitivity=1.0, epsilon=1.0, secure=secure)
    return mechanisms.GaussianMechanism(sensitivity=1.0, epsilon=1.0, delta=1e-5, secure=secure)


@pytest.mark.parametrize("kind", ["laplace", "gaussian"])
@pytest.mark.parametrize("secure", [True, False], ids=["exact", "float"])
@pytest.mark.parametrize("threads", [None, 1], ids=["all", "1thread"])
def bench_mechanism_exact_vs_float(benchmark, record, kind, secure, threads):
    mech = _mechanism(kind, secure)
    impl = "dpsco_core" if secure else "dpsco_core[secure=False]"
    label = "all threads" if threads is None else "1 thread"
    record(benchmark, f"{kind} mechanism d=1e5 ({label})", impl)
    x = _scores(_D)
    gen = np.random.default_rng(2)
    benchmark(lambda: mech(x, random_state=gen, n_threads=threads))
