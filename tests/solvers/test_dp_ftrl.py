"""DP-FTRL (tree aggregation of the gradients themselves), paper 003 section 2.2 baseline."""

import math

import numpy as np
import pytest

import dpsco_core as dp
from dpsco_core.privacy.events import SingleEpochTreeAggregationDpEvent
from dpsco_core.privacy.gdp import gdp_mu
from dpsco_core.privacy.report import PrivacyReport
from dpsco_core.solvers.srgd_baselines import dp_ftrl, dp_sgd_single_epoch


def _problem(n=1024, p=8, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.choice([-1.0, 1.0], size=(n, p)) / math.sqrt(p)
    return dp.Problem(X, X @ np.ones(p) + rng.uniform(-0.5, 0.5, n), loss="half_squared")


@pytest.mark.parametrize("relation, factor", [("zero_out", 1.0), ("replace_one", 2.0)])
def test_dp_ftrl_privacy_report(relation, factor):
    # A record enters one leaf (sensitivity factor C / B), which lies in bit_length(T) nodes:
    # node std sigma = sqrt(bit_length(T)) / mu * factor C / B; event SingleEpochTree(s, T).
    prob = _problem()
    eps, delta, B, C = 1.0, 1e-6, 32, 0.7
    res = dp_ftrl(prob, epsilon=eps, delta=delta, beta=2.0, batch_size=B, clip=C, radius=5.0,
                  neighboring_relation=relation, random_state=0)
    T = prob.n_samples // B
    # (raised by the last bits the accountant's report needs: calibrate_gdp_multiplier)
    s = res.stats["noise_multiplier"]
    assert s == pytest.approx(math.sqrt(T.bit_length()) / gdp_mu(eps, delta), rel=1e-12)
    assert res.stats["rounds"] == T
    assert res.stats["noise_scale"] == pytest.approx(s * factor * C / B, rel=1e-12)
    assert res.privacy.event == SingleEpochTreeAggregationDpEvent(s, T)
    assert res.privacy.epsilon <= eps
    assert res.privacy.neighboring_relation.value == relation
    # the exact GDP accountant recomputes the report from the event alone
    again = PrivacyReport.from_event(res.privacy.event, delta=delta, accountant="gdp",
                                     neighboring_relation=res.privacy.neighboring_relation)
    assert again.epsilon == pytest.approx(res.privacy.epsilon, rel=1e-9)
    assert again.epsilon <= eps
    with pytest.raises(ValueError, match="add_or_remove_one"):
        dp_ftrl(prob, epsilon=eps, delta=delta, beta=1.0,
                neighboring_relation="add_or_remove_one")


def test_dp_ftrl_without_noise_or_constraint_is_single_epoch_sgd():
    # C = R^p, no noise: x_{t+1} = x_0 - G_t / beta = x_t - g_t / beta, DP-SGD's update (same
    # permutation stream).
    prob = _problem()
    kw = dict(epsilon=math.inf, delta=1e-6, beta=3.0, batch_size=16, clip=0.5,
              random_state=4)
    a = dp_ftrl(prob, **kw)
    b = dp_sgd_single_epoch(prob, average=False, **kw)
    np.testing.assert_allclose(a.coef, b.coef, atol=1e-12)
    assert math.isinf(a.privacy.epsilon)


def test_dp_ftrl_tree_noise_variance(monkeypatch):
    # The released prefix sum at step s carries popcount(s) node noises of std sigma.
    import dpsco_core.tree as tree_mod
    real = tree_mod.TreeAggregation
    diffs = []

    class Recorder(real):
        def next(self, x, *, out=None):
            res = super().next(x, out=out)
            diffs.append(np.array(res) - np.asarray(x))
            return res
    monkeypatch.setattr(tree_mod, "TreeAggregation", Recorder)
    prob = _problem(n=4096, p=400)
    B, C = 64, 0.8
    res = dp_ftrl(prob, epsilon=1.0, delta=1e-6, beta=1.0, batch_size=B, clip=C,
                  radius=10.0, random_state=9, record_history=False)
    sigma = res.stats["noise_scale"]
    for s, d in enumerate(diffs, start=1):
        v = bin(s).count("1") * sigma ** 2
        # mean of p squared N(0, v) draws: 6 standard errors (sqrt(2/p) v)
        assert abs(np.mean(d ** 2) - v) <= 6 * math.sqrt(2.0 / d.size) * v
