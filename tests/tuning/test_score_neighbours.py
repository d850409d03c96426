"""The trial score's sensitivity on a dataset and its worst neighbours (issue 19).

The score's noiseless part (the clipped mean handed to the Gaussian mechanism, captured here
instead of the noisy release, which the floating-point-safe sampler rounds to its lattice) moves
by at most ``B / n_v`` when one record is replaced by an extreme outlier, zeroed, or
removed/added with the public ``n_v`` fixed, and ``B / n_v`` is the sensitivity the mechanism
is called with.
"""

import numpy as np
import pytest

import dpsco_core as dp
from dpsco_core.tuning import score as score_module

CALLS = []


@pytest.fixture(autouse=True)
def noiseless(monkeypatch):
    def capture(value, *, sensitivity, noise_multiplier, random_state=None):
        CALLS.append(sensitivity)
        return value
    CALLS.clear()
    monkeypatch.setattr(score_module, "gaussian_mechanism", capture)


def _score(X, y, loss, coef, B, public_n=None):
    problem = dp.Problem(X, y, loss=loss)
    return score_module.validation_score(problem, coef, loss_clip=B, noise_multiplier=1.0,
                                         public_n=public_n, random_state=0)


@pytest.mark.parametrize("loss", ["squared", "logistic"])
def test_worst_neighbours_move_the_score_by_at_most_b_over_n(loss):
    rng = np.random.default_rng(3)
    n, p, B = 200, 5, 4.0
    X = rng.standard_normal((n, p))
    y = rng.standard_normal(n) if loss == "squared" else np.sign(rng.standard_normal(n))
    coef = rng.standard_normal(p)
    base = _score(X, y, loss, coef, B)
    # Replace-one: record 0 becomes an extreme outlier (its loss is clipped at B).
    Xr, yr = X.copy(), y.copy()
    Xr[0], yr[0] = 1e6, (1e6 if loss == "squared" else -1.0)
    # Zero-out: record 0 becomes the null record.
    Xz, yz = X.copy(), y.copy()
    Xz[0], yz[0] = 0.0, (0.0 if loss == "squared" else 1.0)
    gaps = [abs(_score(Xr, yr, loss, coef, B) - base), abs(_score(Xz, yz, loss, coef, B) - base)]
    # Add/remove-one with the public count fixed: the outlier added, record 0 removed.
    add = abs(_score(np.vstack([X, Xr[:1]]), np.append(y, yr[0]), loss, coef, B, public_n=n)
              - base)
    rem = abs(_score(X[1:], y[1:], loss, coef, B, public_n=n) - base)
    gaps += [add, rem]
    assert max(gaps) <= B / n * (1 + 1e-12)
    assert CALLS and all(c == B / n for c in CALLS)       # the sensitivity the noise uses
    # The outlier attains the bound up to the base record's own clipped loss: the test has power.
    assert max(gaps) >= 0.5 * B / n


@pytest.mark.parametrize("loss", ["squared", "half_squared", "huber", "absolute"])
def test_regression_clip_is_the_loss_at_the_public_residual(loss):
    # B = regression_loss_clip(loss, Y, residual=r) is the largest loss of any residual up to
    # r Y (attained): with r = 2 it bounds every prediction and label in [-Y, Y]; the default
    # r = sqrt(2) is twice the loss of w = 0 at |y| = Y for the squared losses.
    from dpsco_core.tuning.score import REGRESSION_RESIDUAL_CLIP

    Y = 3.0
    problem = dp.Problem(np.zeros((1, 1)), np.zeros(1), loss=loss)
    B2 = score_module.regression_loss_clip(problem.loss, Y, residual=2.0)
    grid = np.linspace(-Y, Y, 61)
    t, y = np.meshgrid(grid, grid)
    values = problem.loss.value(t.ravel(), y.ravel())
    assert values.max() == pytest.approx(B2, rel=1e-12)
    assert np.all(values <= B2 * (1 + 1e-12))
    assert float(problem.loss.value(np.array([3 * Y]), np.array([-Y]))[0]) > B2
    B = score_module.regression_loss_clip(problem.loss, Y)
    r = REGRESSION_RESIDUAL_CLIP * Y
    assert B == pytest.approx(float(problem.loss.value(np.array([r]), np.zeros(1))[0]))
    if loss in ("squared", "half_squared"):
        w0 = float(problem.loss.value(np.zeros(1), np.array([Y]))[0])
        assert B == pytest.approx(2 * w0) and B2 == pytest.approx(4 * w0)
    with pytest.raises(ValueError, match="label_bound"):
        score_module.regression_loss_clip(problem.loss, 0.0)
    with pytest.raises(ValueError, match="residual"):
        score_module.regression_loss_clip(problem.loss, Y, residual=-1.0)


def test_worst_neighbours_with_the_regression_clip():
    # The default regression clip of tune_solver, B = regression_loss_clip(loss, Y), through
    # the same worst neighbours: an out-of-range outlier replaced in, a record zeroed.
    from dpsco_core.tuning.search import _default_loss_clip

    rng = np.random.default_rng(4)
    n, p, Y = 300, 4, 2.0
    X = rng.uniform(-1, 1, (n, p))
    y = np.clip(X @ [1.0, -1.0, 0.5, 0.0] + 0.1 * rng.standard_normal(n), -Y, Y)
    problem = dp.Problem(X, y, loss="squared", bounds=(-1, 1), label_bound=Y)
    B = _default_loss_clip(problem)
    assert B == score_module.regression_loss_clip(problem.loss, Y)
    coef = np.array([1.0, -1.0, 0.5, 0.0])
    base = _score(X, y, "squared", coef, B)
    Xr, yr = X.copy(), y.copy()
    Xr[0], yr[0] = 1e3, -Y
    Xz, yz = X.copy(), y.copy()
    Xz[0], yz[0] = 0.0, 0.0
    gaps = [abs(_score(Xr, yr, "squared", coef, B) - base),
            abs(_score(Xz, yz, "squared", coef, B) - base)]
    assert max(gaps) <= B / n * (1 + 1e-12)
    assert max(gaps) >= 0.5 * B / n
    assert all(c == B / n for c in CALLS)
