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


class _LinearProx:
    """Exact ball oracle of F = <g, x>: the prox point y - g/lam projected on B_r(y), so the
    movement is min(r, |g|/lam). Records every (lam, seed) probe."""

    def __init__(self, g):
        self.g = np.asarray(g, dtype=float)
        self.calls = []

    def __call__(self, center, lam, phi, domain, random_state):
        self.calls.append((lam, random_state))
        return domain.project(center - self.g / lam)


@pytest.mark.parametrize("lam_max, expected", [
    (50.0, 6.25),                        # halving 50 -> 25 -> 12.5 -> 6.25 lands in the window
    (42.0, float(np.sqrt(5.25 * 10.5))),  # 5.25 moves > 11r/12: one geometric bisection
    (5.5, 5.5),                          # lam_max is in the window: no halving
])
def test_lambda_bisection_finds_the_movement_window(lam_max, expected):
    """|g| = 1, r = 0.2: the window r/2 <= |g|/lam <= 11r/12 is lam in [12/2.2, 10]."""
    r = 0.2
    bo = _LinearProx([0.6, -0.8, 0.0])
    nl = ba.LambdaBisection(bo, radius=r, lam_min=0.05, lam_max=lam_max, max_bisections=6)
    lam = nl(np.zeros(3), np.zeros(3), 1.0, 0)
    assert lam == pytest.approx(expected, rel=1e-12)
    assert r / 2 <= min(r, 1.0 / lam) <= 11 * r / 12
    # at most log2(lam_max/lam_min) + 1 probes while halving, then max_bisections; own seeds
    assert len(bo.calls) <= np.ceil(np.log2(lam_max / 0.05)) + 1 + 6
    seeds = [s for _, s in bo.calls]
    assert len({(s.entropy, s.spawn_key) for s in seeds}) == len(seeds)
    # reproducible: same state, same probes and answer
    bo2 = _LinearProx([0.6, -0.8, 0.0])
    assert ba.LambdaBisection(bo2, r, 0.05, lam_max, max_bisections=6)(
        np.zeros(3), np.zeros(3), 1.0, 0) == lam
    assert [c[0] for c in bo2.calls] == [c[0] for c in bo.calls]


def test_lambda_bisection_falls_back_to_lam_min_and_caps_probes():
    r = 0.2
    # even lam_min moves less than r/2: lam_min
    bo = _LinearProx([1.0, 0.0])
    assert ba.LambdaBisection(bo, r, lam_min=20.0, lam_max=100.0)(
        np.zeros(2), np.zeros(2), 1.0, 0) == 20.0
    assert [c[0] for c in bo.calls] == [100.0, 50.0, 25.0]

    # a movement that jumps over the window: the bisection stops after max_bisections probes
    class Jump(_LinearProx):
        def __call__(self, center, lam, phi, domain, random_state):
            self.calls.append((lam, random_state))
            return center + (np.array([r, 0.0]) if lam < 7.0 else np.array([0.01, 0.0]))

    jump = Jump([0.0, 0.0])
    lam = ba.LambdaBisection(jump, r, lam_min=0.1, lam_max=16.0, max_bisections=5)(
        np.zeros(2), np.zeros(2), 1.0, 0)
    # halving 16 -> 8 -> 4 (moves r, reused as the bracket's check); bracket [4, 8];
    # 5 bisections
    assert len(jump.calls) == 3 + 5
    assert 4.0 <= lam <= 8.0
    assert lam == pytest.approx(7.0, rel=0.1)


def test_lambda_bisection_stays_in_its_range():
    """lam_max = 4 already moves min(r, |g|/4) = r > 11r/12: nothing in [lam_min, lam_max]
    reaches the window, so lam_max (one probe), never a lam above the range."""
    r = 0.2
    bo = _LinearProx([0.6, -0.8, 0.0])
    lam = ba.LambdaBisection(bo, r, lam_min=0.05, lam_max=4.0, max_bisections=6)(
        np.zeros(3), np.zeros(3), 1.0, 0)
    assert lam == 4.0
    assert [c[0] for c in bo.calls] == [4.0]


def test_lambda_bisection_point_is_the_algorithm_4_point():
    """The probe for lam is centred at y = (A x + a v)/(A + a) with lam a^2 = A + a."""
    centres = []

    def oracle(center, lam, phi, domain, random_state):
        centres.append((lam, center.copy(), phi))
        return center

    x, v, A, r = np.array([1.0, 0.0]), np.array([0.0, 2.0]), 3.0, 0.5
    ba.LambdaBisection(oracle, r, lam_min=1.0, lam_max=4.0, phi_fraction=0.01)(x, v, A, 0)
    for lam, y, phi in centres:
        a = (1 + np.sqrt(1 + 4 * lam * A)) / (2 * lam)
        assert lam * a ** 2 == pytest.approx(A + a)
        np.testing.assert_allclose(y, (A * x + a * v) / (A + a), rtol=1e-14)
        assert phi == pytest.approx(0.01 * lam * r ** 2)
