# Issue 19, session 11 (diagnosis.md, section 12): the noise-level default rule on problems it was
# NOT fitted on. (1) synthetic logistic regression, standardized Gaussian features, n = 10,000,
# p = 20; (2) scikit-learn's diabetes data (n = 442, p = 10), features standardized, labels
# centred and scaled to unit variance, LASSO at lambda = 0.01 lambda_max. epsilon = 1, delta =
# 1/n^2, 50 passes (DP-CD) and 50 passes (DP-SGD, batch 256 or n), zero-out, 5 seeds. Against the
# best clip of a dense grid (in typical gradients, 1/64 to 8; DP-SGD steps 0.1 and 1) chosen on
# the exact objective (not private), and the worst-case rule with bounds = the data's largest
# absolute values.
#   PYTHONPATH=. python docs/tuning/noise_rule_holdout.py
import math, types, warnings
import numpy as np
warnings.simplefilter("ignore")
from dpsco_core.experiments.dpcd import _lasso_lambda_max
from dpsco_core.experiments.tuning import (_label_bound, _public_rms, _public_scale, _relative,
                                           _run)
from dpsco_core.penalties import L1, L2
from dpsco_core.problems import Problem
from dpsco_core.tuning import grids


def setting(key, problem, epsilon=1.0):
    s = types.SimpleNamespace(key=key, problem=problem, epsilon=epsilon,
                              delta=1.0 / problem.n_samples ** 2)
    s.optimum = problem.solve().objective
    return s


rng = np.random.default_rng(0)
X = rng.standard_normal((10_000, 20))
w = rng.standard_normal(20) / math.sqrt(20) * 2
y = np.where(rng.random(10_000) < 1 / (1 + np.exp(-X @ w)), 1.0, -1.0)
settings = [setting("synthetic_logistic", Problem(X, y, loss="logistic", penalty=L2(1e-4)))]
try:
    from sklearn.datasets import load_diabetes
    Xd, yd = load_diabetes(return_X_y=True)
    Xd = (Xd - Xd.mean(0)) / Xd.std(0)
    yd = (yd - yd.mean()) / yd.std()
    lam = 0.01 * _lasso_lambda_max(Xd, yd)
    settings.append(setting("diabetes_std", Problem(Xd, yd, loss="squared", penalty=L1(lam))))
except ImportError:
    print("scikit-learn not installed: diabetes skipped")

PASSES, SEEDS = 50, range(5)
for s in settings:
    P = s.problem
    rho, Y = _public_rms(P), _label_bound(P)
    typical = grids._derivative_at_zero(P, Y) * rho
    for solver in ("cd", "sgd"):
        err = lambda cand: float(np.mean([_relative(s, _run(s, solver, cand, PASSES, 1000 + k))
                                          for k in SEEDS]))
        rule = grids.default_hyperparameters(P, solver, rms_row_norm=rho, epsilon=s.epsilon,
                                             delta=s.delta, passes=PASSES, label_bound=Y,
                                             neighboring_relation="zero_out")    # as _run
        worst = grids.default_hyperparameters(P, solver, scale=_public_scale(P, solver))
        steps = (1.0,) if solver == "cd" else (0.1, 1.0)
        dense = {(st, c): err(grids.Candidate(st, c * typical))
                 for st in steps for c in 2.0 ** np.arange(-6, 4)}
        (bst, bc), best = min(dense.items(), key=lambda kv: kv[1])
        e_rule, e_worst = err(rule), err(worst)
        print(f"{s.key} {solver}: noise-level rule (step {rule.step:g}, "
              f"{rule.clip / typical:.3g} typical) {e_rule:.4f} = {e_rule / best:.1f}x tuned; "
              f"worst-case rule {e_worst:.4f} = {e_worst / best:.1f}x; tuned {best:.4f} "
              f"(step {bst:g}, {bc:.3g} typical)", flush=True)
