"""dp_ssp's released statistics move between neighbours by at most the calibrated sensitivity.

The pattern of ``test_neighbour_sensitivity.py``: the noiseless statistics (the upper triangle
with the diagonal of the clipped Gram matrix, and the clipped correlation vector) are computed
on a dataset D and its worst neighbour D' for every relation, through the solver's own code
(:func:`~dpsco_core.solvers.ssp.clipped_statistics` on the data the Problem maps onto its
public bounds), and the change is compared with the sensitivity the calibration used, read
from a private run's noise scale divided by its noise multiplier (never from a formula in the
test). The constructed worst cases nearly attain the bounds: an outlier row of norm >> C
along e_1 (label +Y) against one along e_2 (Gram) or along -e_1 (correlation), or a row
zeroed, added or removed. The quantile's counts move by at most one.
"""

import numpy as np
import pytest

import dpsco_core as dp
from dpsco_core.solvers import ssp

N, P = 300, 4
R, Y, C = 10.0, 3.0, 2.0
REL_TOL = 1e-9


def _base():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(N, P))
    y = np.clip(X.sum(1), -Y, Y)
    return X, y


def _outlier(direction, label):
    row = np.zeros(P)
    row[abs(direction) - 1] = 1e6 * np.sign(direction)
    return row, label


def _neighbours(relation, kind):
    """(D, D') as (X, y) pairs: the worst neighbour for the Gram ("G") or correlation ("b")."""
    X, y = _base()
    X[0], y[0] = _outlier(1, 1e6)                 # norm >> C, label clipped to +Y
    if relation == "replace_one":
        X2, y2 = X.copy(), y.copy()
        X2[0], y2[0] = _outlier(2, -1e6) if kind == "G" else _outlier(-1, 1e6)
    elif relation == "zero_out":
        X2, y2 = X.copy(), y.copy()
        X2[0], y2[0] = 0.0, 0.0
    else:                                         # add/remove-one: D' = D minus the outlier
        X2, y2 = X[1:], y[1:]
    return (X, y), (X2, y2)


def _statistics(X, y):
    prob = dp.Problem(X, y, "squared", row_norm=R, label_bound=Y)
    G, b = ssp.clipped_statistics(prob.X, prob.y, C)
    return G[np.triu_indices(P)], b, prob.row_norms()


def _calibrated_sensitivities(relation):
    X, y = _base()
    prob = dp.Problem(X, y, "squared", row_norm=R, label_bound=Y)
    res = ssp.dp_ssp(prob, epsilon=1.0, delta=1e-6, clip=C, neighboring_relation=relation,
                     public_n=N if relation == "add_or_remove_one" else None, random_state=0)
    s = res.stats["noise_multiplier"]
    return res.stats["sigma_G"] / s, res.stats["sigma_b"] / s


@pytest.mark.parametrize("relation", ["replace_one", "zero_out", "add_or_remove_one"])
def test_statistics_move_by_at_most_the_calibrated_sensitivity(relation):
    delta_G, delta_b = _calibrated_sensitivities(relation)
    (X, y), (X2, y2) = _neighbours(relation, "G")
    g1, _, _ = _statistics(X, y)
    g2, _, _ = _statistics(X2, y2)
    moved_G = np.linalg.norm(g1 - g2)
    assert moved_G <= delta_G * (1 + REL_TOL)
    assert moved_G >= 0.999 * delta_G             # the worst case is (nearly) attained
    (X, y), (X2, y2) = _neighbours(relation, "b")
    _, b1, _ = _statistics(X, y)
    _, b2, _ = _statistics(X2, y2)
    moved_b = np.linalg.norm(b1 - b2)
    assert moved_b <= delta_b * (1 + REL_TOL)
    assert moved_b >= 0.999 * delta_b


@pytest.mark.parametrize("relation", ["replace_one", "zero_out", "add_or_remove_one"])
def test_quantile_counts_move_by_at_most_one(relation):
    grid = ssp.clip_grid(R)
    for kind in ("G", "b"):
        (X, y), (X2, y2) = _neighbours(relation, kind)
        _, _, norms = _statistics(X, y)
        _, _, norms2 = _statistics(X2, y2)
        diff = np.abs(ssp._clip_counts(norms, grid).astype(np.int64)
                      - ssp._clip_counts(norms2, grid).astype(np.int64))
        assert diff.max() <= 1


def test_random_neighbours_within_bounds():
    """Random replacements (any rows, any labels) never exceed the replace-one bounds."""
    delta_G, delta_b = _calibrated_sensitivities("replace_one")
    rng = np.random.default_rng(2)
    X, y = _base()
    g1, b1, _ = _statistics(X, y)
    for _ in range(20):
        X2, y2 = X.copy(), y.copy()
        i = rng.integers(N)
        X2[i] = rng.normal(size=P) * rng.choice([0.1, 1.0, 100.0])
        y2[i] = rng.normal() * 10
        g2, b2, _ = _statistics(X2, y2)
        assert np.linalg.norm(g1 - g2) <= delta_G * (1 + REL_TOL)
        assert np.linalg.norm(b1 - b2) <= delta_b * (1 + REL_TOL)
