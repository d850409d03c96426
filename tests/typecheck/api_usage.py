"""The public API as a typed user calls it: checked by ``mypy --strict`` (tests/test_typing.py).

Never run, only type-checked: every name exported by ``dpsco_core`` and the estimators is used
here, so that a public function or class losing its annotations (a call to an untyped function
under --strict) or changing its types fails the test.
"""

import io

import numpy as np
import numpy.typing as npt
from typing_extensions import assert_type

import dpsco_core as dp
from dpsco_core.estimators import DPElasticNet, DPLasso, DPLogisticRegression
from dpsco_core.resque.parallel_sco import ParallelSCOResult
from dpsco_core.privacy import PrivacyReport
from dpsco_core.solvers.dp_cd import GridResult

X = np.ones((10, 3))
y = np.ones(10)

assert_type(dp.__version__, str)
assert_type(dp.openmp_enabled(), bool)
assert_type(dp.effective_n_threads(None), int)
dp.show_config(file=io.StringIO())

prob = dp.Problem(X, y, loss="squared", penalty=dp.L1(0.1))
assert_type(prob.objective(np.zeros(3)), float)
assert_type(prob.coordinate_smoothness(), npt.NDArray[np.float64])
penalties: list[dp.penalties.Penalty] = [dp.L1(0.1), dp.L2(0.1), dp.ElasticNet(0.1, 0.2),
                                         dp.Box(-1.0, 1.0), dp.NoPenalty()]
for pen in penalties:
    assert_type(pen.value(np.zeros(3)), float)
    pen.prox(np.zeros(3), 0.5)

res = dp.dp_cd(prob, epsilon=1.0, delta=1e-5, passes=2, random_state=0)
assert_type(res, dp.Result)
assert_type(res.privacy, PrivacyReport)
assert_type(res.privacy.epsilon, float)
results: list[dp.Result] = [
    dp.dp_sgd(prob, epsilon=1.0, delta=1e-5, passes=1, batch_size=4, random_state=0),
    dp.dp_srgd(prob, epsilon=1.0, delta=1e-5, beta=1.0, random_state=0),
    dp.vr_frank_wolfe(prob, epsilon=1.0, random_state=0),
    dp.ttz_frank_wolfe(prob, epsilon=1.0, random_state=0),
    dp.noisy_mirror_descent(prob, epsilon=1.0, delta=1e-5, random_state=0),
    dp.localized_mirror_descent(prob, epsilon=1.0, delta=1e-5, random_state=0),
]
assert_type(dp.dp_cd_grid(prob, epsilon=1.0, delta=1e-5, steps=[1.0], clips=[1.0], passes=1),
            GridResult)

tree = dp.TreeAggregation(3, 4, noise_scale=1.0, random_state=np.random.default_rng(0))
assert_type(tree.next(np.zeros(3)), npt.NDArray[np.float64])
assert_type(tree.steps, int)


def grad_batch(Z: np.ndarray, random_state: np.random.Generator) -> np.ndarray:
    return Z


assert_type(dp.parallel_sco(grad_batch, np.zeros(3), lipschitz=1.0, radius_bound=1.0,
                            epsilon=0.1), ParallelSCOResult)

lasso = DPLasso(0.1, epsilon=1.0, random_state=0)
assert_type(lasso.fit(X, y), DPLasso)
assert_type(DPElasticNet(0.1, l1_ratio=0.5).fit(X, y), DPElasticNet)
clf = DPLogisticRegression(C=1.0).fit(X, np.where(y > 0, 1, 0))
assert_type(clf, DPLogisticRegression)
proba = clf.predict_proba(X)
labels = clf.predict(X)
