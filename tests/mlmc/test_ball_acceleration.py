"""Algorithm 4 (ball acceleration) on a non-smooth problem with a known optimum."""

import numpy as np
import pytest

from dpsco_core import Problem
from dpsco_core import ball_acceleration as ba
from dpsco_core.mlmc import GLMOracle, L2Ball


def _sharp_problem():
    """f(x) = mean |<a_s, x> - b_s| with b = A x*: non-smooth, minimum 0 at x*, G = 1."""
    rs = np.random.default_rng(0)
    A = rs.standard_normal((60, 3))
    A /= np.linalg.norm(A, axis=1, keepdims=True)
    x_star = np.array([0.6, -0.3, 0.2])
    b = A @ x_star
    return GLMOracle(Problem(A, b, loss="absolute")), lambda x: np.mean(np.abs(A @ x - b)), x_star


def test_reaches_epsilon_with_constant_lambda():
    oracle, f, x_star = _sharp_problem()
    eps = 0.02
    bo = ba.EpochSGDBallOracle(oracle, 1.0, max_epochs=12)
    po = ba.MLMCProximalOracle(oracle, 1.0, c=1.0, max_copies=300, max_level=10)
    res = ba.ball_acceleration(bo, po, ba.ConstantLambda(1.0), np.zeros(3), epsilon=eps,
                               radius_bound=np.linalg.norm(x_star), lipschitz=1.0, max_iter=30,
                               accuracy_scale=10.0, random_state=0)
    assert f(res.x) <= eps
    # lambda a^2 = A_{k+1}: A_k - A_{k-1} = a_k
    a = np.diff(np.concatenate([[np.linalg.norm(x_star)], res.A]))
    np.testing.assert_allclose(res.lambdas * a ** 2, res.A, rtol=1e-12)
    # the movement-bounded variant: every oracle works on B_r(y_k)
    res2 = ba.ball_acceleration(bo, po, ba.ConstantLambda(1.0), np.zeros(3), epsilon=eps,
                                radius_bound=1.0, lipschitz=1.0, movement=0.3, max_iter=8,
                                accuracy_scale=10.0, random_state=1)
    assert np.all(np.linalg.norm(np.diff(np.vstack([np.zeros(3), res2.iterates]), axis=0),
                                 axis=1) <= 2 * 0.3 + 1e-9)
    assert f(res2.x) < f(np.zeros(3))


def test_lambda_bisection_keeps_movement_below_r():
    oracle, f, x_star = _sharp_problem()
    bo = ba.EpochSGDBallOracle(oracle, 1.0, max_epochs=8)
    nl = ba.LambdaBisection(bo, radius=0.2, lam_min=0.05, lam_max=50.0, max_bisections=6)
    lam = nl(np.zeros(3), np.zeros(3), 1.0, 0)
    assert 0.05 <= lam <= 50.0
    a = (1 + np.sqrt(1 + 4 * lam)) / (2 * lam)
    z = bo(np.zeros(3), lam, 1e-3, L2Ball(0.2, np.zeros(3)), 1)
    assert np.linalg.norm(z) <= 0.2 + 1e-12


def test_errors():
    oracle, f, x_star = _sharp_problem()
    bo = ba.EpochSGDBallOracle(oracle, 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        ba.ball_acceleration(bo, bo, ba.ConstantLambda(1.0), np.zeros(3), epsilon=0.0,
                             radius_bound=1.0, lipschitz=1.0)
    with pytest.raises(ValueError, match="lam_max"):
        ba.LambdaBisection(bo, 0.1, 2.0, 1.0)
