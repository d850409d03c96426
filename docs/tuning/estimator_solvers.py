# Issue 19, session 7 (see diagnosis.md): the estimators' solvers at epsilon = 1 on the data of
# `reproduce tuning` (same splits, bounds and settings as its estimator table). Run from the
# repository root:
#   PYTHONPATH=. python docs/tuning/estimator_solvers.py 5 [shuffle variants, batch:passes, e.g.
#   256:20,1024:20,4096:20 or 64:5,64:20,256:5,256:10]
# Rows: solver "cd" (replace-one), "sgd" with Poisson sampling (zero-out), "sgd" with shuffled
# fixed-size batches (replace-one, one Gaussian release per epoch), mean ± std of the held-out
# score over seeds, and the non-private model.
import sys
import time
import warnings; warnings.simplefilter("ignore")
import numpy as np
from sklearn.linear_model import LinearRegression, LogisticRegression
from dpsco_core.estimators import DPLasso, DPLogisticRegression
from dpsco_core.experiments.tuning import PUBLIC_BOUND, _estimator_data, _split

n_seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
shuffles = [tuple(int(v) for v in b.split(":")) for b in sys.argv[2].split(",")] \
    if len(sys.argv) > 2 else [(256, 20)]
variants = [("cd", dict(solver="cd")), ("sgd poisson", dict(solver="sgd", sampling="poisson"))]
variants += [(f"sgd shuffle b={b} passes={e}", dict(solver="sgd", sampling="shuffle",
                                                    batch_size=b, passes=e))
             for b, e in shuffles]
for name, (X, y, kind) in _estimator_data().items():
    scores = {v: [] for v, _ in variants}
    scores["non-private"] = []
    for seed in range(n_seeds):
        Xtr, ytr, Xte, yte = _split(X, y, seed)
        for v, kw in variants:
            t = time.perf_counter()
            if kind == "regression":
                m = DPLasso(alpha=1e-4, epsilon=1.0, bounds=(-PUBLIC_BOUND, PUBLIC_BOUND),
                            label_bound=5.0, **{"passes": 20, "random_state": seed, **kw})
            else:
                m = DPLogisticRegression(epsilon=1.0, bounds=(-PUBLIC_BOUND, PUBLIC_BOUND),
                                         **{"passes": 20, "random_state": seed, **kw})
            m.fit(Xtr, ytr)
            assert m.privacy_.epsilon <= 1.0
            scores[v].append(float(m.score(Xte, yte)))
            print(f"{name} seed {seed} {v}: {scores[v][-1]:.4f} "
                  f"({m.privacy_.neighboring_relation.name}, {time.perf_counter() - t:.1f} s)",
                  flush=True)
        ref = LinearRegression() if kind == "regression" else LogisticRegression(max_iter=1000)
        scores["non-private"].append(float(ref.fit(Xtr, ytr).score(Xte, yte)))
    for v, s in scores.items():
        print(f"| {name} | {v} | {np.mean(s):.4f} ± {np.std(s):.1e} |")
