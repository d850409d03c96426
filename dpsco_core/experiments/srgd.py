"""Evaluation for paper 003 (Accelerated-DP-SRGD): excess population risk vs n and vs epsilon.

``python -m dpsco_core reproduce srgd`` (the lead wires the CLI to :func:`main`). The paper has
no experiments; this is the evaluation of note 003 section 10.2.

Problems with exactly computable excess population risk:

* ``lsq``: bounded-design least squares, ``a = diag(s) r`` with ``r`` Rademacher and
  ``s_i = c / i`` (``||a||_2 = 1`` exactly: ill-conditioned, ``E[a a^T] = diag(s^2)``),
  ``y = <a, x_dagger> + xi``, ``xi ~ U[-1, 1]``, half squared loss, so
  ``F(x) - F(x_dagger) = (x - x_dagger)^T diag(s^2) (x - x_dagger) / 2`` in closed form.
* ``logistic``: well-specified logistic regression, ``a`` uniform on the unit sphere,
  ``P(y = 1 | a) = sigmoid(<a, x_dagger>)``; the excess risk ``F(x) - F(x_dagger)`` is
  estimated on one held-out sample of 200,000 points shared by all methods (common random
  numbers).

``||x_dagger|| = 2`` and ``C = B(0, 3)`` (realizable). Methods at equal ``B`` and ``T``
(``preset``): Accelerated-DP-SRGD (presets "sqrt" and "quarter"), single-epoch DP-SGD
(Polyak average and last iterate, one run), accelerated DP-SGD with independent noise,
unaccelerated SRG with tree noise, and DP-FTRL (the binary tree on the gradients themselves,
lazy projected FTRL; the method of the paper's section 2.2); non-private SRGD and DP-SGD as
the statistical floor.
``beta`` (``M 2^k``) and ``clip`` (multiples of the Lipschitz bound ``L`` on the ball) are
oracle-tuned per (method, n, epsilon) on a separate tuning seed, then evaluated on fresh seeds
(tuning on the private data is not accounted; see note 003 section 10.2). Every run reports T
(adaptive rounds) and the number of gradient evaluations (``2 T B - B`` for the SRG methods).

The default grid is reduced (n in {1e4, 1e5}; epsilon in {0.5, 1, 2, 8} at n = 1e5; 3 seeds;
beta in M 2^{-4, -2, 0, 2, 4}, clip in {1/8, 1/4, 1/2, 1} L): a few minutes on 2 cores.
``--full``: n in {1e4, 1e5, 1e6}, epsilon in {0.25, ..., 8}, 5 seeds, beta in M 2^{-6..6},
clip in {1/16, 1/8, 1/4, 1/2, 1} L. The Lipschitz bound L on the ball is loose (6 for lsq,
where the typical residual is below 1), so the tuned clips sit well below L there; for the
logistic loss L = 1 is tight and a difference clip below L biases SRGD strongly (note 003,
section 10.3). The non-private runs use no clipping (the statistical floor).
"""

import argparse
import csv
import math
import os
import time

import numpy as np

from ._cli import parse_experiment_args
from ._progress import Phases

__all__ = ["main", "make_problem", "run_grid", "METHODS"]

P_DEFAULT = 20
NORM_X = 2.0
RADIUS = 3.0

#: method name -> (solver name, kwargs, output): "coef" or a stats key.
METHODS = {
    "srgd_sqrt": ("dp_srgd", {"preset": "sqrt"}, "coef"),
    "srgd_quarter": ("dp_srgd", {"preset": "quarter"}, "coef"),
    "dp_sgd_avg": ("dp_sgd_single_epoch", {"preset": "sqrt"}, "coef"),
    "dp_sgd_last": ("dp_sgd_single_epoch", {"preset": "sqrt"}, "x_last"),
    "acc_dp_sgd": ("accelerated_dp_sgd", {"preset": "sqrt"}, "coef"),
    "srg": ("dp_srg", {"preset": "sqrt"}, "coef"),
    "dp_ftrl": ("dp_ftrl", {"preset": "sqrt"}, "coef"),
}
NON_PRIVATE = ("srgd_sqrt", "dp_sgd_avg")


