r"""``python -m dpsco_core reproduce resque-private``: ReSQue's private SCO (Theorem 4) against
the n²-gradient baselines, on Lipschitz problems with a known population optimum.

Problems (d features, R = 1, L = 1, data-level Lipschitzness):

- ``median``: :math:`f(x; s) = \|x - s\|`, :math:`s = s_0 + 0.3\,N(0, I)`,
  :math:`\|s_0\| = 1/2`: the distribution is symmetric about :math:`s_0`, the population
  minimizer;
- ``absolute``: :math:`|\langle a, x\rangle - b|`, a uniform in the unit ball,
  :math:`b = \langle a, x^\circ\rangle + \mathrm{Laplace}(0.1)`, :math:`\|x^\circ\| = 0.6`
  (symmetric noise: :math:`x^\circ` is the population minimizer).

- ``hinge``: :math:`\max(0, 1 - b\langle a, x\rangle)`, a uniform in the ball of radius
  A = 4 (so L = 4: with A = 1 the margin :math:`b\langle a, x\rangle \le \|a\|\|x\| \le 1`
  never reaches the kink on the unit ball and the loss would be linear),
  :math:`b = \mathrm{sign}\langle a, u\rangle` flipped with probability 0.3, :math:`\|u\| = 1`.
  Its population optimum has no closed form. It is computed numerically
  (:func:`hinge_reference_optimum`): the exact minimizer :math:`\hat x_m` of the empirical risk
  on an independent reference sample of m = 10^6 draws (``hinge_reference`` in the grid),
  found deterministically by Newton's method on the smoothed hinge (smoothing 2 down to 1e-4)
  followed by an exact LP on the points near the kink, and checked to lie inside the unit ball
  (it does: :math:`\|\hat x_m\| \approx 0.51` at d = 3, 0.80 at d = 10, so it is also the
  constrained minimizer of the reference risk).

Excess population risk = risk on a held-out sample at x minus at the optimum (``median``,
``absolute``: a fresh sample of ``holdout`` draws, the known optimum; ``hinge``: the reference
sample itself and :math:`\hat x_m`, which estimates the excess risk with an upward bias of order
d/m, since :math:`\hat x_m` minimizes that sample's risk: 3e-6 at d = 3, 8e-6 at d = 10,
measured as half the mean of :math:`F_2(\hat x_1) - F_2(\hat x_2)` over two pairs of
independent reference samples). ``excess_se`` is the
standard error of the mean of the paired per-sample differences :math:`f(x; s) - f(x^*; s)`.

Default grid: n = 1000, 2000, 4000, 8000 at d = 3, ε = 1; at n = 4000 also d = 10 and ε = 0.5
for every problem, and ε = 0.25 for ``hinge`` (so hinge has the sweep ε ∈ {0.25, 0.5, 1}).
``--problems`` runs part of the grid.

Methods: ``resque`` (:func:`~dpsco_core.resque.resque_private_sco`, heuristic mode, ρ/r = 10,
constant λ, BallAccel iterations capped at ``max_iter``: NOT certified), ``noisy_gd``
(:func:`~dpsco_core.resque.noisy_projected_gd`, T = n: n² gradients) and ``phased_erm``
(:func:`~dpsco_core.resque.phased_erm`). Every method is (ε, δ)-DP under replace-one by its own
accounting (the ReSQue rows only heuristically). The certified mode is tried once per grid at
the largest n and its refusal (which condition fails) is recorded.

Outputs in ``--out``: ``resque_private.csv``, ``resque_private.md`` (tables and log-log slopes
against Theorem 4's), ``resque_private_n.png``.
"""

import argparse
import csv
import math
import pathlib
import time

import numpy as np

from .._random import check_random_state
from ._cli import parse_experiment_args

