"""NumPy twin of ``dpsco_core._kernels._resque``: same entry points, arguments and returns.

Summation orders follow the kernel's design comment: dot products over k left to right from
0.0 (vectorized over samples and queries), per-block partial sums over the block's samples in
order (vectorized over blocks), partials added in block order. With the kernel built with
-ffp-contract=off the results are bitwise equal, except where NumPy's SIMD ``exp`` differs from
the C library's by an ulp (the tests check which case holds). Regeneration draws block b's rows
with ``Generator(gens[b]).standard_normal((rows, d))``.
"""

import numpy as np

from .loss import _deriv

SAMPLE_BLOCK = 512

#: The exponential of the weights. NumPy's SIMD exp may differ from the C library's by an ulp;
#: tests swap in ``math.exp`` (vectorized) to check bitwise agreement of everything else.
_exp = np.exp


def _n_blocks(n):
    return -(-n // SAMPLE_BLOCK)


def draw_samples(gens, zeta_out, n_threads):
    """Twin of the kernel's ``draw_samples``: normal rows into zeta_out, block b from gens[b]."""
    n, d = zeta_out.shape
    for b in range(_n_blocks(n)):
        lo, hi = b * SAMPLE_BLOCK, min((b + 1) * SAMPLE_BLOCK, n)
        zeta_out[lo:hi] = np.random.Generator(gens[b]).standard_normal((hi - lo, d))
    return zeta_out


def _zeta(zeta, gens, n):
    if zeta.shape[0] == 0:
        zeta = draw_samples(gens, np.empty((n, zeta.shape[1])), 1)
    return zeta


def _half_norms(V):
    s = np.zeros(V.shape[0])
    for k in range(V.shape[1]):
        s = s + V[:, k] * V[:, k]
    return 0.5 * s


def resque_log_weights(V, zeta, lw_out, n_threads):
    """Twin of the kernel's ``resque_log_weights``: log Gaussian-ratio weights into lw_out."""
    V = np.asarray(V)
    lw = np.zeros((zeta.shape[0], V.shape[0]))
    for k in range(V.shape[1]):
        lw = lw + zeta[:, k, None] * V[None, :, k]
    lw_out[...] = lw - _half_norms(V)
    return lw_out


def _block_sums(W, G):
    """sum_b (sum_{i in block b} W[i, :, None] G[i, None, :]), the kernel's order."""
    n, m = W.shape
    p = G.shape[1]
    nb = _n_blocks(n)
    full = n // SAMPLE_BLOCK
    partial = np.zeros((nb, m, p))
    if full:
        Wf = W[:full * SAMPLE_BLOCK].reshape(full, SAMPLE_BLOCK, m)
        Gf = G[:full * SAMPLE_BLOCK].reshape(full, SAMPLE_BLOCK, p)
        acc = np.zeros((full, m, p))
        for t in range(SAMPLE_BLOCK):
            acc = acc + Wf[:, t, :, None] * Gf[:, t, None, :]
        partial[:full] = acc
    if nb > full:
        acc = np.zeros((m, p))
        for i in range(full * SAMPLE_BLOCK, n):
            acc = acc + W[i, :, None] * G[i, None, :]
        partial[full] = acc
    total = np.zeros((m, p))
    for b in range(nb):
        total = total + partial[b]
    return total


def resque_batch(V, zeta, G, gens, out, n_threads):
    """Twin of the kernel's ``resque_batch``: reweighted averages of ``G`` at the offsets ``V``."""
    n = G.shape[0]
    zeta = _zeta(zeta, gens, n)
    lw = resque_log_weights(V, zeta, np.empty((n, V.shape[0])), n_threads)
    out[...] = _block_sums(_exp(lw), G) / n
    return out


def resque_glm_batch(V, zeta, coefs, idx, A, gens, out, n_threads):
    """Twin of the kernel's ``resque_glm_batch``: the GLM fast path of :func:`resque_batch`."""
    n = coefs.shape[0]
    zeta = _zeta(zeta, gens, n)
    lw = resque_log_weights(V, zeta, np.empty((n, V.shape[0])), n_threads)
    out[...] = _block_sums(_exp(lw) * coefs[:, None], A[idx]) / n
    return out


def glm_query_batch(A, y, idx, margins, rho, zeta, gens, loss_kind, loss_param, coefs_out,
                    n_threads):
    """Twin of the kernel's ``glm_query_batch``: the GLM oracle's loss derivatives."""
    n = idx.shape[0]
    zeta = _zeta(zeta, gens, n)
    rows = A[idx]
    dot = np.zeros(n)
    for k in range(A.shape[1]):
        dot = dot + rows[:, k] * zeta[:, k]
    coefs_out[...] = _deriv(margins + rho * dot, y[idx], loss_kind, loss_param)
    return coefs_out
