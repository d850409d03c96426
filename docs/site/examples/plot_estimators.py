"""
Private LASSO estimators: the default's private rms row norm, a public one, SSP, a selection
=============================================================================================

``DPLasso`` on California at several budgets, the ways to set what the data cannot tell
privately for free:

- the defaults on the raw features with the README quickstart's public bounds: with this
  many records per feature (``feature_scaling="auto"``) the fit first releases a centre and a
  scale per feature (10% of the zCDP budget) and standardizes with them, then proceeds as
  the next item (where the scales' noise exceeds 0.01 of the bounds' widths, at epsilon =
  0.25 here, it fits the clipped raw features);
- the defaults (``solver="auto"``, ``rms_row_norm="auto"``) with public bounds on features
  standardized beforehand (``feature_scaling=None`` below: they are already): the fit
  releases the features' root-mean-square row norm rho privately (the exponential
  mechanism's 0.75-quantile of the row norms on a public grid, 2% of the zCDP budget here), and
  the noise-level rule gives DP-CD's step and clip from it; the rest of the budget pays one
  DP-CD fit (at epsilon = 4, where SSP's noise is negligible, ``"auto"`` runs SSP);
- ``solver="sgd", rms_row_norm="private"``: the same for DP-SGD with Poisson batches, whose
  step (``tuning.grids.prediction_sgd_step``) grows as its number of steps falls;
- ``solver="cd", rms_row_norm=sqrt(p)``: the features are standardized, so rho is public and
  costs nothing;
- ``solver="ssp"``: sufficient statistics perturbation, nothing to tune but its row clip,
  chosen privately inside the budget (``solver="auto"``'s choice without rho);
- ``solver="cd", rms_row_norm=None``: DP-CD whose step and clip come from a private
  random-stopping selection inside the same budget (about 80 trials, each at a third of
  epsilon).

Every fit is (epsilon, 1/n^2)-DP under replace-one neighbours (DP-SGD's Poisson batches:
zero-out, one record replaced by the null record), with an unconditional report that
composes every release (the quantile's included): the bounds [-5, 5] and the label range
[0, 5] are public numbers, not read from the data. The standardization of the other items
uses the training split's statistics, which a real release must take from public sources or
release privately, as the first item does.
"""

import math

import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import LinearRegression

from dpsco_core import datasets
from dpsco_core.estimators import DPLasso

X, y = datasets.load_california()
perm = np.random.default_rng(0).permutation(len(y))
test, train = perm[:len(y) // 5], perm[len(y) // 5:]
mu, sd = X[train].mean(0), X[train].std(0)
Z = np.clip((X - mu) / sd, -5.0, 5.0)
Xtr, ytr, Xte, yte = Z[train], y[train], Z[test], y[test]
p = Xtr.shape[1]

lower = [0, 0, 0, 0, 0, 0, 0, -125]            # the README quickstart's public bounds
upper = [15, 52, 20, 5, 10_000, 10, 42, 0]
raw = dict(bounds=(lower, upper))
standardized = dict(bounds=(-5, 5), feature_scaling=None)
ways = {"defaults, raw features (private scales)": raw,
        "defaults (auto: DP-CD, private rho)": standardized,
        "DP-SGD, private rho": dict(standardized, solver="sgd", rms_row_norm="private"),
        "DP-CD, rms_row_norm=sqrt(p)": dict(standardized, solver="cd",
                                            rms_row_norm=math.sqrt(p)),
        "SSP": dict(standardized, solver="ssp"),
        "DP-CD, private selection": dict(standardized, solver="cd", rms_row_norm=None)}
epsilons = [0.25, 1.0, 4.0]
scores = {name: [] for name in ways}
for eps in epsilons:
    for name, kw in ways.items():
        train_X, test_X = (X[train], X[test]) if kw is raw else (Xtr, Xte)
        model = DPLasso(alpha=1e-4, epsilon=eps, label_bound=(0.0, 5.0),
                        random_state=0, **kw).fit(train_X, ytr)
        assert model.privacy_.unconditional and model.privacy_.epsilon <= eps
        scores[name].append(model.score(test_X, yte))
        print(f"epsilon {eps:>4}: {name:<30} R^2 {scores[name][-1]:.3f} "
              f"(solver {model.solver_}, rho {model.rms_row_norm_}, "
              f"selection {model.selection_ is not None})")
reference = LinearRegression().fit(Xtr, ytr).score(Xte, yte)

# %%
# Held-out R^2 against epsilon (one split, one seed; the README's table has 10 seeds at
# epsilon = 1). The selection spends each trial at a fraction of the budget; the rule spends
# all of it on one fit.
fig, ax = plt.subplots(figsize=(5, 3.2))
for name, values in scores.items():
    ax.plot(epsilons, values, marker="o", label=name)
ax.axhline(reference, color="k", linestyle=":", label="non-private")
ax.set_xscale("log")
ax.set_xlabel("epsilon")
ax.set_ylabel("held-out R^2")
ax.set_ylim(max(min(min(v) for v in scores.values()), -0.5) - 0.05, reference + 0.05)
ax.legend(fontsize=7)
fig.tight_layout()
