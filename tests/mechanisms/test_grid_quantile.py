"""grid_quantile: the exponential mechanism's quantile on a public grid (issue 19, session 15).

Its guarantee rests on one fact, checked here on a dataset and its worst neighbours: the
counts #{v_i <= g_k} move by at most one. Then the sampling law, the charge, the audit."""

import math

import numpy as np
import pytest

from dpsco_core import mechanisms
from dpsco_core.audit import audit
from dpsco_core.exceptions import PrivacyBudgetError
from dpsco_core.mechanisms import _grid_counts, grid_quantile
from dpsco_core.privacy import Budget
from dpsco_core.privacy.events import EpsilonDeltaDpEvent

GRID = np.geomspace(0.1, 10.0, 25)


def _utility(values, q, m):
    return -np.abs(_grid_counts(np.asarray(values, float), GRID) - q * m)


@pytest.mark.parametrize("q", [0.0, 0.25, 0.5, 0.75, 1.0])
def test_utility_moves_by_at_most_one_on_worst_neighbours(q):
    rng = np.random.default_rng(0)
    values = rng.lognormal(size=200)
    m = values.size
    base = _utility(values, q, m)
    for i in (0, 17, 199):
        for outlier in (0.0, 1e-300, GRID[0], GRID[-1], 1e300, -1e300):
            neighbour = values.copy()
            neighbour[i] = outlier                      # replace-one (and zero-out at 0.0)
            assert np.max(np.abs(_utility(neighbour, q, m) - base)) <= 1.0
    # add/remove-one with the public count m held fixed
    assert np.max(np.abs(_utility(np.append(values, 1e300), q, m) - base)) <= 1.0
    assert np.max(np.abs(_utility(values[1:], q, m) - base)) <= 1.0


def test_large_epsilon_gives_the_exact_grid_quantile():
    values = np.arange(1.0, 101.0) / 10.0         # 0.1 .. 10
    target = GRID[np.argmax(_utility(values, 0.75, 100))]
    assert grid_quantile(values, GRID, q=0.75, n_public=100, epsilon=1e4,
                         random_state=0) == target


def test_sampling_law_is_the_exponential_mechanisms():
    values = np.array([0.15, 0.5, 0.9, 2.0, 5.0])
    grid = np.array([0.2, 1.0, 3.0])
    eps = 2.0
    u = -np.abs(_grid_counts(values, grid) - 0.5 * 5)
    p = np.exp(eps * u / 2.0)
    p /= p.sum()
    draws = np.array([grid_quantile(values, grid, q=0.5, n_public=5, epsilon=eps,
                                    random_state=s) for s in range(3000)])
    for g, pk in zip(grid, p):
        freq = np.mean(draws == g)
        assert abs(freq - pk) <= 4.0 * math.sqrt(pk * (1 - pk) / draws.size)


def test_a_public_base_measure_weights_the_law_and_keeps_the_ratio_between_neighbours():
    # P(g_k) ~ mu_k exp(eps u_k / 2) (session 16: the estimators' rho quantile weights the
    # grid by g / R); between neighbours the log-probability ratio stays within epsilon.
    values = np.array([0.15, 0.5, 0.9, 2.0, 5.0])
    grid = np.array([0.2, 1.0, 3.0])
    eps, log_base = 0.5, np.log(grid / grid[-1])

    def law(v):
        w = np.exp(eps * -np.abs(_grid_counts(v, grid) - 0.5 * 5) / 2.0 + log_base)
        return w / w.sum()

    p = law(values)
    draws = np.array([grid_quantile(values, grid, q=0.5, n_public=5, epsilon=eps,
                                    random_state=s, log_base=log_base) for s in range(3000)])
    for g, pk in zip(grid, p):
        freq = np.mean(draws == g)
        assert abs(freq - pk) <= 4.0 * math.sqrt(pk * (1 - pk) / draws.size)
    for other in (np.array([1e9, 0.5, 0.9, 2.0, 5.0]), np.array([0.0, 0.5, 0.9, 2.0, 5.0])):
        assert np.max(np.abs(np.log(law(other)) - np.log(p))) <= eps + 1e-12
    with pytest.raises(ValueError, match="log_base must have"):
        grid_quantile(values, grid, q=0.5, n_public=5, epsilon=eps, log_base=[0.0, 0.0])
    with pytest.raises(ValueError, match="log_base"):
        grid_quantile(values, grid, q=0.5, n_public=5, epsilon=eps,
                      log_base=[0.0, -math.inf, 0.0])