def make_problem(kind, n, p=P_DEFAULT, random_state=0):
    """``(problem, excess, L, M)``: the data, ``excess(x)`` = F(x) - F(x_dagger), constants."""
    import dpsco_core as dp
    rng = np.random.default_rng(random_state)
    x_dagger = np.full(p, NORM_X / math.sqrt(p))
    if kind == "lsq":
        s = 1.0 / np.arange(1, p + 1)
        s /= np.linalg.norm(s)
        X = rng.choice([-1.0, 1.0], size=(n, p)) * s
        y = X @ x_dagger + rng.uniform(-1.0, 1.0, n)
        s2 = s * s

        def excess(x):
            d = np.asarray(x) - x_dagger
            return 0.5 * float(np.sum(s2 * d * d))
        # |l'| = |<a, x> - y| <= R + ||x_dagger|| + 1 on the ball, ||a|| = 1
        return dp.Problem(X, y, loss="half_squared"), excess, RADIUS + NORM_X + 1.0, 1.0
    if kind == "logistic":
        def sample(m, g):
            A = g.standard_normal((m, p))
            A /= np.linalg.norm(A, axis=1, keepdims=True)
            prob1 = 1.0 / (1.0 + np.exp(-(A @ x_dagger)))
            return A, np.where(g.random(m) < prob1, 1.0, -1.0)
        X, y = sample(n, rng)
        A_test, y_test = sample(200_000, np.random.default_rng(10_000))

        def loss(x):
            return float(np.mean(np.logaddexp(0.0, -y_test * (A_test @ x))))
        f_dagger = loss(x_dagger)
        return (dp.Problem(X, y, loss="logistic"), lambda x: loss(np.asarray(x)) - f_dagger,
                1.0, 0.25)
    raise ValueError(f"problem must be 'lsq' or 'logistic'; got {kind!r}.")


def _run(method, problem, epsilon, delta, beta, clip, seed):
    from dpsco_core import solvers
    name, kwargs, output = METHODS[method]
    res = getattr(solvers, name)(problem, epsilon=epsilon, delta=delta, beta=beta,
                                 clip=clip, radius=RADIUS, random_state=seed,
                                 record_history=False, **kwargs)
    coef = res.coef if output == "coef" else res.stats[output]
    return coef, res


def run_grid(kind, ns, epsilons, seeds, betas, clips, p=P_DEFAULT, progress=print):
    """Rows of results: one per (n, epsilon, method, seed), with the tuned beta and clip."""
    rows = []
    for n, eps_list in ((n, epsilons[n]) for n in ns):
        delta = min(1e-5, n ** -1.1)
        problem, excess, L, M = make_problem(kind, n, p, random_state=1000 + n)
        for epsilon in eps_list:
            for method in list(METHODS) + [f"{m}_nonprivate" for m in NON_PRIVATE]:
                base = method.replace("_nonprivate", "")
                eps = math.inf if method.endswith("_nonprivate") else epsilon
                if eps == math.inf and epsilon != eps_list[0]:
                    continue                            # the floor does not depend on epsilon
                t0 = time.perf_counter()
                best = None
                for beta in betas:
                    for clip in (clips if eps < math.inf else [math.inf]):
                        coef, _ = _run(base, problem, eps, delta, beta * M, clip * L, 99)
                        e = excess(coef)
                        if best is None or e < best[0]:
                            best = (e, beta * M, clip * L)
                _, beta, clip = best
                for seed in seeds:
                    start = time.perf_counter()
                    coef, res = _run(base, problem, eps, delta, beta, clip, seed)
                    rows.append({
                        "problem": kind, "n": n, "p": p, "epsilon": eps, "delta": delta,
                        "method": method, "seed": seed, "excess": excess(coef),
                        "beta": beta, "clip": clip, "batch_size": res.stats["batch_size"],
                        "rounds": res.stats["rounds"],
                        "gradient_evaluations": res.stats["gradient_evaluations"],
                        "report_epsilon": res.privacy.epsilon,
                        # a non-private diagnostic, returned only with record_history=True
                        "clipped_fraction": res.stats.get("clipped_fraction", float("nan")),
                        "time": time.perf_counter() - start})
                progress(f"{kind} n={n} eps={eps:g} {method}: beta={beta:.3g} clip={clip:.3g} "
                         f"excess={np.mean([r['excess'] for r in rows[-len(seeds):]]):.3g} "
                         f"({time.perf_counter() - t0:.1f}s)")
    return rows


def summarize(rows):
    """(problem, n, epsilon, method) -> (mean excess, standard error, one row for the rest)."""
    groups = {}
    for r in rows:
        groups.setdefault((r["problem"], r["n"], r["epsilon"], r["method"]), []).append(r)
    return {k: (float(np.mean([r["excess"] for r in v])),
                float(np.std([r["excess"] for r in v]) / math.sqrt(len(v))), v[0])
            for k, v in groups.items()}


def markdown(summary, kind):
    lines = [f"### {kind}: excess population risk (mean +- s.e.), tuned beta and clip", "",
             "| n | epsilon | method | excess | B | T | gradient evals | beta | clip |",
             "|---|---|---|---|---|---|---|---|---|"]
    for (prob, n, eps, method), (m, se, r) in sorted(
            summary.items(), key=lambda kv: (kv[0][1], kv[0][2], kv[0][3])):
        if prob != kind:
            continue
        lines.append(f"| {n} | {eps:g} | {method} | {m:.3g} +- {se:.2g} | {r['batch_size']} | "
                     f"{r['rounds']} | {r['gradient_evaluations']} | {r['beta']:.3g} | "
                     f"{r['clip']:.3g} |")
    return "\n".join(lines)