GRIDS = {
    "smoke": {"n": [1000], "d": 3, "extra_d": [], "extra_eps": [], "seeds": 1,
              "problems": ["median", "hinge"], "holdout": 20_000, "hinge_reference": 20_000,
              "max_iter": 2, "eps": 1.0},
    "default": {"n": [1000, 2000, 4000, 8000], "d": 3, "extra_d": [10], "extra_eps": [0.5],
                "seeds": 2, "problems": ["median", "absolute", "hinge"], "holdout": 100_000,
                "hinge_reference": 1_000_000, "max_iter": 20, "eps": 1.0,
                "extra_eps_by_problem": {"hinge": [0.25]}},
}
PROBLEMS = ("median", "absolute", "hinge")
DELTA = 1e-6
HINGE_FEATURE_BOUND = 4.0
HINGE_FLIP = 0.3


def _smoothed_hinge_newton(M, x, mu, iters=50):
    """Damped Newton on mean(h_mu(1 - M x)), h_mu the quadratically smoothed hinge."""
    m, d = M.shape

    def obj(x):
        r = 1.0 - M @ x
        return float(np.mean(np.where(r >= mu, r - mu / 2,
                                      np.where(r > 0, r * r / (2 * mu), 0.0)))), r
    f0, r = obj(x)
    for _ in range(iters):
        band = (r > 0.0) & (r < mu)
        if np.count_nonzero(band) < 2 * d:  # too few points to define a Newton step
            break
        grad = -(np.clip(r / mu, 0.0, 1.0) @ M) / m
        H = (M[band].T @ M[band]) / (m * mu)
        step = np.linalg.solve(H + 1e-12 * np.trace(H) * np.eye(d), grad)
        t = 1.0
        while t > 1e-10:
            fn, rn = obj(x - t * step)
            if fn <= f0 - 1e-4 * t * float(grad @ step):  # Armijo
                break
            t /= 2
        else:
            break  # no decrease: x is optimal to working precision
        x, f0, r = x - t * step, fn, rn
        if np.linalg.norm(t * step) < 1e-9:  # the LP below makes the result exact
            break
    return x


def hinge_reference_optimum(data):
    r"""The exact minimizer of the empirical hinge risk of ``data`` (a reference sample).

    Deterministic: Newton on the smoothed hinge with smoothing 2, 0.5, 0.1, ..., 1e-4 (from
    x = 0) gives :math:`\tilde x`; then the LP (HiGHS) for the exact piecewise-linear risk
    over the box :math:`\|x - \tilde x\|_\infty \le h`, in which only the points with
    :math:`|1 - b\langle a, \tilde x\rangle| \le 2A\sqrt d\, h` can change side of the kink
    (the others enter as a fixed linear term). An LP solution strictly inside the box is a
    local, hence (convexity) global, minimizer; otherwise h grows fourfold and the LP is solved
    again. Raises if the minimizer leaves the unit ball (then it would not be the constrained
    optimum the methods target).

    Returns
    -------
    x : ndarray of shape (d,)
    """
    from scipy.optimize import linprog
    from scipy.sparse import csr_matrix, hstack, identity

    M = data.A * data.b[:, None]  # margins b <a, x> = M x
    m, d = M.shape
    x = np.zeros(d)
    for mu in (2.0, 0.5, 1e-1, 1e-2, 1e-3, 1e-4):
        x = _smoothed_hinge_newton(M, x, mu)
    A_max = float(np.max(np.linalg.norm(M, axis=1)))
    h = 1e-3
    while True:
        r = 1.0 - M @ x
        near = np.abs(r) <= 2.0 * A_max * math.sqrt(d) * h
        active = r > 0.0
        far_active = active & ~near
        Mn = M[near]
        k = Mn.shape[0]
        # variables (x, xi): min (-sum_far_active M_i x + sum xi) / m
        c = np.concatenate([-M[far_active].sum(axis=0), np.ones(k)]) / m
        A_ub = hstack([csr_matrix(-Mn), -identity(k, format="csr")], format="csr")
        bounds = [(x[j] - h, x[j] + h) for j in range(d)] + [(0.0, None)] * k
        res = linprog(c, A_ub=A_ub, b_ub=-np.ones(k), bounds=bounds, method="highs")
        if res.status != 0:
            raise RuntimeError(f"hinge reference LP failed: {res.message}")
        xl = res.x[:d]
        if np.all(np.abs(xl - x) < h * (1.0 - 1e-6)):
            x = xl
            break
        x, h = xl, 4.0 * h
    if np.linalg.norm(x) >= 1.0:
        raise RuntimeError(f"hinge reference optimum has norm {np.linalg.norm(x):.4f} >= R = 1; "
                           "the unconstrained minimizer is not the constrained one.")
    return x


