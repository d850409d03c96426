# Session 20: cross_val_score of DPLasso on raw California with the README quickstart's public
# bounds: the defaults (feature_scaling="auto" standardizes privately), feature_scaling=None,
# and the features mapped onto [-1, 1] by the bounds (the README's former pipeline).
#   PYTHONPATH=. python docs/tuning/cross_val_california.py > docs/tuning/cross_val_california.txt
import warnings, numpy as np
from sklearn.model_selection import cross_val_score, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
import dpsco_core as dp
from dpsco_core.estimators import DPLasso
warnings.simplefilter("ignore")
X, y = dp.datasets.load_california()
lower = np.array([0, 0, 0, 0, 0, 0, 0, -125.]); upper = np.array([15, 52, 20, 5, 10_000, 10, 42, 0.])
cv = KFold(5, shuffle=True, random_state=0)
raw = cross_val_score(DPLasso(alpha=0.01, epsilon=1.0, bounds=(lower, upper), label_bound=(0, 5), random_state=0), X, y, cv=cv)
print("raw bounds, defaults (auto scaling):", raw.round(3))
raw_none = cross_val_score(DPLasso(alpha=0.01, epsilon=1.0, bounds=(lower, upper), label_bound=(0, 5), random_state=0, feature_scaling=None), X, y, cv=cv)
print("raw bounds, feature_scaling=None:", raw_none.round(3))
Xs = 2 * (np.clip(X, lower, upper) - lower) / (upper - lower) - 1
unit = cross_val_score(DPLasso(alpha=0.01, epsilon=1.0, bounds=(-1, 1), label_bound=(0, 5), random_state=0, feature_scaling=None), Xs, y, cv=cv)
print("unit box, feature_scaling=None:", unit.round(3))
