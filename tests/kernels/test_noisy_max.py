"""Kernel ``_noisy_max`` against its NumPy twin, across thread counts, and in distribution."""

import numpy as np
import pytest
from scipy import integrate, stats

from dpsco_core._kernels import _noisy_max as kernel
from dpsco_core._random import block_bit_generators
from dpsco_core.reference import noisy_max as twin

KINDS = {"laplace": kernel.LAPLACE, "gumbel": kernel.GUMBEL, "exponential": kernel.EXPONENTIAL}
BLOCK = kernel.NOISY_MAX_BLOCK_SIZE


def _gens(seed, m):
    return block_bit_generators(np.random.SeedSequence(seed), -(-m // BLOCK))


def _run(impl, scores, scale, kind, seed, n_threads=1):
    return impl.report_noisy_max(scores, scale, kind, _gens(seed, scores.size), n_threads)


def test_constants_match_twin():
    assert twin.BLOCK_SIZE == BLOCK
    assert (twin.LAPLACE, twin.GUMBEL, twin.EXPONENTIAL) == (kernel.LAPLACE, kernel.GUMBEL,
                                                             kernel.EXPONENTIAL)


@pytest.mark.parametrize("kind", KINDS.values(), ids=KINDS.keys())
def test_bitwise_equal_to_twin(kind, global_seed):
    # The kernel skips the exact variate of candidates that cannot win (a bound with a rounding
    # margin); the twin draws them all. Adversarial ranges: tiny and huge scales, large offsets,
    # integer scores (ties), several blocks.
    rng = np.random.default_rng(global_seed)
    for trial in range(60):
        m = int(rng.integers(1, 3 * BLOCK))
        scores = rng.standard_normal(m) * rng.choice([1e-9, 1e-2, 1.0, 1e2, 1e12])
        scores += rng.choice([0.0, 1e6, -1e300])
        if trial % 5 == 0:
            scores = np.round(scores)
        scale = float(rng.choice([1e-9, 1e-3, 0.1, 1.0, 10.0, 1e3, 1e12]))
        assert _run(kernel, scores, scale, kind, trial) == _run(twin, scores, scale, kind, trial)


@pytest.mark.parametrize("kind", KINDS.values(), ids=KINDS.keys())
def test_same_result_for_any_thread_count(kind):
    scores = np.random.default_rng(0).standard_normal(5 * BLOCK + 17)
    results = {_run(kernel, scores, 0.5, kind, 42, n_threads=t) for t in (1, 2, 4)}
    assert len(results) == 1


def test_read_only_input_is_accepted_and_unchanged():
    scores = np.linspace(-1.0, 1.0, 1000)
    scores.flags.writeable = False
    before = scores.copy()
    index, value = _run(kernel, scores, 0.1, kernel.LAPLACE, 1)
    assert 0 <= index < scores.size and np.isfinite(value)
    np.testing.assert_array_equal(scores, before)


def test_noiseless_limit_is_argmax():
    scores = np.array([0.0, 5.0, 1.0, 4.999])
    for kind in KINDS.values():
        assert _run(kernel, scores, 1e-12, kind, 3)[0] == 1


def test_bad_kernel_arguments():
    scores = np.zeros(10)
    with pytest.raises(ValueError, match="kind"):
        kernel.report_noisy_max(scores, 1.0, 99, _gens(0, 10), 1)
    with pytest.raises(ValueError, match="bit generators"):
        kernel.report_noisy_max(scores, 1.0, kernel.LAPLACE, [], 1)
    with pytest.raises(ValueError, match="empty"):
        kernel.report_noisy_max(np.zeros(0), 1.0, kernel.LAPLACE, [], 1)


def _selection_probabilities(scores, scale, kind):
    """P(argmax = i) = int f(x - s_i) prod_{j != i} F(x - s_j) dx, by quadrature."""
    dist = {kernel.LAPLACE: stats.laplace, kernel.GUMBEL: stats.gumbel_r,
            kernel.EXPONENTIAL: stats.expon}[kind](scale=scale)
    probs = []
    for i, s_i in enumerate(scores):
        others = np.delete(scores, i)

        def integrand(x):
            return dist.pdf(x - s_i) * np.prod(dist.cdf(x - others))

        lo = s_i + dist.ppf(1e-13)
        hi = s_i + dist.isf(1e-13)
        probs.append(integrate.quad(integrand, lo, hi, limit=200, points=list(scores))[0])
    return np.array(probs)


@pytest.mark.statistical
@pytest.mark.parametrize("kind", KINDS.values(), ids=KINDS.keys())
def test_selection_distribution(kind):
    # Identity: the selection frequencies equal the exact argmax probabilities (quadrature;
    # for Gumbel this is softmax(s / scale), the exponential mechanism). Tolerance: 4.5
    # standard errors per candidate over N draws.
    scores = np.array([0.0, 0.3, 1.0, -0.5, 0.9])
    scale = 0.7
    exact = _selection_probabilities(scores, scale, kind)
    assert exact.sum() == pytest.approx(1.0, abs=1e-6)
    if kind == kernel.GUMBEL:
        softmax = np.exp(scores / scale) / np.exp(scores / scale).sum()
        np.testing.assert_allclose(exact, softmax, rtol=1e-6)
    n_draws = 20000
    counts = np.zeros(scores.size)
    root = np.random.SeedSequence(2026)
    for child in root.spawn(n_draws):
        counts[kernel.report_noisy_max(scores, scale, kind, block_bit_generators(child, 1),
                                       1)[0]] += 1
    freq = counts / n_draws
    se = np.sqrt(exact * (1 - exact) / n_draws)
    assert np.all(np.abs(freq - exact) <= 4.5 * se), (freq, exact)


@pytest.mark.parametrize("kind", KINDS.values(), ids=KINDS.keys())
def test_no_index_selected_is_an_error_not_minus_one(kind):
    """Session 18: with every score NaN or -inf no candidate beat -inf and the kernel returned
    index -1, which the Frank-Wolfe solvers' custom-vertex domains then used as a vertex. Both
    the kernel and the twin raise; a NaN among finite scores never wins."""
    for scores in (np.full(7, np.nan), np.full(BLOCK + 3, -np.inf)):
        for impl in (kernel, twin):
            with pytest.raises(ValueError, match="selected no index"):
                _run(impl, scores, 1.0, kind, 0)
    scores = np.array([np.nan, 0.5, np.nan, 3.0])
    assert _run(kernel, scores, 1e-9, kind, 0) == _run(twin, scores, 1e-9, kind, 0)
    assert _run(kernel, scores, 1e-9, kind, 0)[0] == 3
