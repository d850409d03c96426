r"""Floating-point-safe noise: the grid, the sensitivity inflation and the exact samplers.

Why. Mironov (2012) showed that adding floating-point Laplace noise ``x + b * log(u)`` leaks
``x`` through the low-order bits of the result: the set of doubles reachable from one input
differs from the set reachable from a neighbour, so some outputs identify the input exactly
and the mechanism is not differentially private at all. ``secure=True`` avoids every floating-
point sampling step: the query is rounded to a power-of-two grid :math:`2^k \mathbb{Z}`, exact
integer noise (discrete Laplace or discrete Gaussian, Canonne, Kamath and Steinke 2020,
Algorithms 1-3) is added in integer arithmetic from uniform 64-bit words, and the result is
scaled back by :math:`2^k` (exact for grid values below :math:`2^{53}`, and a post-processing
otherwise). Report-noisy-max becomes permute-and-flip with exact coins on grid scores.

Grid and sensitivity. Rounding to the nearest grid point moves each coordinate by at most
:math:`2^{k-1}`, so for neighbours the rounded values differ coordinate-wise by at most
:math:`|f_i(D) - f_i(D')| + 2^k`, hence

.. math::

    \Delta_1' \le \Delta_1 + d\, 2^k, \qquad \Delta_2' \le \Delta_2 + \sqrt{d}\, 2^k, \qquad
    \Delta_\infty' \le \Delta_\infty + 2^k.

The grid is chosen per call so that the added term is at most :math:`2^{-10} \Delta`
(``SLACK``), and every guarantee is stated for the inflated sensitivity
:math:`\Delta (1 + 2^{-10})`: the discretization costs a factor :math:`1 + 2^{-10}` in noise.
Noise parameters are then rounded *up* to integers in grid units, so the realised epsilon (or
rho) is at most the stated one.

Random bits. The 64-bit words come from the numpy bit generators of the block scheme
(PCG64DXSM, seeded from OS entropy under ``random_state=None``): reproducible under a seed and
independent of the thread count. They are not a CSPRNG; the samplers are exact given uniform
words.
"""

import math
from fractions import Fraction

import numpy as np

from ._kernels import _discrete

__all__ = ["SLACK", "grid_exponent", "to_grid", "from_grid", "inflated", "ceil_fraction"]

#: Relative sensitivity inflation paid for rounding to the grid.
SLACK = Fraction(1, 1 << 10)
_INT_LIMIT = 1 << 62


def inflated(sensitivity):
    """``sensitivity * (1 + SLACK)``, exact, as a Fraction."""
    return Fraction(sensitivity) * (1 + SLACK)


def ceil_fraction(value, name):
    """``ceil(value)`` for a Fraction, as an int in [1, 2^62)."""
    out = max(1, -((-value.numerator) // value.denominator))
    if out >= _INT_LIMIT:
        raise ValueError(f"{name} is too large for secure=True (about 2^{out.bit_length() - 1} "
                         "grid units, above 2^62); use a larger epsilon or fewer coordinates.")
    return out


def grid_exponent(sensitivity, factor):
    """Largest ``k`` (up to a safety step) with ``factor * 2^k <= SLACK * sensitivity``.

    ``factor`` is ``d`` (l1), ``sqrt(d)`` (l2) or 1 (l-infinity). Computed with ``frexp`` (exact)
    and one extra step down against the rounding of ``sensitivity / factor``.
    """
    _, e = math.frexp(sensitivity / factor)    # sensitivity / factor in [2^(e-1), 2^e)
    return e - 1 - 10 - 1


def to_grid(x, k, name):
    """``rint(x / 2^k)`` as int64 (x float64, finite); ValueError if it does not fit."""
    # |x| / 2^k >= 2^62 exactly when |x| >= 2^(62 + k) (scaling by a power of 2 is exact):
    # checked on x, as np.ldexp(x, -k) overflowed with a RuntimeWarning (an error under
    # -W error) for |x| near 1.8e308 on a fine grid (found by hypothesis, session 19)
    limit = math.ldexp(1.0, 62 + k) if 62 + k < 1024 else math.inf
    if x.size and float(np.max(np.abs(x))) >= limit:
        raise ValueError(f"{name} is too large for the secure grid 2^{k} "
                         f"(|{name}| / 2^{k} must be below 2^62; the grid's step follows "
                         "the sensitivity, so a tiny sensitivity makes it tiny: rescale the "
                         "query and its sensitivity).")
    return np.rint(np.ldexp(x, -k)).astype(np.int64)


def from_grid(q, k):
    """``q * 2^k`` as float64 (exact for ``|q| < 2^53``)."""
    return np.ldexp(q.astype(np.float64), k)


def check_status(status):
    if status:
        raise OverflowError("integer overflow in the secure sampler (a value beyond 2^63 "
                            "grid units); the input is too large for secure=True.")


def laplace_parameters(sensitivity, epsilon, d):
    """Grid exponent ``k`` and integer scale ``t``: DLap(t) on the grid is epsilon-DP."""
    k = grid_exponent(sensitivity, max(d, 1))
    t = ceil_fraction(inflated(sensitivity) / (Fraction(epsilon) * Fraction(2) ** k),
                      "the Laplace scale")
    return k, t


def gaussian_parameters(sensitivity, noise_multiplier, d):
    """Grid exponent ``k`` and integers ``t, m`` with ``t m >= (z Delta' / 2^k)^2``."""
    k = grid_exponent(sensitivity, math.sqrt(max(d, 1)))
    sigma = Fraction(noise_multiplier) * inflated(sensitivity) / Fraction(2) ** k
    t = ceil_fraction(sigma, "the Gaussian scale")
    m = ceil_fraction(sigma * sigma / t, "the Gaussian scale")
    if 2 * t * m >= 1 << 64:
        raise ValueError(f"the noise scale (noise multiplier times sensitivity, from epsilon and "
                         f"delta) is too large for secure=True: {d} coordinates of x need "
                         "sigma^2 above 2^63 grid units; use a larger epsilon, fewer "
                         "coordinates, or secure=False.")
    return k, t, m


def permute_and_flip_parameters(sensitivity, epsilon):
    """Grid exponent ``k`` and integer temperature ``T`` (coins exp(-(q* - q_i) / T))."""
    k = grid_exponent(sensitivity, 1)
    temperature = ceil_fraction(2 * inflated(sensitivity) / (Fraction(epsilon) * Fraction(2) ** k),
                                "the permute-and-flip temperature")
    return k, temperature


def add_discrete_noise(x, kind, params, generators, n_threads):
    """x (float64, 1-d) + exact discrete noise on the grid, as a new float64 array."""
    k = params[0]
    q = to_grid(x, k, "x")
    out = np.empty_like(q)
    if kind == "laplace":
        status = _discrete.add_discrete_laplace(q, params[1], generators, out, n_threads)
    else:
        status = _discrete.add_discrete_gaussian(q, params[1], params[2], generators, out,
                                                 n_threads)
    check_status(status)
    return from_grid(out, k)
