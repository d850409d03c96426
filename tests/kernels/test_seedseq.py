"""C seeding of the block generators (``src_cython/_seedseq.h``, issue 18): bitwise numpy's
``SeedSequence`` (hash mixing, pool, generate_state) and ``PCG64DXSM`` streams, over many
entropy / spawn-key / pool-size values; MLMC draws unchanged by it."""

import numpy as np
import pytest

from dpsco_core import Problem
from dpsco_core._kernels import _mlmc
from dpsco_core._random import block_bit_generators, check_random_state, seed_words
from dpsco_core.mlmc import GLMOracle, mlmc_draws
from dpsco_core.mlmc import estimator


def _entropies():
    rng = np.random.default_rng(18)
    values = [0, 1, 2**32 - 1, 2**32, 2**64 - 1, 2**64 + 7, 2**127 + 3, 2**200 + 11]
    values += [int(rng.integers(0, 2**62)) for _ in range(20)]
    values += [int.from_bytes(rng.bytes(16), "little") for _ in range(10)]
    return values


def _spawn_keys():
    rng = np.random.default_rng(19)
    keys = [(), (0,), (5,), (2**32,), (1, 2, 3), (0, 0, 0, 0, 0, 0), (2**40 + 1, 7)]
    keys += [tuple(int(v) for v in rng.integers(0, 2**33, size=rng.integers(1, 6)))
             for _ in range(10)]
    return keys


@pytest.mark.parametrize("pool_size", [4, 5, 8])
def test_streams_equal_numpy(pool_size):
    for entropy in _entropies():
        for spawn_key in _spawn_keys():
            ss = np.random.SeedSequence(entropy, spawn_key=spawn_key, pool_size=pool_size)
            got = _mlmc.seeded_block_draws(seed_words(ss), 3, 4)
            ref = np.array([g.random_raw(4) for g in block_bit_generators(ss, 3)],
                           dtype=np.uint64)
            np.testing.assert_array_equal(got, ref)


def test_os_entropy_generator_children_and_many_blocks():
    seeds = [np.random.SeedSequence() for _ in range(5)]
    seeds += [check_random_state(np.random.default_rng(3)),
              check_random_state(np.random.Generator(np.random.PCG64(9))),
              check_random_state(12345)]
    # a Generator without a SeedSequence: entropy is a uint64 array
    seeds.append(np.random.SeedSequence(np.array([2**63 + 5, 7], dtype=np.uint64)))
    for ss in seeds:
        got = _mlmc.seeded_block_draws(seed_words(ss), 700, 3)
        ref = np.array([g.random_raw(3) for g in block_bit_generators(ss, 700)],
                       dtype=np.uint64)
        np.testing.assert_array_equal(got, ref)


def test_bitgen_interface_matches_numpy_draws():
    # the 32-bit and double callbacks, through numpy's own C distributions (the kernel's K and
    # sampled rows use random_bounded_uint64 on the bitgen): compared via the MLMC kernel below
    ss = np.random.SeedSequence(77)
    words = _mlmc.seeded_block_draws(seed_words(ss), 1, 6)[0]
    g = np.random.PCG64DXSM(np.random.SeedSequence(77, spawn_key=(0,)))
    np.testing.assert_array_equal(words, g.random_raw(6))


@pytest.mark.parametrize("n_threads", [1, 2])
def test_mlmc_kernel_unchanged_by_c_seeding(n_threads):
    rs = np.random.default_rng(0)
    X = rs.standard_normal((300, 6)) / np.sqrt(6)
    y = np.sign(X @ rs.standard_normal(6) + 0.1)
    oracle = GLMOracle(Problem(X, y, loss="logistic"))
    center = np.zeros(6)
    n_copies = 100                                   # 7 blocks, the last one partial
    seed = np.random.SeedSequence(2024)
    draws = mlmc_draws(oracle, 1.0, center, j_max=6, n_copies=n_copies, levels="paper",
                       random_state=seed, n_threads=n_threads)
    # the same kernel fed numpy's bit generators (the previous seeding)
    n_blocks = -(-n_copies // _mlmc.COPY_BLOCK)
    kind = 0                                         # no domain
    table = np.array([estimator.level_epochs(j, "paper") for j in range(7)], dtype=np.int64)
    out = np.empty((n_copies, 6))
    ks = np.empty(n_copies, dtype=np.int64)
    ng = np.empty(n_copies, dtype=np.int64)
    _mlmc.mlmc_glm_batch(oracle.X, oracle.y, oracle.X @ center, oracle.row_norms,
                         oracle.loss_kind, oracle.loss_param, oracle.clip, np.zeros(6), 1.0,
                         kind, np.zeros(6), np.zeros(6), 0.0, table, 0,
                         block_bit_generators(seed, n_blocks), out, ks, ng, n_threads)
    np.testing.assert_array_equal(draws.offsets, out)
    np.testing.assert_array_equal(draws.k, ks)
    np.testing.assert_array_equal(draws.n_gradients, ng)
