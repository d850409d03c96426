# Issue 19, session 15 (diagnosis.md, section 16): the estimators' rms_row_norm="private"
# (rho = the exponential mechanism's 0.75-quantile of the feature rows' norms on dp_ssp's
# public grid, pure epsilon_q = estimators.rms_quantile_epsilon: a rank error of n / 10
# within 2% to 25% of the zCDP budget; the fits at the rest, calibrated by the accountant with
# the quantile in the composition) against the
# former default (rms_row_norm=None, solver="auto": SSP or the private selection; the run was
# made before "private auto" became the default, rms_row_norm="auto") and a
# declared rms_row_norm = sqrt(p). Held-out score at epsilon = 1, 20 passes, 5 splits, the
# tasks of selection_vs_fixed.py (nan: a refused fit).
#   PYTHONPATH=. python docs/tuning/private_rms_holdout.py > docs/tuning/private_rms_holdout.txt
# (about 6 minutes). private_rms_holdout_share_0.1.txt: the first run, at a fixed share 0.1 of
# the zCDP budget (epsilon_q 0.05); private_rms_holdout_shares.txt: fixed shares 0.05 and 0.25
# on some of the tasks (/work/runs/s15_share.py patched estimators.RMS_QUANTILE_SHARE, the
# constant of that first version), which led to the rule. A task subset: "name;name".
import math, sys, types, warnings
import numpy as np
warnings.simplefilter("ignore")
sys.path.insert(0, "docs/tuning")
from dpsco_core.estimators import DPLasso, DPLogisticRegression
from _estimator_tasks import held_out_tasks
M = types.SimpleNamespace(tasks=held_out_tasks())
columns = {"former default auto": dict(solver="auto", rms_row_norm=None),
           "private auto": dict(solver="auto", rms_row_norm="private"),
           "private cd": dict(solver="cd", rms_row_norm="private"),
           "private sgd": dict(solver="sgd", rms_row_norm="private"),
           "declared cd": dict(solver="cd", rms_row_norm="sqrt p"),
           "declared sgd": dict(solver="sgd", rms_row_norm="sqrt p")}
only = sys.argv[1].split(";") if len(sys.argv) > 1 else None  # names hold commas
for name, (X, y, kind, lb, split) in M.tasks.items():
    if only and name not in only: continue
    out, solvers = {}, {}
    for col, kw in columns.items():
        sc, ran = [], set()
        for seed in range(5):
            Xtr, ytr, Xte, yte = split(X, y, seed)
            kw = dict(kw)
            if kw.get("rms_row_norm") == "sqrt p":
                kw["rms_row_norm"] = math.sqrt(Xtr.shape[1])
            m = (DPLasso(alpha=1e-4, epsilon=1.0, bounds=(-5, 5), label_bound=lb, random_state=seed, **kw) if kind == "r"
                 else DPLogisticRegression(epsilon=1.0, bounds=(-5, 5), random_state=seed, classes=np.unique(y), **kw))
            try:
                m.fit(Xtr, ytr); sc.append(m.score(Xte, yte)); ran.add(m.solver_)
            except ValueError:
                sc.append(np.nan)
        out[col] = (np.mean(sc), np.std(sc) / math.sqrt(len(sc)))
        solvers[col] = "/".join(sorted(ran))
    n, p = Xtr.shape
    print(f"{name} (n {n}, p {p}):", "  ".join(
        f"{k} {v[0]:.3f}±{v[1]:.3f}" + (f" [{solvers[k]}]" if k.endswith("auto") else "")
        for k, v in out.items()), flush=True)
