"""Algorithm 6 skeleton with clipped MLMC copies: schedule, sensitivity, privacy report."""

import math

import numpy as np
import pytest

from dpsco_core import Problem
from dpsco_core._random import check_random_state, child_seed_sequences
from dpsco_core.mlmc import GLMOracle, L2Ball, mlmc_draws
from dpsco_core.mlmc.dp_sco import mlmc_dp_sco, mlmc_sample_usage
from dpsco_core.penalties import L2
from dpsco_core.privacy import PrivacyReport
from dpsco_core.privacy.calibration import calibrate_gaussian
from dpsco_core.privacy.events import GaussianDpEvent, NeighboringRelation


def _data(n=600, d=4, seed=0):
    rs = np.random.default_rng(seed)
    A = rs.standard_normal((n, d))
    A /= np.linalg.norm(A, axis=1, keepdims=True)
    b = A @ np.array([0.4, -0.3, 0.2, 0.1][:d]) + 0.05 * rs.standard_normal(n)
    return A, b


def test_schedule_replay_matches_the_copies():
    """T18(a)+(b): the replayed index sets are the ones the kernel used. Replacing record l
    changes exactly copies whose replayed sequence contains l (others bitwise equal), and the
    average of the clipped copies moves by at most 2 r K_l / m."""
    A, b = _data(200, 3)
    seed = np.random.SeedSequence(4)
    m, j_max, mu, r = 150, 8, 3.0, 0.05
    ks, n_grads, usage, idx = mlmc_sample_usage(seed, m, 200, j_max=j_max, levels="paper",
                                                return_indices=True)
    ell = int(np.argmax(usage))
    A2, b2 = A.copy(), b.copy()
    A2[ell], b2[ell] = -A[ell], 50.0       # an adversarial replacement
    c = np.array([0.1, 0.0, -0.1])
    outs = []
    for AA, bb in ((A, b), (A2, b2)):
        oracle = GLMOracle(Problem(AA, bb, loss="absolute"), clip=1.0)
        dr = mlmc_draws(oracle, mu, c, j_max=j_max, n_copies=m, levels="paper",
                        domain=L2Ball(1.0), random_state=seed, n_threads=2)
        np.testing.assert_array_equal(dr.k, ks)
        np.testing.assert_array_equal(dr.n_gradients, n_grads)
        outs.append(dr.offsets.copy())
    touched = np.array([ell in set(i.tolist()) for i in idx])
    assert touched.sum() == usage[ell] > 1
    np.testing.assert_array_equal(outs[0][~touched], outs[1][~touched])
    assert np.any(outs[0][touched] != outs[1][touched])
    for u in outs:
        nrm = np.linalg.norm(u, axis=1, keepdims=True)
        u *= np.minimum(1.0, r / np.maximum(nrm, 1e-300))
    gap = np.linalg.norm(outs[0].mean(axis=0) - outs[1].mean(axis=0))
    assert gap <= 2 * r * usage[ell] / m * (1 + 1e-12)