def per_sample_losses(data, x):
    """f(x; s_i) for every record (evaluation only)."""
    x = np.asarray(x, dtype=np.float64)
    if hasattr(data, "S"):
        return np.linalg.norm(x - data.S, axis=1)
    z = data.A @ x
    if data.loss == "absolute":
        return np.abs(z - data.b)
    return np.maximum(0.0, 1.0 - data.b * z)


def make_problem(name, n, d, seed):
    """(train data, holdout data, optimum) for a problem of the module docstring."""
    from ..resque import GeometricMedianData, LipschitzGLM

    rng = np.random.default_rng(check_random_state(seed))
    center = rng.standard_normal(d)
    if name == "median":
        s0 = 0.5 * center / np.linalg.norm(center)

        def draw(m):
            return GeometricMedianData(s0 + 0.3 * rng.standard_normal((m, d)))
        return draw(n), draw(GRID_HOLDOUT[0]), s0
    if name == "hinge":
        u = center / np.linalg.norm(center)

        def draw_hinge(m):
            U = rng.standard_normal((m, d))
            U *= (HINGE_FEATURE_BOUND * rng.random((m, 1)) ** (1.0 / d)
                  / np.linalg.norm(U, axis=1, keepdims=True))
            b = np.where(U @ u >= 0.0, 1.0, -1.0)
            b *= np.where(rng.random(m) < HINGE_FLIP, -1.0, 1.0)
            return LipschitzGLM(U, b, "hinge", HINGE_FEATURE_BOUND)
        train = draw_hinge(n)
        ref = draw_hinge(GRID_HOLDOUT[1])
        return train, ref, hinge_reference_optimum(ref)
    x_star = 0.6 * center / np.linalg.norm(center)

    def draw_glm(m):
        U = rng.standard_normal((m, d))
        U *= (rng.random((m, 1)) ** (1.0 / d)) / np.linalg.norm(U, axis=1, keepdims=True)
        return LipschitzGLM(U, U @ x_star + rng.laplace(0.0, 0.1, m), "absolute", 1.0)
    return draw_glm(n), draw_glm(GRID_HOLDOUT[0]), x_star


GRID_HOLDOUT = [100_000, 1_000_000]  # holdout, hinge reference sample


def run_method(method, data, eps, max_iter, seed):
    """(x, n_gradients, epsilon reported, certified)."""
    from ..resque import noisy_projected_gd, phased_erm, resque_private_sco

    if method == "resque":
        res = resque_private_sco(data, epsilon=eps, delta=DELTA, radius_bound=1.0,
                                 mode="heuristic", line_search="constant", max_iter=max_iter,
                                 random_state=seed)
        return res.x, res.n_gradients, res.epsilon, res.certified
    fn = noisy_projected_gd if method == "noisy_gd" else phased_erm
    res = fn(data, epsilon=eps, delta=DELTA, radius_bound=1.0, random_state=seed)
    return res.x, res.n_gradients, res.epsilon, True


