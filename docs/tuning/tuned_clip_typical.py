# Issue 19, session 11 (diagnosis.md, section 12): the non-privately tuned clips of the 10-seed
# table (tuning.json, 50 passes) in typical gradients Lambda_0 rho (rho the root-mean-square row
# norm, Lambda_0 = max |l'(0, y)|), and the ratio of the largest row norm to rho.
#   PYTHONPATH=. python docs/tuning/tuned_clip_typical.py
import json, math, warnings
import numpy as np
warnings.simplefilter("ignore")
from dpsco_core.experiments.dpcd import build_settings
from dpsco_core.experiments.tuning import _label_bound, _public_rms
from dpsco_core.tuning import grids

tuned = {(r["problem"], r["solver"], r.get("passes", 50)): (r["step"], r["clip"])
         for r in json.load(open("docs/tuning/tuning.json"))["solvers"] if r["method"] == "tuned"}
for s in build_settings(None, log=lambda *a: None):
    P = s.problem
    rho = _public_rms(P)
    X = P.X.toarray() if hasattr(P.X, "toarray") else P.X
    top = math.sqrt(float(np.max(np.einsum("ij,ij->i", X, X))))
    typical = grids._derivative_at_zero(P, _label_bound(P)) * rho
    for (key, solver, passes), (step, clip) in sorted(tuned.items()):
        if key == s.key:
            print(f"{key} {solver} {passes} passes: tuned clip {clip:.4g} (step {step:g}) = "
                  f"{clip / typical:.3g} typical gradients; max row norm / rho {top / rho:.3g}")
