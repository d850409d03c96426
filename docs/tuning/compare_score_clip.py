# Issue 19, session 7 (see diagnosis.md, section 4): private selection on the California
# problems of `reproduce tuning` with the two regression score clips, over more seeds than
# the table's 3. Run from the repository root:
#   PYTHONPATH=. python docs/tuning/compare_score_clip.py 10 [residual factors, default 1,2]
# Residual factor r: B = the squared loss at residual r Y. r = 1: the loss of w = 0 at
# |y| = Y (session 6); r = 2: regression_loss_clip (session 7, four times r = 1). Same seeds
# (2000 + seed) and settings as the table's private rows.
import sys
import time
import warnings; warnings.simplefilter("ignore")
import numpy as np
from dpsco_core.experiments import dpcd
from dpsco_core.experiments.tuning import _public_scale, _relative, NAMES
from dpsco_core.tuning import grids
from dpsco_core.tuning.score import regression_loss_clip
from dpsco_core.tuning.search import tune_solver

n_seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
factors = [float(f) for f in sys.argv[2].split(",")] if len(sys.argv) > 2 else [1.0, 2.0]
start = time.perf_counter()
for st in dpcd.build_settings(["california_raw", "california_std"]):
    P = st.problem
    Y = float(np.max(np.abs(P.y)))
    # squared loss: B scales with the square of the residual
    clips = {f"residual {f:g} Y": regression_loss_clip(P.loss, Y) * (f / 2.0) ** 2
             for f in factors}
    for solver in ("cd", "sgd"):
        grid = grids.candidate_grid(P, solver, scale=_public_scale(P, solver))
        for name, B in clips.items():
            errs = []
            for seed in range(n_seeds):
                res = tune_solver(P, epsilon=st.epsilon, delta=st.delta, solver=solver,
                                  passes=50, candidates=grid, loss_clip=B,
                                  neighboring_relation="zero_out", random_state=2000 + seed)
                errs.append(_relative(st, res.coef))
            e = np.array(errs)
            print(f"| {st.key} | {NAMES[solver]} | {name} (B = {B:.3g}) | {e.mean():.4f} ± "
                  f"{e.std():.1e} | {np.median(e):.4f} | {np.round(e, 4).tolist()} |",
                  flush=True)
print(f"done in {time.perf_counter() - start:.0f} s")