def rows_for(grid, problems=None):
    g = GRIDS[grid]
    GRID_HOLDOUT[0] = g["holdout"]
    GRID_HOLDOUT[1] = g["hinge_reference"]
    probs = [p for p in g["problems"] if problems is None or p in problems]
    configs = [(p, n, g["d"], g["eps"]) for p in probs for n in g["n"]]
    n_mid = g["n"][len(g["n"]) // 2]
    configs += [(p, n_mid, d, g["eps"]) for p in probs for d in g["extra_d"]]
    configs += [(p, n_mid, g["d"], e) for p in probs for e in g["extra_eps"]]
    configs += [(p, n_mid, g["d"], e) for p in probs
                for e in g.get("extra_eps_by_problem", {}).get(p, [])]
    rows = []
    for prob, n, d, eps in configs:
        for s in range(g["seeds"]):
            data, hold, opt = make_problem(prob, n, d, 1000 * s + n + d)
            base = per_sample_losses(hold, opt)
            for method in ("resque", "noisy_gd", "phased_erm"):
                t0 = time.perf_counter()
                x, grads, eps_rep, cert = run_method(method, data, eps, g["max_iter"], s)
                diff = per_sample_losses(hold, x) - base
                rows.append({"part": "run", "problem": prob, "n": n, "d": d, "epsilon": eps,
                             "seed": s, "method": method, "excess_risk": float(diff.mean()),
                             "excess_se": float(diff.std(ddof=1) / math.sqrt(diff.size)),
                             "gradients": grads,
                             "gradients_per_sample": grads / n, "epsilon_reported": eps_rep,
                             "certified": cert, "seconds": time.perf_counter() - t0})
    return rows


def certified_probe(n, d):
    """Certified mode at this n: the ValueError naming the failed condition (or 'ran')."""
    from ..resque import resque_private_erm

    data, hold, opt = make_problem("median", n, d, 0)
    try:
        res = resque_private_erm(data, epsilon=1.0, delta=DELTA, radius_bound=1.0,
                                 mode="certified", line_search="constant", max_iter=1,
                                 random_state=0)
    except ValueError as exc:
        return f"refused: {exc}"
    p = res.params
    return (f"runs (certified={res.certified}) but is useless at this n: rho/r = "
            f"{p['radius_ratio']:.3g}, r = {p['r']:.3g}, K = (R/r)^(2/3) = {p['K']:.3g}, "
            f"BallAccel needs {math.ceil(p['K'] * math.log(p['kappa']))} iterations (1 run "
            f"here), beta = {p['beta']:.3g}, T = {p['T2']} (capped at n/120); excess risk "
            f"after 1 iteration {hold.value(res.x) - hold.value(opt):.3g}")


def _mean(rows, key):
    return float(np.mean([r[key] for r in rows]))


def _problems_in(rows):
    return [p for p in PROBLEMS if any(r["problem"] == p for r in rows)]


def summary(rows, grid):
    g = GRIDS[grid]
    out = []
    for prob in _problems_in(rows):
        for method in ("resque", "noisy_gd", "phased_erm"):
            sel = [r for r in rows if r["problem"] == prob and r["method"] == method
                   and r["d"] == g["d"] and r["epsilon"] == g["eps"]]
            ns = sorted({r["n"] for r in sel})
            ex = [_mean([r for r in sel if r["n"] == n], "excess_risk") for n in ns]
            gr = [_mean([r for r in sel if r["n"] == n], "gradients") for n in ns]
            row = {"part": "slope", "problem": prob, "method": method}
            if len(ns) >= 2:
                ln = np.log(ns)
                pos = [e > 0 for e in ex]
                row["risk_slope"] = (float(np.polyfit(ln, np.log(ex), 1)[0]) if all(pos)
                                     else float("nan"))
                row["gradient_slope"] = float(np.polyfit(ln, np.log(gr), 1)[0])
            out.append(row)
    return out


def _se(rows):
    """Standard error of the seed mean of excess_risk (holdout noise only), or '-'."""
    se = [r.get("excess_se") for r in rows]
    if any(v in (None, "") for v in se):
        return "-"
    return f"{math.sqrt(sum(float(v) ** 2 for v in se)) / len(se):.2g}"


def markdown(rows, slopes, probe, grid, seconds):
    lines = [f"# reproduce resque-private ({grid} grid, {seconds:.0f} s)", "",
             "Excess population risk (held-out sample, known optimum) and gradients, mean over "
             "seeds; delta = 1e-6, replace-one. `resque` is the heuristic mode (rho/r = 10, "
             "constant lambda, capped BallAccel iterations): **not certified**.", "",
             "| problem | n | d | eps | method | excess risk | std. error | gradients | "
             "per sample | eps reported |", "|---|---|---|---|---|---|---|---|---|---|"]
    keys = sorted({(r["problem"], r["n"], r["d"], r["epsilon"], r["method"]) for r in rows})
    for k in keys:
        sel = [r for r in rows if (r["problem"], r["n"], r["d"], r["epsilon"], r["method"]) == k]
        lines.append(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {k[4]} | "
                     f"{_mean(sel, 'excess_risk'):.3g} | {_se(sel)} | "
                     f"{_mean(sel, 'gradients'):.3g} | "
                     f"{_mean(sel, 'gradients_per_sample'):.3g} | "
                     f"{_mean(sel, 'epsilon_reported'):.3g} |")
    lines += ["", "Log-log slopes in n (Theorem 4: risk -1/2 in the statistical regime, -1 "
              "when privacy dominates; gradients ~1 (near-linear) once n >> d^2/eps^3; the "
              "baselines' gradients ~2):", "", "| problem | method | risk slope | gradient "
              "slope |", "|---|---|---|---|"]
    for s in slopes:
        lines.append(f"| {s['problem']} | {s['method']} | {s.get('risk_slope', float('nan')):.2f}"
                     f" | {s.get('gradient_slope', float('nan')):.2f} |")
    lines += ["", f"Certified mode at the largest n: {probe}", ""]
    return "\n".join(lines)


def plots(rows, grid, out):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    g = GRIDS[grid]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for prob in _problems_in(rows):
        for method in ("resque", "noisy_gd", "phased_erm"):
            sel = [r for r in rows if r["problem"] == prob and r["method"] == method
                   and r["d"] == g["d"] and r["epsilon"] == g["eps"]]
            ns = sorted({r["n"] for r in sel})
            ex = [max(_mean([r for r in sel if r["n"] == n], "excess_risk"), 1e-12) for n in ns]
            gr = [_mean([r for r in sel if r["n"] == n], "gradients") for n in ns]
            axes[0].loglog(ns, ex, "o-", label=f"{prob} {method}")
            axes[1].loglog(ns, gr, "o-", label=f"{prob} {method}")
    ns = np.array(g["n"], dtype=float)
    axes[0].loglog(ns, 0.3 * ns[0] ** 0.5 / ns ** 0.5 * 0.1, "k--", label="slope -1/2")
    axes[1].loglog(ns, ns * 10, "k:", label="slope 1 (near-linear)")
    axes[1].loglog(ns, ns ** 2, "k--", label="slope 2")
    axes[0].set(xlabel="n", ylabel="excess population risk")
    axes[1].set(xlabel="n", ylabel="gradient queries")
    axes[0].legend(fontsize=6)
    axes[1].legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(out / "resque_private_n.png", dpi=100)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m dpsco_core reproduce resque-private",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="resque-private-out", help="output directory")
    parser.add_argument("--smoke", action="store_true", help="a seconds-long grid (tests)")
    parser.add_argument("--quiet", action="store_true", help="no progress output")
    parser.add_argument("--problems", nargs="+", choices=PROBLEMS, default=None,
                        help="run only these problems of the grid (default: all of them)")
    args = parse_experiment_args(parser, argv)
    grid = "smoke" if args.smoke else "default"
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    rows = rows_for(grid, args.problems)
    if not rows:
        parser.error(f"--problems: none of {args.problems} is in the {grid} grid "
                     f"({', '.join(GRIDS[grid]['problems'])}).")
    slopes = summary(rows, grid)
    probe = certified_probe(max(GRIDS[grid]["n"]), GRIDS[grid]["d"])
    keys = []
    for r in rows + slopes:
        keys += [k for k in r if k not in keys]
    with open(out / "resque_private.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=keys)
        writer.writeheader()
        writer.writerows(rows + slopes)
    text = markdown(rows, slopes, probe, grid, time.perf_counter() - start)
    (out / "resque_private.md").write_text(text)
    plots(rows, grid, out)
    if not args.quiet:
        print(text)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
