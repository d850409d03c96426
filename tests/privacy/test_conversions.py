"""RDP and zCDP -> (epsilon, delta): dp-accounting, closed forms, round trips, note 002 values."""

import math

import numpy as np
import pytest

from dpsco_core.privacy import (
    DEFAULT_RDP_ORDERS,
    GaussianDpEvent,
    PoissonSampledDpEvent,
    RdpAccountant,
    SelfComposedDpEvent,
    rdp_gaussian,
    rdp_sampled_gaussian,
    rdp_to_delta,
    rdp_to_epsilon,
    zcdp_to_delta,
    zcdp_to_epsilon,
)

R = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")

ORDERS = np.array(DEFAULT_RDP_ORDERS)
CURVES = [
    ("dpsgd", 14063 * rdp_sampled_gaussian(256 / 60000, 1.1, ORDERS)),
    ("gaussian", 100 * rdp_gaussian(10.0, ORDERS)),
    ("small", 1e-3 * ORDERS),
]


@pytest.mark.parametrize("name, rdp", CURVES)
@pytest.mark.parametrize("delta", [1e-3, 1e-5, 1e-10])
def test_improved_epsilon_matches_dp_accounting(name, rdp, delta):
    eps, order = rdp_to_epsilon(ORDERS, rdp, delta)
    ref_eps, ref_order = R.compute_epsilon(ORDERS, rdp, delta)
    assert eps == pytest.approx(ref_eps, rel=1e-12)
    assert eps >= ref_eps
    assert order == ref_order


@pytest.mark.parametrize("name, rdp", CURVES)
@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0])
def test_improved_delta_matches_dp_accounting(name, rdp, epsilon):
    delta, _ = rdp_to_delta(ORDERS, rdp, epsilon)
    ref_delta, _ = R.compute_delta(ORDERS, rdp, epsilon)
    assert delta == pytest.approx(ref_delta, rel=1e-12)
    assert delta >= ref_delta


def test_mironov_is_proposition_3():
    rdp = CURVES[0][1]
    eps, order = rdp_to_epsilon(ORDERS, rdp, 1e-5, conversion="mironov")
    direct = rdp + math.log(1e5) / (ORDERS - 1)
    assert eps == pytest.approx(direct.min(), rel=1e-12)
    assert order == ORDERS[direct.argmin()]
    delta, _ = rdp_to_delta(ORDERS, rdp, 3.0, conversion="mironov")
    with np.errstate(over="ignore"):
        direct = np.exp((ORDERS - 1) * (rdp - 3.0)).min()
    assert delta == pytest.approx(direct, rel=1e-12)


def test_improved_is_never_looser_than_mironov():
    for _, rdp in CURVES:
        assert (rdp_to_epsilon(ORDERS, rdp, 1e-6)[0]
                <= rdp_to_epsilon(ORDERS, rdp, 1e-6, conversion="mironov")[0])


@pytest.mark.parametrize("conversion, expected", [("mironov", 3.0092), ("improved", 2.5971)])
def test_note_002_end_to_end(conversion, expected):
    # note 002, section 5.3: q = 256/60000, s = 1.1, 14063 steps, delta = 1e-5, orders 2..256
    acc = RdpAccountant(np.arange(2, 257), conversion=conversion)
    acc.compose(SelfComposedDpEvent(PoissonSampledDpEvent(256 / 60000, GaussianDpEvent(1.1)),
                                    14063))
    eps, order = acc.get_epsilon_and_order(1e-5)
    assert round(eps, 4) == expected
    if conversion == "mironov":
        assert order == 9


@pytest.mark.parametrize("conversion", ["improved", "mironov"])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-9])
def test_epsilon_delta_round_trip(conversion, delta):
    rdp = CURVES[0][1]
    eps, _ = rdp_to_epsilon(ORDERS, rdp, delta, conversion=conversion)
    back, _ = rdp_to_delta(ORDERS, rdp, eps, conversion=conversion)
    assert back <= delta * (1 + 1e-9)
    assert back == pytest.approx(delta, rel=1e-8)
    again, _ = rdp_to_epsilon(ORDERS, rdp, back, conversion=conversion)
    assert again == pytest.approx(eps, rel=1e-9)


def test_infinite_and_zero_curves():
    assert rdp_to_epsilon(ORDERS, np.full(ORDERS.shape, np.inf), 1e-5)[0] == math.inf
    assert rdp_to_epsilon(ORDERS, np.zeros(ORDERS.shape), 1e-5)[0] == 0.0
    assert rdp_to_delta(ORDERS, np.full(ORDERS.shape, np.inf), 1.0)[0] == 1.0


def test_bad_curves():
    with pytest.raises(ValueError, match="shape"):
        rdp_to_epsilon([2.0, 3.0], [0.1], 1e-5)
    with pytest.raises(ValueError, match="negative"):
        rdp_to_epsilon([2.0, 3.0], [0.1, -1.0], 1e-5)
    with pytest.raises(ValueError, match="conversion"):
        rdp_to_epsilon([2.0, 3.0], [0.1, 0.2], 1e-5, conversion="prop3")


@pytest.mark.parametrize("rho", [0.01, 0.5, 3.0])
@pytest.mark.parametrize("delta", [1e-5, 1e-9])
def test_zcdp(rho, delta):
    bs = zcdp_to_epsilon(rho, delta)
    assert bs == pytest.approx(rho + 2 * math.sqrt(rho * math.log(1 / delta)), rel=1e-12)
    cks = zcdp_to_epsilon(rho, delta, conversion="cks")
    assert cks <= bs
    # the CKS epsilon gives back at most delta (same bound, other direction)
    assert zcdp_to_delta(rho, cks) <= delta * (1 + 1e-6)
    # zCDP rho is the RDP curve rho * alpha: a fine grid can only do worse than continuous alpha
    grid = np.linspace(1.001, 2000, 200001)
    assert cks <= rdp_to_epsilon(grid, rho * grid, delta)[0] + 1e-9


@pytest.mark.parametrize("rho, delta", [
    (0.5, 0.99999), (1.0, 1.0 - 1e-12), (1e-300, 1e-5), (1e-100, 0.99999), (1e30, 1e-5),
    (0.5 * math.exp(40.0), 0.99999), (1.7e308, 1e-5), (5e-324, 5e-324)])
def test_zcdp_to_epsilon_extreme_orders(rho, delta):
    """Pinned (session 19, hypothesis seed 333: GaussianMechanism(epsilon=1.0, delta=0.99999)
    raised ZeroDivisionError): the CKS search stepped to an alpha that rounds to 1 (or whose
    e^t overflows); such alphas are now skipped, and Bun-Steinke's bound is the fallback."""
    bs = zcdp_to_epsilon(rho, delta)
    cks = zcdp_to_epsilon(rho, delta, conversion="cks")
    assert 0.0 <= cks <= bs


@pytest.mark.parametrize("rho", [5e-324, 1e-300, 1e5, 1e10, 1.7e308])
@pytest.mark.parametrize("epsilon", [0.0, 1e-300, 1.0, 1e10, 1.7e308])
def test_zcdp_to_delta_extreme_orders(rho, epsilon):
    """Pinned (session 19): "math domain error" (log1p(-1) at an alpha rounded to 1) for
    rho >= 1e5 and OverflowError (e^t) for rho = 1e-300."""
    assert 0.0 <= zcdp_to_delta(rho, epsilon) <= 1.0
