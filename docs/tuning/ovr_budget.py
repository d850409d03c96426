# Session 11: one-vs-rest SSP at epsilon / K per fit (before) against the largest per-fit
# epsilon whose K-fold composition is epsilon (now): privacy_.epsilon and held-out accuracy on
# four Gaussian classes (n = 4,000 train and test, p = 5, features clipped to [-3, 3]),
# epsilon = 0.5, 8 seeds; and privacy_.epsilon at epsilon = 1 for K = 3, 4, 10.
#   PYTHONPATH=. python docs/tuning/ovr_budget.py
import warnings
import numpy as np
warnings.simplefilter("ignore")
import dpsco_core.estimators as E


def gaussian_classes():
    """(rng, n, K, X, y, Xt, yt): the train and test data (also ovr_budget_iterative.py)."""
    rng = np.random.default_rng(1)
    n, p, K = 4000, 5, 4
    centres = rng.standard_normal((K, p))
    y = rng.integers(0, K, n); X = np.clip(centres[y] + rng.standard_normal((n, p)), -3, 3)
    yt = rng.integers(0, K, n); Xt = np.clip(centres[yt] + rng.standard_normal((n, p)), -3, 3)
    return rng, n, K, X, y, Xt, yt


def main():
    from sklearn.linear_model import LogisticRegression

    rng, n, K, X, y, Xt, yt = gaussian_classes()
    now = E._ssp_one_vs_rest_epsilon
    for name, share in (("before: epsilon / K", lambda e, d, k, c: e / k), ("now", now)):
        E._ssp_one_vs_rest_epsilon = share
        acc, eps = [], []
        for seed in range(8):
            m = E.DPLogisticRegression(epsilon=0.5, classes=list(range(K)), bounds=(-3, 3),
                                       solver="ssp", random_state=seed).fit(X, y)
            acc.append(np.mean(m.predict(Xt) == yt)); eps.append(m.privacy_.epsilon)
        print(f"{name}: accuracy {np.mean(acc):.4f} ± {np.std(acc) / np.sqrt(8):.4f} "
              f"(standard error), privacy_.epsilon {np.mean(eps):.4f} of 0.5")
        for k in (3, 4, 10):
            yk = rng.integers(0, k, n)
            m = E.DPLogisticRegression(epsilon=1.0, classes=list(range(k)), bounds=(-3, 3),
                                       solver="ssp", random_state=0).fit(X, yk)
            print(f"  K = {k}, epsilon = 1: privacy_.epsilon {m.privacy_.epsilon:.4f}")
    E._ssp_one_vs_rest_epsilon = now
    print(f"non-private: accuracy "
          f"{np.mean(LogisticRegression().fit(X, y).predict(Xt) == yt):.4f}")


if __name__ == "__main__":
    main()
