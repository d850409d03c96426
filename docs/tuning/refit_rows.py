# (b) with a refit: PYTHONPATH=. python docs/tuning/refit_rows.py california_raw,electricity_raw 1,0.5,0.3 10 > docs/tuning/refit_rows.txt
# (b) with refit: selection at share s of epsilon, refit on all records with the rest (RDP-composed).
import sys, time, warnings
import numpy as np
from dpsco_core.experiments import dpcd
from dpsco_core.experiments.tuning import _public_scale, _loss_clip, _relative, SOLVERS, NAMES
from dpsco_core.tuning import grids
from dpsco_core.tuning.search import tune_solver
warnings.simplefilter("ignore")
keys = sys.argv[1].split(","); shares = [float(x) for x in sys.argv[2].split(",")]
seeds = range(int(sys.argv[3]))
settings = dpcd.build_settings(keys)
for setting in settings:
    for solver in SOLVERS:
        scale = _public_scale(setting.problem, solver)
        grid = grids.candidate_grid(setting.problem, solver, scale=scale)
        for share in shares:
            t = time.time(); errs = []
            for seed in seeds:
                kw = dict(refit=True, selection_share=share) if share < 1 else {}
                res = tune_solver(setting.problem, epsilon=setting.epsilon, delta=setting.delta,
                                  solver=solver, passes=50, candidates=grid,
                                  loss_clip=_loss_clip(setting.problem), neighboring_relation="zero_out",
                                  average=False, random_state=2000 + seed, **kw)
                assert res.privacy.epsilon <= setting.epsilon
                errs.append(_relative(setting, res.coef))
            print(f"{setting.key} {NAMES[solver]} share {share}: {np.mean(errs):.4f} ± {np.std(errs):.1e} (median {np.median(errs):.4f})  {time.time()-t:.0f}s", flush=True)
