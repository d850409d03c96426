# Issue 19, session 16: held-out score of the default estimators with predict mapping X onto
# the public bounds (+-B, as fit maps its records) against predicting on the raw X (before
# session 16), the same fitted models; the 11 held-out tasks, 5 splits, epsilon = 1.
#   PYTHONPATH=. python docs/tuning/predict_mapping.py 5 2 1 > docs/tuning/predict_mapping.txt
import sys, warnings, math
import numpy as np
warnings.simplefilter("ignore")
sys.path.insert(0, "docs/tuning")
from sklearn.metrics import r2_score, accuracy_score
from dpsco_core.estimators import DPLasso, DPLogisticRegression
from _estimator_tasks import held_out_tasks
T = held_out_tasks()
for B in map(float, sys.argv[1:]):
  print(f"bounds +-{B:g}")
  for name, (X, y, kind, lb, split) in T.items():
      new, old, frac = [], [], []
      for seed in range(5):
          Xtr, ytr, Xte, yte = split(X, y, seed)
          kw = dict(epsilon=1.0, bounds=(-B, B), random_state=seed)
          m = (DPLasso(alpha=1e-4, label_bound=lb, **kw) if kind == "r"
               else DPLogisticRegression(classes=np.unique(y), **kw)).fit(Xtr, ytr)
          new.append(m.score(Xte, yte))
          z = Xte @ m.coef_.T + m.intercept_
          if kind == "r":
              old.append(r2_score(yte, z.ravel()))
          else:
              pred = (m.classes_[(z.ravel() > 0).astype(int)] if z.ndim == 1 or z.shape[1] == 1
                      else m.classes_[np.argmax(z, axis=1)])
              old.append(accuracy_score(yte, pred))
          frac.append(np.mean(np.any(np.abs(Xte) > B, axis=1)))
      print(f"{name[:28]:28s} mapped {np.mean(new):.4f}  raw {np.mean(old):.4f}  diff {np.mean(np.subtract(new, old)):+.4f}  rows outside {np.mean(frac):.4f}", flush=True)