def srgd_vs_sgd_factor(summary, kind, n, epsilon):
    """Excess risk of single-epoch DP-SGD (best of average and last) over SRGD "sqrt"."""
    sgd = min(summary[(kind, n, epsilon, "dp_sgd_avg")][0],
              summary[(kind, n, epsilon, "dp_sgd_last")][0])
    return sgd / summary[(kind, n, epsilon, "srgd_sqrt")][0]


def _plots(summary, kind, ns, eps_main, epsilons_at, n_eps, out):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: skipping the plots.")
        return
    fig, ax = plt.subplots()
    for method in list(METHODS) + [f"{m}_nonprivate" for m in NON_PRIVATE]:
        eps = math.inf if method.endswith("nonprivate") else eps_main
        pts = [(n, summary[(kind, n, eps, method)]) for n in ns if (kind, n, eps, method) in
               summary]
        if pts:
            ax.errorbar([a for a, _ in pts], [b[0] for _, b in pts], [b[1] for _, b in pts],
                        label=method, marker="o", linestyle="--" if eps == math.inf else "-")
    first = summary[(kind, ns[0], eps_main, "srgd_sqrt")][0]
    grid = np.array([ns[0], ns[-1]], dtype=float)
    ax.plot(grid, first * (grid / ns[0]) ** -0.5, "k:", label="slope -1/2")
    ax.plot(grid, first * (grid / ns[0]) ** -1.0, "k-.", label="slope -1")
    ax.set(xscale="log", yscale="log", xlabel="n", ylabel="excess population risk",
           title=f"{kind}, epsilon = {eps_main:g}")
    ax.legend(fontsize=7)
    fig.savefig(os.path.join(out, f"srgd_{kind}_vs_n.png"), dpi=120)
    fig, ax = plt.subplots()
    for method in METHODS:
        pts = [(e, summary[(kind, n_eps, e, method)]) for e in epsilons_at]
        ax.errorbar([a for a, _ in pts], [b[0] for _, b in pts], [b[1] for _, b in pts],
                    label=method, marker="o")
    ax.set(xscale="log", yscale="log", xlabel="epsilon", ylabel="excess population risk",
           title=f"{kind}, n = {n_eps}")
    ax.legend(fontsize=7)
    fig.savefig(os.path.join(out, f"srgd_{kind}_vs_epsilon.png"), dpi=120)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m dpsco_core reproduce srgd")
    parser.add_argument("--full", action="store_true", help="the issue's grid")
    parser.add_argument("--out", default="srgd_results", help="output directory")
    parser.add_argument("--problems", default="lsq,logistic", help="comma-separated")
    parser.add_argument("--epsilon", type=float, default=1.0, help="epsilon of the n sweep")
    args = parse_experiment_args(parser, argv)    # checks --threads, --out
    if args.full:
        ns, seeds = [10_000, 100_000, 1_000_000], list(range(5))
        eps_sweep = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0]
        betas, clips = [2.0 ** k for k in range(-6, 7)], [0.0625, 0.125, 0.25, 0.5, 1.0]
    else:
        ns, seeds = [10_000, 100_000], [0, 1, 2]
        eps_sweep = [0.5, 1.0, 2.0, 8.0]
        betas, clips = [2.0 ** k for k in range(-4, 5, 2)], [0.125, 0.25, 0.5, 1.0]
    eps_main = args.epsilon
    n_eps = ns[-1] if not args.full else 100_000
    epsilons = {n: [eps_main] for n in ns}
    epsilons[n_eps] = [eps_main] + [e for e in eps_sweep if e != eps_main]
    os.makedirs(args.out, exist_ok=True)
    rows, tables = [], []
    kinds = args.problems.split(",")
    phases = Phases(2 * len(kinds) + 1)
    for kind in kinds:
        phases.start(f"{kind}: tuning and seeds over n in {ns}")
        kind_rows = run_grid(kind, ns, epsilons, seeds, betas, clips)
        rows += kind_rows
        summary = summarize(kind_rows)
        tables.append(markdown(summary, kind))
        factor = srgd_vs_sgd_factor(summary, kind, ns[-1], eps_main)
        tables.append(f"\nAt n = {ns[-1]}, B = sqrt(n), epsilon = {eps_main:g}: single-epoch "
                      f"DP-SGD (best of average and last iterate) / Accelerated-DP-SRGD = "
                      f"{factor:.2f}x (issue target: >= 3x at n = 1e6 on lsq).\n")
        phases.start(f"{kind}: plots (matplotlib)")
        _plots(summary, kind, ns, eps_main, epsilons[n_eps], n_eps, args.out)
    phases.start("srgd.csv and srgd.md")
    with open(os.path.join(args.out, "srgd.csv"), "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    text = "\n".join(tables)
    print(text)
    with open(os.path.join(args.out, "srgd.md"), "w") as fh:
        fh.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
