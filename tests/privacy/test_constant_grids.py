"""Constant order grids validated once, and the scalar path of ``round_up`` (issue 18: the
first call of a configuration pays the report and the calibration; speed only, same values)."""

import numpy as np
import pytest

from dpsco_core.privacy._checks import check_orders, immutable_orders, round_up
from dpsco_core.privacy.accountants import DEFAULT_RDP_ORDERS, RdpAccountant


def test_immutable_orders_are_taken_as_is_and_stay_read_only():
    grid = immutable_orders([1.5, 2.0, 8.0])
    assert check_orders(grid) is grid
    with pytest.raises(ValueError):
        grid.flags.writeable = True
    # An equal array that was not registered is still copied.
    other = np.array([1.5, 2.0, 8.0])
    assert check_orders(other) is not other
    with pytest.raises(ValueError, match="orders must all be in"):
        immutable_orders([0.5, 2.0])


def test_default_accountant_grid_is_the_default_orders():
    acc = RdpAccountant()
    assert acc.orders.tolist() == list(DEFAULT_RDP_ORDERS)
    assert not acc.orders.flags.writeable


def _round_up_array(value):
    # The former implementation (array path for every input).
    value = np.asarray(value, dtype=np.float64)
    with np.errstate(over="ignore"):
        up = np.nextafter(value * (1.0 + 1e-13), np.inf)
    out = np.where(value == 0.0, 0.0, up)
    return out[()] if out.ndim == 0 else out


def test_round_up_scalar_path_is_bitwise_the_array_path():
    rng = np.random.default_rng(18)
    values = list(rng.normal(size=2000) * 10.0 ** rng.integers(-300, 300, 2000))
    values += [0.0, -0.0, np.inf, -np.inf, np.nan, 1.7976931348623157e308, 5e-324, -5e-324]
    for v in values:
        for x in (float(v), np.float64(v)):
            got, want = round_up(x), _round_up_array(x)
            assert type(got) is type(want)
            assert np.array(got).tobytes() == np.array(want).tobytes()


@pytest.mark.parametrize("conversion", ["improved", "mironov"])
def test_epsilons_on_a_constant_grid_are_bitwise_those_of_a_plain_array(conversion):
    from dpsco_core.privacy.conversions import _epsilons

    grid = immutable_orders(DEFAULT_RDP_ORDERS)
    plain = np.array(DEFAULT_RDP_ORDERS)
    rng = np.random.default_rng(3)
    for _ in range(3):      # the second and third use the cached terms
        rdp = np.abs(rng.normal(size=grid.size)) * 10.0 ** rng.uniform(-6, 2)
        rdp[::17] = np.inf
        for delta in (1e-12, 1e-5, 0.3):
            assert (_epsilons(grid, rdp, delta, conversion).tobytes()
                    == _epsilons(plain, rdp, delta, conversion).tobytes())


def test_report_orders_are_numpys_unique_of_the_default_grid_and_the_extras():
    # solvers._common._report_orders merges the extra orders into the sorted default grid by
    # bisection (issue 18): bitwise np.unique of the concatenation, immutable, and the generic
    # validation still rejects bad extras
    from dpsco_core.privacy import DEFAULT_RDP_ORDERS
    from dpsco_core.privacy._checks import is_immutable_orders
    from dpsco_core.solvers import _common

    rng = np.random.default_rng(0)
    cases = [(), (42.9,), (2.0,), (1.5, 1.5, 70.0), (1024.0, 5000.0), (1.0000001,),
             tuple(rng.uniform(1.0001, 3000, 7).tolist()), (3, 2.5)]
    for extra in cases:
        got = _common._report_orders(extra)
        ref = np.unique(np.concatenate([np.asarray(DEFAULT_RDP_ORDERS, dtype=float),
                                        np.asarray(extra, dtype=float)]))
        assert got.tobytes() == ref.tobytes() and got.dtype == ref.dtype
        assert is_immutable_orders(got) and not got.flags.writeable
    for bad in [(1.0,), (0.5,), (float("nan"),), (float("inf"),)]:
        with pytest.raises(ValueError):
            _common._report_orders(bad)
