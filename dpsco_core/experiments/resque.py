"""ReSQue evaluation (``python -m dpsco_core reproduce resque-parallel``; note 000, section 8).

1. Estimator: bias (about 0) and second moment of ReSQue against L^2 exp(||v||^2/rho^2) as
   ||v||/rho varies, and the effective sample size fraction (sum w)^2 / (N sum w^2).
2. Parallel SCO on the geometric median of one point (f = ||x - s||, L = 1, f* = 0): query
   depth and total queries of BallAccel + AC-SA (Theorem 2) against minibatch SGD (randomized
   smoothing baseline) run with the same total queries, for a grid of eps and d.

Writes ``resque.csv`` and ``resque.md`` to ``--out``. The default grid runs in a few minutes;
``--full`` widens it.
"""

import argparse
import csv
import math
import pathlib

import numpy as np

from ..parallel.sco import parallel_sco
from ..resque import draw_resque_samples, resque_log_weights

__all__ = ["main", "estimator_table", "sco_table"]


def estimator_table(d=20, n_samples=200_000, ratios=(0.0, 0.25, 0.5, 1.0, 1.5), seed=0):
    rows = []
    zeta = draw_resque_samples(n_samples, d, random_state=seed)
    for q in ratios:
        v = np.zeros(d)
        v[0] = q                       # rho = 1, linear f with ||g|| = L = 1
        w = np.exp(resque_log_weights(v, np.zeros(d), 1.0, zeta))
        rows.append({"part": "estimator", "v_over_rho": q, "bias_of_mean_w": w.mean() - 1.0,
                     "se": w.std() / math.sqrt(n_samples), "second_moment": np.mean(w ** 2),
                     "predicted": math.exp(q * q),
                     "ess_fraction": w.sum() ** 2 / (n_samples * np.sum(w ** 2))})
    return rows


def _median_oracle(s):
    def grad_batch(Z, random_state):
        D = Z - s
        return D / np.maximum(np.linalg.norm(D, axis=1, keepdims=True), 1e-300)
    return grad_batch


def _minibatch_sgd(s, total, depth, R=1.0):
    """Projected minibatch SGD with `depth` sequential rounds of total/depth queries each."""
    x, acc = np.zeros_like(s), np.zeros_like(s)
    eta = R / math.sqrt(depth)
    for _ in range(depth):
        g = (x - s) / max(np.linalg.norm(x - s), 1e-300)
        x = x - eta * g
        x *= min(1.0, R / max(np.linalg.norm(x), 1e-300))
        acc += x
    return float(np.linalg.norm(acc / depth - s))


def sco_table(eps_grid=(0.4, 0.2), d_grid=(2, 8), accuracy_scale=300.0, seed=0):
    rows = []
    for d in d_grid:
        s = np.full(d, 0.5 / math.sqrt(d))
        for eps in eps_grid:
            res = parallel_sco(_median_oracle(s), np.zeros(d), lipschitz=1.0, radius_bound=1.0,
                               epsilon=eps, inner="ac_sa", accuracy_scale=accuracy_scale,
                               random_state=seed)
            err = float(np.linalg.norm(res.x - s))
            # SGD needs about (R L / eps)^2 sequential rounds for the same accuracy
            sgd_depth = math.ceil((1.0 / eps) ** 2)
            rows.append({"part": "sco", "d": d, "eps": eps, "resque_error": err,
                         "query_depth": res.query_depth, "total_queries": res.total_queries,
                         "computational_depth": res.computational_depth,
                         "sgd_depth": sgd_depth,
                         "sgd_error": _minibatch_sgd(s, res.total_queries, sgd_depth),
                         "depth_ratio_sgd_over_resque": sgd_depth / res.query_depth})
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(prog="resque-parallel", description=__doc__)
    parser.add_argument("--out", default="resque-out")
    parser.add_argument("--full", action="store_true")
    args = parser.parse_args(argv)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    est = estimator_table()
    sco = sco_table(eps_grid=(0.4, 0.2, 0.1, 0.05) if args.full else (0.4, 0.2),
                    d_grid=(2, 8, 32) if args.full else (2, 8))
    rows = est + sco
    keys = sorted({k for r in rows for k in r})
    with open(out / "resque.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=keys)
        writer.writeheader()
        writer.writerows(rows)
    lines = []
    for part in (est, sco):
        cols = list(part[0])
        lines += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        lines += ["| " + " | ".join(f"{r[c]:.4g}" if isinstance(r[c], float) else str(r[c])
                                    for c in cols) + " |" for r in part]
        lines.append("")
    (out / "resque.md").write_text("\n".join(lines))
    print("\n".join(lines))
    return 0
