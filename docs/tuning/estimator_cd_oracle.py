# Best fixed (step, clip) of DPLasso(solver="cd")'s grid on California at epsilon = 1 (issue 19, session 8):
#   PYTHONPATH=. python docs/tuning/estimator_cd_oracle.py SEEDS PASSES EPSILON SHIFT LABEL_BOUND   (run: 3 20|50 1.0 2.5 2.5)
import sys, warnings
import numpy as np
from dpsco_core.experiments.tuning import _estimator_data, _split, PUBLIC_BOUND
from dpsco_core.estimators import DPLasso
warnings.simplefilter("ignore")
X, y, _ = _estimator_data()["california (R^2)"]
seeds = range(int(sys.argv[1])); passes = int(sys.argv[2]); eps = float(sys.argv[3])
shift, Y = float(sys.argv[4]), float(sys.argv[5])
scale = 35.444 * Y / 2.5
clips = scale * np.geomspace(1e-2, 1, 6)
for step in (1.0, 5.0, 25.0):
    for clip in clips:
        sc = []
        for seed in seeds:
            Xtr, ytr, Xte, yte = _split(X, y, seed)
            m = DPLasso(alpha=1e-4, epsilon=eps, bounds=(-PUBLIC_BOUND, PUBLIC_BOUND), step=step, clip=clip,
                        label_bound=Y, random_state=seed, passes=passes).fit(Xtr, ytr - shift)
            sc.append(1 - np.mean((m.predict(Xte) + shift - yte) ** 2) / np.var(yte))
        print(f"step {step:5g} clip {clip:9.4g}  R2 {np.mean(sc):.4f} ± {np.std(sc):.4f}", flush=True)
