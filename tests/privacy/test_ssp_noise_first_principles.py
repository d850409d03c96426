"""dp_ssp and dp_ssp_logistic, checked from first principles (issue 19; issue 15, section 7).

The mutation probe's SSP mutants (``tools/mutation_probe.py``) must die here, in a file fast
enough to run once per mutant. Same method as ``test_noise_first_principles.py``:

* **Sensitivities.** Noiseless statistics (:func:`~dpsco_core.solvers.ssp.clipped_statistics`,
  :func:`~dpsco_core.solvers.ssp.newton_statistics`) of constructed worst neighbours move by at
  most the sensitivity the run calibrated (its noise scale divided by its multiplier), and
  (nearly) attain it: rows of norm C along e_1 against e_2 (Gram, replace-one: sqrt(2) C^2),
  labels +Y against -Y (X^T y: 2 C Y), the Newton weights sigma'(0) = 1/4 (H: sqrt(2) C^2 / 4)
  and saturated residuals +1, +1 on two rows at an angle near pi (g: close to 2 C, reached
  only at a w0 with large entries; w0 is the first release, any value is possible).
* **Noise.** The released statistics minus the noiseless ones (recorded by a hook around
  ``ssp._noisy_statistics``, the one function that draws SSP's noise) have the variance
  (s Delta)^2 with Delta written out here from the relation (module docstring of
  :mod:`dpsco_core.solvers.ssp`, item 3; :func:`~dpsco_core.solvers.ssp.newton_sensitivities`)
  and C the released clip: the mean of the squared standardized noise is 1 within ``N_SE``
  standard errors.
* **Accounting.** The releases are counted from the hook (two per call), the quantile's
  epsilon_q = sqrt(2 s_q rho) is recomputed from the zCDP rho of (epsilon, delta) and checked
  against the exponential mechanism's call (utility sensitivity 1), and the RDP accountant over
  "pure epsilon_q-DP, then that many Gaussian releases of the run's multiplier s" (an event
  built here, not the run's) gives at most epsilon.
"""

import math

import numpy as np
import pytest

import dpsco_core as dp
from dpsco_core.privacy.accountants import RdpAccountant
from dpsco_core.privacy.events import (ComposedDpEvent, EpsilonDeltaDpEvent, GaussianDpEvent,
                                       NeighboringRelation, SelfComposedDpEvent)
from dpsco_core import mechanisms
from dpsco_core.solvers import ssp

from test_noise_first_principles import assert_spread

pytestmark = pytest.mark.statistical

EPS, DELTA = 1.0, 1e-6
R, Y, C = 10.0, 3.0, 2.0                # row bound, label bound, public clip (noiseless tests)
N, P = 60, 40                           # records; columns: P (P + 1) / 2 Gram entries per run
RUNS = 10                               # seeds per (solver, relation) of the noise tests
SHARE = 0.1                             # quantile_share: the default of both solvers
REL_TOL = 1e-9
RELATIONS = ["replace_one", "zero_out", "add_or_remove_one"]
ARO = "add_or_remove_one"


def _public_n(relation, n):
    return n + 7 if relation == ARO else None    # add/remove-one: a public count, not n


