"""Kernel ``_discrete`` (exact samplers) against its Python twin, in distribution, by design."""

import math
import pathlib
import shutil
import subprocess

import numpy as np
import pytest

from dpsco_core import mechanisms as M
from dpsco_core._kernels import _discrete as kernel
from dpsco_core._random import block_bit_generators
from dpsco_core.reference import discrete as twin

BLOCK = kernel.DISCRETE_BLOCK_SIZE


def _gens(seed, n):
    return block_bit_generators(np.random.SeedSequence(seed), -(-n // BLOCK))


@pytest.mark.parametrize("args", [("laplace", 1), ("laplace", 7), ("laplace", 1 << 40),
                                  ("gaussian", 1, 1), ("gaussian", 5, 9),
                                  ("gaussian", 1 << 29, (1 << 29) + 3)])
def test_bitwise_equal_to_twin(args):
    x = np.arange(-300, 300, dtype=np.int64)
    outs = []
    for impl in (kernel, twin):
        out = np.empty_like(x)
        fn = impl.add_discrete_laplace if args[0] == "laplace" else impl.add_discrete_gaussian
        status = fn(x, *args[1:], _gens(4, x.size), out, 1)
        outs.append((status, out.tobytes()))
    assert outs[0] == outs[1]


@pytest.mark.parametrize("temperature", [1, 3, 1000, 1 << 62])
def test_permute_and_flip_equal_to_twin(temperature):
    q = np.random.default_rng(1).integers(-50, 50, 400).astype(np.int64)
    for seed in range(20):
        assert (kernel.permute_and_flip(q, temperature, np.random.PCG64DXSM(seed))
                == twin.permute_and_flip(q, temperature, np.random.PCG64DXSM(seed)))


def _per_atom_check(samples, pmf, n_se=5.0):
    # Identity: each atom's frequency equals its probability within n_se standard errors.
    n = samples.size
    for value, p in pmf.items():
        freq = np.count_nonzero(samples == value) / n
        assert abs(freq - p) <= n_se * math.sqrt(p * (1 - p) / n) + 1e-12, (value, freq, p)


@pytest.mark.statistical
def test_discrete_laplace_exact_distribution():
    # P(y) = (1 - e^{-1/t}) / (1 + e^{-1/t}) e^{-|y|/t}  (CKS20, Definition 2).
    t, n = 2, 400_000
    out = np.empty(n, dtype=np.int64)
    assert kernel.add_discrete_laplace(np.zeros(n, dtype=np.int64), t, _gens(1, n), out, 2) == 0
    c = (1 - math.exp(-1 / t)) / (1 + math.exp(-1 / t))
    _per_atom_check(out, {y: c * math.exp(-abs(y) / t) for y in range(-8, 9)})


@pytest.mark.statistical
def test_discrete_gaussian_exact_distribution():
    # P(y) proportional to exp(-y^2 / (2 sigma^2)), sigma^2 = t m = 6.
    t, m, n = 3, 2, 400_000
    out = np.empty(n, dtype=np.int64)
    assert kernel.add_discrete_gaussian(np.zeros(n, dtype=np.int64), t, m, _gens(2, n), out,
                                        2) == 0
    weights = {y: math.exp(-y * y / 12) for y in range(-40, 41)}
    z = sum(weights.values())
    _per_atom_check(out, {y: w / z for y, w in weights.items() if abs(y) <= 8})


@pytest.mark.statistical
def test_permute_and_flip_exact_distribution():
    # Identity (McKenna and Sheldon 2020): P(i) = sum over the orders visiting i ...; for m = 3
    # compute it exactly by enumerating the 6 permutations with p_j = exp(-(q* - q_j) / T).
    q, temperature = np.array([0, 2, 3], dtype=np.int64), 2
    p = [math.exp(-(3 - v) / temperature) for v in q]
    import itertools
    probs = [0.0] * 3
    for perm in itertools.permutations(range(3)):
        reach = 1.0 / 6
        for i in perm:
            probs[i] += reach * p[i]
            reach *= 1 - p[i]
    bg = np.random.PCG64DXSM(7)
    samples = np.array([kernel.permute_and_flip(q, temperature, bg) for _ in range(60_000)])
    _per_atom_check(samples, dict(enumerate(probs)))


def test_no_transcendental_calls_by_design():
    # The kernel source imports nothing from libc.math, and the shared object has no undefined
    # exp/log/pow symbols; the twin uses only integers (mocked math functions would raise).
    src = pathlib.Path(__file__).resolve().parents[2] / "src_cython" / "_discrete.pyx"
    if src.exists():
        assert not any(line.startswith("from libc.math") for line in src.read_text().splitlines())
    nm = shutil.which("nm")
    if nm:
        syms = subprocess.run([nm, "-D", "--undefined-only", kernel.__file__],
                              capture_output=True, text=True).stdout.split()
        bad = {"exp", "log", "log1p", "expm1", "pow", "sqrt", "exp2", "log2"}
        assert not bad & {s.split("@")[0] for s in syms}


def test_twin_never_calls_float_math(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("floating-point transcendental called")
    for name in ("exp", "log", "log1p", "expm1", "pow", "sqrt"):
        monkeypatch.setattr(math, name, boom)
        monkeypatch.setattr(np, name, boom)
    x = np.zeros(50, dtype=np.int64)
    out = np.empty_like(x)
    twin.add_discrete_gaussian(x, 3, 4, _gens(0, 50), out, 1)
    twin.permute_and_flip(np.arange(30, dtype=np.int64), 5, np.random.PCG64DXSM(0))


def test_secure_mechanisms_deterministic_and_on_grid():
    x = np.linspace(-3.0, 3.0, 1001)
    for call in (lambda s: M.laplace_mechanism(x, sensitivity=1.0, epsilon=1.0, secure=True,
                                               random_state=s),
                 lambda s: M.gaussian_mechanism(x, sensitivity=1.0, epsilon=1.0, delta=1e-6,
                                                secure=True, random_state=s)):
        a, b = call(3), call(3)
        np.testing.assert_array_equal(a, b)
        assert not np.array_equal(a, call(4))
        # Outputs are multiples of the grid 2^k (k <= -21 here): mantissas are short.
        assert np.all(np.ldexp(a, 40) == np.rint(np.ldexp(a, 40)))
    r = M.report_noisy_max(x, sensitivity=1.0, epsilon=1.0, secure=True, random_state=0)
    assert r == M.report_noisy_max(x, sensitivity=1.0, epsilon=1.0, secure=True, random_state=0)


def test_secure_validation():
    with pytest.raises(TypeError, match="secure"):
        M.LaplaceMechanism(sensitivity=1.0, epsilon=1.0, secure="yes")
    with pytest.raises(ValueError, match="monotonic"):
        M.ReportNoisyMax(sensitivity=1.0, epsilon=1.0, monotonic=True, secure=True)
    with pytest.raises(ValueError, match="too large"):
        M.laplace_mechanism([1e300], sensitivity=1.0, epsilon=1.0, secure=True, random_state=0)
    with pytest.raises(ValueError, match="t must be"):
        kernel.add_discrete_laplace(np.zeros(1, np.int64), 0, _gens(0, 1), np.zeros(1, np.int64), 1)
