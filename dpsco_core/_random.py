"""The one randomness scheme of dpsco-core (the compiled half is ``src_cython/_rng.pxd``).

``random_state`` is accepted everywhere as:

- ``None``: fresh entropy from the operating system (the default, and the only choice for a
  real private release: privacy noise must not be predictable);
- an ``int`` >= 0 or a ``numpy.random.SeedSequence``: a seed. The same seed gives the same
  noise, so never reuse a seed for two releases of the same data;
- a ``numpy.random.Generator``: the call takes one spawned child of the generator's seed
  sequence, so passing the same Generator again gives fresh, independent noise.

Every kernel call gets one ``SeedSequence``; the work is split into blocks of a fixed size and
block ``b`` draws from ``PCG64DXSM(child_b)``, ``child_b`` being the b-th child of that seed
sequence (``SeedSequence(entropy, spawn_key=spawn_key + (b,))``, what ``spawn`` would make,
computed without mutating the caller's object). Results are therefore bitwise identical for any
number of threads.

Stream stability: the same seed gives the same bits within a minor release of dpsco-core (and
of numpy); a change of draw order is listed in the changelog.

Secrecy: entropy drawn for ``random_state=None`` is never stored in results, logs or messages,
with one exception: :func:`~dpsco_core.solvers.dp_cd_grid` keeps its runs' seed sequences
(``GridResult.seed_sequences``, to reproduce a run), and its report lists them among the
outputs the guarantee does not cover. A report of a run given a seed says so
(:data:`~dpsco_core.privacy.SEEDED_ASSUMPTION`).
"""

import numbers

import numpy as np
from numpy.random.bit_generator import ISeedSequence

from ._kernels import _seeding

__all__ = ["check_random_state", "seed_source", "SeedParts", "child_seed_sequences",
           "block_bit_generators", "BIT_GENERATOR", "seed_words", "descendant_bit_generator"]

#: The bit generator of every block stream.
BIT_GENERATOR = np.random.PCG64DXSM


def check_random_state(random_state):
    """Turn ``random_state`` into the ``SeedSequence`` of one call.

    Parameters
    ----------
    random_state : None, int, numpy.random.SeedSequence or numpy.random.Generator
        See the module docstring.

    Returns
    -------
    numpy.random.SeedSequence

    Raises
    ------
    TypeError
        For any other type (including ``numpy.random.RandomState``: legacy seeding is not
        supported).
    ValueError
        For a negative integer seed.
    """
    if random_state is None:
        return np.random.SeedSequence()
    if type(random_state) is int and random_state >= 0:     # the common seed, no ABC check
        return np.random.SeedSequence(random_state)
    if isinstance(random_state, np.random.SeedSequence):
        return random_state
    if isinstance(random_state, np.random.Generator):
        seed_seq = getattr(random_state.bit_generator, "seed_seq", None)
        if isinstance(seed_seq, np.random.SeedSequence):
            return seed_seq.spawn(1)[0]
        # A generator built without a SeedSequence: seed from its own stream instead.
        return np.random.SeedSequence(random_state.integers(0, 2**32, size=8, dtype=np.uint64))
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(f"random_state must be an integer in [0, inf); got {random_state}.")
        return np.random.SeedSequence(int(random_state))
    raise TypeError(
        "random_state must be None, an int, a numpy.random.SeedSequence or a "
        f"numpy.random.Generator; got {type(random_state).__name__}."
    )


class SeedParts:
    """``entropy``, ``spawn_key`` and ``pool_size`` of ``SeedSequence(seed)`` for a plain int
    seed, without building it (numpy hashes the entropy into its pool at construction: ~6 us
    of a short solver call; issue 18). What :func:`child_seed_sequences`
    and :func:`descendant_bit_generator` read, so their streams are bitwise those of the
    ``SeedSequence``; :meth:`seed_sequence` builds it where one is needed."""

    __slots__ = ("entropy",)
    spawn_key = ()
    pool_size = np.random.SeedSequence(0).pool_size     # numpy's DEFAULT_POOL_SIZE

    def __init__(self, entropy):
        self.entropy = entropy

    def seed_sequence(self):
        return np.random.SeedSequence(self.entropy)