@pytest.mark.filterwarnings("ignore::dpsco_core.exceptions.OrderGridWarning")
def test_reproducible_and_charged_before_reading():
    values = np.linspace(0.1, 9.0, 50)
    a = grid_quantile(values, GRID, q=0.5, n_public=50, epsilon=0.3, random_state=7)
    assert a == grid_quantile(values, GRID, q=0.5, n_public=50, epsilon=0.3, random_state=7)
    assert a in GRID
    budget = Budget(epsilon=1.0, delta=1e-6, neighboring_relation="replace_one")
    grid_quantile(values, GRID, q=0.5, n_public=50, epsilon=0.3, random_state=7,
                  budget=budget)
    assert budget.ledger == (EpsilonDeltaDpEvent(0.3, 0.0),)
    # refused before the values are read: NaN values would raise ValueError after the charge
    small = Budget(epsilon=0.1, delta=1e-6, neighboring_relation="replace_one")
    with pytest.raises(PrivacyBudgetError):
        grid_quantile([math.nan], GRID, q=0.5, n_public=1, epsilon=0.3, budget=small)


@pytest.mark.parametrize("kwargs, match", [
    (dict(grid=[1.0, 1.0]), "increasing"), (dict(grid=[2.0, 1.0]), "increasing"),
    (dict(q=1.5), "q must"), (dict(q=-0.1), "q must"), (dict(n_public=0), "n_public"),
    (dict(epsilon=0.0), "epsilon"), (dict(grid=[1.0, math.inf]), "grid")])
def test_validation(kwargs, match):
    args = dict(grid=GRID, q=0.5, n_public=3, epsilon=1.0) | kwargs
    with pytest.raises(ValueError, match=match):
        grid_quantile([1.0, 2.0, 3.0], args.pop("grid"), **args)


# The pair: one value moves from below the grid to above it, so the low points lose a unit of
# utility and the high point (count above q m) gains one: the opposite moves of the worst case.
PAIR = (np.array([0.5, 1.5, 2.5, 10.0]), np.array([10.0, 1.5, 2.5, 10.0]))
PAIR_GRID = np.array([1.0, 2.0, 3.0])


def _sampler(epsilon_used):
    def sampler(values, n, seed_seq):
        seeds = seed_seq.spawn(n)
        return np.array([grid_quantile(values, PAIR_GRID, q=0.5, n_public=4,
                                       epsilon=epsilon_used, random_state=s) == 3.0
                         for s in seeds], dtype=float)
    return sampler


def test_black_box_audit_passes_and_catches_a_doubled_epsilon(monkeypatch):
    honest = audit(_sampler(1.0), *PAIR, n_trials=4000, random_state=0)
    assert honest.eps_lower <= 1.0
    # a broken quantile that samples at 4 epsilon while claiming epsilon
    original = mechanisms.exponential_mechanism
    monkeypatch.setattr(mechanisms, "exponential_mechanism",
                        lambda scores, **kw: original(scores, **(kw | {"epsilon":
                                                                      4 * kw["epsilon"]})))
    broken = audit(_sampler(1.0), *PAIR, n_trials=4000, random_state=0)
    assert broken.eps_lower > 1.0


def test_pure_share_epsilon_is_a_share_of_the_runs_zcdp_budget():
    from dpsco_core.privacy import pure_share_epsilon

    for eps, delta in [(1.0, 1e-8), (0.25, 1e-6), (4.0, 1e-10)]:
        # eps_q^2 / 2 = share * rho_total, so at share 1/2 eps_q^2 is the run's rho, whose
        # Bun-Steinke conversion is exactly (eps, delta)
        total = pure_share_epsilon(eps, delta, 0.5) ** 2
        assert total + 2 * math.sqrt(total * math.log(1 / delta)) == pytest.approx(eps,
                                                                                  rel=1e-12)
    assert pure_share_epsilon(1.0, 1e-8, 0.1) == pytest.approx(0.0514, abs=1e-4)
    for share in (0.0, 1.0, -0.1, math.nan):
        with pytest.raises(ValueError, match="share"):
            pure_share_epsilon(1.0, 1e-8, share)
