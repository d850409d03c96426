"""NumPy twin of ``dpsco_core._kernels._mirror`` (same entry point, arguments and return).

The loop of noisy composite p-norm mirror descent on ``dpsco_core.mirror_maps``: the same
draws in the same order as the kernel (per step ``rng.random(len(rows))``, then
``rng.normal(0, noise_scale, d)``), so the two see the same batches and noise; the arithmetic
agrees to rounding (numpy's exp/log and BLAS sums against libm and the kernel's loops). Also
used by the solvers for sparse X, which the kernel does not take.
"""

import math

import numpy as np

from .. import mirror_maps as mm


def md_run_dense(X, y, rows, loss_kind, loss_param, row_norms, clip, x_start, center, p,
                 scale, reg, ball_radius, l1_radius, steps, q, expected_batch, noise_scale,
                 step, strongly_convex, bit_generator, x_out, avg_out, lp_radius=math.inf):
    """T noisy composite mirror steps; ``x_out``, ``avg_out`` filled; returns the batch sum."""
    from .cd import _loss_deriv
    rng = np.random.Generator(bit_generator)
    rows = np.asarray(rows)
    d = x_start.shape[0]
    x = np.array(x_start, dtype=np.float64)
    avg = np.zeros(d)
    total = 0
    l1 = None if not math.isfinite(l1_radius) else l1_radius
    lp = None if not math.isfinite(lp_radius) or l1 is not None else lp_radius
    for k in range(1, steps + 1):
        idx = rows[rng.random(rows.size) < q]
        total += idx.size
        g = np.zeros(d)
        if idx.size:
            Xb = X[idx]
            r = _loss_deriv(loss_kind, np.asarray(Xb @ x).ravel(), y[idx], loss_param)
            norms = np.abs(r) * row_norms[idx]
            with np.errstate(divide="ignore", invalid="ignore"):
                r = np.where(norms > clip, r * (clip / norms), r)
            g = np.asarray(Xb.T @ r).ravel()
        if noise_scale > 0.0:
            g = g + rng.normal(0.0, noise_scale, d)
        g = g / expected_batch
        eta = 2.0 / (strongly_convex * (k + 1)) if strongly_convex > 0.0 else step
        x = mm.mirror_step(x, g, eta, p=p, scale=scale, center=center, reg=reg,
                           radius=ball_radius, l1_radius=l1, lp_radius=lp)
        avg += (2.0 / (k + 1) if strongly_convex > 0.0 else 1.0 / k) * (x - avg)
    x_out[:] = x
    avg_out[:] = avg
    return total