def test_privacy_report_and_sensitivity_recomputed():
    """T18(c): the report is the accountant's on GaussianDpEvent(z); each phase's noise is z
    times the sensitivity 2 r_i K_i^max / m recomputed from the schedule."""
    A, b = _data()
    prob = Problem(A, b, loss="absolute")
    eps, delta = 2.0, 1e-5
    res = mlmc_dp_sco(prob, epsilon=eps, delta=delta, radius=1.0, lipschitz=1.0, n_phases=3,
                      random_state=7)
    rep = res.privacy_report
    assert rep is res.privacy and res.x is res.coef and res.coef_ is res.coef
    assert rep.neighboring_relation is NeighboringRelation.REPLACE_ONE
    z = calibrate_gaussian(target_epsilon=eps, target_delta=delta, steps=1)
    assert rep.event == GaussianDpEvent(z)
    again = PrivacyReport.from_event(rep.event, delta=delta, accountant="rdp",
                                     neighboring_relation=rep.neighboring_relation,
                                     orders=rep.orders, conversion=rep.conversion)
    assert again.epsilon == rep.epsilon <= eps
    assert rep.releases == 1 and any("disjoint blocks" in a for a in rep.assumptions)
    st = res.stats
    seed = check_random_state(7)
    n_bar, m = st["block_size"], st["n_copies"]
    assert n_bar == m == 200
    for i, ph in enumerate(st["phases"], start=1):
        copies_seed, _ = child_seed_sequences(seed, 2, offset=2 * (i - 1))
        _, _, usage = mlmc_sample_usage(copies_seed, m, n_bar, j_max=st["j_max"],
                                        levels=st["levels"])
        eta_i = st["step"] / st["step_decay"] ** i
        r_i = st["clip_factor"] * 1.0 * eta_i * n_bar
        assert ph["clip_radius"] == pytest.approx(r_i, rel=1e-15)
        assert ph["k_max"] == usage.max()
        assert ph["sensitivity"] == pytest.approx(2 * r_i * usage.max() / m, rel=1e-15)
        assert ph["noise_scale"] == pytest.approx(z * ph["sensitivity"], rel=1e-12)


def test_releases_move_at_most_the_clip_radius_without_noise():
    """T18(e): with epsilon = inf each release is the average of clipped copies (projected
    on the ball domain), so it stays within r_i of the previous one; a tiny clip factor
    clips every copy that moved."""
    A, b = _data()
    prob = Problem(A, b, loss="absolute")
    res = mlmc_dp_sco(prob, epsilon=np.inf, delta=1e-5, radius=1.0, lipschitz=1.0,
                      n_phases=3, step=0.5, clip_factor=1e-3, random_state=0)
    it = res.stats["iterates"]
    for i, ph in enumerate(res.stats["phases"], start=1):
        assert np.linalg.norm(it[i] - it[i - 1]) <= ph["clip_radius"] * (1 + 1e-12)
        assert ph["noise_scale"] == 0.0
        assert ph["clipped_fraction"] > 0.05
    assert res.privacy.epsilon == math.inf


def test_non_private_run_decreases_the_objective_and_is_reproducible():
    A, b = _data(2000, 3)
    prob = Problem(A, b, loss="absolute")
    kw = dict(epsilon=np.inf, delta=1e-5, radius=1.0, lipschitz=1.0, step=1.0, n_phases=4,
              random_state=3)
    r1 = mlmc_dp_sco(prob, n_threads=1, **kw)
    r2 = mlmc_dp_sco(prob, n_threads=2, **kw)
    np.testing.assert_array_equal(r1.x, r2.x)
    assert r1.history.objective[-1] < 0.8 * r1.history.objective[0]
    priv = mlmc_dp_sco(prob, **{**kw, "epsilon": 1.0})
    assert not np.array_equal(priv.x, r1.x)


def test_errors():
    A, b = _data(100, 3)
    prob = Problem(A, b, loss="absolute")
    kw = dict(epsilon=1.0, delta=1e-5, radius=1.0, lipschitz=1.0)
    with pytest.raises(ValueError, match="add_or_remove_one"):
        mlmc_dp_sco(prob, neighboring_relation="add_or_remove_one", **kw)
    with pytest.raises(ValueError, match="penalty"):
        mlmc_dp_sco(Problem(A, b, loss="absolute", penalty=L2(0.1)), **kw)
    with pytest.raises(ValueError, match="lipschitz"):
        mlmc_dp_sco(prob, **{**kw, "lipschitz": 0.0})
    with pytest.raises(ValueError, match="j_max"):
        mlmc_dp_sco(prob, j_max=41, **kw)
    with pytest.raises(ValueError, match="n_phases"):
        mlmc_dp_sco(prob, n_phases=101, **kw)
    with pytest.raises(ValueError, match="step_decay"):
        mlmc_dp_sco(prob, step_decay=0.5, **kw)