def seed_source(random_state):
    """:func:`check_random_state` for a call that reads only the seed's parts (the solvers
    that seed in C): :class:`SeedParts` for a plain int >= 0, else the ``SeedSequence``.
    ``None`` still draws fresh OS entropy."""
    if type(random_state) is int and random_state >= 0:
        return SeedParts(random_state)
    return check_random_state(random_state)


def child_seed_sequences(seed_seq, n, offset=0):
    """Children ``offset .. offset + n - 1`` of ``seed_seq``, without mutating it.

    Child ``k`` equals what the ``(k + 1)``-th child of a fresh ``seed_seq.spawn`` would be.
    """
    return [
        np.random.SeedSequence(
            seed_seq.entropy,
            spawn_key=tuple(seed_seq.spawn_key) + (offset + k,),
            pool_size=seed_seq.pool_size,
        )
        for k in range(n)
    ]


def block_bit_generators(seed_seq, n_blocks):
    """One fresh ``PCG64DXSM`` per block, seeded by the block's child of ``seed_seq``."""
    return [BIT_GENERATOR(child) for child in child_seed_sequences(seed_seq, n_blocks)]


class _ComputedSeed(ISeedSequence):
    """A seed whose ``generate_state(4, np.uint64)`` was computed in C (``_seeding``): what a
    ``BitGenerator`` reads at construction. It does not spawn; the generator it seeds is
    internal to one solver call."""

    __slots__ = ("words",)

    def __init__(self, words):
        self.words = words

    def generate_state(self, n_words, dtype=np.uint32):
        # PCG64DXSM reads 4 uint64 only (``dtype is np.uint64`` first: np.dtype() ~0.5 us)
        if n_words != 4 or (dtype is not np.uint64 and np.dtype(dtype) != np.uint64):
            raise ValueError("a computed seed gives generate_state(4, np.uint64) only")
        return self.words.copy()


def descendant_bit_generator(seed_seq, path):
    """``PCG64DXSM(SeedSequence(entropy, spawn_key + path, pool_size))``: the generator of the
    descendant ``path`` of ``seed_seq`` (``(0, 0)``: block 0 of child 0), seeded in C.

    Bitwise what :func:`child_seed_sequences` and :func:`block_bit_generators` give
    (``block_bit_generators(child_seed_sequences(s, 1)[0], 1)[0]`` for ``path=(0, 0)``), in
    about 3 us instead of 60 (numpy's Python-level ``SeedSequence``; issue 18, the fixed cost of
    a short solver call). Its ``seed_seq`` attribute cannot spawn: use it for draws only.
    """
    words = _seeding.state_words(seed_seq.entropy, seed_seq.spawn_key, seed_seq.pool_size,
                                 tuple(path))
    return BIT_GENERATOR(_ComputedSeed(words))


def _uint32_words(x):
    """numpy's ``SeedSequence`` coercion of entropy / spawn keys to uint32 words: an integer
    as its little-endian 32-bit words (0 as one word), a sequence as its items' words
    concatenated, a uint32 array as is."""
    if isinstance(x, np.ndarray) and x.dtype == np.uint32:
        return x.copy()
    if isinstance(x, (numbers.Integral, np.integer)):
        n = int(x)
        if n < 0:
            raise ValueError(f"seed words must be non-negative; got {n}.")
        words = [0] if n == 0 else []
        while n > 0:
            words.append(n & 0xFFFFFFFF)
            n >>= 32
        return np.array(words, dtype=np.uint32)
    parts = [_uint32_words(v) for v in x]
    return np.concatenate(parts) if parts else np.array([], dtype=np.uint32)


def seed_words(seed_seq):
    """``("seed", entropy words, spawn-key words, pool size)``: what a kernel needs to seed the
    block generators of :func:`block_bit_generators` itself, in C (``src_cython/_seedseq.h``,
    bitwise numpy's ``SeedSequence`` and ``PCG64DXSM``). The entropy is padded with zeros to
    the pool size, as numpy does for a sequence with a spawn key (every block's child has
    one); block ``b`` appends the word ``b``."""
    run = _uint32_words(seed_seq.entropy)
    if run.size < seed_seq.pool_size:
        run = np.concatenate([run, np.zeros(seed_seq.pool_size - run.size, dtype=np.uint32)])
    spawn = _uint32_words(tuple(seed_seq.spawn_key))
    return ("seed", np.ascontiguousarray(run), np.ascontiguousarray(spawn),
            int(seed_seq.pool_size))
