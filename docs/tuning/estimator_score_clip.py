# Issue 19, session 7 (see diagnosis.md, section 4): DPLasso's held-out R^2 on California (the
# estimator rows of `reproduce tuning`, 10 seeds) with the regression score clip at residual
# r Y for r = 1 (session 6), sqrt(2) (the default now) and 2. Run from the repository root:
#   PYTHONPATH=. python docs/tuning/estimator_score_clip.py 10
import functools
import math
import sys
import warnings; warnings.simplefilter("ignore")
import numpy as np
import dpsco_core.tuning.search as search
from dpsco_core.estimators import DPLasso
from dpsco_core.experiments.tuning import PUBLIC_BOUND, _estimator_data, _split
from dpsco_core.tuning.score import regression_loss_clip

n_seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
X, y, _ = _estimator_data()["california (R^2)"]
for r in (1.0, math.sqrt(2.0), 2.0):
    search.regression_loss_clip = functools.partial(regression_loss_clip, residual=r)
    for solver in ("cd", "sgd"):
        sc = []
        for seed in range(n_seeds):
            Xtr, ytr, Xte, yte = _split(X, y, seed)
            m = DPLasso(alpha=1e-4, epsilon=1.0, bounds=(-PUBLIC_BOUND, PUBLIC_BOUND),
                        label_bound=5.0, passes=20, random_state=seed, solver=solver)
            sc.append(m.fit(Xtr, ytr).score(Xte, yte))
        print(f"| residual {r:.3g} Y | {solver} | {np.mean(sc):.4f} ± {np.std(sc):.1e} | "
              f"{np.round(sc, 3).tolist()} |", flush=True)
