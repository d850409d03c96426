"""Python twin of ``dpsco_core._kernels._discrete``: exact samplers in Python integers.

Same entry points, arguments, returns and draw order as the kernel (see its design comment);
64-bit words come from ``bit_generator.random_raw()``, which returns the same words as the
kernel's ``next_uint64``. Only integer operations: no float, no ``math`` function.
"""

import numpy as np

#: Items per random block (equals the kernel's ``DISCRETE_BLOCK_SIZE``).
BLOCK_SIZE = 65536
_UINT64_MAX = (1 << 64) - 1
_INT64_MAX = (1 << 63) - 1


class _Bits:
    def __init__(self, bit_generator):
        self.bit_generator = bit_generator

    def word(self):
        return int(self.bit_generator.random_raw())

    def uniform_below(self, n):
        if n == 1:
            return 0
        mask = (1 << (n - 1).bit_length()) - 1
        while True:
            r = self.word() & mask
            if r < n:
                return r

    def bernoulli_exp_frac(self, num, den):
        k = 1
        while True:
            if den <= _UINT64_MAX // k:
                coin = self.uniform_below(den * k) < num
            else:
                coin = self.uniform_below(den) < num
                coin = coin & (self.uniform_below(k) == 0)
            if not coin:
                return k & 1
            k += 1

    def bernoulli_exp(self, num, den):
        q = num // den
        for _ in range(q):
            if not self.bernoulli_exp_frac(1, 1):
                return 0
        return self.bernoulli_exp_frac(num - q * den, den)

    def discrete_laplace(self, t):
        while True:
            u = self.uniform_below(t)
            if not self.bernoulli_exp_frac(u, t):
                continue
            v = 0
            while self.bernoulli_exp_frac(1, 1):
                v += 1
            if v > (_INT64_MAX - u) // t:
                return None
            u = u + t * v
            negative = self.uniform_below(2) == 1
            if negative and u == 0:
                continue
            return -u if negative else u

    def discrete_gaussian(self, t, m):
        while True:
            y = self.discrete_laplace(t)
            if y is None:
                return None
            a = abs(abs(y) - m)
            if self.bernoulli_exp(a * a, 2 * t * m):
                return y


def _add_discrete(x, t, m, bit_generators, out):
    if t == 0:
        raise ValueError("t must be >= 1")
    d = x.shape[0]
    status = 0
    for b, bit_generator in enumerate(bit_generators):
        bits = _Bits(bit_generator)
        for i in range(b * BLOCK_SIZE, min((b + 1) * BLOCK_SIZE, d)):
            noise = bits.discrete_laplace(t) if m == 0 else bits.discrete_gaussian(t, m)
            value = None if noise is None else int(x[i]) + noise
            if value is None or abs(value) > _INT64_MAX:
                status = 1
                continue
            out[i] = value
    return status


def add_discrete_laplace(x, t, bit_generators, out, n_threads):
    """Write ``x + DLap(t)`` into ``out``; return 0, or 1 on integer overflow."""
    return _add_discrete(x, int(t), 0, bit_generators, out)


def add_discrete_gaussian(x, t, m, bit_generators, out, n_threads):
    """Write ``x + N_Z(0, t m)`` into ``out``; return 0, or 1 on integer overflow."""
    t, m = int(t), int(m)
    if m == 0 or 2 * t * m > _UINT64_MAX:
        raise ValueError("need 1 <= m and 2 t m < 2^64")
    return _add_discrete(x, t, m, bit_generators, out)


def permute_and_flip(q, temperature, bit_generator):
    """Permute-and-flip with exact coins: return the selected index (see the kernel)."""
    m = q.shape[0]
    if m == 0:
        raise ValueError("scores must not be empty")
    if temperature == 0:
        raise ValueError("temperature must be >= 1")
    bits = _Bits(bit_generator)
    q = [int(v) for v in np.asarray(q)]
    best = max(q)
    perm = list(range(m))
    for i in range(m):
        j = i + bits.uniform_below(m - i)
        perm[i], perm[j] = perm[j], perm[i]
        c = perm[i]
        if bits.bernoulli_exp(best - q[c], int(temperature)):
            return c
    raise AssertionError("unreachable: a maximiser is always accepted")
