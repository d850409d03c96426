"""The one randomness scheme: random_state forms, block streams, secrecy of fresh entropy."""

import numpy as np
import pytest

from dpsco_core._random import (BIT_GENERATOR, SeedParts, block_bit_generators,
                                check_random_state, child_seed_sequences,
                                descendant_bit_generator, seed_source)


def _first_draws(seed_seq):
    return np.random.Generator(block_bit_generators(seed_seq, 1)[0]).random(4)


def test_int_and_seed_sequence_are_seeds():
    a = _first_draws(check_random_state(7))
    b = _first_draws(check_random_state(7))
    c = _first_draws(check_random_state(np.random.SeedSequence(7)))
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)


def test_none_draws_fresh_entropy():
    assert not np.array_equal(_first_draws(check_random_state(None)),
                              _first_draws(check_random_state(None)))


def test_generator_gives_fresh_child_each_call():
    gen = np.random.default_rng(3)
    first = _first_draws(check_random_state(gen))
    second = _first_draws(check_random_state(gen))
    assert not np.array_equal(first, second)
    # ... and reproducibly so from the same starting generator
    gen2 = np.random.default_rng(3)
    np.testing.assert_array_equal(first, _first_draws(check_random_state(gen2)))


def test_children_match_spawn_and_do_not_mutate():
    root = np.random.SeedSequence(11)
    mine = child_seed_sequences(root, 3)
    assert root.n_children_spawned == 0
    spawned = np.random.SeedSequence(11).spawn(3)
    for a, b in zip(mine, spawned):
        np.testing.assert_array_equal(a.generate_state(4), b.generate_state(4))


def test_block_generators_are_distinct_streams():
    gens = block_bit_generators(np.random.SeedSequence(5), 4)
    assert all(isinstance(g, BIT_GENERATOR) for g in gens)
    draws = [np.random.Generator(g).random(8) for g in gens]
    for i in range(4):
        for j in range(i):
            assert not np.array_equal(draws[i], draws[j])


@pytest.mark.parametrize("bad", [-1, 1.5, "seed", np.random.RandomState(0), True])
def test_bad_random_state(bad):
    with pytest.raises((TypeError, ValueError), match="random_state"):
        check_random_state(bad)


_SEEDS = [np.random.SeedSequence(0), np.random.SeedSequence(), np.random.SeedSequence(2**200 + 5),
          np.random.SeedSequence([1, 2, 3]),
          np.random.SeedSequence(np.arange(10, dtype=np.uint32)),
          np.random.SeedSequence(7, spawn_key=(3, 2**40)), np.random.SeedSequence(7, pool_size=8),
          np.random.SeedSequence(1).spawn(3)[2], np.random.SeedSequence(np.int64(9)),
          np.random.SeedSequence([2**33, 0, 1], spawn_key=(1,), pool_size=5),
          np.random.SeedSequence(0, spawn_key=(0,))]


@pytest.mark.parametrize("seed", _SEEDS, ids=range(len(_SEEDS)))
@pytest.mark.parametrize("path", [(0, 0), (0,), (5, 3), (1, 2, 2**35)])
def test_descendant_generator_seeded_in_c_is_numpys(seed, path):
    # issue 18: seeded in C (dpsco_core._kernels._seeding), bitwise the generator of numpy's
    # SeedSequence(entropy, spawn_key + path, pool_size), state and stream
    expected = BIT_GENERATOR(np.random.SeedSequence(
        seed.entropy, spawn_key=tuple(seed.spawn_key) + path, pool_size=seed.pool_size))
    got = descendant_bit_generator(seed, path)
    assert got.state == expected.state
    if path == (0, 0):      # what dp_cd's kernel generator was: block 0 of child 0
        old = block_bit_generators(child_seed_sequences(seed, 1)[0], 1)[0]
        assert got.state == old.state
    np.testing.assert_array_equal(got.random_raw(5), expected.random_raw(5))
    assert seed.n_children_spawned == 0


@pytest.mark.parametrize("seed", [0, 1, 7, 2**32 - 1, 2**32, 2**130 + 5])
def test_seed_parts_give_the_seed_sequences_streams(seed):
    # seed_source skips building SeedSequence(seed) for a plain int (issue 18): the kernel's
    # generator and every child stream are bitwise those of the SeedSequence.
    parts = seed_source(seed)
    assert isinstance(parts, SeedParts)
    full = np.random.SeedSequence(seed)
    for path in [(0, 0), (1,), (0, 3, 2)]:
        np.testing.assert_array_equal(descendant_bit_generator(parts, path).random_raw(6),
                                      descendant_bit_generator(full, path).random_raw(6))
    for a, b in zip(child_seed_sequences(parts, 3, offset=1),
                    child_seed_sequences(full, 3, offset=1)):
        np.testing.assert_array_equal(a.generate_state(4), b.generate_state(4))
    np.testing.assert_array_equal(parts.seed_sequence().generate_state(4),
                                  full.generate_state(4))


def test_seed_source_other_forms_are_check_random_state():
    assert isinstance(seed_source(None), np.random.SeedSequence)
    seq = np.random.SeedSequence(3)
    assert seed_source(seq) is seq
    assert isinstance(seed_source(np.int64(4)), np.random.SeedSequence)
    with pytest.raises(ValueError, match="random_state"):
        seed_source(-1)
    with pytest.raises(TypeError, match="random_state"):
        seed_source("0")
