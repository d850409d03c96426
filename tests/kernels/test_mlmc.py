"""The MLMC batch kernel against its NumPy twin: same draws, same bits, any thread count."""

import numpy as np
import pytest

from dpsco_core._kernels import _mlmc as kernel
from dpsco_core._random import block_bit_generators
from dpsco_core.mlmc import expected_gradients, gradients_for_epochs, level_epochs
from dpsco_core.mlmc._schedule import draw_epochs
from dpsco_core.reference import mlmc as twin

LOSSES = {"squared": 0, "half_squared": 1, "huber": 3, "hinge": 4, "absolute": 5}


def _data(n=60, d=7, seed=0):
    rs = np.random.default_rng(seed)
    X = rs.standard_normal((n, d))
    y = np.sign(rs.standard_normal(n))
    c = 0.1 * rs.standard_normal(d)
    lin = 0.01 * rs.standard_normal(d)
    return X, y, c, lin


def _domain(kind, c, d):
    if kind == 0:
        return np.zeros(d), np.zeros(d), np.inf
    if kind == 1:
        return -c, np.zeros(d), 0.4
    return -c - 0.05, -c + 0.05, np.inf


def _run(impl, X, y, c, lin, loss, domain_kind, table, base_level, n_copies, n_threads,
         clip=1.5, seed=3):
    d = X.shape[1]
    da, db, radius = _domain(domain_kind, c, d)
    out = np.empty((n_copies, d))
    ks = np.empty(n_copies, dtype=np.int64)
    ng = np.empty(n_copies, dtype=np.int64)
    impl.mlmc_glm_batch(X, y, X @ c, np.linalg.norm(X, axis=1), loss, 0.7, clip, lin, 1.3,
                        domain_kind, da, db, radius, table, base_level,
                        block_bit_generators(np.random.SeedSequence(seed), -(-n_copies // 16)),
                        out, ks,
                        ng, n_threads)
    return out, ks, ng


EPOCH_TABLE = np.arange(5, dtype=np.int64)
PAPER_TABLE = np.array([level_epochs(j, "paper") for j in range(9)], dtype=np.int64)


@pytest.mark.parametrize("loss", LOSSES.values(), ids=LOSSES.keys())
@pytest.mark.parametrize("domain_kind", [0, 1, 2], ids=["none", "ball", "box"])
def test_kernel_equals_twin_bitwise(loss, domain_kind):
    X, y, c, lin = _data()
    ref = _run(twin, X, y, c, lin, loss, domain_kind, EPOCH_TABLE, 0, 40, 1)
    for n_threads in (1, 2, 4):
        got = _run(kernel, X, y, c, lin, loss, domain_kind, EPOCH_TABLE, 0, 40, n_threads)
        for a, b in zip(got, ref):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("table,base_level", [(PAPER_TABLE, 0), (PAPER_TABLE, 5),
                                              (EPOCH_TABLE, 2), (EPOCH_TABLE, 4)])
def test_level_schemes_and_base_level_bitwise(table, base_level):
    X, y, c, lin = _data(d=5)
    ref = _run(twin, X, y, c, lin, 4, 1, table, base_level, 30, 1)
    got = _run(kernel, X, y, c, lin, 4, 1, table, base_level, 30, 2)
    for a, b in zip(got, ref):
        np.testing.assert_array_equal(a, b)


def test_logistic_agrees_to_rounding():
    # NumPy's exp may differ from libm's in the last bit; the 2^K weight amplifies it.
    X, y, c, lin = _data()
    got = _run(kernel, X, y, c, lin, 2, 0, EPOCH_TABLE, 0, 30, 2)
    ref = _run(twin, X, y, c, lin, 2, 0, EPOCH_TABLE, 0, 30, 1)
    np.testing.assert_allclose(got[0], ref[0], rtol=0, atol=1e-11)
    np.testing.assert_array_equal(got[2], ref[2])


def test_read_only_inputs_are_accepted_and_unchanged():
    X, y, c, lin = _data()
    arrays = [X, y, X @ c, np.linalg.norm(X, axis=1), lin]
    copies = [a.copy() for a in arrays]
    for a in arrays:
        a.setflags(write=False)
    out = np.empty((5, X.shape[1]))
    ks = np.empty(5, dtype=np.int64)
    ng = np.empty(5, dtype=np.int64)
    table = np.arange(3, dtype=np.int64)
    table.setflags(write=False)
    da = np.zeros(X.shape[1])
    da.setflags(write=False)
    kernel.mlmc_glm_batch(arrays[0], arrays[1], arrays[2], arrays[3], 4, 0.0, np.inf, arrays[4],
                          1.0, 0, da, da, np.inf, table, 0,
                          block_bit_generators(np.random.SeedSequence(0), 1), out, ks, ng, 2)
    for a, b in zip(arrays, copies):
        np.testing.assert_array_equal(a, b)


def test_costs_follow_the_level_draws_exactly():
    """Every copy's gradient count is 16 (2^e - 1) - e for the last epoch its K needs (T5)."""
    X, y, c, lin = _data(n=20, d=2)
    table = np.arange(7, dtype=np.int64)
    _, ks, ng = _run(kernel, X, y, c, lin, 5, 0, table, 0, 20000, 2)
    expected = [gradients_for_epochs(max(draw_epochs(int(k), 6, "epoch", 0))) for k in ks]
    np.testing.assert_array_equal(ng, expected)
    # Level sampling (T1): P(K = k) = 2^-k, each frequency within 5 standard errors.
    for k in range(1, 8):
        p = 2.0 ** -k
        assert abs(np.mean(ks == k) - p) <= 5 * np.sqrt(p * (1 - p) / ks.size)
    # Expected cost against the exact formula (heavy tail: sd ~ 16 * 2^(j_max / 2 + 1)).
    sd = np.std(ng)
    assert abs(ng.mean() - expected_gradients(6, "epoch")) <= 5 * sd / np.sqrt(ng.size)


def test_copy_block_constant():
    assert kernel.COPY_BLOCK == twin.COPY_BLOCK == 16


def test_argument_errors():
    X, y, c, lin = _data(d=3)
    with pytest.raises(ValueError, match="base_level"):
        _run(kernel, X, y, c, lin, 4, 0, np.arange(3, dtype=np.int64), 3, 2, 1)
    with pytest.raises(ValueError, match="bit generators"):
        out = np.empty((20, 3))
        kernel.mlmc_glm_batch(X, y, X @ c, np.linalg.norm(X, axis=1), 4, 0.0, np.inf, lin,
                              1.0, 0, np.zeros(3), np.zeros(3), np.inf,
                              np.arange(3, dtype=np.int64), 0,
                              block_bit_generators(np.random.SeedSequence(0), 1), out,
                              np.empty(20, dtype=np.int64), np.empty(20, dtype=np.int64), 1)