def _squared_problem(n=N, d=P, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return dp.Problem(X, X @ rng.normal(size=d) / math.sqrt(d), "squared", row_norm=R,
                      label_bound=Y)


def _logistic_problem(n=N, d=P, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X @ rng.normal(size=d) + rng.normal(size=n) > 0, 1.0, -1.0)
    return dp.Problem(X, y, "logistic", penalty=dp.L2(1e-3), row_norm=R)


def _formula(relation, Y_):
    """(Delta_G, Delta_b, Delta_H, Delta_g) per unit C (powers of C applied by the caller):
    replace-one (sqrt 2, 2 Y, sqrt 2 / 4, 2), zero-out and add/remove-one (1, Y, 1/4, 1)."""
    if relation == "replace_one":
        return math.sqrt(2.0), 2.0 * Y_, math.sqrt(2.0) / 4.0, 2.0
    return 1.0, Y_, 0.25, 1.0


# --------------------------------------------------------------------------------------------
# Sensitivities: worst neighbours of the noiseless statistics against the calibrated ones
# --------------------------------------------------------------------------------------------

def _calibrated(relation):
    """Delta_G, Delta_b of dp_ssp and Delta_H, Delta_g of dp_ssp_logistic with the public clip
    C, read from private runs (noise scale / multiplier), never from a formula."""
    res = ssp.dp_ssp(_squared_problem(60, 3), epsilon=EPS, delta=DELTA, clip=C,
                     neighboring_relation=relation, public_n=_public_n(relation, 60),
                     random_state=0)
    s = res.stats["noise_multiplier"]
    log = ssp.dp_ssp_logistic(_logistic_problem(60, 3), epsilon=EPS, delta=DELTA, clip=C,
                              neighboring_relation=relation,
                              public_n=_public_n(relation, 60), random_state=0)
    t = log.stats["noise_multiplier"]
    return (res.stats["sigma_G"] / s, res.stats["sigma_b"] / s, log.stats["sigma_H"] / t,
            log.stats["sigma_g"] / t)


def _neighbour(relation, X, y, row, label):
    """D' from D = (X, y) whose record 0 is the worst one: record 0 replaced by (row, label),
    zeroed, or removed."""
    if relation == "replace_one":
        X2, y2 = X.copy(), y.copy()
        X2[0], y2[0] = row, label
        return X2, y2
    if relation == "zero_out":
        X2, y2 = X.copy(), y.copy()
        X2[0], y2[0] = 0.0, 0.0
        return X2, y2
    return X[1:], y[1:]


def _moved(before, after, gram):
    if gram:
        iu = np.triu_indices(before.shape[0])
        return float(np.linalg.norm((before - after)[iu]))
    return float(np.linalg.norm(before - after))


@pytest.mark.parametrize("relation", RELATIONS)
def test_worst_neighbours_move_the_statistics_by_the_calibrated_sensitivity(relation):
    dG, db, dH, dg = _calibrated(relation)
    rng = np.random.default_rng(1)
    d = 3
    X = 0.3 * rng.normal(size=(50, d))            # rows of norm < C: nothing else is clipped
    y = np.clip(X.sum(1), -Y, Y)
    e1, e2 = np.eye(d)[0], np.eye(d)[1]
    far = 1e6                                     # clipped to C: the clip must act

    # dp_ssp's Gram matrix: C e_1 against C e_2 (replace-one), or C e_1 gone
    X[0], y[0] = far * e1, Y
    X2, y2 = _neighbour(relation, X, y, far * e2, Y)
    G1, b1 = ssp.clipped_statistics(X, y, C)
    G2, _ = ssp.clipped_statistics(X2, y2, C)
    moved = _moved(G1, G2, gram=True)
    assert moved <= dG * (1 + REL_TOL), f"Gram moved {moved:.6g} > calibrated {dG:.6g}"
    assert moved >= 0.999 * dG

    # X^T y: label +Y on C e_1 against -Y on C e_1 (replace-one), or the record gone
    X2, y2 = _neighbour(relation, X, y, far * e1, -Y)
    _, b2 = ssp.clipped_statistics(X2, y2, C)
    moved = _moved(b1, b2, gram=False)
    assert moved <= db * (1 + REL_TOL), f"X^T y moved {moved:.6g} > calibrated {db:.6g}"
    assert moved >= 0.999 * db

    # Newton H at w0 = 0 (every weight sigma'(0) = 1/4): C e_1 against C e_2
    yl = np.where(rng.random(50) < 0.5, 1.0, -1.0)
    yl[0] = 1.0
    X2, y2 = _neighbour(relation, X, yl, far * e2, 1.0)
    if relation == "zero_out":
        y2 = yl.copy()                            # a zeroed row keeps a valid label
    H1, _ = ssp.newton_statistics(X, yl, np.zeros(d), C)
    H2, _ = ssp.newton_statistics(X2, y2, np.zeros(d), C)
    moved = _moved(H1, H2, gram=True)
    assert moved <= dH * (1 + REL_TOL), f"Newton H moved {moved:.6g} > calibrated {dH:.6g}"
    assert moved >= 0.999 * dH

    # Newton g: residuals sigma(z.w0) - (1 + y)/2 saturate at +1 (y = -1, z.w0 = +30) on
    # z = C e_1 and on z' = C(-c e_1 + sqrt(1 - c^2) e_2) at an angle near pi: the change
    # C (e_1 - z'/C) has norm C sqrt(2 + 2c), close to 2C (replace-one); else C.
    c = 0.98
    u = np.sqrt(1.0 - c * c)
    w0 = np.zeros(d)
    w0[0] = 30.0 / C
    w0[1] = (30.0 + c * 30.0) / (u * C)           # z'.w0 = C(-c w0[0] + u w0[1]) = 30
    yl[0] = -1.0
    X2, y2 = _neighbour(relation, X, yl, far * (-c * e1 + u * e2), -1.0)
    if relation == "zero_out":
        y2 = yl.copy()
    _, g1 = ssp.newton_statistics(X, yl, w0, C)
    _, g2 = ssp.newton_statistics(X2, y2, w0, C)
    moved = _moved(g1, g2, gram=False)
    attainable = C * math.sqrt(2.0 + 2.0 * c) if relation == "replace_one" else C
    assert moved <= dg * (1 + REL_TOL), f"Newton g moved {moved:.6g} > calibrated {dg:.6g}"
    assert moved >= 0.999 * attainable


# --------------------------------------------------------------------------------------------
# Noise and accounting: what the runs released, with the multiplier they used
# --------------------------------------------------------------------------------------------

def _record(monkeypatch, solver, relation):
    """RUNS private-clip runs of ``solver``; returns [(result, [(G, b, G^, b^) per release
    call], [exponential mechanism kwargs])] per run."""
    calls, quantiles = [], []
    noisy = ssp._noisy_statistics
    # the row clip's quantile: dpsco_core.mechanisms.grid_quantile's exponential mechanism
    mechanism = mechanisms.exponential_mechanism

    def noisy_hook(G, b, sigma_G, sigma_b, gram_seq, b_seq):
        out = noisy(G, b, sigma_G, sigma_b, gram_seq, b_seq)
        calls.append((G.copy(), b.copy(), out[0].copy(), out[1].copy()))
        return out

    def mechanism_hook(scores, **kwargs):
        quantiles.append(kwargs)
        return mechanism(scores, **kwargs)

    monkeypatch.setattr(ssp, "_noisy_statistics", noisy_hook)
    monkeypatch.setattr(mechanisms, "exponential_mechanism", mechanism_hook)
    fn, problem = ((ssp.dp_ssp, _squared_problem()) if solver == "dp_ssp"
                   else (ssp.dp_ssp_logistic, _logistic_problem()))
    runs = []
    for seed in range(RUNS):
        calls.clear()
        quantiles.clear()
        res = fn(problem, epsilon=EPS, delta=DELTA, neighboring_relation=relation,
                 public_n=_public_n(relation, N), random_state=seed)
        runs.append((res, list(calls), list(quantiles)))
    return runs


@pytest.mark.parametrize("relation", RELATIONS)
@pytest.mark.parametrize("solver", ["dp_ssp", "dp_ssp_logistic"])
def test_released_noise_is_the_multiplier_times_the_sensitivity(monkeypatch, solver, relation):
    runs = _record(monkeypatch, solver, relation)
    # dp_ssp: labels within Y. dp_ssp_logistic: the surrogate's labels 2 y (bound 2), then
    # the Newton statistics (weights <= 1/4, residuals in [-1, 1]).
    fG, fb, fH, fg = _formula(relation, Y if solver == "dp_ssp" else 2.0)
    per_call = [(fG, fb)] if solver == "dp_ssp" else [(fG, fb), (fH, fg)]
    iu = np.triu_indices(P)
    noise = {k: [[], []] for k in range(len(per_call))}
    for res, calls, _ in runs:
        assert len(calls) == len(per_call), f"{solver}: {len(calls)} release calls"
        s, clip = res.stats["noise_multiplier"], res.stats["clip"]
        assert 0.0 < clip <= R
        for k, ((G, b, G_hat, b_hat), (f_gram, f_vec)) in enumerate(zip(calls, per_call)):
            assert np.array_equal(G_hat, G_hat.T)            # one draw per upper entry
            noise[k][0].append((G_hat - G)[iu] / (s * f_gram * clip * clip))
            noise[k][1].append((b_hat - b) / (s * f_vec * clip))
    for k, (gram, vec) in noise.items():
        what = f"{solver} {relation} release pair {k + 1}"
        assert_spread(np.concatenate(gram), 1.0, f"{what}: Gram-type statistic")
        assert_spread(np.concatenate(vec), 1.0, f"{what}: vector statistic")


@pytest.mark.parametrize("solver", ["dp_ssp", "dp_ssp_logistic"])
def test_multiplier_covers_the_quantile_and_every_release(monkeypatch, solver):
    relation = "replace_one"                      # unsampled releases: the same s everywhere
    runs = _record(monkeypatch, solver, relation)
    L = math.log(1.0 / DELTA)
    rho = (math.sqrt(L + EPS) - math.sqrt(L)) ** 2           # Bun-Steinke: exactly (EPS, DELTA)
    eps_q = math.sqrt(2.0 * SHARE * rho)                     # eps_q^2 / 2 = s_q rho
    for res, calls, quantiles in runs[:2]:
        assert res.stats["epsilon_quantile"] == pytest.approx(eps_q, rel=1e-12)
        assert len(quantiles) == 1
        assert quantiles[0]["sensitivity"] == 1.0
        assert quantiles[0]["epsilon"] == pytest.approx(eps_q, rel=1e-12)
        releases = 2 * len(calls)                 # a Gram-type and a vector release per call
        s = res.stats["noise_multiplier"]
        event = ComposedDpEvent((EpsilonDeltaDpEvent(eps_q),
                                 SelfComposedDpEvent(GaussianDpEvent(s), releases)))
        acc = RdpAccountant(res.privacy.orders, NeighboringRelation.REPLACE_ONE,
                            conversion="improved")
        spent = acc.compose(event).get_epsilon(DELTA)
        assert spent <= EPS * (1 + REL_TOL), (
            f"{solver}: the quantile and {releases} releases at s = {s:.6g} spend "
            f"epsilon = {spent:.6g} > {EPS}")
