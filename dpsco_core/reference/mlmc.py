"""NumPy twin of ``dpsco_core._kernels._mlmc``: same entry point, same draws, same sums.

Written for clarity, not speed: one Python iteration per gradient step, copies in order. Dot
products and squared norms use the kernel's four lanes (``_lane_dot``), so outputs agree bit
for bit wherever NumPy's elementwise functions round like the C library's (always for the
piecewise-linear and squared losses; the logistic ``exp`` may differ in the last bit).
"""

import numpy as np

from .cd import _loss_deriv

DOMAIN_NONE, DOMAIN_BALL, DOMAIN_BOX = 0, 1, 2
K_ZERO_WORD = 65
COPY_BLOCK = 16


def _lane_dot(a, b):
    """The kernel's dot: term j to lane j mod 4, each lane summed from 0.0 left to right."""
    terms = a * b
    lanes = [0.0 + float(np.cumsum(terms[lane::4])[-1]) if terms[lane::4].size else 0.0
             for lane in range(4)]
    return (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])


def _project(u, kind, da, db, radius):
    if kind == DOMAIN_BALL:
        tmp = u - da
        nrm = np.sqrt(_lane_dot(tmp, tmp))
        if nrm > radius:
            return da + tmp * (radius / nrm)
        return u
    if kind == DOMAIN_BOX:
        return np.where(u < da, da, np.where(u > db, db, u))
    return u


def _draw_k(bitgen):
    u = int(bitgen.random_raw())
    return K_ZERO_WORD if u == 0 else (u & -u).bit_length()


def _run_copy(X, y, z0, row_norms, loss_kind, loss_param, clip, lin, mu, kind, da, db,
              radius, rng, e0, e1, e2, weight):
    n, d = X.shape
    e_last = e2 if e2 > e1 else e0
    u = _project(-lin / mu, kind, da, db, radius)
    base = u.copy() if e0 == 0 else None
    prev = u.copy() if (e1 == 0 and e2 > e1) else None
    eta, t_k, n_grads = 1.0 / (4.0 * mu), 16, 0
    for k in range(1, e_last + 1):
        denom = 1.0 + eta * mu
        u = _project((u - eta * lin) / denom, kind, da, db, radius)
        acc = u.copy()
        for _ in range(1, t_k):
            idx = int(rng.integers(0, n))
            xs = X[idx]
            z = z0[idx] + _lane_dot(xs, u)
            gs = float(_loss_deriv(loss_kind, np.array([z]), np.array([y[idx]]), loss_param)[0])
            gn = abs(gs) * row_norms[idx]
            if gn > clip:
                gs = gs * (clip / gn)
            u = _project((u - eta * (gs * xs + lin)) / denom, kind, da, db, radius)
            acc = acc + u
        n_grads += t_k - 1
        u = acc / float(t_k)
        if k == e0:
            base = u.copy()
        if k == e1 and e2 > e1:
            prev = u.copy()
        eta = eta * 0.5
        t_k = 2 * t_k
    if e2 > e1:
        return base + weight * (u - prev), n_grads
    return base.copy(), n_grads


def mlmc_glm_batch(X, y, z0, row_norms, loss_kind, loss_param, clip, linear, mu, domain_kind,
                   domain_a, domain_b, radius, level_epochs, base_level, bit_generators, out,
                   k_out, n_grads_out, n_threads):
    """Same contract as the kernel: fills ``out`` (M, d), ``k_out`` and ``n_grads_out``."""
    X = np.asarray(X)
    n, d = X.shape
    n_copies = out.shape[0]
    j_max = len(level_epochs) - 1
    if not 0 <= base_level <= j_max:
        raise ValueError(f"need 0 <= base_level <= j_max; got {base_level}, {j_max}")
    n_blocks = -(-n_copies // COPY_BLOCK)
    if len(bit_generators) != n_blocks:
        raise ValueError(f"expected {n_blocks} bit generators (one per block); got "
                         f"{len(bit_generators)}")
    for m in range(n_copies):   # block b draws the K of its copies first
        k_out[m] = _draw_k(bit_generators[m // COPY_BLOCK])
    for m in range(n_copies):
        bitgen = bit_generators[m // COPY_BLOCK]
        k = int(k_out[m])
        e0 = int(level_epochs[base_level])
        top = base_level + k
        if top <= j_max and level_epochs[top] > level_epochs[top - 1]:
            e1, e2, weight = int(level_epochs[top - 1]), int(level_epochs[top]), float(2 ** k)
        else:
            e1, e2, weight = e0, e0, 0.0
        out[m], n_grads_out[m] = _run_copy(
            X, np.asarray(y), np.asarray(z0), np.asarray(row_norms), loss_kind, loss_param, clip,
            np.asarray(linear), mu, domain_kind, np.asarray(domain_a), np.asarray(domain_b),
            radius, np.random.Generator(bitgen), e0, e1, e2, weight)
