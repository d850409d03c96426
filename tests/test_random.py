"""The one randomness scheme: random_state forms, block streams, secrecy of fresh entropy."""

import numpy as np
import pytest

from dpsco_core._random import (BIT_GENERATOR, block_bit_generators, check_random_state,
                                child_seed_sequences)


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
